// Activation of an order: post-only and fill-or-kill checks, matching against the opposite side
// in price-time priority at the makers' prices, each fill settled by its market's rules
// (kinds.ts: spot/settle.ts today), and the order's end (filled, expired, or resting as a maker).
//
// The book is product-agnostic: an order's hold (what it may still spend) is its market's rule,
// and every release here gives back exactly what that rule says the order still holds, so the
// ledger's locked units keep matching the open orders. Every loop is bounded by the number of
// open orders.
//
// A market order has no price: every level within its band is marketable. Each fill takes the whole lots its
// lot cap and its quote limit allow at the maker's price (rounded down, so the quote executed
// never passes quoteQty). It ends Filled when its lots are done, or when a quote-quantity order
// cannot buy one more whole lot within its quote quantity (Expired InsufficientLiquidity if it got
// nothing); Expired InsufficientLiquidity when the book runs out, InsufficientFunds when a bid by
// quantity spent the quote it locked; Expired PriceBand when the next level is beyond its band.
// Either way what it still locks is released at the end. The band: in a banded market the sweep
// stops at the band around a reference fixed when the order takes effect (the last trade price,
// the same reference as a limit order's band, or for a market that never traded the best opposite
// price it meets): a
// buy does not fill above reference × maxMultiplierBps / 10000, a sell not below
// reference × minMultiplierBps / 10000, so a thin book cannot fill it at absurd prices.
//
// A quote-quantity market order's last fill event says Filled when the order will end Filled
// (takerFillStatus), so that stream and REST agree on its final status.
//
// Output order for one activation (all stream events, then the addressed response):
//   order Accepted; per fill: trade, maker Fill, taker Fill, the maker's balances (spot: base,
//   quote; perpetual: quote), depth of the maker's level; per self-trade maker cancel: order
//   Cancelled, balance, depth; then order Expired, or depth of the resting remainder; then the
//   taker's balances: once, with the amounts it ended with, after the release of what it still
//   held (spot: base, quote; perpetual: quote), or that release's asset alone if it did not fill;
//   finally the order's state, addressed to its place request, flagged Last.
// With the taker's summary (Output.takerSummary: every command of a journal of format 6) a taker that its last fill ends
// Filled on a spot market, and that has an answer, writes no Fill record of its own: its answer
// carries that fill (event Fill, HeaderFlag.Event), after its balances.
// With the summary off (the commands of a journal before format 6) each fill writes the taker's Fill and its balances after the maker's, and a release writes
// its asset again.
// With events in answers (Output.eventsInAnswers: every command of a journal of format 5 on) an event
// that the order's answer would repeat field for field is not written on its own: the answer
// carries it (HeaderFlag.Event). An order that rests untouched writes its depth, then its answer as
// orderAccepted; an expiring one writes orderAccepted, its balances, then its answer as
// orderExpired. Everything else is as above.

import {
  ExpiryReason,
  FRONT_ID_NONE,
  HeaderFlag,
  OrderEvent,
  OrderFlag,
  OrderStatus,
  SelfTradePrevention,
  Side,
  TimeInForce,
  type MarketSpec,
} from '../../bus/types.js';
import { assert } from '../assert.js';
import { NO_LEVEL, type BookSide } from './book.js';
import { cancelOpenOrder, carried, closeOrder } from './cancel.js';
import { NO_SLOT, OrderState, openStatus, Of } from './orders.js';
import { beyondSweepBand, followTrade } from './reference.js';
import { admitReduceOnly, clipsReduceOnly, expireResting, isReduceOnly } from '../perp/reduce-only.js';
import { rulesOf, rulesOfOrder, type Fill } from '../kinds.js';
import type { EngineState } from '../state.js';
import {
  BPS_PER_UNIT,
  addUnits,
  floorDiv,
  notionalUnits,
  subUnits,
  type AmountUnits,
  type PriceTicks,
  type QtyLots,
} from '../units.js';

