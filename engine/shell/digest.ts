// The output digest of one sequenced command: a 32-bit hash of every outbound record the engine
// wrote while applying it, in order. The journal worker computes it from the ring as the records
// pass and stores it in the command's JournalRecord; replay recomputes it from the outputs the
// rebuilt engine writes and stops with JournalOutputDigestError on a difference. It therefore
// proves, record by record, that replay produces what the live engine produced (the same fills,
// ids, balances and depth), not merely the same final state.
//
// Each record contributes its encoded bytes (the struct size of its type, never the stale tail
// of a ring slot) as 32-bit little-endian words, with HeaderFlag.CommandEnd masked out (the shell
// sets it on whichever record happens to be last). A record type that is no engine output (the
// Stamped record) or that this build does not know contributes its header only (BYTES_BY_TYPE,
// generated from the schema's kind table). Journals of format 5 fold the words in two lanes
// (digestWordsLanes: each word one xor, one multiply and one rotate, into the lane of its parity,
// the lanes joined at each record's end); formats 2 to 4 fold them in one chain with murmur3's
// word mix (digestWords), which replay keeps for the records written before format 5. Neither is
// cryptographic, but every step of a lane, and the join in each lane, is a bijection, so any change
// of a single word changes the digest; a word costs a nanosecond or two, off the engine thread.

import { LITTLE_ENDIAN, recordType } from '../bus/codec.js';
import { BYTES_BY_TYPE, HeaderFlag } from '../bus/types.js';

/** The digest of a command with no outputs. */
export const DIGEST_SEED = 0x6a09e667;

/** Word of the header holding frontId (u16), type (u8) and flags (u8, the top byte). */
const FLAGS_WORD = 20;
export const FLAGS_WORD_MASK = ~(HeaderFlag.CommandEnd << 24);

/** Folds the record at `offset` into `digest`; returns the new digest (an int32). */
export function digestRecord(view: DataView, offset: number, digest: number): number {
  const bytes = BYTES_BY_TYPE[recordType(view, offset)];
  let h = digest | 0;
  for (let at = 0; at < bytes; at += 4) {
    let k = view.getUint32(offset + at, true);
    if (at === FLAGS_WORD) k &= FLAGS_WORD_MASK;
    h = mix(h, k);
  }
  return h;
}

function mix(h: number, word: number): number {
  let k = Math.imul(word, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  k = Math.imul(k, 0x1b873593);
  h ^= k;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

/** Index of the flags word within a record, in 32-bit words; the record type is its third byte. */
export const FLAGS_WORD_INDEX = FLAGS_WORD >> 2;
/** Words of a record header; the flags word is its last. */
const HEADER_WORDS = FLAGS_WORD_INDEX + 1;

/**
 * Folds the record whose first word is words[first] into `digest`, as digestRecord does, reading
 * the record as 32-bit words: `words` is a little-endian platform's Int32Array over the record's
 * buffer (the caller checks both). Returns the new digest (an int32).
 */
export function digestWords(words: Int32Array<ArrayBufferLike>, first: number, digest: number): number {
  const flags = words[first + FLAGS_WORD_INDEX];
  // Every record is at least its header (24 bytes: five words, then the flags word).
  const end = first + (BYTES_BY_TYPE[(flags >>> 16) & 0xff] >> 2);
  let h = mix(mix(mix(mix(mix(digest | 0, words[first]), words[first + 1]), words[first + 2]), words[first + 3]), words[first + 4]);
  h = mix(h, flags & FLAGS_WORD_MASK);
  // Two words a pass (records are whole 8-byte words): half the loop's checks per word.
  let at = first + HEADER_WORDS;
  for (; at + 1 < end; at += 2) h = mix(mix(h, words[at]), words[at + 1]);
  return at < end ? mix(h, words[at]) : h;
}

/** The second lane's start: the digest so far, told apart from the first lane's. */
const LANE_B = 0x5bd1e995;

/** One word into a lane: xor, an odd multiply, a rotate (each a bijection of the lane). */
function lane(h: number, word: number): number {
  const k = Math.imul(h ^ word, 0x9e3779b1);
  return (k << 15) | (k >>> 17);
}

/** The lanes joined: a bijection of each lane with the other fixed. */
function joinLanes(a: number, b: number): number {
  return a ^ Math.imul((b << 16) | (b >>> 16), 0x85ebca6b);
}

/**
 * Folds the record whose first word is words[first] into `digest` as journal format 5 does: its
 * words (the flags word without CommandEnd) alternately into two lanes started from `digest`,
 * joined at its end. Records are whole 8-byte words, so each lane takes every other word. Returns
 * the new digest (an int32). `words` as for digestWords.
 */
export function digestWordsLanes(words: Int32Array<ArrayBufferLike>, first: number, digest: number): number {
  const flags = words[first + FLAGS_WORD_INDEX];
  const end = first + (BYTES_BY_TYPE[(flags >>> 16) & 0xff] >> 2);
  let a = lane(lane(lane(digest | 0, words[first]), words[first + 2]), words[first + 4]);
  let b = lane(lane(lane(digest ^ LANE_B, words[first + 1]), words[first + 3]), flags & FLAGS_WORD_MASK);
  let at = first + HEADER_WORDS;
  for (; at + 1 < end; at += 2) {
    a = lane(a, words[at]);
    b = lane(b, words[at + 1]);
  }
  if (at < end) a = lane(a, words[at]);
  return joinLanes(a, b);
}

/** digestWordsLanes through a DataView: the same digest of the record at `offset`. */
export function digestRecordLanes(view: DataView, offset: number, digest: number): number {
  const bytes = BYTES_BY_TYPE[recordType(view, offset)];
  let a = digest | 0;
  let b = digest ^ LANE_B;
  let at = 0;
  for (; at + 4 < bytes; at += 8) {
    a = lane(a, view.getUint32(offset + at, true));
    const k = view.getUint32(offset + at + 4, true);
    b = lane(b, at + 4 === FLAGS_WORD ? k & FLAGS_WORD_MASK : k);
  }
  if (at < bytes) a = lane(a, view.getUint32(offset + at, true));
  return joinLanes(a, b);
}

/**
 * The same digests as digestRecord (`lanes` false) and digestRecordLanes (`lanes` true), reading
 * the record through 32-bit words of its buffer rather than a DataView (several times faster):
 * `words` views the buffer of `view` from its start.
 */
export class RecordDigester {
  private view: DataView | null = null;
  private words: Int32Array<ArrayBufferLike> = new Int32Array(0);
  private wordBase = 0;
  private aligned = false;

  /** Folds the record at `offset` of `view` into `digest`; returns the new digest (an int32). */
  fold(view: DataView, offset: number, digest: number, lanes: boolean): number {
    if (view !== this.view) this.attach(view);
    if (!this.aligned || (offset & 3) !== 0) return lanes ? digestRecordLanes(view, offset, digest) : digestRecord(view, offset, digest);
    const first = this.wordBase + (offset >> 2);
    return lanes ? digestWordsLanes(this.words, first, digest) : digestWords(this.words, first, digest);
  }

  private attach(view: DataView): void {
    this.view = view;
    this.aligned = LITTLE_ENDIAN && (view.byteOffset & 3) === 0;
    if (this.aligned) {
      this.words = new Int32Array(view.buffer, 0, view.buffer.byteLength >> 2);
      this.wordBase = view.byteOffset >> 2;
    }
  }
}

/** The stored form of a finished digest (unsigned). */
export function finishDigest(digest: number): number {
  let h = digest ^ (digest >>> 16);
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
