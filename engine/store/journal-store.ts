// The journal's storage behind one interface, so that the journal worker and recovery run the
// same code over the real LMDB store and over the fault-injecting store of the tests
// (test/helpers/faulty-journal-store.ts: crashes between batches, lost unflushed transactions,
// failed flushes, flipped bits).
//
// The contract the rest of the journal relies on:
//   - append() adds a record to the open batch; commit() resolves once every appended record is
//     on disk (flushed, not merely committed), and rejects if any write or flush failed. Batches
//     are atomic: after a crash the store holds a prefix of the committed batches.
//   - range(from) yields the stored records from `from` in sequence order (keys as numbers).
//   - snapshots are opaque blobs keyed by sequence, each written atomically and durably
//     (writeSnapshot resolves after the blob and its directory entry are on disk).
//   - deleteRecordsBefore(seq) is compaction: it removes records with a smaller sequence.
//
// LmdbJournalStore keeps records in the LMDB database "journal" (8-byte big-endian keys) and
// "meta" of <dataDir>/journal, and snapshots as files <dataDir>/snapshots/<seq>.snap (temp file,
// fsync, rename, fsync of the directory). History databases that other modules keep in the same
// environment are not touched by compaction.

import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { open as openFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';

export interface StoredRecord {
  seq: number;
  value: Uint8Array;
}

export interface JournalStore {
  append(seq: number, value: Uint8Array): void;
  commit(): Promise<void>;
  firstSeq(): number;
  lastSeq(): number;
  read(seq: number): Uint8Array | undefined;
  range(fromSeq: number): Iterable<StoredRecord>;
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
  /** Removes the records with seq < `seq`; resolves when the removal is on disk. Returns how many. */
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

export class LmdbJournalStore implements JournalStore {
  readonly root: RootDatabase;
  readonly records: Database<Buffer, Buffer>;
  readonly meta: Database<string, string>;
  private readonly snapshotDir: string;
  private lastWrite: Promise<boolean> | null = null;
  private commits = 0;
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
    this.lastWrite = this.records.put(seqKey(seq), value as Buffer);
  }

  async commit(): Promise<void> {
    const written = this.lastWrite;
    this.lastWrite = null;
    if (written !== null && !(await written)) throw new Error('journal write was not applied');
    await this.records.flushed;
    if (this.commits + 1 === this.hangCommit) await new Promise<never>(() => {});
    if (++this.commits === this.failCommit) throw new Error(`failpoint journal-commit:${this.failCommit}`);
  }

  firstSeq(): number {
    for (const key of this.records.getKeys({ limit: 1 })) return Number((key as Buffer).readBigUInt64BE(0));
    return 0;
  }

  lastSeq(): number {
    for (const key of this.records.getKeys({ limit: 1, reverse: true })) return Number((key as Buffer).readBigUInt64BE(0));
    return 0;
  }

  read(seq: number): Uint8Array | undefined {
    return this.records.get(seqKey(seq)) ?? undefined;
  }

  *range(fromSeq: number): Iterable<StoredRecord> {
    for (const { key, value } of this.records.getRange({ start: seqKey(fromSeq) })) {
      yield { seq: Number((key as Buffer).readBigUInt64BE(0)), value };
    }
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
      for (const key of this.records.getKeys({ start: seqKey(1), end: seqKey(seq), limit: COMPACTION_CHUNK })) keys.push(key as Buffer);
      if (keys.length === 0) break;
      let last: Promise<boolean> | null = null;
      for (const key of keys) last = this.records.remove(key);
      await last;
      removed += keys.length;
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
