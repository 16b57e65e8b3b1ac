// Taking an open order off the exchange before it is done: cancels by the owner (CancelOrder,
// CancelAll) and self-trade-prevention cancels of a maker.
//
// An open order is either pending (in the speed-bump queue) or resting (in its level). Either way
// the cancel releases exactly what the order still holds (its market's rule, kinds.ts), so the ledger's locked units keep
// matching the open orders. A pending order never got the response to its place command (that
// comes at activation), so its cancel also answers that request, with the Cancelled state: no
// request is left without an answer.

import {
  CommandFlag,
  ExpiryReason,
  FRONT_ID_NONE,
  HeaderFlag,
  OrderEvent,
  OrderStatus,
  ResultCode,
  Side,
  type CancelAllCommand,
  type CancelOrderCommand,
} from '../../bus/types.js';
import { assert } from '../assert.js';
import { rulesOfOrder } from '../kinds.js';
import { NO_SLOT, OrderState, Of } from './orders.js';
import type { EngineState } from '../state.js';

/**
 * Cancels a pending or resting order: emits orderCancelled, its balance and (if it rested) its
 * level's depth. The slot stays open so the caller can write its response; then closeOrder.
 * With events in answers (output.ts) the orderCancelled rides in the order's next answer instead:
 * a pending order's answer to its place, written here, or (`answered`: the caller answers a
 * request next with the cancelled state) the caller's. Returns whether the caller's answer
 * carries it. An order or a caller addressed to no one (a system order, an injected command) has
 * no answer to carry it.
 */
export function cancelOpenOrder(s: EngineState, slot: number, reason: ExpiryReason, answered = false): boolean {
  const pool = s.pool;
  const f = slot << Of.f64;
  const w = slot << Of.w32;
  const h = slot << Of.w16;
  const b = slot << Of.w8;
  const state = pool.u8[b | Of.state];
  assert(state === OrderState.Pending || state === OrderState.Resting, 'cancelling an order that is not open');
  const marketIndex = pool.u16[h | Of.marketIndex];
  const book = s.books[marketIndex];
  const side = pool.u8[b | Of.side] as Side;
  const accountId = pool.u32[w | Of.accountId];
  const assetIndex = releaseHold(s, slot);
  let levelQty = 0;
  if (state === OrderState.Pending) {
    s.pending.remove(slot);
  } else {
    levelQty = book.unlink(slot);
  }
  const inAnswer = s.out.eventsInAnswers && (state === OrderState.Pending ? pool.u16[h | Of.frontId] !== FRONT_ID_NONE : answered);
  if (!inAnswer) s.out.order(slot, OrderEvent.Cancelled, OrderStatus.Cancelled, reason, FRONT_ID_NONE, 0, 0);
  s.out.balance(accountId, assetIndex, FRONT_ID_NONE, 0);
  if (state === OrderState.Resting) {
    s.out.depth(marketIndex, side, pool.f64[f | Of.priceTicks], levelQty, s.touchUpdateId(book), FRONT_ID_NONE, 0);
    return inAnswer;
  }
  s.out.order(slot, carried(inAnswer, OrderEvent.Cancelled), OrderStatus.Cancelled, reason, pool.u16[h | Of.frontId], pool.u32[w | Of.requestId], HeaderFlag.Last);
  return false;
}

/** The event an answer carries: `event` when it rides in it, else none (the answer is the state alone). */
export function carried(inAnswer: boolean, event: OrderEvent): OrderEvent {
  return inAnswer ? event : OrderEvent.None;
}

/**
 * Gives back to available what the open order in `slot` still holds (its market's rule,
 * kinds.ts); returns the asset the hold sat in. Its own function, compiled with the rule's
 * helpers inlined, so that the cancel's record writers fit in cancelOpenOrder's inlining.
 */
function releaseHold(s: EngineState, slot: number): number {
  const rules = rulesOfOrder(s, slot);
  const assetIndex = rules.holdAssetOf(s, slot);
  s.ledger.unlock(s.pool.u32[slot << Of.w32 | Of.accountId], assetIndex, rules.holdUnitsOf(s, slot));
  return assetIndex;
}

/** Frees the slot of an order in a final state; it is out of every queue already. */
export function closeOrder(s: EngineState, slot: number): void {
  assert(s.pool.u8[slot << Of.w8 | Of.state] === OrderState.Active, 'closing an order still queued');
  s.index.remove(s.pool.f64[slot << Of.f64 | Of.orderId]);
  s.pool.close(slot);
}

/** CancelOrder: one open order of the account, named by order id or client id. */
export function cancelOrder(s: EngineState, cmd: CancelOrderCommand): void {
  const marketIndex = s.catalog.marketIndex(cmd.marketId);
  let slot = NO_SLOT;
  let code: ResultCode = ResultCode.Ok;
  if (!s.accounts.exists(cmd.accountId)) code = ResultCode.UnknownAccount;
  else if (marketIndex < 0) code = ResultCode.UnknownMarket;
  else {
    const byClientId = (cmd.flags & CommandFlag.HasClientId) !== 0;
    slot = s.findOpenOrder(cmd.accountId, marketIndex, byClientId, cmd.orderId, cmd.clientId);
    if (slot === NO_SLOT) code = ResultCode.UnknownOrder;
  }
  if (code !== ResultCode.Ok) return s.out.result(code, 0, cmd.frontId, cmd.requestId);
  const inAnswer = cancelOpenOrder(s, slot, ExpiryReason.None, cmd.frontId !== FRONT_ID_NONE);
  s.out.order(slot, carried(inAnswer, OrderEvent.Cancelled), OrderStatus.Cancelled, ExpiryReason.None, cmd.frontId, cmd.requestId, HeaderFlag.Last);
  closeOrder(s, slot);
}

/** CancelAll: every open order of the account in one market, oldest first; answers the count. */
export function cancelAll(s: EngineState, cmd: CancelAllCommand): void {
  const pool = s.pool;
  const marketIndex = s.catalog.marketIndex(cmd.marketId);
  if (!s.accounts.exists(cmd.accountId)) return s.out.result(ResultCode.UnknownAccount, 0, cmd.frontId, cmd.requestId);
  if (marketIndex < 0) return s.out.result(ResultCode.UnknownMarket, 0, cmd.frontId, cmd.requestId);
  let cancelled = 0;
  for (let slot = pool.accountHead[cmd.accountId], after = NO_SLOT; slot !== NO_SLOT; slot = after) {
    after = pool.i32[slot << Of.w32 | Of.accountNext];
    if (pool.u16[slot << Of.w16 | Of.marketIndex] !== marketIndex) continue;
    const inAnswer = cancelOpenOrder(s, slot, ExpiryReason.None, cmd.frontId !== FRONT_ID_NONE);
    s.out.order(slot, carried(inAnswer, OrderEvent.Cancelled), OrderStatus.Cancelled, ExpiryReason.None, cmd.frontId, cmd.requestId, 0);
    closeOrder(s, slot);
    cancelled++;
  }
  s.out.result(ResultCode.Ok, cancelled, cmd.frontId, cmd.requestId);
}
