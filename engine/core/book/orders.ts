// The order pool: every open order (pending, being matched, or resting) in preallocated typed
// arrays, addressed by slot index.
//
// One slot per open order, taken from a free list and returned when the order reaches a final
// state, so placing and matching allocate no objects. A slot holds all of its order's fields in
// 128 bytes, two adjacent cache lines, so that reaching an order that has not been touched for a
// while (a cancel, a maker at the head of its level) misses the caches twice, not once per field;
// the 53-bit fields (ids, quantities, amounts, times) are float64 values used as exact integer
// stores. Of names where each field lives; an index is a shift and an or (`slot << Of.f64 |
// Of.priceTicks`), which is why a pool holds at most MAX_ORDER_SLOTS slots.
// `prev`/`next` link an order into at most one queue at a time: its price level's FIFO while it
// rests, the free list while the slot is free (a pending order waits on a timer instead, pending.ts).
// `accountPrev`/`accountNext` link each open order into its account's list, oldest first, which
// bounds cancel-by-clientId, cancel-all and open-order queries by maxOpenOrdersPerAccount.
//
// A market order (orderType Market) never rests: it is pending, then matched and ended in one
// activation. Its qtyLots is a lot cap (the quantity asked for, or for an order by quote quantity
// the most lots it could ever get, see spot/hold.ts) and quoteLimitUnits the most quote it may
// exchange in total (for a bid also exactly what it locked).
//
// Capacity: markets × maxOrdersPerBook (capped by maxAccounts × maxOpenOrdersPerAccount); every
// market counts its resting, pending and in-flight orders against maxOrdersPerBook before a
// place is accepted, so allocation cannot fail.

import { OrderStatus, OrderType, TimeInForce } from '../../bus/types.js';
import { assert } from '../assert.js';
import { expectSnapshot, type SnapshotReader, type SnapshotWriter, type StateDigest } from '../parts.js';
import type { PriceTicks, QtyLots } from '../units.js';
import type { OrderIndex } from './orderIndex.js';

/** Lifecycle of a pool slot. */
export const OrderState = {
  Free: 0,
  /** Sequenced, funds locked, waiting out the speed bump. */
  Pending: 1,
  /** Being matched inside the current apply. */
  Active: 2,
  Resting: 3,
} as const;

export const NO_SLOT = -1;

/**
 * Where each field of an order lives in its slot, for OrderPool's views. `f64`, `w32`, `w16` and
 * `w8` are the shifts from a slot to its first element in the view of that width (a slot holds
 * 16, 32, 64 and 128 of them); every other member is the field's element within its slot, read
 * through the view of its width. Bytes 0–79: the 53-bit integers, orderId … restNumber (f64);
 * 80–91: accountId, clientId, requestId (u32); 92–111: the queue links and the level (i32,
 * NO_SLOT when none); 112–115: frontId, marketIndex (u16); 116–121: the one-byte fields (u8).
 */
export const enum Of {
  f64 = 4, w32 = 5, w16 = 6, w8 = 7,
  orderId = 0, priceTicks = 1, qtyLots = 2, remainingLots = 3, executedLots = 4, executedQuoteUnits = 5, createdAtUs = 6,
  /** The quote quantity a market order was placed with (0: placed by quantity, or a limit order). */
  quoteQtyUnits = 7,
  /** Market orders: the most quote units the order may pay (bid) or receive (ask) in total. */
  quoteLimitUnits = 8,
  /** Time priority among resting orders: a counter stamped when the order joins its level. */
  restNumber = 9,
  accountId = 20, clientId = 21, requestId = 22,
  prev = 23, next = 24,
  /** Level slot in its book side while resting. */
  level = 25,
  accountPrev = 26, accountNext = 27,
  frontId = 56, marketIndex = 57,
  side = 116, orderType = 117, timeInForce = 118, selfTradePrevention = 119,
  /** OrderFlag bits (PostOnly, HasClientId, …). */
  flags = 120,
  state = 121,
}

/** Bytes of one order's slot in the pool (128). */
const SLOT_BYTES = 1 << Of.w8;

