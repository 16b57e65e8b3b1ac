// The hour's pass over the accounts, in steps (EngineConfig.interestStepAccounts, S): the lenders'
// interest and the re-check of every borrower's margin.
//
// Without S (absent: the configuration of servers before the steps) the whole hour runs in the
// command that finds it due, exactly as those servers ran it, so their journals replay: every pool
// accrues for every borrower and lender, the pools are sampled, the throttle steps and every
// borrower is re-checked (borrow-lend.ts accrueInterest, liquidating.ts reviewAllBorrowers).
//
// With S, that command accrues the borrowers' interest (the part that lowers margins, and the
// exchange's share of it in its lines: the rounding line holds the lenders' part until they are
// paid), fixes each pool's lend rate from its totals at the hour, and runs the pass's first step.
// A step visits at most S accounts that lend or borrow, ascending by id (scanning at most
// SCAN_PER_POSITION·S account ids): each lend is paid its hour at the fixed rate, on its size at
// the hour, then a borrower is re-checked, drawing its trigger bands when healthy
// (liquidating.ts). While accounts are left, the InterestStep timer waits 1 µs of engine time after
// the last command, so the next command (or the shell's Tick, when the stream is quiet) runs the
// next step: orders interleave with the pass and no single command carries all of it. When the
// pass ends the pools are sampled and the throttle steps, as the one-command hour does after its
// interest.
//
// Every lend still earns on its size at the hour, whatever happens between the steps: any change
// of a lend the pass has not reached (LendPools.addLent, removeLent: a lend, a redemption, an
// order's autoLendRedeem, lend auto-deleveraging, a bankruptcy's share) first pays it
// (payLenderAhead) and stamps its cell with the hour, so the pass skips it; a lend opened after
// the hour earns nothing for it and is stamped all the same. So the payments, the exchange's lines
// and the lenders' positions are those of the one-command hour; only the moment each lender is
// paid differs. A borrower is re-checked at its step (an order or a move of its own checks its
// margin against its interest at once).
//
// An hour that arrives while the previous pass still runs finishes that pass first, in the same
// command.
//
// State while a pass runs (snapshot format 16 on, hashed only then): the next account id, the
// hour, each paying pool's lend rate, and the lends ahead of the cursor already paid. States
// between passes keep their hash.

import { BorrowLendEvent, BorrowLendSource, FRONT_ID_NONE } from '../../bus/types.js';
import { assert } from '../assert.js';
import { expectSnapshot, type SnapshotReader, type SnapshotWriter, type StateDigest } from '../parts.js';
import { SCAN_PER_POSITION } from '../perp/positions.js';
import type { EngineState } from '../state.js';
import { NO_TIMER, TimerKind } from '../timers.js';
import type { Fraction } from './fixed.js';
import { borrowRate, hourlyUnits, lendRate, MS_PER_HOUR, utilization } from './lending.js';
import { reviewAllBorrowers, reviewLiquidating } from './liquidating.js';
import { bookMarkOf, type Mark } from './mark.js';
import { startThrottleStep } from './throttle.js';

export class InterestPass {
  /** The next account id the pass visits (0: no pass runs). */
  account = 0;
  /** The hour the pass pays (µs). */
  hourUs = 0;
  /** The InterestStep timer (NO_TIMER while no pass runs). */
  timer = NO_TIMER;
  /** By asset index: the lend rate (10^-12 a year) the pass pays the pool's lenders, -1 when it pays none. */
  readonly earnRate: Float64Array;
  /** By pool cell: the hour a change of the lend paid it for ahead of the pass (payLenderAhead). */
  readonly paidHourUs: Float64Array;

  /** `stepAccounts` 0: the whole hour in the command that finds it due. */
  constructor(readonly stepAccounts: number, assetCount: number, cells: number) {
    this.earnRate = new Float64Array(assetCount).fill(-1);
    this.paidHourUs = new Float64Array(stepAccounts > 0 ? cells : 0);
  }

  passing(): boolean {
    return this.account !== 0;
  }