/**
 * True when a limit price is outside the market's band around its last trade price:
 * price × 10000 > last × maxMultiplierBps or price × 10000 < last × minMultiplierBps. Every product
 * is at most maxPriceTicks × maxMultiplierBps, which the catalog proved is a safe integer.
 * Market orders have no price: their sweep is bounded instead (reference.ts beyondSweepBand).
 */
export function isOutsideBand(market: MarketSpec, referenceTicks: number, priceTicks: number): boolean {
  if (market.maxMultiplierBps === undefined || market.minMultiplierBps === undefined || referenceTicks === 0) return false;
  const scaled = priceTicks * BPS_PER_UNIT;
  return scaled > referenceTicks * market.maxMultiplierBps || scaled < referenceTicks * market.minMultiplierBps;
}

/** True when a level at `levelPriceTicks` on the opposite side is marketable for the taker. */
function crosses(takerSide: Side, limitTicks: number, levelPriceTicks: number): boolean {
  return takerSide === Side.Bid ? levelPriceTicks <= limitTicks : levelPriceTicks >= limitTicks;
}

function oppositeSide(s: EngineState, taker: number): BookSide {
  const book = s.books[s.pool.u16[taker << Of.w16 | Of.marketIndex]];
  return book.sideOf(s.pool.u8[taker << Of.w8 | Of.side] === Side.Bid ? Side.Ask : Side.Bid);
}

/** Runs an order that has just become active (at placement, or when its speed bump ends). */
export function activateOrder(s: EngineState, taker: number): void {
  const pool = s.pool;
  assert(pool.u8[taker << Of.w8 | Of.state] === OrderState.Active && pool.f64[taker << Of.f64 | Of.executedLots] === 0, 'activating an order that is not fresh');
  const reduceOnly = isReduceOnly(s, taker);
  // With events in answers, orderAccepted waits until it is known whether the order rests untouched
  // (then its answer carries it); nothing is written before that moment, so its place is the same.
  // A reduce-only order clipped to its position rests changed, and a system order (addressed to no
  // one) has no answer: their orderAccepted is written first.
  let acceptedInAnswer = s.out.eventsInAnswers && pool.u16[taker << Of.w16 | Of.frontId] !== FRONT_ID_NONE && !(reduceOnly && clipsReduceOnly(s, taker));
  if (!acceptedInAnswer) writeAccepted(s, taker);
  const marketIndex = pool.u16[taker << Of.w16 | Of.marketIndex];
  // A reduce-only perpetual order meets the position as it stands now (perp/reduce-only.ts).
  let reason: ExpiryReason = reduceOnly ? admitReduceOnly(s, taker) : ExpiryReason.None;
  s.sweepReferenceTicks = pool.isMarket(taker) ? sweepReference(s, taker) : 0;
  // A delayed limit order meets the band of the last price when it takes effect (place.ts header).
  if (reason !== ExpiryReason.None) {
    // expires below, without trading
  } else if (!pool.isMarket(taker) && isOutsideBand(s.catalog.markets[marketIndex], s.books[marketIndex].bandReferenceTicks, pool.f64[taker << Of.f64 | Of.priceTicks])) {
    reason = ExpiryReason.PriceBand;
  } else if ((pool.u8[taker << Of.w8 | Of.flags] & OrderFlag.PostOnly) !== 0 && wouldTake(s, taker)) {
    reason = ExpiryReason.PostOnlyTaker;
  } else if (pool.u8[taker << Of.w8 | Of.timeInForce] === TimeInForce.FOK && !canFillCompletely(s, taker)) {
    reason = ExpiryReason.FillOrKill;
  } else {
    // A good-till-cancel limit order that meets no marketable level rests untouched; any other may trade or expire.
    if (acceptedInAnswer && (pool.isMarket(taker) || pool.u8[taker << Of.w8 | Of.timeInForce] !== TimeInForce.GTC || wouldTake(s, taker))) {
      acceptedInAnswer = false;
      writeAccepted(s, taker);
    }
    reason = matchTaker(s, taker);
    rulesOf(s.catalog.kindOf[marketIndex]).afterMatch(s, marketIndex);
    return finishTaker(s, taker, reason, acceptedInAnswer);
  }
  if (acceptedInAnswer) writeAccepted(s, taker);
  finishTaker(s, taker, reason, false);
}

