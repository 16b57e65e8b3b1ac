// A JournalStore (engine/store/journal-store.ts) over an in-memory "disk" that can be made to
// fail the way real storage does, for the fault-injection tests of the journal:
//   - commit() moves the open batch to "committed, not flushed", then to "on disk"; a batch is
//     atomic, as an LMDB transaction is;
//   - failNextFlush: the next commit rejects (the batch may or may not have reached the disk);
//   - hangNextFlush: the next commit never resolves (the process dies during the fsync);
//   - crash(keepUnflushed): the disk image a restarted process would find: every flushed batch,
//     plus, when asked, the batches that were committed but whose flush never finished;
//   - flipBit / rewrite / remove: damage to what is on disk;
//   - oddBuffers: reserve() places records where the writer cannot write them as 32-bit words.
// Every record is stored as a run of one (journal-layout.ts sealRun, at endBatch or commit), keyed
// by its sequence; multi-record runs are the LMDB store's (test/store/journal-runs.test.ts, and the
// fault tests' runs over it).
// Snapshots are blobs written durably at once (the real store fsyncs before the rename).

import { JOURNAL_RECORD_BYTES } from '../../engine/bus/codec.js';
import type { JournalStore, StoredRecord } from '../../engine/store/journal-store.js';
import { sealRun } from '../../engine/store/journal-layout.js';

export class FaultyJournalStore implements JournalStore {
  disk = new Map<number, Uint8Array>();
  meta = new Map<string, string>();
  snapshots = new Map<number, Uint8Array>();
  /** Records appended or reserved since the last endBatch, then those sealed since the last commit. */
  private open: [number, Uint8Array][] = [];
  private batch: [number, Uint8Array][] = [];
  private chain = 0;
  private metaBatch: [string, string][] = [];
  /** Committed batches whose flush has not completed. */
  unflushed: [number, Uint8Array][][] = [];
  failNextFlush = false;
  hangNextFlush = false;
  commits = 0;

  reservedAt = 0;
  /** reserve() hands out each record at byte 1 of its buffer, not 4-byte aligned (the writer's DataView path). */
  oddBuffers = false;

  append(seq: number, value: Uint8Array): void {
    this.open.push([seq, Uint8Array.from(value)]);
  }

  chainFrom(checksum: number): void {
    this.chain = checksum >>> 0;
  }

  reserve(seq: number): Uint8Array {
    const buffer = new Uint8Array(JOURNAL_RECORD_BYTES + (this.oddBuffers ? 1 : 0));
    this.reservedAt = this.oddBuffers ? 1 : 0;
    this.open.push([seq, buffer.subarray(this.reservedAt)]);
    return buffer;
  }

  endBatch(): void {
    for (const record of this.open) this.chain = sealRun(record[1], 1, this.chain);
    this.batch.push(...this.open);
    this.open = [];
  }

  commit(): Promise<void> {
    this.endBatch();
    const batch = this.batch;
    const metaBatch = this.metaBatch;
    this.batch = [];
    this.metaBatch = [];
    this.unflushed.push(batch);
    this.commits++;
    if (this.hangNextFlush) {
      this.hangNextFlush = false;
      return new Promise(() => {});
    }
    if (this.failNextFlush) {
      this.failNextFlush = false;
      return Promise.reject(new Error('EIO: injected flush failure'));
    }
    this.unflushed.pop();
    for (const [seq, value] of batch) this.disk.set(seq, value);
    for (const [key, value] of metaBatch) this.meta.set(key, value);
    return Promise.resolve();
  }

  /** The store a restarted process would open. */
  crash(keepUnflushed: boolean): FaultyJournalStore {
    const after = new FaultyJournalStore();
    after.disk = new Map([...this.disk].map(([k, v]) => [k, Uint8Array.from(v)]));
    if (keepUnflushed) for (const batch of this.unflushed) for (const [seq, value] of batch) after.disk.set(seq, Uint8Array.from(value));
    after.meta = new Map(this.meta);
    after.snapshots = new Map([...this.snapshots].map(([k, v]) => [k, Uint8Array.from(v)]));
    return after;
  }

  flipBit(seq: number, bit: number): void {
    const value = this.disk.get(seq)!;
    value[bit >>> 3] ^= 1 << (bit & 7);
  }

  firstSeq(): number {
    return this.disk.size === 0 ? 0 : Math.min(...this.disk.keys());
  }

  lastSeq(): number {
    return this.disk.size === 0 ? 0 : Math.max(...this.disk.keys());
  }

  read(seq: number): Uint8Array | undefined {
    return this.disk.get(seq);
  }

  *range(fromSeq: number): Iterable<StoredRecord> {
    for (const seq of [...this.disk.keys()].filter((s) => s >= fromSeq).sort((a, b) => a - b)) yield { seq, value: this.disk.get(seq)! };
  }

  runs(fromSeq: number): Iterable<StoredRecord> {
    return this.range(fromSeq); // runs of one
  }

  getMeta(key: string): string | undefined {
    return this.meta.get(key);
  }

  putMetaSync(key: string, value: string): void {
    this.meta.set(key, value);
  }

  putMeta(key: string, value: string): void {
    this.metaBatch.push([key, value]);
  }

  async writeSnapshot(seq: number, blob: Uint8Array): Promise<void> {
    this.snapshots.set(seq, Uint8Array.from(blob));
  }

  listSnapshots(): number[] {
    return [...this.snapshots.keys()].sort((a, b) => b - a);
  }

  readSnapshot(seq: number): Uint8Array | undefined {
    return this.snapshots.get(seq);
  }

  deleteSnapshot(seq: number): void {
    this.snapshots.delete(seq);
  }

  async deleteRecordsBefore(seq: number): Promise<number> {
    let removed = 0;
    for (const key of [...this.disk.keys()]) if (key < seq && this.disk.delete(key)) removed++;
    return removed;
  }

  async close(): Promise<void> {}
}
