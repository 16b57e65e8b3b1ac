// The journal writer: turns the outbound record stream into journal records and batches.
//
// It sees every outbound record in ring order. A Stamped record opens a command: its bytes are
// copied into the JournalRecord being built and an output digest starts; every record after it is
// folded into the digest (digest.ts); the record carrying HeaderFlag.CommandEnd (the Stamped one
// itself when the command wrote nothing) closes it: the digest and the checksum chained to the
// previous record are written and the value is appended to the store's open batch. Records
// between a CommandEnd and the next Stamped (query answers) belong to no command and are skipped.
//
// commit() makes the batch durable (JournalStore.commit: committed and flushed) and only then
// advances durableSeq, which the journal worker publishes as seqDurable. A failed write or
// flush rejects with JournalWriteError and leaves durableSeq where it was: the worker dies and the
// process stops, never acknowledging ahead of the disk.

import { JOURNAL_CHECKSUM_OFFSET, JOURNAL_DIGEST_OFFSET, JOURNAL_RECORD_BYTES, recordFlags, recordSeq, recordType } from '../bus/codec.js';
import { HeaderFlag, RecordType } from '../bus/types.js';
import { DIGEST_SEED, RecordDigester, finishDigest } from './digest.js';
import { JournalWriteError } from './journal.js';
import { recordChecksum } from '../store/journal-layout.js';
import type { JournalStore } from '../store/journal-store.js';

export class JournalWriter {
  /** Highest sequence on disk (flushed). */
  durableSeq: number;
  /** Highest sequence appended to the open batch. */
  appendedSeq: number;
  private prevChecksum: number;
  private expectedSeq: number;
  /** The record being built (the store copies it on append). */
  private readonly value = Buffer.alloc(JOURNAL_RECORD_BYTES);
  private readonly valueView = new DataView(this.value.buffer, this.value.byteOffset, JOURNAL_RECORD_BYTES);
  private open = false;
  private openSeq = 0;
  private digest = DIGEST_SEED;
  private readonly digester = new RecordDigester();

  constructor(
    private readonly store: JournalStore,
    lastSeq: number,
    lastChecksum: number,
  ) {
    this.durableSeq = lastSeq;
    this.appendedSeq = lastSeq;
    this.prevChecksum = lastChecksum;
    this.expectedSeq = lastSeq + 1;
  }

  /** Handles one outbound record (any type) at `offset` of `view`. */
  onRecord(view: DataView, offset: number): void {
    if (recordType(view, offset) === RecordType.Stamped) {
      const seq = recordSeq(view, offset);
      if (this.open) throw new Error(`journal writer: command ${this.openSeq} has no CommandEnd before ${seq}`);
      if (seq !== this.expectedSeq) throw new Error(`journal writer expected sequence ${this.expectedSeq}, got ${seq}`);
      this.value.set(new Uint8Array(view.buffer, view.byteOffset + offset, JOURNAL_DIGEST_OFFSET), 0);
      this.open = true;
      this.openSeq = seq;
      this.digest = DIGEST_SEED;
    } else if (this.open) {
      this.digest = this.digester.fold(view, offset, this.digest);
    } else {
      return;
    }
    if ((recordFlags(view, offset) & HeaderFlag.CommandEnd) !== 0) this.close();
  }

  private close(): void {
    const value = this.value;
    value.writeUInt32LE(finishDigest(this.digest), JOURNAL_DIGEST_OFFSET);
    // The Stamped header was copied with its CommandEnd bit (a command without outputs); the
    // journal stores the header as stamped.
    value[23] &= ~HeaderFlag.CommandEnd;
    this.prevChecksum = recordChecksum(this.valueView, 0, this.prevChecksum);
    value.writeUInt32LE(this.prevChecksum, JOURNAL_CHECKSUM_OFFSET);
    this.store.append(this.openSeq, value);
    this.appendedSeq = this.openSeq;
    this.expectedSeq = this.openSeq + 1;
    this.open = false;
  }

  /** True between a command's Stamped record and its CommandEnd: the command is not complete. */
  commandOpen(): boolean {
    return this.open;
  }

  /** True when records were appended since the last commit. */
  hasBatch(): boolean {
    return this.appendedSeq > this.durableSeq;
  }

  /** Makes the open batch durable; resolves to the new durable sequence. */
  async commit(): Promise<number> {
    const target = this.appendedSeq;
    try {
      await this.store.commit();
    } catch (error) {
      throw new JournalWriteError(`journal batch through ${target} failed to reach the disk: ${(error as Error).message}`);
    }
    this.durableSeq = target;
    return target;
  }
}