/** The most slots a pool holds (2^24): a slot's last byte index, slot << Of.w8 | 127, stays a positive int32. */
export const MAX_ORDER_SLOTS = 1 << (31 - Of.w8);

export class OrderPool {
  readonly capacity: number;
  liveCount = 0;
  private freeHead: number;

  /**
   * The slots, one buffer seen through one view per width: field `x` of `slot` is
   * `f64[slot << Of.f64 | Of.x]` for a 53-bit field, `u32[slot << Of.w32 | Of.x]` (accountId,
   * clientId, requestId) or `i32[…]` (links, level) for a 32-bit one, `u16[slot << Of.w16 | Of.x]`
   * and `u8[slot << Of.w8 | Of.x]`.
   */
  readonly f64: Float64Array;
  readonly u32: Uint32Array;
  readonly i32: Int32Array;
  readonly u16: Uint16Array;
  readonly u8: Uint8Array;

  /** Per account (indexed by account id): the open-order list and its length. */
  readonly accountHead: Int32Array;
  readonly accountTail: Int32Array;
  readonly accountOpenCount: Int32Array;
  /** Called with the account that opens an order (a perpetual order adds exposure: margin/trigger-index.ts). */
  opened: (accountId: number) => void = () => {};

  constructor(capacity: number, maxAccounts: number) {
    assert(Number.isSafeInteger(capacity) && capacity > 0 && capacity <= MAX_ORDER_SLOTS, 'order pool capacity out of range');
    this.capacity = capacity;
    const bytes = new ArrayBuffer(capacity * SLOT_BYTES);
    this.f64 = new Float64Array(bytes);
    this.u32 = new Uint32Array(bytes);
    this.i32 = new Int32Array(bytes);
    this.u16 = new Uint16Array(bytes);
    this.u8 = new Uint8Array(bytes);
    // Every slot out of every queue, and all of them on the free list in slot order.
    for (let slot = 0; slot < capacity; slot++) {
      const w = slot << Of.w32;
      this.i32[w | Of.prev] = NO_SLOT;
      this.i32[w | Of.next] = slot + 1 < capacity ? slot + 1 : NO_SLOT;
      this.i32[w | Of.level] = NO_SLOT;
      this.i32[w | Of.accountPrev] = NO_SLOT;
      this.i32[w | Of.accountNext] = NO_SLOT;
    }
    this.freeHead = 0;
    this.accountHead = new Int32Array(maxAccounts + 1).fill(NO_SLOT);
    this.accountTail = new Int32Array(maxAccounts + 1).fill(NO_SLOT);
    this.accountOpenCount = new Int32Array(maxAccounts + 1);
  }

  /** Takes a free slot for an order of `accountId` and appends it to the account's list. */
  open(accountId: number): number {
    const slot = this.freeHead;
    const f = slot << Of.f64;
    const w = slot << Of.w32;
    const b = slot << Of.w8;
    assert(slot !== NO_SLOT && this.u8[b | Of.state] === OrderState.Free, 'order pool exhausted despite per-book limits');
    this.freeHead = this.i32[w | Of.next];
    this.i32[w | Of.prev] = NO_SLOT;
    this.i32[w | Of.next] = NO_SLOT;
    this.i32[w | Of.level] = NO_SLOT;
    this.u32[w | Of.accountId] = accountId;
    this.f64[f | Of.executedLots] = 0;
    this.f64[f | Of.executedQuoteUnits] = 0;
    this.f64[f | Of.restNumber] = 0;
    this.u8[b | Of.orderType] = OrderType.Limit;
    this.f64[f | Of.quoteQtyUnits] = 0;
    this.f64[f | Of.quoteLimitUnits] = 0;
    const tail = this.accountTail[accountId];
    this.i32[w | Of.accountPrev] = tail;
    this.i32[w | Of.accountNext] = NO_SLOT;
    if (tail === NO_SLOT) this.accountHead[accountId] = slot;
    else this.i32[tail << Of.w32 | Of.accountNext] = slot;
    this.accountTail[accountId] = slot;
    this.accountOpenCount[accountId]++;
    this.u8[b | Of.state] = OrderState.Active;
    this.liveCount++;
    this.opened(accountId);
    return slot;
  }

