// One market's order book: two sides of price levels, each level a FIFO of resting orders.
//
// A side keeps the price order of its levels in a LevelOrder (levels.ts): for a market whose tick
// range is at most LADDER_MAX_TICKS, a ladder indexed by tick (bitmap layers, Math.clz32) with a
// price-to-level hash, so the best level, the next worse one, adding and removing a level cost a
// few word operations; for a wider market, a sorted typed array with the best last. Both walk the
// levels best first (best(), then worse(level)). Level data (price, total
// quantity, FIFO head/tail, order count) lives in a per-side level pool with a free list, so an
// order keeps a stable level slot while other levels come and go. The FIFO links live in the
// order pool (prev/next). Bounded by maxPriceLevelsPerSide levels per side.
//
// Invariants (validateInvariants checks them): prices strictly worsening from the best; every level has at
// least one order and its quantity is the sum of its orders' remaining lots; orders in a level
// have the level's price and ascending rest numbers (time priority); best bid < best ask.
//
// The book also holds the market's counters: resting and pending order counts (for
// maxOrdersPerBook), pending GTC orders per side (each may still add one level, so they reserve
// one level each), the depth update id, the last trade id, and for a market with a price band the
// price of its last trade (the limit band's reference; 0 until the first trade) and its guarded
// reference price with the engine time it last moved (reference.ts).

import { OrderBookState, ResultCode, Side, type EngineLimits, type MarketSpec } from '../../bus/types.js';
import { assert } from '../assert.js';
import { expectSnapshot, type SnapshotReader, type SnapshotWriter, type StateDigest } from '../parts.js';
import type { OrderIndex } from './orderIndex.js';
import { NO_SLOT, OrderState, type OrderPool, Of } from './orders.js';
import { levelOrderFor, NO_LEVEL, type LevelOrder } from './levels.js';
import { exportReferencesTo, hashReferencesInto, importReferencesFrom, validateReferences } from './reference.js';
import type { PriceTicks, QtyLots } from '../units.js';

export { NO_LEVEL };

/** Ok when a market in `state` takes a new place of this kind, else the typed rejection. */
export function bookStateRefusal(state: OrderBookState, isMarket: boolean, postOnly: boolean): ResultCode {
  switch (state) {
    case OrderBookState.Open:
      return ResultCode.Ok;
    case OrderBookState.Closed:
      return ResultCode.MarketClosed;
    case OrderBookState.CancelOnly:
      return ResultCode.MarketCancelOnly;
    case OrderBookState.LimitOnly:
      return isMarket ? ResultCode.MarketLimitOnly : ResultCode.Ok;
    case OrderBookState.PostOnly:
      return postOnly ? ResultCode.Ok : ResultCode.MarketPostOnly;
    default:
      assert(false, 'unknown order book state');
      return ResultCode.InvalidCommand;
  }
}

export class BookSide {
  /** Number of price levels. */
  count = 0;
  readonly levelPrice: Float64Array;
  readonly levelQty: Float64Array;
  readonly levelHead: Int32Array;
  readonly levelTail: Int32Array;
  readonly levelOrders: Int32Array;
  private readonly levelNextFree: Int32Array;
  private freeLevel = 0;
  /** The levels' price order (levels.ts). */
  private readonly order: LevelOrder;

  /** A side of a market whose prices run minPriceTicks..maxPriceTicks (they choose the level order's form). */
  constructor(
    readonly side: Side,
    readonly capacity: number,
    private readonly minPriceTicks: number,
    private readonly maxPriceTicks: number,
  ) {
    this.levelPrice = new Float64Array(capacity);
    this.levelQty = new Float64Array(capacity);
    this.levelHead = new Int32Array(capacity).fill(NO_SLOT);
    this.levelTail = new Int32Array(capacity).fill(NO_SLOT);
    this.levelOrders = new Int32Array(capacity);
    this.levelNextFree = new Int32Array(capacity);
    for (let level = 0; level < capacity; level++) this.levelNextFree[level] = level + 1 < capacity ? level + 1 : NO_LEVEL;
    this.order = levelOrderFor(side, capacity, this.levelPrice, minPriceTicks, maxPriceTicks);
  }

