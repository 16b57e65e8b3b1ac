// `npm run bench:frontcpu`: front-thread CPU per signed order, against the cost of the one
// ed25519 verification every signed order needs, measured in the same run.
//
// Each run starts the real server (dist/src/main.js) with ONE front thread on loopback, creates
// accounts with the admin CLI, pre-signs the e2e market-maker flow (bench/e2e/flow.ts: post-only
// bid and ask, crossing IOC, two cancels, over three markets) and drives it closed-loop over
// keep-alive connections from this process. The front thread's CPU time is read from
// /proc/<pid>/task/<tid>/schedstat (the kernel's run time of that OS thread in nanoseconds; the
// thread id is in the server's "ready" line) just before the first request and just after the
// last answer, and divided by the number of answered requests. It is gross: everything the front
// thread does in that interval (HTTP parsing in uWS, JSON, signature check, replay guard, ring
// writes, polling the outbound ring, responses) is charged to the orders.
//
// Next to it, in the same process and the same run (server idle, before and after the load):
// sodium-native crypto_sign_verify_detached over a signing string of the flow's own size, median
// of batches. The figure is the ratio CPU per order / verify. After each run, two floors at the
// rate the run achieved: the hello-world server (the HTTP floor), and the same server in its relay
// mode (bench/e2e/hello-server.ts), which hands each request to a thread of its own and answers
// once that thread says so, one turn later, with a body the size of an order's answer: the
// front-thread CPU of this architecture's shape (a hand-off out and an answer back) with no work
// in it. Verify plus the relay floor is what no front of this shape can go below.
//
// With --baseline DIR (a checkout of another commit, built), runs alternate between the two
// builds (this one first on even runs, the baseline first on odd runs), so both see the same
// machine load. With --profile DIR the server runs under `--cpu-prof` and its profiles land in DIR
// (one per thread; bench/front-profile.ts summarises the front thread's).
// Options: --orders N (per run, 20000), --connections N (16), --runs N (5), --no-write.

import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { HttpConnection } from './e2e/http-conn.js';
import { ConnectionFlow, DEFAULT_FLOW_MARKETS, KIND_NAMES, Signer } from './e2e/flow.js';
import { runClosedLoop, runOpenLoop, type Request } from './e2e/load.js';
import { createAccounts, freePort, startChild, startHello, stopAll, type Child } from './e2e/processes.js';

const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
const RESULTS = join(ROOT, 'bench', 'RESULTS.md');

interface Options {
  orders: number;
  connections: number;
  runs: number;
  baseline: string | null;
  profile: string | null;
  write: boolean;
}

function parseOptions(argv: string[]): Options {
  const o: Options = { orders: 20_000, connections: 16, runs: 5, baseline: null, profile: null, write: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--orders') o.orders = Number(value());
    else if (a === '--connections') o.connections = Number(value());
    else if (a === '--runs') o.runs = Number(value());
    else if (a === '--baseline') o.baseline = resolve(value());
    else if (a === '--profile') o.profile = resolve(value());
    else if (a === '--no-write') o.write = false;
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

const log = (text: string): void => {
  process.stdout.write(`[front-cpu ${new Date().toISOString().slice(11, 19)}] ${text}\n`);
};

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** CPU nanoseconds all threads of `pid` have run. */
function processCpuNs(pid: number): number {
  let total = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      total += threadCpuNs(pid, Number(tid));
    } catch {
      // the thread exited meanwhile
    }
  }
  return total;
}

/**
 * The HTTP floor: CPU per request of a uWebSockets.js hello-world POST server on one thread
 * (bench/e2e/hello-server.ts: reads the body, answers a small JSON object at once), driven with
 * the same request bytes over the same number of connections at the rate the exchange ran at
 * (open loop: the same spacing of arrivals, so the same wake-ups per request). Its process total:
 * the main thread only waits. With `relay`, the relay mode's front thread alone (its relay thread,
 * the engine's place, is not counted, as the exchange's engine is not).
 */
