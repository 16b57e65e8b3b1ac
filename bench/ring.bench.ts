// ringHandoffVsPostMessage: what the SharedArrayBuffer rings buy over worker postMessage, between
// the main thread and one worker, for 64-byte messages.
//
//   throughput   main ──InboundRing (4,096 × 64 B)──────────────► worker   (publish per message)
//                main ──OutboundRing (4,096 × 64 B)─────────────► worker   (flush per 32)
//                main ──postMessage(64 B Uint8Array)────────────► worker   (baseline, ≤ 4,096 in flight)
//                main ──postMessage(32 × 64 B in one buffer)────► worker   (batched baseline)
//   round trip   main ──InboundRing──► worker ──OutboundRing──► main      (park / spin / waitAsync)
//                main ──postMessage──► worker ──postMessage──► main       (baseline)
//
// Every consumer reads all 16 words of each message and folds them into an order-sensitive
// checksum that must equal the one the sender expects, and every echo must answer word0 + 1, so a
// fast transport that loses, reorders or tears messages fails instead of winning.
// Round trips are a closed loop with one message in flight: each sample is one whole trip, so
// there is no queue for coordinated omission to hide. The first 10 % of trips are warm-up.
// Cross-thread work does not fit tinybench's single-thread loop, so it is timed by hand with
// process.hrtime.bigint(); tinybench measures the single-thread cost of the ring operations and of
// the structured clone that postMessage performs for each message.
//
// Run: `npx tsc -p tsconfig.json && node dist/bench/ring.bench.js` (RING_BENCH_RUNS, default 5).

import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { Bench } from 'tinybench';
import { InboundRing, OutboundRing } from '../engine/bus/ring.js';
import { MESSAGE_BYTES, MESSAGE_WORDS, foldChecksum, type RingWorkerDone, type RingWorkerJob } from './ring-worker.js';

const RUNS = Number(process.env.RING_BENCH_RUNS ?? 5);
const THROUGHPUT_COUNT = 1_000_000;
const ROUND_TRIP_COUNT = 20_000;
const SLOT_COUNT = 4096;
const OUTBOUND_FLUSH_EVERY = 32;
const POST_IN_FLIGHT_MAX = 4096;
const POST_ACK_EVERY = 1024;
const POST_BATCH = 32;
const WAIT_MS = 1000;

interface Started {
  worker: Worker;
  /** Resolves with the worker's final 'done' message. */
  done: Promise<RingWorkerDone>;
}

/** Starts a job in a fresh worker and resolves once the worker has attached and is ready. */
async function startJob(job: RingWorkerJob, onOther?: (message: unknown) => void): Promise<Started> {
  const worker = new Worker(new URL('./ring-worker.js', import.meta.url), { workerData: job });
  let resolveDone!: (done: RingWorkerDone) => void;
  let rejectDone!: (error: unknown) => void;
  const done = new Promise<RingWorkerDone>((resolve, reject) => { resolveDone = resolve; rejectDone = reject; });
  const ready = new Promise<void>((resolve, reject) => {
    worker.on('message', (message: { type?: string }) => {
      if (message?.type === 'ready') resolve();
      else if (message?.type === 'done') resolveDone(message as RingWorkerDone);
      else onOther?.(message);
    });
    worker.once('error', (error) => { reject(error); rejectDone(error); });
  });
  await ready;
  return { worker, done };
}

/** Writes message `k` (16 words derived from k) at `offset`. */
function writeMessage(view: DataView, offset: number, k: number): void {
  view.setUint32(offset, k, true);
  for (let i = 1; i < MESSAGE_WORDS; i++) view.setUint32(offset + i * 4, (k ^ (i * 0x01010101)) >>> 0, true);
}

function expectedChecksum(count: number): number {
  let checksum = 0;
  for (let k = 0; k < count; k++) checksum = foldChecksum(checksum, k, (k ^ ((MESSAGE_WORDS - 1) * 0x01010101)) >>> 0);
  return checksum;
}