  /** Level slot of the best price, or NO_LEVEL for an empty side. */
  best(): number {
    return this.order.best();
  }

  /** The level after `level` going away from the touch (best → worst), or NO_LEVEL after the worst. */
  worse(level: number): number {
    return this.order.worse(level);
  }

  /** Level slot holding `priceTicks`, or NO_LEVEL. */
  find(priceTicks: PriceTicks): number {
    return this.order.find(priceTicks);
  }

  /** Adds an empty level for a price not yet present; returns its slot. */
  insert(priceTicks: PriceTicks): number {
    assert(this.count < this.capacity && this.freeLevel !== NO_LEVEL, 'price levels exhausted despite the level check');
    const level = this.freeLevel;
    this.freeLevel = this.levelNextFree[level];
    this.levelPrice[level] = priceTicks;
    this.levelQty[level] = 0;
    this.levelHead[level] = NO_SLOT;
    this.levelTail[level] = NO_SLOT;
    this.levelOrders[level] = 0;
    this.order.add(level);
    this.count++;
    return level;
  }

  /** Level slot holding `priceTicks`, adding an empty level first when none does. */
  findOrInsert(priceTicks: PriceTicks): number {
    const level = this.order.find(priceTicks);
    return level !== NO_LEVEL ? level : this.insert(priceTicks);
  }

  /** Removes an empty level. */
  remove(level: number): void {
    assert(this.levelOrders[level] === 0 && this.levelQty[level] === 0, 'removing a non-empty level');
    this.order.delete(level);
    this.count--;
    this.levelNextFree[level] = this.freeLevel;
    this.freeLevel = level;
  }

  /** Snapshot: the level count, then per level best first its price, quantity, order count and order ids. */
  exportTo(w: SnapshotWriter, pool: OrderPool): void {
    w.number(this.count);
    for (let level = this.best(); level !== NO_LEVEL; level = this.worse(level)) {
      w.number(this.levelPrice[level]);
      w.number(this.levelQty[level]);
      w.number(this.levelOrders[level]);
      for (let slot = this.levelHead[level]; slot !== NO_SLOT; slot = pool.i32[slot << Of.w32 | Of.next]) w.number(pool.f64[slot << Of.f64 | Of.orderId]);
    }
  }

  /** Rebuilds the levels of a snapshot, linking the (imported, Active) orders they name; returns how many. */
  importFrom(r: SnapshotReader, pool: OrderPool, index: OrderIndex, marketIndex: number): number {
    const levelCount = r.number();
    expectSnapshot(levelCount >= 0 && levelCount <= this.capacity, 'more levels than a side holds');
    let orders = 0;
    for (let rank = 0; rank < levelCount; rank++) {
      const price = r.number();
      expectSnapshot(Number.isSafeInteger(price) && price >= this.minPriceTicks && price <= this.maxPriceTicks, 'a level price outside the market range');
      expectSnapshot(this.find(price as PriceTicks) < 0, 'a level price is repeated');
      const level = this.insert(price as PriceTicks);
      this.levelQty[level] = r.number();
      const count = r.number();
      expectSnapshot(count > 0, 'an empty level');
      this.levelOrders[level] = count;
      for (let i = 0; i < count; i++) {
        const slot = index.find(r.number());
        expectSnapshot(slot !== NO_SLOT && pool.u8[slot << Of.w8 | Of.state] === OrderState.Active && pool.u8[slot << Of.w8 | Of.side] === this.side, 'a level names an unknown or misplaced order');
        expectSnapshot(pool.u16[slot << Of.w16 | Of.marketIndex] === marketIndex && pool.f64[slot << Of.f64 | Of.priceTicks] === price, 'a level holds an order of another market or price');
        const tail = this.levelTail[level];
        pool.i32[slot << Of.w32 | Of.prev] = tail;
        pool.i32[slot << Of.w32 | Of.next] = NO_SLOT;
        if (tail === NO_SLOT) this.levelHead[level] = slot;
        else pool.i32[tail << Of.w32 | Of.next] = slot;
        this.levelTail[level] = slot;
        pool.i32[slot << Of.w32 | Of.level] = level;
        pool.u8[slot << Of.w8 | Of.state] = OrderState.Resting;
        orders++;
      }
    }
    return orders;
  }

