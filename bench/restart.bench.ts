// restart: what a restart of a long history costs when the server starts as it does, from the
// newest snapshot plus the journal after it (engine/shell/journal.ts recover()), against the rate
// of a whole-journal replay and against the engine alone, in the same run.
//
//   write      COMMANDS commands of the engine benchmark's mix (bench/engine-stream.ts,
//              exchange-core's) through Exchange + Sequencer into an in-process outbound ring,
//              every record through JournalWriter into LmdbJournalStore (a stored run per 8192
//              commands, as in bench/journal.bench.ts), on a fresh data directory first opened by
//              recover() as the server's first start opens it. Snapshots as the server takes them:
//              after each command, once SNAPSHOT_EVERY commands have been sequenced since the last
//              snapshot, a Snapshot command is sequenced (FRONT_ID_NONE, as the engine worker
//              injects it), its file exported with snapshotFile() (the engine worker's call), and
//              once the journal is flushed through it the file is written by SnapshotRetention
//              (the journal worker's: temp file, fsync, rename, then retention and compaction) with
//              the server's defaults (keep 2, compaction on). The engine worker checks its policy
//              after each poll of up to 512 commands; checking after every command puts each
//              snapshot exactly SNAPSHOT_EVERY commands after the last. The history stops after
//              its last command, before the policy is checked again: at the defaults snapshots
//              follow commands 1 M … 9 M and the 10 M-th ends a tail of a whole interval, the most a
//              restart replays (the server's per-poll check adds at most 511). Ends with the
//              clean-stop mark (the engine's final state hash), as the journal worker records it.
//              Untimed.
//   restart    open the store and recover() from that directory, as the engine worker starts: wall
//              and CPU time, split where recover() reports the starting state in place (journal
//              identity, snapshot file checksum, import, state-hash check) from the tail replay
//              (every checksum and output digest checked, the clean-stop hash checked at the end).
//   ceilings   the engine alone over the same tail: the snapshot imported (untimed), the same
//              records read and applied with no checksum and no digest. And a whole-journal replay:
//              recover() of a journal of BASELINE commands of the same stream written with no
//              snapshot (the journal bench's figure), beside the engine alone over those records.
// Each of the RUNS runs does all four, in that order; figures are medians.
//   before     with RESTART_BENCH_BEFORE set to another build's dist/engine/shell/journal.js (a
//              tree before a change to recovery), its recover() restarts from the same directory in
//              each run too, the two in alternating order: before and after in the same run.
// Gate: every recover() ends at the journal's last sequence, starts from the newest snapshot (the
// whole-journal one from the first record) with nothing skipped, and its state hash equals the
// writer engine's; the engine-alone passes reach the same hashes. Otherwise FAIL, exit code 1.
//
// Run: `npm run bench:restart` (builds, then node --expose-gc dist/bench/restart.bench.js); writes
// its section of bench/RESULTS.md between the restart markers (--no-write prints only). Env:
// RESTART_BENCH_COMMANDS (10,000,000), RESTART_BENCH_SNAPSHOT_EVERY (the server's default,
// 1,000,000), RESTART_BENCH_BASELINE (1,000,000), RESTART_BENCH_RUNS (3), RESTART_BENCH_BEFORE
// (unset) with RESTART_BENCH_BEFORE_LABEL (how the report names that tree).

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Exchange } from '../engine/core/exchange.js';
import { importSnapshot } from '../engine/core/snapshot.js';
import { JOURNAL_RECORD_BYTES, SLOT_BYTES, newStampedRec, readStamped } from '../engine/bus/codec.js';
import { OutboundRing } from '../engine/bus/ring.js';
import { CommandKind, FRONT_ID_NONE, newCommand, type Command, type EngineConfig } from '../engine/bus/types.js';
import { engineConfigFingerprint, recover, snapshotFile } from '../engine/shell/journal.js';
import { JournalWriter } from '../engine/shell/journal-writer.js';
import { Sequencer } from '../engine/shell/sequencer.js';
import { SnapshotRetention } from '../engine/shell/snapshot-retention.js';
import { CLEAN_STOP_KEY, decodeSnapshotFile } from '../engine/store/journal-layout.js';
import { LmdbJournalStore } from '../engine/store/journal-store.js';
import { DEFAULT_SNAPSHOT_EVERY, DEFAULT_SNAPSHOT_KEEP } from '../src/config.js';
import { median } from './engine.bench.js';
import { benchConfig, decodeCommand, generateStream, newStreamCommand } from './engine-stream.js';

