// The order pool: every open order (pending, being matched, or resting) in preallocated typed
// arrays, addressed by slot index.
//
// One slot per open order, taken from a free list and returned when the order reaches a final
// state, so placing and matching allocate no objects. Fields are parallel typed arrays; the
// 53-bit ones (ids, quantities, amounts, times) are Float64Arrays used as exact integer stores.
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

export class OrderPool {
  readonly capacity: number;
  liveCount = 0;
  private freeHead: number;

  readonly orderId: Float64Array;
  readonly priceTicks: Float64Array;
  readonly qtyLots: Float64Array;
  readonly remainingLots: Float64Array;
  readonly executedLots: Float64Array;
  readonly executedQuoteUnits: Float64Array;
  readonly createdAtUs: Float64Array;
  /** The quote quantity a market order was placed with (0: placed by quantity, or a limit order). */
  readonly quoteQtyUnits: Float64Array;
  /** Market orders: the most quote units the order may pay (bid) or receive (ask) in total. */
  readonly quoteLimitUnits: Float64Array;
  /** Time priority among resting orders: a counter stamped when the order joins its level. */
  readonly restNumber: Float64Array;
  readonly accountId: Uint32Array;
  readonly clientId: Uint32Array;
  readonly requestId: Uint32Array;
  readonly frontId: Uint16Array;
  readonly marketIndex: Uint16Array;
  readonly side: Uint8Array;
  readonly orderType: Uint8Array;
  readonly timeInForce: Uint8Array;
  readonly selfTradePrevention: Uint8Array;
  /** OrderFlag bits PostOnly and HasClientId. */
  readonly flags: Uint8Array;
  readonly state: Uint8Array;
  readonly prev: Int32Array;
  readonly next: Int32Array;
  /** Level slot in its book side while resting. */
  readonly level: Int32Array;
  readonly accountPrev: Int32Array;
  readonly accountNext: Int32Array;

  /** Per account (indexed by account id): the open-order list and its length. */
  readonly accountHead: Int32Array;
  readonly accountTail: Int32Array;
  readonly accountOpenCount: Int32Array;
  /** Called with the account that opens an order (a perpetual order adds exposure: margin/trigger-index.ts). */
  opened: (accountId: number) => void = () => {};

  constructor(capacity: number, maxAccounts: number) {
    assert(Number.isSafeInteger(capacity) && capacity > 0 && capacity < 0x7fffffff, 'order pool capacity out of range');
    this.capacity = capacity;
    this.orderId = new Float64Array(capacity);
    this.priceTicks = new Float64Array(capacity);
    this.qtyLots = new Float64Array(capacity);
    this.remainingLots = new Float64Array(capacity);
    this.executedLots = new Float64Array(capacity);
    this.executedQuoteUnits = new Float64Array(capacity);
    this.createdAtUs = new Float64Array(capacity);
    this.quoteQtyUnits = new Float64Array(capacity);
    this.quoteLimitUnits = new Float64Array(capacity);
    this.restNumber = new Float64Array(capacity);
    this.accountId = new Uint32Array(capacity);
    this.clientId = new Uint32Array(capacity);
    this.requestId = new Uint32Array(capacity);
    this.frontId = new Uint16Array(capacity);
    this.marketIndex = new Uint16Array(capacity);
    this.side = new Uint8Array(capacity);
    this.orderType = new Uint8Array(capacity);
    this.timeInForce = new Uint8Array(capacity);
    this.selfTradePrevention = new Uint8Array(capacity);
    this.flags = new Uint8Array(capacity);
    this.state = new Uint8Array(capacity);
    this.prev = new Int32Array(capacity).fill(NO_SLOT);
    this.next = new Int32Array(capacity);
    this.level = new Int32Array(capacity).fill(NO_SLOT);
    this.accountPrev = new Int32Array(capacity).fill(NO_SLOT);
    this.accountNext = new Int32Array(capacity).fill(NO_SLOT);
    for (let slot = 0; slot < capacity; slot++) this.next[slot] = slot + 1 < capacity ? slot + 1 : NO_SLOT;
    this.freeHead = 0;
    this.accountHead = new Int32Array(maxAccounts + 1).fill(NO_SLOT);
    this.accountTail = new Int32Array(maxAccounts + 1).fill(NO_SLOT);
    this.accountOpenCount = new Int32Array(maxAccounts + 1);
  }

