// Request rate buckets shared by every front thread: one bounded table in a SharedArrayBuffer, so
// that a client's requests are counted together whichever thread the kernel hands each of its
// connections to (the house pattern of replay-guard.ts: open addressing, a spinlock taken by one
// compare-and-swap, a critical section of a few slot reads and one write).
//
// Algorithm: the generic cell rate algorithm (GCRA), which is a token bucket stored as one number
// per client, its theoretical arrival time (TAT). With an emission interval T = 1000 / rate ms
// and a tolerance τ = T × (burst − 1), a request at time t is allowed when TAT − t ≤ τ and then
// moves TAT to max(TAT, t) + T; a refused request changes nothing, so retrying does not extend
// the wait, and the client can retry after TAT − τ − t ms. A client whose TAT has passed has a full
// bucket, exactly as if it had no entry: its slot may be reused by anyone.
//
// Bounded memory: `slotCount` slots of 16 bytes (two 32-bit halves of a 64-bit identity hash and
// the TAT as a float64), allocated once. A client is looked for in at most PROBE_LIMIT slots from
// its hash. When all of them belong to clients whose buckets are not full, the one closest to full
// (smallest TAT) is evicted: its owner starts again with a full bucket. That is the safe way to be
// full: nobody is ever refused because of other clients, memory never grows, and the most an
// eviction gives away is one burst to the least active client nearby. The hash is seeded from a
// random value chosen when the table is created, so clients cannot aim at one neighbourhood.
//
// Clock: Date.now(), the one clock every thread shares. If it steps back, a TAT is clamped (and
// stored) to t + τ + T, the furthest an allowed request can push it, so a client is never held for
// longer than the burst it had used.

import { randomInt } from 'node:crypto';

const LOCK_INDEX = 0;
const SEED_INDEX = 1;
/** Lock and seed share a 64-byte line: 16 ints, 8 doubles. */
const HEADER_INTS = 16;
const HEADER_DOUBLES = 8;
const SLOT_INTS = 4;
export const PROBE_LIMIT = 16;

/** A rate as the emission interval and the tolerance of GCRA, in ms. */
export interface RateRule {
  intervalMs: number;
  toleranceMs: number;
}

export function rateRule(perSecond: number, burst: number): RateRule {
  const intervalMs = 1000 / perSecond;
  return { intervalMs, toleranceMs: intervalMs * (Math.max(1, burst) - 1) };
}

/** A client's identity as two 32-bit hashes (a 64-bit key). */
export interface ClientKey {
  keyA: number;
  keyB: number;
}

/** Hashes bytes (an address) with the table's seed: FNV-1a and a multiply-xorshift mix. */
export function hashBytes(bytes: Uint8Array, seed: number, out: ClientKey): ClientKey {
  let a = 0x811c9dc5 ^ seed;
  let b = seed ^ 0x5bd1e995;
  for (let i = 0; i < bytes.length; i++) {
    a = Math.imul(a ^ bytes[i], 0x01000193);
    b = Math.imul(b ^ bytes[i], 0x5bd1e995);
    b ^= b >>> 15;
  }
  out.keyA = a | 0;
  out.keyB = (b ^ bytes.length) | 0;
  return out;
}

/** Hashes a string of char codes (an API key) the same way. */
export function hashString(text: string, seed: number, out: ClientKey): ClientKey {
  let a = 0x811c9dc5 ^ seed;
  let b = seed ^ 0x5bd1e995;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  out.keyA = a | 0;
  out.keyB = (b ^ text.length) | 0;
  return out;
}

function firstSlot(key: ClientKey, mask: number): number {
  return (key.keyA ^ Math.imul(key.keyB, 0x9e3779b1)) & mask;
}

/** Takes the spinlock at `t[LOCK_INDEX]`; the holder is inside a few dozen reads and one write. */
export function lock(t: Int32Array): void {
  while (Atomics.compareExchange(t, LOCK_INDEX, 0, 1) !== 0) {
    // Spin.
  }
}

export function unlock(t: Int32Array): void {
  Atomics.store(t, LOCK_INDEX, 0);
}

