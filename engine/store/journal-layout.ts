// The journal's layout on disk, shared by the journal worker that writes it and the recovery that
// reads it (engine/shell/journal.ts): what a record's checksum covers and how it chains, the
// format version and meta keys stored beside the records, and the snapshot file format.
//
// A journal record (schemas/exchange.fbs JournalRecord, keyed by sequence in
// engine/store/journal-store.ts) is the stamped command, the digest of the outputs it produced
// (engine/shell/digest.ts) and a checksum field. The store keeps a batch's records back to back
// as one run, and the checksum is the run's (format 4): one crc32 over the whole run, chained from
// the run before (sealRun below), in place of one per record chained from the record before
// (formats 2 and 3, which this server still reads). A snapshot file is the
// engine state after the Snapshot command at its sequence (engine/core/snapshot.ts bytes) behind a
// header with the state hash at export and the configuration fingerprint.

import * as zlib from 'node:zlib';
import { JOURNAL_CHECKSUM_OFFSET, JOURNAL_RECORD_BYTES, crc32, crc32View } from '../bus/codec.js';

/** Bytes of the JournalRecord covered by the checksum: the stamped record and the output digest. */
export const CHECKSUMMED_BYTES = JOURNAL_CHECKSUM_OFFSET;

/**
 * Journal layout version: 2 = records with output digests (engine/shell/journal.ts replays them),
 * one record per stored value, each record's checksum chained from the record before; 3 = the same
 * records, a batch's records back to back in one stored value (engine/store/journal-store.ts);
 * 4 = the same runs, each sealed with one checksum for the whole run (sealRun); 5 = the same runs,
 * whose output digests cover outputs where an order's event rides in its answer
 * (engine/core/output.ts eventsInAnswers), folded in two lanes (engine/shell/digest.ts
 * digestWordsLanes); 6 = the same, whose output digests cover outputs where a taker's balance
 * records are written once, when its match ends, instead of after each of its fills, and the
 * answer of a taker that its last fill ends Filled on a spot market carries that fill
 * (engine/core/output.ts takerSummary). This server reads all five and writes 6: a journal of
 * an earlier format is marked 6 when this server opens it, with RUN_CHECKSUMS_FROM_KEY (from format
 * 2 or 3) saying where its sealed runs begin, FORMAT_5_FROM_KEY (from format 4 or before) where its
 * records of format 5 begin and FORMAT_6_FROM_KEY where its records of format 6 begin, so that a
 * server that does not read format 6 refuses it.
 */
export const JOURNAL_FORMAT = '6';
/** The formats this server reads: a record per value is a run of one. */
export const JOURNAL_FORMATS_READ: readonly string[] = ['2', '3', '4', '5', JOURNAL_FORMAT];
/** The formats whose runs are sealed whole (sealRun); a journal opened in another is sealed from RUN_CHECKSUMS_FROM_KEY. */
export const SEALED_FORMATS: readonly string[] = ['4', '5', JOURNAL_FORMAT];
/** The formats whose outputs carry orders' events in their answers; a journal opened in another gets FORMAT_5_FROM_KEY. */
export const EVENTS_IN_ANSWERS_FORMATS: readonly string[] = ['5', JOURNAL_FORMAT];
/** Meta keys: the journal format and the engine configuration's fingerprint (recovery checks both). */
export const FORMAT_KEY = 'journalFormat';
/**
 * Meta key: the first sequence written under format 4 (the journal's last sequence + 1 when this
 * server first opened it; 1 for a journal begun under format 4). Runs from there carry a run
 * checksum; the records before it, one each.
 */
export const RUN_CHECKSUMS_FROM_KEY = 'runChecksumsFrom';
/**
 * Meta key: the first sequence written under format 5 (as RUN_CHECKSUMS_FROM_KEY; 1 when unset).
 * Replay applies the commands before it with the orders' events in records of their own and
 * digests their outputs in one murmur chain, as the server that journaled them did, so that their
 * output digests still check.
 */
export const FORMAT_5_FROM_KEY = 'format5From';
/**
 * Meta key: the first sequence written under format 6 (as RUN_CHECKSUMS_FROM_KEY; 1 when unset).
 * Replay applies the commands before it with a taker's balance records after each of its fills
 * and every fill a record of its own, as the server that journaled them did, so that their output
 * digests still check.
 */
