// The server process: reads the configuration, creates the shared memory, and starts the threads
// of ../shared/ARCHITECTURE.md in dependency order:
//
//   1. the engine worker, which replays the journal and reports the last sequence and checksum;
//   2. the journal worker, which continues the checksum chain from there (outbound consumer 0);
//   3. the front threads (outbound consumers 1..F), thread 0 first because it also serves the
//      admin endpoint and, when the port is 0, picks the port the others then share;
//   4. on a fresh data directory, two funded demo accounts, whose keys it prints.
//
// Any thread dying stops the whole process with a non-zero code (an operator's supervisor
// restarts it, and start-up recovers from the journal): the process never runs on with a part
// missing. SIGINT/SIGTERM stop it in order: fronts stop taking requests, the engine finishes its
// batch, the journal flushes everything the engine published, then the process exits 0. The end
// of the supervisor that started it (whenSupervisorGone) stops it the same way.

import { mkdirSync, openSync, readFileSync, rmSync, writeFileSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { MessageChannel, Worker } from 'node:worker_threads';
import {
  ConfigError, DEFAULT_SHUTDOWN_TIMEOUT_MS, DEFAULT_SNAPSHOT_EVERY, DEFAULT_SNAPSHOT_KEEP, DEFAULT_STALL_TIMEOUT_MS, loadConfig, type ServerConfig,
} from './config.js';
import { Watchdog } from './watchdog.js';
import { describePipeline, readPipeline } from '../engine/bus/pipeline-health.js';
import { createLogger } from './log.js';
import { createAccount, type CreatedAccount } from './admin/client.js';
import { InboundRing, OutboundRing } from '../engine/bus/ring.js';
import { SLOT_BYTES } from '../engine/bus/codec.js';
import { Control } from '../engine/bus/control.js';
import { SharedMetrics } from '../engine/bus/metrics.js';
import type { EngineWorkerData } from '../engine/shell/engine-worker.js';
import type { JournalWorkerData } from '../engine/shell/journal-worker.js';
import type { FrontWorkerData } from './front-thread.js';
import { ReplayGuard } from './front/replay-guard.js';
import { FUTURE_TOLERANCE_MS } from './auth.js';
import { createRateLimitTables } from './front/rate-limits.js';

const log = createLogger('main');

// Exit codes the supervisor (src/supervisor.ts) reads: 2 configuration refused, 3 start-up failed
// (a halted recovery, a port in use: restarting would fail the same way), 1 a failure after
// start-up (a failed journal flush, a crashed thread: restart through recovery).
let serving = false;
const failureExitCode = (): number => (serving ? 1 : 3);

interface Message {
  type: string;
  [key: string]: unknown;
}

/**
 * The engine's recovery, and the configuration change it accepted if any: a data directory whose
 * configuration gained margin parameters (engine/shell/journal.ts) continues under the new one.
 */
function logReplay(replay: Message): void {
  log.info({
    lastSeq: replay.lastSeq, stateHash: replay.stateHash, replayMs: replay.replayMs, snapshotSeq: replay.snapshotSeq,
    replayed: replay.replayed, skippedSnapshots: replay.skippedSnapshots,
  }, 'journal replayed');
  const seq = replay.configGainedMarginAt;
  if (typeof seq === 'number') {
    log.warn({ seq, configFingerprint: replay.configFingerprint }, `configuration gained margin parameters at seq ${seq}: records up to ${seq} replay under the configuration without them, later ones under this one`);
  }
}

/** Waits for a worker's first message of `type`; a 'fatal' message, an error or an exit rejects. */
function waitFor(worker: Worker, type: string, what: string): Promise<Message> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: Message) => {
      if (message.type === type) {
        cleanup();
        resolve(message);
      } else if (message.type === 'fatal') {
        cleanup();
        reject(new Error(`${what}: ${String(message.message)}`));
      }
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const onExit = (code: number) => {
      cleanup();
      reject(new Error(`${what} exited with code ${code} before '${type}'`));
    };
    const cleanup = () => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
  });
}

function probeFreePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

