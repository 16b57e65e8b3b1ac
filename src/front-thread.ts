// A front thread: one uWebSockets.js App on the shared public port (Linux spreads connections
// across the threads listening on it), serving REST and WebSocket; thread 0 also serves the
// operator's admin endpoint on 127.0.0.1.
//
// This file is the thread's composition root: it wires the front machinery (src/front/) to the
// public routes (src/routes/) and the admin routes (src/admin/), so it sits above all three and
// src/front/ never has to reach up into the routes that use it.
//
// Start-up order: attach the rings, start draining the outbound ring, ask the engine for a
// snapshot (accounts and books) so the read models start exact, let thread 0 move account
// settings stored by an older version into the engine (the others wait for it:
// src/front/legacy-settings.ts), and only then listen, so that no request is served from an empty
// model or before the stored settings are in the engine.

import { parentPort, workerData } from 'node:worker_threads';
import uWS, { type us_listen_socket } from 'uWebSockets.js';
import { DEFAULT_HISTORY_THREADS, DEFAULT_RATE_LIMITS, DEFAULT_STALL_TIMEOUT_MS, DEFAULT_TWO_FACTOR_LOCKOUT_S, DEFAULT_TWO_FACTOR_MAX_FAILURES, type ServerConfig } from './config.js';
import { createLogger } from './log.js';
import { SignatureVerifier } from './auth.js';
import { EngineLink } from './front/engine-link.js';
import { osThreadId } from '../engine/bus/thread-id.js';
import { MarketData } from './front/market-data.js';
import { MarketHistory } from './front/market-history.js';
import { HistoryPool } from './front/history-pool.js';
import { historyReadRoutes } from './routes/history-reads.js';
import { mountRoutes, type Route } from './front/http.js';
import { Streams, mountWebSocket } from './front/streams/index.js';
import type { FrontContext } from './front/context.js';
import { querySnapshot } from './front/engine-calls/index.js';
import { publicRoutes } from './routes/index.js';
import { adminRoutes, type Operations } from './admin/routes.js';
import { createMetricsRegistry } from './admin/metrics.js';
import { readHealth } from './admin/health.js';
import { SharedMetrics } from '../engine/bus/metrics.js';
import { FrontMetrics } from './front/front-metrics.js';
import { AccountHistoryReader } from '../engine/store/history-account.js';
import { AccountSettingsStore } from './front/account-settings.js';
import { startSimulatedChain } from './front/simulated-chain.js';
import { startIndexDefault } from './front/index-default.js';
import { importLegacySettings, whenLegacySettingsImported } from './front/legacy-settings.js';
import { ReplayGuard } from './front/replay-guard.js';
import { RateLimits, type RateLimitTables } from './front/rate-limits.js';

export interface FrontWorkerData {
  config: ServerConfig;
  frontId: number;
  consumerIndex: number;
  port: number;
  serveAdmin: boolean;
  inboundSab: SharedArrayBuffer;
  outboundSab: SharedArrayBuffer;
  controlSab: SharedArrayBuffer;
  /** The shared operating counters (engine/bus/metrics.ts). */
  metricsSab: SharedArrayBuffer;
  /** The replay guard shared by every front thread. */
  replayGuardSab: SharedArrayBuffer;
  /** The request rate tables shared by every front thread. */
  rateLimitTables: RateLimitTables;
}

const MAX_PENDING_REQUESTS = 65_536;

/** The admin port's metrics registry and health report, read from every thread's shared counters. */
function operations(front: FrontContext, metrics: FrontMetrics, replayGuard: ReplayGuard): Operations {
  const stallTimeoutMs = front.config.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS;
  const registry = createMetricsRegistry({
    shared: metrics.shared, link: front.link, replayGuard, routeNames: metrics.routeNames, dataDir: front.config.dataDir, stallTimeoutMs,
  });
  return { registry, health: () => readHealth(metrics.shared, front.link, stallTimeoutMs, Date.now()) };
}

/**
 * The admin thread's own work: the simulated chain confirms withdrawals, and (unless turned off)
 * the default index prices come from the books. Returns their stop.
 */
function startOperatorTasks(front: FrontContext): () => void {
  const stopChain = startSimulatedChain(front);
  const stopIndexDefault = front.config.indexDefault !== false ? startIndexDefault(front) : () => {};
  return () => {
    stopChain();
    stopIndexDefault();
  };
}

/** Tells the main thread this front thread listens, and marks it serving for the health endpoint. */
function postReady(metrics: FrontMetrics, port: number, adminPort: number | null): void {
  metrics.serving();
  parentPort!.postMessage({ type: 'ready', port, adminPort, tid: osThreadId() });
}

/**
 * Asks the engine for its state (accounts, books) to seed the read models, again while the inbound
 * ring is full; `onSeeded` runs once the answer is complete. A refusal is fatal.
 */
function seedReadModels(link: EngineLink, marketData: MarketData, streams: Streams, onSeeded: () => void): void {
  let snapshotStarted = false;
  const requestSnapshot = (): void => {
    const begin = (): void => {
      if (snapshotStarted) return;
      snapshotStarted = true;
      marketData.reset();
    };
    const submitted = querySnapshot(link, (type, view, offset) => {
      begin();
      streams.onSnapshotRecord(type, view, offset);
    }, (failure) => {
      begin();
      if (failure !== null) {
        parentPort!.postMessage({ type: 'fatal', message: `snapshot failed with ${failure}` });
        return;
      }
      onSeeded();
    });
    if (submitted !== 'ok') setTimeout(requestSnapshot, 10);
  };
  requestSnapshot();
}

