// Every account's position limit on perpetuals (venue mechanics "Position limits": the venue's
// positionLimitWeight is "used to calculate position limits when clearing a trade"), a fill-time
// check beside the market's open interest limit (open-interest.ts).
//
// The account's weighted exposure is Σ over its perpetuals of |size_i| × price_i × weight_i in
// quote units (USDC), each term rounded up: weight_i is the market's positionLimitWeight (10^-12,
// 1 when it names none), price_i the perpetual's mark (mark.ts perpMarkOf), except in the market
// of the fill itself, valued at the fill's price (the trade being cleared; its book may move
// during the match, the fill price does not). A perpetual without a mark counts nothing (it has
// no price to value it at; a held position's market has traded, so its book gives one).
//
// The rule: a fill that raises a party's |size| in its market (an opening, an increase, or a flip
// past flat to a larger size) does not happen when the party's weighted exposure after it would
// be above the configured limit (EngineConfig.positionLimitUnits; absent: no limit). A fill that
// keeps or lowers |size| always passes, even above the limit. Whichever party is beyond — the
// taker or the maker — the taker stops there and its remainder expires PositionLimit (a limit
// order does not rest), as for the open interest limit; the maker's order stays on the book.
// The fill-or-kill walk (open-interest.ts FillWalk) checks each fill with the sizes its earlier
// fills would leave.
//
// Admission (hold.ts perpAdmission, before the margin test): a perpetual order that is not
// reduce-only is refused PositionLimit when its whole quantity, added to the account's position
// in its market (other open orders not counted), would raise |size| and take the weighted exposure
// past the limit, that market valued at its mark here (an order has no fill price yet; without a
// mark it passes, its fills are checked). So is the largest order quantity (funds/risk.ts) bounded.

import { MarketKind, POSITION_LIMIT_WEIGHT_ONE, ResultCode, Side } from '../../bus/types.js';
import type { EngineState } from '../state.js';
import { ceilDiv } from '../margin/fixed.js';
import { perpMarkOf } from './mark.js';

/**
 * Whether an account of size `lotsBefore` in the perpetual `marketIndex` that moves by `delta`
 * lots at `priceTicks` would end above its position limit (false when the move does not raise |size|).
 */
export function beyondPositionLimit(s: EngineState, accountId: number, marketIndex: number, lotsBefore: number, delta: number, priceTicks: number): boolean {
  const catalog = s.catalog;
  if (catalog.positionLimitUnits < 0) return false;
  const lotsAfter = lotsBefore + delta;
  if (Math.abs(lotsAfter) <= Math.abs(lotsBefore)) return false;
  const market = catalog.markets[marketIndex];
  const notional = BigInt(Math.abs(lotsAfter)) * BigInt(priceTicks) * BigInt(market.quoteUnitsPerTickLot);
  return beyondWith(s, accountId, marketIndex, ceilDiv(notional * catalog.positionLimitWeightOf[marketIndex], POSITION_LIMIT_WEIGHT_ONE));
}

/**
 * The admission of a perpetual order (hold.ts perpAdmission): PositionLimit when its whole
 * quantity, added to the account's position, raises |size| and takes the weighted exposure past
 * the limit, the position valued at the perpetual's mark (no mark: Ok, the fills are checked).
 */
export function admitPositionLimit(s: EngineState, accountId: number, marketIndex: number, side: Side, lots: number): ResultCode {
  if (s.catalog.positionLimitUnits < 0) return ResultCode.Ok;
  const p = s.positions;
  const before = p.lots[p.cell(accountId, marketIndex)];
  const after = side === Side.Bid ? before + lots : before - lots;
  if (Math.abs(after) <= Math.abs(before)) return ResultCode.Ok;
  const own = weightedAtMark(s, marketIndex, after);
  if (own === null) return ResultCode.Ok;
  return beyondWith(s, accountId, marketIndex, own) ? ResultCode.PositionLimit : ResultCode.Ok;
}

/** Whether `own` (the term of `marketIndex`) and the account's other perpetuals at their marks pass the limit. */
function beyondWith(s: EngineState, accountId: number, marketIndex: number, own: bigint): boolean {
  const limit = BigInt(s.catalog.positionLimitUnits);
  let total = own;
  if (total > limit) return true;
  const p = s.positions;
  for (let ordinal = 0; ordinal < p.perpCount; ordinal++) {
    const index = p.marketOf[ordinal];
    if (index === marketIndex) continue;
    total += weightedAtMark(s, index, p.lots[accountId * p.perpCount + ordinal]) ?? 0n;
    if (total > limit) return true;
  }
  return false;
}

/** |lots| of the perpetual `marketIndex` at its mark × its weight, rounded up (0: flat; null: no mark). */
function weightedAtMark(s: EngineState, marketIndex: number, lots: number): bigint | null {
  if (lots === 0 || s.catalog.kindOf[marketIndex] !== MarketKind.Perp) return 0n;
  const mark = perpMarkOf(s, marketIndex);
  if (mark === null) return null;
  const market = s.catalog.markets[marketIndex];
  const value = BigInt(Math.abs(lots)) * BigInt(market.baseUnitsPerLot) * mark.price.quoteUnits * s.catalog.positionLimitWeightOf[marketIndex];
  return ceilDiv(value, mark.price.baseUnits * POSITION_LIMIT_WEIGHT_ONE);
}