/** The order's orderAccepted as a record of its own. */
function writeAccepted(s: EngineState, taker: number): void {
  s.out.order(taker, OrderEvent.Accepted, OrderStatus.New, ExpiryReason.None, FRONT_ID_NONE, 0, 0);
}

/**
 * The reference whose band bounds a market order's sweep, fixed when it takes effect: the last
 * trade price (as for limit orders: the band follows the market as it trades), or for a market
 * that never traded the best opposite price it meets. 0 (unbounded) for an unbanded market, and for an empty opposite side (nothing to fill).
 */
function sweepReference(s: EngineState, taker: number): number {
  return sweepReferenceOf(s, s.pool.u16[taker << Of.w16 | Of.marketIndex], s.pool.u8[taker << Of.w8 | Of.side] as Side);
}

/** sweepReference of a market order on `takerSide` in market `marketIndex` if it took effect now. */
export function sweepReferenceOf(s: EngineState, marketIndex: number, takerSide: Side): number {
  if (s.catalog.markets[marketIndex].maxMultiplierBps === undefined) return 0;
  const book = s.books[marketIndex];
  if (book.bandReferenceTicks > 0) return book.bandReferenceTicks;
  const opposite = book.sideOf(takerSide === Side.Bid ? Side.Ask : Side.Bid);
  const best = opposite.best();
  return best === NO_LEVEL ? 0 : opposite.levelPrice[best];
}

/** True when the level is beyond the band of the market order being matched. */
function beyondBand(s: EngineState, taker: number, levelPriceTicks: number): boolean {
  const market = s.catalog.markets[s.pool.u16[taker << Of.w16 | Of.marketIndex]];
  return beyondSweepBand(market, s.sweepReferenceTicks, s.pool.u8[taker << Of.w8 | Of.side] as Side, levelPriceTicks);
}

/** True when the best opposite level is marketable. */
function wouldTake(s: EngineState, taker: number): boolean {
  const opposite = oppositeSide(s, taker);
  const best = opposite.best();
  return best !== NO_LEVEL && crosses(s.pool.u8[taker << Of.w8 | Of.side] as Side, s.pool.f64[taker << Of.f64 | Of.priceTicks], opposite.levelPrice[best]);
}

/**
 * Whether the whole quantity could fill, walking the book exactly as matchTaker would: own
 * orders are skipped under RejectMaker (they would be cancelled) and end the walk otherwise (the
 * taker would expire there); a fill the market's rules would refuse ends it too.
 */
function canFillCompletely(s: EngineState, taker: number): boolean {
  const pool = s.pool;
  const opposite = oppositeSide(s, taker);
  const side = pool.u8[taker << Of.w8 | Of.side] as Side;
  const skipOwn = pool.u8[taker << Of.w8 | Of.selfTradePrevention] === SelfTradePrevention.RejectMaker;
  let needLots = pool.f64[taker << Of.f64 | Of.remainingLots];
  const rules = rulesOfOrder(s, taker);
  rules.walkStart(s, pool.u16[taker << Of.w16 | Of.marketIndex]);
  for (let level = opposite.best(); level !== NO_LEVEL; level = opposite.worse(level)) {
    if (!crosses(side, pool.f64[taker << Of.f64 | Of.priceTicks], opposite.levelPrice[level])) return false;
    for (let maker = opposite.levelHead[level]; maker !== NO_SLOT; maker = pool.i32[maker << Of.w32 | Of.next]) {
      if (pool.u32[maker << Of.w32 | Of.accountId] === pool.u32[taker << Of.w32 | Of.accountId]) {
        if (skipOwn) continue;
        return false;
      }
      const lots = rules.walkFill(s, taker, maker, Math.min(needLots, pool.f64[maker << Of.f64 | Of.remainingLots]));
      if (lots < 0) return false;
      needLots -= lots;
      if (needLots <= 0) return true;
    }
  }
  return false;
}

