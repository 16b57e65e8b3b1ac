// The durable journal: append rate, the acknowledgement latency group commit adds under load,
// and replay (restart) rate, each next to raw lmdb in the same run.
//
//   capture     the engine benchmark's command stream (bench/engine-stream.ts, exchange-core's
//               mix) run once through Exchange + Sequencer into an in-process outbound ring; every
//               record (Stamped, outputs, CommandEnd) is copied out. Untimed.
//   append      JournalWriter (digest) over LmdbJournalStore (each run sealed: its checksum) on a fresh data
//               directory, each BATCH commands (the journal worker's per-pass bound) appended in one
//               synchronous transaction and then flushed, as the worker commits: durable commands
//               (= journal records) per second.
//               ceiling: raw lmdb writing the same bytes, each batch's 192-byte records as one value
//               in one synchronous transaction, flushed; and one put per record (the layout before
//               runs), same batches.
//   latency     commands arrive at a fixed offered rate; each pass appends what has arrived and
//               commits (group commit, as the worker does); per command, time from arrival to its
//               batch being flushed = the acknowledgement latency the journal adds. p50/p99,
//               medians of LATENCY_RUNS runs (JOURNAL_BENCH_LATENCY_RUNS, 5), each followed by
//               its baseline: the same loop, each batch written raw as one value.
//   sleeps      why the journal's p99 exceeds raw lmdb's: CPU work timed in passes back to back
//               and with a SLEEP_MS wait between passes (as the worker waits for each flush), with no
//               disk at all: the writer's passes of SLEEP_PASS_COMMANDS commands over a store held
//               in memory, and a fixed table-lookup loop as the control (not our code). On this
//               VM a thread that sleeps between passes runs some passes several times slower;
//               raw lmdb's loop has almost no CPU to slow down. p99 ÷ p50 of a pass, medians of
//               RUNS alternating runs.
//   replay      recover() of a journal of REPLAY_COMMANDS commands written by the real writer
//               (every record's checksum and output digest checked, engine rebuilt): commands/s
//               and restart time; REPLAY_COMMANDS defaults to 10 M, so the 10 M restart is measured
//               (a smaller JOURNAL_BENCH_REPLAY gives a linear extrapolation, stated as such).
//               Repeated RUNS times over one written journal, each next to the engine alone (the
//               same records read and applied with no checksum, no digest: the ceiling replay can
//               reach) and a plain getRange over the stored values (read floor); wall and CPU time.
//
// Run alone: `npm run build && node --expose-gc dist/bench/journal.bench.js`; `npm run bench` runs
// it with the other suites. JOURNAL_BENCH_SECTIONS=append (or latency, sleeps, replay, comma-separated) runs
// only those sections.
//
// `node dist/bench/journal.bench.js drive N CAPTURE [digest]` is the writer alone for a count of
// instructions (bench/journal-writer-callgrind.sh): it captures CAPTURE commands, writes all of them
// once (warm-up) and then the first N into a fresh store, in the append section's batches, and
// prints {commands, records}; with `digest`, the sha256 of every record the N commands stored
// (stamped command and output digest: writeCommands); with `memory`, the same passes into a store
// in memory that seals each batch as the LMDB store seals a run and keeps nothing (MemoryStore:
// the writer's own count, with no LMDB and no flush); with `memory-time`, the writer's CPU per
// command over that store, the median of 9 timed passes of the first N.
//
// `node dist/bench/journal.bench.js write-journal DIR N` writes N commands of the mix into a fresh
// data directory DIR as the replay section does; `recover-journal DIR` then runs one recover() of
// it, and `recover-journal DIR apply` the engine alone over its records (bench/replay-callgrind.sh).