export const FORMAT_6_FROM_KEY = 'format6From';
export const CONFIG_KEY = 'engineConfigSha256';
/** {"seq", "stateHash"} written by a clean stop; checked when replay passes that sequence. */
export const CLEAN_STOP_KEY = 'cleanStop';
/**
 * The configuration changes a journal accepted (engine/shell/journal.ts, checkJournalIdentity), in
 * the order they took effect. One change is {"seq", "previousSha256"}: records and snapshots at or
 * below `seq` (and above the change before it) were written under the configuration fingerprinted
 * `previousSha256`; everything after the last change under CONFIG_KEY's. A journal with one change
 * keeps it, as the servers that accepted only one wrote it, under CONFIG_CHANGE_KEY; once a second
 * one is accepted the whole chain, as a JSON array, goes under CONFIG_CHANGES_KEY, which then
 * takes precedence (CONFIG_CHANGE_KEY stays, holding the chain's first change).
 */
export const CONFIG_CHANGE_KEY = 'engineConfigChange';
export const CONFIG_CHANGES_KEY = 'engineConfigChanges';

/** One recorded configuration change (CONFIG_CHANGE_KEY, CONFIG_CHANGES_KEY). */
export interface ConfigChange {
  /** The journal's last sequence when the change was accepted: the last one under `previousSha256`. */
  seq: number;
  previousSha256: string;
}

/**
 * The configuration changes the journal records, in order (empty: none). A change whose previous
 * fingerprint is still CONFIG_KEY's was being recorded when the server stopped (the change is
 * written before the new fingerprint): it is left out, and the next start accepts it again.
 */
export function readConfigChanges(store: { getMeta(key: string): string | undefined }): ConfigChange[] {
  const chain = store.getMeta(CONFIG_CHANGES_KEY);
  const single = store.getMeta(CONFIG_CHANGE_KEY);
  const changes = chain !== undefined ? (JSON.parse(chain) as ConfigChange[]) : single !== undefined ? [JSON.parse(single) as ConfigChange] : [];
  const current = store.getMeta(CONFIG_KEY);
  return changes.length > 0 && changes[changes.length - 1].previousSha256 === current ? changes.slice(0, -1) : changes;
}

/**
 * The meta entries that record `changes` (in order, the last one the change being accepted), to
 * be written before the new fingerprint: a chain of one under CONFIG_CHANGE_KEY, as servers that
 * accepted only one change wrote it, a longer one under CONFIG_CHANGES_KEY.
 */
export function configChangesMeta(changes: readonly ConfigChange[]): [key: string, value: string] {
  return changes.length === 1 ? [CONFIG_CHANGE_KEY, JSON.stringify(changes[0])] : [CONFIG_CHANGES_KEY, JSON.stringify(changes)];
}

/**
 * The fingerprint a snapshot at `seq` carries: that of the configuration in force at `seq`, the
 * previous one of the first recorded change at or after it, or `fingerprint` past the last change.
 */
export function snapshotFingerprintAt(seq: number, fingerprint: string, changes: readonly ConfigChange[]): string {
  return changes.find((change) => seq <= change.seq)?.previousSha256 ?? fingerprint;
}