const COMMANDS = Number(process.env.RESTART_BENCH_COMMANDS ?? 10_000_000);
const SNAPSHOT_EVERY = Number(process.env.RESTART_BENCH_SNAPSHOT_EVERY ?? DEFAULT_SNAPSHOT_EVERY);
const BASELINE = Number(process.env.RESTART_BENCH_BASELINE ?? 1_000_000);
const RUNS = Number(process.env.RESTART_BENCH_RUNS ?? 3);
const BEFORE = process.env.RESTART_BENCH_BEFORE;
const BEFORE_LABEL = process.env.RESTART_BENCH_BEFORE_LABEL ?? BEFORE;
const BATCH = 8192;
const SEED = 7;
const RESULTS = fileURLToPath(new URL('../../bench/RESULTS.md', import.meta.url));
const BEGIN = '<!-- restart:begin -->';
const END = '<!-- restart:end -->';
const HEADING = '## Restart from the newest snapshot against whole-journal replay (bench/restart.bench.ts)';

/** A data directory as the server leaves it after a clean stop. */
interface History {
  dir: string;
  commands: number;
  lastSeq: number;
  snapshots: number[];
  snapshotBytes: number;
  stateHash: string;
  writeSeconds: number;
}

interface Timed {
  wall: number;
  cpu: number;
}

function cpuSeconds(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1e6;
}

function timed(body: () => void): Timed {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  body();
  return { wall: (performance.now() - wall) / 1000, cpu: cpuSeconds(cpu) };
}

/** The stream's first `commands` state-changing commands, one at a time into one reused Command; null after the last. */
function streamSource(commands: number): () => Command | null {
  const stream = generateStream(SEED, Math.ceil(commands / 1.8));
  const cmd = newStreamCommand();
  let n = 0;
  let row = 0;
  return () => {
    if (n >= commands) return null;
    if (n < stream.setup.length) return stream.setup[n++];
    for (; row < stream.count; ) {
      decodeCommand(stream, row++, cmd);
      if (cmd.kind >= CommandKind.QueryBalances) continue;
      n++;
      return cmd;
    }
    return null;
  };
}

/** The engine shell's write side in one thread: Exchange + Sequencer → outbound ring → JournalWriter. */
function writeSide(store: LmdbJournalStore, config: EngineConfig): { exchange: Exchange; writer: JournalWriter; run: (seq: number, cmd: Command) => void } {
  const exchange = new Exchange(config);
  const ring = OutboundRing.create({ slotCount: 1 << 16, slotBytes: SLOT_BYTES, consumerCount: 1 });
  const consumer = ring.consumer(0);
  const writer = new JournalWriter(store, 0, 0);
  const sequencer = new Sequencer(exchange, ring, () => {
    const slot = ring.tryClaim();
    if (slot < 0) throw new Error('outbound ring full');
    return slot;
  });
  const onRecord = (offset: number): boolean => {
    writer.onRecord(ring.view, offset);
    return true;
  };
  const run = (seq: number, cmd: Command): void => {
    sequencer.command(seq, seq, cmd, null, 0);
    ring.flush();
    consumer.poll(onRecord, 1 << 20);
  };
  return { exchange, writer, run };
}

/** Ends the open run inside a synchronous transaction and flushes it, as the journal worker commits. */
async function commitPass(store: LmdbJournalStore, writer: JournalWriter): Promise<void> {
  store.root.transactionSync(() => store.endBatch());
  await writer.commit();
}