export class RateTable {
  private readonly ints: Int32Array;
  private readonly doubles: Float64Array;
  private readonly mask: number;
  readonly seed: number;

  private constructor(readonly sab: SharedArrayBuffer, private readonly slotCount: number) {
    this.ints = new Int32Array(sab);
    this.doubles = new Float64Array(sab);
    this.mask = slotCount - 1;
    this.seed = this.ints[SEED_INDEX];
  }

  static create(slotCount: number): RateTable {
    if (slotCount < PROBE_LIMIT || (slotCount & (slotCount - 1)) !== 0) throw new Error('rate table slot count must be a power of two ≥ PROBE_LIMIT');
    const sab = new SharedArrayBuffer((HEADER_INTS + slotCount * SLOT_INTS) * 4);
    new Int32Array(sab)[SEED_INDEX] = randomInt(0, 2 ** 31);
    return new RateTable(sab, slotCount);
  }

  static attach(sab: SharedArrayBuffer): RateTable {
    return new RateTable(sab, (sab.byteLength / 4 - HEADER_INTS) / SLOT_INTS);
  }

  /** Counts one request; 0 when allowed, else the ms until one would be (nothing is recorded). */
  take(key: ClientKey, rule: RateRule, nowMs: number): number {
    return this.apply(key, rule, nowMs, true);
  }

  /** The ms until a request would be allowed (0: now), counting nothing. */
  peek(key: ClientKey, rule: RateRule, nowMs: number): number {
    return this.apply(key, rule, nowMs, false);
  }

  get capacity(): number {
    return this.slotCount;
  }

  private apply(key: ClientKey, rule: RateRule, nowMs: number, record: boolean): number {
    const t = this.ints;
    lock(t);
    try {
      const slot = this.find(key, nowMs, record);
      const ceiling = nowMs + rule.toleranceMs + rule.intervalMs;
      const stored = slot < 0 ? 0 : this.doubles[HEADER_DOUBLES + slot * 2 + 1];
      // Beyond the ceiling only after the clock stepped back: the clamp is kept, so that the wait
      // ends a burst's time after this moment rather than once the clock is back where it was.
      if (stored > ceiling) this.doubles[HEADER_DOUBLES + slot * 2 + 1] = ceiling;
      const tat = Math.min(Math.max(stored, nowMs), ceiling);
      const waitMs = tat - rule.toleranceMs - nowMs;
      if (waitMs > 0) return waitMs;
      if (record) {
        t[HEADER_INTS + slot * SLOT_INTS] = key.keyA;
        t[HEADER_INTS + slot * SLOT_INTS + 1] = key.keyB;
        this.doubles[HEADER_DOUBLES + slot * 2 + 1] = tat + rule.intervalMs;
      }
      return 0;
    } finally {
      unlock(t);
    }
  }

  /**
   * The slot of `key`; else, when `claim`, a slot to put it in (a full bucket's, or the evicted
   * one closest to full) with a past TAT; else -1. Called under the lock.
   */
  private find(key: ClientKey, nowMs: number, claim: boolean): number {
    const t = this.ints;
    const d = this.doubles;
    const start = firstSlot(key, this.mask);
    let free = -1;
    let oldest = -1;
    for (let probe = 0; probe < PROBE_LIMIT; probe++) {
      const slot = (start + probe) & this.mask;
      const tat = d[HEADER_DOUBLES + slot * 2 + 1];
      const base = HEADER_INTS + slot * SLOT_INTS;
      if (tat !== 0 && t[base] === key.keyA && t[base + 1] === key.keyB) return slot;
      if (tat <= nowMs) {
        if (free < 0) free = slot;
        // Never used: no entry lies further along this sequence.
        if (tat === 0) break;
      } else if (oldest < 0 || tat < d[HEADER_DOUBLES + oldest * 2 + 1]) {
        oldest = slot;
      }
    }
    if (!claim) return -1;
    const chosen = free >= 0 ? free : oldest;
    d[HEADER_DOUBLES + chosen * 2 + 1] = 0; // the new owner starts with a full bucket
    return chosen;
  }
}
