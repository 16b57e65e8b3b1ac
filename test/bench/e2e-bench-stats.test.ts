// The load generator's pure parts (bench/e2e): the log-bucketed latency histogram and the
// open-loop scheduler's intended-time accounting, which is what keeps coordinated omission out of
// the published percentiles. No timing: every clock here is simulated.

import { describe, expect, it } from 'vitest';
import { LatencyHistogram, bucketHighest, bucketIndex } from '../../bench/e2e/histogram.js';
import { OpenLoopSchedule } from '../../bench/e2e/schedule.js';

describe('LatencyHistogram', () => {
  it('keeps every value within 1/128 of itself, bucket bounds contiguous', () => {
    for (const v of [0, 1, 127, 128, 129, 255, 256, 1000, 65_535, 65_536, 1_234_567, 2 ** 40 + 12345]) {
      const i = bucketIndex(v);
      const high = bucketHighest(i);
      expect(high).toBeGreaterThanOrEqual(v);
      expect(high - v).toBeLessThanOrEqual(Math.max(0, v / 128));
      if (i > 0) expect(bucketHighest(i - 1)).toBeLessThan(v);
    }
    // exact powers of two around floating-point log2 rounding
    for (let e = 7; e < 44; e++) {
      for (const v of [2 ** e - 1, 2 ** e, 2 ** e + 1]) {
        expect(bucketHighest(bucketIndex(v))).toBeGreaterThanOrEqual(v);
        expect(bucketHighest(bucketIndex(v) - 1)).toBeLessThan(v);
      }
    }
  });

  it('reports percentiles of a known distribution', () => {
    const h = new LatencyHistogram();
    for (let v = 1; v <= 10_000; v++) h.record(v * 1000); // 1 µs … 10 ms, uniform
    expect(h.count).toBe(10_000);
    const p = (q: number) => h.percentile(q);
    // The true percentile is q% of 10 ms; the histogram may overstate by < 0.8 %, never understate.
    for (const [q, exact] of [[50, 5_000_000], [90, 9_000_000], [99, 9_900_000], [99.9, 9_990_000]] as const) {
      expect(p(q)).toBeGreaterThanOrEqual(exact);
      expect(p(q)).toBeLessThanOrEqual(exact * 1.008);
    }
    expect(p(100)).toBe(10_000_000);
    expect(h.min).toBe(1000);
    expect(h.max).toBe(10_000_000);
    expect(h.summary().meanUs).toBeCloseTo(5000.5, 1);
  });

  it('a single outlier moves p99.9 and max but not p50 or p99', () => {
    const h = new LatencyHistogram();
    for (let i = 0; i < 999; i++) h.record(100_000); // 100 µs
    h.record(50_000_000); // one 50 ms stall
    const s = h.summary();
    expect(s.p50Us).toBeLessThanOrEqual(100.8);
    expect(s.p99Us).toBeLessThanOrEqual(100.8);
    expect(s.p999Us).toBeLessThanOrEqual(100.8); // rank 999 of 1000 is still 100 µs
    expect(h.percentile(99.95)).toBe(50_000_000);
    expect(s.maxUs).toBe(50_000);
  });

  it('merges and round-trips through JSON (as worker threads send it)', () => {
    const a = new LatencyHistogram();
    const b = new LatencyHistogram();
    for (let v = 1; v <= 500; v++) a.record(v * 10_000);
    for (let v = 501; v <= 1000; v++) b.record(v * 10_000);
    const merged = LatencyHistogram.fromJSON(JSON.parse(JSON.stringify(a.toJSON())));
    merged.add(LatencyHistogram.fromJSON(JSON.parse(JSON.stringify(b.toJSON()))));
    expect(merged.count).toBe(1000);
    expect(merged.min).toBe(10_000);
    expect(merged.max).toBe(10_000_000);
    expect(merged.percentile(50)).toBeGreaterThanOrEqual(5_000_000);
    expect(merged.percentile(50)).toBeLessThan(5_040_000);
    const empty = LatencyHistogram.fromJSON(JSON.parse(JSON.stringify(new LatencyHistogram().toJSON())));
    expect(empty.count).toBe(0);
    empty.record(5);
    expect(empty.min).toBe(5);
  });

  it('clamps negative values to zero', () => {
    const h = new LatencyHistogram();
    h.record(-5);
    expect(h.min).toBe(0);
    expect(h.percentile(50)).toBe(0);
  });
});

describe('OpenLoopSchedule', () => {
  it('spaces intended send times at 1/rate and only hands out due requests', () => {
    const s = new OpenLoopSchedule(1_000_000, 1000, 5); // 1 request per ms from t = 1 ms
    expect(s.intendedNs(0)).toBe(1_000_000);
    expect(s.intendedNs(3)).toBe(4_000_000);
    expect(s.takeDue(999_999)).toBe(-1);
    expect(s.takeDue(1_000_000)).toBe(0);
    expect(s.takeDue(1_500_000)).toBe(-1); // request 1 is due at 2 ms
    expect(s.nextDueNs()).toBe(2_000_000);
    expect(s.backlog(4_200_000)).toBe(3); // requests 1, 2, 3 are due
    expect(s.takeDue(4_200_000)).toBe(1);
    expect(s.takeDue(4_200_000)).toBe(2);
    expect(s.takeDue(4_200_000)).toBe(3);
    expect(s.takeDue(4_200_000)).toBe(-1);
    expect(s.maxSendLagNs).toBe(2_200_000); // request 1 left 2.2 ms late
    expect(s.lateSends).toBe(2); // requests 1 (2.2 ms) and 2 (1.2 ms) beyond the 1 ms threshold
    expect(s.takeDue(10_000_000)).toBe(4);
    expect(s.done).toBe(true);
    expect(s.nextDueNs()).toBe(Infinity);
    expect(s.takeDue(20_000_000)).toBe(-1);
  });

  it('charges a server stall to every request that should have been sent during it', () => {
    // One connection, 1000 requests/s for 1 s; the server answers in 100 µs except one 100 ms
    // stall on request 100. A closed-loop client would record a single 100 ms sample; measured
    // from intended times, the ~100 requests queued behind the stall carry it too.
    const rate = 1000;
    const s = new OpenLoopSchedule(0, rate, 1000);
    const open = new LatencyHistogram();
    const closed = new LatencyHistogram();
    let now = 0;
    while (!s.done) {
      const index = s.takeDue(now);
      if (index < 0) {
        now = s.nextDueNs();
        continue;
      }
      const service = index === 100 ? 100_000_000 : 100_000;
      now += service;
      open.record(s.latencyNs(index, now));
      closed.record(service);
    }
    expect(closed.percentile(99)).toBeLessThanOrEqual(100_800);
    // Requests 100..199 waited behind the stall: about 10 % of all requests took more than 1 ms.
    expect(open.percentile(95)).toBeGreaterThan(1_000_000);
    expect(open.percentile(50)).toBeLessThanOrEqual(100_800);
    expect(open.max).toBe(100_000_000);
    // request 101 was due at 101 ms and sent at 200 ms: answered at 200.1 ms → 99.1 ms
    expect(open.percentile(99)).toBeGreaterThan(90_000_000);
    expect(s.lateSends).toBeGreaterThan(90);
  });
});