const nativeCrc32 = (zlib as unknown as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;

/** crc32 of bytes[0, length), continuing from `prev` (zlib's native crc32 when Node has it). */
export function chainChecksum(bytes: Uint8Array, length: number, prev: number): number {
  if (nativeCrc32 !== undefined) return nativeCrc32(bytes.length === length ? bytes : bytes.subarray(0, length), prev) >>> 0;
  return crc32(bytes, 0, length, prev);
}

/**
 * The checksum of the journal record at `at` of `view` (its first CHECKSUMMED_BYTES), chained
 * from the previous record's `prev`: the same value as chainChecksum over those bytes, computed in
 * place (replay calls it once per record of formats 2 and 3).
 */
export function recordChecksum(view: DataView, at: number, prev: number): number {
  return crc32View(view, at, CHECKSUMMED_BYTES, prev);
}

/**
 * Seals a run of format 4: the `count` records at run[0, count × JOURNAL_RECORD_BYTES), written
 * but for their checksum fields. Every checksum field but the last is set, the first record's to
 * `seed` (the checksum of the run before: the chain link, so that a run can be checked without
 * the one before it, as a restart from a snapshot inside the run does) and the others to 0; the
 * last record's field gets the run's checksum, runChecksum over everything before it. Returns that
 * checksum, the next run's seed. A run of one record is sealed exactly as formats 2 and 3 sealed
 * each record (its checksum chained from the record before, no seed stored).
 */
export function sealRun(run: Uint8Array, count: number, seed: number): number {
  const view = new DataView(run.buffer, run.byteOffset, count * JOURNAL_RECORD_BYTES);
  if (count > 1) view.setUint32(CHECKSUMMED_BYTES, seed, true);
  for (let at = JOURNAL_RECORD_BYTES; at < (count - 1) * JOURNAL_RECORD_BYTES; at += JOURNAL_RECORD_BYTES) view.setUint32(at + CHECKSUMMED_BYTES, 0, true);
  const checksum = runChecksum(run, count, seed);
  view.setUint32((count - 1) * JOURNAL_RECORD_BYTES + CHECKSUMMED_BYTES, checksum, true);
  return checksum;
}

/**
 * The checksum of a run of format 4 of `count` records at run[0, …): crc32 over all its bytes but
 * the last checksum field, chained from `seed` (zlib's native crc32: one call per run).
 */
export function runChecksum(run: Uint8Array, count: number, seed: number): number {
  return chainChecksum(run, count * JOURNAL_RECORD_BYTES - 4, seed);
}

/** The seed a sealed run of format 4 stores (its first record's checksum field): only runs of two records or more store one. */
export function runSeed(run: Uint8Array): number {
  return new DataView(run.buffer, run.byteOffset, JOURNAL_RECORD_BYTES).getUint32(CHECKSUMMED_BYTES, true);
}

// Snapshot files

const SNAPSHOT_MAGIC = 0x50534e45; // 'ENSP'
const SNAPSHOT_HEADER_BYTES = 4 + 4 + 8 + 8 + 32 + 32 + 4 + 4;

export interface SnapshotMeta {
  seq: number;
  timeUs: number;
  /** Engine stateHash() at export, hex. */
  stateHash: string;
  /** engineConfigFingerprint of the configuration, hex. */
  configFingerprint: string;
}

/**
 * A snapshot file: magic, header length, seq, engine time, state hash (32 bytes), configuration
 * fingerprint (32 bytes), payload length, crc32 of header and payload, then the payload
 * (engine/core/snapshot.ts bytes).
 */
export function encodeSnapshotFile(meta: SnapshotMeta, payload: Uint8Array): Uint8Array {
  const file = Buffer.alloc(SNAPSHOT_HEADER_BYTES + payload.length);
  file.writeUInt32LE(SNAPSHOT_MAGIC, 0);
  file.writeUInt32LE(SNAPSHOT_HEADER_BYTES, 4);
  file.writeBigUInt64LE(BigInt(meta.seq), 8);
  file.writeBigUInt64LE(BigInt(meta.timeUs), 16);
  Buffer.from(meta.stateHash, 'hex').copy(file, 24);
  Buffer.from(meta.configFingerprint, 'hex').copy(file, 56);
  file.writeUInt32LE(payload.length, 88);
  file.set(payload, SNAPSHOT_HEADER_BYTES);
  file.writeUInt32LE(snapshotChecksum(file), 92);
  return file;
}

function snapshotChecksum(file: Buffer): number {
  return chainChecksum(file.subarray(SNAPSHOT_HEADER_BYTES), file.length - SNAPSHOT_HEADER_BYTES, chainChecksum(file, 92, 0));
}

/** The snapshot's header and payload, or a reason it is not usable. */
export function decodeSnapshotFile(bytes: Uint8Array): { meta: SnapshotMeta; payload: Uint8Array } | string {
  const file = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (file.length < SNAPSHOT_HEADER_BYTES || file.readUInt32LE(0) !== SNAPSHOT_MAGIC || file.readUInt32LE(4) !== SNAPSHOT_HEADER_BYTES) {
    return 'not a snapshot file';
  }
  const length = file.readUInt32LE(88);
  if (file.length !== SNAPSHOT_HEADER_BYTES + length) return 'truncated';
  if (file.readUInt32LE(92) !== snapshotChecksum(file)) return 'checksum mismatch';
  return {
    meta: {
      seq: Number(file.readBigUInt64LE(8)),
      timeUs: Number(file.readBigUInt64LE(16)),
      stateHash: file.subarray(24, 56).toString('hex'),
      configFingerprint: file.subarray(56, 88).toString('hex'),
    },
    payload: file.subarray(SNAPSHOT_HEADER_BYTES),
  };
}

