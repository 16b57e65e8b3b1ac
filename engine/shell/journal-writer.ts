// The journal writer: turns the outbound record stream into journal records and batches.
//
// It sees every outbound record in ring order. A Stamped record opens a command: the store adds
// the command's JournalRecord to its open batch (JournalStore.reserve) and the writer copies the
// stamped bytes straight into it, and an output digest starts; every record after it is folded
// into the digest (digest.ts); the record carrying HeaderFlag.CommandEnd (the Stamped one itself
// when the command wrote nothing) closes it: the digest is written. Records between a CommandEnd
// and the next Stamped (query answers) belong to no command and are skipped. The checksums are the
// store's: it seals each run of records as it writes it (journal-layout.ts sealRun, one native
// crc32 over the run), chained from the checksum the writer starts it from. The store stores a
// batch's records as they are at endBatch or commit, so both come only between commands (commit()
// refuses inside one).
//
// The hot path reads the ring and writes the record as 32-bit words (a little-endian platform's
// Int32Array over each buffer), as the digest does; a buffer off a 4-byte boundary, or a big-endian
// platform, goes through DataViews instead, to the same bytes (test/store/journal-writer-paths).
//
// commit() makes the batch durable (JournalStore.commit: committed and flushed) and only then
// advances durableSeq, which the journal worker publishes as seqDurable. A failed write or
// flush rejects with JournalWriteError and leaves durableSeq where it was: the worker dies and the
// process stops, never acknowledging ahead of the disk.

import { JOURNAL_CHECKSUM_OFFSET, JOURNAL_DIGEST_OFFSET, JOURNAL_RECORD_BYTES, LITTLE_ENDIAN, recordFlags, recordSeq, recordType } from '../bus/codec.js';
import { HeaderFlag, RecordType } from '../bus/types.js';
import { DIGEST_SEED, FLAGS_WORD_INDEX, FLAGS_WORD_MASK, digestRecord, digestRecordLanes, digestWords, digestWordsLanes, finishDigest } from './digest.js';
import { JournalWriteError } from './journal.js';
import type { JournalStore } from '../store/journal-store.js';

/** What the writer uses of its store: where the checksum chain starts, the open batch's next record, and the commit. */
export type JournalWriterStore = Pick<JournalStore, 'chainFrom' | 'reserve' | 'reservedAt' | 'commit'>;

/** Words of the stamped command at the start of a journal record. */
const STAMPED_WORDS = JOURNAL_DIGEST_OFFSET >> 2;
if (JOURNAL_DIGEST_OFFSET % 4 !== 0 || JOURNAL_CHECKSUM_OFFSET !== JOURNAL_DIGEST_OFFSET + 4 || JOURNAL_RECORD_BYTES !== JOURNAL_CHECKSUM_OFFSET + 4) {
  throw new Error('journal writer: the record layout is not stamped command (whole words), digest, checksum');
}
const COMMAND_END_BIT = HeaderFlag.CommandEnd << 24;
const STAMPED_TYPE = RecordType.Stamped << 16;
const TYPE_MASK = 0xff << 16;