  /** Returns a slot whose order reached a final state; it must already be out of every queue. */
  close(slot: number): void {
    const w = slot << Of.w32;
    const b = slot << Of.w8;
    assert(this.u8[b | Of.state] !== OrderState.Free, 'closing a free slot');
    assert(this.i32[w | Of.prev] === NO_SLOT && this.i32[w | Of.next] === NO_SLOT, 'closing an order still in a queue');
    const accountId = this.u32[w | Of.accountId];
    const before = this.i32[w | Of.accountPrev];
    const after = this.i32[w | Of.accountNext];
    if (before === NO_SLOT) this.accountHead[accountId] = after;
    else this.i32[before << Of.w32 | Of.accountNext] = after;
    if (after === NO_SLOT) this.accountTail[accountId] = before;
    else this.i32[after << Of.w32 | Of.accountPrev] = before;
    this.i32[w | Of.accountPrev] = NO_SLOT;
    this.i32[w | Of.accountNext] = NO_SLOT;
    this.accountOpenCount[accountId]--;
    this.u8[b | Of.state] = OrderState.Free;
    this.i32[w | Of.level] = NO_SLOT;
    this.i32[w | Of.next] = this.freeHead;
    this.freeHead = slot;
    this.liveCount--;
  }

  isMarket(slot: number): boolean {
    return this.u8[slot << Of.w8 | Of.orderType] === OrderType.Market;
  }

  /** A pending limit GTC order may add a price level when it rests, so it reserves one. */
  reservesLevel(slot: number): boolean {
    return this.u8[slot << Of.w8 | Of.orderType] === OrderType.Limit && this.u8[slot << Of.w8 | Of.timeInForce] === TimeInForce.GTC;
  }

  price(slot: number): PriceTicks {
    return this.f64[slot << Of.f64 | Of.priceTicks] as PriceTicks;
  }

  remaining(slot: number): QtyLots {
    return this.f64[slot << Of.f64 | Of.remainingLots] as QtyLots;
  }

  /**
   * Snapshot: the open orders, in account order then each account's placement order, every field.
   * Between commands every open order is pending or resting.
   */
  exportTo(w: SnapshotWriter, accountCount: number): void {
    w.number(this.liveCount);
    let written = 0;
    for (let accountId = 1; accountId <= accountCount; accountId++) {
      for (let slot = this.accountHead[accountId]; slot !== NO_SLOT; slot = this.i32[slot << Of.w32 | Of.accountNext]) {
        assert(this.u8[slot << Of.w8 | Of.state] === OrderState.Pending || this.u8[slot << Of.w8 | Of.state] === OrderState.Resting, 'snapshot between commands only');
        w.number(this.f64[slot << Of.f64 | Of.orderId]);
        w.number(this.u32[slot << Of.w32 | Of.accountId]);
        w.number(this.u16[slot << Of.w16 | Of.marketIndex]);
        w.number(this.u8[slot << Of.w8 | Of.side]);
        w.number(this.u8[slot << Of.w8 | Of.orderType]);
        w.number(this.u8[slot << Of.w8 | Of.timeInForce]);
        w.number(this.u8[slot << Of.w8 | Of.selfTradePrevention]);
        w.number(this.u8[slot << Of.w8 | Of.flags]);
        w.number(this.u8[slot << Of.w8 | Of.state]);
        this.exportQuantitiesTo(w, slot);
        written++;
      }
    }
    assert(written === this.liveCount, 'open orders outside every account list');
  }

