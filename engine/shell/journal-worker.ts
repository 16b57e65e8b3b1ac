// The journal worker: consumer 0 of the outbound ring. Every outbound record passes through its
// record loop; the JournalWriter (journal-writer.ts) turns each command's Stamped record and
// outputs into a journal record (stamped command, output digest, chained checksum). After each
// batch has been committed *and* flushed to disk it publishes seqDurable and rings the outbound
// doorbell. Front threads release a response or a stream event only once seqDurable has reached
// its sequence.
//
// Group commit: all records drained in one pass go into one synchronous LMDB transaction,
// committed on this thread (no hop to lmdb-js's write thread and back: bench/e2e measured a durable
// batch at p50 ~270 µs this way against ~370-730 µs with async puts), and the pass then waits for
// the flush (committed is not flushed when overlappingSync defers the fsync). The batch therefore grows with
// load on its own: while one flush is in flight, the next batch accumulates in the ring.
//
// Snapshots: the engine posts each snapshot file on `snapshotPort`; once the snapshot's sequence is
// durable this worker writes the file (engine/store/journal-store.ts: temp file, fsync, rename) off
// the commit path, keeps the newest `snapshotKeep` usable snapshots, and compacts: journal records
// older than the oldest kept snapshot are removed (the record at a snapshot's own sequence stays:
// its checksum continues the chain). History databases in the same environment are not touched.
//
// A failed write or flush stops the process (the error propagates to the main thread, which
// exits): it must never keep acknowledging ahead of the disk. On a clean stop it records the
// engine's final state hash, which the next start-up checks after replay.

import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { OutboundRing } from '../bus/ring.js';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Control, JournalState } from '../bus/control.js';
import { SharedMetrics } from '../bus/metrics.js';
import { osThreadId } from '../bus/thread-id.js';
import { SnapshotRetention } from './snapshot-retention.js';
import { CLEAN_STOP_KEY } from '../store/journal-layout.js';
import { LmdbJournalStore, snapshotFileName } from '../store/journal-store.js';
import { JournalWriter } from './journal-writer.js';
import { MarketHistorySink } from '../store/history-market.js'; // trade and kline history
import { AccountHistorySink } from '../store/history-account.js'; // account history

export interface JournalWorkerData {
  dataDir: string;
  outboundSab: SharedArrayBuffer;
  controlSab: SharedArrayBuffer;
  /** The shared operating counters (engine/bus/metrics.ts); absent: nothing is counted. */
  metricsSab?: SharedArrayBuffer;
  consumerIndex: number;
  lastSeq: number;
  lastChecksum: number;
  /** The engine's snapshot files arrive here. */
  snapshotPort: MessagePort;
  /** Snapshot files kept (≥ 1); compaction keeps the journal records after the oldest of them. */
  snapshotKeep: number;
  /** Remove journal records older than the oldest kept snapshot. */
  compact: boolean;
  /** The engine configuration's fingerprint, which a usable snapshot carries. */
  configFingerprint: string;
  /** The snapshot recovery loaded (0: none): known usable. */
  loadedSnapshotSeq: number;
}

const BATCH_MAX = 8192;
const IDLE_WAIT_MS = 50;
/** Wait between polls for the rest of a command the engine is still publishing. */
const COMMAND_TAIL_WAIT_MS = 1;

interface SnapshotMessage {
  type: 'snapshot';
  seq: number;
  stateHash: string;
  file: Uint8Array;
}

/**
 * The shared counters, if any, starting from the snapshot recovery loaded (its file's size and
 * time), so that the snapshot age means something before this process writes one.
 */
function attachMetrics(data: JournalWorkerData): SharedMetrics | null {
  if (!data.metricsSab) return null;
  const metrics = SharedMetrics.attach(data.metricsSab);
  if (data.loadedSnapshotSeq > 0) {
    try {
      const file = statSync(join(data.dataDir, 'snapshots', snapshotFileName(data.loadedSnapshotSeq)));
      metrics.snapshotWritten(data.loadedSnapshotSeq, file.size, file.mtimeMs);
    } catch {
      // Removed since recovery read it (an operator's hand): the age starts at the next snapshot.
    }
  }
  return metrics;
}

/** Makes the open batch durable and publishes seqDurable; counts the batch's size and flush time. */
async function commitBatch(writer: JournalWriter, control: Control, metrics: SharedMetrics | null): Promise<void> {
  control.setJournalState(JournalState.Flushing);
  const durableBefore = writer.durableSeq;
  const flushStarted = performance.now();
  control.setSeqDurable(await writer.commit());
  metrics?.observeJournalBatch(writer.durableSeq - durableBefore, (performance.now() - flushStarted) * 1000);
  control.bumpJournalProgress();
}