  /** The pools whose lenders the pass pays, ascending. */
  payingAssets(): number[] {
    const assets: number[] = [];
    for (let assetIndex = 0; assetIndex < this.earnRate.length; assetIndex++) if (this.earnRate[assetIndex] >= 0) assets.push(assetIndex);
    return assets;
  }

  /** The cells ahead of the cursor paid for this hour, ascending. */
  private paidAhead(s: EngineState): number[] {
    const assetCount = s.pools.assetCount;
    const assets = this.payingAssets();
    const cells: number[] = [];
    for (let accountId = this.account; accountId <= s.accounts.count; accountId++) {
      for (const assetIndex of assets) {
        const cell = accountId * assetCount + assetIndex;
        if (this.paidHourUs[cell] === this.hourUs) cells.push(cell);
      }
    }
    return cells;
  }

  exportTo(s: EngineState, w: SnapshotWriter): void {
    w.number(this.account);
    if (!this.passing()) return;
    this.writeRunning(s, (n) => w.number(n));
  }

  /** The running pass as numbers: the hour, the paying pools with their rates, the cells paid ahead. */
  private writeRunning(s: EngineState, put: (n: number) => void): void {
    put(this.hourUs);
    const assets = this.payingAssets();
    put(assets.length);
    for (const assetIndex of assets) {
      put(assetIndex);
      put(this.earnRate[assetIndex]);
    }
    const paid = this.paidAhead(s);
    put(paid.length);
    for (const cell of paid) put(cell);
  }

  /** Reads the pass in progress (`present` false: an older snapshot, none); its timer is armed by the caller. */
  importFrom(s: EngineState, r: SnapshotReader, present: boolean): void {
    if (!present) return;
    const account = r.number();
    if (account === 0) return;
    expectSnapshot(account >= 1 && account <= s.accounts.count + 1, 'an interest pass beyond the accounts');
    expectSnapshot(this.stepAccounts > 0, 'an interest pass in steps under a configuration without them');
    this.account = account;
    this.hourUs = r.number();
    expectSnapshot(this.hourUs > 0 && this.hourUs <= s.lastTimeUs, 'an interest pass of an hour to come');
    const pools = r.number();
    let before = -1;
    for (let i = 0; i < pools; i++) {
      const assetIndex = r.number();
      expectSnapshot(assetIndex > before && assetIndex < this.earnRate.length && s.pools.poolOf[assetIndex] !== undefined, 'an interest pass of an unknown pool');
      before = assetIndex;
      this.earnRate[assetIndex] = r.number();
    }
    const paid = r.number();
    let previous = account * s.pools.assetCount - 1;
    for (let k = 0; k < paid; k++) {
      const cell = r.number();
      expectSnapshot(cell > previous && cell < (s.accounts.count + 1) * s.pools.assetCount && this.earnRate[cell % s.pools.assetCount] >= 0, 'a lend paid ahead of its pass out of order or of a pool it does not pay');
      previous = cell;
      this.paidHourUs[cell] = this.hourUs;
    }
  }

  /** Only while a pass runs: every state between passes keeps its hash. */
  hashInto(s: EngineState, d: StateDigest): void {
    if (!this.passing()) return;
    d.number(this.account);
    this.writeRunning(s, (n) => d.number(n));
  }
}

/**
 * After the borrowers' interest of the hour `hourUs` (borrow-lend.ts accrueInterest): without
 * steps every borrower re-checked now; else the pass over the lenders and borrowers, its first step
 * now (header). The lenders of the pools `payLendersOf` named are paid at the rates it set.
 */
export function startInterestPass(s: EngineState, hourUs: number): void {
  const p = s.interestPass;
  if (p.stepAccounts === 0) return reviewAllBorrowers(s);
  assert(!p.passing(), 'an interest pass starts while one runs');
  p.hourUs = hourUs;
  // No lender to pay and no borrower to re-check: the hour ends here.
  if (p.payingAssets().length === 0 && s.pools.borrowerCount === 0) return endPass(s);
  p.account = 1;
  interestStep(s, p.stepAccounts);
}