import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { open } from 'lmdb';
import { Exchange } from '../engine/core/exchange.js';
import { JOURNAL_RECORD_BYTES, SLOT_BYTES, newStampedRec, readStamped } from '../engine/bus/codec.js';
import { OutboundRing } from '../engine/bus/ring.js';
import { engineConfigFingerprint, recover } from '../engine/shell/journal.js';
import { LmdbJournalStore, seqKey } from '../engine/store/journal-store.js';
import * as layout from '../engine/store/journal-layout.js';
import { JournalWriter, type JournalWriterStore } from '../engine/shell/journal-writer.js';
import { Sequencer } from '../engine/shell/sequencer.js';
import { CommandKind } from '../engine/bus/types.js';
import { benchConfig, decodeCommand, generateStream, newStreamCommand } from './engine-stream.js';

const BATCH = 8192;
const APPEND_COMMANDS = Number(process.env.JOURNAL_BENCH_APPEND ?? 200_000);
const REPLAY_COMMANDS = Number(process.env.JOURNAL_BENCH_REPLAY ?? 10_000_000);
const OFFERED_RATE = Number(process.env.JOURNAL_BENCH_RATE ?? 100_000);
const LATENCY_SECONDS = 2;
/** Latency runs of each loop, alternating (one disk stall decides a single run's p99). */
const LATENCY_RUNS = Number(process.env.JOURNAL_BENCH_LATENCY_RUNS ?? 5);
const RUNS = 3;
/** The sleeps section: commands per writer pass, the wait between passes, and the control loop's steps per pass. */
const SLEEP_PASS_COMMANDS = 50;
const SLEEP_MS = 0.3;
const CONTROL_STEPS = 20_000;
/** Passes of each append path before the measured ones. */
const APPEND_WARMUPS = 2;
const RECORD = JOURNAL_RECORD_BYTES;

interface Capture {
  bytes: Uint8Array;
  view: DataView;
  /** Offset of each captured record, and the command index it belongs to. */
  records: number;
  commandEnds: Int32Array; // record index after the last record of command i
  commands: number;
}

/** Runs `commands` stream commands through the engine shell's write side, copying every record. */
function capture(commands: number, seed: number, onRecord?: (view: DataView, offset: number) => void, onCommand?: (i: number) => void): Capture {
  const config = benchConfig();
  const stream = generateStream(seed, Math.ceil(commands / 1.8));
  const exchange = new Exchange(config);
  const ring = OutboundRing.create({ slotCount: 1 << 16, slotBytes: SLOT_BYTES, consumerCount: 1 });
  const consumer = ring.consumer(0);
  const sequencer = new Sequencer(exchange, ring, () => {
    const s = ring.tryClaim();
    if (s < 0) throw new Error('capture ring full');
    return s;
  });
  const keep = onRecord === undefined;
  let bytes = new Uint8Array(keep ? commands * 4 * SLOT_BYTES : 0);
  let records = 0;
  const commandEnds = new Int32Array(keep ? commands : 0);
  const drain = (): void => {
    ring.flush();
    consumer.poll((offset) => {
      if (keep) {
        if ((records + 1) * SLOT_BYTES > bytes.length) {
          const grown = new Uint8Array(bytes.length * 2);
          grown.set(bytes);
          bytes = grown;
        }
        bytes.set(ring.bytes.subarray(offset, offset + SLOT_BYTES), records * SLOT_BYTES);
        records++;
      } else onRecord(ring.view, offset);
      return true;
    }, 1 << 20);
  };
  let seq = 0;
  let n = 0;
  const cmd = newStreamCommand();
  const run = (c: typeof cmd): void => {
    seq++;
    sequencer.command(seq, seq, c, null, 0);
    drain();
    if (keep) commandEnds[n] = records;
    onCommand?.(n);
    n++;
  };
  for (const c of stream.setup) if (n < commands) run(c);
  for (let i = 0; i < stream.count && n < commands; i++) {
    decodeCommand(stream, i, cmd);
    if (cmd.kind >= CommandKind.QueryBalances) continue;
    run(cmd);
  }
  return { bytes, view: new DataView(bytes.buffer), records, commandEnds, commands: n };
}

