// Taking an open order off the exchange before it is done: cancels by the owner (CancelOrder,
// CancelAll) and self-trade-prevention cancels of a maker.
//
// An open order is either pending (in the speed-bump queue) or resting (in its level). Either way
// the cancel releases exactly what the order still locks, so the ledger's locked units keep
// matching the open orders. A pending order never got the response to its place command (that
// comes at activation), so its cancel also answers that request, with the Cancelled state: no
// request is left without an answer.

import { ExpiryReason, FRONT_ID_NONE, HeaderFlag, OrderEvent, OrderStatus, Side } from '../../bus/types.js';
import { assert } from '../assert.js';
import { OrderState } from './orders.js';
import type { EngineState } from '../state.js';

/**
 * Cancels a pending or resting order: emits orderCancelled, its balance and (if it rested) its
 * level's depth. The slot stays open so the caller can write its response; then closeOrder.
 */
export function cancelOpenOrder(s: EngineState, slot: number, reason: ExpiryReason): void {
  const pool = s.pool;
  const state = pool.state[slot];
  assert(state === OrderState.Pending || state === OrderState.Resting, 'cancelling an order that is not open');
  const marketIndex = pool.marketIndex[slot];
  const book = s.books[marketIndex];
  const side = pool.side[slot] as Side;
  const accountId = pool.accountId[slot];
  const assetIndex = s.lockAssetOf(slot);
  const lockUnits = s.lockUnitsOf(slot);
  let levelQty = 0;
  if (state === OrderState.Pending) {
    s.pending.remove(slot);
    book.pendingCount--;
    if (pool.reservesLevel(slot)) book.pendingGtc[side]--;
  } else {
    levelQty = book.unlink(slot);
  }
  s.ledger.unlock(accountId, assetIndex, lockUnits);
  s.out.order(slot, OrderEvent.Cancelled, OrderStatus.Cancelled, reason, FRONT_ID_NONE, 0, 0);
  s.out.balance(accountId, assetIndex, FRONT_ID_NONE, 0);
  if (state === OrderState.Resting) {
    s.out.depth(marketIndex, side, pool.priceTicks[slot], levelQty, s.touchUpdateId(book), FRONT_ID_NONE, 0);
  } else {
    s.out.order(slot, OrderEvent.None, OrderStatus.Cancelled, reason, pool.frontId[slot], pool.requestId[slot], HeaderFlag.Last);
  }
}

/** Frees the slot of an order in a final state; it is out of every queue already. */
export function closeOrder(s: EngineState, slot: number): void {
  assert(s.pool.state[slot] === OrderState.Active, 'closing an order still queued');
  s.index.remove(s.pool.orderId[slot]);
  s.pool.close(slot);
}
