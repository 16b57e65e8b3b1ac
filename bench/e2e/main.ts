// `npm run bench:e2e`: the end-to-end benchmark of the exchange as a market maker sees it.
//
//   1. ceilings, with nothing else running: ed25519 verifications/s with sodium-native on one
//      thread and on every core; a uWebSockets.js hello-world POST server (same thread count as
//      the exchange's front) driven by the same client with the same request bytes;
//   2. the real server (dist/src/main.js) on loopback with a fresh data directory, speed bump 0,
//      accounts created with the admin CLI; WebSocket subscribers (depth, trades, private order
//      updates) in a worker thread;
//   3. phases, each with CPU per thread of the server (/proc/<pid>/task) and of this client:
//      idle (does the engine burn a core?), warm-up, unloaded latency (one connection, one signed
//      order at a time), public reads (GET depth, GET ticker, GET markets), closed-loop maximum signed-order
//      throughput, and an open-loop constant rate at 70 % of that throughput (latency from the
//      intended send time, WebSocket delivery latency);
//   4. bench/e2e-results.json, a section of bench/RESULTS.md and of README.md (report.ts).
//
// Loopback only, bounded: every phase has a request count and a time cap; everything started is
// stopped on success, error or Ctrl-C. With --target http://127.0.0.1:PORT --admin-port N it
// drives a running server instead (no per-thread CPU unless --server-pid is given).
// Options: --front-threads N (2), --connections N (64), --runs N (3), --open-seconds S (10),
// --quick (short phases, for development), --no-write (print only).

import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { HttpConnection, requestBytes } from './http-conn.js';
import { ConnectionFlow, DEFAULT_FLOW_MARKETS, KIND_NAMES, Signer, type Account } from './flow.js';
import { SigningPool } from './sign-pool.js';
import { runClosedLoop, runOpenLoop, runSerial, type LoadResult, type Request } from './load.js';
import { measureDurableCommit, measureVerify, type VerifyCeiling } from './ceilings.js';
import { createAccounts, freePort, startExchange, startHello, stopAll, type Child } from './processes.js';
import { busiestUnnamed, cpuPercent, currentThreadId, machinePercent, machineTimes, threadTimes } from './threads.js';
import { writeReport, type E2EResults, type Phase } from './report.js';

const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..', '..');

interface Options {
  target: string | null;
  adminPort: number | null;
  serverPid: number | null;
  frontThreads: number;
  connections: number;
  runs: number;
  openSeconds: number;
  quick: boolean;
  write: boolean;
}

