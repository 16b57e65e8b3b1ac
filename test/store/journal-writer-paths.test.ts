// The journal writer reads the outbound ring as 32-bit words and writes each record in place into
// the store's buffer when both are aligned on a little-endian platform, and goes through DataViews
// otherwise (a ring view or a store buffer at an odd offset). Whichever way, the stored records —
// stamped command, output digest, chained checksum — are the same bytes, and recovery accepts them.

import { describe, expect, it } from 'vitest';
import { SLOT_BYTES } from '../../engine/bus/codec.js';
import { JournalWriter } from '../../engine/shell/journal-writer.js';
import { engineConfigFingerprint, recover } from '../../engine/shell/journal.js';
import { FaultyJournalStore } from '../helpers/faulty-journal-store.js';
import { randomConfig } from '../helpers/engine-random.js';
import { sequenceRandomStream } from '../helpers/sequenced-stream.js';

const SEED = 33;
const COMMANDS = 300;

describe('journal writer read and write paths', () => {
  it('stores the same records through words and through DataViews, and recovery accepts them', async () => {
    const config = randomConfig(SEED);
    const stores = [new FaultyJournalStore(), new FaultyJournalStore(), new FaultyJournalStore()];
    stores[2].oddBuffers = true;
    // Recovery of an empty journal marks its format and configuration, as at a first start.
    for (const store of stores) recover(store, config, engineConfigFingerprint(config));
    const writers = stores.map((store) => new JournalWriter(store, 0, 0));
    // Each record copied to byte 1 of a buffer: a ring view the writer must read through DataView.
    const odd = new Uint8Array(SLOT_BYTES + 1);
    const oddView = new DataView(odd.buffer, 1, SLOT_BYTES);
    const { exchange, seq } = await sequenceRandomStream(
      config,
      SEED,
      COMMANDS,
      (ring, offset) => {
        writers[0].onRecord(ring.view, offset);
        odd.set(ring.bytes.subarray(offset, offset + SLOT_BYTES), 1);
        writers[1].onRecord(oddView, 0);
        writers[2].onRecord(ring.view, offset);
      },
      async () => {
        for (const writer of writers) await writer.commit();
      },
    );
    expect(seq).toBeGreaterThan(100);
    const [words, ...others] = stores.map((store) => [...store.disk].sort((a, b) => a[0] - b[0]).map(([s, value]) => [s, Buffer.from(value).toString('hex')]));
    expect(words).toHaveLength(seq);
    for (const other of others) expect(other).toEqual(words);
    for (const store of stores) {
      const recovered = recover(store, config, engineConfigFingerprint(config));
      expect(recovered.lastSeq).toBe(seq);
      expect(recovered.exchange.stateHash()).toBe(exchange.stateHash());
    }
  });
});
