// A perpetual's funding payments in steps (EngineConfig.fundingStepPositions, S): at an interval's
// end (funding.ts settleFunding) the rate, the mark and the end are fixed and a pass over the
// holders starts; a step pays at most S holders (scanning at most SCAN_PER_POSITION·S account
// ids, ascending), pays the claims, re-checks the holders (margin/liquidating.ts) and, when the
// pass is not done, arms the market's FundingStep timer 1 µs on, so the next command (or the
// shell's Tick, when the stream is quiet) runs the next step: orders interleave with the pass and
// no single command carries all of it. Without S (absent: the configuration of servers before the
// steps) the whole pass runs in the command that finds the interval's end, exactly as those
// servers ran it, so their journals replay.
//
// Every position pays on its size at the interval's end, whatever happens between the steps: a
// fill in a perpetual whose pass runs first pays the funding of each party the pass has not
// reached yet (fundBeforeFill, before the fill moves its size) and stamps its cell with the
// interval's end, so the pass skips it; a party with no position at the end pays nothing and is
// stamped all the same, so a position opened after the end pays nothing for it. A position the
// pass has passed is done. So the payments are those of the whole pass in one command, at the
// same rate, mark and sizes; only the moment each is made differs.
//
// State while a pass runs (snapshot format 15 on, hashed only then): per perpetual the next
// account id (0: no pass), the rate, the mark and the end, and the cells ahead of the cursor
// stamped with the end. Stamps behind the cursor, or of earlier ends, never match a pass's end
// and are not state. An interval's end that arrives while the previous pass still runs finishes
// that pass first, in the same command.

import { assert } from '../assert.js';
import { reviewPositionHoldersOf } from '../margin/liquidating.js';
import { expectSnapshot, type SnapshotReader, type SnapshotWriter, type StateDigest } from '../parts.js';
import type { EngineState } from '../state.js';
import { NO_TIMER, TimerKind } from '../timers.js';
import { fundingTerms, payHolder, type FundingTerms } from './funding-payments.js';
import { payClaims } from './settle.js';
import { passBudget } from './positions.js';

export class FundingPasses {
  /** By perpetual ordinal: the next account id the pass visits (0: no pass runs). */
  readonly account: Float64Array;
  /** By perpetual ordinal: the pass's rate (×10^12), mark (×10^9) and interval end (µs). */
  readonly rateE12: Float64Array;
  readonly markE9: Float64Array;
  readonly endUs: Float64Array;
  /** By perpetual ordinal: the FundingStep timer (NO_TIMER while no pass runs). */
  readonly timer: Int32Array;
  /** By position cell: the interval end a fill paid it for ahead of the pass (fundBeforeFill). */
  readonly paidEndUs: Float64Array;

  /** `stepPositions` 0: each pass in one command. */
  constructor(readonly stepPositions: number, perpCount: number, cells: number) {
    this.account = new Float64Array(perpCount);
    this.rateE12 = new Float64Array(perpCount);
    this.markE9 = new Float64Array(perpCount);
    this.endUs = new Float64Array(perpCount);
    this.timer = new Int32Array(perpCount).fill(NO_TIMER);
    this.paidEndUs = new Float64Array(stepPositions > 0 ? cells : 0);
  }

  passing(ordinal: number): boolean {
    return this.account[ordinal] !== 0;
  }

  /** The cells ahead of the cursor of ordinal's pass that a fill paid, ascending by account. */
  private paidAhead(s: EngineState, ordinal: number): number[] {
    const p = s.positions;
    const paid: number[] = [];
    for (let accountId = this.account[ordinal]; accountId <= s.accounts.count; accountId++) {
      if (this.paidEndUs[accountId * p.perpCount + ordinal] === this.endUs[ordinal]) paid.push(accountId);
    }
    return paid;
  }

  exportTo(s: EngineState, w: SnapshotWriter): void {
    let running = 0;
    for (let ordinal = 0; ordinal < this.account.length; ordinal++) if (this.passing(ordinal)) running++;
    w.number(running);
    for (let ordinal = 0; ordinal < this.account.length; ordinal++) {
      if (!this.passing(ordinal)) continue;
      w.number(ordinal);
      w.number(this.account[ordinal]);
      w.number(this.rateE12[ordinal] + 2 ** 52); // signed: offset into the non-negative range
      w.number(this.markE9[ordinal]);
      w.number(this.endUs[ordinal]);
      const paid = this.paidAhead(s, ordinal);
      w.number(paid.length);
      for (const accountId of paid) w.number(accountId);
    }
  }

