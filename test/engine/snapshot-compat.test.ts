// Snapshots written before markets kept a guarded reference price (format 2) still load: the
// fixture test/fixtures/engine-snapshot-v2.json was exported by that engine from the script in
// helpers/legacy-snapshot-scenario.ts. Loading it gives a valid state that carries the recorded
// (format-2) state hash, each banded market's guarded reference starting at its last trade price;
// replaying the same script today reaches a state with that hash too, and the loaded engine goes
// on trading and exports and re-imports in today's format.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Exchange } from '../../engine/core/exchange.js';
import { exportSnapshot, importSnapshot } from '../../engine/core/snapshot.js';
import { CollectingSink, EngineHarness, M1, cmd, tradesOf } from '../helpers/engine-harness.js';
import { legacyScenarioConfig, runLegacyScenario } from '../helpers/legacy-snapshot-scenario.js';
import { commandFromSlot } from '../../engine/bus/codec.js';
import { newCommandSlot } from '../../engine/bus/types.js';

const fixture = JSON.parse(readFileSync(new URL('../fixtures/engine-snapshot-v2.json', import.meta.url), 'utf8')) as {
  formatVersion: number; seq: number; timeUs: number; stateHash: string; payloadBase64: string;
};
const payload = new Uint8Array(Buffer.from(fixture.payloadBase64, 'base64'));

describe('format-2 engine snapshots', () => {
  it('load into today\'s engine with their recorded state hash', () => {
    const exchange = new Exchange(legacyScenarioConfig());
    importSnapshot(exchange, payload);
    exchange.validateInvariants();
    expect(exchange.hasStateHash(fixture.stateHash)).toBe(true);
    expect(exchange.stateHash()).not.toBe(fixture.stateHash); // today's hash also covers the guarded reference
    const book = exchange['s'].books[M1];
    expect(book.bandReferenceTicks).toBeGreaterThan(0);
    expect([book.guardedReferenceTicks, book.guardedReferenceTimeUs]).toEqual([book.bandReferenceTicks, fixture.timeUs]);
  });

  it('match a replay of the same commands by today\'s engine', () => {
    const h = new EngineHarness(legacyScenarioConfig());
    runLegacyScenario(h);
    expect(h.seq).toBe(fixture.seq);
    expect(h.exchange.hasStateHash(fixture.stateHash)).toBe(true);
  });

  it('go on trading and re-export in today\'s format', () => {
    const exchange = new Exchange(legacyScenarioConfig());
    importSnapshot(exchange, payload);
    const sink = new CollectingSink();
    const place = commandFromSlot({ ...newCommandSlot(), ...cmd.place(1, 'ask', 280, 3, { market: M1 }), frontId: 3, requestId: 900 });
    exchange.apply(place, fixture.seq + 1, fixture.timeUs + 5_000, sink);
    exchange.apply(commandFromSlot({ ...newCommandSlot(), ...cmd.tick() }), fixture.seq + 2, fixture.timeUs + 10_000, sink); // past the speed bump
    exchange.validateInvariants();
    expect(tradesOf(sink.records).length).toBeGreaterThan(0);
    const again = new Exchange(legacyScenarioConfig());
    importSnapshot(again, exportSnapshot(exchange));
    again.validateInvariants();
    expect(again.stateHash()).toBe(exchange.stateHash());
  });
});
