// The engine worker: the one thread that owns all exchange state.
//
//   inbound ring ──► [stamp seq + engine time] ──► Exchange.apply ──► outbound ring
//                    (state-changing commands only;   (pure core,        (Stamped record first,
//                     queries take no seq)             engine/core)        then its outputs)
//
// Start-up: recover (journal.ts: newest valid snapshot + the journal after it, every record's
// output digest checked), then report the last sequence, checksum and state hash to the main
// thread and start serving the ring.
//
// Snapshots: after applying a Snapshot command (from the operator, or injected here every
// `snapshotEvery` commands) the engine exports its state (engine/core/snapshot.ts, proportional
// to the live state: accounts, balances, open orders) and posts the file to the journal worker,
// which writes it once the command is durable. The engine pauses only for the export itself.
//
// This shell is the only place in engine/ with a clock: it stamps each command with engine time
// (microseconds, never going backwards, not even across restarts) and injects a journaled Tick
// command when a speed-bumped order falls due while the stream is quiet. The core never reads a
// clock, so replaying the journal rebuilds the same state and the same ids.
//
// Idle strategy: spin on the ring for a short while after the last command (a co-located client's
// next order usually arrives within microseconds), then park on Atomics.wait, bounded by the next
// timer and by a short period so the shutdown flag is seen.

import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { readCommand } from '../bus/codec.js';
import { InboundRing, OutboundRing } from '../bus/ring.js';
import { Control, EngineState } from '../bus/control.js';
import { SharedMetrics } from '../bus/metrics.js';
import { osThreadId } from '../bus/thread-id.js';
import { engineConfigFingerprint, recover, snapshotFile, type RecoveryResult } from './journal.js';
import { LmdbJournalStore } from '../store/journal-store.js';
import { Sequencer } from './sequencer.js';
import { CommandKind, FRONT_ID_NONE, newCommand, type Command, type EngineConfig } from '../bus/types.js';

export interface EngineWorkerData {
  engine: EngineConfig;
  dataDir: string;
  inboundSab: SharedArrayBuffer;
  outboundSab: SharedArrayBuffer;
  controlSab: SharedArrayBuffer;
  /** The shared operating counters (engine/bus/metrics.ts); absent: nothing is counted. */
  metricsSab?: SharedArrayBuffer;
  /** Where snapshot files go (the journal worker's end writes them). */
  snapshotPort: MessagePort;
  /** Inject a Snapshot command after this many commands since the last one (0: never). */
  snapshotEvery: number;
}

const SPIN_US = 50;
const PARK_MAX_MS = 20;
const BATCH_MAX = 512;

function wallClockUs(): number {
  return Math.floor((performance.timeOrigin + performance.now()) * 1000);
}

/**
 * Claims the next outbound slot, waiting while the slowest consumer holds the ring full; the
 * waits are visible to the watchdog (state word, progress when a slot frees).
 */
function outboundClaimer(outbound: OutboundRing, control: Control): () => number {
  return () => {
    for (;;) {
      const seq = outbound.tryClaim();
      if (seq >= 0) return seq;
      outbound.flush();
      control.setEngineState(EngineState.WaitingOutboundSpace);
      const result = outbound.waitForConsumers(1);
      control.setEngineState(EngineState.Applying);
      if (result !== 'timed-out') control.bumpEngineProgress();
      if (control.shuttingDown()) throw new Error('shutdown while the outbound ring was full');
    }
  };
}

/**
 * The state the engine starts from: newest valid snapshot + the journal after it. Outputs of
 * replayed commands were already delivered before the restart (or never acknowledged), so they
 * only feed the digest check. The store stays open: this thread never returns to its event loop,
 * where lmdb-js would finish an asynchronous close. For the same reason lmdb-js's timer that ends
 * the thread's read transaction never fires, so the snapshot recovery read through is released
 * here by hand: left open, it would pin every page freed after it and the journal file would grow
 * by every write transaction's copied pages for the life of the process. Then the liquidation
 * trigger bands, derived and undrawn after a load, are drawn, so the first price move does not
 * re-check every account at risk in one command while orders wait.
 */
function rebuild(store: LmdbJournalStore, engine: EngineWorkerData['engine'], fingerprint: string): { recovery: RecoveryResult; replayMs: number } {
  const replayStarted = performance.now();
  const recovery = recover(store, engine, fingerprint);
  store.releaseReadSnapshot();
  recovery.exchange.drawTriggerBands();
  return { recovery, replayMs: performance.now() - replayStarted };
}

