// The invariant checker: recomputes everything the structures keep incrementally and throws on
// the first difference. Tests run it after every command; it is O(pool + accounts × assets), far
// too slow for the hot path and never called there.
//
// Checked: every open order is indexed by its id and well formed; each book side is strictly
// sorted, its levels are non-empty, sum their orders' remaining lots and keep time priority; no
// book is crossed; book, pending, per-account and per-side reservation counters equal what a
// full scan finds and respect their limits; locked units per (account, asset) equal exactly what
// open and pending orders can still spend; balances are safe non-negative integers and each
// asset's balances plus its collected fees sum to its supply; market orders never rest; the free
// list and the live orders account for every slot; a closed book holds no orders and no pending
// order waits in a book whose state would refuse it; a banded market's reference prices are
// consistent (checkReferences).

import { OrderBookState, OrderFlag, ResultCode, Side } from '../bus/types.js';
import { bookStateRefusal } from './operator.js';
import { rulesOfOrder } from './kinds.js';
import { assert, isUnsignedSafe } from './assert.js';
import type { Book, BookSide } from './book/book.js';
import { NO_SLOT, OrderState } from './book/orders.js';
import type { EngineState } from './state.js';

export function validateState(s: EngineState): void {
  const pool = s.pool;
  assert(pool.countFree() + pool.liveCount === pool.capacity, 'free and live slots do not add up to the pool');
  assert(s.index.size === pool.liveCount, 'order index size differs from the live orders');
  const lockedExpected = new Float64Array(s.ledger.locked.length);
  const pendingPerMarket = new Int32Array(s.books.length);
  const pendingGtc = new Int32Array(s.books.length * 2);
  let live = 0;
  for (let slot = 0; slot < pool.capacity; slot++) {
    const state = pool.state[slot];
    if (state === OrderState.Free) continue;
    live++;
    checkOrder(s, slot);
    const rules = rulesOfOrder(s, slot);
    const cell = s.ledger.cell(pool.accountId[slot], rules.holdAssetOf(s, slot));
    lockedExpected[cell] += rules.holdUnitsOf(s, slot);
    if (state === OrderState.Pending) {
      // No pending order waits in a book whose state would refuse it.
      const postOnly = (pool.flags[slot] & OrderFlag.PostOnly) !== 0;
      assert(bookStateRefusal(s.books[pool.marketIndex[slot]].orderBookState, pool.isMarket(slot), postOnly) === ResultCode.Ok, 'a pending order waits in a book that refuses it');
      pendingPerMarket[pool.marketIndex[slot]]++;
      if (pool.reservesLevel(slot)) pendingGtc[pool.marketIndex[slot] * 2 + pool.side[slot]]++;
    }
  }
  assert(live === pool.liveCount, 'live order count is off');
  for (const book of s.books) {
    checkBook(s, book);
    assert(book.pendingCount === pendingPerMarket[book.marketIndex], 'book pending count is off');
    assert(book.pendingGtc[Side.Bid] === pendingGtc[book.marketIndex * 2 + Side.Bid], 'bid level reservations are off');
    assert(book.pendingGtc[Side.Ask] === pendingGtc[book.marketIndex * 2 + Side.Ask], 'ask level reservations are off');
    assert(book.orderBookState !== OrderBookState.Closed || book.restingCount + book.pendingCount === 0, 'a closed book holds orders');
    checkReferences(s, book);
  }
  checkPendingQueue(s);
  checkAccounts(s);
  checkLedger(s, lockedExpected);
}

function checkOrder(s: EngineState, slot: number): void {
  const pool = s.pool;
  const state = pool.state[slot];
  assert(state === OrderState.Pending || state === OrderState.Resting, `order in slot ${slot} is mid-activation outside apply`);
  assert(s.index.find(pool.orderId[slot]) === slot, `order ${pool.orderId[slot]} is not indexed`);
  assert(s.accounts.exists(pool.accountId[slot]) && pool.marketIndex[slot] < s.books.length, 'order of an unknown account or market');
  const remaining = pool.remainingLots[slot];
  assert(remaining > 0 && remaining + pool.executedLots[slot] === pool.qtyLots[slot], 'open order quantities do not add up');
  assert(isUnsignedSafe(pool.executedQuoteUnits[slot]), 'executed quote is not a safe integer');
  assert(state === OrderState.Resting || pool.executedLots[slot] === 0, 'a pending order has fills');
  assert(!pool.isMarket(slot) || state === OrderState.Pending, 'a market order rests');
}

function checkBook(s: EngineState, book: Book): void {
  const restingOnSides = checkSide(s, book, book.bids) + checkSide(s, book, book.asks);
  assert(restingOnSides === book.restingCount, 'book resting count is off');
  assert(book.restingCount + book.pendingCount <= s.limits.maxOrdersPerBook, 'book holds more orders than its limit');
  const bestBid = book.bids.best();
  const bestAsk = book.asks.best();
  if (bestBid !== -1 && bestAsk !== -1) {
    assert(book.bids.levelPrice[bestBid] < book.asks.levelPrice[bestAsk], 'book is crossed');
  }
}

/**
 * A banded market has both reference prices or neither (before its first trade), each within its
 * price range, and its guarded reference moved no later than the last command; an unbanded
 * market keeps none.
 */
