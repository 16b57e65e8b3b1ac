// `npm run bench:soak`: disk per order under sustained load, on the real server.
//
// Starts dist/src/main.js on loopback with a fresh data directory (speed bump 0, no demo data),
// creates accounts with the admin CLI, and drives the e2e load generator's market-maker flow
// (bench/e2e/flow.ts: post-only bid and ask, a crossing IOC order, two cancels by clientId, over
// SOL_USDC, BTC_USDC and ETH_USDC) closed-loop over raw keep-alive connections until --orders
// orders (placements; cancels are counted as requests) have been answered. Every connection also
// reads one page of its maker's order history across all markets every --history-every cycles,
// as clients do, since history reads take LMDB read transactions in the front threads.
//
// Measured, all in bytes, pages or LMDB transaction ids (nothing here is a time threshold):
//   - the journal environment's data file (<data-dir>/journal/data.mdb) before the first order and
//     after the last one answered: growth per order and per request, and per chunk of the run, so
//     a file that grows faster than its live data (pages LMDB could not reuse) shows as a rising
//     or large per-chunk figure;
//   - LMDB's reader table, sampled through the run: the oldest snapshot any thread of the server
//     held, as transactions behind the newest. A reader that stays open pins every page freed
//     after its snapshot, which is what makes an LMDB file grow by copied pages.
// The journal is not compacted during the run (the default snapshot interval is 1 M commands),
// so the figure is the journal record and the order, fill and market history each order adds.
//
// Writes its section of bench/RESULTS.md (between the soak markers) unless --no-write.
// Options: --orders N (100000), --connections N (16), --front-threads N (2), --history-every N
// (20 cycles), --no-write.

import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { open, type RootDatabase } from 'lmdb';
import { HttpConnection, requestBytes } from './e2e/http-conn.js';
import { ConnectionFlow, DEFAULT_FLOW_MARKETS, KIND_NAMES, RequestKind, Signer, type SignedRequest } from './e2e/flow.js';
import { runClosedLoop, type LoadResult } from './e2e/load.js';
import { createAccounts, freePort, startExchange, stopAll, type Child } from './e2e/processes.js';

const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
const RESULTS = join(ROOT, 'bench', 'RESULTS.md');
const BEGIN = '<!-- soak:begin -->';
const END = '<!-- soak:end -->';
/** Requests are signed per chunk, so each chunk must finish within the signature window (60 s). */
const CHUNKS = 50;
const REPORT_EVERY = 5;
const HISTORY_KIND = KIND_NAMES.length;
const SAMPLE_MS = 100;

interface Options {
  orders: number;
  connections: number;
  frontThreads: number;
  historyEvery: number;
  write: boolean;
}