/** Wall and process CPU seconds of `body` (the CPU figure holds up better than wall time on a shared machine). */
function timed(body: () => void): { wall: number; cpu: number } {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  body();
  const used = process.cpuUsage(cpu);
  return { wall: (performance.now() - wall) / 1000, cpu: (used.user + used.system) / 1e6 };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

async function withDir<T>(body: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'journal-bench-'));
  try {
    return await body(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The journal worker's pass: the batch's records appended in one synchronous transaction, then committed (flushed). */
async function commitPass(store: LmdbJournalStore, writer: JournalWriter, body: () => void): Promise<void> {
  store.root.transactionSync(() => {
    body();
    (store as { endBatch?: () => void }).endBatch?.();
  });
  await writer.commit();
}

/** The first `commands` captured commands through a JournalWriter into `store`, in BATCH-command passes. */
async function writeBatches(store: LmdbJournalStore, c: Capture, commands: number): Promise<void> {
  const writer = new JournalWriter(store, 0, 0);
  let record = 0;
  for (let i = 0; i < commands; i += BATCH) {
    const end = Math.min(commands, i + BATCH);
    await commitPass(store, writer, () => {
      for (; record < c.commandEnds[end - 1]; record++) writer.onRecord(c.view, record * SLOT_BYTES);
    });
  }
}

async function appendJournal(c: Capture): Promise<number> {
  return withDir(async (dir) => {
    const store = new LmdbJournalStore(dir);
    const started = performance.now();
    await writeBatches(store, c, c.commands);
    const seconds = (performance.now() - started) / 1000;
    await store.close();
    return c.commands / seconds;
  });
}

/**
 * Raw lmdb, the same number of 192-byte records in the same batches, each batch one synchronous
 * transaction then flushed: `perRecord` puts each record under its own key (the layout before
 * runs), otherwise the batch's bytes go in as one value (the bytes the journal writes, no work).
 */
async function appendRaw(count: number, perRecord: boolean): Promise<number> {
  return withDir(async (dir) => {
    const root = open({ path: join(dir, 'raw'), maxDbs: 4 });
    const db = root.openDB<Buffer, Buffer>({ name: 'raw', keyEncoding: 'binary', encoding: 'binary' });
    const started = performance.now();
    for (let i = 1; i <= count; i += BATCH) {
      const n = Math.min(BATCH, count - i + 1);
      rawBatch(root, db, i, n, perRecord);
      await db.flushed;
    }
    const seconds = (performance.now() - started) / 1000;
    await root.close();
    return count / seconds;
  });
}

type RawRoot = ReturnType<typeof open>;
type RawDb = ReturnType<RawRoot['openDB']>;

/** One raw batch of `n` 192-byte records from `first`, in one synchronous transaction. */
function rawBatch(root: RawRoot, db: RawDb, first: number, n: number, perRecord: boolean): void {
  root.transactionSync(() => {
    if (perRecord) for (let k = 0; k < n; k++) db.put(seqKey(first + k), Buffer.alloc(RECORD, (first + k) & 0xff));
    else db.put(seqKey(first), Buffer.alloc(RECORD * n, first & 0xff));
  });
}

/** Offered load at `rate` commands/s: per command, arrival → its batch flushed (ms). c null: raw lmdb, one value per batch. */
async function latency(c: Capture | null, rate: number, seconds: number): Promise<Float64Array> {
  return withDir(async (dir) => {
    const total = Math.min(Math.floor(rate * seconds), c ? c.commands : Infinity);
    const samples = new Float64Array(total);
    const store = c ? new LmdbJournalStore(dir) : null;
    const writer = store ? new JournalWriter(store, 0, 0) : null;
    const root = c ? null : open({ path: join(dir, 'raw'), maxDbs: 4 });
    const db = root ? root.openDB({ name: 'raw', keyEncoding: 'binary', encoding: 'binary' }) : null;
    const started = performance.now();
    let next = 0;
    let record = 0;
    while (next < total) {
      const arrived = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate));
      if (arrived === next) {
        await new Promise((resolve) => setImmediate(resolve));
        continue;
      }
      const from = next;
      if (c) {
        await commitPass(store!, writer!, () => {
          for (; record < c.commandEnds[arrived - 1]; record++) writer!.onRecord(c.view, record * SLOT_BYTES);
        });
      } else {
        rawBatch(root!, db!, from + 1, arrived - from, false);
        await db!.flushed;
      }
      next = arrived;
      const done = performance.now() - started;
      for (let i = from; i < next; i++) samples[i] = done - (i / rate) * 1000;
    }
    if (store) await store.close();
    if (root) await root.close();
    return samples.sort();
  });
}

