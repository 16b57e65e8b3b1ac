// Reduce-only perpetual orders (venue mechanics §3.6): an order that may only shrink the account's
// position in its market, never open or flip it.
//
// When it takes effect (placement, or the end of its speed bump): with no position, or on the
// position's own side, it expires ReduceOnlyNotReduced without trading; larger than the position
// it is clipped to the position's size (its quantity and what remains of it).
//
// While an order matches, a resting reduce-only maker fills at most what reduces its account's
// position as it stands at that fill (makerLots); one that cannot reduce it any more expires
// ReduceOnlyNotReduced where the taker meets it. When the taker has matched (before it rests or
// ends), for each account whose position its fills changed: its resting reduce-only orders in
// that market are brought within the position. One on the side that no longer reduces it (the
// position is flat or flipped) expires ReduceOnlyNotReduced; then, while their total remaining
// lots exceed the position's size, they are decreased newest first (an orderModified event and
// the level's depth for each order changed), one decreased to 0 expiring ReduceOnlyNotReduced.
// A pending (speed-bumped) order is clipped when it takes effect instead. Then each of those
// accounts' liquidating state is re-checked (margin/liquidating.ts).
//
// Admission (hold.ts): a reduce-only order always passes the margin check.
//
// Cost: O(1) per maker met; O(the account's open orders) per account an activation's fills touched.

import { ExpiryReason, FRONT_ID_NONE, OrderEvent, OrderFlag, OrderStatus, Side } from '../../bus/types.js';
import { NO_SLOT, OrderState, openStatus, Of } from '../book/orders.js';
import { closeOrder } from '../book/cancel.js';
import type { EngineState } from '../state.js';
import { reviewLiquidating } from '../margin/liquidating.js';
import type { QtyLots } from '../units.js';

/** Whether an order on `side` shrinks a position of `lots` (signed). */
function reduces(side: number, lots: number): boolean {
  return side === Side.Bid ? lots < 0 : lots > 0;
}

export function isReduceOnly(s: EngineState, slot: number): boolean {
  return (s.pool.u8[slot << Of.w8 | Of.flags] & OrderFlag.ReduceOnly) !== 0;
}

/**
 * A reduce-only order taking effect: ReduceOnlyNotReduced when it cannot reduce the position,
 * else None after clipping it to the position's size.
 */
export function admitReduceOnly(s: EngineState, slot: number): ExpiryReason {
  const pool = s.pool;
  const p = s.positions;
  const lots = p.lots[p.cell(pool.u32[slot << Of.w32 | Of.accountId], pool.u16[slot << Of.w16 | Of.marketIndex])];
  if (!reduces(pool.u8[slot << Of.w8 | Of.side], lots)) return ExpiryReason.ReduceOnlyNotReduced;
  const size = Math.abs(lots);
  if (pool.f64[slot << Of.f64 | Of.remainingLots] > size) {
    pool.f64[slot << Of.f64 | Of.qtyLots] = size;
    pool.f64[slot << Of.f64 | Of.remainingLots] = size;
  }
  return ExpiryReason.None;
}

/** Whether admitReduceOnly would clip the order to the position's size (it reduces, and by less than the order's remainder). */
export function clipsReduceOnly(s: EngineState, slot: number): boolean {
  const pool = s.pool;
  const p = s.positions;
  const lots = p.lots[p.cell(pool.u32[slot << Of.w32 | Of.accountId], pool.u16[slot << Of.w16 | Of.marketIndex])];
  return reduces(pool.u8[slot << Of.w8 | Of.side], lots) && pool.f64[slot << Of.f64 | Of.remainingLots] > Math.abs(lots);
}

/** Expires a resting reduce-only order: out of its level, orderExpired, depth; the slot is freed. */
export function expireResting(s: EngineState, slot: number): void {
  const pool = s.pool;
  const marketIndex = pool.u16[slot << Of.w16 | Of.marketIndex];
  const book = s.books[marketIndex];
  const levelQty = book.unlink(slot);
  s.out.order(slot, OrderEvent.Expired, OrderStatus.Expired, ExpiryReason.ReduceOnlyNotReduced, FRONT_ID_NONE, 0, 0);
  s.out.depth(marketIndex, pool.u8[slot << Of.w8 | Of.side] as Side, pool.f64[slot << Of.f64 | Of.priceTicks], levelQty, s.touchUpdateId(book), FRONT_ID_NONE, 0);
  closeOrder(s, slot);
}

