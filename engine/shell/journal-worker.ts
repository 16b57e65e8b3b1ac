// The journal worker: consumer 0 of the outbound ring. It appends every Stamped record to LMDB
// with a checksum chained to the previous one, and after each batch has been committed *and*
// flushed to disk it publishes seqDurable and rings the outbound doorbell. Front threads release a
// response or a stream event only once seqDurable has reached its sequence.
//
// Group commit: all records drained in one pass go into one LMDB transaction (lmdb-js batches the
// puts issued in one event turn), and the pass waits for `db.flushed` (committed is not flushed:
// with overlappingSync the commit resolves before the fsync). The batch therefore grows with
// load on its own: while one flush is in flight, the next batch accumulates in the ring.
//
// A failed write or flush stops the process (the error propagates to the main thread, which
// exits): it must never keep acknowledging ahead of the disk.

import { parentPort, workerData } from 'node:worker_threads';
import { JOURNAL_CHECKSUM_OFFSET, JOURNAL_RECORD_BYTES, crc32, recordSeq, recordType } from '../codec.js';
import { OutboundRing } from '../ring.js';
import { Control } from './control.js';
import { CHECKSUMMED_BYTES, openJournal, seqKey } from './journal.js';
import { RecordType } from '../types.js';
import { AccountHistorySink } from './history-account.js';

export interface JournalWorkerData {
  dataDir: string;
  outboundSab: SharedArrayBuffer;
  controlSab: SharedArrayBuffer;
  consumerIndex: number;
  lastSeq: number;
  lastChecksum: number;
}

const BATCH_MAX = 8192;
const IDLE_WAIT_MS = 50;

async function main(): Promise<void> {
  const data = workerData as JournalWorkerData;
  const control = Control.attach(data.controlSab);
  const outbound = OutboundRing.attach(data.outboundSab);
  const consumer = outbound.consumer(data.consumerIndex);
  const journal = openJournal(data.dataDir);
  const ringBytes = outbound.bytes;
  const accountHistory = new AccountHistorySink(journal.root); // issue 4: account history, same transaction

  let prevChecksum = data.lastChecksum;
  let expectedSeq = data.lastSeq + 1;
  let batchLastSeq = 0;
  let lastWrite: Promise<boolean> | null = null;

  const onRecord = (offset: number): boolean => {
    accountHistory.onRecord(outbound.view, offset);
    if (recordType(outbound.view, offset) !== RecordType.Stamped) return true;
    const seq = recordSeq(outbound.view, offset);
    if (seq !== expectedSeq) throw new Error(`journal worker expected sequence ${expectedSeq}, got ${seq}`);
    const value = Buffer.alloc(JOURNAL_RECORD_BYTES);
    value.set(ringBytes.subarray(offset, offset + CHECKSUMMED_BYTES), 0);
    prevChecksum = crc32(value, 0, CHECKSUMMED_BYTES, prevChecksum);
    value.writeUInt32LE(prevChecksum, JOURNAL_CHECKSUM_OFFSET);
    lastWrite = journal.records.put(seqKey(seq), value);
    batchLastSeq = seq;
    expectedSeq = seq + 1;
    return true;
  };

  // The main thread asks us to stop only after the engine has stopped, so everything it
  // published is drained and flushed before we exit.
  let stopRequested = false;
  parentPort!.on('message', (message: { type: string }) => {
    if (message.type === 'stop') {
      stopRequested = true;
      outbound.signal();
    }
  });
  parentPort!.postMessage({ type: 'ready' });

  for (;;) {
    const seen = outbound.signalValue();
    const count = consumer.poll(onRecord, BATCH_MAX);
    if (lastWrite !== null) {
      const written: Promise<boolean> = lastWrite;
      lastWrite = null;
      await written;
      await journal.records.flushed;
      control.setSeqDurable(batchLastSeq);
      outbound.signal();
      continue;
    }
    if (count === 0) {
      if (stopRequested) break;
      await outbound.waitSignalAsync(seen, IDLE_WAIT_MS);
    }
  }
  await journal.root.close();
  parentPort!.postMessage({ type: 'stopped', seqDurable: control.seqDurable() });
  parentPort!.close();
}

main().catch((error: unknown) => {
  // Rethrown outside the promise so the worker dies with an 'error' event the main thread sees.
  setImmediate(() => {
    throw error;
  });
});
