// A front thread's history pool: piscina threads (src/history-thread.ts) that answer the history
// routes (routes/history-reads.ts: the account history, the lend pools' samples, the public
// trades and klines), so that a long history read — a page of 1,000 fills, or an offset deep into
// an account's history, milliseconds to a good part of a second — runs beside the front thread
// instead of on it, and the thread's orders, cancels and market data are not held up behind it.
// The front thread still authenticates, rate-limits and parses the query of every request; the
// pool checks its parameters (the route's own handler), reads and renders. With HISTORY_THREADS=0
// there is no pool and the same routes run on the front thread.
//
// A request whose client goes away while it waits for a thread is not read: its task carries a
// cell of a shared array that the front thread sets when the connection aborts, and the pool
// thread answers nothing for a task whose cell is set (piscina's own abort would end the thread
// if the task had started, with its read transaction open).

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
  /** The request's cell of HistoryWorkerData.abandoned: non-zero once its client went away. */
  cell: number;
  /**
   * Each market's last trade id (by market id) as the front thread had seen it on the durable
   * stream when it handed the request over: public trades and klines stop there, as on the front.
   */
  tradeIdBounds: number[];
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
  /** One Int32 cell per request in flight (HistoryTask.cell), set by the front thread. */
  abandoned: SharedArrayBuffer;
}

/** History requests a pool holds waiting for a thread, per thread; past it the front answers 503. */
export const HISTORY_QUEUE_PER_THREAD = 64;

export class HistoryPool {
  private readonly pool: Piscina;
  private readonly paths: Set<string>;
  private readonly maxQueue: number;
  /** Unsigned requests (public trades, klines, lend pool samples) in flight, and their bound. */
  private publicInFlight = 0;
  private readonly maxPublic: number;
  /** The cells of HistoryWorkerData.abandoned, and those no request in flight holds. */
  private readonly abandoned: Int32Array;
  private readonly freeCells: number[];

  /**
   * `threads` ≥ 1 running `workerFile` (src/history-thread.ts, built), which answers the routes of
   * `paths` (the history routes: the composer names them, as it composes the thread's routes).
   */
  constructor(
    config: ServerConfig, threads: number, paths: readonly string[], workerFile: string, private readonly onError: (error: unknown) => void,
    private readonly metrics?: FrontMetrics,
    maxQueue = HISTORY_QUEUE_PER_THREAD * threads,
  ) {
    // A cell for every request that can be in flight: the queue bound, and one running per thread.
    const cells = maxQueue + threads;
    this.abandoned = new Int32Array(new SharedArrayBuffer(cells * Int32Array.BYTES_PER_ELEMENT));
    this.freeCells = Array.from({ length: cells }, (_, k) => cells - 1 - k);
    const workerData: HistoryWorkerData = { config, abandoned: this.abandoned.buffer as SharedArrayBuffer };
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
    // Unsigned reads may hold at most half the queue (at least one), so that a flood of them,
    // from anyone, still leaves signed history reads room to wait.
    this.maxPublic = Math.max(1, Math.floor(maxQueue / 2));
  }

  /**
   * The routes with each history route's handler replaced by one that hands the request to the
   * pool and sends the pool's answer; every other route as it was. `tradeIdBounds` gives each
   * market's last trade id as the front thread has seen it (HistoryTask.tradeIdBounds).
   */
  serve(routes: Route[], tradeIdBounds: () => number[]): Route[] {
    return routes.map((route) => (route.method === 'get' && this.paths.has(route.path) ? this.offloaded(route, tradeIdBounds) : route));
  }

  private offloaded(route: Route, tradeIdBounds: () => number[]): Route {
    const unsigned = route.instruction === undefined;
    return {
      ...route,
      handle: (ctx, input) => {
        // A bounded wait: a flood of history requests is refused, as the engine's queue refuses
        // orders when it is full, rather than held in memory without end.
        const full = this.pool.queueSize >= this.maxQueue || (unsigned && this.publicInFlight >= this.maxPublic);
        const cell = full ? undefined : this.freeCells.pop();
        if (cell === undefined) return sendError(ctx, Errors.historyBusy);
        if (unsigned) this.publicInFlight++;
        // A client already gone (while its body was read, say) is not read either.
        Atomics.store(this.abandoned, cell, ctx.aborted ? 1 : 0);
        ctx.onAborted = () => Atomics.store(this.abandoned, cell, 1);
        const task: HistoryTask = { path: route.path, accountId: input.accountId, query: input.query.toString(), cell, tradeIdBounds: tradeIdBounds() };
        this.metrics?.add('historyPoolWaiting');
        const settled = (): void => {
          if (unsigned) this.publicInFlight--;
          ctx.onAborted = undefined;
          this.freeCells.push(cell);
          this.metrics?.add('historyPoolWaiting', -1);
        };
        (this.pool.run(task) as Promise<HistoryAnswer | null>).then(
          (answer) => {
            settled();
            if (answer === null) {
              // Not read: its client went away while it waited (nothing to send).
              this.metrics?.add('historyPoolAbandoned');
              return;
            }
            this.metrics?.add('historyPoolReads');
            sendJson(ctx, answer.status, answer.body, answer.contentType, answer.retryAfterS);
          },
          (error: unknown) => {
            settled();
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
