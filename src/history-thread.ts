// A thread of a front thread's history pool (front/history-pool.ts, run by piscina): it composes
// the history routes (routes/history-reads.ts) over its own LMDB reader of the same environment
// and answers them as the front thread would. A task names the route by path and carries the
// signer's account (0 on a public route), the request's query and each market's last trade id as
// the front thread had seen it (the bound of public trades and klines); the handler runs against a
// request context that keeps its answer (status, content type, Retry-After and body) instead of
// writing to a socket, and the answer goes back to the front thread, which sends it.
// Authentication, rate limits and query parsing stay on the front thread; the task's query has
// already passed them. A task whose client went away while it waited (its cell of the shared
// `abandoned` array set by the front thread) is answered null, without a read.

import { workerData } from 'node:worker_threads';
import type { HistoryAnswer, HistoryTask, HistoryWorkerData } from './front/history-pool.js';
import { keptContext, type Route } from './front/http.js';
import { MarketHistory } from './front/market-history.js';
import { AccountHistoryReader } from '../engine/store/history-account.js';
import { historyReadRoutes } from './routes/history-reads.js';

const data = workerData as HistoryWorkerData;
const config = data.config;
const abandoned = new Int32Array(data.abandoned);
const history = new MarketHistory(config.dataDir);
const accountHistory = new AccountHistoryReader(history.root, config.markets.length);
/** Each market's last trade id as the front thread saw it, set from each task (HistoryTask.tradeIdBounds). */
const books = config.markets.map(() => ({ lastTradeId: 0 }));
const routes = new Map<string, Route>();
for (const route of historyReadRoutes({
  config,
  marketsBySymbol: new Map(config.markets.map((m) => [m.symbol, m])),
  assetsBySymbol: new Map(config.assets.map((a) => [a.symbol, a])),
  accountHistory,
  history,
  data: { books },
})) routes.set(route.path, route);

/**
 * Answers one history request (null, unread, when its client has gone away); throws for a path
 * that is not a history route or a handler that did not answer.
 */
export default function answer(task: HistoryTask): HistoryAnswer | null {
  if (Atomics.load(abandoned, task.cell) !== 0) return null;
  const route = routes.get(task.path);
  if (route === undefined) throw new Error(`history worker: no history route ${task.path}`);
  for (let m = 0; m < books.length; m++) books[m].lastTradeId = task.tradeIdBounds[m] ?? 0;
  const { ctx, answer: kept } = keptContext(task.path, task.query);
  try {
    route.handle(ctx, { body: null, query: new URLSearchParams(task.query), accountId: task.accountId });
  } finally {
    // The read transaction ends with the request: the next one starts a fresh one and sees
    // everything committed by then, and an idle thread holds no snapshot (one kept open would pin
    // every page freed after it, and the file would grow by each later write's copied pages).
    history.root.resetReadTxn();
  }
  if (kept.status === undefined || kept.body === undefined || kept.contentType === undefined) throw new Error(`history worker: ${task.path} did not answer`);
  return kept as HistoryAnswer;
}