/**
 * Matches until the taker is filled or the book stops crossing; returns why it stopped early
 * (None also for a quote-quantity market order that cannot afford another whole lot).
 */
function matchTaker(s: EngineState, taker: number): ExpiryReason {
  const pool = s.pool;
  const opposite = oppositeSide(s, taker);
  const side = pool.u8[taker << Of.w8 | Of.side] as Side;
  const isMarket = pool.isMarket(taker);
  const rules = rulesOfOrder(s, taker);
  for (let steps = 0; pool.f64[taker << Of.f64 | Of.remainingLots] > 0; steps++) {
    assert(steps <= pool.capacity, 'matching loop ran past the number of orders');
    const level = opposite.best();
    if (level === NO_LEVEL) return isMarket ? ExpiryReason.InsufficientLiquidity : ExpiryReason.None;
    if (!isMarket && !crosses(side, pool.f64[taker << Of.f64 | Of.priceTicks], opposite.levelPrice[level])) break;
    if (isMarket && beyondBand(s, taker, opposite.levelPrice[level])) return ExpiryReason.PriceBand;
    const maker = opposite.levelHead[level];
    if (pool.u32[maker << Of.w32 | Of.accountId] !== pool.u32[taker << Of.w32 | Of.accountId]) {
      if (rules.makerLots(s, maker) === 0) {
        expireResting(s, maker);
        continue;
      }
      const qtyLots = fillLots(s, taker, maker);
      if (qtyLots === 0) return pool.f64[taker << Of.f64 | Of.quoteQtyUnits] > 0 ? ExpiryReason.None : ExpiryReason.InsufficientFunds;
      const refusal = fillRefusalOf(s, taker, maker, qtyLots);
      if (refusal !== ExpiryReason.None) return refusal;
      fill(s, taker, maker, qtyLots);
      continue;
    }
    const mode = pool.u8[taker << Of.w8 | Of.selfTradePrevention];
    if (mode === SelfTradePrevention.RejectTaker) return ExpiryReason.SelfTradePrevention;
    cancelOpenOrder(s, maker, ExpiryReason.SelfTradePrevention);
    closeOrder(s, maker);
    if (mode === SelfTradePrevention.RejectBoth) return ExpiryReason.SelfTradePrevention;
  }
  return ExpiryReason.None;
}

/** Whether the market's rules refuse this fill at the maker's price (a perpetual's open interest and position limits, perp/open-interest.ts). */
function fillRefusalOf(s: EngineState, taker: number, maker: number, qtyLots: number): ExpiryReason {
  const pool = s.pool;
  const takerBuys = pool.u8[taker << Of.w8 | Of.side] === Side.Bid;
  const buyer = pool.u32[(takerBuys ? taker : maker) << Of.w32 | Of.accountId];
  const seller = pool.u32[(takerBuys ? maker : taker) << Of.w32 | Of.accountId];
  return rulesOfOrder(s, taker).fillRefusal(s, pool.u16[taker << Of.w16 | Of.marketIndex], buyer, seller, qtyLots, pool.price(maker));
}

/**
 * Lots the taker can take from the maker: both remainders bound it, and for a market order also
 * its unspent quote limit at the maker's price, in whole lots rounded down.
 */