async function main(): Promise<void> {
  const data = workerData as JournalWorkerData;
  const control = Control.attach(data.controlSab);
  const outbound = OutboundRing.attach(data.outboundSab);
  const consumer = outbound.consumer(data.consumerIndex);
  const store = new LmdbJournalStore(data.dataDir);
  const writer = new JournalWriter(store, data.lastSeq, data.lastChecksum);
  const view = outbound.view;
  const marketHistory = new MarketHistorySink(store.root); // trade and kline history
  const accountHistory = new AccountHistorySink(store.root); // account history, same transaction
  const metrics = attachMetrics(data);

  const onRecord = (offset: number): boolean => { // the record loop: every outbound record, in order
    // History sinks go here, one call each, before the journal's own handling.
    marketHistory.onRecord(view, offset); // trades and candles, same transaction
    accountHistory.onRecord(view, offset); // orders, fills, capital, same transaction
    writer.onRecord(view, offset);
    return true;
  };

  // One batch, inside its synchronous transaction. A transaction ends only at a command boundary:
  // when the poll stops inside a command (the batch limit, or a ring that filled while the engine
  // was writing its outputs), the rest of that command is drained first — the engine publishes it
  // within microseconds, having no other work in between. So a command's journal record and its
  // history always commit together: a crash never leaves history ahead of or behind the journal.
  const drain = (): number => {
    control.setJournalState(JournalState.Draining);
    let count = consumer.poll(onRecord, BATCH_MAX);
    while (writer.commandOpen()) {
      const seen = outbound.signalValue();
      const more = consumer.poll(onRecord, BATCH_MAX);
      count += more;
      if (more > 0) {
        control.bumpJournalProgress();
      } else if (writer.commandOpen()) {
        control.setJournalState(JournalState.WaitingCommandTail);
        outbound.waitSignal(seen, COMMAND_TAIL_WAIT_MS);
        control.setJournalState(JournalState.Draining);
      }
    }
    marketHistory.endBatch(); // the batch's candles
    store.endBatch(); // the batch's journal records, one stored run, in this transaction
    return count;
  };

  // Snapshots wait here until durable, then are written one at a time, off the commit path.
  const waiting: SnapshotMessage[] = [];
  let snapshotWork: Promise<void> = Promise.resolve();
  let fatal: unknown = null;
  // This worker is the only snapshot writer: at its start no write runs, so a temp file is what a
  // crash during a write left behind.
  const removedTemps = store.removeSnapshotTemps();
  const retention = new SnapshotRetention(store, data);
  const writeSnapshot = async (message: SnapshotMessage): Promise<void> => {
    const report = await retention.write(message.seq, message.file);
    metrics?.snapshotWritten(message.seq, message.file.length, Date.now());
    parentPort!.postMessage({ type: 'snapshotWritten', seq: message.seq, stateHash: message.stateHash, bytes: message.file.length, ...report });
  };
  const startDurableSnapshots = (): void => {
    while (waiting.length > 0 && waiting[0].seq <= writer.durableSeq) {
      const message = waiting.shift()!;
      snapshotWork = snapshotWork.then(() => writeSnapshot(message)).catch((error: unknown) => {
        fatal = error;
        outbound.signal();
      });
    }
  };
  data.snapshotPort.on('message', (message: SnapshotMessage) => {
    waiting.push(message);
    startDurableSnapshots();
  });

  // The main thread asks us to stop only after the engine has stopped, so everything it
  // published is drained and flushed before we exit.
  let stopRequested = false;
  let finalState: { seq: number; stateHash: string } | null = null;
  parentPort!.on('message', (message: { type: string; seq?: number; stateHash?: string }) => {
    if (message.type === 'stop') {
      stopRequested = true;
      if (message.seq !== undefined && message.stateHash !== undefined) finalState = { seq: message.seq, stateHash: message.stateHash };
      outbound.signal();
    }
  });
  parentPort!.postMessage({ type: 'ready', tid: osThreadId(), removedSnapshotTemps: removedTemps });

  for (;;) {
    if (fatal !== null) throw fatal;
    // Under sustained load this loop never returns to the event loop: a synchronous commit's
    // promises settle as microtasks. lmdb-js ends this thread's read transaction (taken by the
    // sinks' start-up reads, snapshot checks and compaction) only from a timer, which would then
    // never run, and the pinned snapshot would stop LMDB from reusing any page freed after it. So
    // each pass ends it by hand (a no-op when no read happened since the last pass).
    store.releaseReadSnapshot();
    const seen = outbound.signalValue();
    const count = outbound.cursor === consumer.sequence ? 0 : store.root.transactionSync(drain);
    if (writer.hasBatch()) {
      await commitBatch(writer, control, metrics);
      outbound.signal();
      startDurableSnapshots();
      // Under sustained load a pass is always waiting, and awaiting only the flush never leaves
      // the microtask queue: yield one macrotask turn (after seqDurable is published, so no
      // acknowledgement waits for it) so that snapshot files and the stop request are handled.
      await new Promise<void>((resolve) => setImmediate(resolve));
      continue;
    }
    if (count === 0) {
      if (stopRequested) break;
      control.setJournalState(JournalState.Idle);
      await outbound.waitSignalAsync(seen, IDLE_WAIT_MS);
    }
  }
  await snapshotWork;
  if (fatal !== null) throw fatal;
  control.setJournalState(JournalState.Stopped);
  // The clean-stop mark: the engine's final state hash at the last durable sequence (only when
  // the journal holds exactly what the engine applied, which a clean stop guarantees).
  const final = finalState as { seq: number; stateHash: string } | null;
  if (final !== null && final.seq === writer.durableSeq) {
    store.putMeta(CLEAN_STOP_KEY, JSON.stringify(final));
    await store.commit();
  }
  data.snapshotPort.close();
  await store.close();
  parentPort!.postMessage({ type: 'stopped', seqDurable: control.seqDurable() });
  parentPort!.close();
}

main().catch((error: unknown) => {
  // Rethrown outside the promise so the worker dies with an 'error' event the main thread sees.
  setImmediate(() => {
    throw error;
  });
});