  /** State hash: the level count, then per level best first its price, quantity, count and orders. */
  hashInto(d: StateDigest, pool: OrderPool): void {
    d.number(this.count);
    for (let level = this.best(); level !== NO_LEVEL; level = this.worse(level)) {
      d.number(this.levelPrice[level]);
      d.number(this.levelQty[level]);
      d.number(this.levelOrders[level]);
      for (let slot = this.levelHead[level]; slot !== NO_SLOT; slot = pool.i32[slot << Of.w32 | Of.next]) pool.hashOrderInto(d, slot);
    }
  }

  /**
   * From the best level on, prices strictly worsening, each found at its price, count levels in
   * all; every level non-empty, its quantity the sum of its orders' remaining lots, its queue well
   * linked and in time priority; levels plus `reservedLevels` within `maxLevels`. Returns the
   * number of resting orders.
   */
  validate(pool: OrderPool, marketIndex: number, reservedLevels: number, maxLevels: number): number {
    assert(this.count + reservedLevels <= maxLevels, 'levels plus reservations exceed the limit');
    let orders = 0;
    let levels = 0;
    let previous = NO_LEVEL;
    for (let level = this.best(); level !== NO_LEVEL; level = this.worse(level)) {
      const price = this.levelPrice[level];
      assert(previous === NO_LEVEL || (this.side === Side.Bid ? price < this.levelPrice[previous] : price > this.levelPrice[previous]), 'levels not strictly in price order');
      assert(this.find(price as PriceTicks) === level, 'a level is not found at its price');
      assert(++levels <= this.count, 'more levels in price order than counted');
      orders += this.validateLevel(pool, marketIndex, level);
      previous = level;
    }
    assert(levels === this.count, 'fewer levels in price order than counted');
    return orders;
  }

  private validateLevel(pool: OrderPool, marketIndex: number, level: number): number {
    let qty = 0;
    let count = 0;
    let lastRest = 0;
    let previous = NO_SLOT;
    for (let slot = this.levelHead[level]; slot !== NO_SLOT; slot = pool.i32[slot << Of.w32 | Of.next]) {
      assert(pool.u8[slot << Of.w8 | Of.state] === OrderState.Resting && pool.i32[slot << Of.w32 | Of.level] === level && pool.i32[slot << Of.w32 | Of.prev] === previous, 'level queue link broken');
      assert(pool.u8[slot << Of.w8 | Of.side] === this.side && pool.u16[slot << Of.w16 | Of.marketIndex] === marketIndex, 'order on the wrong book side');
      assert(pool.f64[slot << Of.f64 | Of.priceTicks] === this.levelPrice[level], 'order price differs from its level');
      assert(pool.f64[slot << Of.f64 | Of.restNumber] > lastRest, 'time priority broken within a level');
      lastRest = pool.f64[slot << Of.f64 | Of.restNumber];
      qty += pool.f64[slot << Of.f64 | Of.remainingLots];
      count++;
      previous = slot;
      assert(count <= pool.capacity, 'level queue has a cycle');
    }
    assert(count > 0 && count === this.levelOrders[level], 'empty level or wrong level order count');
    assert(this.levelTail[level] === previous, 'level tail is wrong');
    assert(qty === this.levelQty[level], 'level quantity differs from its orders');
    return count;
  }
}

export class Book {
  readonly bids: BookSide;
  readonly asks: BookSide;
  restingCount = 0;
  pendingCount = 0;
  /** Pending GTC orders per side (index = Side): each reserves one price level. */
  readonly pendingGtc = new Int32Array(2);
  updateId = 0;
  lastTradeId = 0;
  /** Banded markets only: price of the last trade, 0 before the first. */
  bandReferenceTicks = 0;
  /**
   * Banded markets only: the guarded reference price (reference.ts), 0 before the first trade,
   * and the engine time it last moved.
   */
  guardedReferenceTicks = 0;
  guardedReferenceTimeUs = 0;
  /** The apply (by seq) that last advanced updateId: one increment per market per apply. */
  updateIdSeq = -1;
  /** What the market accepts (OrderBookState), set by SetMarketState; Open at start. */
  orderBookState: OrderBookState = OrderBookState.Open;
  /** Counter behind the rest numbers that record time priority. */
  private restCounter = 0;

