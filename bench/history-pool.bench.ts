// `npm run bench:historypool`: what a long account history read does to the orders of the same
// front thread, with the history routes answered by the front thread's history pool
// (--history-threads 1, the default) and on the front thread itself (--history-threads 0).
//
// One server with one front thread, so that every request shares it. An account's history is
// filled first (FILLS fills: a resting ask taken by as many IOC bids). Then, per round and per
// mode (the two modes taking turns at going first), the server is started on that data directory
// and a quoting account sends ORDERS signed requests one at a time on one connection (a post-only
// bid far from the book, then its cancel), latency from the write of the request to the last byte
// of its answer:
//   quiet   nothing else runs: the baseline of the same mode, in the same round;
//   loaded  a second connection meanwhile reads that account's fills, 1,000 a page (the most a
//           page holds), back to back; with --read trades, the market's public trades instead,
//           1,000 a page (GET /api/v1/trades/history, unsigned: the same trades).
// Reported per mode: the orders' p50 and p99 quiet and loaded, the loaded ÷ quiet ratio, and the
// history pages read per second meanwhile; medians over the rounds.
//
// Options: --rounds N (3), --orders N (400), --fills N (1000), --read fills|trades (fills), --json PATH.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HttpConnection, requestBytes } from './e2e/http-conn.js';
import { Signer } from './e2e/flow.js';
import { createAccount, freePort, startExchange, stopAll, type Child } from './e2e/processes.js';

const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
const HOST = '127.0.0.1';

interface Options {
  rounds: number;
  orders: number;
  fills: number;
  read: 'fills' | 'trades';
  json: string | null;
}

function parseOptions(argv: string[]): Options {
  const o: Options = { rounds: 3, orders: 400, fills: 1000, read: 'fills', json: null };
  for (let i = 0; i < argv.length; i += 2) {
    const [name, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`${name} needs a value`);
    if (name === '--rounds') o.rounds = Number(value);
    else if (name === '--orders') o.orders = Number(value);
    else if (name === '--fills') o.fills = Number(value);
    else if (name === '--json') o.json = value;
    else if (name === '--read' && (value === 'fills' || value === 'trades')) o.read = value;
    else throw new Error(`unknown option ${name}`);
  }
  for (const n of [o.rounds, o.orders, o.fills]) if (!(Number.isInteger(n) && n > 0)) throw new Error('--rounds, --orders and --fills take positive whole numbers');
  return o;
}

/** Timestamps that never repeat (a repeated signature is refused as a replay) and stay close to now. */
let lastTimestamp = 0;
function timestamp(): number {
  lastTimestamp = Math.max(Date.now(), lastTimestamp + 1);
  return lastTimestamp;
}

/** One signed request, answered: its status, body and latency (ms, write to last byte). */
function send(conn: HttpConnection, signer: Signer, method: string, path: string, instruction: string, params: Record<string, string | number | boolean>): Promise<{ status: number; body: string; ms: number }> {
  const headers = signer.headers(instruction, params, timestamp());
  const query = method === 'GET' && Object.keys(params).length > 0 ? `?${new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)]))}` : '';
  return answered(conn, requestBytes(method, path + query, HOST, headers, method === 'GET' ? undefined : JSON.stringify(params)));
}

/** One unsigned GET, answered: its status, body and latency (ms, write to last byte). */
function get(conn: HttpConnection, path: string): Promise<{ status: number; body: string; ms: number }> {
  return answered(conn, requestBytes('GET', path, HOST, {}, undefined));
}

/** The request `bytes` written on `conn`, answered: its status, body and latency (ms, write to last byte). */
function answered(conn: HttpConnection, bytes: Buffer): Promise<{ status: number; body: string; ms: number }> {
  return new Promise((resolvePromise, reject) => {
    conn.onError = reject;
    const started = performance.now();
    conn.request(bytes, (status, body) => resolvePromise({ status, body: body.toString('utf8'), ms: performance.now() - started }));
  });
}

