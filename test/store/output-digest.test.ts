// The output digest of journal format 5 (engine/shell/digest.ts digestWordsLanes): through words
// and through a DataView it is the same number, it sees every word of a record's encoded size (and
// nothing past it), the CommandEnd bit is no part of it, and it is not the digest of formats 2 to 4
// (digestWords), which replay keeps for the records written before format 5.

import { describe, expect, it } from 'vitest';
import { BYTES_BY_TYPE, HeaderFlag, RecordType } from '../../engine/bus/types.js';
import { DIGEST_SEED, FLAGS_WORD_INDEX, digestRecord, digestRecordLanes, digestWords, digestWordsLanes } from '../../engine/shell/digest.js';
import { prng } from '../helpers/engine-harness.js';

const TYPES = [RecordType.Result, RecordType.Order, RecordType.Trade, RecordType.Balance, RecordType.Depth, RecordType.Position, RecordType.Stamped];

/** A record of `type` of random words at word `first` of `words` (its flags word names the type). */
function randomRecord(words: Int32Array, first: number, type: RecordType, random: () => number): void {
  for (let k = 0; k < 64; k++) words[first + k] = Math.floor(random() * 2 ** 32) | 0;
  words[first + FLAGS_WORD_INDEX] = (words[first + FLAGS_WORD_INDEX] & ~(0xff << 16) & ~(HeaderFlag.CommandEnd << 24)) | (type << 16);
}

describe('output digest of journal format 5', () => {
  it('is the same through words and through a DataView, changes with every word of the record and with none past it', () => {
    const random = prng(5);
    const words = new Int32Array(128);
    const view = new DataView(words.buffer);
    for (const type of TYPES) {
      randomRecord(words, 8, type, random);
      const size = BYTES_BY_TYPE[type] >> 2;
      const seed = DIGEST_SEED ^ type;
      const digest = digestWordsLanes(words, 8, seed);
      expect(digestRecordLanes(view, 32, seed), RecordType[type]).toBe(digest);
      expect(digestWords(words, 8, seed), `${RecordType[type]}: the murmur chain of formats 2 to 4 differs`).not.toBe(digest);
      expect(digestRecord(view, 32, seed)).toBe(digestWords(words, 8, seed));
      for (let k = 0; k < size + 4; k++) {
        if (k === FLAGS_WORD_INDEX) continue; // the type lives here
        const kept = words[8 + k];
        words[8 + k] = kept ^ (1 << (k % 32));
        const changed = digestWordsLanes(words, 8, seed);
        if (k < size) expect(changed, `${RecordType[type]} word ${k}`).not.toBe(digest);
        else expect(changed, `${RecordType[type]} word ${k}, past the record`).toBe(digest);
        expect(digestRecordLanes(view, 32, seed)).toBe(changed);
        words[8 + k] = kept;
      }
      // The flags word: any other bit changes it, CommandEnd (set on whichever record is last) does not.
      words[8 + FLAGS_WORD_INDEX] ^= HeaderFlag.Last << 24;
      expect(digestWordsLanes(words, 8, seed)).not.toBe(digest);
      words[8 + FLAGS_WORD_INDEX] ^= (HeaderFlag.Last | HeaderFlag.CommandEnd) << 24;
      expect(digestWordsLanes(words, 8, seed)).toBe(digest);
      expect(digestRecordLanes(view, 32, seed)).toBe(digest);
      words[8 + FLAGS_WORD_INDEX] ^= HeaderFlag.CommandEnd << 24;
      // A different digest before the record gives a different digest after it.
      expect(digestWordsLanes(words, 8, seed ^ 1)).not.toBe(digest);
    }
  });
});
