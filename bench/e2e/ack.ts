// `npm run bench:ack`: the unloaded durable acknowledgement against its floor, measured in turns.
//
// The figure: one connection, one signed order at a time (the flow of flow.ts: post-only places,
// a crossing IOC, cancels), latency from the write of the request to the last byte of the
// response, every response sent only after the journal commit holding the command is on disk.
// Its floor: one durable LMDB commit of one record, synchronous and flushed, on the same file
// system (ceilings.ts). The machine is shared, so the two are measured in alternation, round by
// round (a commit series, then an order series, with the server idle during the commit series),
// and each round's ratio is to its own commit figures; the summary is the median of the rounds.
// Each round also times the same request bytes, one at a time, against a uWebSockets.js
// hello-world server (hello-server.ts, same thread count): the HTTP round trip on loopback with
// no work behind it. With one ed25519 verification (measured once, before the servers start),
// commit + verification + round trip is what an acknowledgement costs with nothing else in it.
// Each order series also reports the server's CPU per order (every thread's run time from
// /proc/<pid>/task/<tid>/schedstat, in nanoseconds) and its thread wake-ups per order (voluntary
// context switches of every thread): figures that a busy machine distorts far less than
// wall-clock latency.
//
// With --baseline DIR (another checkout, built), its server runs beside this one, both idle but
// for the series measuring them, and every round measures both, taking turns at going first:
// the per-round ratio of the two p50s compares builds under the same load.
//
// Options: --rounds N (5), --orders N (1000 per round), --commits N (500 per round),
// --front-threads N (2), --baseline DIR, --json PATH (write the rounds there).

import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HttpConnection } from './http-conn.js';
import { ConnectionFlow, DEFAULT_FLOW_MARKETS, KIND_NAMES, Signer } from './flow.js';
import { runSerial, type LoadResult, type Request } from './load.js';
import { measureDurableCommit, measureVerify } from './ceilings.js';
import { createAccounts, freePort, startExchange, startHello, stopAll } from './processes.js';
import type { HistogramSummary } from './histogram.js';

const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..', '..');

interface Options {
  rounds: number;
  orders: number;
  commits: number;
  frontThreads: number;
  baseline: string | null;
  json: string | null;
}

function parseOptions(argv: string[]): Options {
  const o: Options = { rounds: 5, orders: 1000, commits: 500, frontThreads: 2, baseline: null, json: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = argv[++i];
    if (v === undefined) throw new Error(`${a} needs a value`);
    if (a === '--rounds') o.rounds = Number(v);
    else if (a === '--orders') o.orders = Number(v);
    else if (a === '--commits') o.commits = Number(v);
    else if (a === '--front-threads') o.frontThreads = Number(v);
    else if (a === '--baseline') o.baseline = v;
    else if (a === '--json') o.json = v;
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

interface Round {
  commit: HistogramSummary;
  hello: HistogramSummary;
  ack: HistogramSummary;
  statuses: Record<string, Record<string, number>>;
  p50Ratio: number;
  p99Ratio: number;
  serverCpuUsPerOrder: number;
  serverWakeupsPerOrder: number;
  serverCpuByThread: Record<string, number>;
  serverWakeupsByThread: Record<string, number>;
}

/** Voluntary context switches of each thread of `pid` (tid → count): how often each went to sleep. */
function wakeups(pid: number): Map<number, number> {
  const counts = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const match = /\nvoluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8'));
      if (match) counts.set(Number(tid), Number(match[1]));
    } catch {
      // the thread exited meanwhile
    }
  }
  return counts;
}

/** Run time of each thread of `pid` in seconds (tid → s), from schedstat (nanoseconds). */
function runTimes(pid: number): Map<number, number> {
  const times = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      times.set(Number(tid), Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1e9);
    } catch {
      // the thread exited meanwhile
    }
  }
  return times;
}