async function helloCpuUsPerRequest(queues: Request[][], ratePerS: number, relay = false): Promise<number> {
  const port = await freePort();
  const hello = await startHello(ROOT, port, 1, relay);
  const frontTid = relay ? (hello.ready?.fronts as number[] | undefined)?.[0] : undefined;
  if (relay && !frontTid) throw new Error('the relay hello-world server did not report its front thread id');
  const cpuNs = (pid: number): number => (frontTid ? threadCpuNs(pid, frontTid) : processCpuNs(pid));
  const conns: HttpConnection[] = [];
  try {
    for (let i = 0; i < queues.length; i++) conns.push(await HttpConnection.open('127.0.0.1', port));
    await runClosedLoop(conns, queues.map((q) => q.slice(0, 100)), KIND_NAMES, 60_000);
    const pid = hello.process.pid!;
    const cpu0 = cpuNs(pid);
    const total = queues.reduce((sum, q) => sum + q.length, 0);
    const load = await runOpenLoop(conns, queues, KIND_NAMES, ratePerS, Math.ceil((total / ratePerS) * 1000));
    return (cpuNs(pid) - cpu0) / 1000 / load.completed;
  } finally {
    for (const conn of conns) conn.close();
    await hello.stop();
  }
}

/** CPU nanoseconds an OS thread of `pid` has run (first field of its schedstat). */
function threadCpuNs(pid: number, tid: number): number {
  return Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
}

/** Times an OS thread of `pid` has gone to sleep (voluntary context switches): its wake-ups. */
function threadSleeps(pid: number, tid: number): number {
  const match = /\nvoluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8'));
  return match ? Number(match[1]) : 0;
}

/** CPU nanoseconds the calling thread has run. */
function ownCpuNs(): number {
  return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
}

interface Sodium {
  crypto_sign_seed_keypair(pk: Uint8Array, sk: Uint8Array, seed: Uint8Array): void;
  crypto_sign_detached(sig: Uint8Array, m: Uint8Array, sk: Uint8Array): void;
  crypto_sign_verify_detached(sig: Uint8Array, m: Uint8Array, pk: Uint8Array): boolean;
}
const sodium = createRequire(import.meta.url)('sodium-native') as Sodium;

/**
 * Median CPU µs (this thread's run time, as for the front thread, so preemption by other processes
 * counts in neither) of one sodium-native verify of a `bytes`-long message, over batches of 200.
 */
function measureVerifyMicros(bytes: number, batches = 25): number {
  const message = Buffer.alloc(bytes, 'a');
  const publicKey = Buffer.alloc(32);
  const secretKey = Buffer.alloc(64);
  sodium.crypto_sign_seed_keypair(publicKey, secretKey, Buffer.alloc(32, 5));
  const signature = Buffer.alloc(64);
  sodium.crypto_sign_detached(signature, message, secretKey);
  const perBatch: number[] = [];
  for (let b = 0; b < batches; b++) {
    const t0 = ownCpuNs();
    for (let i = 0; i < 200; i++) {
      if (!sodium.crypto_sign_verify_detached(signature, message, publicKey)) throw new Error('verification failed');
    }
    perBatch.push((ownCpuNs() - t0) / 1000 / 200);
  }
  return median(perBatch);
}

interface RunResult {
  build: 'this' | 'baseline';
  orders: number;
  ordersPerS: number;
  frontCpuUsPerOrder: number;
  frontCorePercent: number;
  idleFrontCorePercent: number;
  verifyUs: number;
  /** CPU per request of the hello-world server, same bytes and connections, measured after the run. */
  helloUs: number;
  /** Front-thread CPU per request of the relay hello-world (a hand-off and an answer one turn later), same bytes and rate. */
  relayUs: number;
  /** Sleeps (voluntary context switches) per answered request over the load: the front and engine threads'. */
  frontSleepsPerOrder: number;
  engineSleepsPerOrder: number;
  statuses: Record<string, Record<string, number>>;
}

