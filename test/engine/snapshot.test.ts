// Snapshot export/import of the engine core (engine/core/snapshot.ts): replay equality. Run a
// seeded random command stream, snapshot at a random point, load the snapshot into a fresh engine
// and run the rest there: the same outputs, record for record, and the same state hash as an
// engine that ran the whole stream; the export of a restored engine is byte-identical; damaged
// bytes are refused.

import { describe, expect, it } from 'vitest';
import { commandFromSlot } from '../../engine/bus/codec.js';
import { Exchange } from '../../engine/core/exchange.js';
import { exportSnapshot, importSnapshot, SnapshotFormatError } from '../../engine/core/snapshot.js';
import { CollectingSink, EngineHarness, prng, randomInt, replay } from '../helpers/engine-harness.js';
import { randomConfig, runRandomStream } from '../helpers/engine-random.js';

const SEEDS = [1, 2, 3, 4, 5, 6, 7, 8];

describe('engine snapshots: replay equality', () => {
  for (const seed of SEEDS) {
    it(`seed ${seed}: snapshot + the rest of the stream = the whole stream`, () => {
      const config = randomConfig(seed);
      const h = new EngineHarness(config);
      runRandomStream(h, seed, 1500);
      const stream = h.stream;
      const whole = replay(config, stream);
      const random = prng(seed * 7919);
      for (let trial = 0; trial < 3; trial++) {
        const cut = randomInt(random, 1, stream.length - 1);
        const before = replay(config, stream.slice(0, cut));
        const bytes = exportSnapshot(before.exchange);
        expect(exportSnapshot(before.exchange)).toEqual(bytes); // deterministic

        const restored = new Exchange(config);
        importSnapshot(restored, bytes);
        restored.validateInvariants();
        expect(restored.stateHash()).toBe(before.exchange.stateHash());
        expect(exportSnapshot(restored)).toEqual(bytes);

        const sink = new CollectingSink();
        for (const { command, seq, timeUs } of stream.slice(cut)) restored.apply(commandFromSlot(command), seq, timeUs, sink);
        expect(sink.records).toEqual(whole.records.slice(before.records.length));
        expect(restored.stateHash()).toBe(whole.exchange.stateHash());
      }
    });
  }

  it('refuses truncated, foreign and non-fresh imports', () => {
    const config = randomConfig(3);
    const h = new EngineHarness(config);
    runRandomStream(h, 3, 300);
    const bytes = exportSnapshot(h.exchange);
    expect(() => importSnapshot(new Exchange(config), bytes.subarray(0, bytes.length - 9))).toThrow(SnapshotFormatError);
    const foreign = bytes.slice();
    foreign[0] ^= 1;
    expect(() => importSnapshot(new Exchange(config), foreign)).toThrow(SnapshotFormatError);
    expect(() => importSnapshot(h.exchange, bytes)).toThrow(SnapshotFormatError);
  });
});