/** Fails when something already listens on host:port (a second exchange would otherwise share it: uWS sets SO_REUSEPORT). */
function assertPortFree(host: string, port: number, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => {
      reject(new Error(error.code === 'EADDRINUSE' ? `${what} port ${host}:${port} is in use` : `${what} port ${host}:${port}: ${error.message}`));
    });
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

/**
 * One exchange per data directory: two writing the same journal would corrupt it. The lock file
 * holds the owner's pid; a lock whose process is gone (a crash, a SIGKILL) is taken over.
 */
function lockDataDir(dataDir: string): string {
  const path = join(dataDir, 'LOCK');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return path;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number(readFileSync(path, 'utf8').trim());
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && processAlive(owner)) {
        throw new Error(`data directory ${dataDir} is in use by process ${owner} (${path})`);
      }
      rmSync(path, { force: true }); // stale: its process is gone
    }
  }
  throw new Error(`cannot lock data directory ${dataDir}`);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Replay protection across restarts (src/front/replay-guard.ts, "Restarts"): when the journal
 * holds something, an earlier process may have accepted signed requests, so everything stamped
 * up to `lockedAtMs` + FUTURE_TOLERANCE_MS is refused; this resolves once the clock has passed
 * that floor, so that the fronts, started after it, never refuse a request signed by a right clock.
 */
async function refuseWhatAnEarlierProcessSaw(replayGuard: ReplayGuard, lockedAtMs: number, lastSeq: number): Promise<void> {
  if (lastSeq === 0) return; // no account was ever known here, so nothing signed was accepted
  const floorMs = lockedAtMs + FUTURE_TOLERANCE_MS;
  replayGuard.setRestartFloor(floorMs);
  if (Date.now() <= floorMs) log.info({ floorMs }, 'waiting for the replay floor before listening');
  while (Date.now() <= floorMs) await new Promise((resolve) => setTimeout(resolve, floorMs + 1 - Date.now()));
}

/**
 * Calls `stop` once the supervisor (src/supervisor.ts) is gone. It starts this process with an IPC
 * channel, which the kernel closes when the supervisor ends however it ends, SIGKILL included; an
 * exchange left running unsupervised would hold the data directory and ports that a new
 * supervisor's exchange needs, and nobody would restart it after a failure. Started directly (no
 * channel) there is nothing to watch. A channel that closed during start-up stops it at once.
 */
function whenSupervisorGone(stop: () => void): void {
  if (process.send === undefined) return;
  if (!process.connected) {
    stop();
    return;
  }
  process.once('disconnect', stop);
}

/** Front threads, once started: a failure exit closes their uWebSockets.js apps first. */
const frontWorkers: Worker[] = [];
let failing = false;
const FRONT_CLOSE_WAIT_MS = 2000;

/**
 * Ends the process with `code` after a failure. Node aborts (SIGABRT, not `code`) when it tears
 * down a worker whose uWebSockets.js app still holds sockets, so the front threads are asked to
 * close first, for a bounded time: the supervisor then sees the code that says why.
 */
function exitAfterFailure(code: number): void {
  if (failing) return;
  failing = true;
  for (const front of frontWorkers) front.postMessage({ type: 'stop' });
  const closed = frontWorkers.map((front) => new Promise((resolve) => {
    if (front.threadId < 0) resolve(null);
    else front.once('exit', resolve);
  }));
  const deadline = new Promise((resolve) => setTimeout(resolve, FRONT_CLOSE_WAIT_MS));
  void Promise.race([Promise.all(closed), deadline]).then(() => process.exit(code));
}

const DEMO_DEPOSITS = [
  { asset: 'USDC', quantity: '1000000' },
  { asset: 'SOL', quantity: '10000' },
  { asset: 'BTC', quantity: '100' },
  { asset: 'ETH', quantity: '1000' },
];

async function seedDemoAccounts(config: ServerConfig, adminPort: number): Promise<CreatedAccount[]> {
  const symbols = new Set(config.assets.map((a) => a.symbol));
  const deposits = DEMO_DEPOSITS.filter((d) => symbols.has(d.asset));
  return [
    await createAccount(adminPort, { deposits }),
    await createAccount(adminPort, { deposits }),
  ];
}