async function startServer(root: string, profileDir: string | null): Promise<{ child: Child; port: number; adminPort: number; dataDir: string; frontTid: number; engineTid: number }> {
  const port = await freePort();
  const adminPort = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'exchange-front-cpu-'));
  const prof = profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [];
  const child = await startChild(root, [
    ...prof, join(root, 'dist/src/main.js'), '--host', '127.0.0.1', '--port', String(port), '--admin-port', String(adminPort),
    '--data-dir', dataDir, '--front-threads', '1', '--speed-bump-ms', '0', '--no-demo',
    // The rate limits are on, so their cost is counted, with budgets no run reaches (all the load
    // comes from one address).
    '--address-requests-per-s', '1000000', '--key-requests-per-s', '1000000',
  ], (line) => line.includes('"msg":"ready"'), 'exchange server').catch((error: unknown) => {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  });
  const threads = child.ready?.threads as { fronts: Array<number | null>; engine: number | null } | undefined;
  const frontTid = threads?.fronts[0];
  const engineTid = threads?.engine;
  if (!frontTid || !engineTid) throw new Error('the server did not report its front and engine thread ids');
  return { child, port, adminPort, dataDir, frontTid, engineTid };
}

/** One flow per connection, over fresh accounts. */
async function connectionFlows(root: string, adminPort: number, host: string, connections: number): Promise<ConnectionFlow[]> {
  const makerCount = Math.min(8, connections);
  const takerCount = Math.min(4, connections);
  const deposits = ['USDC=10000000', 'SOL=100000', 'BTC=1000', 'ETH=10000'];
  const accounts = await createAccounts(root, adminPort, makerCount + takerCount, deposits);
  const makers = accounts.slice(0, makerCount).map((a) => new Signer(a));
  const takers = accounts.slice(makerCount).map((a) => new Signer(a));
  const markets = DEFAULT_FLOW_MARKETS;
  const flows: ConnectionFlow[] = [];
  for (let i = 0; i < connections; i++) {
    const flow = new ConnectionFlow(makers[i % makerCount], takers[i % takerCount], markets[i % markets.length], 1 + Math.floor(i / markets.length), host);
    flow.clientIdBase = Math.floor(i / makerCount) * 10_000_000;
    flows.push(flow);
  }
  return flows;
}

/** One run against the build at `root`. */
async function oneRun(root: string, build: RunResult['build'], o: Options, messageBytes: number): Promise<RunResult> {
  const server = await startServer(root, o.profile);
  const conns: HttpConnection[] = [];
  try {
    const host = `127.0.0.1:${server.port}`;
    const perConnection = Math.ceil(o.orders / o.connections);
    const flows = await connectionFlows(root, server.adminPort, host, o.connections);
    const warm: Request[][] = flows.map((flow) => flow.next(200));
    const queues: Request[][] = flows.map((flow) => flow.next(perConnection));
    for (let i = 0; i < o.connections; i++) conns.push(await HttpConnection.open('127.0.0.1', server.port));
    await runClosedLoop(conns, warm, KIND_NAMES, 60_000);
    const pid = server.child.process.pid!;
    const verifyBefore = measureVerifyMicros(messageBytes);
    const idle0 = threadCpuNs(pid, server.frontTid);
    const idleT0 = performance.now();
    await new Promise((r) => setTimeout(r, 500));
    const idlePercent = ((threadCpuNs(pid, server.frontTid) - idle0) / 1e6 / (performance.now() - idleT0)) * 100;
    const cpu0 = threadCpuNs(pid, server.frontTid);
    const frontSleeps0 = threadSleeps(pid, server.frontTid);
    const engineSleeps0 = threadSleeps(pid, server.engineTid);
    const t0 = performance.now();
    const load = await runClosedLoop(conns, queues, KIND_NAMES, 120_000);
    const cpuNs = threadCpuNs(pid, server.frontTid) - cpu0;
    const frontSleepsPerOrder = (threadSleeps(pid, server.frontTid) - frontSleeps0) / load.completed;
    const engineSleepsPerOrder = (threadSleeps(pid, server.engineTid) - engineSleeps0) / load.completed;
    const seconds = (performance.now() - t0) / 1000;
    const verifyAfter = measureVerifyMicros(messageBytes);
    const helloUs = await helloCpuUsPerRequest(queues, load.throughputPerS);
    const relayUs = await helloCpuUsPerRequest(queues, load.throughputPerS, true);
    return {
      build, orders: load.completed, ordersPerS: load.throughputPerS,
      frontCpuUsPerOrder: cpuNs / 1000 / load.completed, frontCorePercent: (cpuNs / 1e9 / seconds) * 100,
      idleFrontCorePercent: idlePercent, verifyUs: median([verifyBefore, verifyAfter]), helloUs, relayUs, frontSleepsPerOrder, engineSleepsPerOrder, statuses: load.statuses,
    };
  } finally {
    for (const conn of conns) conn.close();
    await server.child.stop();
    rmSync(server.dataDir, { recursive: true, force: true });
  }
}