async function expectOk(p: Promise<{ status: number; body: string }>, what: string): Promise<string> {
  const r = await p;
  if (r.status !== 200) throw new Error(`${what}: HTTP ${r.status} ${r.body.slice(0, 200)}`);
  return r.body;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

interface Series {
  p50: number;
  p99: number;
}

interface ModeRound {
  quiet: Series;
  loaded: Series;
  pagesPerS: number;
}

/** ORDERS requests one at a time: a post-only bid below the book (which has no asks left), then its cancel. */
async function orderSeries(conn: HttpConnection, quoter: Signer, orders: number): Promise<Series> {
  const times: number[] = [];
  for (let i = 0; i < orders; i += 2) {
    const placed = await send(conn, quoter, 'POST', '/api/v1/order', 'orderExecute', { symbol: 'SOL_USDC', side: 'Bid', orderType: 'Limit', price: '95', quantity: '0.1', postOnly: true });
    if (placed.status !== 200) throw new Error(`place: HTTP ${placed.status} ${placed.body.slice(0, 200)}`);
    const cancel = await send(conn, quoter, 'DELETE', '/api/v1/order', 'orderCancel', { symbol: 'SOL_USDC', orderId: (JSON.parse(placed.body) as { id: string }).id });
    if (cancel.status !== 200) throw new Error(`cancel: HTTP ${cancel.status} ${cancel.body.slice(0, 200)}`);
    times.push(placed.ms, cancel.ms);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 0.5), p99: percentile(times, 0.99) };
}

/** One page of 1,000 of what the second connection reads: the reader's fills, or the market's public trades. */
function readPage(conn: HttpConnection, reader: Signer, read: Options['read']): Promise<string> {
  if (read === 'trades') return expectOk(get(conn, '/api/v1/trades/history?symbol=SOL_USDC&limit=1000'), 'trades page');
  return expectOk(send(conn, reader, 'GET', '/wapi/v1/history/fills', 'fillHistoryQueryAll', { limit: 1000 }), 'history page');
}

async function measureMode(dataDir: string, historyThreads: number, reader: Signer, quoter: Signer, orders: number, read: Options['read']): Promise<ModeRound> {
  const [port, adminPort] = [await freePort(), await freePort()];
  const server: Child = await startExchange(ROOT, port, adminPort, dataDir, 1, ['--history-threads', String(historyThreads)]);
  try {
    const conn = await HttpConnection.open(HOST, port);
    const history = await HttpConnection.open(HOST, port);
    await orderSeries(conn, quoter, Math.min(orders, 100)); // warm-up
    const quiet = await orderSeries(conn, quoter, orders);
    let pages = 0;
    let reading = true;
    const started = performance.now();
    const loop = (async () => {
      while (reading) {
        await readPage(history, reader, read);
        pages++;
      }
    })();
    const loaded = await orderSeries(conn, quoter, orders);
    reading = false;
    await loop;
    const pagesPerS = pages / ((performance.now() - started) / 1000);
    conn.close();
    history.close();
    return { quiet, loaded, pagesPerS };
  } finally {
    await server.stop();
  }
}

/** FILLS fills for the reader: one resting ask of FILLS × 0.01 SOL, taken by FILLS IOC bids of 0.01. */
async function fillHistory(dataDir: string, fills: number): Promise<{ reader: Signer; quoter: Signer }> {
  const [port, adminPort] = [await freePort(), await freePort()];
  const server = await startExchange(ROOT, port, adminPort, dataDir, 1, ['--history-threads', '0']);
  try {
    const maker = new Signer(await createAccount(ROOT, adminPort, ['SOL=100000']));
    const reader = new Signer(await createAccount(ROOT, adminPort, ['USDC=100000000']));
    const quoter = new Signer(await createAccount(ROOT, adminPort, ['USDC=100000000']));
    const conn = await HttpConnection.open(HOST, port);
    await expectOk(send(conn, maker, 'POST', '/api/v1/order', 'orderExecute', { symbol: 'SOL_USDC', side: 'Ask', orderType: 'Limit', price: '100', quantity: (fills / 100).toFixed(2), postOnly: true }), 'resting ask');
    for (let i = 0; i < fills; i++) {
      await expectOk(send(conn, reader, 'POST', '/api/v1/order', 'orderExecute', { symbol: 'SOL_USDC', side: 'Bid', orderType: 'Limit', price: '100', quantity: '0.01', timeInForce: 'IOC' }), 'taking bid');
    }
    const page = JSON.parse(await expectOk(send(conn, reader, 'GET', '/wapi/v1/history/fills', 'fillHistoryQueryAll', { limit: 1000 }), 'history check')) as unknown[];
    if (page.length !== Math.min(fills, 1000)) throw new Error(`the reader has ${page.length} fills on its first page, not ${Math.min(fills, 1000)}`);
    const trades = JSON.parse(await readPage(conn, reader, 'trades')) as unknown[];
    if (trades.length !== Math.min(fills, 1000)) throw new Error(`the market has ${trades.length} trades on its first page, not ${Math.min(fills, 1000)}`);
    conn.close();
    return { reader, quoter };
  } finally {
    await server.stop();
  }
}

