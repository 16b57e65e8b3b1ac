// The journal writer: turns the outbound record stream into journal records and batches.
//
// It sees every outbound record in ring order. A Stamped record opens a command: the store adds
// the command's JournalRecord to its open batch (JournalStore.reserve) and the writer copies the
// stamped bytes straight into it, running the checksum (crc32 chained from the previous record)
// over them as it copies, and an output digest starts; every record after it is folded into the
// digest (digest.ts); the record carrying HeaderFlag.CommandEnd (the Stamped one itself when the
// command wrote nothing) closes it: the digest is written, and the checksum, carried on over the
// digest's bytes. Records between a CommandEnd and the next Stamped (query answers) belong to no
// command and are skipped. The store stores a batch's records as they are at endBatch or commit,
// so both come only between commands (commit() refuses inside one).
//
// The hot path reads the ring and writes the record as 32-bit words (a little-endian platform's
// Int32Array over each buffer), as the digest does; a buffer off a 4-byte boundary, or a big-endian
// platform, goes through DataViews instead, to the same bytes (test/store/journal-writer-paths).
//
// commit() makes the batch durable (JournalStore.commit: committed and flushed) and only then
// advances durableSeq, which the journal worker publishes as seqDurable. A failed write or
// flush rejects with JournalWriteError and leaves durableSeq where it was: the worker dies and the
// process stops, never acknowledging ahead of the disk.

import { CRC_SLICES, JOURNAL_CHECKSUM_OFFSET, JOURNAL_DIGEST_OFFSET, JOURNAL_RECORD_BYTES, LITTLE_ENDIAN, crc32View, recordFlags, recordSeq, recordType } from '../bus/codec.js';
import { HeaderFlag, RecordType } from '../bus/types.js';
import { DIGEST_SEED, FLAGS_WORD_INDEX, FLAGS_WORD_MASK, digestRecord, digestWords, finishDigest } from './digest.js';
import { JournalWriteError } from './journal.js';
import type { JournalStore } from '../store/journal-store.js';

/** What the writer uses of its store: the open batch's next record, and the commit. */
export type JournalWriterStore = Pick<JournalStore, 'reserve' | 'reservedAt' | 'commit'>;

/** Words of the stamped command at the start of a journal record (the checksum's first part). */
const STAMPED_WORDS = JOURNAL_DIGEST_OFFSET >> 2;
if (JOURNAL_DIGEST_OFFSET % 8 !== 0 || JOURNAL_CHECKSUM_OFFSET !== JOURNAL_DIGEST_OFFSET + 4 || JOURNAL_RECORD_BYTES !== JOURNAL_CHECKSUM_OFFSET + 4) {
  throw new Error('journal writer: the record layout is not stamped command (8-byte multiple), digest, checksum');
}
if (FLAGS_WORD_INDEX !== 5 || (STAMPED_WORDS - 6) % 4 !== 0) throw new Error('journal writer: the stamped record is not a header of six words and pairs of 8-byte words');
const COMMAND_END_BIT = HeaderFlag.CommandEnd << 24;
const STAMPED_TYPE = RecordType.Stamped << 16;
const TYPE_MASK = 0xff << 16;

/** Eight bytes into the crc register: `a` the first four (already xored with the register), `b` the next four. */
function crcStep(t: Int32Array, a: number, b: number): number {
  return t[1792 + (a & 0xff)] ^ t[1536 + ((a >>> 8) & 0xff)] ^ t[1280 + ((a >>> 16) & 0xff)] ^ t[1024 + (a >>> 24)] ^
    t[768 + (b & 0xff)] ^ t[512 + ((b >>> 8) & 0xff)] ^ t[256 + ((b >>> 16) & 0xff)] ^ t[b >>> 24];
}

export class JournalWriter {
  /** Highest sequence on disk (flushed). */
  durableSeq: number;
  /** Highest sequence appended to the open batch. */
  appendedSeq: number;
  /** The checksum of the last closed record (unsigned). */
  private prevChecksum: number;
  private expectedSeq: number;
  private open = false;
  private openSeq = 0;
  private digest = DIGEST_SEED;
  /** The crc register (not inverted) after the open record's stamped bytes. */
  private crc = 0;
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
    this.prevChecksum = lastChecksum;
    this.expectedSeq = lastSeq + 1;
  }

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
      this.digest = digestWords(words, first, this.digest);
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
      this.digest = digestRecord(view, offset, this.digest);
    } else {
      return;
    }
    if ((recordFlags(view, offset) & HeaderFlag.CommandEnd) !== 0) this.close();
  }

  /**
   * A Stamped record opens its command's journal record: the store's next record receives its
   * bytes (its CommandEnd bit cleared: the journal stores the header as stamped, and a command
   * without outputs carries the bit on its Stamped record) and the checksum runs over them now.
   * `first` is the record's first word, -1 to copy through the DataView.
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
      this.crc = this.copyStamped(this.words, first, slotByte >> 2, ~this.prevChecksum);
    } else {
      slot.set(new Uint8Array(view.buffer, view.byteOffset + offset, JOURNAL_DIGEST_OFFSET), at);
      slot[at + 23] &= ~HeaderFlag.CommandEnd;
      this.crc = ~crc32View(this.slotView, at, JOURNAL_DIGEST_OFFSET, this.prevChecksum);
    }
    this.open = true;
    this.openSeq = seq;
    this.digest = DIGEST_SEED;
  }

  /**
   * Copies the stamped command's words from words[first] to slotWords[to], the flags word without
   * CommandEnd, folding them into the crc register `c` (slice-by-8, as crc32View): returns it.
   * Sixteen bytes a pass, the header's first three pairs apart (the flags word is the sixth).
   */
  private copyStamped(words: Int32Array<ArrayBufferLike>, first: number, to: number, c: number): number {
    const dst = this.slotWords;
    const t = CRC_SLICES;
    const mask = FLAGS_WORD_MASK;
    let a = words[first];
    let b = words[first + 1];
    let d = words[first + 2];
    let e = words[first + 3];
    dst[to] = a;
    dst[to + 1] = b;
    dst[to + 2] = d;
    dst[to + 3] = e;
    c = crcStep(t, c ^ a, b);
    c = crcStep(t, c ^ d, e);
    a = words[first + 4];
    b = words[first + FLAGS_WORD_INDEX] & mask;
    dst[to + 4] = a;
    dst[to + 5] = b;
    c = crcStep(t, c ^ a, b);
    for (let k = 6; k < STAMPED_WORDS; k += 4) {
      a = words[first + k];
      b = words[first + k + 1];
      d = words[first + k + 2];
      e = words[first + k + 3];
      dst[to + k] = a;
      dst[to + k + 1] = b;
      dst[to + k + 2] = d;
      dst[to + k + 3] = e;
      c = crcStep(t, c ^ a, b);
      c = crcStep(t, c ^ d, e);
    }
    return c;
  }

  /** Writes the digest and the checksum (the crc carried on over the digest's four bytes). */
  private close(): void {
    const digest = finishDigest(this.digest);
    const t = CRC_SLICES;
    const a = this.crc ^ digest;
    const checksum = ~(t[768 + (a & 0xff)] ^ t[512 + ((a >>> 8) & 0xff)] ^ t[256 + ((a >>> 16) & 0xff)] ^ t[a >>> 24]) >>> 0;
    this.slotView.setUint32(this.slotAt + JOURNAL_DIGEST_OFFSET, digest, true);
    this.slotView.setUint32(this.slotAt + JOURNAL_CHECKSUM_OFFSET, checksum, true);
    this.prevChecksum = checksum;
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
