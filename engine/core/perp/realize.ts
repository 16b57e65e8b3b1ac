// Realizing perpetual PnL at mark (venue mechanics §3.5, "realization now"): every
// realizePnlIntervalUs of engine time (the venue: every 10 s; EngineConfig.realizePnlIntervalUs,
// absent: never, the legacy rule where PnL is realized only when a position reduces), each open
// position moves its unrealized PnL at the perpetual's mark into USDC without changing its size.
//
// For a position of S base units with cost C at mark m (quote units per base unit, an exact
// fraction, perp/mark.ts), the unrealized PnL is U = floor(S·m) + C, exactly what the margin
// summary and GET /api/v1/position show (perp/exposure.ts). Realizing moves R = U: C becomes
// C − R, so the position shows 0 unrealized at that mark, and R is settled as a fill's realized
// PnL is (settle.ts settleRealized: a loss paid into the settlement line from available USDC,
// the rest a debt; a profit a claim on the line, paid as it holds units; autoBorrowSettlements
// covers a debt at once). Since every position of a perpetual is valued at the same mark and the
// sizes sum to 0, Σ S·m = 0 and realizing creates no money; Σ (C + realized) is unchanged. Net
// equity does not move either: a realized loss leaves available USDC (or becomes a debt) and a
// realized profit becomes USDC or an unsettled claim, both counted in equity as U was.
//
// The entry cost (positions.ts entryCost) does not move: the entry price, break-even price and
// netCost stay as the fills made them; pnlRealized accumulates R.
//
// When. One RealizePnl timer for every perpetual (timers.ts), due on the multiples of the interval
// in engine time. Perpetuals in market order, accounts in ascending id; a perpetual without a mark
// is skipped. A Balance event for each account that realized a loss, the position's event
// (position-events.ts: Adjusted, from which the history keeps a RealizePnl settlement), then the
// claims paid (payClaims writes the balances of the accounts it pays). The cost is one valuation
// per position that realized something, each interval.
//
// The pass in steps (EngineConfig.realizeStepPositions, S): a step visits at most S positions (and
// scans at most SCAN_PER_POSITION·S account ids for them), each at the mark of its step's due time,
// pays the claims, and when the pass is not done waits 1 µs of engine time, so the next command
// (or the shell's Tick, when the stream is quiet) runs the next step: orders interleave with the
// pass and no single command carries all of it. The pass resumes at the next account id of the
// perpetual it reached (Realization.passOrdinal, passAccount: state, in the snapshot and the state
// hash while a pass runs), so a position that opened behind the cursor waits for the next pass and
// one ahead of it realizes in this one; every position realizes at most once a pass. When the pass
// is done the timer waits for the first multiple after the command that ran its last step, so a
// long quiet spell realizes once, at the mark of that moment, not once per interval it spans.
// Without S (absent: the configuration of servers before the steps) the whole pass runs in the one
// command that finds the timer due, exactly as those servers ran it, so their journals replay.

import { FRONT_ID_NONE, PositionEvent } from '../../bus/types.js';
import { assert } from '../assert.js';
import { floorDiv } from '../margin/fixed.js';
import type { Mark } from '../margin/mark.js';
import { expectSnapshot, type SnapshotReader, type SnapshotWriter, type StateDigest } from '../parts.js';
import type { EngineState } from '../state.js';
import { NO_TIMER, TimerKind } from '../timers.js';
import { perpMarkOf } from './mark.js';
import { reportPosition } from './position-events.js';
import { passBudget } from './positions.js';
import { fundDebts, payClaims, settleRealized } from './settle.js';

/** The RealizePnl timer (NO_TIMER while realization is off or before the first command) and the pass in progress. */
export class Realization {
  timer = NO_TIMER;
  /** The perpetual the pass in progress has reached (an ordinal of positions.marketOf), -1 while none runs. */
  passOrdinal = -1;
  /** The next account id the pass visits in that perpetual. */
  passAccount = 0;
  /** `stepPositions` 0: the whole pass in one command. */
  constructor(readonly intervalUs: number, readonly stepPositions: number) {}

  /** True while a pass has steps left. */
  passing(): boolean {
    return this.passOrdinal >= 0;
  }

  exportTo(w: SnapshotWriter): void {
    w.number(this.passOrdinal + 1);
    w.number(this.passAccount);
  }

  /** Reads the pass in progress (`present` false: an older snapshot, none). */
  importFrom(r: SnapshotReader, present: boolean, perpCount: number, accountCount: number): void {
    if (!present) return;
    const ordinal = r.number() - 1;
    const account = r.number();
    expectSnapshot(ordinal >= -1 && ordinal < perpCount && (ordinal < 0 ? account === 0 : account >= 1 && account <= accountCount + 1), 'a realization pass beyond the perpetuals or the accounts');
    expectSnapshot(ordinal < 0 || this.stepPositions > 0, 'a realization pass in steps under a configuration without them');
    this.passOrdinal = ordinal;
    this.passAccount = account;
  }

  /** Only while a pass runs: every state between passes keeps its hash. */
  hashInto(d: StateDigest): void {
    if (!this.passing()) return;
    d.number(this.passOrdinal);
    d.number(this.passAccount);
  }
}

/** The first multiple of the interval after `timeUs`. */
export function nextRealizeUs(intervalUs: number, timeUs: number): number {
  return Math.floor(timeUs / intervalUs) * intervalUs + intervalUs;
}

/** When the timer waits: 1 µs after the last command while a pass has steps left, else the next multiple. */
function realizeDueUs(s: EngineState): number {
  const r = s.realization;
  return r.passing() ? s.lastTimeUs + 1 : nextRealizeUs(r.intervalUs, s.lastTimeUs);
}

