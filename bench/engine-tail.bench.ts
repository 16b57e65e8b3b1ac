// Where the engine's per-command latency tail comes from: the engine benchmark's stream (the same
// seed and mix as bench/engine.bench.ts), each command's service time timed alone with
// performance.now() as that bench's latency run does, beside the number of records the command
// wrote and the garbage collections that overlapped it.
//
//   typed-array stream ──decode──► Command ──Exchange.apply──► records into 1,024 slot places
//                                  │ performance.now() around apply; records claimed in between
//                                  ▼
//   per command: service time, records written, overlapped by a GC (PerformanceObserver 'gc')
//
// Reported, each the median of RUNS timed passes after WARMUP passes (each pass a fresh engine
// with the stream's setup applied, untimed):
//   - p50 / p99 / p99.9 of every command, and p99 without the commands a GC overlapped;
//   - the same by records written (the fewest any command writes, then buckets), each bucket's
//     share of the commands and of the slowest 1 %;
//   - the collections: how many, their total pause, the commands they overlapped;
//   - baselines, same run: one performance.now() pair with nothing between (the timer's own cost,
//     included in every sample), and a loop of constant work (integer multiplies, no memory
//     touched), sized to the engine's median command and timed the same way, in passes alternating
//     with the engine's: its tail is this machine's own jitter, what any work of that length sees.
//
// Run: `npx tsc -p tsconfig.json && node --expose-gc dist/bench/engine-tail.bench.js`
// Env: TAIL_BENCH_OPS (500,000 ≈ 910,000 commands), TAIL_BENCH_RUNS (5).

import { PerformanceObserver, performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { SLOT_BYTES } from '../engine/bus/codec.js';
import { Exchange } from '../engine/core/exchange.js';
import { benchConfig, decodeCommand, generateStream, newStreamCommand, type EngineStream } from './engine-stream.js';
import { gc, median } from './engine.bench.js';
import { SlotPlaces } from './slot-places.js';

const OPS = Number(process.env.TAIL_BENCH_OPS ?? 500_000);
const RUNS = Number(process.env.TAIL_BENCH_RUNS ?? 5);
const WARMUP = 2;
const SEED = 20240601;
const SINK_SLOTS = 1024;

/** Upper bounds of the record-count buckets after the fewest (inclusive); the last takes the rest. */
const BUCKET_TOPS = [6, 12, 30, Infinity];

interface Pass {
  /** performance.now() at each command's start, and its service time (ms). */
  starts: Float64Array;
  times: Float64Array;
  records: Uint16Array;
  /** [startTime, duration] of each collection observed during the pass (ms). */
  collections: Array<[number, number]>;
}

async function timedPass(stream: EngineStream): Promise<Pass> {
  const places = new SlotPlaces(SINK_SLOTS, SLOT_BYTES);
  const ex = new Exchange(benchConfig());
  let seq = 0;
  for (const c of stream.setup) { seq++; ex.apply(c, seq, seq, places); }
  gc();
  const collections: Array<[number, number]> = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) collections.push([entry.startTime, entry.duration]);
  });
  observer.observe({ entryTypes: ['gc'] });
  const n = stream.count;
  const starts = new Float64Array(n);
  const times = new Float64Array(n);
  const records = new Uint16Array(n);
  const cmd = newStreamCommand();
  for (let i = 0; i < n; i++) {
    decodeCommand(stream, i, cmd);
    seq++;
    const before = places.records;
    const t0 = performance.now();
    ex.apply(cmd, seq, seq, places);
    const t1 = performance.now();
    starts[i] = t0;
    times[i] = t1 - t0;
    records[i] = Math.min(0xffff, places.records - before);
  }
  // The observer's entries arrive on a later turn of the event loop.
  await new Promise((resolve) => setTimeout(resolve, 0));
  await new Promise((resolve) => setImmediate(resolve));
  observer.disconnect();
  return { starts, times, records, collections };
}

/** The `qs`-quantiles of `values` in µs (values in ms), in the order asked; sorts one copy. */
function quantilesUs(values: Float64Array, qs: number[]): number[] {
  if (values.length === 0) return qs.map(() => NaN);
  const sorted = Float64Array.from(values).sort();
  return qs.map((q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] * 1000);
}

/** Marks the commands whose interval overlaps a collection. */
function overlapped(pass: Pass): Uint8Array {
  const hit = new Uint8Array(pass.times.length);
  const spans = [...pass.collections].sort((a, b) => a[0] - b[0]);
  let first = 0;
  for (let i = 0; i < pass.times.length; i++) {
    const start = pass.starts[i];
    const end = start + pass.times[i];
    while (first < spans.length && spans[first][0] + spans[first][1] < start) first++;
    for (let k = first; k < spans.length && spans[k][0] < end; k++) {
      if (spans[k][0] + spans[k][1] > start) { hit[i] = 1; break; }
    }
  }
  return hit;
}