function fillLots(s: EngineState, taker: number, maker: number): QtyLots {
  const pool = s.pool;
  const lots = Math.min(pool.f64[taker << Of.f64 | Of.remainingLots], rulesOfOrder(s, maker).makerLots(s, maker));
  if (!pool.isMarket(taker)) return lots as QtyLots;
  const market = s.catalog.markets[pool.u16[taker << Of.w16 | Of.marketIndex]];
  const lotQuoteUnits = notionalUnits(pool.price(maker), 1 as QtyLots, market.quoteUnitsPerTickLot);
  const quoteLeftUnits = subUnits(pool.f64[taker << Of.f64 | Of.quoteLimitUnits] as AmountUnits, pool.f64[taker << Of.f64 | Of.executedQuoteUnits] as AmountUnits);
  return Math.min(lots, floorDiv(quoteLeftUnits, lotQuoteUnits)) as QtyLots;
}

/** The fill being settled (one at a time: the engine core runs on one thread). */
const FILL: Fill = {
  marketIndex: 0, taker: NO_SLOT, maker: NO_SLOT, buyer: NO_SLOT, seller: NO_SLOT,
  priceTicks: 0 as PriceTicks, qtyLots: 0 as QtyLots, quoteUnits: 0 as AmountUnits,
  buyerFeeUnits: 0 as AmountUnits, sellerFeeUnits: 0 as AmountUnits,
};

/**
 * One fill of `qtyLots` between the taker and the maker at the head of the best level, at the
 * maker's price; its market's rules settle it (kinds.ts).
 */
function fill(s: EngineState, taker: number, maker: number, qtyLots: QtyLots): void {
  const pool = s.pool;
  const mF = maker << Of.f64;
  const mW = maker << Of.w32;
  const mB = maker << Of.w8;
  const tF = taker << Of.f64;
  const tH = taker << Of.w16;
  const tB = taker << Of.w8;
  const marketIndex = pool.u16[tH | Of.marketIndex];
  const book = s.books[marketIndex];
  const market = s.catalog.markets[marketIndex];
  const rules = rulesOf(s.catalog.kindOf[marketIndex]);
  const priceTicks = pool.price(maker);
  assert(qtyLots > 0 && pool.u8[mB | Of.state] === OrderState.Resting, 'fill against an empty or non-resting maker');
  assert(qtyLots <= pool.f64[tF | Of.remainingLots] && qtyLots <= pool.f64[mF | Of.remainingLots], 'fill larger than an order');
  const f = FILL;
  f.marketIndex = marketIndex;
  f.taker = taker;
  f.maker = maker;
  f.buyer = pool.u8[tB | Of.side] === Side.Bid ? taker : maker;
  f.seller = f.buyer === taker ? maker : taker;
  f.priceTicks = priceTicks;
  f.qtyLots = qtyLots;
  f.quoteUnits = notionalUnits(priceTicks, qtyLots, market.quoteUnitsPerTickLot);
  rules.settle(s, f);
  const buyerAccount = pool.u32[f.buyer << Of.w32 | Of.accountId];
  const sellerAccount = pool.u32[f.seller << Of.w32 | Of.accountId];

  book.reduce(maker, qtyLots);
  pool.f64[tF | Of.remainingLots] -= qtyLots;
  addExecution(s, maker, qtyLots, f.quoteUnits);
  addExecution(s, taker, qtyLots, f.quoteUnits);
  const tradeId = ++book.lastTradeId;
  if (market.maxMultiplierBps !== undefined) {
    book.bandReferenceTicks = priceTicks;
    followTrade(book, priceTicks, s.lastTimeUs, s.catalog.referenceStepBps, s.catalog.referenceIntervalUs);
  }
  s.out.trade(marketIndex, tradeId, priceTicks, qtyLots, pool.f64[f.buyer << Of.f64 | Of.orderId], pool.f64[f.seller << Of.f64 | Of.orderId], f.buyer === maker);
  s.out.orderFill(maker, fillStatus(s, maker), qtyLots, priceTicks, tradeId, true, maker === f.buyer ? f.buyerFeeUnits : f.sellerFeeUnits);
  takerFill(s, taker, qtyLots, priceTicks, tradeId, taker === f.buyer ? f.buyerFeeUnits : f.sellerFeeUnits);
  rules.reportSettlement(s, f, !s.out.takerSummary);

  const makerSide = pool.u8[mB | Of.side] as Side;
  let levelQty = book.sideOf(makerSide).levelQty[pool.i32[mW | Of.level]];
  if (pool.f64[mF | Of.remainingLots] === 0) {
    levelQty = book.unlink(maker);
    closeOrder(s, maker);
  }
  s.out.depth(marketIndex, makerSide, priceTicks, levelQty, s.touchUpdateId(book), FRONT_ID_NONE, 0);
  rules.afterFill(s, marketIndex, buyerAccount, sellerAccount);
}