  /** Reads the passes in progress (`present` false: an older snapshot, none); their timers are armed by the caller. */
  importFrom(s: EngineState, r: SnapshotReader, present: boolean): void {
    if (!present) return;
    const p = s.positions;
    const running = r.number();
    expectSnapshot(running >= 0 && running <= p.perpCount, 'more funding passes than perpetuals');
    expectSnapshot(running === 0 || this.stepPositions > 0, 'a funding pass in steps under a configuration without them');
    let before = -1;
    for (let i = 0; i < running; i++) {
      const ordinal = r.number();
      expectSnapshot(ordinal > before && ordinal < p.perpCount, 'funding passes out of order');
      before = ordinal;
      const account = r.number();
      const rate = r.number() - 2 ** 52;
      const mark = r.number();
      const end = r.number();
      expectSnapshot(account >= 1 && account <= s.accounts.count + 1 && rate !== 0 && mark > 0 && end > 0, 'a funding pass beyond the accounts or without a rate, mark or end');
      this.account[ordinal] = account;
      this.rateE12[ordinal] = rate;
      this.markE9[ordinal] = mark;
      this.endUs[ordinal] = end;
      const paid = r.number();
      let previous = account - 1;
      for (let k = 0; k < paid; k++) {
        const accountId = r.number();
        expectSnapshot(accountId > previous && accountId <= s.accounts.count, 'funding paid ahead of its pass out of order or beyond the accounts');
        previous = accountId;
        this.paidEndUs[accountId * p.perpCount + ordinal] = end;
      }
    }
  }

  /** Only while a pass runs: every state between passes keeps its hash. */
  hashInto(s: EngineState, d: StateDigest): void {
    for (let ordinal = 0; ordinal < this.account.length; ordinal++) {
      if (!this.passing(ordinal)) continue;
      d.number(ordinal);
      d.number(this.account[ordinal]);
      d.number(this.rateE12[ordinal] + 2 ** 52);
      d.number(this.markE9[ordinal]);
      d.number(this.endUs[ordinal]);
      const paid = this.paidAhead(s, ordinal);
      d.number(paid.length);
      for (const accountId of paid) d.number(accountId);
    }
  }
}

function termsOf(s: EngineState, ordinal: number): FundingTerms {
  const f = s.fundingPasses;
  return fundingTerms(s, s.positions.marketOf[ordinal], f.rateE12[ordinal], f.markE9[ordinal]);
}

/**
 * Perpetual `m`'s funding at `rateE12` and `markE9` for the interval ending at `endUs`: the whole
 * pass now without steps, else its first step (a pass still running finishes first).
 */
export function startFundingPass(s: EngineState, m: number, rateE12: number, markE9: number, endUs: number): void {
  const f = s.fundingPasses;
  const ordinal = s.positions.ordinalOf[m];
  if (f.passing(ordinal)) {
    fundingStep(s, ordinal, Infinity);
    s.timers.remove(f.timer[ordinal]);
    f.timer[ordinal] = NO_TIMER;
  }
  if (rateE12 === 0 || markE9 <= 0) {
    reviewPositionHoldersOf(s, m);
    return;
  }
  f.account[ordinal] = 1;
  f.rateE12[ordinal] = rateE12;
  f.markE9[ordinal] = markE9;
  f.endUs[ordinal] = endUs;
  fundingStep(s, ordinal, f.stepPositions === 0 ? Infinity : f.stepPositions);
  if (f.passing(ordinal)) f.timer[ordinal] = s.timers.add(s.lastTimeUs + 1, TimerKind.FundingStep, m);
}