/** Arms the timer from the last engine time when realization is on and it does not wait yet. */
export function armRealization(s: EngineState): void {
  const r = s.realization;
  if (r.intervalUs === 0 || r.timer !== NO_TIMER || s.positions.perpCount === 0) return;
  r.timer = s.timers.add(realizeDueUs(s), TimerKind.RealizePnl, 0);
}

/** The RealizePnl timer is due: the pass (or its next step) realizes at each perpetual's mark, then the timer waits again. */
export function realizePnl(s: EngineState, timer: number): void {
  const r = s.realization;
  assert(r.timer === timer, 'a realization timer the engine does not hold');
  const dueUs = s.timers.dueOf(timer);
  s.timers.remove(timer);
  if (r.stepPositions === 0) {
    for (const marketIndex of s.positions.marketOf) realizeMarket(s, marketIndex, dueUs);
  } else {
    if (!r.passing()) {
      r.passOrdinal = 0;
      r.passAccount = 1;
    }
    realizeStep(s, dueUs);
  }
  r.timer = s.timers.add(realizeDueUs(s), TimerKind.RealizePnl, 0);
}

/** The whole of one perpetual's pass (no steps): its holders ascending, then the claims. */
function realizeMarket(s: EngineState, marketIndex: number, dueUs: number): void {
  const mark = perpMarkOf(s, marketIndex, dueUs);
  if (mark === null) return;
  const quoteIndex = s.catalog.quoteIndexOf[marketIndex];
  const unitsPerLot = BigInt(s.catalog.markets[marketIndex].baseUnitsPerLot);
  // The holders, ascending (a realization changes no size, so the set stays while it is walked).
  for (const accountId of s.positions.holdersOf(marketIndex)) realizePosition(s, accountId, marketIndex, quoteIndex, unitsPerLot, mark.price);
  payClaims(s, quoteIndex);
}

/**
 * One step of a pass (header): from the cursor, at most stepPositions positions visited and
 * SCAN_PER_POSITION times as many account ids scanned; each perpetual's claims paid when the step
 * leaves it. Ends the pass when the cursor passes the last perpetual.
 */
function realizeStep(s: EngineState, dueUs: number): void {
  const r = s.realization;
  const p = s.positions;
  const lastAccount = s.accounts.count;
  const budget = passBudget(r.stepPositions);
  while (r.passOrdinal < p.perpCount) {
    const marketIndex = p.marketOf[r.passOrdinal];
    const mark = perpMarkOf(s, marketIndex, dueUs);
    if (mark !== null) {
      const quoteIndex = s.catalog.quoteIndexOf[marketIndex];
      const unitsPerLot = BigInt(s.catalog.markets[marketIndex].baseUnitsPerLot);
      r.passAccount = p.walkHolders(r.passOrdinal, r.passAccount, lastAccount, budget, (_cell, accountId) => {
        realizePosition(s, accountId, marketIndex, quoteIndex, unitsPerLot, mark.price);
        return true;
      });
      payClaims(s, quoteIndex);
      if (r.passAccount <= lastAccount) return;
    }
    r.passOrdinal++;
    r.passAccount = 1;
  }
  r.passOrdinal = -1;
  r.passAccount = 0;
}

/** One position realizes its unrealized PnL at `price` (header): its cost, the settlement, a loss's balance, its event. */
function realizePosition(s: EngineState, accountId: number, marketIndex: number, quoteIndex: number, unitsPerLot: bigint, price: Mark['price']): void {
  const p = s.positions;
  const cell = p.cell(accountId, marketIndex);
  const realized = floorDiv(BigInt(p.lots[cell]) * unitsPerLot * price.quoteUnits, price.baseUnits) + p.cost[cell];
  if (realized === 0n) return;
  // USDC against the cost: the account's margin at every mark is unchanged, so are its trigger bands.
  s.trigger.spare(accountId, quoteIndex);
  p.cost[cell] -= realized;
  p.changed(accountId);
  p.realized[cell] += realized;
  settleRealized(s, cell, accountId, quoteIndex, realized);
  s.trigger.endSpare();
  if (realized < 0n) {
    fundDebts(s, cell, accountId, quoteIndex);
    s.out.balance(accountId, quoteIndex, FRONT_ID_NONE, 0);
  }
  reportPosition(s, accountId, marketIndex, PositionEvent.Adjusted);
}

/**
 * The timer waits exactly while realization is on and a command ran: 1 µs after the last command
 * while a pass has steps left, else on the next multiple after it; a pass runs only in steps, with
 * its cursor inside the perpetuals and the accounts.
 */
export function checkRealization(s: EngineState): void {
  const r = s.realization;
  const armed = r.intervalUs > 0 && s.positions.perpCount > 0 && s.lastSeq >= 0;
  assert(s.timers.inOrder(TimerKind.RealizePnl).length === (armed ? 1 : 0) && (r.timer !== NO_TIMER) === armed, 'the realization timer waits other than while realization is on');
  if (armed) assert(s.timers.dueOf(r.timer) === realizeDueUs(s), 'the realization timer is not due 1 µs on (a pass in steps) or on the next multiple');
  if (r.passing()) {
    assert(r.stepPositions > 0 && armed, 'a realization pass without steps or without its timer');
    assert(r.passOrdinal < s.positions.perpCount && r.passAccount >= 1 && r.passAccount <= s.accounts.count + 1, 'a realization pass beyond the perpetuals or the accounts');
  } else {
    assert(r.passAccount === 0, 'a realization cursor without a pass');
  }
}
