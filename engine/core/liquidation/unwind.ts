// Stage (b) of the waterfall (waterfall.ts): unwinding on the public book (venue mechanics §4.1).
//
// What to close. Among the account's borrows and perpetual positions, the one with the largest
// N·MMF (a borrow's N its liability at mark, a position's |size| at its perpetual's mark; ties:
// borrows before positions, then the lower asset index or market index), as valuation.ts values
// them; a product without a mark is passed. When the borrow chosen has nothing to sell for it
// while the account still holds a position, the largest position is closed instead (so the
// bankruptcy of a borrow waits until no position is left).
//
// A position (perp-unwind.ts): a reduce-only market IOC order of the account on the side that
// shrinks it, of chunkBps of its size in whole lots (rounded up, at least the market's minimum,
// at most its maximum and the size). Fills pay the account's taker fee and the liquidation fee
// (fee.ts) into the insurance fund.
//
// How, on the default markets, where every asset trades against USDC (the valuation asset):
//   borrowed USDC    sell collateral for USDC (the repayment follows in waterfall.ts);
//   borrowed Y       buy Y with the account's USDC, selling collateral for USDC first when the
//                    USDC it holds would not pay for the chunk.
// The chunk is chunkBps of the borrow (rounded up to whole lots of Y's USDC market, at least its
// minimum, at most its maximum). The collateral sold is the asset the account holds (not a
// borrowed one) with the largest notional at mark that has a USDC market and at least that
// market's minimum quantity available; it sells the lots worth the USDC missing at mark plus
// SLACK_BPS (the book may pay less than mark, and the fee comes off), within what it holds.
//
// The orders: market IOC orders of the account, by quantity, flagged OrderFlag.Liquidation
// (SystemOrderType LiquidatePositionOnBook, origin LIQUIDATION_AUTOCLOSE, fills BookLiquidation
// on the wire), placed without the speed bump and matched at once against the book; a market
// order's sweep band applies (book/matching.ts), the rest expires. A bid holds the smaller of the
// USDC available and the worst case of the lots at the market's maximum price, as a client's
// market bid by quantity does (spot/hold.ts). Fees: the account's taker rate, plus the
// liquidation fee (spot/settle.ts) into the insurance fund.
//
// Outcomes: Placed (some order went to the book, filled or not; for a position: it filled some
// lots); Unfilled (a position's order filled nothing: no liquidity within the band; the position
// goes to the backstop providers, backstop.ts, and what they do not take is auto-deleveraged, adl.ts); Blocked (something could be sold or bought but not now: no mark,
// no USDC market, a book that takes no market order or is full: the next step tries again); NothingToSell (nothing the account holds can pay for any part of
// the borrow: the waterfall's bankruptcy stage follows).

import { FRONT_ID_NONE, OrderFlag, OrderType, ResultCode, SelfTradePrevention, Side, TimeInForce } from '../../bus/types.js';
import { assert } from '../assert.js';
import { bookStateRefusal } from '../book/book.js';
import { activateOrder } from '../book/matching.js';
import { notionalCeil, notionalFloor, type UnitPrice } from '../margin/collateral.js';
import { ceilDiv, FRACTION_ONE } from '../margin/fixed.js';
import { positionMmf } from '../margin/fractions.js';
import { markOf } from '../margin/mark.js';
import type { EngineState } from '../state.js';
import { MAX_AMOUNT_UNITS, baseUnits, notionalUnits, type AmountUnits, type PriceTicks, type QtyLots } from '../units.js';
import { closePositionChunk, largestPosition } from './perp-unwind.js';
import { Of } from '../book/orders.js';

/** Room over the mark for what a chunk costs and what collateral it sells (5 %). */
export const SLACK_BPS = 500n;

export const UnwindOutcome = { Placed: 0, Blocked: 1, NothingToSell: 2, Unfilled: 3 } as const;
export type UnwindOutcome = (typeof UnwindOutcome)[keyof typeof UnwindOutcome];

/** One unwind of the account's largest borrow or position (header). */
export function unwindStep(s: EngineState, accountId: number): UnwindOutcome {
  const borrow = largestBorrow(s, accountId);
  const position = largestPosition(s, accountId);
  if (position.marketIndex >= 0 && position.units > borrow.units) return closePositionChunk(s, accountId, position.marketIndex);
  if (borrow.assetIndex < 0) return UnwindOutcome.Blocked;
  const outcome = unwindBorrow(s, accountId, borrow.assetIndex);
  if (outcome === UnwindOutcome.NothingToSell && position.marketIndex >= 0) return closePositionChunk(s, accountId, position.marketIndex);
  return outcome;
}

