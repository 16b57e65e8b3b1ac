// The durable journal: append rate, the acknowledgement latency group commit adds under load,
// and replay (restart) rate, each next to raw lmdb in the same run.
//
//   capture     the engine benchmark's command stream (bench/engine-stream.ts, exchange-core's
//               mix) run once through Exchange + Sequencer into an in-process outbound ring; every
//               record (Stamped, outputs, CommandEnd) is copied out. Untimed.
//   append      JournalWriter (digest, chained checksum) over LmdbJournalStore on a fresh data
//               directory, committing every BATCH commands (the journal worker's per-pass bound):
//               durable commands (= journal records) per second.
//               baseline: lmdb puts of the same number of 192-byte values under 8-byte keys, same
//               batches, each awaited to `flushed`.
//   latency     commands arrive at a fixed offered rate; each pass appends what has arrived and
//               commits (group commit, as the worker does); per command, time from arrival to its
//               batch being flushed = the acknowledgement latency the journal adds. p50/p99.
//               baseline: the same loop with raw lmdb puts.
//   replay      recover() of a journal of REPLAY_COMMANDS commands written by the real writer
//               (every record's checksum and output digest checked, engine rebuilt): commands/s
//               and restart time; REPLAY_COMMANDS defaults to 10 M, so the 10 M restart is measured
//               (a smaller JOURNAL_BENCH_REPLAY gives a linear extrapolation, stated as such).
//               baseline: iterating the same records with lmdb getRange (read floor).
//
// Run alone: `npm run build && node --expose-gc dist/bench/journal.bench.js`; `npm run bench` runs
// it with the other suites.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { open } from 'lmdb';
import { Exchange } from '../engine/core/exchange.js';
import { SLOT_BYTES } from '../engine/bus/codec.js';
import { OutboundRing } from '../engine/bus/ring.js';
import { engineConfigFingerprint, recover } from '../engine/shell/journal.js';
import { LmdbJournalStore, seqKey } from '../engine/store/journal-store.js';
import { JournalWriter } from '../engine/shell/journal-writer.js';
import { Sequencer } from '../engine/shell/sequencer.js';
import { CommandKind } from '../engine/bus/types.js';
import { benchConfig, decodeCommand, generateStream, newStreamCommand } from './engine-stream.js';

const BATCH = 8192;
const APPEND_COMMANDS = Number(process.env.JOURNAL_BENCH_APPEND ?? 200_000);
const REPLAY_COMMANDS = Number(process.env.JOURNAL_BENCH_REPLAY ?? 10_000_000);
const OFFERED_RATE = Number(process.env.JOURNAL_BENCH_RATE ?? 100_000);
const LATENCY_SECONDS = 2;
const RUNS = 3;

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

async function appendJournal(c: Capture): Promise<number> {
  return withDir(async (dir) => {
    const store = new LmdbJournalStore(dir);
    const writer = new JournalWriter(store, 0, 0);
    const started = performance.now();
    let record = 0;
    for (let i = 0; i < c.commands; i++) {
      for (; record < c.commandEnds[i]; record++) writer.onRecord(c.view, record * SLOT_BYTES);
      if ((i + 1) % BATCH === 0) await writer.commit();
    }
    await writer.commit();
    const seconds = (performance.now() - started) / 1000;
    await store.close();
    return c.commands / seconds;
  });
}

async function appendRaw(count: number): Promise<number> {
  return withDir(async (dir) => {
    const root = open({ path: join(dir, 'raw'), maxDbs: 4 });
    const db = root.openDB<Buffer, Buffer>({ name: 'raw', keyEncoding: 'binary', encoding: 'binary' });
    const started = performance.now();
    let last: Promise<boolean> | null = null;
    for (let i = 1; i <= count; i++) {
      last = db.put(seqKey(i), Buffer.alloc(192, i & 0xff));
      if (i % BATCH === 0) {
        await last;
        await db.flushed;
      }
    }
    await last;
    await db.flushed;
    const seconds = (performance.now() - started) / 1000;
    await root.close();
    return count / seconds;
  });
}

/** Offered load at `rate` commands/s: per command, arrival → its batch flushed (ms). */
async function latency(c: Capture | null, rate: number, seconds: number): Promise<Float64Array> {
  return withDir(async (dir) => {
    const total = Math.min(Math.floor(rate * seconds), c ? c.commands : Infinity);
    const samples = new Float64Array(total);
    let store: LmdbJournalStore | null = null;
    let writer: JournalWriter | null = null;
    let root: ReturnType<typeof open> | null = null;
    let db: ReturnType<ReturnType<typeof open>['openDB']> | null = null;
    if (c) {
      store = new LmdbJournalStore(dir);
      writer = new JournalWriter(store, 0, 0);
    } else {
      root = open({ path: join(dir, 'raw'), maxDbs: 4 });
      db = root.openDB({ name: 'raw', keyEncoding: 'binary', encoding: 'binary' });
    }
    const value = Buffer.alloc(192, 7);
    const started = performance.now();
    let next = 0;
    let record = 0;
    let last: Promise<boolean> | null = null;
    while (next < total) {
      const arrived = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate));
      if (arrived === next) {
        await new Promise((resolve) => setImmediate(resolve));
        continue;
      }
      const from = next;
      for (; next < arrived; next++) {
        if (c) for (; record < c.commandEnds[next]; record++) writer!.onRecord(c.view, record * SLOT_BYTES);
        else last = db!.put(seqKey(next + 1), value);
      }
      if (c) await writer!.commit();
      else {
        await last;
        await db!.flushed;
      }
      const done = performance.now() - started;
      for (let i = from; i < next; i++) samples[i] = done - (i / rate) * 1000;
    }
    if (store) await store.close();
    if (root) await root.close();
    return samples.sort();
  });
}