/** The lenders of `assetIndex` earn the hour at `earnRate` in the pass about to start (none when it is 0). */
export function payLendersOf(s: EngineState, assetIndex: number, earnRate: bigint): void {
  assert(earnRate <= BigInt(Number.MAX_SAFE_INTEGER), 'a lend rate beyond the safe-integer range');
  if (earnRate > 0n) s.interestPass.earnRate[assetIndex] = Number(earnRate);
}

/** Before an hour's interest: a pass still running runs to its end (its lenders paid, its borrowers re-checked). */
export function finishInterestPass(s: EngineState): void {
  if (s.interestPass.passing()) interestStep(s, Infinity);
}

/** The InterestStep timer is due: the pass's next step. */
export function interestStepDue(s: EngineState, timer: number): void {
  const p = s.interestPass;
  assert(p.timer === timer && p.passing(), 'an interest step timer without its pass');
  interestStep(s, p.stepAccounts);
}

/**
 * One step (header): from the cursor, at most `visits` accounts that lend or borrow, ascending,
 * and SCAN_PER_POSITION times as many account ids scanned: each unpaid lend paid, then a borrower
 * re-checked. The pass ends when the cursor passes the last account: the pools are sampled and the
 * throttle steps. Then the timer waits 1 µs after the last command exactly while accounts are left.
 */
function interestStep(s: EngineState, visits: number): void {
  const p = s.interestPass;
  const pools = s.pools;
  const assets = p.payingAssets();
  const marks = assets.map((assetIndex) => bookMarkOf(s, assetIndex));
  const lastAccount = s.accounts.count;
  let scans = visits * SCAN_PER_POSITION;
  let accountId = p.account;
  for (; accountId <= lastAccount && visits > 0 && scans > 0; accountId++, scans--) {
    let visited = false;
    for (let a = 0; a < assets.length; a++) {
      const cell = accountId * pools.assetCount + assets[a];
      if (pools.lent[cell] === 0 || p.paidHourUs[cell] === p.hourUs) continue;
      payLender(s, accountId, assets[a], cell, marks[a]);
      visited = true;
    }
    if (pools.borrowCountOf[accountId] > 0) {
      reviewLiquidating(s, accountId, true);
      visited = true;
    }
    if (visited) visits--;
  }
  p.account = accountId <= lastAccount ? accountId : 0;
  if (!p.passing()) endPass(s);
  if (p.timer !== NO_TIMER) s.timers.remove(p.timer);
  p.timer = p.passing() ? s.timers.add(s.lastTimeUs + 1, TimerKind.InterestStep, 0) : NO_TIMER;
}

/** The pass is done: the pools as they stand after the hour's interest are sampled, and the throttle steps. */
function endPass(s: EngineState): void {
  const p = s.interestPass;
  p.earnRate.fill(-1);
  samplePools(s, p.hourUs);
  startThrottleStep(s);
}

/**
 * The lend of `cell` earns its hour at the pass's rate, rounded down; the rounding line, which has
 * held it since the borrowers paid, pays it. Stamped with the hour first, so it is paid once.
 */
function payLender(s: EngineState, accountId: number, assetIndex: number, cell: number, mark: Mark | null): void {
  const p = s.interestPass;
  const pools = s.pools;
  p.paidHourUs[cell] = p.hourUs;
  const rate = BigInt(p.earnRate[assetIndex]);
  const units = hourlyUnits(pools.lent[cell], rate * MS_PER_HOUR, 'earned');
  if (units === 0) return;
  assert(pools.interestRoundingUnits[assetIndex] >= units, 'lenders earned more than the borrowers left them');
  pools.interestRoundingUnits[assetIndex] -= units;
  creditLendInterest(s, accountId, assetIndex, units, rate, mark);
}

/**
 * A lend of `accountId` in `assetIndex` earns `units` of an hour at `rate`: the lend and its
 * interest so far grow, with its BorrowLend record. The holding only grows, so the account's margin
 * at every mark can only rise and its trigger bands hold (trigger-index.ts spareGrowth).
 */
