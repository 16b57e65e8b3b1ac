// Stage (b) of the waterfall for perpetual positions (unwind.ts header, venue mechanics §4.1): the
// account's position with the largest N·MMF, closed a chunk at a time on the public book by a
// system reduce-only IOC market order of the account (OrderFlag.Liquidation | ReduceOnly:
// SystemOrderType LiquidatePositionOnBook, origin LIQUIDATION_AUTOCLOSE, fills BookLiquidation).
//
// N is |size| × the perpetual's mark (rounded up), MMF the market's mmf function at N; the chunk
// chunkBps of |size| in whole lots (rounded up), at least the market's minimum quantity, at most
// its maximum and |size|. The market order's sweep band applies (book/matching.ts), its rest
// expires. Outcome: Placed when it filled some lots, Unfilled when it filled none (no liquidity
// within the band: the backstop providers follow, backstop.ts, then the fund and auto-deleveraging,
// adl.ts), Blocked when the book takes no market order now.

import { Side } from '../../bus/types.js';
import { notionalCeil } from '../margin/collateral.js';
import { ceilDiv, FRACTION_ONE } from '../margin/fixed.js';
import { positionMmf } from '../margin/fractions.js';
import { perpMarkOf } from '../perp/mark.js';
import type { EngineState } from '../state.js';
import { bookTakes, placeSystemOrder, UnwindOutcome } from './unwind.js';

/** N·MMF of the account's position in the perpetual of `marketIndex` at its mark (-1 when flat or without a mark). */
export function positionMmfUnits(s: EngineState, accountId: number, marketIndex: number): bigint {
  const p = s.positions;
  const lots = p.lots[p.cell(accountId, marketIndex)];
  const mark = lots === 0 ? null : perpMarkOf(s, marketIndex);
  if (mark === null) return -1n;
  const market = s.catalog.markets[marketIndex];
  const quoteDecimals = s.pools.decimalsOf[s.catalog.quoteIndexOf[marketIndex]];
  const notional = notionalCeil(BigInt(Math.abs(lots)) * BigInt(market.baseUnitsPerLot), mark.price);
  return ceilDiv(notional * positionMmf(market.perp!.mmf, notional, quoteDecimals), FRACTION_ONE);
}

/** The account's position with the largest N·MMF (ties: the lower market index); market -1 when none has a mark. */
export function largestPosition(s: EngineState, accountId: number): { marketIndex: number; units: bigint } {
  const p = s.positions;
  let best = { marketIndex: -1, units: -1n };
  if (p.positionCountOf[accountId] === 0) return best;
  for (let ordinal = 0; ordinal < p.perpCount; ordinal++) {
    const units = positionMmfUnits(s, accountId, p.marketOf[ordinal]);
    if (units > best.units) best = { marketIndex: p.marketOf[ordinal], units };
  }
  return best;
}

/** One chunk of the position closed on the book (header). */
export function closePositionChunk(s: EngineState, accountId: number, marketIndex: number): UnwindOutcome {
  const p = s.positions;
  const cell = p.cell(accountId, marketIndex);
  const before = p.lots[cell];
  const size = Math.abs(before);
  const spec = s.catalog.markets[marketIndex];
  const wanted = Number(ceilDiv(BigInt(size) * BigInt(s.insurance.config.chunkBps), 10_000n));
  const lots = Math.min(size, spec.maxQtyLots, Math.max(spec.minQtyLots, wanted));
  if (!bookTakes(s, marketIndex)) return UnwindOutcome.Blocked;
  placeSystemOrder(s, accountId, marketIndex, before > 0 ? Side.Ask : Side.Bid, lots);
  return p.lots[cell] === before ? UnwindOutcome.Unfilled : UnwindOutcome.Placed;
}
