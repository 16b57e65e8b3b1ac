// Position events (the wire's account.positionUpdate): after each perpetual fill, one Position
// record per party, and after each funding payment, one for the position it was charged on, each
// an event for everyone (front_id 0xFFFF) carrying the figures QueryPositions would answer at
// that moment, with the cause: Opened (the fill started the position from flat), Closed (it left
// the position flat), Adjusted (any other fill, a flip too, or a funding payment).
//
// A position a fill closed may have nothing left to show (no unsettled amount, no open order in
// the market), so the margin summary holds no line for it; its event then reports size, cost,
// exposure and margin fractions 0, the realized PnL and fees it ended with, and the mark.

import { FRONT_ID_NONE, PositionEvent } from '../../bus/types.js';
import type { PositionView } from '../output.js';
import { maintenanceFigures } from '../margin/valuation.js';
import type { EngineState } from '../state.js';
import { perpMarkOf } from './mark.js';
import { positionView } from './query.js';

/** The cause of a fill's change of one party's position, from its size before and after. */
export function fillEventOf(lotsBefore: number, lotsAfter: number): PositionEvent {
  if (lotsAfter === 0) return PositionEvent.Closed;
  return lotsBefore === 0 ? PositionEvent.Opened : PositionEvent.Adjusted;
}

/** A position with no line in the margin summary: flat, nothing unsettled, no open order. */
function flatView(s: EngineState, accountId: number, marketIndex: number): PositionView {
  const p = s.positions;
  const cell = p.cell(accountId, marketIndex);
  const mark = perpMarkOf(s, marketIndex, s.out.applyTimeUs);
  return {
    accountId, marketId: s.catalog.markets[marketIndex].marketId, positionId: p.positionId[cell],
    netLots: 0, exposureLots: 0, costUnits: 0n, realizedUnits: p.realized[cell], unrealizedUnits: 0n,
    unsettledUnits: 0n, feesUnits: p.fees[cell], exposureNotionalUnits: 0n,
    markPriceE9: mark === null ? 0 : mark.priceE9, markSource: mark === null ? 0 : mark.source,
    estLiquidationPriceE9: 0, imf: 0n, mmf: 0n, cumulativeFundingUnits: s.perpMarks.cumulative.of(cell, p),
  };
}

/** Writes the event of the account's position in perpetual `marketIndex`. */
export function reportPosition(s: EngineState, accountId: number, marketIndex: number, event: PositionEvent): void {
  const figures = maintenanceFigures(s, accountId, undefined, s.out.applyTimeUs);
  const cell = s.positions.cell(accountId, marketIndex);
  const line = figures.perpLines.find((l) => l.cell === cell);
  const view = line === undefined ? flatView(s, accountId, marketIndex) : positionView(s, accountId, line, figures);
  s.out.position(view, event, FRONT_ID_NONE, 0);
}
