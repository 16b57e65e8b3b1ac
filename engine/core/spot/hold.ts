// What a spot order holds while it is open: the quote it may pay (a bid) or the base it may sell
// (an ask), moved from available to locked when it is placed and given back as it fills, ends or
// is cancelled.
//
// A limit order holds price × quantity × quoteUnitsPerTickLot of quote (a bid) or quantity ×
// baseUnitsPerLot of base (an ask). Market orders (by quantity, or by quote quantity) hold at
// sequencing time, before the book they will meet is known (they are taker orders, so
// speed-bumped), by rules that can never overdraw:
//   ask by quantity      holds the base quantity, as a limit ask;
//   ask by quote qty     holds min(lots the quote quantity could buy at minPriceTicks, maxQtyLots,
//                        whole lots of available base) lots of base; that many lots is its cap
//                        (InsufficientFunds when available base caps it below minQtyLots);
//   bid by quote qty     holds the quote quantity; its lot cap is what that buys at minPriceTicks;
//   bid by quantity      holds min(available quote, quantity × maxPriceTicks), the worst case of
//                        walking any book, so it fills only what available funds cover.
// A market order fills level by level while its lot cap and its quote limit allow a whole lot,
// never rests, and releases what it did not spend when it ends (book/matching.ts).

import { OrderType, ResultCode, Side, type PlaceOrderCommand } from '../../bus/types.js';
import type { PlaceHold } from '../kinds.js';
import type { EngineState } from '../state.js';
import {
  MAX_AMOUNT_UNITS,
  baseUnits,
  floorDiv,
  notionalUnits,
  subUnits,
  type AmountUnits,
  type PriceTicks,
  type QtyLots,
} from '../units.js';
import { Of } from '../book/orders.js';

/** The hold of a spot place that passed the book's checks (the header's rules). */
export function spotHold(s: EngineState, cmd: PlaceOrderCommand, marketIndex: number, hold: PlaceHold): ResultCode {
  if (cmd.orderType === OrderType.Market) return marketHold(s, cmd, marketIndex, hold);
  const market = s.catalog.markets[marketIndex];
  const bid = cmd.side === Side.Bid;
  hold.assetIndex = bid ? s.catalog.quoteIndexOf[marketIndex] : s.catalog.baseIndexOf[marketIndex];
  hold.units = bid
    ? notionalUnits(cmd.priceTicks as PriceTicks, cmd.qtyLots as QtyLots, market.quoteUnitsPerTickLot)
    : baseUnits(cmd.qtyLots as QtyLots, market.baseUnitsPerLot);
  hold.lots = cmd.qtyLots as QtyLots;
  if (s.ledger.availableUnits(cmd.accountId, hold.assetIndex) < hold.units) return ResultCode.InsufficientFunds;
  return ResultCode.Ok;
}

/** Lot cap, quote limit and hold of a market order (header rules). */
function marketHold(s: EngineState, cmd: PlaceOrderCommand, marketIndex: number, hold: PlaceHold): ResultCode {
  const market = s.catalog.markets[marketIndex];
  const bid = cmd.side === Side.Bid;
  hold.assetIndex = bid ? s.catalog.quoteIndexOf[marketIndex] : s.catalog.baseIndexOf[marketIndex];
  const available = s.ledger.availableUnits(cmd.accountId, hold.assetIndex);
  // No lot can trade below minPriceTicks, so this is the cheapest a lot can ever cost.
  const lotQuoteUnitsMin = notionalUnits(market.minPriceTicks as PriceTicks, 1 as QtyLots, market.quoteUnitsPerTickLot);
  if (cmd.quoteQtyUnits > 0) {
    const quoteLots = Math.min(market.maxQtyLots, floorDiv(cmd.quoteQtyUnits, lotQuoteUnitsMin));
    if (quoteLots < market.minQtyLots) return ResultCode.QuantityBelowMinimum;
    hold.quoteLimitUnits = cmd.quoteQtyUnits as AmountUnits;
    hold.lots = (bid ? quoteLots : Math.min(quoteLots, floorDiv(available, market.baseUnitsPerLot))) as QtyLots;
    // An ask capped by its available base below the market's minimum cannot sell the minimum.
    if (hold.lots < market.minQtyLots) return ResultCode.InsufficientFunds;
    hold.units = bid ? hold.quoteLimitUnits : baseUnits(hold.lots, market.baseUnitsPerLot);
  } else {
    hold.lots = cmd.qtyLots as QtyLots;
    const worstUnits = notionalUnits(market.maxPriceTicks as PriceTicks, hold.lots, market.quoteUnitsPerTickLot);
    hold.quoteLimitUnits = bid ? (Math.min(available, worstUnits) as AmountUnits) : MAX_AMOUNT_UNITS;
    if (bid && hold.quoteLimitUnits < lotQuoteUnitsMin) return ResultCode.InsufficientFunds;
    hold.units = bid ? hold.quoteLimitUnits : baseUnits(hold.lots, market.baseUnitsPerLot);
  }
  if (available < hold.units) return ResultCode.InsufficientFunds;
  return ResultCode.Ok;
}

/** The asset an order's funds are held in: quote for a bid, base for an ask. */
export function holdAssetOf(s: EngineState, slot: number): number {
  const marketIndex = s.pool.u16[slot << Of.w16 | Of.marketIndex];
  return s.pool.u8[slot << Of.w8 | Of.side] === Side.Bid ? s.catalog.quoteIndexOf[marketIndex] : s.catalog.baseIndexOf[marketIndex];
}

/**
 * What an order's remaining quantity still holds: limit price × remaining × quoteUnitsPerTickLot
 * for a limit bid, the unspent quote limit (quoteLimitUnits − executedQuoteUnits) for a market
 * bid, remaining × baseUnitsPerLot for an ask. Fills, price improvement, cancels and expiries
 * all keep the ledger's locked units equal to the sum of this over open orders.
 */
export function holdUnitsOf(s: EngineState, slot: number): AmountUnits {
  const pool = s.pool;
  const market = s.catalog.markets[pool.u16[slot << Of.w16 | Of.marketIndex]];
  const remaining = pool.remaining(slot);
  if (pool.u8[slot << Of.w8 | Of.side] === Side.Bid && pool.isMarket(slot)) {
    return subUnits(pool.f64[slot << Of.f64 | Of.quoteLimitUnits] as AmountUnits, pool.f64[slot << Of.f64 | Of.executedQuoteUnits] as AmountUnits);
  }
  return pool.u8[slot << Of.w8 | Of.side] === Side.Bid
    ? notionalUnits(pool.price(slot), remaining, market.quoteUnitsPerTickLot)
    : baseUnits(remaining, market.baseUnitsPerLot);
}
