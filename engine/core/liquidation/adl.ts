// Stage (c) of the waterfall for perpetual positions (waterfall.ts, venue mechanics §4.3, §4.5):
// bankruptcy, the insurance fund, then auto-deleveraging (ADL).
//
// When. A step finds the account holding a position with netEquity ≤ 0 (every position is
// deleveraged, in market order), or the backstop providers did not take all of a position
// (backstop.ts: below the Auto-Close MF, or the book could not close it; with no provider set, a
// position whose book order filled nothing within the band, perp-unwind.ts Unfilled, comes here
// directly); then what is left of that position is deleveraged.
//
// The fund first. With the account's net equity E at mark (margin/valuation.ts) below 0, the
// insurance fund of the perpetual's quote asset (USDC) pays min(−E, what it holds) into the
// account's available USDC (its covered line counts it); E grows by that.
//
// Bankruptcy price. The position of L lots closes at the tick price t where the account's equity
// after the close is max(E, 0), rounded in the account's favour (so no deficit the fund left is
// made larger by the rounding): a long sells at t = ⌈(|L|·markLot + D) / (|L|·q)⌉, a short buys at
// t = ⌊(|L|·markLot − D) / (|L|·q)⌋, with D = max(−E, 0) the deficit the fund could not cover,
// markLot the mark's value of one lot and q the quote units of one tick × one lot; t is clamped to
// the market's price range (a deficit beyond it stays the account's debt, losers owe winners).
// With E ≥ 0 (a solvent account the book could not serve) t is the mark, rounded the same way.
//
// Counterparties. The holders of the opposite side of the same perpetual (never the account), the
// profitable ones (uPnL > 0 at mark) first, each group by the score (uPnL / |entry notional|) ×
// leverage, highest first, leverage = TEN / netEquity of the holder (netEquity taken as at least
// one unit), ties by ascending account id; entry notional = |C|, the position's cost. Each
// in turn closes min(what is left, its size) against the account at t.
//
// The fills. One system order of the account for the whole position and one of each counterparty,
// flagged OrderFlag.Liquidation | Adl (SystemOrderType LiquidatePositionOnAdl, origin
// ADL_AUTOCLOSE, fills Adl), limit IOC at t, never on the book: Accepted, then per fill a Trade
// record (the market's next trade id; the band reference and the last price do not move) and both
// orders' fill events, fee-free (no trading fee, no liquidation fee), settled as any perpetual fill
// (perp/settle.ts: realized PnL through the settlement line, so Σ positions stays 0 and USDC is
// conserved exactly); each order then ends Filled. A counterparty's resting reduce-only orders are
// brought within its position and its liquidating state is re-checked, in the order they closed.

import { ExpiryReason, FRONT_ID_NONE, HeaderFlag, OrderEvent, OrderFlag, OrderStatus, OrderType, Side } from '../../bus/types.js';
import { assert } from '../assert.js';
import { closeOrder } from '../book/cancel.js';
import type { Fill } from '../kinds.js';
import type { UnitPrice } from '../margin/collateral.js';
import { ceilDiv, floorDiv } from '../margin/fixed.js';
import { reviewLiquidating } from '../margin/liquidating.js';
import { marginSummary } from '../margin/valuation.js';
import { perpMarkOf } from '../perp/mark.js';
import { trimReduceOnly } from '../perp/reduce-only.js';
import { reportPerpSettlement, settlePerp } from '../perp/settle.js';
import type { EngineState } from '../state.js';
import { MAX_AMOUNT_UNITS, notionalUnits, type AmountUnits, type PriceTicks, type QtyLots } from '../units.js';
import { openSystemSlot } from './unwind.js';
import { Of } from '../book/orders.js';

const ADL_FLAGS = OrderFlag.Liquidation | OrderFlag.Adl;

/** Whether the account holds a position and its priced net equity is at most 0 (header: every position is deleveraged). */
export function positionsBankrupt(s: EngineState, accountId: number): boolean {
  if (s.positions.positionCountOf[accountId] === 0) return false;
  const summary = marginSummary(s, accountId);
  return !summary.unpriced && summary.netEquityUnits <= 0n;
}

/** Every position of the account, in market order (header). */
export function deleverageAll(s: EngineState, accountId: number): void {
  const p = s.positions;
  for (let ordinal = 0; ordinal < p.perpCount; ordinal++) {
    const marketIndex = p.marketOf[ordinal];
    if (p.lots[p.cell(accountId, marketIndex)] !== 0) deleveragePosition(s, accountId, marketIndex);
  }
}

