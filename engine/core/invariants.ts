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
// consistent (checkReferences); index prices are positive where set and not newer than the last
// command; the insurance fund's lines are safe integers and count in conservation, and the
// liquidation step timer waits as the fund records it, and no account is left marked for
// collateral conversion between commands; the borrow/lend pools are consistent with their positions, each
// asset's conservation counts what they hold, and the interest timer waits exactly while they
// record it (margin/pools.ts); each perpetual's positions sum to 0, and the settlement lines and
// the claim queue agree (perp/positions.ts).
//
// Each structure checks its own invariants beside its rules (validate methods); this file runs
// them and checks what ties structures together: each open order against the index, the accounts,
// its book's state and counters, and the holds its market's rules say it keeps.

import { OrderFlag, ResultCode, Side } from '../bus/types.js';
import { assert, isUnsignedSafe } from './assert.js';
import { OrderState, Of } from './book/orders.js';
import { HOUR_US } from './margin/borrow-lend.js';
import { NO_TIMER, TimerKind } from './timers.js';
import { rulesOfOrder } from './kinds.js';
import { checkPerpTimers } from './perp/mark-price.js';
import { checkRealization } from './perp/realize.js';
import { checkInterestPass } from './margin/interest-pass.js';
import { checkFundingPasses } from './perp/funding-passes.js';
import { bookStateRefusal } from './book/book.js';
import type { EngineState } from './state.js';

export function validateState(s: EngineState): void {
  s.pool.validate(s.accounts.count, s.limits.maxOpenOrdersPerAccount);
  s.index.validate(s.pool.liveCount);
  const lockedExpected = checkOpenOrders(s);
  for (const book of s.books) book.validate(s.catalog.markets[book.marketIndex], s.limits, s.lastTimeUs);
  s.timers.validate();
  s.pending.validate();
  s.pools.validate(s.accounts.count);
  checkInterestTimer(s);
  s.positions.validate(s.accounts.count);
  s.insurance.validate();
  s.conversion.validate();
  s.backstop.validate((accountId) => s.accounts.exists(accountId));
  checkLiquidationTimer(s);
  // What the pools, the perpetuals' settlement lines and the insurance fund hold is outside every account.
  s.ledger.validate(lockedExpected, s.accounts.count, s.catalog.assetIdOf, (assetIndex) => s.heldOutside(assetIndex));
  s.indexPrices.validate(s.lastTimeUs);
  s.accountSettings.validate(s.accounts.count);
  s.perpMarks.validate();
  checkPerpTimers(s);
  checkRealization(s);
  checkFundingPasses(s);
  checkInterestPass(s);
}

/**
 * The liquidation step timer waits exactly while the fund records it, after the last command
 * (liquidation/fund.ts). It waits while some account is liquidating, except right after loading
 * a snapshot from before the waterfall, until the next re-check of such an account arms it
 * (margin/liquidating.ts).
 */
function checkLiquidationTimer(s: EngineState): void {
  const timer = s.insurance.stepTimer;
  const waiting = s.timers.inOrder(TimerKind.LiquidationStep).length;
  assert(waiting === (timer === NO_TIMER ? 0 : 1), 'liquidation step timers differ from the one the fund records');
  if (timer !== NO_TIMER) assert(s.timers.kindOf(timer) === TimerKind.LiquidationStep && s.timers.dueOf(timer) > s.lastTimeUs, 'the liquidation step is due before the last command');
}

/** The interest timer waits exactly while it is recorded, due on an hour boundary after the last command. */
function checkInterestTimer(s: EngineState): void {
  const timer = s.pools.interestTimer;
  const waiting = s.timers.inOrder(TimerKind.Interest).length;
  assert(waiting === (timer === NO_TIMER ? 0 : 1), 'interest timers differ from the one the pools record');
  if (timer === NO_TIMER) return;
  const due = s.timers.dueOf(timer);
  assert(s.timers.kindOf(timer) === TimerKind.Interest && due % HOUR_US === 0 && due > s.lastTimeUs, 'the interest timer is not due on a coming hour');
}

/**
 * Checks every open order and the book counters of pending ones; returns what the open orders
 * hold, by ledger cell.
 */
function checkOpenOrders(s: EngineState): Float64Array {
  const pool = s.pool;
  const lockedExpected = new Float64Array(s.ledger.locked.length);
  const pendingPerMarket = new Int32Array(s.books.length);
  const pendingGtc = new Int32Array(s.books.length * 2);
  let live = 0;
  for (let slot = 0; slot < pool.capacity; slot++) {
    const state = pool.u8[slot << Of.w8 | Of.state];
    if (state === OrderState.Free) continue;
    live++;
    checkOrder(s, slot);
    const rules = rulesOfOrder(s, slot);
    const cell = s.ledger.cell(pool.u32[slot << Of.w32 | Of.accountId], rules.holdAssetOf(s, slot));
    lockedExpected[cell] += rules.holdUnitsOf(s, slot);
    if (state === OrderState.Pending) {
      // No pending order waits in a book whose state would refuse it.
      const postOnly = (pool.u8[slot << Of.w8 | Of.flags] & OrderFlag.PostOnly) !== 0;
      assert(bookStateRefusal(s.books[pool.u16[slot << Of.w16 | Of.marketIndex]].orderBookState, pool.isMarket(slot), postOnly) === ResultCode.Ok, 'a pending order waits in a book that refuses it');
      pendingPerMarket[pool.u16[slot << Of.w16 | Of.marketIndex]]++;
      if (pool.reservesLevel(slot)) pendingGtc[pool.u16[slot << Of.w16 | Of.marketIndex] * 2 + pool.u8[slot << Of.w8 | Of.side]]++;
    }
  }
  assert(live === pool.liveCount, 'live order count is off');
  for (const book of s.books) {
    assert(book.pendingCount === pendingPerMarket[book.marketIndex], 'book pending count is off');
    assert(book.pendingGtc[Side.Bid] === pendingGtc[book.marketIndex * 2 + Side.Bid], 'bid level reservations are off');
    assert(book.pendingGtc[Side.Ask] === pendingGtc[book.marketIndex * 2 + Side.Ask], 'ask level reservations are off');
  }
  return lockedExpected;
}

function checkOrder(s: EngineState, slot: number): void {
  const pool = s.pool;
  const state = pool.u8[slot << Of.w8 | Of.state];
  assert(state === OrderState.Pending || state === OrderState.Resting, `order in slot ${slot} is mid-activation outside apply`);
  assert(s.index.find(pool.f64[slot << Of.f64 | Of.orderId]) === slot, `order ${pool.f64[slot << Of.f64 | Of.orderId]} is not indexed`);
  assert(s.accounts.exists(pool.u32[slot << Of.w32 | Of.accountId]) && pool.u16[slot << Of.w16 | Of.marketIndex] < s.books.length, 'order of an unknown account or market');
  const remaining = pool.f64[slot << Of.f64 | Of.remainingLots];
  assert(remaining > 0 && remaining + pool.f64[slot << Of.f64 | Of.executedLots] === pool.f64[slot << Of.f64 | Of.qtyLots], 'open order quantities do not add up');
  assert(isUnsignedSafe(pool.f64[slot << Of.f64 | Of.executedQuoteUnits]), 'executed quote is not a safe integer');
  assert(state === OrderState.Resting || pool.f64[slot << Of.f64 | Of.executedLots] === 0, 'a pending order has fills');
  assert(!pool.isMarket(slot) || state === OrderState.Pending, 'a market order rests');
}
