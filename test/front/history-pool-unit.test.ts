// The history pool (src/front/history-pool.ts) on its own, over an empty data directory, with the
// server's pool thread (src/history-thread.ts): it replaces the handlers of the history routes only, answers them from its thread with the routes'
// own answers (statuses and refusals included), refuses with 503 what would wait past its queue
// bound (for unsigned reads, half of it), does not read a request whose client went away while it waited, and answers 500 when its
// thread cannot answer a request.

import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
// The pool's threads load the built thread module (dist/src/history-thread.js); the pool comes from dist too.
import { HistoryPool } from '../../dist/src/front/history-pool.js';
import { keptContext, type Route } from '../../src/front/http.js';
import type { FrontMetrics } from '../../src/front/front-metrics.js';
import { MarketHistory } from '../../src/front/market-history.js';
import { AccountHistoryReader } from '../../engine/store/history-account.js';
import { historyReadRoutes } from '../../src/routes/history-reads.js';
import { removeDir, tempDataDir, waitUntil } from '../helpers/server.js';

/** A request context whose response keeps what is sent (the one the pool's threads use). */
const context = (path: string) => keptContext(path, '');
/** The markets' last trade ids as a front thread would pass them: these data directories hold no trade. */
const noTrades = (): number[] => [];

describe('history pool', () => {
  const dataDir = tempDataDir();
  const config = loadConfig(['--data-dir', dataDir], {});
  // The data directory's environment exists before the pool's threads open it, as in the server.
  const history = new MarketHistory(config.dataDir);
  const front = {
    config,
    marketsBySymbol: new Map(config.markets.map((m) => [m.symbol, m])),
    assetsBySymbol: new Map(config.assets.map((a) => [a.symbol, a])),
    accountHistory: new AccountHistoryReader(history.root, config.markets.length),
    history,
    data: { books: config.markets.map(() => ({ lastTradeId: 0 })) },
  };
  const errors: unknown[] = [];
  const pools: HistoryPool[] = [];
  afterAll(async () => {
    for (const pool of pools) await pool.close();
    history.close();
    removeDir(dataDir);
  });

  const other: Route = { method: 'get', path: '/api/v1/markets', handle: () => {} };
  const routes = [...historyReadRoutes(front), other];
  const PATHS = historyReadRoutes(front).map((route) => route.path);
  /** The pool thread's module, built (the server composes it in src/front-thread.ts). */
  const WORKER = new URL('../../dist/src/history-thread.js', import.meta.url).href;

  it('offloads the history routes only, and answers them as the routes do on the front thread', async () => {
    const pool = new HistoryPool(config, 1, PATHS, WORKER, (e) => errors.push(e));
    pools.push(pool);
    const served = pool.serve(routes, noTrades);
    expect(served.filter((route, i) => route !== routes[i]).map((r) => r.path)).toEqual(historyReadRoutes(front).map((r) => r.path));
    expect(served[served.length - 1]).toBe(other);
    for (const [query, status] of [['limit=5', 200], ['limit=1001', 400]] as const) {
      const fills = served.find((r) => r.path === '/wapi/v1/history/fills')!;
      const onPool = context(fills.path);
      fills.handle(onPool.ctx, { body: null, query: new URLSearchParams(query), accountId: 7 });
      const onFront = context(fills.path);
      routes.find((r) => r.path === fills.path)!.handle(onFront.ctx, { body: null, query: new URLSearchParams(query), accountId: 7 });
      expect(onFront.answer.status).toBe(status);
      await waitUntil(() => onPool.answer.body, `the pool's answer to ${query}`);
      expect(onPool.answer).toEqual(onFront.answer);
    }
    expect(errors).toEqual([]);
  });

  it('refuses with 503 what would wait past its queue bound, and answers the rest', async () => {
    const pool = new HistoryPool(config, 1, PATHS, WORKER, (e) => errors.push(e), undefined, 1);
    pools.push(pool);
    const orders = pool.serve(routes, noTrades).find((r) => r.path === '/wapi/v1/history/orders')!;
    // Handed over in one turn: the thread takes at most one, the queue holds one more.
    const requests = Array.from({ length: 4 }, () => context(orders.path));
    for (const { ctx } of requests) orders.handle(ctx, { body: null, query: new URLSearchParams(), accountId: 7 });
    await waitUntil(() => requests.every((r) => r.answer.status !== undefined) || undefined, 'every answer');
    const statuses = requests.map((r) => r.answer.status);
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThanOrEqual(2);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(1);
    for (const r of requests) if (r.answer.status === 503) expect(JSON.parse(r.answer.body!)).toMatchObject({ code: 'TOO_MANY_REQUESTS' });
    for (const r of requests) if (r.answer.status === 200) expect(r.answer.body).toBe('[]');
  });

  it('gives unsigned reads at most half its queue: past that they are refused, and a signed read still waits', async () => {
    const pool = new HistoryPool(config, 1, PATHS, WORKER, (e) => errors.push(e), undefined, 4);
    pools.push(pool);
    const served = pool.serve(routes, noTrades);
    const trades = served.find((r) => r.path === '/api/v1/trades')!;
    const fills = served.find((r) => r.path === '/wapi/v1/history/fills')!;
    // Handed over in one turn: five public trade reads, then a signed fills read.
    const unsigned = Array.from({ length: 5 }, () => context(trades.path));
    for (const { ctx } of unsigned) trades.handle(ctx, { body: null, query: new URLSearchParams('symbol=SOL_USDC'), accountId: 0 });
    const signedRead = context(fills.path);
    fills.handle(signedRead.ctx, { body: null, query: new URLSearchParams(), accountId: 7 });
    const all = [...unsigned, signedRead];
    await waitUntil(() => (all.every((r) => r.answer.status !== undefined) ? true : undefined), 'every answer');
    expect(unsigned.map((r) => r.answer.status)).toEqual([200, 200, 503, 503, 503]);
    expect(unsigned[0].answer.body).toBe('[]');
    expect(JSON.parse(unsigned[4].answer.body!)).toMatchObject({ code: 'TOO_MANY_REQUESTS' });
    expect(signedRead.answer).toMatchObject({ status: 200, body: '[]' });
    // Once they are answered, unsigned reads are taken again.
    const later = context(trades.path);
    trades.handle(later.ctx, { body: null, query: new URLSearchParams('symbol=SOL_USDC'), accountId: 0 });
    await waitUntil(() => later.answer.body, 'the later answer');
    expect(later.answer.status).toBe(200);
    expect(errors).toEqual([]);
  });

  it('does not read a request whose client went away while it waited, and reads the others', async () => {
    const counted = new Map<string, number>();
    const metrics = { add: (name: string, delta = 1) => counted.set(name, (counted.get(name) ?? 0) + delta) };
    const pool = new HistoryPool(config, 1, PATHS, WORKER, (e) => errors.push(e), metrics as unknown as FrontMetrics);
    pools.push(pool);
    const fills = pool.serve(routes, noTrades).find((r) => r.path === '/wapi/v1/history/fills')!;
    // Handed over in one turn: the thread takes the first; the others wait behind it, and the
    // clients of the second and third go away before the thread is free.
    const requests = Array.from({ length: 4 }, () => context(fills.path));
    for (const { ctx } of requests) fills.handle(ctx, { body: null, query: new URLSearchParams('limit=5'), accountId: 7 });
    for (const { ctx } of requests.slice(1, 3)) {
      ctx.aborted = true;
      ctx.onAborted?.();
    }
    await waitUntil(() => (counted.get('historyPoolWaiting') === 0 ? true : undefined), 'every request settled');
    expect(counted.get('historyPoolReads')).toBe(2);
    expect(counted.get('historyPoolAbandoned')).toBe(2);
    expect(requests.map((r) => r.answer.status)).toEqual([200, undefined, undefined, 200]);
    // The cells are handed out again: the next request is read.
    const next = context(fills.path);
    fills.handle(next.ctx, { body: null, query: new URLSearchParams('limit=5'), accountId: 7 });
    await waitUntil(() => next.answer.body, 'the next answer');
    expect(next.answer.status).toBe(200);
    expect(counted.get('historyPoolReads')).toBe(3);
    expect(errors).toEqual([]);
  });

  it('answers 500 and reports the error when its threads cannot answer', async () => {
    // Threads that cannot open the environment: a data directory under a file.
    const failures: unknown[] = [];
    const pool = new HistoryPool({ ...config, dataDir: '/dev/null/history' }, 1, PATHS, WORKER, (e) => failures.push(e));
    pools.push(pool);
    const fills = pool.serve(routes, noTrades).find((r) => r.path === '/wapi/v1/history/fills')!;
    const { ctx, answer } = context(fills.path);
    fills.handle(ctx, { body: null, query: new URLSearchParams(), accountId: 7 });
    await waitUntil(() => answer.body, 'the 500');
    expect(answer.status).toBe(500);
    expect(JSON.parse(answer.body!)).toMatchObject({ code: 'SERVER_ERROR' });
    expect(failures.length).toBeGreaterThanOrEqual(1);
    expect(errors).toEqual([]);
  });
});
