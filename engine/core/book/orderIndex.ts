// Order id → pool slot: an open-addressing hash table in typed arrays.
//
// Linear probing over a power-of-two table at most half full (capacity ≥ 2 × the order pool), so
// probe sequences stay short. Deletion shifts later members of the cluster back instead of
// leaving tombstones, so the table never degrades however many orders come and go. Ids are
// Feistel outputs, already well spread, but the hash still mixes both 32-bit halves because
// lookups also take arbitrary ids from clients. Key 0 marks an empty cell (no order has id 0).

import { assert } from '../assert.js';
import { mixId, powerOfTwoAtLeast } from '../hashing.js';
import { NO_SLOT } from './orders.js';

export class OrderIndex {
  size = 0;
  private readonly keys: Float64Array;
  private readonly slots: Int32Array;
  private readonly mask: number;

  constructor(maxEntries: number) {
    const cells = powerOfTwoAtLeast(maxEntries * 2);
    this.keys = new Float64Array(cells);
    this.slots = new Int32Array(cells);
    this.mask = cells - 1;
  }

  /** Pool slot of an order id, or NO_SLOT. Any number may be asked (client input). */
  find(orderId: number): number {
    if (!Number.isSafeInteger(orderId) || orderId <= 0) return NO_SLOT;
    for (let cell = mixId(orderId) & this.mask; ; cell = (cell + 1) & this.mask) {
      const key = this.keys[cell];
      if (key === 0) return NO_SLOT;
      if (key === orderId) return this.slots[cell];
    }
  }

  insert(orderId: number, slot: number): void {
    assert(orderId > 0 && this.size * 2 < this.keys.length, 'order index full or bad id');
    let cell = mixId(orderId) & this.mask;
    while (this.keys[cell] !== 0) {
      assert(this.keys[cell] !== orderId, 'order id inserted twice');
      cell = (cell + 1) & this.mask;
    }
    this.keys[cell] = orderId;
    this.slots[cell] = slot;
    this.size++;
  }

  remove(orderId: number): void {
    let hole = mixId(orderId) & this.mask;
    while (this.keys[hole] !== orderId) {
      assert(this.keys[hole] !== 0, 'removing an order id that is not indexed');
      hole = (hole + 1) & this.mask;
    }
    // Backward-shift deletion: move each later member of the cluster whose home cell does not lie
    // cyclically in (hole, cell] into the hole, so every key stays reachable from its home.
    for (let cell = (hole + 1) & this.mask; this.keys[cell] !== 0; cell = (cell + 1) & this.mask) {
      const home = mixId(this.keys[cell]) & this.mask;
      const homeBetween = hole <= cell ? home > hole && home <= cell : home > hole || home <= cell;
      if (homeBetween) continue;
      this.keys[hole] = this.keys[cell];
      this.slots[hole] = this.slots[cell];
      hole = cell;
    }
    this.keys[hole] = 0;
    this.slots[hole] = NO_SLOT;
    this.size--;
  }

  /** Holds exactly the `liveCount` open orders (each one's entry is checked by the invariants). */
  validate(liveCount: number): void {
    assert(this.size === liveCount, 'order index size differs from the live orders');
  }
}