function check(done: RingWorkerDone, count: number, expected: number, what: string): void {
  if (done.received !== count || done.checksum !== expected) {
    throw new Error(`${what}: worker received ${done.received} with checksum ${done.checksum}, expected ${count} and ${expected}`);
  }
}

function secondsSince(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e9;
}

async function inboundThroughput(count: number, expected: number): Promise<number> {
  const ring = InboundRing.create({ slotCount: SLOT_COUNT, slotBytes: MESSAGE_BYTES });
  const { worker, done } = await startJob({ kind: 'inbound-throughput', sab: ring.sab, count });
  const view = ring.view;
  const start = process.hrtime.bigint();
  for (let k = 0; k < count;) {
    const seq = ring.tryClaim();
    if (seq < 0) { ring.waitForSpace(WAIT_MS); continue; }
    try {
      writeMessage(view, ring.offsetOf(seq), k);
    } finally {
      ring.publish(seq);
    }
    k++;
  }
  const result = await done;
  const seconds = secondsSince(start);
  await worker.terminate();
  check(result, count, expected, 'InboundRing throughput');
  return count / seconds;
}

async function outboundThroughput(count: number, expected: number): Promise<number> {
  const ring = OutboundRing.create({ slotCount: SLOT_COUNT, slotBytes: MESSAGE_BYTES, consumerCount: 1 });
  const { worker, done } = await startJob({ kind: 'outbound-throughput', sab: ring.sab, count });
  const view = ring.view;
  const start = process.hrtime.bigint();
  for (let k = 0; k < count;) {
    const seq = ring.tryClaim();
    if (seq < 0) { ring.waitForConsumers(WAIT_MS); continue; }
    writeMessage(view, ring.offsetOf(seq), k);
    ring.publish(seq);
    k++;
    if (k % OUTBOUND_FLUSH_EVERY === 0) ring.flush();
  }
  ring.flush();
  const result = await done;
  const seconds = secondsSince(start);
  await worker.terminate();
  check(result, count, expected, 'OutboundRing throughput');
  return count / seconds;
}

/** postMessage with credit-based flow control, so the sender cannot queue without bound. */
async function postThroughput(count: number, expected: number, perPost: number): Promise<number> {
  let acknowledged = 0;
  let wake: (() => void) | null = null;
  const { worker, done } = await startJob({ kind: 'post-throughput', count, ackEvery: POST_ACK_EVERY, perPost }, (message) => {
    acknowledged = (message as { received: number }).received;
    wake?.();
  });
  const message = new Uint8Array(MESSAGE_BYTES * perPost);
  const view = new DataView(message.buffer);
  const start = process.hrtime.bigint();
  for (let k = 0; k < count;) {
    if (k - acknowledged >= POST_IN_FLIGHT_MAX) {
      await new Promise<void>((resolve) => { wake = resolve; });
      wake = null;
      continue;
    }
    for (let j = 0; j < perPost; j++) writeMessage(view, j * MESSAGE_BYTES, k + j);
    worker.postMessage(message);
    k += perPost;
  }
  const result = await done;
  const seconds = secondsSince(start);
  await worker.terminate();
  check(result, count, expected, `postMessage throughput (${perPost} per post)`);
  return count / seconds;
}

interface Percentiles { p50Us: number; p99Us: number }

function percentiles(samplesNs: Float64Array): Percentiles {
  const kept = samplesNs.slice(Math.floor(samplesNs.length / 10)).sort();
  const at = (q: number): number => kept[Math.min(kept.length - 1, Math.floor(q * kept.length))] / 1000;
  return { p50Us: at(0.5), p99Us: at(0.99) };
}

type RingWait = 'park' | 'spin' | 'waitAsync';

