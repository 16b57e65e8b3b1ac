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
// in engine time; after it runs it waits for the first multiple after the command that ran it, so
// a long quiet spell realizes once, at the mark of that moment, not once per interval it spans.
// Perpetuals in market order, accounts in ascending id; a perpetual without a mark is skipped. A
// Balance event for each account that realized a loss, the position's event (position-events.ts:
// Adjusted, from which the history keeps a RealizePnl settlement), then the claims paid (payClaims
// writes the balances of the accounts it pays). The cost is one margin summary per position that
// realized something, each interval.

import { FRONT_ID_NONE, PositionEvent } from '../../bus/types.js';
import { assert } from '../assert.js';
import { floorDiv } from '../margin/fixed.js';
import type { EngineState } from '../state.js';
import { NO_TIMER, TimerKind } from '../timers.js';
import { perpMarkOf } from './mark.js';
import { reportPosition } from './position-events.js';
import { fundDebts, payClaims, settleRealized } from './settle.js';

/** The RealizePnl timer (NO_TIMER while realization is off or before the first command). */
export class Realization {
  timer = NO_TIMER;
  constructor(readonly intervalUs: number) {}
}

/** The first multiple of the interval after `timeUs`. */
export function nextRealizeUs(intervalUs: number, timeUs: number): number {
  return Math.floor(timeUs / intervalUs) * intervalUs + intervalUs;
}

/** Arms the timer from the last engine time when realization is on and it does not wait yet. */
export function armRealization(s: EngineState): void {
  const r = s.realization;
  if (r.intervalUs === 0 || r.timer !== NO_TIMER || s.positions.perpCount === 0) return;
  r.timer = s.timers.add(nextRealizeUs(r.intervalUs, s.lastTimeUs), TimerKind.RealizePnl, 0);
}

/** The RealizePnl timer is due: every position realizes at its perpetual's mark, then the next multiple waits. */
export function realizePnl(s: EngineState, timer: number): void {
  const r = s.realization;
  assert(r.timer === timer, 'a realization timer the engine does not hold');
  const dueUs = s.timers.dueOf(timer);
  s.timers.remove(timer);
  for (const marketIndex of s.positions.marketOf) realizeMarket(s, marketIndex, dueUs);
  r.timer = s.timers.add(nextRealizeUs(r.intervalUs, s.lastTimeUs), TimerKind.RealizePnl, 0);
}

function realizeMarket(s: EngineState, marketIndex: number, dueUs: number): void {
  const mark = perpMarkOf(s, marketIndex, dueUs);
  if (mark === null) return;
  const p = s.positions;
  const quoteIndex = s.catalog.quoteIndexOf[marketIndex];
  const unitsPerLot = BigInt(s.catalog.markets[marketIndex].baseUnitsPerLot);
  // The holders, ascending (a realization changes no size, so the set stays while it is walked).
  for (const accountId of p.holdersOf(marketIndex)) {
    const cell = p.cell(accountId, marketIndex);
    const realized = floorDiv(BigInt(p.lots[cell]) * unitsPerLot * mark.price.quoteUnits, mark.price.baseUnits) + p.cost[cell];
    if (realized === 0n) continue;
    p.cost[cell] -= realized;
    p.changed(accountId);
    p.realized[cell] += realized;
    settleRealized(s, cell, accountId, quoteIndex, realized);
    if (realized < 0n) {
      fundDebts(s, cell, accountId, quoteIndex);
      s.out.balance(accountId, quoteIndex, FRONT_ID_NONE, 0);
    }
    reportPosition(s, accountId, marketIndex, PositionEvent.Adjusted);
  }
  payClaims(s, quoteIndex);
}

/** The timer waits exactly while realization is on and a command ran: due on the next multiple after the last command. */
export function checkRealization(s: EngineState): void {
  const r = s.realization;
  const armed = r.intervalUs > 0 && s.positions.perpCount > 0 && s.lastSeq >= 0;
  assert(s.timers.inOrder(TimerKind.RealizePnl).length === (armed ? 1 : 0) && (r.timer !== NO_TIMER) === armed, 'the realization timer waits other than while realization is on');
  if (armed) assert(s.timers.dueOf(r.timer) === nextRealizeUs(r.intervalUs, s.lastTimeUs), 'the realization timer is not due on the next multiple');
}