function checkReferences(s: EngineState, book: Book): void {
  const market = s.catalog.markets[book.marketIndex];
  const guarded = book.guardedReferenceTicks;
  if (market.maxMultiplierBps === undefined) {
    assert(book.bandReferenceTicks === 0 && guarded === 0 && book.guardedReferenceTimeUs === 0, 'an unbanded market keeps a reference price');
    return;
  }
  assert((guarded === 0) === (book.bandReferenceTicks === 0), 'a market has one reference price without the other');
  assert(guarded === 0 || (guarded >= market.minPriceTicks && guarded <= market.maxPriceTicks), 'the guarded reference is outside the price range');
  assert(guarded !== 0 || book.guardedReferenceTimeUs === 0, 'a guarded reference time without a reference');
  assert(book.guardedReferenceTimeUs <= s.lastTimeUs, 'the guarded reference moved after the last command');
}

/** Checks one side and returns its number of resting orders. */
function checkSide(s: EngineState, book: Book, side: BookSide): number {
  const pool = s.pool;
  assert(side.count + book.pendingGtc[side.side] <= s.limits.maxPriceLevelsPerSide, 'levels plus reservations exceed the limit');
  let orders = 0;
  for (let position = 0; position < side.count; position++) {
    const level = side.levelAt[position];
    assert(position === 0 || side.keys[position - 1] < side.keys[position], 'levels not strictly sorted');
    assert(side.keys[position] === side.sortKey(side.levelPrice[level]), 'level key differs from its price');
    let qty = 0;
    let count = 0;
    let lastRest = 0;
    let previous = NO_SLOT;
    for (let slot = side.levelHead[level]; slot !== NO_SLOT; slot = pool.next[slot]) {
      assert(pool.state[slot] === OrderState.Resting && pool.level[slot] === level && pool.prev[slot] === previous, 'level queue link broken');
      assert(pool.side[slot] === side.side && pool.marketIndex[slot] === book.marketIndex, 'order on the wrong book side');
      assert(pool.priceTicks[slot] === side.levelPrice[level], 'order price differs from its level');
      assert(pool.restNumber[slot] > lastRest, 'time priority broken within a level');
      lastRest = pool.restNumber[slot];
      qty += pool.remainingLots[slot];
      count++;
      previous = slot;
      assert(count <= pool.capacity, 'level queue has a cycle');
    }
    assert(count > 0 && count === side.levelOrders[level], 'empty level or wrong level order count');
    assert(side.levelTail[level] === previous, 'level tail is wrong');
    assert(qty === side.levelQty[level], 'level quantity differs from its orders');
    orders += count;
  }
  return orders;
}

function checkPendingQueue(s: EngineState): void {
  const pool = s.pool;
  let count = 0;
  let previous = NO_SLOT;
  for (let slot = s.pending.head; slot !== NO_SLOT; slot = pool.next[slot]) {
    assert(pool.state[slot] === OrderState.Pending && pool.prev[slot] === previous, 'pending queue link broken');
    assert(previous === NO_SLOT || pool.createdAtUs[previous] <= pool.createdAtUs[slot], 'pending queue out of time order');
    previous = slot;
    count++;
    assert(count <= pool.capacity, 'pending queue has a cycle');
  }
  assert(s.pending.tail === previous && count === s.pending.count, 'pending queue tail or count is off');
  assert(s.speedBumpUs > 0 || count === 0, 'pending orders without a speed bump');
}

function checkAccounts(s: EngineState): void {
  const pool = s.pool;
  for (let accountId = 1; accountId <= s.accounts.count; accountId++) {
    let count = 0;
    let previous = NO_SLOT;
    for (let slot = pool.accountHead[accountId]; slot !== NO_SLOT; slot = pool.accountNext[slot]) {
      assert(pool.accountId[slot] === accountId && pool.accountPrev[slot] === previous, 'account order list link broken');
      assert(pool.state[slot] !== OrderState.Free, 'a free slot in an account list');
      previous = slot;
      count++;
      assert(count <= pool.capacity, 'account order list has a cycle');
    }
    assert(pool.accountTail[accountId] === previous && count === pool.accountOpenCount[accountId], 'account open count is off');
    assert(count <= s.limits.maxOpenOrdersPerAccount, 'account holds more open orders than its limit');
  }
}

function checkLedger(s: EngineState, lockedExpected: Float64Array): void {
  const ledger = s.ledger;
  const totals = new Array<bigint>(ledger.assetCount).fill(0n);
  for (let accountId = 0; accountId * ledger.assetCount < ledger.locked.length; accountId++) {
    for (let assetIndex = 0; assetIndex < ledger.assetCount; assetIndex++) {
      const cell = accountId * ledger.assetCount + assetIndex;
      assert(isUnsignedSafe(ledger.available[cell]) && isUnsignedSafe(ledger.locked[cell]), 'balance is not a safe non-negative integer');
      assert(ledger.locked[cell] === lockedExpected[cell], `locked units of account ${accountId} differ from its open orders`);
      assert(accountId <= s.accounts.count || ledger.available[cell] === 0, 'balance of an account that does not exist');
      totals[assetIndex] += BigInt(ledger.available[cell]) + BigInt(ledger.locked[cell]);
    }
  }
  for (let assetIndex = 0; assetIndex < ledger.assetCount; assetIndex++) {
    assert(isUnsignedSafe(ledger.feeUnits[assetIndex]), 'collected fees are not a safe non-negative integer');
    assert(totals[assetIndex] + BigInt(ledger.feeUnits[assetIndex]) === BigInt(ledger.supply[assetIndex]), `asset ${s.catalog.assetIdOf[assetIndex]} is not conserved`);
  }
}