export function creditLendInterest(s: EngineState, accountId: number, assetIndex: number, units: number, rate: Fraction, mark: Mark | null): void {
  const pools = s.pools;
  s.trigger.spareGrowth(accountId, assetIndex);
  pools.addLent(accountId, assetIndex, units, s.lastSeq);
  s.trigger.endSpare();
  pools.interest[accountId * pools.assetCount + assetIndex] += units;
  s.out.borrowLend(accountId, assetIndex, BorrowLendEvent.LendInterest, units, rate, mark, BorrowLendSource.Interest, 0, 0, FRONT_ID_NONE, 0);
}

/**
 * Before a lend of `accountId` in `assetIndex` changes (LendPools.beforeLendMove): while a pass
 * pays that pool and has not reached the account, the lend earns its hour now, on its size at the
 * hour (nothing has changed it since), once; a lend opened after the hour is stamped and earns
 * nothing (header).
 */
export function payLenderAhead(s: EngineState, accountId: number, assetIndex: number): void {
  const p = s.interestPass;
  if (!p.passing() || accountId < p.account || p.earnRate[assetIndex] < 0) return;
  const cell = accountId * s.pools.assetCount + assetIndex;
  if (p.paidHourUs[cell] === p.hourUs) return;
  if (s.pools.lent[cell] > 0) payLender(s, accountId, assetIndex, cell, bookMarkOf(s, assetIndex));
  else p.paidHourUs[cell] = p.hourUs;
}

/** After a snapshot load: a pass that runs waits for its next step 1 µs after the last command. */
export function armInterestPass(s: EngineState): void {
  const p = s.interestPass;
  if (p.passing() && p.timer === NO_TIMER) p.timer = s.timers.add(s.lastTimeUs + 1, TimerKind.InterestStep, 0);
}

/** A pass runs exactly while its timer waits, 1 µs after the last command, and only in steps; it pays rates only then. */
export function checkInterestPass(s: EngineState): void {
  const p = s.interestPass;
  const waiting = s.timers.inOrder(TimerKind.InterestStep);
  if (!p.passing()) {
    assert(p.timer === NO_TIMER && waiting.length === 0, 'an interest step timer without a pass');
    assert(p.payingAssets().length === 0, 'a lend rate kept without an interest pass');
    return;
  }
  assert(p.stepAccounts > 0, 'an interest pass without steps outlived its command');
  assert(p.account >= 1 && p.account <= s.accounts.count + 1, 'an interest pass beyond the accounts');
  assert(waiting.length === 1 && s.timers.kindOf(p.timer) === TimerKind.InterestStep && s.timers.dueOf(p.timer) === s.lastTimeUs + 1, 'an interest pass whose step is not due 1 µs after the last command');
}

/** One LendPoolSample per pool as it stands after the hour `hourUs` of interest (the market history). */
export function samplePools(s: EngineState, hourUs: number): void {
  for (let assetIndex = 0; assetIndex < s.pools.assetCount; assetIndex++) {
    if (s.pools.poolOf[assetIndex] === undefined) continue;
    const now = poolRates(s, assetIndex);
    s.out.lendPoolSample(assetIndex, hourUs, now.rate, now.earnRate, now.utilization);
  }
}

/** The borrow rate, lend rate and utilization of the pool of `assetIndex` at its totals now (lending.ts). */
export function poolRates(s: EngineState, assetIndex: number): { rate: Fraction; earnRate: Fraction; utilization: Fraction } {
  const pools = s.pools;
  const pool = pools.poolOf[assetIndex]!;
  const borrowed = BigInt(pools.borrowedTotal[assetIndex]);
  const lent = BigInt(pools.lentTotal[assetIndex]);
  const rate = borrowRate(pool, borrowed, lent);
  return { rate, earnRate: lendRate(rate, pool.fee, borrowed, lent), utilization: utilization(borrowed, lent) };
}