  /** Takes a free slot for an order of `accountId` and appends it to the account's list. */
  open(accountId: number): number {
    const slot = this.freeHead;
    assert(slot !== NO_SLOT && this.state[slot] === OrderState.Free, 'order pool exhausted despite per-book limits');
    this.freeHead = this.next[slot];
    this.prev[slot] = NO_SLOT;
    this.next[slot] = NO_SLOT;
    this.level[slot] = NO_SLOT;
    this.accountId[slot] = accountId;
    this.executedLots[slot] = 0;
    this.executedQuoteUnits[slot] = 0;
    this.restNumber[slot] = 0;
    this.orderType[slot] = OrderType.Limit;
    this.quoteQtyUnits[slot] = 0;
    this.quoteLimitUnits[slot] = 0;
    const tail = this.accountTail[accountId];
    this.accountPrev[slot] = tail;
    this.accountNext[slot] = NO_SLOT;
    if (tail === NO_SLOT) this.accountHead[accountId] = slot;
    else this.accountNext[tail] = slot;
    this.accountTail[accountId] = slot;
    this.accountOpenCount[accountId]++;
    this.state[slot] = OrderState.Active;
    this.liveCount++;
    this.opened(accountId);
    return slot;
  }

  /** Returns a slot whose order reached a final state; it must already be out of every queue. */
  close(slot: number): void {
    assert(this.state[slot] !== OrderState.Free, 'closing a free slot');
    assert(this.prev[slot] === NO_SLOT && this.next[slot] === NO_SLOT, 'closing an order still in a queue');
    const accountId = this.accountId[slot];
    const before = this.accountPrev[slot];
    const after = this.accountNext[slot];
    if (before === NO_SLOT) this.accountHead[accountId] = after;
    else this.accountNext[before] = after;
    if (after === NO_SLOT) this.accountTail[accountId] = before;
    else this.accountPrev[after] = before;
    this.accountPrev[slot] = NO_SLOT;
    this.accountNext[slot] = NO_SLOT;
    this.accountOpenCount[accountId]--;
    this.state[slot] = OrderState.Free;
    this.level[slot] = NO_SLOT;
    this.next[slot] = this.freeHead;
    this.freeHead = slot;
    this.liveCount--;
  }

  isMarket(slot: number): boolean {
    return this.orderType[slot] === OrderType.Market;
  }

  /** A pending limit GTC order may add a price level when it rests, so it reserves one. */
  reservesLevel(slot: number): boolean {
    return this.orderType[slot] === OrderType.Limit && this.timeInForce[slot] === TimeInForce.GTC;
  }

  price(slot: number): PriceTicks {
    return this.priceTicks[slot] as PriceTicks;
  }

  remaining(slot: number): QtyLots {
    return this.remainingLots[slot] as QtyLots;
  }

  /**
   * Snapshot: the open orders, in account order then each account's placement order, every field.
   * Between commands every open order is pending or resting.
   */
  exportTo(w: SnapshotWriter, accountCount: number): void {
    w.number(this.liveCount);
    let written = 0;
    for (let accountId = 1; accountId <= accountCount; accountId++) {
      for (let slot = this.accountHead[accountId]; slot !== NO_SLOT; slot = this.accountNext[slot]) {
        assert(this.state[slot] === OrderState.Pending || this.state[slot] === OrderState.Resting, 'snapshot between commands only');
        w.number(this.orderId[slot]);
        w.number(this.accountId[slot]);
        w.number(this.marketIndex[slot]);
        w.number(this.side[slot]);
        w.number(this.orderType[slot]);
        w.number(this.timeInForce[slot]);
        w.number(this.selfTradePrevention[slot]);
        w.number(this.flags[slot]);
        w.number(this.state[slot]);
        this.exportQuantitiesTo(w, slot);
        written++;
      }
    }
    assert(written === this.liveCount, 'open orders outside every account list');
  }

