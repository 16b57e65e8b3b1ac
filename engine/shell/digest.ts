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
// generated from the schema's kind table). The word mix is murmur3's: not cryptographic, but any
// change of a single bit changes the digest, and it costs a few nanoseconds per word, off the
// engine thread.

import { recordType } from '../bus/codec.js';
import { BYTES_BY_TYPE, HeaderFlag } from '../bus/types.js';

/** The digest of a command with no outputs. */
export const DIGEST_SEED = 0x6a09e667;

/** Word of the header holding frontId (u16), type (u8) and flags (u8, the top byte). */
const FLAGS_WORD = 20;
const FLAGS_WORD_MASK = ~(HeaderFlag.CommandEnd << 24);

/** Folds the record at `offset` into `digest`; returns the new digest (an int32). */
export function digestRecord(view: DataView, offset: number, digest: number): number {
  const bytes = BYTES_BY_TYPE[recordType(view, offset)];
  let h = digest | 0;
  for (let at = 0; at < bytes; at += 4) {
    let k = view.getUint32(offset + at, true);
    if (at === FLAGS_WORD) k &= FLAGS_WORD_MASK;
    k = Math.imul(k, 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, 0x1b873593);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  return h;
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