/** The byte length of a typical signing string of the flow (the post-only place). */
function flowMessageBytes(): number {
  const m = DEFAULT_FLOW_MARKETS[0];
  return Buffer.byteLength(Signer.signingString('orderExecute', {
    clientId: 10_000_001, orderType: 'Limit', postOnly: true, price: '149.99', quantity: '0.10', side: 'Bid', symbol: m.symbol, timeInForce: 'GTC',
  }, Date.now(), 60_000));
}

interface Summary {
  build: RunResult['build'];
  runs: number;
  cpuUs: number;
  cpuRange: [number, number];
  verifyUs: number;
  helloUs: number;
  relayUs: number;
  /** (verify + relay floor) ÷ verify per run: the lowest ratio a front of this shape could reach. */
  floorRatio: number;
  ratio: number;
  ratioRange: [number, number];
  ordersPerS: number;
  corePercent: number;
  idlePercent: number;
  frontSleeps: number;
  engineSleeps: number;
}

function summarise(results: RunResult[], build: RunResult['build']): Summary | null {
  const rs = results.filter((r) => r.build === build);
  if (rs.length === 0) return null;
  const ratios = rs.map((r) => r.frontCpuUsPerOrder / r.verifyUs);
  const cpu = rs.map((r) => r.frontCpuUsPerOrder);
  return {
    build, runs: rs.length, cpuUs: median(cpu), cpuRange: [Math.min(...cpu), Math.max(...cpu)],
    verifyUs: median(rs.map((r) => r.verifyUs)), helloUs: median(rs.map((r) => r.helloUs)), relayUs: median(rs.map((r) => r.relayUs)),
    floorRatio: median(rs.map((r) => (r.verifyUs + r.relayUs) / r.verifyUs)), ratio: median(ratios), ratioRange: [Math.min(...ratios), Math.max(...ratios)],
    ordersPerS: median(rs.map((r) => r.ordersPerS)), corePercent: median(rs.map((r) => r.frontCorePercent)),
    idlePercent: median(rs.map((r) => r.idleFrontCorePercent)),
    frontSleeps: median(rs.map((r) => r.frontSleepsPerOrder)), engineSleeps: median(rs.map((r) => r.engineSleepsPerOrder)),
  };
}