/**
 * Whether the taker's fill is written in its answer instead of a record of its own
 * (Output.takerSummary): the fill ends the order Filled with nothing left of its quantity (an
 * order by quote quantity, which may end Filled with lots under its cap, and may still cancel its
 * own makers under RejectMaker on the way, never carries), the order has an answer (it is
 * addressed), and its market is spot, where nothing else about any order is written between this
 * fill and that answer (a perpetual's match ends with its parties' reduce-only orders trimmed).
 */
function carriesLastFill(s: EngineState, taker: number, takerStatus: OrderStatus): boolean {
  const pool = s.pool;
  return s.out.takerSummary && takerStatus === OrderStatus.Filled && pool.f64[taker << Of.f64 | Of.quoteQtyUnits] === 0
    && pool.u16[taker << Of.w16 | Of.frontId] !== FRONT_ID_NONE && s.catalog.isSpot(pool.u16[taker << Of.w16 | Of.marketIndex]);
}

/** The taker's Fill event, or its fill kept for its answer to carry (carriesLastFill). */
function takerFill(s: EngineState, taker: number, qtyLots: number, priceTicks: number, tradeId: number, feeUnits: number): void {
  const status = takerFillStatus(s, taker);
  if (!carriesLastFill(s, taker, status)) return s.out.orderFill(taker, status, qtyLots, priceTicks, tradeId, false, feeUnits);
  // The fill it ends Filled with is a taker's last: one kept before was carried by its answer.
  const kept = s.lastFill;
  assert(kept.taker === NO_SLOT, 'a taker\'s last fill was kept for an answer that did not carry it');
  kept.taker = taker;
  kept.qtyLots = qtyLots;
  kept.priceTicks = priceTicks;
  kept.tradeId = tradeId;
  kept.feeUnits = feeUnits;
}

/** A Filled taker's answer: carrying its last fill when one was kept for it (carriesLastFill), else its state alone. */
function filledAnswer(s: EngineState, taker: number, frontId: number, requestId: number): void {
  const kept = s.lastFill;
  if (kept.taker !== taker) {
    s.out.order(taker, OrderEvent.None, OrderStatus.Filled, ExpiryReason.None, frontId, requestId, HeaderFlag.Last);
    return;
  }
  kept.taker = NO_SLOT;
  s.out.orderFill(taker, OrderStatus.Filled, kept.qtyLots, kept.priceTicks, kept.tradeId, false, kept.feeUnits, frontId, requestId, HeaderFlag.Last);
}

function addExecution(s: EngineState, slot: number, qtyLots: QtyLots, quoteAmount: AmountUnits): void {
  const pool = s.pool;
  pool.f64[slot << Of.f64 | Of.executedLots] += qtyLots;
  pool.f64[slot << Of.f64 | Of.executedQuoteUnits] = addUnits(pool.f64[slot << Of.f64 | Of.executedQuoteUnits] as AmountUnits, quoteAmount);
  assert(pool.f64[slot << Of.f64 | Of.executedLots] <= pool.f64[slot << Of.f64 | Of.qtyLots], 'order executed more than its quantity');
}

function fillStatus(s: EngineState, slot: number): OrderStatus {
  return s.pool.f64[slot << Of.f64 | Of.remainingLots] === 0 ? OrderStatus.Filled : OrderStatus.PartiallyFilled;
}

