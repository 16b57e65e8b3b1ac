// The journal's storage behind one interface, so that the journal worker and recovery run the
// same code over the real LMDB store and over the fault-injecting store of the tests
// (test/helpers/faulty-journal-store.ts: crashes between batches, lost unflushed transactions,
// failed flushes, flipped bits).
//
// The contract the rest of the journal relies on:
//   - append() adds a record to the open batch (reserve() adds one the caller writes in place, which
//     spares the journal writer a copy of every record); commit() resolves once every appended record is
//     on disk (flushed, not merely committed), and rejects if any write or flush failed. Batches
//     are atomic: after a crash the store holds a prefix of the committed batches.
//   - range(from) yields the stored records from `from` in sequence order: each item a run of
//     consecutive records (value.length a multiple of JOURNAL_RECORD_BYTES, the first at `seq`;
//     a damaged value may have any length, which recovery refuses). runs(from) yields the same
//     runs whole: the first is the one holding `from`, which may begin before it.
//   - endBatch() ends the open batch's run: it seals the records appended since
//     (journal-layout.ts sealRun: the run's checksum, chained from the run before, whose checksum
//     chainFrom() gives the first run) and writes them (within the caller's transaction, when it
//     holds one); commit() ends the batch itself when no one did. How many records a run holds
//     is the store's choice; every stored run is sealed.
//   - snapshots are opaque blobs keyed by sequence, each written atomically and durably
//     (writeSnapshot resolves after the blob and its directory entry are on disk).
//   - deleteRecordsBefore(seq) is compaction: it removes the runs whose records all have a smaller
//     sequence (a run holding `seq` stays whole).
//
// LmdbJournalStore keeps records in the LMDB database "journal" and "meta" of <dataDir>/journal.
// A value of the journal database is a run of consecutive records, back to back
// (JOURNAL_RECORD_BYTES each), under the 8-byte big-endian sequence of its first record: a batch's
// records go into one value (up to RUN_MAX_RECORDS), so a batch costs one LMDB put, not one per
// record, and recovery reads a batch as one value and decodes its records in place. Journals of
// format 2 hold one record per value, which is a run of one: they read as they are.
//
// The store's other files: and snapshots as files <dataDir>/snapshots/<seq>.snap (temp file,
// fsync, rename, fsync of the directory). History databases that other modules keep in the same
// environment are not touched by compaction.

