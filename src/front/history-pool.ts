// A front thread's history pool: piscina threads (src/history-thread.ts) that answer the history
// routes (routes/history-reads.ts: the account history and the lend pools' samples), so that a long history read — a page of 1,000 fills,
// or an offset deep into an account's history, milliseconds to a good part of a second — runs
// beside the front thread instead of on it, and the thread's orders, cancels and market data are
// not held up behind it. The front thread still authenticates, rate-limits and checks the query
// of every request; the pool only reads and renders. With HISTORY_THREADS=0 there is no pool and
// the same routes run on the front thread.

import { Piscina } from 'piscina';
import type { ServerConfig } from '../config.js';
import { Errors } from '../errors.js';
import type { FrontMetrics } from './front-metrics.js';
import { sendError, sendJson, type Route } from './http.js';

/** A history request handed to a pool thread. */
export interface HistoryTask {
  path: string;
  accountId: number;
  /** The request's query, as parsed and checked on the front thread (URLSearchParams text). */
  query: string;
}

/** What the route answered on the pool thread, for the front thread to send. */
export interface HistoryAnswer {
  status: number;
  contentType: string;
  retryAfterS?: number;
  body: string;
}

export interface HistoryWorkerData {
  config: ServerConfig;
}

/** History requests a pool holds waiting for a thread, per thread; past it the front answers 503. */
export const HISTORY_QUEUE_PER_THREAD = 64;

export class HistoryPool {
  private readonly pool: Piscina;
  private readonly paths: Set<string>;
  private readonly maxQueue: number;

  /**
   * `threads` ≥ 1 running `workerFile` (src/history-thread.ts, built), which answers the routes of
   * `paths` (the history routes: the composer names them, as it composes the thread's routes).
   */
  constructor(
    config: ServerConfig, threads: number, paths: readonly string[], workerFile: string, private readonly onError: (error: unknown) => void,
    private readonly metrics?: FrontMetrics,
    maxQueue = HISTORY_QUEUE_PER_THREAD * threads,
  ) {
    const workerData: HistoryWorkerData = { config };
    this.pool = new Piscina({
      filename: workerFile,
      workerData,
      minThreads: threads,
      maxThreads: threads,
      // A thread with a read in hand takes no other: each read is synchronous on its thread.
      concurrentTasksPerWorker: 1,
    });
    // A thread that fails outside a task (it cannot open the environment, say) is reported, not
    // thrown on this thread: the requests it should have answered get 500.
    this.pool.on('error', onError);
    this.paths = new Set(paths);
    this.maxQueue = maxQueue;
  }

  /**
   * The routes with each history route's handler replaced by one that hands the request to the
   * pool and sends the pool's answer; every other route as it was.
   */
  serve(routes: Route[]): Route[] {
    return routes.map((route) => (route.method === 'get' && this.paths.has(route.path) ? this.offloaded(route) : route));
  }

  private offloaded(route: Route): Route {
    return {
      ...route,
      handle: (ctx, input) => {
        // A bounded wait: a flood of history requests is refused, as the engine's queue refuses
        // orders when it is full, rather than held in memory without end.
        if (this.pool.queueSize >= this.maxQueue) return sendError(ctx, Errors.historyBusy);
        const task: HistoryTask = { path: route.path, accountId: input.accountId, query: input.query.toString() };
        this.metrics?.add('historyPoolWaiting');
        (this.pool.run(task) as Promise<HistoryAnswer>).then(
          (answer) => {
            this.metrics?.add('historyPoolWaiting', -1);
            this.metrics?.add('historyPoolReads');
            sendJson(ctx, answer.status, answer.body, answer.contentType, answer.retryAfterS);
          },
          (error: unknown) => {
            this.metrics?.add('historyPoolWaiting', -1);
            this.onError(error);
            sendError(ctx, Errors.internal);
          },
        );
      },
    };
  }

  /** Stops the pool's threads. */
  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