  constructor(
    readonly marketIndex: number,
    maxLevelsPerSide: number,
    private readonly pool: OrderPool,
    minPriceTicks: number,
    maxPriceTicks: number,
  ) {
    this.bids = new BookSide(Side.Bid, maxLevelsPerSide, minPriceTicks, maxPriceTicks);
    this.asks = new BookSide(Side.Ask, maxLevelsPerSide, minPriceTicks, maxPriceTicks);
  }

  sideOf(side: Side): BookSide {
    return side === Side.Bid ? this.bids : this.asks;
  }

  /** Appends an order to the back of its price level, creating the level if needed. */
  rest(slot: number): void {
    const pool = this.pool;
    const f = slot << Of.f64;
    const w = slot << Of.w32;
    const b = slot << Of.w8;
    assert(pool.u8[b | Of.state] === OrderState.Active && pool.f64[f | Of.remainingLots] > 0, 'resting an order that is not active');
    const bookSide = this.sideOf(pool.u8[b | Of.side] as Side);
    const price = pool.price(slot);
    const level = bookSide.findOrInsert(price);
    const tail = bookSide.levelTail[level];
    pool.i32[w | Of.prev] = tail;
    pool.i32[w | Of.next] = NO_SLOT;
    if (tail === NO_SLOT) bookSide.levelHead[level] = slot;
    else pool.i32[tail << Of.w32 | Of.next] = slot;
    bookSide.levelTail[level] = slot;
    bookSide.levelOrders[level]++;
    bookSide.levelQty[level] += pool.f64[f | Of.remainingLots];
    pool.i32[w | Of.level] = level;
    pool.f64[f | Of.restNumber] = ++this.restCounter;
    pool.u8[b | Of.state] = OrderState.Resting;
    this.restingCount++;
  }

  /** Takes `qtyLots` off a resting order and its level (a fill). */
  reduce(slot: number, qtyLots: QtyLots): void {
    const pool = this.pool;
    assert(pool.u8[slot << Of.w8 | Of.state] === OrderState.Resting && qtyLots > 0 && qtyLots <= pool.f64[slot << Of.f64 | Of.remainingLots], 'reducing a resting order by a bad quantity');
    const bookSide = this.sideOf(pool.u8[slot << Of.w8 | Of.side] as Side);
    pool.f64[slot << Of.f64 | Of.remainingLots] -= qtyLots;
    bookSide.levelQty[pool.i32[slot << Of.w32 | Of.level]] -= qtyLots;
  }

  /**
   * Unlinks a resting order from its level (fully filled or cancelled) and drops the level when it
   * empties. Returns the level's remaining quantity, 0 when the level is gone: the depth update.
   */
  unlink(slot: number): number {
    const pool = this.pool;
    const f = slot << Of.f64;
    const w = slot << Of.w32;
    const b = slot << Of.w8;
    assert(pool.u8[b | Of.state] === OrderState.Resting, 'unlinking an order that does not rest');
    const bookSide = this.sideOf(pool.u8[b | Of.side] as Side);
    const level = pool.i32[w | Of.level];
    const before = pool.i32[w | Of.prev];
    const after = pool.i32[w | Of.next];
    if (before === NO_SLOT) bookSide.levelHead[level] = after;
    else pool.i32[before << Of.w32 | Of.next] = after;
    if (after === NO_SLOT) bookSide.levelTail[level] = before;
    else pool.i32[after << Of.w32 | Of.prev] = before;
    pool.i32[w | Of.prev] = NO_SLOT;
    pool.i32[w | Of.next] = NO_SLOT;
    pool.i32[w | Of.level] = NO_SLOT;
    pool.u8[b | Of.state] = OrderState.Active;
    bookSide.levelQty[level] -= pool.f64[f | Of.remainingLots];
    bookSide.levelOrders[level]--;
    this.restingCount--;
    const levelQty = bookSide.levelQty[level];
    if (bookSide.levelOrders[level] === 0) {
      bookSide.remove(level);
      return 0;
    }
    assert(levelQty > 0, 'a level with orders has no quantity');
    return levelQty;
  }

