// The speed-bump queue: orders sequenced but not yet active, in sequence order.
//
// Every delayed order waits the same config.speedBumpUs and engine time never decreases, so
// sequence order is also activation-time order and a FIFO is enough: the head is always the next
// order due (nextWakeUs). The queue is a doubly linked list through the order pool's prev/next
// (a pending order is in no level), so a cancel during the delay unlinks in O(1). One queue
// serves all markets, which keeps activations in global sequence order.

import { assert } from '../assert.js';
import { expectSnapshot, type SnapshotReader, type SnapshotWriter, type StateDigest } from '../parts.js';
import type { OrderIndex } from './orderIndex.js';
import { NO_SLOT, OrderState, type OrderPool } from './orders.js';

export class PendingQueue {
  head = NO_SLOT;
  tail = NO_SLOT;
  count = 0;

  constructor(private readonly pool: OrderPool) {}

  push(slot: number): void {
    const pool = this.pool;
    assert(pool.state[slot] === OrderState.Active && pool.next[slot] === NO_SLOT, 'queueing an order that is not fresh');
    assert(this.tail === NO_SLOT || pool.createdAtUs[this.tail] <= pool.createdAtUs[slot], 'pending queue out of time order');
    pool.prev[slot] = this.tail;
    pool.next[slot] = NO_SLOT;
    if (this.tail === NO_SLOT) this.head = slot;
    else pool.next[this.tail] = slot;
    this.tail = slot;
    pool.state[slot] = OrderState.Pending;
    this.count++;
  }

  /** Unlinks a pending order (activation or cancel); it becomes Active. */
  remove(slot: number): void {
    const pool = this.pool;
    assert(pool.state[slot] === OrderState.Pending && this.count > 0, 'removing an order that is not pending');
    const before = pool.prev[slot];
    const after = pool.next[slot];
    if (before === NO_SLOT) this.head = after;
    else pool.next[before] = after;
    if (after === NO_SLOT) this.tail = before;
    else pool.prev[after] = before;
    pool.prev[slot] = NO_SLOT;
    pool.next[slot] = NO_SLOT;
    pool.state[slot] = OrderState.Active;
    this.count--;
  }

  /** Snapshot: the count, then the order ids in queue order. */
  exportTo(w: SnapshotWriter): void {
    w.number(this.count);
    for (let slot = this.head; slot !== NO_SLOT; slot = this.pool.next[slot]) w.number(this.pool.orderId[slot]);
  }

  /** Queues the (imported, Active) orders a snapshot names, in its order. */
  importFrom(r: SnapshotReader, index: OrderIndex): void {
    const count = r.number();
    for (let i = 0; i < count; i++) {
      const slot = index.find(r.number());
      expectSnapshot(slot !== NO_SLOT && this.pool.state[slot] === OrderState.Active, 'a pending order is unknown or already placed');
      this.push(slot);
    }
  }

  /** State hash: the count, then each order in queue order. */
  hashInto(d: StateDigest): void {
    d.number(this.count);
    for (let slot = this.head; slot !== NO_SLOT; slot = this.pool.next[slot]) this.pool.hashOrderInto(d, slot);
  }

  /** Well linked, in time order, counted right; empty when there is no speed bump. */
  validate(speedBumpUs: number): void {
    const pool = this.pool;
    let count = 0;
    let previous = NO_SLOT;
    for (let slot = this.head; slot !== NO_SLOT; slot = pool.next[slot]) {
      assert(pool.state[slot] === OrderState.Pending && pool.prev[slot] === previous, 'pending queue link broken');
      assert(previous === NO_SLOT || pool.createdAtUs[previous] <= pool.createdAtUs[slot], 'pending queue out of time order');
      previous = slot;
      count++;
      assert(count <= pool.capacity, 'pending queue has a cycle');
    }
    assert(this.tail === previous && count === this.count, 'pending queue tail or count is off');
    assert(speedBumpUs > 0 || count === 0, 'pending orders without a speed bump');
  }
}