/** Writes `commands` stream commands, snapshotting every `snapshotEvery` (0: never) as the server does, then stops cleanly. */
export async function writeHistory(commands: number, snapshotEvery: number): Promise<History> {
  const dir = mkdtempSync(join(tmpdir(), 'restart-bench-'));
  const config = benchConfig();
  const fingerprint = engineConfigFingerprint(config);
  const store = new LmdbJournalStore(dir);
  recover(store, config, fingerprint); // the first start: records the configuration and the journal format
  const shell = writeSide(store, config);
  const retention = new SnapshotRetention(store, { loadedSnapshotSeq: 0, snapshotKeep: DEFAULT_SNAPSHOT_KEEP, compact: true, configFingerprint: fingerprint });
  const next = streamSource(commands);
  const injected = newCommand();
  injected.kind = CommandKind.Snapshot;
  injected.frontId = FRONT_ID_NONE;
  const snapshots: number[] = [];
  let snapshotBytes = 0;
  let seq = 0;
  let lastSnapshotSeq = 0;
  let inRun = 0;
  let written = 0;
  const started = performance.now();
  for (let cmd = next(); cmd !== null; cmd = next()) {
    shell.run(++seq, cmd);
    if (++inRun === BATCH) {
      store.root.transactionSync(() => store.endBatch());
      inRun = 0;
    }
    // The history stops after its last command, before the policy is checked again: when a
    // snapshot falls due there, the stop comes just before it (the longest tail a restart meets).
    if (++written === commands || snapshotEvery === 0 || seq - lastSnapshotSeq < snapshotEvery) continue;
    shell.run(++seq, injected);
    const { file } = snapshotFile(shell.exchange, seq, seq, fingerprint);
    lastSnapshotSeq = seq;
    await commitPass(store, shell.writer); // the journal worker writes a snapshot once its sequence is durable
    inRun = 0;
    await retention.write(seq, file);
    snapshots.push(seq);
    snapshotBytes = file.length;
  }
  await commitPass(store, shell.writer);
  const stateHash = shell.exchange.stateHash();
  store.putMeta(CLEAN_STOP_KEY, JSON.stringify({ seq, stateHash }));
  await store.commit();
  const writeSeconds = (performance.now() - started) / 1000;
  await store.close();
  return { dir, commands: seq - snapshots.length, lastSeq: seq, snapshots, snapshotBytes, stateHash, writeSeconds };
}

interface Restart {
  total: Timed;
  /** Open, journal identity, snapshot checked, imported and its state hash compared. */
  load: Timed;
  replayed: number;
}

/** Opens the store and recovers from it, as the engine worker starts; checks where it ends. */
export async function restart(history: History, failures: string[], recoverFrom: typeof recover = recover): Promise<Restart> {
  const config = benchConfig();
  globalThis.gc?.();
  let load: Timed = { wall: 0, cpu: 0 };
  const wall = performance.now();
  const cpu = process.cpuUsage();
  const store = new LmdbJournalStore(history.dir);
  const recovered = recoverFrom(store, config, engineConfigFingerprint(config), () => {
    load = { wall: (performance.now() - wall) / 1000, cpu: cpuSeconds(cpu) };
  });
  const total = { wall: (performance.now() - wall) / 1000, cpu: cpuSeconds(cpu) };
  await store.close();
  const newest = history.snapshots.at(-1) ?? 0;
  const where = `recover() of ${history.dir}`;
  if (recovered.lastSeq !== history.lastSeq) failures.push(`${where} ended at ${recovered.lastSeq}, the journal at ${history.lastSeq}`);
  if (recovered.snapshotSeq !== newest) failures.push(`${where} started from snapshot ${recovered.snapshotSeq}, the newest is ${newest}`);
  if (recovered.skippedSnapshots.length > 0) failures.push(`${where} skipped snapshots ${JSON.stringify(recovered.skippedSnapshots)}`);
  const hash = recovered.exchange.stateHash();
  if (hash !== history.stateHash) failures.push(`${where}: state hash ${hash}, the writer engine's ${history.stateHash}`);
  return { total, load, replayed: recovered.replayed };
}

/**
 * The engine alone from the newest snapshot (imported untimed; none: a fresh engine): the records
 * after it read and applied, no checksum, no digest, a sink that keeps nothing.
 */
export async function engineAlone(history: History, failures: string[]): Promise<Timed> {
  const config = benchConfig();
  const store = new LmdbJournalStore(history.dir);
  const exchange = new Exchange(config);
  const from = history.snapshots.at(-1) ?? 0;
  if (from > 0) {
    const decoded = decodeSnapshotFile(store.readSnapshot(from)!);
    if (typeof decoded === 'string') throw new Error(`snapshot ${from}: ${decoded}`);
    importSnapshot(exchange, decoded.payload);
  }
  const sink = { view: new DataView(new ArrayBuffer(SLOT_BYTES)), claim: () => 0, written: () => {} };
  const rec = newStampedRec();
  globalThis.gc?.();
  const time = timed(() => {
    for (const { value } of store.range(from + 1)) {
      const view = new DataView(value.buffer, value.byteOffset, value.length);
      for (let at = 0; at < value.length; at += JOURNAL_RECORD_BYTES) {
        readStamped(view, at, rec);
        exchange.apply(rec.command, rec.seq, rec.timeUs, sink);
      }
    }
  });
  await store.close();
  if (exchange.stateHash() !== history.stateHash) failures.push(`the engine alone from ${from} reached another state hash than the writer engine`);
  return time;
}