/** Decreases a resting order by `lots` (less than what remains): orderModified and depth. */
function decrease(s: EngineState, slot: number, lots: number): void {
  const pool = s.pool;
  const marketIndex = pool.u16[slot << Of.w16 | Of.marketIndex];
  const book = s.books[marketIndex];
  book.reduce(slot, lots as QtyLots);
  pool.f64[slot << Of.f64 | Of.qtyLots] -= lots;
  s.out.order(slot, OrderEvent.Modified, openStatus(pool, slot), ExpiryReason.None, FRONT_ID_NONE, 0, 0);
  const side = pool.u8[slot << Of.w8 | Of.side] as Side;
  s.out.depth(marketIndex, side, pool.f64[slot << Of.f64 | Of.priceTicks], book.sideOf(side).levelQty[pool.i32[slot << Of.w32 | Of.level]], s.touchUpdateId(book), FRONT_ID_NONE, 0);
}

/** Brings the account's resting reduce-only orders in the market within its position (header). */
export function trimReduceOnly(s: EngineState, accountId: number, marketIndex: number): void {
  const pool = s.pool;
  const p = s.positions;
  const lots = p.lots[p.cell(accountId, marketIndex)];
  const kept: number[] = [];
  let total = 0;
  for (let slot = pool.accountHead[accountId], after = NO_SLOT; slot !== NO_SLOT; slot = after) {
    after = pool.i32[slot << Of.w32 | Of.accountNext];
    if (pool.u16[slot << Of.w16 | Of.marketIndex] !== marketIndex || pool.u8[slot << Of.w8 | Of.state] !== OrderState.Resting || !isReduceOnly(s, slot)) continue;
    if (!reduces(pool.u8[slot << Of.w8 | Of.side], lots)) {
      expireResting(s, slot);
      continue;
    }
    kept.push(slot);
    total += pool.f64[slot << Of.f64 | Of.remainingLots];
  }
  let excess = total - Math.abs(lots);
  if (excess <= 0) return;
  // The account's order list is oldest first (book/orders.ts): the newest are at its end.
  for (let i = kept.length - 1; i >= 0; i--) {
    const slot = kept[i];
    if (excess === 0) return;
    const cut = Math.min(excess, pool.f64[slot << Of.f64 | Of.remainingLots]);
    excess -= cut;
    if (cut === pool.f64[slot << Of.f64 | Of.remainingLots]) expireResting(s, slot);
    else decrease(s, slot, cut);
  }
}

/** Lots of a reduce-only order that still reduce its account's position: 0 when none do. */
function reducibleLots(s: EngineState, slot: number): number {
  const pool = s.pool;
  const p = s.positions;
  const lots = p.lots[p.cell(pool.u32[slot << Of.w32 | Of.accountId], pool.u16[slot << Of.w16 | Of.marketIndex])];
  return reduces(pool.u8[slot << Of.w8 | Of.side], lots) ? Math.min(pool.f64[slot << Of.f64 | Of.remainingLots], Math.abs(lots)) : 0;
}

/** What a resting perpetual order may fill now (kinds.ts makerLots). */
export function perpMakerLots(s: EngineState, slot: number): number {
  return isReduceOnly(s, slot) ? reducibleLots(s, slot) : s.pool.f64[slot << Of.f64 | Of.remainingLots];
}

/** Accounts whose position an activation's fills changed, in the order first touched (reused). */
const TOUCHED: number[] = [];

/** Both parties of a perpetual fill (kinds.ts afterFill): their reduce-only orders are trimmed after the match. */
export function touchParties(_s: EngineState, _marketIndex: number, buyerAccount: number, sellerAccount: number): void {
  if (!TOUCHED.includes(buyerAccount)) TOUCHED.push(buyerAccount);
  if (!TOUCHED.includes(sellerAccount)) TOUCHED.push(sellerAccount);
}

/**
 * After a taker matched (kinds.ts afterMatch): every touched account's reduce-only orders within
 * its position, then every touched account's liquidating state re-checked.
 */
export function trimTouched(s: EngineState, marketIndex: number): void {
  const touched = TOUCHED.splice(0);
  for (const accountId of touched) trimReduceOnly(s, accountId, marketIndex);
  // Their liquidating state is re-checked next, in the same order (margin/liquidating.ts).
  for (const accountId of touched) reviewLiquidating(s, accountId);
}