/** The FundingStep timer of perpetual `m` is due: the pass's next step, then 1 µs on while it is not done. */
export function fundingStepDue(s: EngineState, timer: number): void {
  const f = s.fundingPasses;
  const m = s.timers.refOf(timer);
  const ordinal = s.positions.ordinalOf[m];
  assert(f.timer[ordinal] === timer && f.passing(ordinal), 'a funding step timer without its pass');
  s.timers.remove(timer);
  f.timer[ordinal] = NO_TIMER;
  fundingStep(s, ordinal, f.stepPositions);
  if (f.passing(ordinal)) f.timer[ordinal] = s.timers.add(s.lastTimeUs + 1, TimerKind.FundingStep, m);
}

/**
 * One step of ordinal's pass (header): from the cursor, at most `visits` holders paid (those a
 * fill paid ahead of the pass skipped) and SCAN_PER_POSITION times as many account ids scanned,
 * then the claims and the holders' re-checks; the pass ends when the cursor passes the last account.
 */
function fundingStep(s: EngineState, ordinal: number, visits: number): void {
  const f = s.fundingPasses;
  const p = s.positions;
  const m = p.marketOf[ordinal];
  const terms = termsOf(s, ordinal);
  const end = f.endUs[ordinal];
  const lastAccount = s.accounts.count;
  let accountId = f.account[ordinal];
  if (f.stepPositions === 0) {
    // Without steps: the holders as the pass in one command always walked them.
    for (const holder of p.holdersOf(m)) payHolder(s, m, p.cell(holder, m), holder, terms, end);
    accountId = lastAccount + 1;
  } else {
    accountId = p.walkHolders(ordinal, accountId, lastAccount, passBudget(visits), (cell, holder) => {
      if (f.paidEndUs[cell] === end) return false;
      payHolder(s, m, cell, holder, terms, end);
      return true;
    });
  }
  payClaims(s, s.catalog.quoteIndexOf[m]);
  f.account[ordinal] = accountId <= lastAccount ? accountId : 0;
  reviewPositionHoldersOf(s, m);
}

/**
 * Before a fill moves the position of `accountId` in perpetual `m`: while m's pass runs and has
 * not reached the account, the position pays its funding on its size at the interval's end (its
 * size now: nothing has moved it since), once (header).
 */
export function fundBeforeFill(s: EngineState, accountId: number, m: number): void {
  const f = s.fundingPasses;
  const p = s.positions;
  const ordinal = p.ordinalOf[m];
  if (!f.passing(ordinal) || accountId < f.account[ordinal]) return;
  const cell = p.cell(accountId, m);
  if (f.paidEndUs[cell] === f.endUs[ordinal]) return;
  f.paidEndUs[cell] = f.endUs[ordinal];
  if (p.lots[cell] !== 0) payHolder(s, m, cell, accountId, termsOf(s, ordinal), f.endUs[ordinal]);
}

/** After a snapshot load: each pass that runs waits for its next step 1 µs after the last command. */
export function armFundingSteps(s: EngineState): void {
  const f = s.fundingPasses;
  for (let ordinal = 0; ordinal < f.account.length; ordinal++) {
    if (f.passing(ordinal) && f.timer[ordinal] === NO_TIMER) f.timer[ordinal] = s.timers.add(s.lastTimeUs + 1, TimerKind.FundingStep, s.positions.marketOf[ordinal]);
  }
}

/** A pass runs exactly while its FundingStep timer waits, 1 µs after the last command, and only in steps. */
export function checkFundingPasses(s: EngineState): void {
  const f = s.fundingPasses;
  let running = 0;
  for (let ordinal = 0; ordinal < f.account.length; ordinal++) {
    if (!f.passing(ordinal)) {
      assert(f.timer[ordinal] === NO_TIMER, 'a funding step timer without a pass');
      continue;
    }
    running++;
    assert(f.stepPositions > 0, 'a funding pass without steps outlived its command');
    assert(f.account[ordinal] >= 1 && f.account[ordinal] <= s.accounts.count + 1, 'a funding pass beyond the accounts');
    assert(f.timer[ordinal] !== NO_TIMER && s.timers.dueOf(f.timer[ordinal]) === s.lastTimeUs + 1, 'a funding pass whose step is not due 1 µs after the last command');
  }
  assert(s.timers.inOrder(TimerKind.FundingStep).length === running, 'funding step timers differ from the passes');
}