interface Figures {
  history: History;
  baseline: History;
  restarts: Restart[];
  /** recover() of the tree RESTART_BENCH_BEFORE names, from the same directory (empty: not compared). */
  before: Restart[];
  tailAlone: Timed[];
  whole: Restart[];
  wholeAlone: Timed[];
  loadStart: number;
  loadEnd: number;
  failures: string[];
}

async function measure(): Promise<Figures> {
  const loadStart = loadavg()[0];
  process.stdout.write(`writing ${COMMANDS.toLocaleString('en-US')} commands, a snapshot every ${SNAPSHOT_EVERY.toLocaleString('en-US')}…\n`);
  const history = await writeHistory(COMMANDS, SNAPSHOT_EVERY);
  process.stdout.write(`written in ${history.writeSeconds.toFixed(1)} s; snapshots ${history.snapshots.join(', ')}; writing the ${BASELINE.toLocaleString('en-US')}-command journal with no snapshot…\n`);
  const baseline = await writeHistory(BASELINE, 0);
  const before = BEFORE === undefined ? null : ((await import(pathToFileURL(BEFORE).href)) as { recover: typeof recover }).recover;
  const figures: Figures = { history, baseline, restarts: [], before: [], tailAlone: [], whole: [], wholeAlone: [], loadStart, loadEnd: 0, failures: [] };
  try {
    for (let run = 0; run < RUNS; run++) {
      if (before !== null && run % 2 === 1) figures.before.push(await restart(history, figures.failures, before));
      figures.restarts.push(await restart(history, figures.failures));
      if (before !== null && run % 2 === 0) figures.before.push(await restart(history, figures.failures, before));
      figures.tailAlone.push(await engineAlone(history, figures.failures));
      figures.whole.push(await restart(baseline, figures.failures));
      figures.wholeAlone.push(await engineAlone(baseline, figures.failures));
      const r = figures.restarts.at(-1)!;
      process.stdout.write(`run ${run + 1}: restart ${r.total.wall.toFixed(2)} s wall, ${r.total.cpu.toFixed(2)} s CPU (load ${(r.load.wall * 1000).toFixed(1)} ms); whole-journal ${(baseline.lastSeq / figures.whole.at(-1)!.total.cpu).toFixed(0)} commands per CPU-second\n`);
    }
  } finally {
    rmSync(history.dir, { recursive: true, force: true });
    rmSync(baseline.dir, { recursive: true, force: true });
  }
  figures.loadEnd = loadavg()[0];
  return figures;
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
const sec = (n: number): string => `${n.toFixed(2)} s`;
const msec = (n: number): string => `${(n * 1000).toFixed(1)} ms`;

/** The section: the table, then what it says about the targets. */
function report(f: Figures): string {
  const m = (xs: Timed[], key: keyof Timed): number => median(xs.map((x) => x[key]));
  const total = (key: keyof Timed): number => m(f.restarts.map((r) => r.total), key);
  const load = (key: keyof Timed): number => m(f.restarts.map((r) => r.load), key);
  const tail = (key: keyof Timed): number => median(f.restarts.map((r) => r.total[key] - r.load[key]));
  const replayed = f.restarts[0].replayed;
  const whole = (key: keyof Timed): number => m(f.whole.map((r) => r.total), key);
  const wholeRate = (key: keyof Timed): number => f.baseline.lastSeq / whole(key);
  const rate = (n: number, seconds: number): string => `${fmt(n / seconds)}`;
  const newest = f.history.snapshots.at(-1) ?? 0;
  const lines = [
    `Measured ${new Date().toISOString().slice(0, 10)} (${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}, load average ${f.loadStart.toFixed(2)} at start, ${f.loadEnd.toFixed(2)} at end) with \`npm run bench:restart\` (RESTART_BENCH_COMMANDS=${COMMANDS}, RESTART_BENCH_SNAPSHOT_EVERY=${SNAPSHOT_EVERY}, RESTART_BENCH_BASELINE=${BASELINE}, RESTART_BENCH_RUNS=${RUNS}${BEFORE === undefined ? '' : `, RESTART_BENCH_BEFORE=${BEFORE}`}; median of ${RUNS} runs).`,
    '',
    `History: ${fmt(f.history.commands)} commands of the engine benchmark's mix and ${f.history.snapshots.length} Snapshot commands (journal through ${fmt(f.history.lastSeq)}), written by the real writer in ${f.history.writeSeconds.toFixed(1)} s; a snapshot every ${fmt(SNAPSHOT_EVERY)} commands, keep ${DEFAULT_SNAPSHOT_KEEP}, compaction on (the server's defaults); newest snapshot at ${fmt(newest)}, ${fmt(f.history.snapshotBytes)} bytes; clean stop recorded.`,
    '',
    '| | wall | CPU | commands/s wall | commands per CPU-second |',
    '| --- | ---: | ---: | ---: | ---: |',
    `| **restart**: open + recover() (newest snapshot + ${fmt(replayed)} records) | **${sec(total('wall'))}** | **${sec(total('cpu'))}** | | |`,
    `| of which: open, journal identity, snapshot checksum, import, state-hash check | ${msec(load('wall'))} | ${msec(load('cpu'))} | | |`,
    `| of which: tail replay, every checksum and output digest checked, clean-stop hash | ${sec(tail('wall'))} | ${sec(tail('cpu'))} | ${rate(replayed, tail('wall'))} | ${rate(replayed, tail('cpu'))} |`,
    `| ceiling: the engine alone over the same ${fmt(replayed)} records (read and applied, nothing checked) | ${sec(m(f.tailAlone, 'wall'))} | ${sec(m(f.tailAlone, 'cpu'))} | ${rate(replayed, m(f.tailAlone, 'wall'))} | ${rate(replayed, m(f.tailAlone, 'cpu'))} |`,
    `| baseline: whole-journal replay, recover() of ${fmt(f.baseline.lastSeq)} commands from the first record, no snapshot | ${sec(whole('wall'))} | ${sec(whole('cpu'))} | ${fmt(wholeRate('wall'))} | ${fmt(wholeRate('cpu'))} |`,
    `| the engine alone over those ${fmt(f.baseline.lastSeq)} records | ${sec(m(f.wholeAlone, 'wall'))} | ${sec(m(f.wholeAlone, 'cpu'))} | ${rate(f.baseline.lastSeq, m(f.wholeAlone, 'wall'))} | ${rate(f.baseline.lastSeq, m(f.wholeAlone, 'cpu'))} |`,
    '',
    `Runs, restart wall / CPU: ${f.restarts.map((r) => `${r.total.wall.toFixed(2)} / ${r.total.cpu.toFixed(2)} s`).join('; ')}.`,
    '',
    ...comparison(f),
    ...verdict(f, { total, load, tail, replayed, wholeRate }),
  ];
  return lines.join('\n');
}

/** recover() of the tree before against this one, from the same directory in the same runs (nothing when not compared). */
function comparison(f: Figures): string[] {
  if (f.before.length === 0) return [];
  const m = (rs: Restart[], part: (r: Restart) => number): number => median(rs.map(part));
  const rows: Array<[string, (r: Restart) => number, (v: number) => string]> = [
    ['restart, CPU', (r) => r.total.cpu, sec],
    ['restart, wall', (r) => r.total.wall, sec],
    ['of which snapshot load, CPU', (r) => r.load.cpu, msec],
    ['tail replay, commands per CPU-second', (r) => r.replayed / (r.total.cpu - r.load.cpu), fmt],
    ['tail replay, commands/s wall', (r) => r.replayed / (r.total.wall - r.load.wall), fmt],
  ];
  return [
    `Before and after in the same runs: recover() of ${BEFORE_LABEL} and of this tree, alternating, from the same directory (median of ${f.before.length}):`,
    '',
    '| | before | after | after ÷ before |',
    '| --- | ---: | ---: | ---: |',
    ...rows.map(([name, part, show]) => `| ${name} | ${show(m(f.before, part))} | ${show(m(f.restarts, part))} | ${(m(f.restarts, part) / m(f.before, part)).toFixed(2)} |`),
    '',
    `Runs, before: restart wall / CPU ${f.before.map((r) => `${r.total.wall.toFixed(2)} / ${r.total.cpu.toFixed(2)} s`).join('; ')}. Per run, restart CPU after ÷ before: ${f.before.map((b, i) => (f.restarts[i].total.cpu / b.total.cpu).toFixed(2)).join(', ')} (median ${median(f.before.map((b, i) => f.restarts[i].total.cpu / b.total.cpu)).toFixed(2)}).`,
    '',
  ];
}

interface Medians {
  total: (key: keyof Timed) => number;
  load: (key: keyof Timed) => number;
  tail: (key: keyof Timed) => number;
  replayed: number;
  wholeRate: (key: keyof Timed) => number;
}

/** What the figures say about the targets, and the gate's outcome. */
function verdict(f: Figures, m: Medians): string[] {
  const tailCpuRate = m.replayed / m.tail('cpu');
  const tailAloneCpuRate = m.replayed / median(f.tailAlone.map((t) => t.cpu));
  const bound = SNAPSHOT_EVERY / tailCpuRate + m.load('cpu');
  const met = (ok: boolean): string => (ok ? '**met**' : '**not met**');
  const lines = [
    `- What bounds a restart: the snapshot load plus the tail after the newest snapshot, at most about one snapshot interval (${fmt(SNAPSHOT_EVERY)} commands; the engine worker checks its policy per poll of up to 512, so up to 511 more) at the replay rate: ${fmt(SNAPSHOT_EVERY)} ÷ ${fmt(tailCpuRate)} per CPU-second + ${msec(m.load('cpu'))} ≈ ${bound.toFixed(2)} s of CPU, whatever the length of the history. Without snapshots the same ${fmt(f.history.commands)} commands would replay at the whole-journal rate: ≈ ${(f.history.lastSeq / m.wholeRate('cpu')).toFixed(1)} s of CPU (extrapolated from the baseline row).`,
    `- "A 10 M-command restart in ≤ 5 s"${f.history.commands < 10_000_000 ? ` (here a history of ${fmt(f.history.commands)} commands, not 10 M)` : ''}: in CPU time ${met(m.total('cpu') <= 5)} this way (${sec(m.total('cpu'))} of CPU, the time on a core of its own); in wall time on this shared machine ${met(m.total('wall') <= 5)} (${sec(m.total('wall'))} at load ${f.loadStart.toFixed(1)}–${f.loadEnd.toFixed(1)} on ${cpus().length} cores; CPU ÷ wall ${((100 * m.total('cpu')) / m.total('wall')).toFixed(0)} %, the process's CPU counting its GC and LMDB threads too).`,
    `- "Replay ≥ 2,000,000 commands/s": ${met(tailCpuRate >= 2_000_000)}: the tail replays at ${fmt(tailCpuRate)} commands per CPU-second (${fmt(m.replayed / m.tail('wall'))} wall), ${(tailCpuRate / tailAloneCpuRate).toFixed(2)}× the engine alone over the same records (${fmt(tailAloneCpuRate)} per CPU-second): the per-command rate stays bounded by the engine; snapshots bound how many commands a restart replays, not how fast.`,
    '',
  ];
  if (f.failures.length > 0) lines.push(`**FAIL**: ${f.failures.join('; ')}`);
  else lines.push("Gate: PASS (every recover() ended at the journal's last sequence from the newest snapshot, none skipped, with the writer engine's state hash; the engine-alone passes reached the same hashes).");
  return lines;
}

function writeSection(section: string): void {
  const text = readFileSync(RESULTS, 'utf8');
  const block = `${BEGIN}\n\n${section}\n\n${END}`;
  const next = text.includes(BEGIN)
    ? text.slice(0, text.indexOf(BEGIN)) + block + text.slice(text.indexOf(END) + END.length)
    : `${text.trimEnd()}\n\n${HEADING}\n\n${block}\n`;
  writeFileSync(RESULTS, next);
}

async function main(): Promise<void> {
  const figures = await measure();
  const section = report(figures);
  process.stdout.write(`${section}\n`);
  if (figures.failures.length > 0) process.exitCode = 1;
  if (!process.argv.includes('--no-write')) writeSection(section);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.stack : error);
    process.exitCode = 1;
  });
}
