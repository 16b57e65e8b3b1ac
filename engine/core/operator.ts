// Operator commands of the engine core: a market's order book state (SetMarketState) and an
// account's fee rates (SetFeeRates, QueryFeeRates); the rule a book state applies to places is the
// book's (book/book.ts bookStateRefusal).
// Both are journaled commands like any other, so replay rebuilds them exactly.
//
// Order book states (the wire's orderBookState; cancels and queries are never refused):
//   Open        takes every place;
//   Closed      refuses every place (MarketClosed); closing cancels every open order of the market;
//   CancelOnly  refuses every place (MarketCancelOnly); resting orders stay and can be cancelled;
//   LimitOnly   refuses market orders (MarketLimitOnly);
//   PostOnly    refuses orders without postOnly (MarketPostOnly).
// A speed-bumped (pending) order was accepted under the old state but has not taken effect yet:
// when the new state would refuse it as a new place it is cancelled by the same command, so no
// order ever takes effect in a state that refuses it. Orders whose bump ended by the command's
// engine time activate first, under the old state (apply() activates before every command).
// Cancellation order: pending orders in sequence order, then (Closed only) resting bids best level
// first, then asks, each level in time priority. Each is Cancelled with reason OrderBookClosed: an
// orderCancelled event, its balance, and its level's depth (resting) or the answer to its place
// request (pending). Then a MarketState event for every front thread, then the result, whose
// value is the number of orders cancelled.
//
// Fee rates: integers from 0 to 10000 basis points of what the party receives; a change applies
// to every later fill of the account's orders, resting ones included (fills read the rates of the
// moment, see matching.ts).

import {
  ExpiryReason, FRONT_ID_NONE, HeaderFlag, OrderBookState, OrderFlag, ResultCode,
  type QueryFeeRatesCommand, type SetFeeRatesCommand, type SetMarketStateCommand,
} from '../bus/types.js';
import { assert } from './assert.js';
import { NO_LEVEL, bookStateRefusal, type Book, type BookSide } from './book/book.js';
import { cancelOpenOrder, closeOrder } from './book/cancel.js';
import type { EngineState } from './state.js';
import { BPS_PER_UNIT } from './units.js';
import { Of } from './book/orders.js';

function isOrderBookState(value: number): value is OrderBookState {
  return Number.isInteger(value) && value >= OrderBookState.Open && value <= OrderBookState.PostOnly;
}

/** The rejection a pending order would get as a new place under its book's current state. */
function pendingRefusal(s: EngineState, slot: number): ResultCode {
  const book = s.books[s.pool.u16[slot << Of.w16 | Of.marketIndex]];
  const postOnly = (s.pool.u8[slot << Of.w8 | Of.flags] & OrderFlag.PostOnly) !== 0;
  return bookStateRefusal(book.orderBookState, s.pool.isMarket(slot), postOnly);
}

function cancelForClosure(s: EngineState, slot: number): void {
  cancelOpenOrder(s, slot, ExpiryReason.OrderBookClosed);
  closeOrder(s, slot);
}

/** Cancels every resting order of one side, best level first; returns how many. */
function cancelSide(s: EngineState, side: BookSide): number {
  let cancelled = 0;
  for (let level = side.best(); level !== NO_LEVEL; level = side.best(), cancelled++) {
    assert(cancelled <= s.pool.capacity, 'closure loop ran past the number of orders');
    cancelForClosure(s, side.levelHead[level]);
  }
  return cancelled;
}

export function setMarketState(s: EngineState, cmd: SetMarketStateCommand): void {
  const marketIndex = s.catalog.marketIndex(cmd.marketId);
  if (marketIndex < 0) return s.out.result(ResultCode.UnknownMarket, 0, cmd.frontId, cmd.requestId);
  if (!isOrderBookState(cmd.state)) return s.out.result(ResultCode.InvalidOrderBookState, 0, cmd.frontId, cmd.requestId);
  const book: Book = s.books[marketIndex];
  book.orderBookState = cmd.state;
  let cancelled = 0;
  for (const slot of s.pending.inOrder()) {
    if (s.pool.u16[slot << Of.w16 | Of.marketIndex] !== marketIndex || pendingRefusal(s, slot) === ResultCode.Ok) continue;
    cancelForClosure(s, slot);
    cancelled++;
  }
  if (book.orderBookState === OrderBookState.Closed) {
    cancelled += cancelSide(s, book.bids);
    cancelled += cancelSide(s, book.asks);
  }
  s.out.marketState(book, FRONT_ID_NONE, 0);
  s.out.result(ResultCode.Ok, cancelled, cmd.frontId, cmd.requestId);
}

function isFeeRate(value: number): boolean {
  return Number.isInteger(value) && value >= 0 && value <= BPS_PER_UNIT;
}

export function setFeeRates(s: EngineState, cmd: SetFeeRatesCommand): void {
  if (!s.accounts.exists(cmd.accountId)) return s.out.result(ResultCode.UnknownAccount, 0, cmd.frontId, cmd.requestId);
  if (!isFeeRate(cmd.makerFeeBps) || !isFeeRate(cmd.takerFeeBps)) return s.out.result(ResultCode.FeeRateOutOfRange, 0, cmd.frontId, cmd.requestId);
  s.accounts.makerFeeBps[cmd.accountId] = cmd.makerFeeBps;
  s.accounts.takerFeeBps[cmd.accountId] = cmd.takerFeeBps;
  s.out.feeRates(cmd.accountId, cmd.frontId, cmd.requestId, 0);
  s.out.result(ResultCode.Ok, 0, cmd.frontId, cmd.requestId);
}

/** QueryFeeRates: the account's FeeRatesRecord, flagged Last. */
export function queryFeeRates(s: EngineState, cmd: QueryFeeRatesCommand): void {
  if (!s.accounts.exists(cmd.accountId)) return s.out.result(ResultCode.UnknownAccount, 0, cmd.frontId, cmd.requestId);
  s.out.feeRates(cmd.accountId, cmd.frontId, cmd.requestId, HeaderFlag.Last);
}
