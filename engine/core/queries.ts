// Queries: reads of live account state and of the books, answered in stream order.
//
// A query changes nothing (not even pending activations: only state-changing commands move
// engine time forward) and writes only records addressed to the request, closed by one record
// flagged Last. A pending order shows as New: it is open and its funds are locked.

import {
  CommandFlag, ExpiryReason, HeaderFlag, OrderEvent, ResultCode,
  type CommandHeader, type QueryBalancesCommand, type QueryOpenOrdersCommand, type QueryOrderCommand,
} from '../bus/types.js';
import { MARKET_ID_ALL } from './catalog.js';
import { NO_LEVEL, type BookSide } from './book/book.js';
import { NO_SLOT, openStatus, Of } from './book/orders.js';
import type { EngineState } from './state.js';

/** One balance per configured asset, zeros included; result value = number of balances. */
export function queryBalances(s: EngineState, cmd: QueryBalancesCommand): void {
  if (!s.accounts.exists(cmd.accountId)) return s.out.result(ResultCode.UnknownAccount, 0, cmd.frontId, cmd.requestId);
  for (let assetIndex = 0; assetIndex < s.catalog.assetCount; assetIndex++) {
    s.out.balance(cmd.accountId, assetIndex, cmd.frontId, cmd.requestId);
  }
  s.out.result(ResultCode.Ok, s.catalog.assetCount, cmd.frontId, cmd.requestId);
}

/** Open orders of one account, oldest first, in one market or all (MARKET_ID_ALL). */
export function queryOpenOrders(s: EngineState, cmd: QueryOpenOrdersCommand): void {
  const all = cmd.marketId === MARKET_ID_ALL;
  const marketIndex = all ? -1 : s.catalog.marketIndex(cmd.marketId);
  if (!s.accounts.exists(cmd.accountId)) return s.out.result(ResultCode.UnknownAccount, 0, cmd.frontId, cmd.requestId);
  if (!all && marketIndex < 0) return s.out.result(ResultCode.UnknownMarket, 0, cmd.frontId, cmd.requestId);
  const pool = s.pool;
  let count = 0;
  for (let slot = pool.accountHead[cmd.accountId]; slot !== NO_SLOT; slot = pool.i32[slot << Of.w32 | Of.accountNext]) {
    if (!all && pool.u16[slot << Of.w16 | Of.marketIndex] !== marketIndex) continue;
    s.out.order(slot, OrderEvent.None, openStatus(pool, slot), ExpiryReason.None, cmd.frontId, cmd.requestId, 0);
    count++;
  }
  s.out.result(ResultCode.Ok, count, cmd.frontId, cmd.requestId);
}

/** One open order by order id or client id; finished orders are not kept (UnknownOrder). */
export function queryOrder(s: EngineState, cmd: QueryOrderCommand): void {
  const marketIndex = s.catalog.marketIndex(cmd.marketId);
  if (!s.accounts.exists(cmd.accountId)) return s.out.result(ResultCode.UnknownAccount, 0, cmd.frontId, cmd.requestId);
  if (marketIndex < 0) return s.out.result(ResultCode.UnknownMarket, 0, cmd.frontId, cmd.requestId);
  const byClientId = (cmd.flags & CommandFlag.HasClientId) !== 0;
  const slot = s.findOpenOrder(cmd.accountId, marketIndex, byClientId, cmd.orderId, cmd.clientId);
  if (slot === NO_SLOT) return s.out.result(ResultCode.UnknownOrder, 0, cmd.frontId, cmd.requestId);
  s.out.order(slot, OrderEvent.None, openStatus(s.pool, slot), ExpiryReason.None, cmd.frontId, cmd.requestId, HeaderFlag.Last);
}

/**
 * What a front thread needs to start its read models: every account (to register keys), every
 * market's counters, every market's order book state, the exchange's system state, then every level of every book, best first, bids before asks, each carrying
 * its market's current update id. Result value = number of records before it.
 */
export function querySnapshot(s: EngineState, cmd: CommandHeader): void {
  let count = 0;
  for (let accountId = 1; accountId <= s.accounts.count; accountId++, count++) s.out.account(accountId, cmd.frontId, cmd.requestId);
  for (const book of s.books) {
    s.out.market(book, cmd.frontId, cmd.requestId);
    count++;
  }
  for (const book of s.books) {
    s.out.marketState(book, cmd.frontId, cmd.requestId);
    count++;
  }
  s.out.systemState(s.systemState, cmd.frontId, cmd.requestId);
  count++;
  for (const book of s.books) {
    count += snapshotSide(s, book.marketIndex, book.bids, book.updateId, cmd);
    count += snapshotSide(s, book.marketIndex, book.asks, book.updateId, cmd);
  }
  s.out.result(ResultCode.Ok, count, cmd.frontId, cmd.requestId);
}

function snapshotSide(s: EngineState, marketIndex: number, side: BookSide, updateId: number, cmd: CommandHeader): number {
  for (let level = side.best(); level !== NO_LEVEL; level = side.worse(level)) {
    s.out.depth(marketIndex, side.side, side.levelPrice[level], side.levelQty[level], updateId, cmd.frontId, cmd.requestId);
  }
  return side.count;
}