/** Ring round trips; the main thread waits for each answer by parking, spinning or waitAsync. */
async function ringRoundTrip(count: number, wait: RingWait): Promise<Percentiles> {
  const inbound = InboundRing.create({ slotCount: 64, slotBytes: MESSAGE_BYTES });
  const outbound = OutboundRing.create({ slotCount: 64, slotBytes: MESSAGE_BYTES, consumerCount: 1 });
  const consumer = outbound.consumer(0);
  const { worker, done } = await startJob({
    kind: 'ring-echo', inboundSab: inbound.sab, outboundSab: outbound.sab, count, park: wait !== 'spin',
  });
  const samples = new Float64Array(count);
  let answer = 0;
  const onAnswer = (offset: number): boolean => { answer = outbound.view.getUint32(offset, true); return true; };
  for (let k = 0; k < count; k++) {
    const start = process.hrtime.bigint();
    const seq = inbound.tryClaim();
    try {
      writeMessage(inbound.view, inbound.offsetOf(seq), k);
    } finally {
      inbound.publish(seq);
    }
    for (;;) {
      const seen = outbound.signalValue();
      if (consumer.poll(onAnswer, 1) === 1) break;
      if (wait === 'park') outbound.waitSignal(seen, WAIT_MS);
      else if (wait === 'waitAsync') await outbound.waitSignalAsync(seen, WAIT_MS);
    }
    samples[k] = Number(process.hrtime.bigint() - start);
    if (answer !== k + 1) throw new Error(`ring round trip ${k}: answer ${answer}`);
  }
  check(await done, count, expectedChecksum(count), `ring round trip (${wait})`);
  await worker.terminate();
  return percentiles(samples);
}

async function postRoundTrip(count: number): Promise<Percentiles> {
  let answered: ((message: Uint8Array) => void) | null = null;
  const { worker, done } = await startJob({ kind: 'post-echo', count }, (message) => answered?.(message as Uint8Array));
  const message = new Uint8Array(MESSAGE_BYTES);
  const view = new DataView(message.buffer);
  const samples = new Float64Array(count);
  for (let k = 0; k < count; k++) {
    const start = process.hrtime.bigint();
    const reply = new Promise<Uint8Array>((resolve) => { answered = resolve; });
    writeMessage(view, 0, k);
    worker.postMessage(message);
    const answer = await reply;
    samples[k] = Number(process.hrtime.bigint() - start);
    const value = new DataView(answer.buffer, answer.byteOffset).getUint32(0, true);
    if (value !== k + 1) throw new Error(`postMessage round trip ${k}: answer ${value}`);
  }
  check(await done, count, expectedChecksum(count), 'postMessage round trip');
  await worker.terminate();
  return percentiles(samples);
}