  /**
   * Snapshot: update id, last trade id, reference prices, the apply that last moved the update
   * id, order book state, rest counter, resting and pending counts, level reservations, then the
   * bids and the asks.
   */
  exportTo(w: SnapshotWriter): void {
    w.number(this.updateId);
    w.number(this.lastTradeId);
    exportReferencesTo(this, w);
    w.number(this.updateIdSeq);
    w.number(this.orderBookState);
    w.number(this.restCounter);
    w.number(this.restingCount);
    w.number(this.pendingCount);
    w.number(this.pendingGtc[Side.Bid]);
    w.number(this.pendingGtc[Side.Ask]);
    this.bids.exportTo(w, this.pool);
    this.asks.exportTo(w, this.pool);
  }

  /** The book of a snapshot (`withGuard` false: format 2, without the guarded reference). */
  importFrom(r: SnapshotReader, index: OrderIndex, market: MarketSpec, withGuard: boolean, lastTimeUs: number): void {
    this.updateId = r.number();
    this.lastTradeId = r.number();
    importReferencesFrom(this, r, market, withGuard, lastTimeUs);
    this.updateIdSeq = r.number();
    this.orderBookState = r.number() as OrderBookState;
    this.restCounter = r.number();
    const restingCount = r.number();
    this.pendingCount = r.number();
    this.pendingGtc[Side.Bid] = r.number();
    this.pendingGtc[Side.Ask] = r.number();
    const linked = this.bids.importFrom(r, this.pool, index, this.marketIndex) + this.asks.importFrom(r, this.pool, index, this.marketIndex);
    expectSnapshot(linked === restingCount, 'a book counts other resting orders than its levels hold');
    this.restingCount = restingCount;
  }

  /** Whether the book is as configuration made it: no order, no trade, no counter moved, Open. */
  isFresh(): boolean {
    return this.updateId === 0 && this.lastTradeId === 0 && this.bandReferenceTicks === 0 && this.guardedReferenceTicks === 0
      && this.guardedReferenceTimeUs === 0 && this.restCounter === 0 && this.restingCount === 0 && this.pendingCount === 0
      && this.pendingGtc[Side.Bid] === 0 && this.pendingGtc[Side.Ask] === 0 && this.orderBookState === OrderBookState.Open
      && this.bids.count === 0 && this.asks.count === 0;
  }

  /** State hash: ids, reference prices (banded markets), counters, state, then bids and asks with their orders. */
  hashInto(d: StateDigest, market: MarketSpec, withGuard: boolean): void {
    d.number(this.updateId);
    d.number(this.lastTradeId);
    hashReferencesInto(this, d, market, withGuard);
    d.number(this.restCounter);
    d.number(this.restingCount);
    d.number(this.pendingCount);
    d.number(this.orderBookState);
    this.bids.hashInto(d, this.pool);
    this.asks.hashInto(d, this.pool);
  }

  /**
   * Both sides valid and holding restingCount orders, within the book's order limit, not crossed;
   * a closed book holds no orders; the reference prices consistent.
   */
  validate(market: MarketSpec, limits: EngineLimits, lastTimeUs: number): void {
    const maxLevels = limits.maxPriceLevelsPerSide;
    const bids = this.bids.validate(this.pool, this.marketIndex, this.pendingGtc[Side.Bid], maxLevels);
    const asks = this.asks.validate(this.pool, this.marketIndex, this.pendingGtc[Side.Ask], maxLevels);
    assert(bids + asks === this.restingCount, 'book resting count is off');
    assert(this.restingCount + this.pendingCount <= limits.maxOrdersPerBook, 'book holds more orders than its limit');
    const bestBid = this.bids.best();
    const bestAsk = this.asks.best();
    if (bestBid !== NO_LEVEL && bestAsk !== NO_LEVEL) {
      assert(this.bids.levelPrice[bestBid] < this.asks.levelPrice[bestAsk], 'book is crossed');
    }
    assert(this.orderBookState !== OrderBookState.Closed || this.restingCount + this.pendingCount === 0, 'a closed book holds orders');
    validateReferences(this, market, lastTimeUs);
  }
}