function parseOptions(argv: string[]): Options {
  const o: Options = { orders: 100_000, connections: 16, frontThreads: 2, historyEvery: 20, write: true };
  for (let i = 0; i < argv.length; i++) {
    const number = (): number => {
      const v = Number(argv[++i]);
      if (!Number.isInteger(v) || v <= 0) throw new Error(`${argv[i - 1]} needs a positive integer`);
      return v;
    };
    const a = argv[i];
    if (a === '--orders') o.orders = number();
    else if (a === '--connections') o.connections = number();
    else if (a === '--front-threads') o.frontThreads = number();
    else if (a === '--history-every') o.historyEvery = number();
    else if (a === '--no-write') o.write = false;
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

const log = (text: string): void => {
  process.stdout.write(`[soak ${new Date().toISOString().slice(11, 19)}] ${text}\n`);
};

const lastTimestamp = new Map<Signer, number>();

/** One signed page of the maker's order history across all markets. */
function historyPage(signer: Signer, host: string): SignedRequest {
  // Connections share makers: a distinct timestamp per signer keeps equal pages from being replays.
  const timestamp = Math.max(Date.now(), (lastTimestamp.get(signer) ?? 0) + 1);
  lastTimestamp.set(signer, timestamp);
  const headers = signer.headers('orderHistoryQueryAll', { limit: 10 }, timestamp);
  return { kind: HISTORY_KIND as RequestKind, bytes: requestBytes('GET', '/wapi/v1/history/orders?limit=10', host, headers) };
}

/** The next `cycles` flow cycles of one connection (3 orders each), signed now, with history pages. */
function signCycles(flow: ConnectionFlow, cycles: number, historyEvery: number, cycleBase: number, host: string): SignedRequest[] {
  const out: SignedRequest[] = [];
  for (let c = 0; c < cycles; c++) {
    out.push(...flow.next(5));
    if ((cycleBase + c + 1) % historyEvery === 0) out.push(historyPage(flow.maker, host));
  }
  return out;
}

/** The oldest snapshot a thread of `pid` holds, as transactions behind the newest (0: none held). */
function readerLag(env: RootDatabase, pid: number): number {
  const last = (env.getStats() as { lastTxnId: number }).lastTxnId;
  let lag = 0;
  for (const line of env.readerList().split('\n')) {
    const m = /^\s*(\d+)\s+[0-9a-f]+\s+(\d+)\s*$/.exec(line);
    if (m && Number(m[1]) === pid) lag = Math.max(lag, last - Number(m[2]));
  }
  return lag;
}

interface Chunk {
  orders: number;
  requests: number;
  fileBytes: number;
}

interface SoakResult {
  options: Options;
  machine: string;
  date: string;
  orders: number;
  requests: number;
  statuses: Record<string, Record<string, number>>;
  seconds: number;
  fileBefore: number;
  fileAfter: number;
  chunks: Chunk[];
  maxReaderLag: number;
  lastTxnId: number;
}

function mergeStatuses(into: Record<string, Record<string, number>>, from: LoadResult['statuses']): void {
  for (const [kind, map] of Object.entries(from)) {
    const target = (into[kind] ??= {});
    for (const [status, count] of Object.entries(map)) target[status] = (target[status] ?? 0) + count;
  }
}

async function soak(options: Options, server: Child, dataDir: string, port: number, adminPort: number): Promise<SoakResult> {
  const host = `127.0.0.1:${port}`;
  const makerCount = Math.min(8, options.connections);
  const takerCount = Math.min(4, options.connections);
  log(`creating ${makerCount + takerCount} accounts with the admin CLI…`);
  const accounts = await createAccounts(ROOT, adminPort, makerCount + takerCount, ['USDC=10000000', 'SOL=100000', 'BTC=1000', 'ETH=10000']);
  const makers = accounts.slice(0, makerCount).map((a) => new Signer(a));
  const takers = accounts.slice(makerCount).map((a) => new Signer(a));
  const flows = Array.from({ length: options.connections }, (_, i) => {
    const flow = new ConnectionFlow(makers[i % makerCount], takers[i % takerCount], DEFAULT_FLOW_MARKETS[i % DEFAULT_FLOW_MARKETS.length], 1 + Math.floor(i / DEFAULT_FLOW_MARKETS.length), host);
    flow.clientIdBase = Math.floor(i / makerCount) * 100_000_000;
    return flow;
  });
  const conns: HttpConnection[] = [];
  for (let i = 0; i < options.connections; i++) conns.push(await HttpConnection.open('127.0.0.1', port));

  const dataFile = join(dataDir, 'journal', 'data.mdb');
  const env = open({ path: join(dataDir, 'journal'), readOnly: true });
  const pid = server.process.pid!;
  let maxReaderLag = 0;
  const sampler = setInterval(() => {
    maxReaderLag = Math.max(maxReaderLag, readerLag(env, pid));
  }, SAMPLE_MS);

  const cyclesPerConnection = Math.ceil(options.orders / 3 / options.connections);
  const fileBefore = statSync(dataFile).size;
  const started = performance.now();
  const statuses: Record<string, Record<string, number>> = {};
  const chunks: Chunk[] = [];
  let done = 0;
  let orders = 0;
  let requests = 0;
  log(`${options.connections} connections × ${cyclesPerConnection} cycles (${cyclesPerConnection * 3 * options.connections} orders), file ${fileBefore} bytes`);
  for (let chunk = 0; chunk < CHUNKS; chunk++) {
    const cycles = Math.ceil(((chunk + 1) * cyclesPerConnection) / CHUNKS) - done;
    const queues = flows.map((flow) => signCycles(flow, cycles, options.historyEvery, done, host));
    const run = await runClosedLoop(conns, queues, [...KIND_NAMES, 'history page'], 3_600_000);
    done += cycles;
    mergeStatuses(statuses, run.statuses);
    requests += run.completed;
    orders = done * 3 * options.connections;
    chunks.push({ orders, requests, fileBytes: statSync(dataFile).size });
    maxReaderLag = Math.max(maxReaderLag, readerLag(env, pid));
    if ((chunk + 1) % REPORT_EVERY === 0) log(`  ${orders} orders, ${requests} requests, ${run.throughputPerS}/s, file ${chunks[chunks.length - 1].fileBytes} bytes, oldest server snapshot so far ${maxReaderLag} txns behind`);
  }
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  const lastTxnId = (env.getStats() as { lastTxnId: number }).lastTxnId;
  for (const conn of conns) conn.close();
  await env.close();
  return {
    options, machine: '', date: '', orders, requests, statuses, seconds, fileBefore,
    fileAfter: chunks[chunks.length - 1].fileBytes, chunks, maxReaderLag, lastTxnId,
  };
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;

function report(r: SoakResult): string {
  const grown = r.fileAfter - r.fileBefore;
  const tenths = r.chunks.filter((_, i) => (i + 1) % REPORT_EVERY === 0);
  const rows = tenths.map((c, i) => {
    const prev = i === 0 ? { orders: 0, fileBytes: r.fileBefore } : tenths[i - 1];
    return `| ${fmt(prev.orders)}–${fmt(c.orders)} | ${mb(c.fileBytes)} | ${fmt((c.fileBytes - prev.fileBytes) / (c.orders - prev.orders))} |`;
  });
  return `${BEGIN}
Written by \`npm run bench:soak\` on ${r.date} (${r.machine}).
Real server, ${r.options.frontThreads} front threads, ${r.options.connections} keep-alive connections closed-loop, the e2e
market-maker flow (post-only bid and ask, crossing IOC, two cancels) over three markets, and one
order-history page (all markets, limit 10) per connection every ${r.options.historyEvery} cycles.

| figure | measured |
| --- | --- |
| orders placed (requests, with cancels and history pages) | ${fmt(r.orders)} (${fmt(r.requests)}) in ${r.seconds.toFixed(1)} s |
| journal data file before → after | ${mb(r.fileBefore)} → ${mb(r.fileAfter)} (+${mb(grown)}, ${fmt(r.lastTxnId)} LMDB write transactions) |
| **disk per order** | **${fmt(grown / r.orders)} bytes** (${fmt(grown / r.requests)} bytes per request) |
| oldest snapshot any server thread held, sampled every ${SAMPLE_MS} ms | ${fmt(r.maxReaderLag)} transactions behind the newest |

Growth per tenth of the run (a file that grows only by live data grows at a steady rate):

| orders | file at the end | bytes per order in this tenth |
| --- | --- | --- |
${rows.join('\n')}

Statuses: ${Object.entries(r.statuses).map(([kind, map]) => `${kind} ${Object.entries(map).map(([s, n]) => `${s}×${fmt(n)}`).join(', ')}`).join('; ')}.
${END}`;
}

function writeSection(section: string): void {
  let text = readFileSync(RESULTS, 'utf8');
  const begin = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (begin >= 0 && end > begin) text = text.slice(0, begin) + section + text.slice(end + END.length);
  else text = `${text.trimEnd()}\n\n## Disk per order under sustained load (bench/soak.bench.ts)\n\n${section}\n`;
  writeFileSync(RESULTS, text);
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}, load average ${loadavg()[0].toFixed(2)} at start`;
  const dataDir = mkdtempSync(join(tmpdir(), 'exchange-soak-'));
  try {
    const port = await freePort();
    const adminPort = await freePort();
    log(`starting the server (data ${dataDir})…`);
    const server = await startExchange(ROOT, port, adminPort, dataDir, options.frontThreads);
    const result = await soak(options, server, dataDir, port, adminPort);
    result.machine = machine;
    result.date = new Date().toISOString().slice(0, 10);
    await server.stop();
    const section = report(result);
    process.stdout.write(`${section}\n`);
    if (options.write) {
      writeSection(section);
      log(`wrote ${RESULTS}`);
    }
  } finally {
    await stopAll();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

process.on('SIGINT', () => void stopAll().then(() => process.exit(130)));
main().catch(async (error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  await stopAll();
  process.exit(1);
});