interface Bucket { label: string; share: number; topShare: number; p50: number; p99: number }

interface PassFigures {
  p50: number; p99: number; p999: number; p99WithoutGc: number;
  collections: number; pauseMs: number; overlappedCommands: number;
  recordsMean: number; topRecordsMean: number;
  buckets: Bucket[];
  /** The commands that trade (the stream's `traded`): the same commands whatever records a build writes for them. */
  trading: Bucket & { recordsMean: number };
}

/** The commands of `pass` that `traded` marks, as a bucket of their own with their records per command. */
function tradingFigures(pass: Pass, traded: Uint8Array, p99: number): Bucket & { recordsMean: number } {
  const members: number[] = [];
  let top = 0;
  let topTrading = 0;
  let records = 0;
  for (let i = 0; i < pass.times.length; i++) {
    const slow = pass.times[i] * 1000 >= p99;
    if (slow) top++;
    if (traded[i] === 0) continue;
    members.push(i);
    records += pass.records[i];
    if (slow) topTrading++;
  }
  const [p50, tradingP99] = quantilesUs(Float64Array.from(members, (i) => pass.times[i]), [0.5, 0.99]);
  return { label: 'trading', share: members.length / pass.times.length, topShare: topTrading / top, p50, p99: tradingP99, recordsMean: records / members.length };
}

function figures(pass: Pass, traded: Uint8Array): PassFigures {
  const n = pass.times.length;
  const hit = overlapped(pass);
  const [p50, p99, p999] = quantilesUs(pass.times, [0.5, 0.99, 0.999]);
  const fewest = pass.records.reduce((a, b) => Math.min(a, b), 0xffff);
  const bounds = [fewest, ...BUCKET_TOPS.map((top) => Math.max(top, fewest))];
  const members: number[][] = bounds.map(() => []);
  const topMembers = bounds.map(() => 0);
  let recordsSum = 0;
  let topRecords = 0;
  let top = 0;
  for (let i = 0; i < n; i++) {
    const r = pass.records[i];
    const bucket = bounds.findIndex((b) => r <= b);
    recordsSum += r;
    members[bucket].push(i);
    if (pass.times[i] * 1000 >= p99) { top++; topRecords += r; topMembers[bucket]++; }
  }
  const buckets: Bucket[] = [];
  for (let b = 0; b < bounds.length; b++) {
    if (members[b].length === 0) continue;
    const [bucketP50, bucketP99] = quantilesUs(Float64Array.from(members[b], (i) => pass.times[i]), [0.5, 0.99]);
    const low = b === 0 ? fewest : bounds[b - 1] + 1;
    const label = b === 0 ? `${fewest}` : bounds[b] === Infinity ? `${low}+` : `${low}–${bounds[b]}`;
    buckets.push({ label, share: members[b].length / n, topShare: topMembers[b] / top, p50: bucketP50, p99: bucketP99 });
  }
  const [p99WithoutGc] = quantilesUs(Float64Array.from(pass.times.filter((_, i) => hit[i] === 0)), [0.99]);
  return {
    p50, p99, p999, p99WithoutGc,
    collections: pass.collections.length, pauseMs: pass.collections.reduce((a, c) => a + c[1], 0),
    overlappedCommands: hit.reduce((a, b) => a + b, 0),
    recordsMean: recordsSum / n, topRecordsMean: topRecords / top,
    buckets,
    trading: tradingFigures(pass, traded, p99),
  };
}

let workSink = 0;

/** Constant work: `iterations` dependent integer multiplies, nothing allocated, no memory touched. */
function constantWork(iterations: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < iterations; i++) h = Math.imul(h ^ i, 16777619);
  return h;
}

/** The constant work's iterations whose median time is about `targetUs`. */
function calibrate(targetUs: number): number {
  let iterations = 16;
  for (;;) {
    const samples = new Float64Array(20_000);
    for (let i = 0; i < samples.length; i++) {
      const t0 = performance.now();
      workSink ^= constantWork(iterations);
      samples[i] = performance.now() - t0;
    }
    const [medianUs] = quantilesUs(samples, [0.5]);
    if (medianUs >= targetUs || iterations >= 1 << 24) return Math.max(1, Math.round((iterations * targetUs) / medianUs));
    iterations *= 2;
  }
}