interface ReplayFigures {
  commands: number;
  writeSeconds: number;
  /** recover(): every checksum and output digest checked, engine rebuilt (one per run). */
  restartSeconds: number[];
  restartCpuSeconds: number[];
  /** The same records read and applied, nothing checked, no digest: the engine's own rate (one per run). */
  applySeconds: number[];
  applyCpuSeconds: number[];
  /** Reading every stored value with getRange (one per run). */
  readSeconds: number[];
}

/** Writes a journal of `commands` commands with the real writer, then times recover() against its floors, RUNS times. */
/**
 * `commands` commands of the mix written by the real writer into a fresh data directory `dir` (the
 * replay section's journal, and the write-journal mode's): each batch committed as it completes
 * (the capture runs synchronously), all flushed at the end. Returns the commands written and the
 * seconds it took.
 */
async function writeJournal(dir: string, commands: number): Promise<{ commands: number; writeSeconds: number }> {
  const config = benchConfig();
  const store = new LmdbJournalStore(dir);
  recover(store, config, engineConfigFingerprint(config));
  const writer = new JournalWriter(store, 0, 0);
  const writeStarted = performance.now();
  const endBatch = (): void => (store as { endBatch?: () => void }).endBatch?.();
  const c = capture(commands, 7, (view, offset) => writer.onRecord(view, offset), (i) => {
    if ((i + 1) % BATCH === 0) store.root.transactionSync(endBatch);
  });
  await commitPass(store, writer, () => {});
  const writeSeconds = (performance.now() - writeStarted) / 1000;
  await store.close();
  return { commands: c.commands, writeSeconds };
}

async function replay(commands: number): Promise<ReplayFigures> {
  return withDir(async (dir) => {
    const config = benchConfig();
    const { commands: written, writeSeconds } = await writeJournal(dir, commands);
    const figures: ReplayFigures = { commands: written, writeSeconds, restartSeconds: [], restartCpuSeconds: [], applySeconds: [], applyCpuSeconds: [], readSeconds: [] };
    for (let run = 0; run < RUNS; run++) {
      global.gc?.();
      let reopened: LmdbJournalStore | null = null;
      const restart = timed(() => {
        reopened = new LmdbJournalStore(dir);
        const recovered = recover(reopened, config, engineConfigFingerprint(config));
        if (recovered.lastSeq !== written) throw new Error(`replayed ${recovered.lastSeq} of ${written}`);
      });
      figures.restartSeconds.push(restart.wall);
      figures.restartCpuSeconds.push(restart.cpu);
      global.gc?.();
      const apply = timed(() => applyOnly(reopened!, config));
      figures.applySeconds.push(apply.wall);
      figures.applyCpuSeconds.push(apply.cpu);
      figures.readSeconds.push(readOnly(reopened!));
      await reopened!.close();
    }
    return figures;
  });
}

/** Seconds to read every record and apply it to a fresh engine, with no checksum, no digest and a sink that keeps nothing. */
function applyOnly(store: LmdbJournalStore, config: ReturnType<typeof benchConfig>): void {
  const exchange = new Exchange(config);
  const sink = { view: new DataView(new ArrayBuffer(SLOT_BYTES)), claim: () => 0, written: () => {} };
  const rec = newStampedRec();
  for (const { value } of store.range(1)) {
    const view = new DataView(value.buffer, value.byteOffset, value.length);
    for (let at = 0; at < value.length; at += RECORD) {
      readStamped(view, at, rec);
      exchange.apply(rec.command, rec.seq, rec.timeUs, sink);
    }
  }
}

