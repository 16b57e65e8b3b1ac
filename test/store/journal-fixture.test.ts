// A journal written before the engine was reorganised into rooms (book, funds, spot), before the
// codec was generated from the schema and before routes called the engine through one table,
// replays today to the state its server recorded at its clean stop. The fixture
// test/fixtures/journal-before-rooms.json holds every record and meta key of that journal (two
// accounts, deposits, resting orders, a market order and a limit order that trade, a cancel, a
// cancel-all, a fee-rate change, then a clean stop), written through the real API by the server at
// commit 44ed273 with its default configuration and no speed bump. Recovery checks every record's checksum chain and
// output digest, and at the clean-stop sequence the state hash: any change to the rules, the
// encoding of an output, or the fingerprint of that configuration fails here.
//
// That server's configuration had no borrow/lend pools and no perpetual markets; today's default
// configuration has both (EngineConfig.margin, the *_PERP markets after the spot books), so its
// fingerprint differs. A configuration that only gained margin parameters and perpetual markets is
// the one change a journal accepts (engine/shell/journal.ts): the journal replays under today's
// default configuration, the records it holds under the configuration they were written with
// (today's default without its margin parameters and perpetuals, which has the fingerprint of
// then: an absent key adds nothing to the canonical form), and the journal records the change.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { LmdbJournalStore } from '../../engine/store/journal-store.js';
import { CLEAN_STOP_KEY, CONFIG_KEY, readConfigChange } from '../../engine/store/journal-layout.js';
import { engineConfigFingerprint, recover } from '../../engine/shell/journal.js';

const fixture = JSON.parse(readFileSync(new URL('../fixtures/journal-before-rooms.json', import.meta.url), 'utf8')) as {
  meta: Record<string, string>; records: Array<[number, string]>;
};

describe('a journal written by the earlier layout', () => {
  const dir = mkdtempSync(join(tmpdir(), 'journal-fixture-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("replays under today's default configuration to the state hash its clean stop recorded", async () => {
    const store = new LmdbJournalStore(dir);
    for (const [seq, base64] of fixture.records) store.append(seq, Buffer.from(base64, 'base64'));
    await store.commit();
    for (const [key, value] of Object.entries(fixture.meta)) store.putMetaSync(key, value);
    const config = loadConfig(['--speed-bump-ms', '0'], {}).engine; // today's default
    const { margin, ...withoutPools } = config; // as that server ran: no pools, no perpetual markets
    const previous = { ...withoutPools, markets: withoutPools.markets.filter((m) => m.perp === undefined) };
    expect(margin?.lendPools.length).toBe(4);
    expect(previous.markets.length).toBe(3);
    const fingerprint = engineConfigFingerprint(config);
    expect(fingerprint).not.toBe(fixture.meta.engineConfigSha256);
    expect(engineConfigFingerprint(previous)).toBe(fixture.meta.engineConfigSha256);
    const cleanStop = JSON.parse(fixture.meta[CLEAN_STOP_KEY]) as { seq: number; stateHash: string };
    const recovery = recover(store, config, fingerprint);
    expect(recovery.lastSeq).toBe(fixture.records.length);
    expect(recovery.lastSeq).toBe(cleanStop.seq);
    expect(recovery.replayed).toBe(fixture.records.length);
    expect(recovery.exchange.hasStateHash(cleanStop.stateHash)).toBe(true);
    expect(recovery.exchange.stateHash()).toBe(cleanStop.stateHash);
    // The change is recorded: today's fingerprint from the record after the fixture's last on.
    expect(recovery.configGainedMarginAt).toBe(cleanStop.seq);
    expect(store.getMeta(CONFIG_KEY)).toBe(fingerprint);
    expect(readConfigChange(store)).toEqual({ seq: cleanStop.seq, previousSha256: fixture.meta.engineConfigSha256 });
    // A restart under today's configuration accepts the journal as it is now, changing nothing.
    const again = recover(store, config, fingerprint);
    expect(again.configGainedMarginAt).toBeNull();
    expect(again.exchange.stateHash()).toBe(cleanStop.stateHash);
    expect(readConfigChange(store)).toEqual({ seq: cleanStop.seq, previousSha256: fixture.meta.engineConfigSha256 });
    await store.close();
  });
});