/** `n` timings (ms) of the constant work, as the engine's commands are timed. */
function constantPass(n: number, iterations: number): Float64Array {
  const times = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    workSink ^= constantWork(iterations);
    times[i] = performance.now() - t0;
  }
  return times;
}

/** Median cost of one performance.now() pair with nothing between, in ns. */
function timerPairNs(): number {
  const samples = new Float64Array(1_000_000);
  for (let i = 0; i < samples.length; i++) {
    const t0 = performance.now();
    samples[i] = performance.now() - t0;
  }
  return quantilesUs(samples, [0.5])[0] * 1000;
}

const us = (x: number) => (x >= 10 ? x.toFixed(1) : x.toFixed(2));
const pct = (x: number) => `${(x * 100).toFixed(x < 0.01 ? 2 : 1)} %`;

export async function runEngineTailBench(): Promise<string> {
  const stream = generateStream(SEED, OPS);
  for (let w = 0; w < WARMUP; w++) await timedPass(stream);
  const iterations = calibrate(figures(await timedPass(stream), stream.traded).p50);
  const passes: PassFigures[] = [];
  const constant: Array<{ p50: number; p99: number; p999: number }> = [];
  for (let r = 0; r < RUNS; r++) {
    passes.push(figures(await timedPass(stream), stream.traded));
    const times = constantPass(stream.count, iterations);
    const [p50, p99, p999] = quantilesUs(times, [0.5, 0.99, 0.999]);
    constant.push({ p50, p99, p999 });
  }
  const timerNs = timerPairNs();
  const med = (pick: (f: PassFigures) => number) => median(passes.map(pick));
  const constantMed = (pick: (c: { p50: number; p99: number; p999: number }) => number) => median(constant.map(pick));
  const labels = passes[0].buckets.map((b) => b.label);
  const bucketMed = (label: string, pick: (b: Bucket) => number) =>
    median(passes.map((f) => f.buckets.find((b) => b.label === label)).filter((b): b is Bucket => b !== undefined).map(pick));
  let text = `### Engine service time by records written (bench/engine-tail.bench.ts; ${stream.count.toLocaleString('en-US')} commands of the engine benchmark's mix, median of ${RUNS} passes after ${WARMUP})\n\n`;
  text += `Baseline, same run: one performance.now() pair with nothing between, ${timerNs.toFixed(0)} ns (in every sample).\n\n`;
  text += '| | p50 | p99 | p99.9 | p99 without GC-overlapped commands |\n| --- | ---: | ---: | ---: | ---: |\n';
  text += `| every command | ${us(med((f) => f.p50))} µs | ${us(med((f) => f.p99))} µs | ${us(med((f) => f.p999))} µs | ${us(med((f) => f.p99WithoutGc))} µs |\n`;
  text += `| baseline: constant work sized to the engine's median (${iterations.toLocaleString('en-US')} multiplies), passes alternating with the engine's | ${us(constantMed((c) => c.p50))} µs | ${us(constantMed((c) => c.p99))} µs | ${us(constantMed((c) => c.p999))} µs | — |\n\n`;
  text += `Records written per command: ${med((f) => f.recordsMean).toFixed(2)} on average, ${med((f) => f.topRecordsMean).toFixed(1)} among the slowest 1 %. `;
  text += `Collections per pass: ${med((f) => f.collections)} (${med((f) => f.pauseMs).toFixed(1)} ms in all), overlapping ${med((f) => f.overlappedCommands)} commands.\n\n`;
  text += '| records written | share of commands | share of the slowest 1 % | p50 | p99 |\n| --- | ---: | ---: | ---: | ---: |\n';
  for (const label of labels) {
    text += `| ${label} | ${pct(bucketMed(label, (b) => b.share))} | ${pct(bucketMed(label, (b) => b.topShare))} | ${us(bucketMed(label, (b) => b.p50))} µs | ${us(bucketMed(label, (b) => b.p99))} µs |\n`;
  }
  const trading = (pick: (t: PassFigures['trading']) => number) => med((f) => pick(f.trading));
  text += `\nThe commands that trade (the same ${pct(trading((t) => t.share))} of the stream whatever records a build writes for them): `;
  text += `${trading((t) => t.recordsMean).toFixed(2)} records each, p50 ${us(trading((t) => t.p50))} µs, p99 ${us(trading((t) => t.p99))} µs, ${pct(trading((t) => t.topShare))} of the slowest 1 %.\n`;
  if (workSink === 0x7fffffff) text += '\n';
  return text;
}

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  process.stdout.write(await runEngineTailBench());
}
