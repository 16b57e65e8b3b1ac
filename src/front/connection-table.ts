// Open WebSocket connections per client address, counted across every front thread: connections
// from one address land on different threads, so the count lives in one SharedArrayBuffer (the
// locking of rate-table.ts).
//
// Bounded memory: `slotCount` slots of 16 bytes (the address's 64-bit hash and its count). An
// address is looked for in at most PROBE_LIMIT slots from its hash; a slot whose count fell to 0 is
// free for anyone. When every slot of the sequence holds a live address the connection is refused:
// a count cannot be dropped without letting that address past its limit, and a table of 16,384
// slots fills only with that many distinct addresses holding connections at once, far past what
// the front threads serve.

import { randomInt } from 'node:crypto';
import { PROBE_LIMIT, lock, unlock, type ClientKey } from './rate-table.js';

const SEED_INDEX = 1;
const HEADER_INTS = 16;
const SLOT_INTS = 4;

export type ConnectionVerdict = 'ok' | 'limit' | 'full';

export class ConnectionTable {
  private readonly t: Int32Array;
  private readonly mask: number;
  readonly seed: number;

  private constructor(readonly sab: SharedArrayBuffer) {
    this.t = new Int32Array(sab);
    this.mask = (sab.byteLength / 4 - HEADER_INTS) / SLOT_INTS - 1;
    this.seed = this.t[SEED_INDEX];
  }

  static create(slotCount: number): ConnectionTable {
    if (slotCount < PROBE_LIMIT || (slotCount & (slotCount - 1)) !== 0) throw new Error('connection table slot count must be a power of two ≥ PROBE_LIMIT');
    const sab = new SharedArrayBuffer((HEADER_INTS + slotCount * SLOT_INTS) * 4);
    new Int32Array(sab)[SEED_INDEX] = randomInt(0, 2 ** 31);
    return new ConnectionTable(sab);
  }

  static attach(sab: SharedArrayBuffer): ConnectionTable {
    return new ConnectionTable(sab);
  }

  /** Counts one more connection of `key` unless it already has `max`. */
  open(key: ClientKey, max: number): ConnectionVerdict {
    lock(this.t);
    try {
      const found = this.find(key);
      if (found.slot >= 0) {
        if (this.t[found.slot + 2] >= max) return 'limit';
        this.t[found.slot + 2]++;
        return 'ok';
      }
      if (found.free < 0) return 'full';
      this.t[found.free] = key.keyA;
      this.t[found.free + 1] = key.keyB;
      this.t[found.free + 2] = 1;
      return 'ok';
    } finally {
      unlock(this.t);
    }
  }

  /** Counts one connection of `key` fewer (one that `open` counted). */
  close(key: ClientKey): void {
    lock(this.t);
    try {
      const found = this.find(key);
      if (found.slot >= 0) this.t[found.slot + 2]--;
    } finally {
      unlock(this.t);
    }
  }

  /** The open connections of `key`. */
  count(key: ClientKey): number {
    lock(this.t);
    try {
      const found = this.find(key);
      return found.slot >= 0 ? this.t[found.slot + 2] : 0;
    } finally {
      unlock(this.t);
    }
  }

  /**
   * The base index of `key`'s live slot, and of the first free slot. Every slot of the sequence is
   * read: a freed slot does not end it, since the key may live further on. Called under the lock.
   */
  private find(key: ClientKey): { slot: number; free: number } {
    const t = this.t;
    const start = (key.keyA ^ Math.imul(key.keyB, 0x9e3779b1)) & this.mask;
    let free = -1;
    for (let probe = 0; probe < PROBE_LIMIT; probe++) {
      const base = HEADER_INTS + ((start + probe) & this.mask) * SLOT_INTS;
      if (t[base + 2] === 0) {
        if (free < 0) free = base;
      } else if (t[base] === key.keyA && t[base + 1] === key.keyB) {
        return { slot: base, free };
      }
    }
    return { slot: -1, free };
  }
}