  private exportQuantitiesTo(w: SnapshotWriter, slot: number): void {
    w.number(this.f64[slot << Of.f64 | Of.priceTicks]);
    w.number(this.f64[slot << Of.f64 | Of.qtyLots]);
    w.number(this.f64[slot << Of.f64 | Of.remainingLots]);
    w.number(this.f64[slot << Of.f64 | Of.executedLots]);
    w.number(this.f64[slot << Of.f64 | Of.executedQuoteUnits]);
    w.number(this.f64[slot << Of.f64 | Of.createdAtUs]);
    w.number(this.f64[slot << Of.f64 | Of.quoteQtyUnits]);
    w.number(this.f64[slot << Of.f64 | Of.quoteLimitUnits]);
    w.number(this.f64[slot << Of.f64 | Of.restNumber]);
    w.number(this.u32[slot << Of.w32 | Of.clientId]);
    w.number(this.u32[slot << Of.w32 | Of.requestId]);
    w.number(this.u16[slot << Of.w16 | Of.frontId]);
  }

  /**
   * Opens every order of a snapshot and indexes it. Each stays Active until its book or the
   * speed-bump queue takes it (they set the final state), so an order neither links is caught
   * by expectAllPlaced.
   */
  importFrom(r: SnapshotReader, accountExists: (accountId: number) => boolean, index: OrderIndex, marketCount: number): void {
    const orderCount = r.number();
    expectSnapshot(orderCount >= 0 && orderCount <= this.capacity, 'more open orders than the pool holds');
    for (let i = 0; i < orderCount; i++) {
      const orderId = r.number();
      const accountId = r.number();
      expectSnapshot(accountExists(accountId) && orderId > 0 && index.find(orderId) === NO_SLOT, 'an order names an unknown account or a repeated id');
      const slot = this.open(accountId);
      this.f64[slot << Of.f64 | Of.orderId] = orderId;
      const marketIndex = r.number();
      expectSnapshot(marketIndex >= 0 && marketIndex < marketCount, 'an order names an unknown market');
      this.u16[slot << Of.w16 | Of.marketIndex] = marketIndex;
      this.u8[slot << Of.w8 | Of.side] = r.number();
      this.u8[slot << Of.w8 | Of.orderType] = r.number();
      this.u8[slot << Of.w8 | Of.timeInForce] = r.number();
      this.u8[slot << Of.w8 | Of.selfTradePrevention] = r.number();
      this.u8[slot << Of.w8 | Of.flags] = r.number();
      const state = r.number();
      expectSnapshot(state === OrderState.Pending || state === OrderState.Resting, 'an order is neither pending nor resting');
      this.importQuantitiesFrom(r, slot);
      index.insert(orderId, slot);
    }
  }

  private importQuantitiesFrom(r: SnapshotReader, slot: number): void {
    this.f64[slot << Of.f64 | Of.priceTicks] = r.number();
    this.f64[slot << Of.f64 | Of.qtyLots] = r.number();
    this.f64[slot << Of.f64 | Of.remainingLots] = r.number();
    this.f64[slot << Of.f64 | Of.executedLots] = r.number();
    this.f64[slot << Of.f64 | Of.executedQuoteUnits] = r.number();
    this.f64[slot << Of.f64 | Of.createdAtUs] = r.number();
    this.f64[slot << Of.f64 | Of.quoteQtyUnits] = r.number();
    this.f64[slot << Of.f64 | Of.quoteLimitUnits] = r.number();
    this.f64[slot << Of.f64 | Of.restNumber] = r.number();
    this.u32[slot << Of.w32 | Of.clientId] = r.number();
    this.u32[slot << Of.w32 | Of.requestId] = r.number();
    this.u16[slot << Of.w16 | Of.frontId] = r.number();
  }

  /** After an import: every open order is in a book or in the speed-bump queue. */
  expectAllPlaced(): void {
    for (let slot = 0; slot < this.capacity; slot++) {
      expectSnapshot(this.u8[slot << Of.w8 | Of.state] !== OrderState.Active, 'an open order is neither in a book nor pending');
    }
  }