/** Per named thread (the rest summed as "other") and in total: (after − before) ÷ orders. */
function perOrder(before: Map<number, number>, after: Map<number, number>, names: Map<number, string>, orders: number, scale: number): Record<string, number> {
  const out: Record<string, number> = { total: 0, other: 0 };
  for (const [tid, value] of after) {
    const used = ((value - (before.get(tid) ?? 0)) * scale) / orders;
    const name = names.get(tid) ?? 'other';
    out[name] = (out[name] ?? 0) + used;
    out.total += used;
  }
  for (const key of Object.keys(out)) out[key] = Math.round(out[key] * 100) / 100;
  return out;
}

const log = (text: string): void => {
  process.stdout.write(`[ack ${new Date().toISOString().slice(11, 19)}] ${text}\n`);
};

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

const fmt = (us: number): string => (us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${Math.round(us)} µs`);

async function commitSeries(count: number): Promise<HistogramSummary> {
  const dir = mkdtempSync(join(tmpdir(), 'exchange-ack-fsync-'));
  try {
    return await measureDurableCommit(dir, count);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One exchange server under test: a build (its root directory) started with a fresh data directory. */
interface Build {
  label: string;
  root: string;
  port: number;
  pid: number;
  names: Map<number, string>;
  flow: ConnectionFlow;
  rounds: Round[];
}

// A fresh connection for every series: a kept-alive one would sit idle through the other
// series, and uWebSockets.js closes HTTP connections idle for 10 s.
async function series(port: number, queue: Request[]): Promise<LoadResult> {
  const conn = await HttpConnection.open('127.0.0.1', port);
  try {
    return await runSerial(conn, queue, KIND_NAMES);
  } finally {
    conn.close();
  }
}

async function startBuild(label: string, root: string, dataDir: string, frontThreads: number): Promise<Build> {
  const port = await freePort();
  const adminPort = await freePort();
  log(`starting ${label} (${root}, ${frontThreads} front threads)…`);
  const server = await startExchange(root, port, adminPort, dataDir, frontThreads);
  const names = new Map<number, string>();
  const threads = server.ready?.threads as { main: number; engine: number | null; journal: number | null; fronts: Array<number | null> } | undefined;
  if (threads) {
    names.set(threads.main, 'main');
    if (threads.engine) names.set(threads.engine, 'engine');
    if (threads.journal) names.set(threads.journal, 'journal');
    threads.fronts.forEach((tid, i) => tid && names.set(tid, `front-${i}`));
  }
  const [maker, taker] = await createAccounts(root, adminPort, 2, ['USDC=10000000', 'SOL=100000', 'BTC=1000', 'ETH=10000']);
  const flow = new ConnectionFlow(new Signer(maker), new Signer(taker), DEFAULT_FLOW_MARKETS[0], 1, `127.0.0.1:${port}`);
  const warm = await series(port, flow.next(500) as Request[]);
  log(`  ${label} warm-up: ${warm.completed} orders, p50 ${fmt(warm.latency.p50Us)}`);
  return { label, root, port, pid: server.process.pid!, names, flow, rounds: [] };
}

/** One order series on `build`, with its server's CPU and wake-ups per order; the round's figures. */
async function orderSeries(build: Build, orders: number, commit: HistogramSummary, hello: HistogramSummary): Promise<Round> {
  const queue = build.flow.next(orders) as Request[];
  const cpuBefore = runTimes(build.pid);
  const wakeupsBefore = wakeups(build.pid);
  const run = await series(build.port, queue);
  const cpu = perOrder(cpuBefore, runTimes(build.pid), build.names, run.completed, 1e6);
  const sleeps = perOrder(wakeupsBefore, wakeups(build.pid), build.names, run.completed, 1);
  const round: Round = {
    commit, hello, ack: run.latency, statuses: run.statuses,
    p50Ratio: Math.round((run.latency.p50Us / commit.p50Us) * 100) / 100,
    p99Ratio: Math.round((run.latency.p99Us / commit.p99Us) * 100) / 100,
    serverCpuUsPerOrder: Math.round(cpu.total), serverWakeupsPerOrder: sleeps.total,
    serverCpuByThread: cpu, serverWakeupsByThread: sleeps,
  };
  log(`  ${build.label}: ack p50 ${fmt(run.latency.p50Us)} p99 ${fmt(run.latency.p99Us)} | ratio to the commit p50 ${round.p50Ratio}× p99 ${round.p99Ratio}× | server ${round.serverCpuUsPerOrder} µs CPU, ${round.serverWakeupsPerOrder} wake-ups per order | ${JSON.stringify(run.statuses)}`);
  log(`    CPU µs per order ${JSON.stringify(cpu)}; wake-ups per order ${JSON.stringify(sleeps)}`);
  return round;
}

function summarize(build: Build, verifyUs: number): Record<string, number | string> {
  const rounds = build.rounds;
  const m = (pick: (r: Round) => number): number => Math.round(median(rounds.map(pick)) * 100) / 100;
  return {
    build: build.label, verifyUs,
    ackP50Us: m((r) => r.ack.p50Us), ackP99Us: m((r) => r.ack.p99Us),
    commitP50Us: m((r) => r.commit.p50Us), commitP99Us: m((r) => r.commit.p99Us),
    helloP50Us: m((r) => r.hello.p50Us), helloP99Us: m((r) => r.hello.p99Us),
    p50Ratio: m((r) => r.p50Ratio), p99Ratio: m((r) => r.p99Ratio),
    serverCpuUsPerOrder: m((r) => r.serverCpuUsPerOrder), serverWakeupsPerOrder: m((r) => r.serverWakeupsPerOrder),
  };
}

async function main(): Promise<void> {
  const o = parseOptions(process.argv.slice(2));
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}, load average ${loadavg()[0].toFixed(2)} at start`;
  const dataDirs: string[] = [];
  try {
    log(machine);
    const verify = await measureVerify(1, 2000);
    log(`one ed25519 verification (sodium-native, one thread): ${verify.microsPerVerify} µs`);
    const helloPort = await freePort();
    await startHello(ROOT, helloPort, o.frontThreads);
    const builds: Build[] = [];
    for (const [label, root] of [['this build', ROOT], ...(o.baseline ? [['baseline', resolve(o.baseline)]] : [])]) {
      dataDirs.push(mkdtempSync(join(tmpdir(), 'exchange-ack-')));
      builds.push(await startBuild(label, root, dataDirs[dataDirs.length - 1], o.frontThreads));
    }
    for (let r = 0; r < o.rounds; r++) {
      const commit = await commitSeries(o.commits);
      const hello = (await series(helloPort, builds[0].flow.next(o.orders) as Request[])).latency;
      log(`round ${r + 1}: commit p50 ${fmt(commit.p50Us)} p99 ${fmt(commit.p99Us)} | hello p50 ${fmt(hello.p50Us)} p99 ${fmt(hello.p99Us)}`);
      // The builds take turns going first, so that neither always follows the commit series.
      const order = r % 2 === 0 ? builds : [...builds].reverse();
      for (const build of order) build.rounds.push(await orderSeries(build, o.orders, commit, hello));
    }
    const summaries = builds.map((b) => summarize(b, verify.microsPerVerify));
    for (const s of summaries) log(`median of ${o.rounds} rounds, ${s.build}: ${JSON.stringify(s)}`);
    const paired = builds.length === 2
      ? builds[0].rounds.map((r, i) => Math.round((r.ack.p50Us / builds[1].rounds[i].ack.p50Us) * 1000) / 1000)
      : [];
    if (paired.length > 0) log(`ack p50, this build ÷ baseline, per round: ${paired.join(', ')} (median ${median(paired)})`);
    log(`load average at the end ${loadavg()[0].toFixed(2)}`);
    if (o.json) writeFileSync(o.json, JSON.stringify({ machine, summaries, paired, builds: builds.map((b) => ({ label: b.label, root: b.root, rounds: b.rounds })) }, null, 2));
  } finally {
    await stopAll();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:ack failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
