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
// That server's configuration had no borrow/lend pools: today's default configuration has them
// (EngineConfig.margin), so its fingerprint differs and recovery would rightly refuse the journal.
// The test replays under the configuration the journal was written with, today's default without
// its margin parameters; a configuration without them has the fingerprint it had then (an absent
// key adds nothing to the canonical form).

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { LmdbJournalStore } from '../engine/store/journal-store.js';
import { CLEAN_STOP_KEY } from '../engine/store/journal-layout.js';
import { engineConfigFingerprint, recover } from '../engine/shell/journal.js';

const fixture = JSON.parse(readFileSync(new URL('./fixtures/journal-before-rooms.json', import.meta.url), 'utf8')) as {
  meta: Record<string, string>; records: Array<[number, string]>;
};

describe('a journal written by the earlier layout', () => {
  const dir = mkdtempSync(join(tmpdir(), 'journal-fixture-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('replays today to the state hash its clean stop recorded', async () => {
    const store = new LmdbJournalStore(dir);
    for (const [seq, base64] of fixture.records) store.append(seq, Buffer.from(base64, 'base64'));
    await store.commit();
    for (const [key, value] of Object.entries(fixture.meta)) store.putMetaSync(key, value);
    const { margin, ...config } = loadConfig(['--speed-bump-ms', '0'], {}).engine; // as that server ran: no pools
    expect(margin?.lendPools.length).toBe(4);
    expect(engineConfigFingerprint({ ...config, margin })).not.toBe(fixture.meta.engineConfigSha256);
    const fingerprint = engineConfigFingerprint(config);
    expect(fingerprint).toBe(fixture.meta.engineConfigSha256);
    const cleanStop = JSON.parse(fixture.meta[CLEAN_STOP_KEY]) as { seq: number; stateHash: string };
    const recovery = recover(store, config, fingerprint);
    expect(recovery.lastSeq).toBe(fixture.records.length);
    expect(recovery.lastSeq).toBe(cleanStop.seq);
    expect(recovery.replayed).toBe(fixture.records.length);
    expect(recovery.exchange.hasStateHash(cleanStop.stateHash)).toBe(true);
    expect(recovery.exchange.stateHash()).toBe(cleanStop.stateHash);
    await store.close();
  });
});