const fmt = (ms: number): string => (ms >= 1 ? `${ms.toFixed(2)} ms` : `${(ms * 1000).toFixed(0)} µs`);

async function main(): Promise<void> {
  const o = parseOptions(process.argv.slice(2));
  const dataDir = mkdtempSync(join(tmpdir(), 'history-pool-bench-'));
  const log = (text: string): void => console.error(`[history-pool ${new Date().toISOString().slice(11, 19)}] ${text}`);
  try {
    log(`load average ${loadavg()[0].toFixed(2)} at start; filling ${o.fills} fills…`);
    const { reader, quoter } = await fillHistory(dataDir, o.fills);
    const modes = [{ name: 'history pool (--history-threads 1)', threads: 1 }, { name: 'on the front thread (--history-threads 0)', threads: 0 }];
    const rounds: ModeRound[][] = modes.map(() => []);
    for (let r = 0; r < o.rounds; r++) {
      const order = r % 2 === 0 ? [0, 1] : [1, 0];
      for (const m of order) {
        const result = await measureMode(dataDir, modes[m].threads, reader, quoter, o.orders, o.read);
        rounds[m].push(result);
        log(`round ${r + 1} ${modes[m].name}: quiet p50 ${fmt(result.quiet.p50)} p99 ${fmt(result.quiet.p99)}; loaded p50 ${fmt(result.loaded.p50)} p99 ${fmt(result.loaded.p99)}; ${result.pagesPerS.toFixed(0)} history pages/s`);
      }
    }
    const rows = modes.map((mode, m) => {
      const rs = rounds[m];
      const q50 = median(rs.map((x) => x.quiet.p50));
      const q99 = median(rs.map((x) => x.quiet.p99));
      const l50 = median(rs.map((x) => x.loaded.p50));
      const l99 = median(rs.map((x) => x.loaded.p99));
      return { mode: mode.name, q50, q99, l50, l99, ratio50: median(rs.map((x) => x.loaded.p50 / x.quiet.p50)), ratio99: median(rs.map((x) => x.loaded.p99 / x.quiet.p99)), pages: median(rs.map((x) => x.pagesPerS)) };
    });
    console.log(`Measured ${new Date().toISOString().slice(0, 10)} (load average ${loadavg()[0].toFixed(2)} at the end) with \`node dist/bench/history-pool.bench.js --rounds ${o.rounds} --orders ${o.orders} --fills ${o.fills} --read ${o.read}\`: one front thread; per round and mode ${o.orders} signed requests one at a time (post-only bid, cancel), quiet and while a second connection reads pages of 1,000 ${o.read === 'trades' ? 'public trades' : 'fills'} back to back; medians of ${o.rounds} rounds, the modes taking turns at going first.\n`);
    console.log('| history routes answered | orders quiet p50 / p99 | orders under history reads p50 / p99 | loaded ÷ quiet, p50 / p99 (per-round median) | history pages/s meanwhile |');
    console.log('| --- | --- | --- | --- | ---: |');
    for (const r of rows) console.log(`| ${r.mode} | ${fmt(r.q50)} / ${fmt(r.q99)} | ${fmt(r.l50)} / ${fmt(r.l99)} | ${r.ratio50.toFixed(2)}× / ${r.ratio99.toFixed(2)}× | ${r.pages.toFixed(0)} |`);
    if (o.json !== null) writeFileSync(o.json, JSON.stringify({ options: o, rounds, rows }, null, 2));
  } finally {
    await stopAll();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