  private exportQuantitiesTo(w: SnapshotWriter, slot: number): void {
    w.number(this.priceTicks[slot]);
    w.number(this.qtyLots[slot]);
    w.number(this.remainingLots[slot]);
    w.number(this.executedLots[slot]);
    w.number(this.executedQuoteUnits[slot]);
    w.number(this.createdAtUs[slot]);
    w.number(this.quoteQtyUnits[slot]);
    w.number(this.quoteLimitUnits[slot]);
    w.number(this.restNumber[slot]);
    w.number(this.clientId[slot]);
    w.number(this.requestId[slot]);
    w.number(this.frontId[slot]);
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
      this.orderId[slot] = orderId;
      const marketIndex = r.number();
      expectSnapshot(marketIndex >= 0 && marketIndex < marketCount, 'an order names an unknown market');
      this.marketIndex[slot] = marketIndex;
      this.side[slot] = r.number();
      this.orderType[slot] = r.number();
      this.timeInForce[slot] = r.number();
      this.selfTradePrevention[slot] = r.number();
      this.flags[slot] = r.number();
      const state = r.number();
      expectSnapshot(state === OrderState.Pending || state === OrderState.Resting, 'an order is neither pending nor resting');
      this.importQuantitiesFrom(r, slot);
      index.insert(orderId, slot);
    }
  }

  private importQuantitiesFrom(r: SnapshotReader, slot: number): void {
    this.priceTicks[slot] = r.number();
    this.qtyLots[slot] = r.number();
    this.remainingLots[slot] = r.number();
    this.executedLots[slot] = r.number();
    this.executedQuoteUnits[slot] = r.number();
    this.createdAtUs[slot] = r.number();
    this.quoteQtyUnits[slot] = r.number();
    this.quoteLimitUnits[slot] = r.number();
    this.restNumber[slot] = r.number();
    this.clientId[slot] = r.number();
    this.requestId[slot] = r.number();
    this.frontId[slot] = r.number();
  }

  /** After an import: every open order is in a book or in the speed-bump queue. */
  expectAllPlaced(): void {
    for (let slot = 0; slot < this.capacity; slot++) {
      expectSnapshot(this.state[slot] !== OrderState.Active, 'an open order is neither in a book nor pending');
    }
  }

  /** State hash of one open order, every field (books and the speed-bump queue hash their orders). */
  hashOrderInto(d: StateDigest, slot: number): void {
    d.number(this.orderId[slot]);
    d.number(this.accountId[slot]);
    d.number(this.marketIndex[slot]);
    d.number(this.side[slot]);
    d.number(this.orderType[slot]);
    d.number(this.quoteQtyUnits[slot]);
    d.number(this.quoteLimitUnits[slot]);
    d.number(this.priceTicks[slot]);
    d.number(this.qtyLots[slot]);
    d.number(this.remainingLots[slot]);
    d.number(this.executedLots[slot]);
    d.number(this.executedQuoteUnits[slot]);
    d.number(this.createdAtUs[slot]);
    d.number(this.restNumber[slot]);
    d.number(this.clientId[slot]);
    d.number(this.flags[slot]);
    d.number(this.timeInForce[slot]);
    d.number(this.selfTradePrevention[slot]);
    d.number(this.state[slot]);
    d.number(this.frontId[slot]);
    d.number(this.requestId[slot]);
  }

  /** State hash of each account's open-order list: its length and its order ids, oldest first. */
  hashAccountListsInto(d: StateDigest, accountCount: number): void {
    for (let accountId = 1; accountId <= accountCount; accountId++) {
      d.number(this.accountOpenCount[accountId]);
      for (let slot = this.accountHead[accountId]; slot !== NO_SLOT; slot = this.accountNext[slot]) d.number(this.orderId[slot]);
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
      for (let slot = this.accountHead[accountId]; slot !== NO_SLOT; slot = this.accountNext[slot]) {
        assert(this.accountId[slot] === accountId && this.accountPrev[slot] === previous, 'account order list link broken');
        assert(this.state[slot] !== OrderState.Free, 'a free slot in an account list');
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
    for (let slot = this.freeHead; slot !== NO_SLOT; slot = this.next[slot]) {
      assert(this.state[slot] === OrderState.Free, 'a used slot on the free list');
      count++;
      assert(count <= this.capacity, 'free list has a cycle');
    }
    return count;
  }
}

/** Status of an order that is still open: New until its first fill, then PartiallyFilled. */
export function openStatus(pool: OrderPool, slot: number): OrderStatus {
  return pool.executedLots[slot] > 0 ? OrderStatus.PartiallyFilled : OrderStatus.New;
}
