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
//   engine configuration differs from the journal's halt: EngineConfigChangedError
//
// Replay reproduces the state only under the engine configuration the journal was written with
// (markets, assets, limits, fees, price bands, speed bump), so its fingerprint is stored with the
// journal on first start and compared on every later start. Changing it needs a new data
// directory until configuration changes travel as journaled commands.
//
// The journal is only ever appended to by the journal worker, which writes a batch in one LMDB
// transaction and publishes seqDurable after lmdb reports the batch flushed to disk. What
// LMDB holds after a crash is therefore always a prefix of what was sequenced.

import { createHash } from 'node:crypto';
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
export class EngineConfigChangedError extends Error {
  override name = 'EngineConfigChangedError';
}

/** Bytes of the StampedRecord covered by the checksum: everything before the checksum field. */
export const CHECKSUMMED_BYTES = JOURNAL_CHECKSUM_OFFSET;

export interface JournalHandle {
  root: RootDatabase;
  records: Database<Buffer, Buffer>;
  meta: Database<string, string>;
}

export function openJournal(dataDir: string): JournalHandle {
  const root = open({ path: join(dataDir, 'journal'), maxDbs: 16 });
  const records = root.openDB<Buffer, Buffer>({ name: 'journal', keyEncoding: 'binary', encoding: 'binary' });
  const meta = root.openDB<string, string>({ name: 'meta', encoding: 'string' });
  return { root, records, meta };
}

const CONFIG_KEY = 'engineConfigSha256';

/** SHA-256 of the engine configuration in a canonical JSON form (keys sorted). */
export function engineConfigFingerprint(config: unknown): string {
  const canonical = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(canonical);
    if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return Object.fromEntries(entries.map(([k, v]) => [k, canonical(v)]));
    }
    return value;
  };
  return createHash('sha256').update(JSON.stringify(canonical(config))).digest('hex');
}

/**
 * Records the configuration's fingerprint on first start; on later starts refuses a different
 * one. Runs before replay and before the journal worker opens the journal for writing.
 */
export function checkEngineConfig(handle: JournalHandle, fingerprint: string): void {
  const stored = handle.meta.get(CONFIG_KEY);
  if (stored === undefined) {
    handle.meta.putSync(CONFIG_KEY, fingerprint);
    return;
  }
  if (stored !== fingerprint) {
    throw new EngineConfigChangedError(
      'the engine configuration (markets, assets, limits, fees, price bands, speed bump) differs from the one ' +
        'this journal was written with, so replay would not rebuild the same state; start with the original ' +
        'configuration, or with a new data directory',
    );
  }
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
