// The journal's storage: LMDB under <dataDir>/journal, one database "journal" whose keys are the
// 8-byte big-endian sequence and whose values are JournalRecord structs (schemas/exchange.fbs):
// the stamped command plus a crc32 chained to the previous record's checksum.
//
// Recovery decision table (applied by replayJournal at start-up, before anything is served):
//
//   what replay finds                               decision
//   ----------------------------------------------  -------------------------------------------
//   no records                                      fresh exchange: start at seq 1
//   records 1..n contiguous, every checksum chains  rebuild state from them, resume at n + 1
//   a sequence missing (k follows k - 2 or more)    halt: JournalGapError
//   a record whose checksum does not chain          halt: JournalChecksumError
//   a value of the wrong size                       halt: JournalRecordSizeError
//
// The journal is only ever appended to by the journal worker, which writes a batch in one LMDB
// transaction and publishes seqDurable after lmdb reports the batch flushed to disk. What
// LMDB holds after a crash is therefore always a prefix of what was sequenced.

import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import { crc32, JOURNAL_CHECKSUM_OFFSET, JOURNAL_RECORD_BYTES, readStamped, newStampedRec } from '../codec.js';
import type { StampedRec } from '../types.js';

export class JournalGapError extends Error {
  override name = 'JournalGapError';
}
export class JournalChecksumError extends Error {
  override name = 'JournalChecksumError';
}
export class JournalRecordSizeError extends Error {
  override name = 'JournalRecordSizeError';
}

/** Bytes of the StampedRecord covered by the checksum: everything before the checksum field. */
export const CHECKSUMMED_BYTES = JOURNAL_CHECKSUM_OFFSET;

export interface JournalHandle {
  root: RootDatabase;
  records: Database<Buffer, Buffer>;
}

export function openJournal(dataDir: string): JournalHandle {
  const root = open({ path: join(dataDir, 'journal'), maxDbs: 16 });
  const records = root.openDB<Buffer, Buffer>({ name: 'journal', keyEncoding: 'binary', encoding: 'binary' });
  return { root, records };
}

export function seqKey(seq: number): Buffer {
  const key = Buffer.allocUnsafe(8);
  key.writeBigUInt64BE(BigInt(seq));
  return key;
}

export interface ReplayResult {
  lastSeq: number;
  lastChecksum: number;
  lastTimeUs: number;
}

/**
 * Reads every record in sequence order, checks contiguity and the checksum chain, and hands each
 * stamped record to `apply` (the same object reused). Throws a named error on damage.
 */
export function replayJournal(handle: JournalHandle, apply: (rec: StampedRec) => void): ReplayResult {
  const rec = newStampedRec();
  let lastSeq = 0;
  let lastChecksum = 0;
  let lastTimeUs = 0;
  for (const { key, value } of handle.records.getRange({ start: seqKey(1) })) {
    const seq = Number(key.readBigUInt64BE(0));
    if (value.length !== JOURNAL_RECORD_BYTES) {
      throw new JournalRecordSizeError(`journal record ${seq} has ${value.length} bytes, expected ${JOURNAL_RECORD_BYTES}`);
    }
    if (seq !== lastSeq + 1) {
      throw new JournalGapError(`journal sequence jumps from ${lastSeq} to ${seq}`);
    }
    const bytes = new Uint8Array(value.buffer, value.byteOffset, value.length);
    const expected = crc32(bytes, 0, CHECKSUMMED_BYTES, lastChecksum);
    const stored = value.readUInt32LE(JOURNAL_CHECKSUM_OFFSET);
    if (stored !== expected) {
      throw new JournalChecksumError(`journal record ${seq}: checksum ${stored} does not chain (expected ${expected})`);
    }
    const view = new DataView(value.buffer, value.byteOffset, value.length);
    readStamped(view, 0, rec);
    if (rec.seq !== seq) {
      throw new JournalChecksumError(`journal record under key ${seq} holds sequence ${rec.seq}`);
    }
    apply(rec);
    lastSeq = seq;
    lastChecksum = stored;
    lastTimeUs = rec.timeUs;
  }
  return { lastSeq, lastChecksum, lastTimeUs };
}