export class JournalWriter {
  /** Highest sequence on disk (flushed). */
  durableSeq: number;
  /** Highest sequence appended to the open batch. */
  appendedSeq: number;
  private expectedSeq: number;
  private open = false;
  private openSeq = 0;
  private digest = DIGEST_SEED;
  /** The outbound records' buffer, as words when it is aligned on a little-endian platform. */
  private view: DataView | null = null;
  private words: Int32Array<ArrayBufferLike> = new Int32Array(0);
  private wordBase = 0;
  private aligned = false;
  /** The store buffer holding the open record (store.reserve), at byte `slotAt`. */
  private slot: Uint8Array | null = null;
  private slotView: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(0));
  private slotWords: Int32Array<ArrayBufferLike> = new Int32Array(0);
  private slotAt = 0;

  constructor(
    private readonly store: JournalWriterStore,
    lastSeq: number,
    lastChecksum: number,
  ) {
    this.durableSeq = lastSeq;
    this.appendedSeq = lastSeq;
    this.expectedSeq = lastSeq + 1;
    store.chainFrom(lastChecksum);
  }

  /**
   * The first sequence whose outputs digest as journal formats 5 and 6 do (two lanes; 1, every one, by
   * default, as the journal worker writes): the commands before it digest as formats 2 to 4 did.
   * Tests write journals of earlier formats with it.
   */
  format5From = 1;
  /** Whether the open command digests in two lanes (its sequence at or past format5From). */
  private lanes = true;

  /** Handles one outbound record (any type) at `offset` of `view`. */
  onRecord(view: DataView, offset: number): void {
    if (view !== this.view) this.attach(view);
    if (!this.aligned || (offset & 3) !== 0) {
      this.onRecordView(view, offset);
      return;
    }
    const words = this.words;
    const first = this.wordBase + (offset >> 2);
    const flags = words[first + FLAGS_WORD_INDEX];
    if ((flags & TYPE_MASK) === STAMPED_TYPE) {
      this.openRecord(view, offset, first);
    } else if (this.open) {
      this.digest = this.lanes ? digestWordsLanes(words, first, this.digest) : digestWords(words, first, this.digest);
    } else {
      return;
    }
    if ((flags & COMMAND_END_BIT) !== 0) this.close();
  }

  /** onRecord through the DataView: a buffer that is not aligned, or a big-endian platform. */
  private onRecordView(view: DataView, offset: number): void {
    if (recordType(view, offset) === RecordType.Stamped) {
      this.openRecord(view, offset, -1);
    } else if (this.open) {
      this.digest = this.lanes ? digestRecordLanes(view, offset, this.digest) : digestRecord(view, offset, this.digest);
    } else {
      return;
    }
    if ((recordFlags(view, offset) & HeaderFlag.CommandEnd) !== 0) this.close();
  }

  /**
   * A Stamped record opens its command's journal record: the store's next record receives its
   * bytes (its CommandEnd bit cleared: the journal stores the header as stamped, and a command
   * without outputs carries the bit on its Stamped record). `first` is the record's first word, -1
   * to copy through the DataView.
   */
  private openRecord(view: DataView, offset: number, first: number): void {
    const seq = recordSeq(view, offset);
    if (this.open) throw new Error(`journal writer: command ${this.openSeq} has no CommandEnd before ${seq}`);
    if (seq !== this.expectedSeq) throw new Error(`journal writer expected sequence ${this.expectedSeq}, got ${seq}`);
    const slot = this.store.reserve(seq);
    if (slot !== this.slot) this.attachSlot(slot);
    const at = this.store.reservedAt;
    this.slotAt = at;
    const slotByte = slot.byteOffset + at;
    if (first >= 0 && LITTLE_ENDIAN && (slotByte & 3) === 0) {
      this.copyStamped(this.words, first, slotByte >> 2);
    } else {
      slot.set(new Uint8Array(view.buffer, view.byteOffset + offset, JOURNAL_DIGEST_OFFSET), at);
      slot[at + 23] &= ~HeaderFlag.CommandEnd;
    }
    this.open = true;
    this.openSeq = seq;
    this.digest = DIGEST_SEED;
    this.lanes = seq >= this.format5From;
  }

  /** Copies the stamped command's words from words[first] to slotWords[to], the flags word without CommandEnd. */
  private copyStamped(words: Int32Array<ArrayBufferLike>, first: number, to: number): void {
    const dst = this.slotWords;
    for (let k = 0; k < STAMPED_WORDS; k++) dst[to + k] = words[first + k];
    dst[to + FLAGS_WORD_INDEX] &= FLAGS_WORD_MASK;
  }

  /** Writes the digest; the checksum field is the store's (sealed with the run). */
  private close(): void {
    this.slotView.setUint32(this.slotAt + JOURNAL_DIGEST_OFFSET, finishDigest(this.digest), true);
    this.appendedSeq = this.openSeq;
    this.expectedSeq = this.openSeq + 1;
    this.open = false;
  }

  private attach(view: DataView): void {
    this.view = view;
    this.aligned = LITTLE_ENDIAN && (view.byteOffset & 3) === 0;
    this.words = this.aligned ? new Int32Array(view.buffer, 0, view.buffer.byteLength >> 2) : new Int32Array(0);
    this.wordBase = view.byteOffset >> 2;
  }

  private attachSlot(slot: Uint8Array): void {
    this.slot = slot;
    this.slotView = new DataView(slot.buffer, slot.byteOffset, slot.byteLength);
    this.slotWords = LITTLE_ENDIAN ? new Int32Array(slot.buffer, 0, slot.buffer.byteLength >> 2) : new Int32Array(0);
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
    // The open command's record is in the store's batch, not yet written: commit only between commands.
    if (this.open) throw new Error(`journal writer: commit inside command ${this.openSeq}`);
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
