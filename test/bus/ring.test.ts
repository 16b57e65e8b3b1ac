// Single-thread unit tests for engine/bus/ring.ts: ordering, fullness, gating, holding records and
// wrap-around of the uint32 sequences. Cross-thread behaviour lives in ring-stress.test.ts.
//
// The randomised tests drive a ring and a deliberately naive reference model (plain arrays) with
// the same seeded stream of operations and compare every step. The seed is printed in each
// failure message and can be fixed with RING_SEED=<n> to reproduce a run.

import { describe, expect, it } from 'vitest';
import { InboundRing, OutboundRing, sequenceDiff } from '../../engine/bus/ring.js';

const WRAP = 2 ** 32;
const SEED = process.env.RING_SEED !== undefined ? Number(process.env.RING_SEED) : (Date.now() % 1_000_000) + 1;

/** xorshift32: small, seedable, good enough to pick operations. */
function random(seed: number): (bound: number) => number {
  let state = seed | 0 || 1;
  return (bound) => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) % bound;
  };
}

function seqAt(initial: number, k: number): number {
  return (initial + k) % WRAP;
}

describe('InboundRing', () => {
  it('claims, publishes and polls slots in sequence order', () => {
    const ring = InboundRing.create({ slotCount: 8, slotBytes: 16 });
    for (let k = 0; k < 3; k++) {
      const seq = ring.tryClaim();
      expect(seq).toBe(k);
      ring.view.setUint32(ring.offsetOf(seq), 100 + k, true);
      ring.publish(seq);
    }
    const seen: number[][] = [];
    const count = ring.poll((offset, seq) => seen.push([seq, ring.view.getUint32(offset, true)]), 64);
    expect(count).toBe(3);
    expect(seen).toEqual([[0, 100], [1, 101], [2, 102]]);
    expect(ring.poll(() => { throw new Error('nothing is published'); }, 64)).toBe(0);
  });

  it('hands out at most maxBatch slots and frees them with one store at end of batch', () => {
    const ring = InboundRing.create({ slotCount: 8, slotBytes: 8 });
    for (let k = 0; k < 5; k++) ring.publish(ring.tryClaim());
    const gatingDuringBatch: number[] = [];
    expect(ring.poll(() => gatingDuringBatch.push(ring.gatingSequence), 3)).toBe(3);
    expect(gatingDuringBatch).toEqual([0, 0, 0]);
    expect(ring.gatingSequence).toBe(3);
    expect(ring.poll(() => {}, 3)).toBe(2);
    expect(ring.gatingSequence).toBe(5);
  });

  it('refuses claims when full, and loses or overwrites nothing after draining', () => {
    const ring = InboundRing.create({ slotCount: 8, slotBytes: 8 });
    let written = 0;
    const claimAndWrite = (): number => {
      const seq = ring.tryClaim();
      if (seq >= 0) {
        ring.view.setUint32(ring.offsetOf(seq), written++, true);
        ring.publish(seq);
      }
      return seq;
    };
    for (let k = 0; k < 8; k++) expect(claimAndWrite()).toBe(k);
    expect(claimAndWrite()).toBe(-1);
    expect(ring.cursor).toBe(8);

    const read: number[] = [];
    const handler = (offset: number): void => { read.push(ring.view.getUint32(offset, true)); };
    expect(ring.poll(handler, 3)).toBe(3);
    for (let k = 8; k < 11; k++) expect(claimAndWrite()).toBe(k);
    expect(claimAndWrite()).toBe(-1);
    while (ring.poll(handler, 4) > 0);
    expect(read).toEqual(Array.from({ length: 11 }, (_, k) => k));
  });

  it('delivers out-of-order publishes in sequence order; an unpublished claim holds back later slots', () => {
    const ring = InboundRing.create({ slotCount: 8, slotBytes: 8 });
    const [a, b, c] = [ring.tryClaim(), ring.tryClaim(), ring.tryClaim()];
    ring.publish(c);
    ring.publish(b);
    const seen: number[] = [];
    expect(ring.poll((_, seq) => seen.push(seq), 64)).toBe(0);
    ring.publish(a);
    expect(ring.poll((_, seq) => seen.push(seq), 64)).toBe(3);
    expect(seen).toEqual([a, b, c]);
  });

  it('throws on a second publish of a sequence or a publish of one never claimed', () => {
    const ring = InboundRing.create({ slotCount: 4, slotBytes: 8 });
    const seq = ring.tryClaim();
    ring.publish(seq);
    expect(() => ring.publish(seq)).toThrow(/not claimed/);
    expect(() => ring.publish(seq + 4)).toThrow(/outside the claimable window/);
    // The refused publishes changed nothing: the stream still holds exactly the one record.
    const seen: number[] = [];
    expect(ring.poll((_, s) => seen.push(s), 8)).toBe(1);
    expect(seen).toEqual([seq]);
  });

  it('frees the slots handled before a throwing handler and offers the failing slot again', () => {
    const ring = InboundRing.create({ slotCount: 8, slotBytes: 8 });
    for (let k = 0; k < 4; k++) ring.publish(ring.tryClaim());
    expect(() => ring.poll((_, seq) => { if (seq === 2) throw new Error('boom'); }, 64)).toThrow('boom');
    expect(ring.gatingSequence).toBe(2);
    const seen: number[] = [];
    expect(ring.poll((_, seq) => seen.push(seq), 64)).toBe(2);
    expect(seen).toEqual([2, 3]);
  });

  it('waitForPublish returns at once when the next slot is published and times out when it is not', () => {
    const ring = InboundRing.create({ slotCount: 4, slotBytes: 8 });
    expect(ring.waitForPublish(1)).toBe('timed-out');
    const a = ring.tryClaim();
    const b = ring.tryClaim();
    ring.publish(b);
    // Only the next sequence counts: b is published but a is not.
    expect(ring.waitForPublish(1)).toBe('timed-out');
    ring.publish(a);
    expect(ring.waitForPublish(60_000)).toBe('not-equal');
  });

  it('waitForSpace returns at once while a slot is free and times out while the ring is full', () => {
    const ring = InboundRing.create({ slotCount: 2, slotBytes: 8 });
    expect(ring.waitForSpace(60_000)).toBe('not-equal');
    ring.publish(ring.tryClaim());
    ring.publish(ring.tryClaim());
    expect(ring.waitForSpace(1)).toBe('timed-out');
    ring.poll(() => {}, 1);
    expect(ring.waitForSpace(60_000)).toBe('not-equal');
  });

  it('attach reads the layout from the buffer and shares its slots; a foreign buffer is refused', () => {
    const ring = InboundRing.create({ slotCount: 16, slotBytes: 24, initialSequence: 7 });
    const other = InboundRing.attach(ring.sab);
    expect([other.slotCount, other.slotBytes, other.cursor]).toEqual([16, 24, 7]);
    const seq = other.tryClaim();
    other.view.setFloat64(other.offsetOf(seq) + 16, 1.5, true);
    other.publish(seq);
    expect(ring.offsetOf(seq) % 8).toBe(0);
    let value = 0;
    expect(ring.poll((offset) => { value = ring.view.getFloat64(offset + 16, true); }, 8)).toBe(1);
    expect(value).toBe(1.5);
    expect(() => InboundRing.attach(new SharedArrayBuffer(1024))).toThrow(/not a InboundRing/);
    expect(() => OutboundRing.attach(ring.sab)).toThrow(/not a OutboundRing/);
  });

  it('create rejects slot counts that are not powers of two and slot sizes that are not multiples of 8', () => {
    expect(() => InboundRing.create({ slotCount: 12, slotBytes: 8 })).toThrow(/power of two/);
    expect(() => InboundRing.create({ slotCount: 1, slotBytes: 8 })).toThrow(/power of two/);
    expect(() => InboundRing.create({ slotCount: 8, slotBytes: 12 })).toThrow(/multiple of 8/);
    expect(() => InboundRing.create({ slotCount: 8, slotBytes: 8, initialSequence: WRAP })).toThrow(/initialSequence/);
  });

  // Random claims, out-of-order publishes and polls of random batch sizes, compared step by step
  // with a reference queue, starting below the int32 sign flip and below the uint32 wrap.
  for (const initial of [0, 2 ** 31 - 37, WRAP - 37]) {
    it(`matches a reference queue over many laps from initialSequence ${initial} (seeded)`, () => {
      const slotCount = 16;
      const ring = InboundRing.create({ slotCount, slotBytes: 8, initialSequence: initial });
      const next = random(SEED + initial);
      const claimed: number[] = []; // claimed, not yet published (sequence numbers)
      let claims = 0; // model: how many sequences have been claimed
      let consumed = 0; // model: how many have been handed to the consumer
      const why = `seed ${SEED}, initial ${initial}`;
      while (consumed < 200 * slotCount) {
        const op = next(3);
        if (op === 0) {
          const seq = ring.tryClaim();
          if (claims - consumed === slotCount) {
            expect(seq, why).toBe(-1);
            continue;
          }
          expect(seq, why).toBe(seqAt(initial, claims));
          ring.view.setUint32(ring.offsetOf(seq), claims, true);
          ring.view.setUint32(ring.offsetOf(seq) + 4, ~claims >>> 0, true);
          claims++;
          claimed.push(seq);
        } else if (op === 1 && claimed.length > 0) {
          const [seq] = claimed.splice(next(claimed.length), 1);
          ring.publish(seq);
        } else {
          // The model consumes up to the first claimed-but-unpublished sequence.
          const pendingKs = claimed.map((seq) => sequenceDiff(seq, initial) >>> 0);
          const firstPending = pendingKs.length > 0 ? Math.min(...pendingKs) : claims;
          const maxBatch = 1 + next(slotCount + 2);
          const expected = Math.min(maxBatch, firstPending - consumed);
          const count = ring.poll((offset, seq) => {
            expect(seq, why).toBe(seqAt(initial, consumed));
            expect(ring.view.getUint32(offset, true), why).toBe(consumed);
            expect(ring.view.getUint32(offset + 4, true), why).toBe(~consumed >>> 0);
            consumed++;
          }, maxBatch);
          expect(count, why).toBe(expected);
          expect(ring.gatingSequence, why).toBe(seqAt(initial, consumed));
        }
      }
      expect(ring.cursor, why).toBe(seqAt(initial, claims));
      // From just below 2^32 the cursor must have wrapped to a small number.
      if (initial > 2 ** 31) expect(ring.cursor, why).toBeLessThan(initial);
    });
  }
});