/**
 * The public routes, the history ones (routes/history-reads.ts: account history, lend pool samples,
 * public trades and klines) answered by the thread's history pool when it has one
 * (--history-threads), and that pool.
 */
function servedPublicRoutes(front: FrontContext): { routes: Route[]; historyPool: HistoryPool | null } {
  const routes = publicRoutes(front);
  const threads = front.config.historyThreads ?? DEFAULT_HISTORY_THREADS;
  if (threads === 0) return { routes, historyPool: null };
  const paths = historyReadRoutes(front).map((route) => route.path);
  const workerFile = new URL('./history-thread.js', import.meta.url).href;
  const historyPool = new HistoryPool(front.config, threads, paths, workerFile, (error) => front.log.error({ err: error }, 'history read failed'), front.metrics);
  const books = front.data.books;
  return { routes: historyPool.serve(routes, () => books.map((book) => book.lastTradeId)), historyPool };
}

/** Closes the thread's LMDB environment, once the history pool's threads, which read it too, have stopped. */
async function closeHistory(front: FrontContext, historyPool: HistoryPool | null): Promise<void> {
  await historyPool?.close();
  front.history.close();
}

function main(): void {
  const data = workerData as FrontWorkerData;
  const { config } = data;
  const log = createLogger(`front-${data.frontId}`);
  const metrics = new FrontMetrics(SharedMetrics.attach(data.metricsSab), data.frontId, log);
  const link = new EngineLink(
    data.frontId, data.inboundSab, data.outboundSab, data.consumerIndex, data.controlSab, MAX_PENDING_REQUESTS,
    (error) => log.error({ err: error }, 'outbound record handler failed'), metrics,
  );
  // One LMDB environment per thread for both history readers (market and account).
  const marketHistory = new MarketHistory(config.dataDir);
  const accountHistory = new AccountHistoryReader(marketHistory.root, config.markets.length);
  const front: FrontContext = {
    frontId: data.frontId,
    config,
    marketsBySymbol: new Map(config.markets.map((m) => [m.symbol, m])),
    assetsBySymbol: new Map(config.assets.map((a) => [a.symbol, a])),
    link,
    data: new MarketData(config),
    log,
    history: marketHistory,
    accountHistory,
    settings: new AccountSettingsStore(accountHistory.settings, {
      maxFailures: config.twoFactorMaxFailures ?? DEFAULT_TWO_FACTOR_MAX_FAILURES,
      lockoutMs: (config.twoFactorLockoutS ?? DEFAULT_TWO_FACTOR_LOCKOUT_S) * 1000,
    }),
    metrics,
  };
  const verifier = new SignatureVerifier();
  const rateLimits = new RateLimits(config.rateLimits ?? DEFAULT_RATE_LIMITS, data.rateLimitTables);
  const auth = {
    verifier,
    accountIdForKey: (key: string) => front.data.accountsByKey.get(key),
    replayGuard: ReplayGuard.attach(data.replayGuardSab),
    rateLimits,
  };
  const onError = (error: unknown) => log.error({ err: error }, 'request handler failed');

  const app = uWS.App();
  const streams = new Streams(app, front, front.data);
  const { routes, historyPool } = servedPublicRoutes(front);
  mountRoutes(app, routes, auth, onError, rateLimits, metrics);
  mountWebSocket(app, front, verifier, streams, auth.replayGuard, rateLimits);
  const adminApp = data.serveAdmin ? uWS.App() : null;
  if (adminApp) mountRoutes(adminApp, adminRoutes(front, operations(front, metrics, auth.replayGuard)), null, onError, null, metrics);

  const listenSockets: us_listen_socket[] = [];
  const listen = (): void => {
    app.listen(config.host, data.port, (socket) => {
      if (!socket) {
        parentPort!.postMessage({ type: 'fatal', message: `front ${data.frontId}: cannot listen on ${config.host}:${data.port}` });
        return;
      }
      listenSockets.push(socket);
      const port = uWS.us_socket_local_port(socket as unknown as uWS.us_socket);
      if (!adminApp) return postReady(metrics, port, null);
      adminApp.listen('127.0.0.1', config.adminPort, (adminSocket) => {
        if (!adminSocket) {
          parentPort!.postMessage({ type: 'fatal', message: `cannot listen on 127.0.0.1:${config.adminPort} (admin)` });
          return;
        }
        listenSockets.push(adminSocket);
        postReady(metrics, port, uWS.us_socket_local_port(adminSocket as unknown as uWS.us_socket));
      });
    });
  };

  link.start(streams);
  let stopOperatorTasks = (): void => {};
  seedReadModels(link, front.data, streams, () => {
    const serve = (): void => {
      listen();
      if (data.serveAdmin) stopOperatorTasks = startOperatorTasks(front);
    };
    if (data.frontId === 0) importLegacySettings(front, serve);
    else whenLegacySettingsImported(front, log, serve);
  });

  parentPort!.on('message', (message: { type: string }) => {
    if (message.type !== 'stop') return;
    for (const socket of listenSockets) uWS.us_listen_socket_close(socket);
    stopOperatorTasks();
    app.close();
    adminApp?.close();
    link.stop();
    streams.stop();
    metrics.stop();
    void closeHistory(front, historyPool);
    parentPort!.close();
  });
}

main();
