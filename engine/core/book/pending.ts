// The speed bump: orders sequenced but not yet active, each waiting on an engine-time timer
// (timers.ts) due when its delay ends.
//
// Every delayed order waits the same config.speedBumpUs and engine time never decreases, so the
// timers' (due, seq) order is also sequence order: activations keep global sequence order across
// markets, as the snapshot and the state hash record it. A pending order is in no level and in no
// queue of the pool (its prev/next stay empty); its timer handle is kept by slot, so a cancel
// during the delay removes it in O(log n). The book counts its pending orders (pendingCount) and
// the price levels pending GTC orders reserve (pendingGtc); the queue keeps both in step.

import { assert } from '../assert.js';
import { expectSnapshot, type SnapshotReader, type SnapshotWriter, type StateDigest } from '../parts.js';
import { NO_TIMER, TimerKind, type Timers } from '../timers.js';
import type { Book } from './book.js';
import type { OrderIndex } from './orderIndex.js';
import { NO_SLOT, OrderState, type OrderPool, Of } from './orders.js';

export class PendingQueue {
  count = 0;
  /** The timer of each pending order, by pool slot (NO_TIMER for any other slot). */
  private readonly timerOf: Int32Array;

  constructor(
    private readonly pool: OrderPool,
    private readonly books: readonly Book[],
    private readonly timers: Timers,
    private readonly delayUs: number,
  ) {
    this.timerOf = new Int32Array(pool.capacity).fill(NO_TIMER);
  }

  /** Delays a fresh order until its speed bump ends; it becomes Pending and its book counts it. */
  push(slot: number): void {
    this.link(slot);
    const book = this.books[this.pool.u16[slot << Of.w16 | Of.marketIndex]];
    book.pendingCount++;
    if (this.pool.reservesLevel(slot)) book.pendingGtc[this.pool.u8[slot << Of.w8 | Of.side]]++;
  }

  /** Takes a pending order out (its bump ended, or it is cancelled); it becomes Active. */
  remove(slot: number): void {
    const pool = this.pool;
    assert(pool.u8[slot << Of.w8 | Of.state] === OrderState.Pending && this.count > 0, 'removing an order that is not pending');
    this.timers.remove(this.timerOf[slot]);
    this.timerOf[slot] = NO_TIMER;
    pool.u8[slot << Of.w8 | Of.state] = OrderState.Active;
    this.count--;
    const book = this.books[pool.u16[slot << Of.w16 | Of.marketIndex]];
    book.pendingCount--;
    if (pool.reservesLevel(slot)) book.pendingGtc[pool.u8[slot << Of.w8 | Of.side]]--;
  }

  /** The pending orders in activation order (snapshots, hashes, operator walks; allocates). */
  inOrder(): number[] {
    return this.timers.inOrder(TimerKind.SpeedBump);
  }

  private link(slot: number): void {
    const pool = this.pool;
    assert(pool.u8[slot << Of.w8 | Of.state] === OrderState.Active && pool.i32[slot << Of.w32 | Of.next] === NO_SLOT, 'queueing an order that is not fresh');
    this.timerOf[slot] = this.timers.add(pool.f64[slot << Of.f64 | Of.createdAtUs] + this.delayUs, TimerKind.SpeedBump, slot);
    pool.u8[slot << Of.w8 | Of.state] = OrderState.Pending;
    this.count++;
  }

  /** Snapshot: the count, then the order ids in activation order. */
  exportTo(w: SnapshotWriter): void {
    w.number(this.count);
    for (const slot of this.inOrder()) w.number(this.pool.f64[slot << Of.f64 | Of.orderId]);
  }

  /** Delays the (imported, Active) orders a snapshot names, in its order; the books' counters came with them. */
  importFrom(r: SnapshotReader, index: OrderIndex): void {
    const count = r.number();
    let lastCreatedAtUs = 0;
    for (let i = 0; i < count; i++) {
      const slot = index.find(r.number());
      expectSnapshot(slot !== NO_SLOT && this.pool.u8[slot << Of.w8 | Of.state] === OrderState.Active, 'a pending order is unknown or already placed');
      expectSnapshot(this.pool.f64[slot << Of.f64 | Of.createdAtUs] >= lastCreatedAtUs, 'pending orders out of time order');
      lastCreatedAtUs = this.pool.f64[slot << Of.f64 | Of.createdAtUs];
      this.link(slot);
    }
  }

  /** State hash: the count, then each order in activation order. */
  hashInto(d: StateDigest): void {
    d.number(this.count);
    for (const slot of this.inOrder()) this.pool.hashOrderInto(d, slot);
  }

  /**
   * Each pending order waits on its own speed-bump timer, due when its delay ends; the timers are
   * in sequence (time) order; the count is right; nothing waits without a speed bump.
   */
  validate(): void {
    const pool = this.pool;
    let count = 0;
    for (let slot = 0; slot < pool.capacity; slot++) {
      const timer = this.timerOf[slot];
      if (pool.u8[slot << Of.w8 | Of.state] !== OrderState.Pending) {
        assert(timer === NO_TIMER, 'a timer kept for an order that is not pending');
        continue;
      }
      assert(timer !== NO_TIMER && this.timers.kindOf(timer) === TimerKind.SpeedBump && this.timers.refOf(timer) === slot, 'a pending order without its timer');
      assert(this.timers.dueOf(timer) === pool.f64[slot << Of.f64 | Of.createdAtUs] + this.delayUs, 'a pending order is due at another time than its bump ends');
      assert(pool.i32[slot << Of.w32 | Of.prev] === NO_SLOT && pool.i32[slot << Of.w32 | Of.next] === NO_SLOT, 'a pending order is linked into a queue');
      count++;
    }
    assert(count === this.count && this.inOrder().length === count, 'pending count is off');
    let previous = NO_SLOT;
    for (const slot of this.inOrder()) {
      assert(previous === NO_SLOT || pool.f64[previous << Of.f64 | Of.createdAtUs] <= pool.f64[slot << Of.f64 | Of.createdAtUs], 'pending queue out of time order');
      previous = slot;
    }
    assert(this.delayUs > 0 || count === 0, 'pending orders without a speed bump');
  }
}