async function replay(commands: number): Promise<{ writeSeconds: number; replayCommandsPerSecond: number; restartSeconds: number; rawReadPerSecond: number; commands: number }> {
  return withDir(async (dir) => {
    const config = benchConfig();
    const store = new LmdbJournalStore(dir);
    recover(store, config, engineConfigFingerprint(config));
    const writer = new JournalWriter(store, 0, 0);
    const pending: Promise<number>[] = [];
    const writeStarted = performance.now();
    const c = capture(commands, 7, (view, offset) => writer.onRecord(view, offset), (i) => {
      if ((i + 1) % BATCH === 0) pending.push(writer.commit());
    });
    await Promise.all(pending);
    await writer.commit();
    const writeSeconds = (performance.now() - writeStarted) / 1000;
    await store.close();

    const restartStarted = performance.now();
    const reopened = new LmdbJournalStore(dir);
    const recovered = recover(reopened, config, engineConfigFingerprint(config));
    const restartSeconds = (performance.now() - restartStarted) / 1000;
    if (recovered.lastSeq !== c.commands) throw new Error(`replayed ${recovered.lastSeq} of ${c.commands}`);

    const readStarted = performance.now();
    let read = 0;
    for (const record of reopened.range(1)) read += record.value.length > 0 ? 1 : 0;
    const rawReadPerSecond = read / ((performance.now() - readStarted) / 1000);
    await reopened.close();
    return { writeSeconds, replayCommandsPerSecond: c.commands / restartSeconds, restartSeconds, rawReadPerSecond, commands: c.commands };
  });
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
const ms = (n: number): string => n.toFixed(2);

export async function runJournalBench(): Promise<string> {
  const c = capture(APPEND_COMMANDS, 3);
  const journal: number[] = [];
  const raw: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    journal.push(await appendJournal(c));
    raw.push(await appendRaw(c.commands));
  }
  const lat = await latency(c, OFFERED_RATE, LATENCY_SECONDS);
  const latRaw = await latency(null, OFFERED_RATE, LATENCY_SECONDS);
  const r = await replay(REPLAY_COMMANDS);
  const perTenMillion = (10_000_000 / r.commands) * r.restartSeconds;
  return `
### Durable append (${fmt(c.commands)} commands of the engine benchmark's mix, ${(c.records / c.commands).toFixed(2)} outbound records per command, batches of ${BATCH}, median of ${RUNS})

| | durable commands (journal records)/s | ratio |
| --- | ---: | ---: |
| JournalWriter: output digest + chained crc32 + LmdbJournalStore, flushed | ${fmt(median(journal))} | ${(median(journal) / median(raw)).toFixed(2)}× |
| baseline: raw lmdb puts of 192-byte values, same batches, flushed | ${fmt(median(raw))} | 1× |

### Acknowledgement latency added by group commit (offered ${fmt(OFFERED_RATE)} commands/s for ${LATENCY_SECONDS} s)

| | p50 ms | p99 ms |
| --- | ---: | ---: |
| JournalWriter + LmdbJournalStore (arrival → batch flushed) | ${ms(percentile(lat, 0.5))} | ${ms(percentile(lat, 0.99))} |
| baseline: raw lmdb puts, same loop | ${ms(percentile(latRaw, 0.5))} | ${ms(percentile(latRaw, 0.99))} |

### Replay on restart (${fmt(r.commands)} commands written by the real writer in ${r.writeSeconds.toFixed(1)} s)

| | figure |
| --- | ---: |
| recover(): open, check every checksum and output digest, rebuild the engine | ${fmt(r.replayCommandsPerSecond)} commands/s, restart ${r.restartSeconds.toFixed(2)} s |
${r.commands >= 10_000_000
    ? `| restart time for ${fmt(r.commands)} commands, **measured** (JOURNAL_BENCH_REPLAY=${r.commands}) | ${r.restartSeconds.toFixed(1)} s |`
    : `| restart time for 10 M commands, **extrapolated linearly** from this run (not measured; JOURNAL_BENCH_REPLAY=10000000 measures it) | ${perTenMillion.toFixed(1)} s |`}
| baseline: lmdb getRange over the same records (read only) | ${fmt(r.rawReadPerSecond)} records/s |
`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  void runJournalBench().then((text) => process.stdout.write(text));
}
