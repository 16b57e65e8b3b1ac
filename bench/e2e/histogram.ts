// A latency histogram in the manner of HdrHistogram: values (integer nanoseconds) fall into
// logarithmic buckets, each split into SUB_BUCKETS linear sub-buckets, so every recorded value is
// kept to within 1/SUB_BUCKETS of its size (<0.8 %) over the whole range, in fixed memory, with
// an O(1) record and no allocation. Percentiles report the highest value that is equivalent to
// the bucket (as HdrHistogram does), so a percentile is never an understatement; min and max are
// exact.
//
// Written for the end-to-end load generator: several clients (threads) record into their own
// histogram and the results are merged (`add`) or shipped between threads (`toJSON`/`fromJSON`).

const SUB_BITS = 7;
const SUB_BUCKETS = 1 << SUB_BITS; // 128
/** Values up to 2^MAX_EXPONENT ns (~4.9 hours) are kept; larger ones are clamped. */
const MAX_EXPONENT = 44;
const BUCKETS = (MAX_EXPONENT - SUB_BITS + 2) * SUB_BUCKETS;

/** Bucket index of a non-negative integer value. */
export function bucketIndex(value: number): number {
  if (value < SUB_BUCKETS) return value; // exact below 128
  const exponent = Math.floor(Math.log2(value));
  // The top SUB_BITS + 1 bits of the value; the leading bit is always 1.
  let shift = exponent - SUB_BITS;
  let mantissa = Math.floor(value / 2 ** shift); // in [SUB_BUCKETS, 2 * SUB_BUCKETS)
  // Math.log2 can round up just below a power of two.
  if (mantissa < SUB_BUCKETS) { shift -= 1; mantissa = Math.floor(value / 2 ** shift); }
  if (mantissa >= 2 * SUB_BUCKETS) { shift += 1; mantissa = Math.floor(value / 2 ** shift); }
  return (shift + 1) * SUB_BUCKETS + (mantissa - SUB_BUCKETS);
}

/** The highest value that lands in bucket `index`. */
export function bucketHighest(index: number): number {
  if (index < SUB_BUCKETS) return index;
  const shift = Math.floor(index / SUB_BUCKETS) - 1;
  const mantissa = (index % SUB_BUCKETS) + SUB_BUCKETS;
  return (mantissa + 1) * 2 ** shift - 1;
}

export interface HistogramSummary {
  count: number;
  /** All in microseconds. */
  minUs: number;
  p50Us: number;
  p90Us: number;
  p99Us: number;
  p999Us: number;
  maxUs: number;
  meanUs: number;
}

export class LatencyHistogram {
  private counts = new Float64Array(BUCKETS);
  count = 0;
  min = Infinity;
  max = 0;
  private sum = 0;

  /** Records one value in nanoseconds (negative values count as 0; fractions are truncated). */
  record(valueNs: number): void {
    let v = valueNs > 0 ? Math.floor(valueNs) : 0;
    if (v >= 2 ** MAX_EXPONENT) v = 2 ** MAX_EXPONENT - 1;
    this.counts[bucketIndex(v)] += 1;
    this.count += 1;
    this.sum += v;
    if (v < this.min) this.min = v;
    if (v > this.max) this.max = v;
  }

  /** The value at percentile `p` (0..100) in ns: the highest value equivalent to its bucket, never above max. */
  percentile(p: number): number {
    if (this.count === 0) return 0;
    // The epsilon keeps 99.9 % of 1000 at rank 999 despite binary rounding (0.999 × 1000 > 999).
    const rank = Math.max(1, Math.ceil((p * this.count) / 100 - 1e-9));
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.counts[i];
      if (seen >= rank) return Math.min(bucketHighest(i), this.max);
    }
    return this.max;
  }

  mean(): number {
    return this.count === 0 ? 0 : this.sum / this.count;
  }

  add(other: LatencyHistogram): void {
    for (let i = 0; i < BUCKETS; i++) this.counts[i] += other.counts[i];
    this.count += other.count;
    this.sum += other.sum;
    if (other.min < this.min) this.min = other.min;
    if (other.max > this.max) this.max = other.max;
  }

  reset(): void {
    this.counts.fill(0);
    this.count = 0;
    this.sum = 0;
    this.min = Infinity;
    this.max = 0;
  }

  summary(): HistogramSummary {
    const us = (ns: number) => Math.round(ns / 10) / 100; // µs with 2 decimals
    return {
      count: this.count,
      minUs: this.count === 0 ? 0 : us(this.min),
      p50Us: us(this.percentile(50)),
      p90Us: us(this.percentile(90)),
      p99Us: us(this.percentile(99)),
      p999Us: us(this.percentile(99.9)),
      maxUs: us(this.max),
      meanUs: us(this.mean()),
    };
  }

  /** Sparse form for postMessage / JSON: [index, count] pairs. */
  toJSON(): { buckets: Array<[number, number]>; count: number; min: number; max: number; sum: number } {
    const buckets: Array<[number, number]> = [];
    for (let i = 0; i < BUCKETS; i++) if (this.counts[i] > 0) buckets.push([i, this.counts[i]]);
    return { buckets, count: this.count, min: this.min, max: this.max, sum: this.sum };
  }

  static fromJSON(data: ReturnType<LatencyHistogram['toJSON']>): LatencyHistogram {
    const h = new LatencyHistogram();
    for (const [i, c] of data.buckets) h.counts[i] = c;
    h.count = data.count;
    h.min = data.min ?? Infinity;
    h.max = data.max;
    h.sum = data.sum;
    return h;
  }
}