/** Single-thread cost of one ring handoff (no second thread), and of postMessage's structured clone. */
async function singleThreadCosts(): Promise<{ name: string; nsPerOp: number }[]> {
  const inbound = InboundRing.create({ slotCount: 1024, slotBytes: MESSAGE_BYTES });
  const outbound = OutboundRing.create({ slotCount: 1024, slotBytes: MESSAGE_BYTES, consumerCount: 1 });
  const consumer = outbound.consumer(0);
  const message = new Uint8Array(MESSAGE_BYTES);
  let sink = 0;
  const onSlot = (offset: number): void => { sink ^= inbound.view.getUint32(offset, true); };
  const onRecord = (offset: number): boolean => { sink ^= outbound.view.getUint32(offset, true); return true; };
  const bench = new Bench({ name: 'ring single-thread', time: 500, warmupTime: 100 });
  bench
    .add('InboundRing claim + write 64 B + publish + poll', () => {
      const seq = inbound.tryClaim();
      writeMessage(inbound.view, inbound.offsetOf(seq), seq);
      inbound.publish(seq);
      inbound.poll(onSlot, 1);
    })
    .add('OutboundRing claim + write 64 B + publish + flush + poll', () => {
      const seq = outbound.tryClaim();
      writeMessage(outbound.view, outbound.offsetOf(seq), seq);
      outbound.publish(seq);
      outbound.flush();
      consumer.poll(onRecord, 1);
    })
    .add('structuredClone of a 64 B Uint8Array (postMessage copies this way)', () => {
      sink ^= structuredClone(message).length;
    });
  await bench.run();
  if (sink === 0.5) console.log(sink); // keeps the reads observable to the optimiser
  return bench.tasks.map((task) => {
    const result = task.result;
    if (result.state !== 'completed') throw new Error(`tinybench task ${task.name} ended as ${result.state}`);
    return { name: task.name, nsPerOp: result.latency.p50 * 1e6 };
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function formatRate(perSecond: number): string {
  return perSecond >= 1e6 ? `${(perSecond / 1e6).toFixed(2)} M` : `${(perSecond / 1e3).toFixed(0)} k`;
}

async function repeat<T>(runs: number, once: () => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let i = 0; i < runs; i++) results.push(await once());
  return results;
}

export async function runRingBench(): Promise<string> {
  const expected = expectedChecksum(THROUGHPUT_COUNT);
  const throughput: [string, number[]][] = [
    ['InboundRing, publish per message', await repeat(RUNS, () => inboundThroughput(THROUGHPUT_COUNT, expected))],
    [`OutboundRing, flush per ${OUTBOUND_FLUSH_EVERY}`, await repeat(RUNS, () => outboundThroughput(THROUGHPUT_COUNT, expected))],
    ['postMessage, one 64 B message per post', await repeat(RUNS, () => postThroughput(THROUGHPUT_COUNT, expected, 1))],
    [`postMessage, ${POST_BATCH} messages per post`, await repeat(RUNS, () => postThroughput(THROUGHPUT_COUNT, expected, POST_BATCH))],
  ];
  const roundTrip: [string, Percentiles[]][] = [
    ['Ring, both sides park (Atomics.wait)', await repeat(RUNS, () => ringRoundTrip(ROUND_TRIP_COUNT, 'park'))],
    ['Ring, main waitSignalAsync, worker parks', await repeat(RUNS, () => ringRoundTrip(ROUND_TRIP_COUNT, 'waitAsync'))],
    ['Ring, both sides spin', await repeat(RUNS, () => ringRoundTrip(ROUND_TRIP_COUNT, 'spin'))],
    ['postMessage', await repeat(RUNS, () => postRoundTrip(ROUND_TRIP_COUNT))],
  ];
  const costs = await singleThreadCosts();

  const postRate = median(throughput[2][1]);
  const postRtt = roundTrip[3][1];
  const postP50 = median(postRtt.map((p) => p.p50Us));
  const postP99 = median(postRtt.map((p) => p.p99Us));
  const lines = [
    `### Ring vs postMessage, main thread ↔ one worker, 64-byte messages (Node ${process.versions.node}, median of ${RUNS} runs)`,
    '',
    `Throughput: ${THROUGHPUT_COUNT.toLocaleString('en-US')} messages per run, ${SLOT_COUNT}-slot rings, checksum verified.`,
    '',
    '| Transport | msg/s (median) | range | ring / postMessage |',
    '|---|---|---|---|',
    ...throughput.map(([name, rates]) =>
      `| ${name} | ${formatRate(median(rates))} | ${formatRate(Math.min(...rates))}–${formatRate(Math.max(...rates))} | ${(median(rates) / postRate).toFixed(2)}x |`),
    '',
    `Round trip (ping-pong, one in flight): ${ROUND_TRIP_COUNT.toLocaleString('en-US')} trips per run, first 10 % dropped; ratio < 1 means the ring is faster.`,
    '',
    '| Transport | p50 µs (median) | p99 µs (median) | p50 ring / postMessage | p99 ring / postMessage |',
    '|---|---|---|---|---|',
    ...roundTrip.map(([name, runs]) => {
      const p50 = median(runs.map((p) => p.p50Us));
      const p99 = median(runs.map((p) => p.p99Us));
      return `| ${name} | ${p50.toFixed(1)} | ${p99.toFixed(1)} | ${(p50 / postP50).toFixed(2)} | ${(p99 / postP99).toFixed(2)} |`;
    }),
    '',
    'Single thread (tinybench, median ns per operation):',
    '',
    '| Operation | ns/op |',
    '|---|---|',
    ...costs.map(({ name, nsPerOp }) => `| ${name} | ${nsPerOp.toFixed(0)} |`),
    '',
  ];
  return lines.join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(await runRingBench());
}