import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { open as openFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import { JOURNAL_RECORD_BYTES } from '../bus/codec.js';
import { sealRun } from './journal-layout.js';

export interface StoredRecord {
  seq: number;
  value: Uint8Array;
}

export interface JournalStore {
  /** Adds a record (copied) to the open batch. */
  append(seq: number, value: Uint8Array): void;
  /**
   * Adds the record of `seq` to the open batch, to be written in place: returns the buffer that
   * holds it, at byte `reservedAt` (JOURNAL_RECORD_BYTES; the writer writes 32-bit words where the
   * record is 4-byte aligned in memory).
   * The caller writes all of it before its next call into the store: endBatch and commit store it
   * as it is then.
   */
  reserve(seq: number): Uint8Array;
  /** Byte offset in reserve()'s buffer of the record it last added. */
  readonly reservedAt: number;
  /** The checksum the next run chains from: the journal's last (recovery's lastChecksum), 0 for an empty journal. */
  chainFrom(checksum: number): void;
  /** Seals and writes the records appended since the last endBatch (inside the caller's transaction, if any). */
  endBatch(): void;
  commit(): Promise<void>;
  firstSeq(): number;
  lastSeq(): number;
  read(seq: number): Uint8Array | undefined;
  range(fromSeq: number): Iterable<StoredRecord>;
  runs(fromSeq: number): Iterable<StoredRecord>;
  getMeta(key: string): string | undefined;
  /** Durable before it returns (start-up only, before the journal worker writes). */
  putMetaSync(key: string, value: string): void;
  /** Joins the next batch: durable once the next commit() resolves. */
  putMeta(key: string, value: string): void;
  writeSnapshot(seq: number, blob: Uint8Array): Promise<void>;
  /** Sequences of the stored snapshots, newest first. */
  listSnapshots(): number[];
  readSnapshot(seq: number): Uint8Array | undefined;
  deleteSnapshot(seq: number): void;
  /** Removes the runs of records all with seq < `seq`; resolves when the removal is on disk. Returns how many records. */
  deleteRecordsBefore(seq: number): Promise<number>;
  close(): Promise<void>;
}

export function seqKey(seq: number): Buffer {
  const key = Buffer.allocUnsafe(8);
  key.writeBigUInt64BE(BigInt(seq));
  return key;
}

const SNAPSHOT_SUFFIX = '.snap';

/**
 * The failpoints exist so that process tests can prove whole chains; unset, they cost one
 * comparison per commit.
 * - `EXCHANGE_FAILPOINT=journal-commit:N` makes the Nth commit of this process report a failure
 *   (after the data reached the disk, so the batch may or may not be visible after restart, exactly
 *   like a flush whose outcome is unknown): a failed flush stops the process before anything of
 *   that batch is acknowledged, and the supervisor (src/supervisor.ts) restarts it through recovery.
 * - `EXCHANGE_FAILPOINT=journal-hang:N` makes the Nth commit never complete, as a disk that stops
 *   answering would: the watchdog must see the stall, report it and end the process, and SIGTERM
 *   must still stop it.
 */
function commitFailpoint(spec: string | undefined, name: string): number {
  const match = new RegExp(`^${name}:(\\d+)$`).exec(spec ?? '');
  return match === null ? 0 : Number(match[1]);
}
const COMPACTION_CHUNK = 10_000;
/** Records per stored run at most (1.5 MB): a batch larger than this takes several values. */
export const RUN_MAX_RECORDS = 8192;
/**
 * Records the first open run starts with room for; it doubles as records arrive, and each later
 * run starts with room for as many as the one before it held (so that steady batches never grow).
 */
const RUN_INITIAL_RECORDS = 16;

/** Sequence of the record a journal key starts. */
function keySeq(key: Buffer): number {
  return key.readUInt32BE(0) * 0x1_0000_0000 + key.readUInt32BE(4);
}

/** Records in a stored run (a damaged value of another length counts as one). */
function runRecords(value: Uint8Array): number {
  return Math.max(1, Math.floor(value.length / JOURNAL_RECORD_BYTES));
}

export class LmdbJournalStore implements JournalStore {
  readonly root: RootDatabase;
  readonly records: Database<Buffer, Buffer>;
  readonly meta: Database<string, string>;
  private readonly snapshotDir: string;
  private lastWrite: Promise<boolean> | null = null;
  private commits = 0;
  /** The open run: records appended since the last endBatch, back to back from runSeq. */
  private run: Buffer | null = null;
  private runSeq = 0;
  private runCount = 0;
  /** The checksum of the last sealed run (chainFrom's, before the first). */
  private chain = 0;
  /** Records the next run starts with room for. */
  private runCapacity = RUN_INITIAL_RECORDS;
  reservedAt = 0;
  /** Failpoint (tests only): the commit with this 1-based number fails after its flush. */
  private readonly failCommit = commitFailpoint(process.env['EXCHANGE_FAILPOINT'], 'journal-commit');
  /** Failpoint (tests only): the commit with this 1-based number never completes. */
  private readonly hangCommit = commitFailpoint(process.env['EXCHANGE_FAILPOINT'], 'journal-hang');

  constructor(dataDir: string) {
    this.root = open({ path: join(dataDir, 'journal'), maxDbs: 16 });
    this.records = this.root.openDB<Buffer, Buffer>({ name: 'journal', keyEncoding: 'binary', encoding: 'binary' });
    this.meta = this.root.openDB<string, string>({ name: 'meta', encoding: 'string' });
    this.snapshotDir = join(dataDir, 'snapshots');
    mkdirSync(this.snapshotDir, { recursive: true });
  }

  append(seq: number, value: Uint8Array): void {
    if (value.length !== JOURNAL_RECORD_BYTES) throw new Error(`journal record ${seq} has ${value.length} bytes, expected ${JOURNAL_RECORD_BYTES}`);
    this.reserve(seq).set(value, this.reservedAt);
  }

  reserve(seq: number): Uint8Array {
    if (this.run !== null && (seq !== this.runSeq + this.runCount || this.runCount === RUN_MAX_RECORDS)) this.endBatch();
    if (this.run === null) {
      // Not from Buffer's shared pool: its own memory, so aligned, and never handed out again.
      this.run = Buffer.allocUnsafeSlow(this.runCapacity * JOURNAL_RECORD_BYTES);
      this.runSeq = seq;
      this.runCount = 0;
    } else if ((this.runCount + 1) * JOURNAL_RECORD_BYTES > this.run.length) {
      const grown = Buffer.allocUnsafeSlow(this.run.length * 2);
      this.run.copy(grown, 0, 0, this.runCount * JOURNAL_RECORD_BYTES);
      this.run = grown;
    }
    this.reservedAt = this.runCount * JOURNAL_RECORD_BYTES;
    this.runCount++;
    return this.run;
  }

  chainFrom(checksum: number): void {
    this.chain = checksum >>> 0;
  }

  endBatch(): void {
    if (this.run === null) return;
    this.chain = sealRun(this.run, this.runCount, this.chain);
    // A new buffer for every run: an asynchronous put may still read this one.
    this.lastWrite = this.records.put(seqKey(this.runSeq), this.run.subarray(0, this.runCount * JOURNAL_RECORD_BYTES));
    this.runCapacity = Math.min(RUN_MAX_RECORDS, Math.max(RUN_INITIAL_RECORDS, this.runCount));
    this.run = null;
  }

  async commit(): Promise<void> {
    this.endBatch();
    const written = this.lastWrite;
    this.lastWrite = null;
    if (written !== null && !(await written)) throw new Error('journal write was not applied');
    await this.records.flushed;
    if (this.commits + 1 === this.hangCommit) await new Promise<never>(() => {});
    if (++this.commits === this.failCommit) throw new Error(`failpoint journal-commit:${this.failCommit}`);
  }

  firstSeq(): number {
    for (const key of this.records.getKeys({ limit: 1 })) return keySeq(key as Buffer);
    return 0;
  }

  lastSeq(): number {
    for (const { key, value } of this.records.getRange({ limit: 1, reverse: true })) return keySeq(key as Buffer) + runRecords(value) - 1;
    return 0;
  }

  /** The stored run holding `seq` (the value under the greatest key at or below it), if any. */
  private runAt(seq: number): StoredRecord | undefined {
    for (const { key, value } of this.records.getRange({ start: seqKey(seq), reverse: true, limit: 1 })) {
      const first = keySeq(key as Buffer);
      return seq < first + runRecords(value) ? { seq: first, value } : undefined;
    }
    return undefined;
  }

  read(seq: number): Uint8Array | undefined {
    const run = this.runAt(seq);
    if (run === undefined || run.value.length < JOURNAL_RECORD_BYTES) return run?.value;
    const at = (seq - run.seq) * JOURNAL_RECORD_BYTES;
    return run.value.subarray(at, at + JOURNAL_RECORD_BYTES);
  }

  *range(fromSeq: number): Iterable<StoredRecord> {
    for (const run of this.runs(fromSeq)) {
      yield run.seq < fromSeq ? { seq: fromSeq, value: run.value.subarray((fromSeq - run.seq) * JOURNAL_RECORD_BYTES) } : run;
    }
  }

  *runs(fromSeq: number): Iterable<StoredRecord> {
    const first = this.runAt(fromSeq);
    if (first !== undefined && first.seq < fromSeq) {
      yield first;
      fromSeq = first.seq + runRecords(first.value);
    }
    for (const { key, value } of this.records.getRange({ start: seqKey(fromSeq) })) yield { seq: keySeq(key as Buffer), value };
  }

  getMeta(key: string): string | undefined {
    return this.meta.get(key) ?? undefined;
  }

  putMetaSync(key: string, value: string): void {
    this.meta.putSync(key, value);
  }

  putMeta(key: string, value: string): void {
    this.lastWrite = this.meta.put(key, value);
  }

  async writeSnapshot(seq: number, blob: Uint8Array): Promise<void> {
    const name = join(this.snapshotDir, snapshotFileName(seq));
    const temp = `${name}.tmp`;
    const file = await openFile(temp, 'w');
    try {
      await file.writeFile(blob);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temp, name);
    const dir = openSync(this.snapshotDir, 'r');
    try {
      fsyncSync(dir);
    } finally {
      closeSync(dir);
    }
  }

  listSnapshots(): number[] {
    return listSnapshotFiles(this.snapshotDir);
  }

  readSnapshot(seq: number): Uint8Array | undefined {
    try {
      return readFileSync(join(this.snapshotDir, snapshotFileName(seq)));
    } catch {
      return undefined;
    }
  }

  /** Removes temp files of snapshot writes a crash interrupted (call while no write is running). */
  removeSnapshotTemps(): number {
    const temps = readdirSync(this.snapshotDir).filter((name) => /^\d{16}\.snap\.tmp$/.test(name));
    for (const name of temps) rmSync(join(this.snapshotDir, name), { force: true });
    return temps.length;
  }

  deleteSnapshot(seq: number): void {
    rmSync(join(this.snapshotDir, snapshotFileName(seq)), { force: true });
  }

  async deleteRecordsBefore(seq: number): Promise<number> {
    let removed = 0;
    for (;;) {
      const keys: Buffer[] = [];
      let records = 0;
      for (const { key, value } of this.records.getRange({ start: seqKey(1), end: seqKey(seq), limit: COMPACTION_CHUNK })) {
        if (keySeq(key as Buffer) + runRecords(value) > seq) break; // holds seq: stays
        keys.push(key as Buffer);
        records += runRecords(value);
      }
      if (keys.length === 0) break;
      let last: Promise<boolean> | null = null;
      for (const key of keys) last = this.records.remove(key);
      await last;
      removed += records;
    }
    await this.records.flushed;
    return removed;
  }

  /**
   * Ends this thread's read snapshot now. lmdb-js keeps one read transaction per thread and ends
   * it from a zero-delay timer, that is, only when the thread returns to its event loop. A thread
   * that does not (the engine worker after recovery, never; the journal worker, not while its
   * commits keep settling as microtasks) would otherwise keep its snapshot, and LMDB cannot reuse
   * any page freed after that snapshot: the file would grow by every write transaction's copied
   * pages instead of recycling its free ones.
   */
  releaseReadSnapshot(): void {
    this.root.resetReadTxn();
  }

  async close(): Promise<void> {
    await this.root.close();
  }
}

export function snapshotFileName(seq: number): string {
  return `${String(seq).padStart(16, '0')}${SNAPSHOT_SUFFIX}`;
}

/** Sequences of the snapshot files in `dir`, newest first (temp files of unfinished writes excluded). */
export function listSnapshotFiles(dir: string): number[] {
  return readdirSync(dir)
    .filter((name) => /^\d{16}\.snap$/.test(name))
    .map((name) => Number(name.slice(0, 16)))
    .sort((a, b) => b - a);
}