/** Stage (b) for the borrow of `target` (header). */
function unwindBorrow(s: EngineState, accountId: number, target: number): UnwindOutcome {
  const valuation = s.pools.valuationIndex;
  const borrowed = BigInt(s.pools.borrowed[s.pools.cell(accountId, target)]);
  const chunkUnits = ceilDiv(borrowed * BigInt(s.insurance.config.chunkBps), 10_000n);
  if (target === valuation) return sellCollateral(s, accountId, chunkUnits);
  const market = usdcMarketOf(s, target);
  const mark = markOf(s, target);
  if (market < 0 || mark === null) return UnwindOutcome.Blocked;
  const spec = s.catalog.markets[market];
  const lotUnits = BigInt(spec.baseUnitsPerLot);
  const lots = Math.min(spec.maxQtyLots, Math.max(spec.minQtyLots, Number(ceilDiv(chunkUnits, lotUnits))));
  const costUnits = withSlack(notionalCeil(BigInt(lots) * lotUnits, mark.price));
  const usdc = BigInt(s.ledger.availableUnits(accountId, valuation));
  let sold: UnwindOutcome = UnwindOutcome.NothingToSell;
  if (usdc < costUnits) sold = sellCollateral(s, accountId, costUnits - usdc);
  const minimumUnits = notionalCeil(BigInt(spec.minQtyLots) * lotUnits, mark.price);
  if (BigInt(s.ledger.availableUnits(accountId, valuation)) < minimumUnits) return sold;
  if (!bookTakes(s, market)) return UnwindOutcome.Blocked;
  placeSystemOrder(s, accountId, market, Side.Bid, lots);
  return UnwindOutcome.Placed;
}

/** The asset of the account's borrow with the largest N·MMF and that N·MMF (asset -1, units -1 when no borrow has a mark). */
function largestBorrow(s: EngineState, accountId: number): { assetIndex: number; units: bigint } {
  const pools = s.pools;
  const quoteDecimals = pools.decimalsOf[pools.valuationIndex];
  let best = -1;
  let bestUnits = -1n;
  for (let assetIndex = 0; assetIndex < pools.assetCount; assetIndex++) {
    const borrowed = pools.borrowed[pools.cell(accountId, assetIndex)];
    const mark = borrowed > 0 ? markOf(s, assetIndex) : null;
    const collateral = pools.collateralOf[assetIndex];
    if (mark === null || collateral === undefined) continue;
    const notional = notionalCeil(BigInt(borrowed), mark.price);
    const units = ceilDiv(notional * positionMmf(collateral.mmf, notional, quoteDecimals), FRACTION_ONE);
    if (units > bestUnits) {
      best = assetIndex;
      bestUnits = units;
    }
  }
  return { assetIndex: best, units: bestUnits };
}

/**
 * Sells collateral worth `quoteUnits` of USDC at mark (plus the slack) for USDC (header): Placed,
 * Blocked when the best collateral's book takes no order now, NothingToSell when no asset qualifies.
 */
function sellCollateral(s: EngineState, accountId: number, quoteUnits: bigint): UnwindOutcome {
  const choice = collateralToSell(s, accountId);
  if (choice === null) return UnwindOutcome.NothingToSell;
  const spec = s.catalog.markets[choice.market];
  const lotValue = notionalFloor(BigInt(spec.baseUnitsPerLot), choice.price);
  const wanted = lotValue === 0n ? BigInt(spec.minQtyLots) : ceilDiv(withSlack(quoteUnits), lotValue);
  const held = Math.floor(s.ledger.availableUnits(accountId, s.catalog.baseIndexOf[choice.market]) / spec.baseUnitsPerLot);
  const lots = Math.min(spec.maxQtyLots, held, Math.max(spec.minQtyLots, Number(wanted > BigInt(held) ? BigInt(held) : wanted)));
  if (!bookTakes(s, choice.market)) return UnwindOutcome.Blocked;
  placeSystemOrder(s, accountId, choice.market, Side.Ask, lots);
  return UnwindOutcome.Placed;
}

/** The collateral the header's rule sells: the largest notional at mark among the qualifying holdings, or null. */
function collateralToSell(s: EngineState, accountId: number): { market: number; price: UnitPrice } | null {
  const pools = s.pools;
  let best: { market: number; price: UnitPrice } | null = null;
  let bestNotional = -1n;
  for (let assetIndex = 0; assetIndex < pools.assetCount; assetIndex++) {
    if (assetIndex === pools.valuationIndex || pools.borrowed[pools.cell(accountId, assetIndex)] > 0) continue;
    const market = usdcMarketOf(s, assetIndex);
    if (market < 0) continue;
    const available = s.ledger.availableUnits(accountId, assetIndex);
    const spec = s.catalog.markets[market];
    if (available < spec.minQtyLots * spec.baseUnitsPerLot) continue;
    const mark = markOf(s, assetIndex);
    if (mark === null) continue;
    const notional = notionalFloor(BigInt(available), mark.price);
    if (notional > bestNotional) {
      best = { market, price: mark.price };
      bestNotional = notional;
    }
  }
  return best;
}