describe('OutboundRing', () => {
  function produce(ring: OutboundRing, values: number[]): void {
    for (const value of values) {
      const seq = ring.tryClaim();
      expect(seq).toBeGreaterThanOrEqual(0);
      ring.view.setUint32(ring.offsetOf(seq), value, true);
      ring.publish(seq);
    }
    ring.flush();
  }

  function drain(ring: OutboundRing, index: number, maxBatch = 64): number[] {
    const seen: number[] = [];
    ring.consumer(index).poll((offset) => { seen.push(ring.view.getUint32(offset, true)); return true; }, maxBatch);
    return seen;
  }

  it('gives each consumer every record exactly once, in order', () => {
    const ring = OutboundRing.create({ slotCount: 8, slotBytes: 8, consumerCount: 3 });
    produce(ring, [10, 11, 12, 13]);
    expect(drain(ring, 0)).toEqual([10, 11, 12, 13]);
    expect(drain(ring, 1, 2)).toEqual([10, 11]);
    produce(ring, [14]);
    expect(drain(ring, 0)).toEqual([14]);
    expect(drain(ring, 1)).toEqual([12, 13, 14]);
    expect(drain(ring, 2)).toEqual([10, 11, 12, 13, 14]);
    expect([0, 1, 2].map((i) => ring.consumer(i).sequence)).toEqual([5, 5, 5]);
    expect(drain(ring, 0)).toEqual([]);
  });

  it('lets the slowest consumer, even one that never started, gate the producer', () => {
    const ring = OutboundRing.create({ slotCount: 4, slotBytes: 8, consumerCount: 2 });
    produce(ring, [0, 1, 2, 3]);
    expect(ring.tryClaim()).toBe(-1);
    expect(drain(ring, 0)).toEqual([0, 1, 2, 3]);
    // Consumer 1 has never polled, and it still holds every slot.
    expect(ring.tryClaim()).toBe(-1);
    expect(drain(ring, 1, 1)).toEqual([0]);
    produce(ring, [4]);
    expect(ring.tryClaim()).toBe(-1);
    expect(drain(ring, 1)).toEqual([1, 2, 3, 4]);
    expect(drain(ring, 0)).toEqual([4]);
    produce(ring, [5, 6, 7, 8]);
    expect(ring.tryClaim()).toBe(-1);
  });

  it('leaves the record whose handler returned false for the next poll', () => {
    const ring = OutboundRing.create({ slotCount: 8, slotBytes: 8, consumerCount: 1 });
    produce(ring, [0, 1, 2, 3]);
    const consumer = ring.consumer(0);
    const offered: number[] = [];
    let durable = 2;
    const holdUntilDurable = (offset: number): boolean => {
      const value = ring.view.getUint32(offset, true);
      offered.push(value);
      return value < durable;
    };
    expect(consumer.poll(holdUntilDurable, 64)).toBe(2);
    expect(consumer.sequence).toBe(2);
    expect(consumer.poll(holdUntilDurable, 64)).toBe(0);
    durable = 4;
    expect(consumer.poll(holdUntilDurable, 64)).toBe(2);
    expect(offered).toEqual([0, 1, 2, 2, 2, 3]);
  });

  it('keeps published records invisible until flush, which rings the doorbell once', () => {
    const ring = OutboundRing.create({ slotCount: 8, slotBytes: 8, consumerCount: 1 });
    const before = ring.signalValue();
    ring.publish(ring.tryClaim());
    ring.publish(ring.tryClaim());
    expect(ring.cursor).toBe(0);
    expect(drain(ring, 0)).toEqual([]);
    ring.flush();
    expect(ring.cursor).toBe(2);
    expect(ring.signalValue()).toBe(before + 1);
    ring.flush();
    expect(ring.signalValue()).toBe(before + 1);
    expect(drain(ring, 0)).toHaveLength(2);
  });

  it('throws when a sequence is published out of claim order or without a claim', () => {
    const ring = OutboundRing.create({ slotCount: 8, slotBytes: 8, consumerCount: 1 });
    const a = ring.tryClaim();
    const b = ring.tryClaim();
    expect(() => ring.publish(b)).toThrow(/expected the claimed sequence/);
    ring.publish(a);
    ring.publish(b);
    expect(() => ring.publish(b + 1)).toThrow(/expected the claimed sequence/);
  });

  it('waitForConsumers flushes first, returns at once when a slot is free and times out while full', () => {
    const ring = OutboundRing.create({ slotCount: 2, slotBytes: 8, consumerCount: 2 });
    expect(ring.waitForConsumers(60_000)).toBe('not-equal');
    ring.publish(ring.tryClaim());
    ring.publish(ring.tryClaim());
    expect(ring.tryClaim()).toBe(-1);
    expect(ring.waitForConsumers(1)).toBe('timed-out');
    expect(ring.cursor).toBe(2);
    expect(drain(ring, 0)).toHaveLength(2);
    expect(ring.waitForConsumers(1)).toBe('timed-out');
    expect(drain(ring, 1, 1)).toHaveLength(1);
    expect(ring.waitForConsumers(60_000)).toBe('not-equal');
    expect(ring.tryClaim()).toBe(2);
  });

  it('waitSignal and waitSignalAsync return once the doorbell moves past the value seen', async () => {
    const ring = OutboundRing.create({ slotCount: 2, slotBytes: 8, consumerCount: 1 });
    const seen = ring.signalValue();
    expect(ring.waitSignal(seen, 1)).toBe('timed-out');
    expect(await ring.waitSignalAsync(seen, 1)).toBe('timed-out');
    const woken = ring.waitSignalAsync(seen, 60_000);
    ring.signal();
    expect(await woken).toBe('ok');
    expect(ring.waitSignal(seen, 60_000)).toBe('not-equal');
    expect(await ring.waitSignalAsync(seen, 60_000)).toBe('not-equal');
  });

  it('attach shares the ring; consumer indices outside the ring are refused', () => {
    const ring = OutboundRing.create({ slotCount: 8, slotBytes: 16, consumerCount: 2, initialSequence: 5 });
    const other = OutboundRing.attach(ring.sab);
    expect([other.slotCount, other.slotBytes, other.consumerCount, other.cursor]).toEqual([8, 16, 2, 5]);
    produce(ring, [42]);
    expect(drain(other, 1)).toEqual([42]);
    expect(ring.consumer(1).sequence).toBe(6);
    expect(() => ring.consumer(2)).toThrow(RangeError);
    expect(() => OutboundRing.create({ slotCount: 8, slotBytes: 8, consumerCount: 0 })).toThrow(/consumerCount/);
  });

  // Three consumers at random paces, one of them holding records at random, across many laps and
  // across the wrap; every record must reach every consumer once and in order.
  for (const initial of [0, 2 ** 31 - 29, WRAP - 29]) {
    it(`keeps every consumer's stream whole over many laps from initialSequence ${initial} (seeded)`, () => {
      const slotCount = 8;
      const consumerCount = 3;
      const ring = OutboundRing.create({ slotCount, slotBytes: 8, consumerCount, initialSequence: initial });
      const next = random(SEED * 7 + initial);
      const why = `seed ${SEED}, initial ${initial}`;
      let published = 0;
      let flushed = 0;
      const consumed = new Array<number>(consumerCount).fill(0);
      while (Math.min(...consumed) < 300 * slotCount) {
        const op = next(consumerCount + 2);
        if (op === 0) {
          const seq = ring.tryClaim();
          if (published - Math.min(...consumed) === slotCount) {
            expect(seq, why).toBe(-1);
            continue;
          }
          expect(seq, why).toBe(seqAt(initial, published));
          ring.view.setUint32(ring.offsetOf(seq), published, true);
          ring.publish(seq);
          published++;
        } else if (op === 1) {
          ring.flush();
          flushed = published;
        } else {
          const index = op - 2;
          const maxBatch = 1 + next(slotCount);
          const holdAfter = index === 2 ? next(slotCount) : slotCount; // consumer 2 holds records
          const before = consumed[index];
          let offered = 0;
          const count = ring.consumer(index).poll((offset, seq) => {
            if (offered++ >= holdAfter) return false;
            expect(seq, why).toBe(seqAt(initial, consumed[index]));
            expect(ring.view.getUint32(offset, true), why).toBe(consumed[index]);
            consumed[index]++;
            return true;
          }, maxBatch);
          expect(count, why).toBe(Math.min(maxBatch, holdAfter, flushed - before));
          expect(consumed[index] - before, why).toBe(count);
          expect(ring.consumer(index).sequence, why).toBe(seqAt(initial, consumed[index]));
        }
      }
      expect(ring.cursor, why).toBe(seqAt(initial, flushed));
      if (initial > 2 ** 31) expect(ring.cursor, why).toBeLessThan(initial);
    });
  }
});