/** The fund, then ADL of the account's position in `marketIndex` at its bankruptcy price (header). */
export function deleveragePosition(s: EngineState, accountId: number, marketIndex: number): void {
  const mark = perpMarkOf(s, marketIndex);
  const summary = marginSummary(s, accountId);
  if (mark === null || summary.unpriced) return;
  const quoteIndex = s.catalog.quoteIndexOf[marketIndex];
  const equity = summary.netEquityUnits + coverDeficit(s, accountId, quoteIndex, summary.netEquityUnits);
  const lots = s.positions.lots[s.positions.cell(accountId, marketIndex)];
  const ticks = bankruptcyTicks(s, marketIndex, lots, mark.price, equity);
  const ranked = rankCounterparties(s, accountId, marketIndex, lots > 0 ? -1 : 1);
  const closed = closeAgainst(s, accountId, marketIndex, ticks, ranked);
  for (const counterparty of closed) trimReduceOnly(s, counterparty, marketIndex);
  for (const counterparty of closed) reviewLiquidating(s, counterparty);
}

/** The fund pays what it can of a negative equity into the account's USDC; returns the units paid. */
function coverDeficit(s: EngineState, accountId: number, quoteIndex: number, equity: bigint): bigint {
  if (equity >= 0n) return 0n;
  const held = BigInt(s.insurance.fundUnits[quoteIndex]);
  const units = Number(-equity < held ? -equity : held);
  if (units === 0) return 0n;
  s.insurance.cover(quoteIndex, units);
  s.ledger.fromFund(accountId, quoteIndex, units as AmountUnits);
  s.out.balance(accountId, quoteIndex, FRONT_ID_NONE, 0);
  s.out.insurance(quoteIndex, s.insurance, FRONT_ID_NONE, 0);
  return BigInt(units);
}

/** The bankruptcy price in ticks of a position of `lots` (signed) at `equity` after the fund (header). */
export function bankruptcyTicks(s: EngineState, marketIndex: number, lots: number, price: UnitPrice, equity: bigint): number {
  const spec = s.catalog.markets[marketIndex];
  const size = BigInt(Math.abs(lots));
  const deficit = equity < 0n ? -equity : 0n;
  const value = size * price.quoteUnits * BigInt(spec.baseUnitsPerLot);
  const den = size * BigInt(spec.quoteUnitsPerTickLot) * price.baseUnits;
  const ticks = lots > 0 ? ceilDiv(value + deficit * price.baseUnits, den) : floorDiv(value - deficit * price.baseUnits, den);
  const max = BigInt(spec.maxPriceTicks);
  const min = BigInt(spec.minPriceTicks);
  return Number(ticks > max ? max : ticks < min ? min : ticks);
}

interface Ranked {
  accountId: number;
  lots: number;
  profitable: boolean;
  /** The score as num / den, den > 0. */
  num: bigint;
  den: bigint;
}

/** The opposite-side holders (sign of their size), in ADL order (header). */
export function rankCounterparties(s: EngineState, accountId: number, marketIndex: number, sign: number): Ranked[] {
  const p = s.positions;
  const ranked: Ranked[] = [];
  for (const holder of p.holdersOf(marketIndex)) {
    const cell = p.cell(holder, marketIndex);
    if (holder === accountId || Math.sign(p.lots[cell]) !== sign) continue;
    const summary = marginSummary(s, holder);
    const pnl = summary.perp.lines.find((line) => line.marketIndex === marketIndex)?.pnlUnrealizedUnits ?? 0n;
    const entry = p.cost[cell] < 0n ? -p.cost[cell] : p.cost[cell];
    const equity = summary.netEquityUnits > 1n ? summary.netEquityUnits : 1n;
    ranked.push({ accountId: holder, lots: p.lots[cell], profitable: pnl > 0n, num: pnl * summary.margin.tenUnits, den: (entry > 0n ? entry : 1n) * equity });
  }
  return ranked.sort((a, b) => {
    if (a.profitable !== b.profitable) return a.profitable ? -1 : 1;
    const left = b.num * a.den;
    const right = a.num * b.den;
    return left > right ? 1 : left < right ? -1 : a.accountId - b.accountId;
  });
}

