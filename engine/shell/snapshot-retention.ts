// Which snapshot files the journal worker keeps, and how far it compacts the journal, after it
// writes a new snapshot.
//
// Retention counts only snapshots known usable: the ones written here, the one recovery loaded,
// and older files once checked (checkSnapshot, at most once each). A file that merely has a
// snapshot's name (damaged, foreign, or named past the snapshot just written) is neither kept as a
// restart point nor deleted: compaction must never lean on it. The newest `snapshotKeep` usable
// snapshots are kept, older usable ones deleted, and (with compaction on) the journal records
// before the oldest kept snapshot removed; the record at a snapshot's own sequence stays.

import type { LmdbJournalStore } from '../store/journal-store.js';
import { checkSnapshot } from '../store/snapshot-check.js';

export interface RetentionSettings {
  /** The snapshot recovery loaded (0: none): known usable. */
  loadedSnapshotSeq: number;
  /** Snapshot files kept (at least 1). */
  snapshotKeep: number;
  /** Remove journal records older than the oldest kept snapshot. */
  compact: boolean;
  configFingerprint: string;
}

export interface RetentionReport {
  kept: number[];
  compactedBefore: number;
  removed: number;
  ignored: Array<{ seq: number; reason: string }>;
}

export class SnapshotRetention {
  private readonly usable: Set<number>;
  private readonly unusable = new Map<number, string>();

  constructor(private readonly store: LmdbJournalStore, private readonly settings: RetentionSettings) {
    this.usable = new Set<number>(settings.loadedSnapshotSeq > 0 ? [settings.loadedSnapshotSeq] : []);
  }

  /** Writes snapshot `seq` (temp file, fsync, rename), then applies retention and compaction. */
  async write(seq: number, file: Uint8Array): Promise<RetentionReport> {
    await this.store.writeSnapshot(seq, file);
    this.usable.add(seq);
    this.unusable.delete(seq);
    const { kept, superseded, ignored } = this.classify(seq);
    for (const old of superseded) {
      this.store.deleteSnapshot(old);
      this.usable.delete(old);
    }
    const oldestKept = kept[kept.length - 1]; // at least the snapshot just written
    const removed = this.settings.compact ? await this.store.deleteRecordsBefore(oldestKept) : 0;
    return { kept, compactedBefore: this.settings.compact ? oldestKept : 0, removed, ignored };
  }

  /** Sorts the snapshot files on disk, newest first, into kept, superseded and ignored. */
  private classify(newestSeq: number): { kept: number[]; superseded: number[]; ignored: RetentionReport['ignored'] } {
    const keep = Math.max(1, this.settings.snapshotKeep);
    const kept: number[] = [];
    const superseded: number[] = [];
    const ignored: RetentionReport['ignored'] = [];
    for (const seq of this.store.listSnapshots()) {
      if (seq > newestSeq) {
        ignored.push({ seq, reason: 'named past the newest snapshot' });
        continue;
      }
      if (!this.usable.has(seq) && !this.unusable.has(seq)) {
        const checked = checkSnapshot(this.store, seq, this.settings.configFingerprint, this.store.lastSeq());
        if (typeof checked === 'string') this.unusable.set(seq, checked);
        else this.usable.add(seq);
      }
      if (!this.usable.has(seq)) {
        ignored.push({ seq, reason: this.unusable.get(seq)! });
        continue;
      }
      if (kept.length < keep) kept.push(seq);
      else superseded.push(seq);
    }
    return { kept, superseded, ignored };
  }
}