  /** State hash of one open order, every field (books and the speed-bump queue hash their orders). */
  hashOrderInto(d: StateDigest, slot: number): void {
    d.number(this.f64[slot << Of.f64 | Of.orderId]);
    d.number(this.u32[slot << Of.w32 | Of.accountId]);
    d.number(this.u16[slot << Of.w16 | Of.marketIndex]);
    d.number(this.u8[slot << Of.w8 | Of.side]);
    d.number(this.u8[slot << Of.w8 | Of.orderType]);
    d.number(this.f64[slot << Of.f64 | Of.quoteQtyUnits]);
    d.number(this.f64[slot << Of.f64 | Of.quoteLimitUnits]);
    d.number(this.f64[slot << Of.f64 | Of.priceTicks]);
    d.number(this.f64[slot << Of.f64 | Of.qtyLots]);
    d.number(this.f64[slot << Of.f64 | Of.remainingLots]);
    d.number(this.f64[slot << Of.f64 | Of.executedLots]);
    d.number(this.f64[slot << Of.f64 | Of.executedQuoteUnits]);
    d.number(this.f64[slot << Of.f64 | Of.createdAtUs]);
    d.number(this.f64[slot << Of.f64 | Of.restNumber]);
    d.number(this.u32[slot << Of.w32 | Of.clientId]);
    d.number(this.u8[slot << Of.w8 | Of.flags]);
    d.number(this.u8[slot << Of.w8 | Of.timeInForce]);
    d.number(this.u8[slot << Of.w8 | Of.selfTradePrevention]);
    d.number(this.u8[slot << Of.w8 | Of.state]);
    d.number(this.u16[slot << Of.w16 | Of.frontId]);
    d.number(this.u32[slot << Of.w32 | Of.requestId]);
  }

  /** State hash of each account's open-order list: its length and its order ids, oldest first. */
  hashAccountListsInto(d: StateDigest, accountCount: number): void {
    for (let accountId = 1; accountId <= accountCount; accountId++) {
      d.number(this.accountOpenCount[accountId]);
      for (let slot = this.accountHead[accountId]; slot !== NO_SLOT; slot = this.i32[slot << Of.w32 | Of.accountNext]) d.number(this.f64[slot << Of.f64 | Of.orderId]);
    }
  }

  /**
   * The free list and the live orders account for every slot, and each account's list is well
   * linked, holds only its own open orders, matches its count and respects the account limit.
   */
  validate(accountCount: number, maxOpenOrdersPerAccount: number): void {
    assert(this.countFree() + this.liveCount === this.capacity, 'free and live slots do not add up to the pool');
    for (let accountId = 1; accountId <= accountCount; accountId++) {
      let count = 0;
      let previous = NO_SLOT;
      for (let slot = this.accountHead[accountId]; slot !== NO_SLOT; slot = this.i32[slot << Of.w32 | Of.accountNext]) {
        assert(this.u32[slot << Of.w32 | Of.accountId] === accountId && this.i32[slot << Of.w32 | Of.accountPrev] === previous, 'account order list link broken');
        assert(this.u8[slot << Of.w8 | Of.state] !== OrderState.Free, 'a free slot in an account list');
        previous = slot;
        count++;
        assert(count <= this.capacity, 'account order list has a cycle');
      }
      assert(this.accountTail[accountId] === previous && count === this.accountOpenCount[accountId], 'account open count is off');
      assert(count <= maxOpenOrdersPerAccount, 'account holds more open orders than its limit');
    }
  }

  /** Free slots reachable from the free list (validateInvariants compares it to liveCount). */
  countFree(): number {
    let count = 0;
    for (let slot = this.freeHead; slot !== NO_SLOT; slot = this.i32[slot << Of.w32 | Of.next]) {
      assert(this.u8[slot << Of.w8 | Of.state] === OrderState.Free, 'a used slot on the free list');
      count++;
      assert(count <= this.capacity, 'free list has a cycle');
    }
    return count;
  }
}

/** Status of an order that is still open: New until its first fill, then PartiallyFilled. */
export function openStatus(pool: OrderPool, slot: number): OrderStatus {
  return pool.f64[slot << Of.f64 | Of.executedLots] > 0 ? OrderStatus.PartiallyFilled : OrderStatus.New;
}