/**
 * The taker's status in its fill event. A quote-quantity market order that cannot buy one more
 * whole lot at the next maker it would meet ends Filled with lots left under its cap (see
 * finishMarketTaker), so that fill is its last and says Filled too: the stream's last event and
 * the REST answer agree. Found by walking the book exactly as matchTaker's next steps would, after
 * this fill (its maker, if done, still linked with 0 lots, is skipped): own orders are passed
 * under RejectMaker (they would be cancelled) and end the order otherwise (it would expire);
 * an empty book also ends it Expired.
 */
function takerFillStatus(s: EngineState, taker: number): OrderStatus {
  const pool = s.pool;
  if (pool.f64[taker << Of.f64 | Of.remainingLots] === 0) return OrderStatus.Filled;
  if (!pool.isMarket(taker) || pool.f64[taker << Of.f64 | Of.quoteQtyUnits] === 0) return OrderStatus.PartiallyFilled;
  const opposite = oppositeSide(s, taker);
  const skipOwn = pool.u8[taker << Of.w8 | Of.selfTradePrevention] === SelfTradePrevention.RejectMaker;
  for (let level = opposite.best(); level !== NO_LEVEL; level = opposite.worse(level)) {
    // The sweep stops at its band (matchTaker): the order will end Expired, so this fill is not its last.
    if (beyondBand(s, taker, opposite.levelPrice[level])) return OrderStatus.PartiallyFilled;
    for (let maker = opposite.levelHead[level]; maker !== NO_SLOT; maker = pool.i32[maker << Of.w32 | Of.next]) {
      if (pool.u32[maker << Of.w32 | Of.accountId] !== pool.u32[taker << Of.w32 | Of.accountId] && rulesOfOrder(s, maker).makerLots(s, maker) === 0) continue;
      if (pool.u32[maker << Of.w32 | Of.accountId] === pool.u32[taker << Of.w32 | Of.accountId]) {
        if (skipOwn) continue;
        return OrderStatus.PartiallyFilled;
      }
      return fillLots(s, taker, maker) === 0 ? OrderStatus.Filled : OrderStatus.PartiallyFilled;
    }
  }
  return OrderStatus.PartiallyFilled;
}

/**
 * Ends the taker's activation: filled, expired (with its lock released) or resting. With
 * `acceptedInAnswer` the order rests untouched and its answer carries its orderAccepted.
 */
function finishTaker(s: EngineState, taker: number, stopReason: ExpiryReason, acceptedInAnswer: boolean): void {
  const pool = s.pool;
  const tF = taker << Of.f64;
  const tW = taker << Of.w32;
  const tH = taker << Of.w16;
  const tB = taker << Of.w8;
  const book = s.books[pool.u16[tH | Of.marketIndex]];
  const frontId = pool.u16[tH | Of.frontId];
  const requestId = pool.u32[tW | Of.requestId];
  assert(!acceptedInAnswer || (stopReason === ExpiryReason.None && pool.f64[tF | Of.executedLots] === 0 && pool.u8[tB | Of.timeInForce] === TimeInForce.GTC), 'an order expected to rest untouched ended otherwise');
  if (pool.isMarket(taker)) return finishMarketTaker(s, taker, stopReason);
  if (pool.f64[tF | Of.remainingLots] === 0) {
    takerBalances(s, taker);
    filledAnswer(s, taker, frontId, requestId);
    closeOrder(s, taker);
    return;
  }
  let reason = stopReason;
  if (reason === ExpiryReason.None && pool.u8[tB | Of.timeInForce] !== TimeInForce.GTC) {
    assert(pool.u8[tB | Of.timeInForce] === TimeInForce.IOC, 'a fill-or-kill order passed its check but did not fill');
    reason = ExpiryReason.ImmediateOrCancel;
  }
  if (reason !== ExpiryReason.None) return expireTaker(s, taker, reason);
  book.rest(taker);
  const side = pool.u8[tB | Of.side] as Side;
  const levelQty = book.sideOf(side).levelQty[pool.i32[tW | Of.level]];
  s.out.depth(pool.u16[tH | Of.marketIndex], side, pool.f64[tF | Of.priceTicks], levelQty, s.touchUpdateId(book), FRONT_ID_NONE, 0);
  takerBalances(s, taker);
  s.out.order(taker, carried(acceptedInAnswer, OrderEvent.Accepted), openStatus(pool, taker), ExpiryReason.None, frontId, requestId, HeaderFlag.Last);
}