/** Seconds to iterate every stored value with lmdb getRange (the read floor). */
function readOnly(store: LmdbJournalStore): number {
  const started = performance.now();
  let bytes = 0;
  for (const { value } of store.records.getRange({})) bytes += value.length;
  if (bytes === 0) throw new Error('nothing read');
  return (performance.now() - started) / 1000;
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
const ms = (n: number): string => n.toFixed(2);

/** The bench's sections: all by default, or those JOURNAL_BENCH_SECTIONS names (comma-separated). */
const SECTIONS = new Set((process.env.JOURNAL_BENCH_SECTIONS ?? 'append,latency,sleeps,replay').split(','));

async function appendSection(c: Capture): Promise<string> {
  const journal: number[] = [];
  const rawRun: number[] = [];
  const rawPerRecord: number[] = [];
  // Warm-up passes first, as the engine suite's: the journal worker of a running server has long
  // been optimized by V8, and a first pass over a fresh writer is not what it costs.
  for (let run = -APPEND_WARMUPS; run < RUNS; run++) {
    const figures = [await appendJournal(c), await appendRaw(c.commands, false), await appendRaw(c.commands, true)];
    if (run < 0) continue;
    journal.push(figures[0]);
    rawRun.push(figures[1]);
    rawPerRecord.push(figures[2]);
  }
  return `
### Durable append (${fmt(c.commands)} commands of the engine benchmark's mix, ${(c.records / c.commands).toFixed(2)} outbound records per command, batches of ${BATCH}, median of ${RUNS} after ${APPEND_WARMUPS} warm-ups)

Each batch is one synchronous transaction then flushed, as the journal worker commits.

| | durable commands (journal records)/s | ratio |
| --- | ---: | ---: |
| JournalWriter: output digest + LmdbJournalStore, each run's crc32 (native), flushed | ${fmt(median(journal))} | ${(median(journal) / median(rawRun)).toFixed(2)}× |
| ceiling: raw lmdb, the batch's ${RECORD}-byte records as one value, flushed | ${fmt(median(rawRun))} | 1× |
| raw lmdb, one put per ${RECORD}-byte record (the layout before runs), flushed | ${fmt(median(rawPerRecord))} | ${(median(rawPerRecord) / median(rawRun)).toFixed(2)}× |

`;
}

/** The writer's store for the sleeps section: one reused buffer in memory, nothing sealed or stored. */
class ScratchStore implements JournalWriterStore {
  reservedAt = 0;
  chainFrom(): void {}
  private readonly buffer = Buffer.alloc((SLEEP_PASS_COMMANDS + 1) * RECORD);
  reserve(): Uint8Array {
    this.reservedAt = (this.reservedAt + RECORD) % this.buffer.length;
    return this.buffer;
  }
  async commit(): Promise<void> {}
}

/** Per pass of `pass`, its time in µs, the passes back to back (sleepMs 0) or with a wait of sleepMs after each; sorted. */
function passTimes(passes: number, pass: (i: number) => void, sleepMs: number): Float64Array {
  const parked = new Int32Array(new SharedArrayBuffer(4));
  const times = new Float64Array(passes);
  for (let i = 0; i < passes; i++) {
    const started = performance.now();
    pass(i);
    times[i] = (performance.now() - started) * 1000;
    if (sleepMs > 0) Atomics.wait(parked, 0, 0, sleepMs);
  }
  return times.sort();
}

/** The writer over the whole capture, SLEEP_PASS_COMMANDS commands a pass. */
function writerPasses(c: Capture, sleepMs: number): Float64Array {
  const writer = new JournalWriter(new ScratchStore(), 0, 0);
  let record = 0;
  return passTimes(Math.floor(c.commands / SLEEP_PASS_COMMANDS), (i) => {
    const end = c.commandEnds[(i + 1) * SLEEP_PASS_COMMANDS - 1];
    for (; record < end; record++) writer.onRecord(c.view, record * SLOT_BYTES);
  }, sleepMs);
}

/** The control: CONTROL_STEPS dependent table lookups a pass, as many passes as the writer's. */
function controlPasses(passes: number, sleepMs: number): Float64Array {
  const table = new Int32Array(2048).map((_, i) => Math.imul(i, 0x9e3779b1));
  let sink = 0;
  const times = passTimes(passes, () => {
    let x = sink;
    for (let k = 0; k < CONTROL_STEPS; k++) x = table[(x ^ k) & 2047] ^ (x >>> 8);
    sink = x;
  }, sleepMs);
  if (sink === 0x7fffffff) throw new Error('control loop folded away');
  return times;
}

function sleepsSection(c: Capture): string {
  const passes = Math.floor(c.commands / SLEEP_PASS_COMMANDS);
  const rows = [
    { name: `JournalWriter, ${SLEEP_PASS_COMMANDS} commands a pass, store in memory`, run: (sleep: number) => writerPasses(c, sleep) },
    { name: `control: ${fmt(CONTROL_STEPS)} dependent table lookups a pass (no journal code)`, run: (sleep: number) => controlPasses(passes, sleep) },
  ];
  writerPasses(c, 0); // warm-up: the writer optimized, as in a running worker
  let text = `### CPU after sleeps: why group commit adds more at p99 than raw lmdb (${fmt(passes)} passes a run, a wait of ${SLEEP_MS} ms after each or none; no disk; median of ${RUNS} runs, alternating)

| work | p50 µs, back to back | p99 ÷ p50, back to back | p50 µs, sleeping | p99 ÷ p50, sleeping | passes over 3 × p50, sleeping |
| --- | ---: | ---: | ---: | ---: | ---: |
`;
  for (const row of rows) {
    const awake: Float64Array[] = [];
    const sleeping: Float64Array[] = [];
    for (let run = 0; run < RUNS; run++) {
      awake.push(row.run(0));
      sleeping.push(row.run(SLEEP_MS));
    }
    const p50 = (t: Float64Array): number => percentile(t, 0.5);
    const tail = (t: Float64Array): number => percentile(t, 0.99) / p50(t);
    const slow = (t: Float64Array): number => t.filter((v) => v > 3 * p50(t)).length / t.length;
    text += `| ${row.name} | ${median(awake.map(p50)).toFixed(1)} | ${median(awake.map(tail)).toFixed(2)} | ${median(sleeping.map(p50)).toFixed(1)} | ${median(sleeping.map(tail)).toFixed(2)} | ${(median(sleeping.map(slow)) * 100).toFixed(2)} % |\n`;
  }
  return `${text}
A pass that follows a sleep can run several times slower than its median, and the control loop's
passes do too: the VM slows a thread that sleeps, whatever it runs. Group commit sleeps in every flush, and the
batch after a slow flush is the large one, so its CPU meets the slow passes just where p99 is
decided; raw lmdb's loop has next to no CPU per batch to slow down.

`;
}

async function latencySection(c: Capture): Promise<string> {
  const journal: { p50: number; p99: number }[] = [];
  const raw: { p50: number; p99: number }[] = [];
  for (let run = 0; run < LATENCY_RUNS; run++) {
    const lat = await latency(c, OFFERED_RATE, LATENCY_SECONDS);
    journal.push({ p50: percentile(lat, 0.5), p99: percentile(lat, 0.99) });
    const latRaw = await latency(null, OFFERED_RATE, LATENCY_SECONDS);
    raw.push({ p50: percentile(latRaw, 0.5), p99: percentile(latRaw, 0.99) });
  }
  const p99 = (runs: { p99: number }[]): number[] => runs.map((r) => r.p99);
  const added = journal.map((r, i) => r.p99 - raw[i].p99);
  const range = (values: number[]): string => `${ms(Math.min(...values))}–${ms(Math.max(...values))}`;
  return `### Acknowledgement latency added by group commit (offered ${fmt(OFFERED_RATE)} commands/s for ${LATENCY_SECONDS} s; median of ${LATENCY_RUNS} runs, journal and raw alternating)

| | p50 ms | p99 ms | p99 ms, range over the runs |
| --- | ---: | ---: | ---: |
| JournalWriter + LmdbJournalStore (arrival → batch flushed) | ${ms(median(journal.map((r) => r.p50)))} | ${ms(median(p99(journal)))} | ${range(p99(journal))} |
| baseline: raw lmdb, the same batches as one value each, same loop | ${ms(median(raw.map((r) => r.p50)))} | ${ms(median(p99(raw)))} | ${range(p99(raw))} |
| added at p99 by the journal, per run (journal − the raw run after it) | | ${ms(median(added))} | ${range(added)} |

`;
}

async function replaySection(): Promise<string> {
  const r = await replay(REPLAY_COMMANDS);
  const restart = median(r.restartSeconds);
  const apply = median(r.applySeconds);
  const perTenMillion = (10_000_000 / r.commands) * restart;
  const rate = (seconds: number): string => `${fmt(r.commands / seconds)} commands/s`;
  return `### Replay on restart (${fmt(r.commands)} commands written by the real writer in ${r.writeSeconds.toFixed(1)} s; median of ${RUNS})

| | figure |
| --- | ---: |
| recover(): open, check every checksum and output digest, rebuild the engine | ${rate(restart)}, restart ${restart.toFixed(2)} s; ${rate(median(r.restartCpuSeconds))} of CPU time |
${r.commands >= 10_000_000
    ? `| restart time for ${fmt(r.commands)} commands, **measured** (JOURNAL_BENCH_REPLAY=${r.commands}) | ${restart.toFixed(1)} s |`
    : `| restart time for 10 M commands, **extrapolated linearly** from this run (not measured; JOURNAL_BENCH_REPLAY=10000000 measures it) | ${perTenMillion.toFixed(1)} s |`}
| ceiling: the same records read and applied, no checksum, no digest (the engine alone) | ${rate(apply)} (recover() at ${(apply / restart).toFixed(2)}× of it); ${rate(median(r.applyCpuSeconds))} of CPU time (${(median(r.applyCpuSeconds) / median(r.restartCpuSeconds)).toFixed(2)}×) |
| lmdb getRange over the stored values (read only) | ${rate(median(r.readSeconds))} |
`;
}

export async function runJournalBench(): Promise<string> {
  const c = capture(APPEND_COMMANDS, 3);
  let text = '';
  if (SECTIONS.has('append')) text += await appendSection(c);
  if (SECTIONS.has('latency')) text += await latencySection(c);
  if (SECTIONS.has('sleeps')) text += sleepsSection(c);
  if (SECTIONS.has('replay')) text += await replaySection();
  return text;
}

/**
 * Writes the first `commands` captured commands into a fresh store; returns, when asked, the
 * sha256 of its records' stamped commands and output digests, in sequence order (not their
 * checksum fields, whose layout differs between journal formats).
 */
async function writeCommands(c: Capture, commands: number, digest: boolean): Promise<string> {
  return withDir(async (dir) => {
    const store = new LmdbJournalStore(dir);
    await writeBatches(store, c, commands);
    const hash = createHash('sha256');
    if (digest) {
      for (const { seq, value } of store.range(1)) {
        for (let at = 0; at < value.length; at += JOURNAL_RECORD_BYTES) hash.update(`${seq + at / JOURNAL_RECORD_BYTES}:`).update(value.subarray(at, at + layout.CHECKSUMMED_BYTES));
      }
    }
    await store.close();
    return digest ? hash.digest('hex') : '';
  });
}

/** sealRun of the tree this file runs in (absent in trees whose writer chains a checksum per record itself). */
const SEAL_RUN = (layout as { sealRun?: (run: Uint8Array, count: number, seed: number) => number }).sealRun;

/**
 * The writer's store for the drive mode's `memory` count: the open batch in one buffer of BATCH
 * records, sealed at each commit as the LMDB store seals a run (SEAL_RUN) and then dropped: the
 * writer and the sealing, with no LMDB and no flush to wait for.
 */
class MemoryStore implements JournalWriterStore {
  reservedAt = 0;
  private count = 0;
  private chain = 0;
  private readonly buffer = Buffer.allocUnsafeSlow(BATCH * RECORD);
  chainFrom(checksum: number): void {
    this.chain = checksum;
  }
  reserve(): Uint8Array {
    this.reservedAt = this.count++ * RECORD;
    return this.buffer;
  }
  async commit(): Promise<void> {
    if (SEAL_RUN !== undefined && this.count > 0) this.chain = SEAL_RUN(this.buffer, this.count, this.chain);
    this.count = 0;
  }
}

/** The first `commands` captured commands through a JournalWriter into a MemoryStore, in BATCH-command passes. */
async function writeMemory(c: Capture, commands: number): Promise<void> {
  const writer = new JournalWriter(new MemoryStore(), 0, 0);
  let record = 0;
  for (let i = 0; i < commands; i += BATCH) {
    const end = Math.min(commands, i + BATCH);
    for (; record < c.commandEnds[end - 1]; record++) writer.onRecord(c.view, record * SLOT_BYTES);
    await writer.commit();
  }
}

/** The drive mode (header): the writer alone over the first N of CAPTURE captured commands. */
async function drive(commands: number, captured: number, how: string | undefined): Promise<void> {
  if (!(commands > 0 && captured >= commands) || (how !== undefined && how !== 'digest' && how !== 'memory' && how !== 'memory-time')) {
    throw new Error('usage: journal.bench.js drive N CAPTURE [digest|memory|memory-time] (0 < N ≤ CAPTURE)');
  }
  const c = capture(captured, 3);
  if (how === 'memory') {
    await writeMemory(c, c.commands);
    await writeMemory(c, commands);
    process.stdout.write(`${JSON.stringify({ commands, records: c.commandEnds[commands - 1], store: 'memory' })}\n`);
    return;
  }
  if (how === 'memory-time') {
    await writeMemory(c, c.commands);
    // The same passes timed, outside callgrind: the writer's CPU per command (median of 9 passes).
    const times: number[] = [];
    for (let pass = 0; pass < 9; pass++) {
      const started = process.cpuUsage();
      await writeMemory(c, commands);
      const used = process.cpuUsage(started);
      times.push(((used.user + used.system) * 1000) / commands);
    }
    process.stdout.write(`${JSON.stringify({ commands, records: c.commandEnds[commands - 1], store: 'memory', cpuNsPerCommand: Math.round(median(times)) })}\n`);
    return;
  }
  const digest = how === 'digest';
  if (!digest) await writeCommands(c, c.commands, false);
  const stored = await writeCommands(c, commands, digest);
  process.stdout.write(digest ? `${stored}\n` : `${JSON.stringify({ commands, records: c.commandEnds[commands - 1] })}\n`);
}


/** The recover-journal mode (header): one recover() of DIR's journal, or with `apply` the engine alone over its records (applyOnly); prints the records replayed. */
async function recoverJournal(dir: string, applyAlone: boolean): Promise<void> {
  const config = benchConfig();
  const store = new LmdbJournalStore(dir);
  if (applyAlone) applyOnly(store, config);
  const replayed = applyAlone ? store.lastSeq() : recover(store, config, engineConfigFingerprint(config)).replayed;
  await store.close();
  process.stdout.write(`${JSON.stringify({ replayed })}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [mode, n, captured, digest] = process.argv.slice(2);
  if (mode === 'drive') void drive(Number(n), Number(captured), digest);
  else if (mode === 'write-journal') {
    if (!(Number(captured) > 0)) throw new Error('usage: journal.bench.js write-journal DIR N (N > 0)');
    void writeJournal(n, Number(captured));
  }
  else if (mode === 'recover-journal') void recoverJournal(n, captured === 'apply');
  else void runJournalBench().then((text) => process.stdout.write(text));
}