function parseOptions(argv: string[]): Options {
  const o: Options = { target: null, adminPort: null, serverPid: null, frontThreads: 2, connections: 64, runs: 3, openSeconds: 10, quick: false, write: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--target') o.target = value();
    else if (a === '--admin-port') o.adminPort = Number(value());
    else if (a === '--server-pid') o.serverPid = Number(value());
    else if (a === '--front-threads') o.frontThreads = Number(value());
    else if (a === '--connections') o.connections = Number(value());
    else if (a === '--runs') o.runs = Number(value());
    else if (a === '--open-seconds') o.openSeconds = Number(value());
    else if (a === '--quick') o.quick = true;
    else if (a === '--no-write') o.write = false;
    else throw new Error(`unknown option ${a}`);
  }
  if (o.target !== null) {
    const url = new URL(o.target);
    if (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost') throw new Error('--target must be a loopback address');
    if (o.adminPort === null) throw new Error('--target needs --admin-port');
  }
  return o;
}

const log = (text: string): void => {
  process.stdout.write(`[e2e ${new Date().toISOString().slice(11, 19)}] ${text}\n`);
};

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** The run whose throughput is the median of the runs (its latencies are reported with it). */
function medianRun(runs: LoadResult[]): LoadResult {
  const sorted = [...runs].sort((a, b) => a.throughputPerS - b.throughputPerS);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

async function openConnections(host: string, port: number, count: number): Promise<HttpConnection[]> {
  const conns: HttpConnection[] = [];
  for (let i = 0; i < count; i++) conns.push(await HttpConnection.open(host, port));
  return conns;
}

/**
 * Builds `perConnection` requests for each connection and signs them on the signing pool (every
 * core, sign-pool.ts), logging how long the signing took.
 */
async function presign(pool: SigningPool, flows: ConnectionFlow[], perConnection: number, host: string): Promise<Request[][]> {
  const unsigned = flows.map((flow) => flow.nextUnsigned(perConnection));
  const started = performance.now();
  const signed = await pool.sign(unsigned.flat(), host);
  log(`  signed ${signed.length} requests on ${pool.threads} threads in ${Math.round(performance.now() - started)} ms`);
  return unsigned.map((_, i) => signed.slice(i * perConnection, (i + 1) * perConnection));
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const q = options.quick;
  const started = new Date();
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}, load average ${loadavg()[0].toFixed(2)} at start`;
  const clientTids = new Map<number, string>();
  clientTids.set(currentThreadId() ?? process.pid, 'client HTTP driver');
  const phases: Phase[] = [];
  let server: Child | null = null;
  let dataDir: string | null = null;
  let subscriber: Worker | null = null;
  const conns: HttpConnection[] = [];
  // Requests are signed before each run on a pool of worker threads (idle while the load runs).
  const pool = new SigningPool();

  const cleanup = async (): Promise<void> => {
    for (const conn of conns) conn.close();
    await pool.close();
    if (subscriber) {
      subscriber.postMessage({ type: 'stop' });
      await subscriber.terminate();
      subscriber = null;
    }
    await stopAll();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    dataDir = null;
  };
  const onSignal = () => {
    void cleanup().then(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    // 1. Ceilings, nothing else running.
    const verifyMs = q ? 500 : 2000;
    log('ceiling: ed25519 verify (sodium-native), one thread…');
    const verifyOne: VerifyCeiling[] = [];
    for (let r = 0; r < options.runs; r++) verifyOne.push(await measureVerify(1, verifyMs));
    log(`ceiling: ed25519 verify, ${cpus().length} threads at once…`);
    const verifyAll: VerifyCeiling[] = [];
    for (let r = 0; r < options.runs; r++) verifyAll.push(await measureVerify(cpus().length, verifyMs));
    log('ceiling: durable LMDB commit of one record (fsync)…');
    const fsyncDir = mkdtempSync(join(tmpdir(), 'exchange-e2e-fsync-'));
    let durableCommit;
    try {
      durableCommit = await measureDurableCommit(fsyncDir, q ? 100 : 500);
    } finally {
      rmSync(fsyncDir, { recursive: true, force: true });
    }
    log(`  durable commit p50 ${durableCommit.p50Us} µs, p99 ${durableCommit.p99Us} µs`);
    const verify = {
      oneThread: verifyOne.sort((a, b) => a.perSecond - b.perSecond)[Math.floor((options.runs - 1) / 2)],
      allCores: verifyAll.sort((a, b) => a.perSecond - b.perSecond)[Math.floor((options.runs - 1) / 2)],
    };

    // A sample of the flow's request bytes for the hello server (it ignores what it receives).
    const sampleAccount: Account = (() => {
      const { publicKey, privateKey } = generateKeyPairSync('ed25519');
      const x = publicKey.export({ format: 'jwk' }).x!;
      const d = privateKey.export({ format: 'jwk' }).d!;
      return { accountId: 0, publicKey: Buffer.from(x, 'base64url').toString('base64'), secretKey: Buffer.from(d, 'base64url').toString('base64') };
    })();

    const helloPort = await freePort();
    log(`ceiling: uWebSockets.js hello-world POST, ${options.frontThreads} threads, ${options.connections} connections…`);
    const hello = await startHello(ROOT, helloPort, options.frontThreads);
    const helloFlow = new ConnectionFlow(new Signer(sampleAccount), new Signer(sampleAccount), DEFAULT_FLOW_MARKETS[0], 1, `127.0.0.1:${helloPort}`);
    const helloSample = helloFlow.next(100);
    const helloConns = await openConnections('127.0.0.1', helloPort, options.connections);
    const helloQueue: Request[] = [];
    for (let i = 0; i < (q ? 2000 : 20_000); i++) helloQueue.push(helloSample[i % helloSample.length]);
    const helloRuns: LoadResult[] = [];
    const helloCpu: Array<Record<string, number>> = [];
    for (let r = 0; r < options.runs; r++) {
      const before = threadTimes(hello.process.pid!);
      const mBefore = machineTimes();
      const t0 = performance.now();
      const run = await runClosedLoop(helloConns, helloConns.map(() => helloQueue), KIND_NAMES, q ? 1000 : 3000);
      helloRuns.push(run);
      const seconds = (performance.now() - t0) / 1000;
      const cpu = cpuPercent(before, threadTimes(hello.process.pid!), new Map(), seconds);
      const machine = machinePercent(mBefore, machineTimes(), cpu.total + (run.clientCpuS / seconds) * 100, seconds);
      helloCpu.push({ server: cpu.total, client: Math.round((run.clientCpuS / seconds) * 1000) / 10, 'machine foreign': machine.foreign });
    }
    for (const conn of helloConns) conn.close();
    await hello.stop();
    const helloResult = medianRun(helloRuns);
    log(`  hello: ${helloResult.throughputPerS} req/s`);

    // 2. The exchange.
    let port: number;
    let adminPort: number;
    let serverPid: number | null = options.serverPid;
    const threadNames = new Map<number, string>();
    if (options.target) {
      port = Number(new URL(options.target).port);
      adminPort = options.adminPort!;
    } else {
      port = await freePort();
      adminPort = await freePort();
      dataDir = mkdtempSync(join(tmpdir(), 'exchange-e2e-'));
      log(`starting the exchange: ${options.frontThreads} front threads, port ${port}…`);
      server = await startExchange(ROOT, port, adminPort, dataDir, options.frontThreads);
      serverPid = server.process.pid!;
      const threads = server.ready?.threads as { main: number; engine: number | null; journal: number | null; fronts: Array<number | null> } | undefined;
      if (threads) {
        threadNames.set(threads.main, 'server main');
        if (threads.engine) threadNames.set(threads.engine, 'engine');
        if (threads.journal) threadNames.set(threads.journal, 'journal');
        threads.fronts.forEach((tid, i) => tid && threadNames.set(tid, `front-${i}`));
      }
    }
    const host = `127.0.0.1:${port}`;
    const makerCount = Math.min(16, options.connections);
    const takerCount = Math.min(8, options.connections);
    log(`creating ${makerCount + takerCount} accounts with the admin CLI…`);
    const deposits = ['USDC=10000000', 'SOL=100000', 'BTC=1000', 'ETH=10000'];
    const accounts = await createAccounts(ROOT, adminPort, makerCount + takerCount, deposits);
    const makers = accounts.slice(0, makerCount).map((a) => new Signer(a));
    const takers = accounts.slice(makerCount).map((a) => new Signer(a));
    const markets = DEFAULT_FLOW_MARKETS;
    const flows: ConnectionFlow[] = [];
    for (let i = 0; i < options.connections; i++) {
      // Connections sharing a maker account use disjoint clientId ranges (10 M each).
      const flow = new ConnectionFlow(makers[i % makerCount], takers[i % takerCount], markets[i % markets.length], 1 + Math.floor(i / markets.length), host);
      flow.clientIdBase = Math.floor(i / makerCount) * 10_000_000;
      flows.push(flow);
    }

    log('starting WebSocket subscribers…');
    subscriber = new Worker(new URL('./ws-subscriber.js', import.meta.url), {
      workerData: { url: `ws://${host}/`, symbols: markets.map((m) => m.symbol), publicSockets: 2, privateAccounts: accounts.slice(0, 4) },
    });
    const subReady = await new Promise<{ tid: number | null }>((resolveReady, reject) => {
      subscriber!.once('message', (m: { type: string; tid: number | null; message?: string }) => (m.type === 'ready' ? resolveReady(m) : reject(new Error(m.message))));
      subscriber!.once('error', reject);
    });
    if (subReady.tid) clientTids.set(subReady.tid, 'client WebSocket subscribers');
    const wsReport = (): Promise<Record<string, unknown>> => new Promise((resolveReport) => {
      subscriber!.once('message', (m: Record<string, unknown>) => resolveReport(m));
      subscriber!.postMessage({ type: 'report' });
    });

    conns.push(...(await openConnections('127.0.0.1', port, options.connections)));

    /** Runs `body` with server and client CPU per thread sampled around it. */
    const measured = async <T>(name: string, body: () => Promise<T>): Promise<{ value: T; cpu: Record<string, number>; clientCpu: Record<string, number>; seconds: number }> => {
      const mBefore = machineTimes();
      const sBefore = serverPid ? threadTimes(serverPid) : new Map();
      const cBefore = threadTimes(process.pid);
      const t0 = performance.now();
      const value = await body();
      const seconds = (performance.now() - t0) / 1000;
      const sAfter = serverPid ? threadTimes(serverPid) : new Map();
      const cpu = serverPid ? cpuPercent(sBefore, sAfter, threadNames, seconds) : {};
      const clientCpu = cpuPercent(cBefore, threadTimes(process.pid), clientTids, seconds);
      const other = busiestUnnamed(sBefore, sAfter, threadNames, seconds);
      const machine = machinePercent(mBefore, machineTimes(), (cpu.total ?? 0) + (clientCpu.total ?? 0), seconds);
      cpu['machine busy'] = machine.busy;
      cpu['machine foreign'] = machine.foreign;
      cpu['machine steal'] = machine.steal;
      log(`  ${name}: server CPU ${JSON.stringify(cpu)} (busiest others ${other.join(' ')}); client ${JSON.stringify(clientCpu)}`);
      return { value, cpu, clientCpu, seconds };
    };

    // 3a. Idle: nothing sent for 2 s.
    log('idle (2 s)…');
    const idle = await measured('idle', () => new Promise((r) => setTimeout(r, 2000)));
    phases.push({ name: 'idle', cpu: idle.cpu, clientCpu: idle.clientCpu, seconds: idle.seconds });

    // 3b. Warm-up (not reported).
    log('warm-up…');
    const warm = await runClosedLoop(conns, await presign(pool, flows, q ? 10 : 50, host), KIND_NAMES, 10_000);
    log(`  warm-up: ${warm.completed} requests, ${warm.throughputPerS}/s, statuses ${JSON.stringify(warm.statuses)}`);
    if (warm.errorSamples.length > 0) log(`  samples: ${warm.errorSamples.join(' | ')}`);

    // 3c. Unloaded latency: one connection, one order at a time.
    log('unloaded latency (one connection, one order at a time)…');
    const serialRuns: LoadResult[] = [];
    let serialCpu: Record<string, number> = {};
    for (let r = 0; r < options.runs; r++) {
      const queue = flows[0].next(q ? 200 : 1000) as Request[];
      const m = await measured(`unloaded run ${r + 1}`, () => runSerial(conns[0], queue, KIND_NAMES));
      serialRuns.push(m.value);
      serialCpu = m.cpu;
    }
    const unloaded = {
      runs: serialRuns,
      p50Us: median(serialRuns.map((r) => r.latency.p50Us)),
      p90Us: median(serialRuns.map((r) => r.latency.p90Us)),
      p99Us: median(serialRuns.map((r) => r.latency.p99Us)),
      p999Us: median(serialRuns.map((r) => r.latency.p999Us)),
      maxUs: median(serialRuns.map((r) => r.latency.maxUs)),
      throughputPerS: median(serialRuns.map((r) => r.throughputPerS)),
    };
    phases.push({ name: 'unloaded', cpu: serialCpu, clientCpu: {}, seconds: 0 });
    log(`  unloaded: p50 ${unloaded.p50Us} µs, p99 ${unloaded.p99Us} µs`);

    // 3d. Public reads.
    const readResults: Record<string, { runs: LoadResult[]; median: LoadResult; cpu: Record<string, number>; perFrontThread: number }> = {};
    for (const [name, path] of [['GET depth (SOL_USDC, 100 levels)', '/api/v1/depth?symbol=SOL_USDC&limit=100'], ['GET ticker (SOL_USDC, 24 h window, kept per front between trades)', '/api/v1/ticker?symbol=SOL_USDC'], ['GET markets', '/api/v1/markets']] as const) {
      log(`public reads: ${name}…`);
      const bytes = requestBytes('GET', path, host, {});
      const queue: Request[] = Array.from({ length: q ? 5000 : 100_000 }, () => ({ kind: 0, bytes }));
      const runs: LoadResult[] = [];
      let cpu: Record<string, number> = {};
      for (let r = 0; r < options.runs; r++) {
        const m = await measured(`${name} run ${r + 1}`, () => runClosedLoop(conns, conns.map(() => queue), ['read'], q ? 1000 : 3000));
        runs.push(m.value);
        cpu = m.cpu;
      }
      const med = medianRun(runs);
      readResults[name] = { runs, median: med, cpu, perFrontThread: Math.round(med.throughputPerS / options.frontThreads) };
      log(`  ${name}: ${med.throughputPerS} req/s (${JSON.stringify(med.statuses)})`);
    }

    // 3e. Closed-loop maximum signed-order throughput.
    const closedSeconds = q ? 1 : 3;
    const perConnClosed = Math.ceil((Math.max(verify.allCores.perSecond, 2000) * closedSeconds * 1.1) / options.connections);
    const closedRuns: LoadResult[] = [];
    const closedCpu: Array<Record<string, number>> = [];
    let closedClientCpu: Record<string, number> = {};
    for (let r = 0; r < options.runs; r++) {
      log(`closed loop run ${r + 1}: signing ${perConnClosed * options.connections} orders…`);
      const queues = await presign(pool, flows, perConnClosed, host);
      subscriber.postMessage({ type: 'reset' });
      const m = await measured(`closed run ${r + 1}`, () => runClosedLoop(conns, queues, KIND_NAMES, closedSeconds * 1000));
      closedRuns.push(m.value);
      closedCpu.push(m.cpu);
      closedClientCpu = m.clientCpu;
      log(`  ${m.value.throughputPerS} orders/s, p50 ${m.value.latency.p50Us} µs, statuses ${JSON.stringify(m.value.statuses)}`);
    }
    const closed = medianRun(closedRuns);
    const closedWs = await wsReport();

    // 3f. Open loop at 70 % of the closed-loop throughput.
    const rate = Math.max(100, Math.round(closed.throughputPerS * 0.7));
    const openSeconds = q ? 2 : options.openSeconds;
    log(`open loop: ${rate} orders/s for ${openSeconds} s (70 % of ${closed.throughputPerS}); signing…`);
    const openQueues = await presign(pool, flows, Math.ceil((rate * openSeconds) / options.connections) + 1, host);
    subscriber.postMessage({ type: 'reset' });
    const open = await measured('open loop', () => runOpenLoop(conns, openQueues, KIND_NAMES, rate, openSeconds * 1000));
    const openWs = await wsReport();
    log(`  open: ${open.value.throughputPerS}/s achieved, p50 ${open.value.latency.p50Us} µs, p99 ${open.value.latency.p99Us} µs, p99.9 ${open.value.latency.p999Us} µs`);

    phases.push({ name: 'closed loop (median run)', cpu: closedCpu[closedRuns.indexOf(closed)], clientCpu: closedClientCpu, seconds: closed.elapsedS });
    phases.push({ name: 'open loop 70 %', cpu: open.cpu, clientCpu: open.clientCpu, seconds: open.seconds });
    for (const [name, r] of Object.entries(readResults)) phases.push({ name, cpu: r.cpu, clientCpu: {}, seconds: 0 });

    const results: E2EResults = {
      date: started.toISOString(),
      machine,
      cores: cpus().length,
      options: { ...options },
      ceilings: {
        verify,
        durableCommit,
        hello: { median: helloResult, runs: helloRuns.map((r) => r.throughputPerS), cpu: helloCpu[helloRuns.indexOf(helloResult)] },
      },
      unloaded,
      reads: Object.fromEntries(Object.entries(readResults).map(([k, v]) => [k, { throughputPerS: v.median.throughputPerS, runs: v.runs.map((r) => r.throughputPerS), perFrontThread: v.perFrontThread, latency: v.median.latency, statuses: v.median.statuses }])),
      closed: { median: closed, runs: closedRuns.map((r) => r.throughputPerS) },
      open: open.value,
      websocket: { closedLoop: closedWs, openLoop: openWs },
      phases,
      serverLogTail: server ? server.lines.filter((l) => !l.includes('"level":30')).slice(-10) : [],
    };
    await cleanup();
    writeReport(ROOT, results, options.write);
    log(`done in ${((Date.now() - started.getTime()) / 1000).toFixed(0)} s`);
  } catch (error) {
    await cleanup();
    throw error;
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:e2e failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