function withSlack(units: bigint): bigint {
  return ceilDiv(units * (10_000n + SLACK_BPS), 10_000n);
}

/** The first market whose base is the asset and whose quote is the valuation asset, or -1. */
export function usdcMarketOf(s: EngineState, assetIndex: number): number {
  for (let m = 0; m < s.catalog.marketCount; m++) {
    if (s.catalog.baseIndexOf[m] === assetIndex && s.catalog.quoteIndexOf[m] === s.pools.valuationIndex) return m;
  }
  return -1;
}

/** Whether the market takes a market order now: its state, and room in its book. */
export function bookTakes(s: EngineState, marketIndex: number): boolean {
  const book = s.books[marketIndex];
  if (bookStateRefusal(book.orderBookState, true, false) !== ResultCode.Ok) return false;
  return book.restingCount + book.pendingCount < s.limits.maxOrdersPerBook;
}

/**
 * Places the account's system IOC market order of `lots` on `side` and matches it at once
 * (header): it holds what a client's market order by quantity holds (a perpetual's: nothing, no
 * quote limit, and it is reduce-only), and is never speed-bumped.
 */
export function placeSystemOrder(s: EngineState, accountId: number, marketIndex: number, side: Side, lots: number): void {
  const spec = s.catalog.markets[marketIndex];
  const spot = s.catalog.isSpot(marketIndex);
  const bid = side === Side.Bid;
  const holdIndex = bid || !spot ? s.catalog.quoteIndexOf[marketIndex] : s.catalog.baseIndexOf[marketIndex];
  const worstUnits = notionalUnits(spec.maxPriceTicks as PriceTicks, lots as QtyLots, spec.quoteUnitsPerTickLot);
  const quoteLimitUnits = bid && spot ? Math.min(s.ledger.availableUnits(accountId, holdIndex), worstUnits) : MAX_AMOUNT_UNITS;
  const holdUnits = (!spot ? 0 : bid ? quoteLimitUnits : baseUnits(lots as QtyLots, spec.baseUnitsPerLot)) as AmountUnits;
  assert(lots > 0 && s.ledger.availableUnits(accountId, holdIndex) >= holdUnits, 'a liquidation order holds more than the account has');
  const flags = spot ? OrderFlag.Liquidation : OrderFlag.Liquidation | OrderFlag.ReduceOnly;
  const slot = openSystemSlot(s, accountId, marketIndex, side, lots, flags, quoteLimitUnits);
  if (spot) {
    s.ledger.lock(accountId, holdIndex, holdUnits);
    s.out.balance(accountId, holdIndex, FRONT_ID_NONE, 0);
  }
  activateOrder(s, slot);
}

/** A system market IOC order of `lots` in a fresh slot, indexed, not yet active or recorded. */
export function openSystemSlot(s: EngineState, accountId: number, marketIndex: number, side: Side, lots: number, flags: number, quoteLimitUnits: number): number {
  const pool = s.pool;
  const slot = pool.open(accountId);
  pool.f64[slot << Of.f64 | Of.orderId] = s.nextOrderId();
  pool.f64[slot << Of.f64 | Of.priceTicks] = 0;
  pool.f64[slot << Of.f64 | Of.qtyLots] = lots;
  pool.f64[slot << Of.f64 | Of.remainingLots] = lots;
  pool.u8[slot << Of.w8 | Of.orderType] = OrderType.Market;
  pool.f64[slot << Of.f64 | Of.quoteLimitUnits] = quoteLimitUnits;
  pool.f64[slot << Of.f64 | Of.createdAtUs] = s.lastTimeUs;
  pool.u32[slot << Of.w32 | Of.clientId] = 0;
  pool.u32[slot << Of.w32 | Of.requestId] = 0;
  pool.u16[slot << Of.w16 | Of.frontId] = FRONT_ID_NONE;
  pool.u16[slot << Of.w16 | Of.marketIndex] = marketIndex;
  pool.u8[slot << Of.w8 | Of.side] = side;
  pool.u8[slot << Of.w8 | Of.timeInForce] = TimeInForce.IOC;
  pool.u8[slot << Of.w8 | Of.selfTradePrevention] = SelfTradePrevention.RejectTaker;
  pool.u8[slot << Of.w8 | Of.flags] = flags;
  s.index.insert(pool.f64[slot << Of.f64 | Of.orderId], slot);
  return slot;
}