function report(o: Options, summaries: Summary[], results: RunResult[], machine: string, messageBytes: number): string {
  const f1 = (x: number): string => x.toFixed(1);
  const rows = summaries.map((s) => `| ${s.build === 'this' ? 'this build' : `baseline (${o.baseline})`} | ${s.runs} | **${f1(s.cpuUs)}** (${f1(s.cpuRange[0])}–${f1(s.cpuRange[1])}) | ${f1(s.verifyUs)} | ${f1(s.helloUs)} | ${f1(s.relayUs)} | ${s.floorRatio.toFixed(2)}× | **${s.ratio.toFixed(2)}×** (${s.ratioRange[0].toFixed(2)}–${s.ratioRange[1].toFixed(2)}) | ${Math.round(s.ordersPerS).toLocaleString('en-US')} | ${Math.round(s.corePercent)} % | ${f1(s.idlePercent)} % | ${s.frontSleeps.toFixed(2)} / ${s.engineSleeps.toFixed(2)} |`);
  const statuses = Object.entries(results[results.length - 1].statuses).map(([kind, m]) => `${kind}: ${Object.entries(m).map(([s, c]) => `${s}×${c}`).join(', ')}`).join('; ');
  return `Written by \`npm run bench:frontcpu\` on ${new Date().toISOString().slice(0, 10)} (${machine}).
One front thread, ${o.connections} keep-alive connections closed-loop, ${o.orders.toLocaleString('en-US')} signed requests per run
(the e2e market-maker flow: post-only bid and ask, crossing IOC, two cancels), ${o.runs} runs${o.baseline ? ', alternating between the two builds' : ''}.
Front CPU = the front OS thread's run time from /proc/<pid>/task/<tid>/schedstat over the load,
divided by the answered requests (gross: HTTP parsing, JSON, signature check, replay guard, ring,
outbound polling, responses). Verify = CPU time (schedstat of the measuring thread) of one sodium-native
crypto_sign_verify_detached over a ${messageBytes}-byte message in this process, median of batches of 200,
just before and after each run's load. Hello-world = CPU per request of a one-thread uWebSockets.js
server that reads the body and answers \`{"ok":true}\` at once (bench/e2e/hello-server.ts), driven with the
same bytes over the same connections at the rate the run achieved (open loop), after each run: the
HTTP floor (wake-up, read, parse, write) under any front at that rate. Relay floor = the front thread's
CPU per request of the same server in relay mode, same bytes and rate: it hands each request to a
thread of its own (woken once per turn of its loop) and answers when that thread says so, one turn
later, with a body the size of an order's answer; (verify + relay floor) ÷ verify is the lowest
ratio a front that must hand an order to the engine and answer once it is durable could reach
here. Sleeps = voluntary context
switches of the front and the engine OS threads (/proc/<pid>/task/<tid>/status) over the load, per
answered request: how often each went to sleep and had to be woken.

| build | runs | front CPU µs per signed order, median (range) | verify µs (same runs) | hello-world server µs per request (same runs) | relay floor µs per request (same runs) | (verify + relay floor) ÷ verify | CPU / verify | signed orders/s | front thread busy during the load | front thread CPU when idle (500 ms before the load) | sleeps per order, front / engine thread |
| --- | ---: | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |
${rows.join('\n')}

Statuses (last run): ${statuses}.`;
}

function writeSection(text: string): void {
  const begin = '<!-- front-cpu:begin -->';
  const end = '<!-- front-cpu:end -->';
  const current = readFileSync(RESULTS, 'utf8');
  const block = `${begin}\n${text}\n${end}`;
  const a = current.indexOf(begin);
  const b = current.indexOf(end);
  const next = a >= 0 && b > a
    ? current.slice(0, a) + block + current.slice(b + end.length)
    : `${current.trimEnd()}\n\n## Front CPU per signed order (bench/front-cpu.bench.ts)\n\n${block}\n`;
  writeFileSync(RESULTS, next);
}

async function main(): Promise<void> {
  const o = parseOptions(process.argv.slice(2));
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}, load average ${loadavg()[0].toFixed(2)} at start`;
  const messageBytes = flowMessageBytes();
  const results: RunResult[] = [];
  for (let r = 0; r < o.runs; r++) {
    const order: Array<[string, RunResult['build']]> = [[ROOT, 'this']];
    if (o.baseline) {
      if (r % 2 === 0) order.push([o.baseline, 'baseline']);
      else order.unshift([o.baseline, 'baseline']);
    }
    for (const [root, build] of order) {
      const result = await oneRun(root, build, o, messageBytes);
      results.push(result);
      log(`run ${r + 1} ${build}: ${result.frontCpuUsPerOrder.toFixed(1)} µs/order front CPU, verify ${result.verifyUs.toFixed(1)} µs, hello ${result.helloUs.toFixed(1)} µs, relay floor ${result.relayUs.toFixed(1)} µs, ratio ${(result.frontCpuUsPerOrder / result.verifyUs).toFixed(2)}, ${result.ordersPerS}/s, front ${result.frontCorePercent.toFixed(0)} % busy, sleeps per order front ${result.frontSleepsPerOrder.toFixed(2)} engine ${result.engineSleepsPerOrder.toFixed(2)}`);
    }
  }
  const summaries = [summarise(results, 'this'), summarise(results, 'baseline')].filter((s): s is Summary => s !== null);
  const text = report(o, summaries, results, machine, messageBytes);
  process.stdout.write(`${text}\n`);
  if (o.write) writeSection(text);
}

process.on('SIGINT', () => void stopAll().then(() => process.exit(130)));
main().catch(async (error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  await stopAll();
  process.exit(1);
});