/**
 * The taker's balance records, written once when its match ends (output.ts takerSummary):
 * every asset its fills moved, with the amounts it ended with, just before its final record and
 * after the release of what it still held. True when it wrote them (it filled at least once).
 */
function takerBalances(s: EngineState, taker: number): boolean {
  const pool = s.pool;
  if (pool.f64[taker << Of.f64 | Of.executedLots] === 0 || !s.out.takerSummary) return false;
  const marketIndex = pool.u16[taker << Of.w16 | Of.marketIndex];
  rulesOf(s.catalog.kindOf[marketIndex]).reportBalances(s, marketIndex, pool.u32[taker << Of.w32 | Of.accountId]);
  return true;
}

/** After the release of a taker's remaining hold: its balances (takerBalances), or the hold asset's alone when it did not fill. */
function releasedBalances(s: EngineState, taker: number, accountId: number, holdAssetIndex: number): void {
  if (!takerBalances(s, taker)) s.out.balance(accountId, holdAssetIndex, FRONT_ID_NONE, 0);
}

/** Expires the taker's remainder: releases its lock, emits orderExpired, its balances and the response. */
function expireTaker(s: EngineState, taker: number, reason: ExpiryReason): void {
  const pool = s.pool;
  const accountId = pool.u32[taker << Of.w32 | Of.accountId];
  const rules = rulesOfOrder(s, taker);
  const assetIndex = rules.holdAssetOf(s, taker);
  s.ledger.unlock(accountId, assetIndex, rules.holdUnitsOf(s, taker));
  // A system order (addressed to no one) has no answer to carry its event.
  const inAnswer = s.out.eventsInAnswers && pool.u16[taker << Of.w16 | Of.frontId] !== FRONT_ID_NONE;
  if (!inAnswer) s.out.order(taker, OrderEvent.Expired, OrderStatus.Expired, reason, FRONT_ID_NONE, 0, 0);
  releasedBalances(s, taker, accountId, assetIndex);
  s.out.order(taker, carried(inAnswer, OrderEvent.Expired), OrderStatus.Expired, reason, pool.u16[taker << Of.w16 | Of.frontId], pool.u32[taker << Of.w32 | Of.requestId], HeaderFlag.Last);
  closeOrder(s, taker);
}

/**
 * Ends a market order, which never rests: Filled when its lots are done or (stopReason None) its
 * quote quantity cannot buy another whole lot after some fills, with the unspent lock released;
 * otherwise Expired with the reason it stopped.
 */
function finishMarketTaker(s: EngineState, taker: number, stopReason: ExpiryReason): void {
  const pool = s.pool;
  const done = pool.f64[taker << Of.f64 | Of.remainingLots] === 0 || (stopReason === ExpiryReason.None && pool.f64[taker << Of.f64 | Of.executedLots] > 0);
  if (!done) return expireTaker(s, taker, stopReason === ExpiryReason.None ? ExpiryReason.InsufficientLiquidity : stopReason);
  const accountId = pool.u32[taker << Of.w32 | Of.accountId];
  const rules = rulesOfOrder(s, taker);
  const assetIndex = rules.holdAssetOf(s, taker);
  s.ledger.unlock(accountId, assetIndex, rules.holdUnitsOf(s, taker));
  releasedBalances(s, taker, accountId, assetIndex);
  filledAnswer(s, taker, pool.u16[taker << Of.w16 | Of.frontId], pool.u32[taker << Of.w32 | Of.requestId]);
  closeOrder(s, taker);
}