async function main(): Promise<void> {
  let config: ServerConfig;
  try {
    config = loadConfig(process.argv.slice(2), process.env);
  } catch (error) {
    // Anything loading the configuration throws (a bad flag, an unreadable or malformed markets
    // file) is a configuration error: exit code 2, which the supervisor does not retry.
    const message = error instanceof ConfigError || error instanceof SyntaxError ? error.message : `${(error as Error).name}: ${(error as Error).message}`;
    process.stderr.write(`configuration error: ${message}\n`);
    process.exit(2);
  }
  mkdirSync(config.dataDir, { recursive: true });
  // Before any thread starts: a port in use or a data directory in use is an operator's problem
  // (exit code 3, not retried by the supervisor).
  const lockPath = lockDataDir(config.dataDir);
  // The earlier process on this data directory, if any, is gone by now: it accepted nothing later.
  const lockedAtMs = Date.now();
  if (config.port !== 0) await assertPortFree(config.host, config.port, 'public');
  if (config.adminPort !== 0) await assertPortFree('127.0.0.1', config.adminPort, 'admin');

  const inbound = InboundRing.create({ slotCount: config.inboundSlotCount, slotBytes: SLOT_BYTES });
  const outbound = OutboundRing.create({
    slotCount: config.outboundSlotCount, slotBytes: SLOT_BYTES,
    consumerCount: 1 + config.frontThreads,
  });
  const control = Control.create();
  const metrics = SharedMetrics.create(config.frontThreads, config.metrics ?? true, Date.now());
  const replayGuard = ReplayGuard.create(); // one table for every front thread
  const rateLimitTables = createRateLimitTables();
  const workers: Worker[] = [];
  let stopping = false;

  const start = (file: string, workerData: unknown, name: string, transferList: unknown[] = []): Worker => {
    const worker = new Worker(new URL(file, import.meta.url), { workerData, name, transferList: transferList as never });
    workers.push(worker);
    worker.on('error', (error) => {
      // The error's class does not survive the thread boundary; its name does (JournalGapError …).
      log.fatal({ err: error, errorName: error.name, thread: name }, `thread failed (${error.name}); stopping`);
      exitAfterFailure(failureExitCode());
    });
    worker.on('exit', (code) => {
      if (!stopping && !failing) {
        log.fatal({ thread: name, code }, 'thread exited unexpectedly; stopping');
        exitAfterFailure(failureExitCode());
      }
    });
    return worker;
  };

  // Snapshot files travel from the engine straight to the journal worker.
  const snapshots = new MessageChannel();
  const engineData: EngineWorkerData = {
    engine: config.engine,
    dataDir: config.dataDir,
    inboundSab: inbound.sab,
    outboundSab: outbound.sab,
    controlSab: control.sab, metricsSab: metrics.sab,
    snapshotPort: snapshots.port1,
    snapshotEvery: config.snapshotEvery ?? DEFAULT_SNAPSHOT_EVERY,
  };
  const engine = start('../engine/shell/engine-worker.js', engineData, 'engine', [snapshots.port1]);
  const replay = await waitFor(engine, 'ready', 'engine');
  logReplay(replay);

  const journalData: JournalWorkerData = {
    dataDir: config.dataDir,
    outboundSab: outbound.sab,
    controlSab: control.sab, metricsSab: metrics.sab,
    consumerIndex: 0,
    lastSeq: replay.lastSeq as number,
    lastChecksum: replay.lastChecksum as number,
    snapshotPort: snapshots.port2,
    snapshotKeep: config.snapshotKeep ?? DEFAULT_SNAPSHOT_KEEP,
    compact: config.compactJournal ?? true,
    configFingerprint: replay.configFingerprint as string,
    loadedSnapshotSeq: replay.snapshotSeq as number,
  };
  const journal = start('../engine/shell/journal-worker.js', journalData, 'journal', [snapshots.port2]);
  journal.on('message', (message: Message) => {
    if (message.type === 'snapshotWritten') log.info({ ...message, type: undefined }, 'snapshot written');
  });
  const journalReady = await waitFor(journal, 'ready', 'journal');
  if (journalReady.removedSnapshotTemps) log.warn({ files: journalReady.removedSnapshotTemps }, 'removed temp files of interrupted snapshot writes');
  await refuseWhatAnEarlierProcessSaw(replayGuard, lockedAtMs, replay.lastSeq as number);

  // Port 0 means "any free port". uSockets sets SO_REUSEPORT only for a non-zero port, so the
  // front threads cannot share a kernel-chosen port: pick a free one here first (the port could be
  // taken between this probe and the listen; then start-up fails with exit code 3, as for any port
  // in use).
  // The front threads start together: each is a gating consumer of the outbound ring from the
  // first record on, so a thread still starting would hold up the start-up query of another whose
  // answer needs more slots than a small ring has.
  let port = config.port === 0 && config.frontThreads > 1 ? await probeFreePort(config.host) : config.port;
  const fronts: Worker[] = [];
  for (let frontId = 0; frontId < config.frontThreads; frontId++) {
    const frontData: FrontWorkerData = {
      config,
      frontId,
      consumerIndex: 1 + frontId,
      port,
      serveAdmin: frontId === 0,
      inboundSab: inbound.sab,
      outboundSab: outbound.sab,
      controlSab: control.sab, metricsSab: metrics.sab,
      replayGuardSab: replayGuard.sab,
      rateLimitTables,
    };
    fronts.push(start('./front-thread.js', frontData, `front-${frontId}`));
    frontWorkers.push(fronts[frontId]);
  }
  const readies = await Promise.all(fronts.map((front, frontId) => waitFor(front, 'ready', `front ${frontId}`)));
  const frontTids = readies.map((ready) => ready.tid ?? null);
  port = readies[0].port as number;
  const adminPort = readies[0].adminPort as number;

  if (replay.lastSeq === 0 && config.demoAccounts) {
    for (const account of await seedDemoAccounts(config, adminPort)) {
      log.info({ demoAccount: account }, `demo account ${account.accountId}: X-API-Key ${account.publicKey} secret ${account.secretKey}`);
    }
  }

  const pipelineNow = (): Record<string, unknown> => describePipeline(readPipeline(control, inbound, outbound));
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping');
    // A stop waits for each thread in turn; one that cannot finish (a disk that stopped answering)
    // must not keep the process alive: past the deadline it ends with code 1, and the journal
    // recovers at the next start as after any crash.
    const shutdownTimeoutMs = config.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
    setTimeout(() => {
      log.fatal({ shutdownTimeoutMs, pipeline: pipelineNow() }, 'stop did not finish in time; exiting');
      exitAfterFailure(1);
    }, shutdownTimeoutMs);
    for (const front of fronts) front.postMessage({ type: 'stop' });
    await Promise.all(fronts.map((front) => new Promise((resolve) => front.once('exit', resolve))));
    control.requestShutdown();
    const engineStopped = await waitFor(engine, 'stopped', 'engine');
    journal.postMessage({ type: 'stop', seq: engineStopped.lastSeq, stateHash: engineStopped.stateHash });
    const stopped = await waitFor(journal, 'stopped', 'journal');
    log.info({ seqDurable: stopped.seqDurable }, 'stopped');
    rmSync(lockPath, { force: true });
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  whenSupervisorGone(() => void shutdown('supervisor gone'));

  const watchdog = new Watchdog({
    control, inbound, outbound, log, metrics,
    stallTimeoutMs: config.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS,
    onStall: () => exitAfterFailure(1),
  });
  watchdog.start();

  serving = true;
  // OS thread ids (Linux), so that top -H or /proc/<pid>/task/<tid> can tell the threads apart.
  const threads = { main: process.pid, engine: replay.tid ?? null, journal: journalReady.tid ?? null, fronts: frontTids };
  log.info({ host: config.host, port, adminPort, frontThreads: config.frontThreads, dataDir: config.dataDir, threads }, 'ready');
}

main().catch((error: unknown) => {
  log.fatal({ err: error }, 'start-up failed');
  exitAfterFailure(failureExitCode());
});
