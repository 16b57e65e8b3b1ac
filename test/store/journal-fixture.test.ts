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
// a change a journal accepts (engine/shell/journal.ts): the journal replays under today's
// default configuration, the records it holds under the configuration they were written with
// (today's default without its margin parameters and perpetuals, their realization at mark and
// the accounts' position limit, which has the fingerprint of
// then: an absent key adds nothing to the canonical form), and the journal records the change.
// The same journal also upgrades in two steps (margin parameters, then perpetuals: a chain of two
// changes at the same sequence), and replays with the single-change meta a server that accepted
// only one change left behind.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { LmdbJournalStore, seqKey } from '../../engine/store/journal-store.js';
import { CLEAN_STOP_KEY, CONFIG_CHANGES_KEY, CONFIG_CHANGE_KEY, CONFIG_KEY, readConfigChanges } from '../../engine/store/journal-layout.js';
import { engineConfigFingerprint, recover } from '../../engine/shell/journal.js';

const fixture = JSON.parse(readFileSync(new URL('../fixtures/journal-before-rooms.json', import.meta.url), 'utf8')) as {
  meta: Record<string, string>; records: Array<[number, string]>;
};

const config = loadConfig(['--speed-bump-ms', '0'], {}).engine; // today's default
const cleanStop = JSON.parse(fixture.meta[CLEAN_STOP_KEY]) as { seq: number; stateHash: string };

/** A journal store in a fresh directory holding the fixture's records and meta. */
async function fixtureStore(dirs: string[]): Promise<LmdbJournalStore> {
  const dir = mkdtempSync(join(tmpdir(), 'journal-fixture-'));
  dirs.push(dir);
  const store = new LmdbJournalStore(dir);
  // As that server stored them (format 2): one record per value, each with its own chained checksum.
  for (const [seq, base64] of fixture.records) store.records.putSync(seqKey(seq), Buffer.from(base64, 'base64'));
  for (const [key, value] of Object.entries(fixture.meta)) store.putMetaSync(key, value);
  return store;
}

describe('a journal written by the earlier layout', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it("replays under today's default configuration to the state hash its clean stop recorded", async () => {
    const store = await fixtureStore(dirs);
    // As that server ran: no pools, no perpetual markets (nor their realization at mark).
    const { margin, realizePnlIntervalUs: _realize, realizeStepPositions: _step, fundingStepPositions: _fundingStep, positionLimitUnits: _limit, interestStepAccounts: _review, ...withoutPools } = config;
    const previous = { ...withoutPools, markets: withoutPools.markets.filter((m) => m.perp === undefined) };
    expect(margin?.lendPools.length).toBe(4);
    expect(previous.markets.length).toBe(3);
    const fingerprint = engineConfigFingerprint(config);
    expect(fingerprint).not.toBe(fixture.meta.engineConfigSha256);
    expect(engineConfigFingerprint(previous)).toBe(fixture.meta.engineConfigSha256);
    const recovery = recover(store, config, fingerprint);
    expect(recovery.lastSeq).toBe(fixture.records.length);
    expect(recovery.lastSeq).toBe(cleanStop.seq);
    expect(recovery.replayed).toBe(fixture.records.length);
    expect(recovery.exchange.hasStateHash(cleanStop.stateHash)).toBe(true);
    expect(recovery.exchange.stateHash()).toBe(cleanStop.stateHash);
    // The change is recorded: today's fingerprint from the record after the fixture's last on.
    expect(recovery.configGainedMarginAt).toBe(cleanStop.seq);
    expect(store.getMeta(CONFIG_KEY)).toBe(fingerprint);
    expect(readConfigChanges(store)).toEqual([{ seq: cleanStop.seq, previousSha256: fixture.meta.engineConfigSha256 }]);
    // A restart under today's configuration accepts the journal as it is now, changing nothing.
    const again = recover(store, config, fingerprint);
    expect(again.configGainedMarginAt).toBeNull();
    expect(again.exchange.stateHash()).toBe(cleanStop.stateHash);
    expect(readConfigChanges(store)).toEqual([{ seq: cleanStop.seq, previousSha256: fixture.meta.engineConfigSha256 }]);
    await store.close();
  });
});

describe('the earlier journal upgraded in steps', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  const { realizePnlIntervalUs: _realize, realizeStepPositions: _step, fundingStepPositions: _fundingStep, positionLimitUnits: _limit, ...withoutRealization } = config;
  const spotMargin = { ...withoutRealization, markets: config.markets.filter((m) => m.perp === undefined) };
  const { margin: _margin, interestStepAccounts: _review, ...spot } = spotMargin;

  it('records margin parameters, then perpetuals, as a chain of two, and replays through both', async () => {
    const store = await fixtureStore(dirs);
    expect(engineConfigFingerprint(spot)).toBe(fixture.meta.engineConfigSha256);
    const first = recover(store, spotMargin, engineConfigFingerprint(spotMargin));
    expect(first.configGainedMarginAt).toBe(cleanStop.seq);
    expect(store.getMeta(CONFIG_CHANGES_KEY)).toBeUndefined(); // a chain of one keeps the single-change key
    const second = recover(store, config, engineConfigFingerprint(config));
    expect(second.configGainedMarginAt).toBe(cleanStop.seq);
    expect(second.exchange.stateHash()).toBe(cleanStop.stateHash);
    const chain = [
      { seq: cleanStop.seq, previousSha256: fixture.meta.engineConfigSha256 },
      { seq: cleanStop.seq, previousSha256: engineConfigFingerprint(spotMargin) },
    ];
    expect(readConfigChanges(store)).toEqual(chain);
    expect(JSON.parse(store.getMeta(CONFIG_CHANGES_KEY)!)).toEqual(chain);
    expect(store.getMeta(CONFIG_KEY)).toBe(engineConfigFingerprint(config));
    const again = recover(store, config, engineConfigFingerprint(config));
    expect(again.configGainedMarginAt).toBeNull();
    expect(again.exchange.stateHash()).toBe(cleanStop.stateHash);
    expect(readConfigChanges(store)).toEqual(chain);
    await store.close();
  });

  it('replays with the single-change meta a server that accepted one change wrote', async () => {
    const store = await fixtureStore(dirs);
    const legacy = { seq: cleanStop.seq, previousSha256: fixture.meta.engineConfigSha256 };
    store.putMetaSync(CONFIG_CHANGE_KEY, JSON.stringify(legacy));
    store.putMetaSync(CONFIG_KEY, engineConfigFingerprint(config));
    const recovery = recover(store, config, engineConfigFingerprint(config));
    expect(recovery.configGainedMarginAt).toBeNull();
    expect(recovery.replayed).toBe(fixture.records.length);
    expect(recovery.exchange.stateHash()).toBe(cleanStop.stateHash);
    expect(readConfigChanges(store)).toEqual([legacy]);
    expect(store.getMeta(CONFIG_CHANGES_KEY)).toBeUndefined();
    await store.close();
  });
});