function main(): void {
  const data = workerData as EngineWorkerData;
  const control = Control.attach(data.controlSab);
  const inbound = InboundRing.attach(data.inboundSab);
  const outbound = OutboundRing.attach(data.outboundSab);
  const fingerprint = engineConfigFingerprint(data.engine);

  // 1. Rebuild state (rebuild).
  const store = new LmdbJournalStore(data.dataDir);
  const { recovery, replayMs } = rebuild(store, data.engine, fingerprint);
  const exchange = recovery.exchange;

  let lastSeq = recovery.lastSeq;
  let lastTimeUs = recovery.lastTimeUs;
  let lastSnapshotSeq = recovery.snapshotSeq;
  control.setSeqLast(lastSeq);
  control.setSeqDurable(lastSeq);

  const nowUs = (): number => {
    const t = wallClockUs();
    if (t > lastTimeUs) lastTimeUs = t;
    return lastTimeUs;
  };

  // 2. Outputs go into the next outbound slot, waiting while the slowest consumer holds the ring
  //    full (backpressure, never loss).
  const claim = outboundClaimer(outbound, control);
  const sequencer = new Sequencer(exchange, outbound, claim, data.metricsSab ? SharedMetrics.attach(data.metricsSab) : null);
  const cmd = newCommand();
  const inBytes = inbound.bytes;

  const afterCommand = (c: Command, seq: number, timeUs: number): void => {
    if (c.kind !== CommandKind.Snapshot) return;
    const { file, stateHash } = snapshotFile(exchange, seq, timeUs, fingerprint);
    lastSnapshotSeq = seq;
    data.snapshotPort.postMessage({ type: 'snapshot', seq, stateHash, file }, [file.buffer as ArrayBuffer]);
  };

  const handleSlot = (offset: number): void => {
    readCommand(inbound.view, offset, cmd);
    const timeUs = nowUs();
    if (cmd.kind >= CommandKind.QueryBalances) {
      sequencer.query(cmd, lastSeq, timeUs);
      return;
    }
    lastSeq += 1;
    sequencer.command(lastSeq, timeUs, cmd, inBytes, offset);
    afterCommand(cmd, lastSeq, timeUs);
  };

  const injected = newCommand();
  injected.frontId = FRONT_ID_NONE;
  const inject = (kind: CommandKind): void => {
    injected.kind = kind;
    const timeUs = nowUs();
    lastSeq += 1;
    sequencer.command(lastSeq, timeUs, injected, null, 0);
    afterCommand(injected, lastSeq, timeUs);
  };
  /** Injects a Tick when a delayed order is due, so it activates even if no command arrives. */
  const tickIfDue = (): void => {
    const wakeUs = exchange.nextWakeUs();
    if (wakeUs >= 0 && nowUs() >= wakeUs) inject(CommandKind.Tick);
  };
  /** The periodic snapshot policy: one Snapshot command every `snapshotEvery` commands. */
  const snapshotIfDue = (): void => {
    if (data.snapshotEvery > 0 && lastSeq - lastSnapshotSeq >= data.snapshotEvery) inject(CommandKind.Snapshot);
  };

  parentPort!.postMessage({
    type: 'ready',
    lastSeq: recovery.lastSeq,
    lastChecksum: recovery.lastChecksum,
    lastTimeUs: recovery.lastTimeUs,
    snapshotSeq: recovery.snapshotSeq,
    configFingerprint: fingerprint,
    replayed: recovery.replayed,
    skippedSnapshots: recovery.skippedSnapshots, configGainedMarginAt: recovery.configGainedMarginAt,
    stateHash: exchange.stateHash(),
    replayMs,
    tid: osThreadId(),
  });

  // 3. Serve the ring until shutdown.
  let idleSinceUs = wallClockUs();
  control.setEngineState(EngineState.Applying);
  while (!control.shuttingDown()) {
    const count = inbound.poll(handleSlot, BATCH_MAX);
    tickIfDue();
    snapshotIfDue();
    outbound.flush();
    control.setSeqLast(lastSeq);
    if (count > 0) {
      control.bumpEngineProgress();
      idleSinceUs = wallClockUs();
      continue;
    }
    if (wallClockUs() - idleSinceUs < SPIN_US) continue;
    const wakeUs = exchange.nextWakeUs();
    let parkMs = PARK_MAX_MS;
    if (wakeUs >= 0) parkMs = Math.max(0, Math.min(parkMs, (wakeUs - wallClockUs()) / 1000));
    if (parkMs > 0) {
      control.setEngineState(EngineState.Idle);
      inbound.waitForPublish(parkMs);
      control.setEngineState(EngineState.Applying);
    }
  }
  outbound.flush();
  control.setEngineState(EngineState.Stopped);
  parentPort!.postMessage({ type: 'stopped', lastSeq, stateHash: exchange.stateHash() });
}

main();