/** The account's whole position closed against the ranked holders at `ticks` (header); returns the holders it closed against. */
function closeAgainst(s: EngineState, accountId: number, marketIndex: number, ticks: number, ranked: Ranked[]): number[] {
  const p = s.positions;
  const lots = p.lots[p.cell(accountId, marketIndex)];
  const side = lots > 0 ? Side.Ask : Side.Bid;
  let remaining = Math.abs(lots);
  const own = offBookSlot(s, accountId, marketIndex, side, remaining, ticks, ADL_FLAGS);
  const closed: number[] = [];
  for (const counterparty of ranked) {
    if (remaining === 0) break;
    const qty = Math.min(remaining, Math.abs(counterparty.lots));
    const theirs = offBookSlot(s, counterparty.accountId, marketIndex, side === Side.Bid ? Side.Ask : Side.Bid, qty, ticks, ADL_FLAGS);
    offBookFill(s, own, theirs, qty, ticks, 0);
    s.out.order(theirs, OrderEvent.None, OrderStatus.Filled, ExpiryReason.None, FRONT_ID_NONE, 0, HeaderFlag.Last);
    closeOrder(s, theirs);
    closed.push(counterparty.accountId);
    remaining -= qty;
  }
  assert(remaining === 0, 'auto-deleveraging found too few opposite positions');
  s.out.order(own, OrderEvent.None, OrderStatus.Filled, ExpiryReason.None, FRONT_ID_NONE, 0, HeaderFlag.Last);
  closeOrder(s, own);
  return closed;
}

/** An off-book system order (ADL's, or the backstop's, backstop.ts): limit IOC at `ticks`, with `flags`, Accepted. */
export function offBookSlot(s: EngineState, accountId: number, marketIndex: number, side: Side, lots: number, ticks: number, flags: number): number {
  const slot = openSystemSlot(s, accountId, marketIndex, side, lots, flags, MAX_AMOUNT_UNITS);
  s.pool.u8[slot << Of.w8 | Of.orderType] = OrderType.Limit;
  s.pool.f64[slot << Of.f64 | Of.priceTicks] = ticks;
  s.out.order(slot, OrderEvent.Accepted, OrderStatus.New, ExpiryReason.None, FRONT_ID_NONE, 0, 0);
  return slot;
}

/** The off-book fill being settled (one at a time). */
const OFF_BOOK_FILL: Fill = {
  marketIndex: 0, taker: 0, maker: 0, buyer: 0, seller: 0,
  priceTicks: 0 as PriceTicks, qtyLots: 0 as QtyLots, quoteUnits: 0 as AmountUnits,
  buyerFeeUnits: 0 as AmountUnits, sellerFeeUnits: 0 as AmountUnits,
};

/**
 * One off-book fill of `lots` at `ticks` between the account's order (`own`, the taker) and a
 * counterparty's (the maker), settled as any perpetual fill (header; an ADL fill is fee-free, a
 * backstop fill pays the liquidation fee, liquidation/fee.ts). `tradeFlags`: the Trade record's
 * header flags (HeaderFlag.OffBook for the backstop's).
 */
export function offBookFill(s: EngineState, own: number, theirs: number, lots: number, ticks: number, tradeFlags: number): void {
  const pool = s.pool;
  const marketIndex = pool.u16[own << Of.w16 | Of.marketIndex];
  const f = OFF_BOOK_FILL;
  f.marketIndex = marketIndex;
  f.taker = own;
  f.maker = theirs;
  f.buyer = pool.u8[own << Of.w8 | Of.side] === Side.Bid ? own : theirs;
  f.seller = f.buyer === own ? theirs : own;
  f.priceTicks = ticks as PriceTicks;
  f.qtyLots = lots as QtyLots;
  f.quoteUnits = notionalUnits(ticks as PriceTicks, lots as QtyLots, s.catalog.markets[marketIndex].quoteUnitsPerTickLot);
  settlePerp(s, f);
  for (const slot of [own, theirs]) {
    pool.f64[slot << Of.f64 | Of.remainingLots] -= lots;
    pool.f64[slot << Of.f64 | Of.executedLots] += lots;
    pool.f64[slot << Of.f64 | Of.executedQuoteUnits] += f.quoteUnits;
  }
  const tradeId = ++s.books[marketIndex].lastTradeId;
  s.out.trade(marketIndex, tradeId, ticks, lots, pool.f64[f.buyer << Of.f64 | Of.orderId], pool.f64[f.seller << Of.f64 | Of.orderId], f.buyer === theirs, tradeFlags);
  s.out.orderFill(theirs, OrderStatus.Filled, lots, ticks, tradeId, true, f.buyer === theirs ? f.buyerFeeUnits : f.sellerFeeUnits);
  s.out.orderFill(own, pool.f64[own << Of.f64 | Of.remainingLots] === 0 ? OrderStatus.Filled : OrderStatus.PartiallyFilled, lots, ticks, tradeId, false, f.buyer === own ? f.buyerFeeUnits : f.sellerFeeUnits);
  reportPerpSettlement(s, f, true);
}
