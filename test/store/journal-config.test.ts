// A journal replays to the same state only under the engine configuration it was written with,
// so a restart with a different one (here: another speed bump) must stop with a named error and
// write nothing, and the original configuration must still start and show the same state. The
// changes accepted, a configuration that only gained margin parameters or perpetual markets after
// its spot ones, one after the other (engine/shell/journal.ts, test/store/journal-upgrade.test.ts,
// test/store/journal-chain.test.ts), do not open the door to any other: a fee, a market's tick, the
// margin parameters themselves changed or removed beside it, or perpetual markets placed before a
// spot market are refused as before.

import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { EngineConfig } from '../../engine/bus/types.js';
import { JOURNAL_RECORD_BYTES } from '../../engine/bus/codec.js';
import { EngineConfigChangedError, checkJournalIdentity, engineConfigFingerprint } from '../../engine/shell/journal.js';
import { LmdbJournalStore } from '../../engine/store/journal-store.js';
import { CONFIG_CHANGES_KEY, CONFIG_CHANGE_KEY, CONFIG_KEY, readConfigChanges } from '../../engine/store/journal-layout.js';
import { createTestAccount, removeDir, signed, startServer, tempDataDir } from '../helpers/server.js';

describe('engine configuration and the journal', () => {
  const dataDir = tempDataDir();
  afterAll(() => removeDir(dataDir));

  it('refuses to replay a journal under a different engine configuration', async () => {
    const first = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '1'] });
    const account = await createTestAccount(first.adminPort, ['USDC=42']);
    expect(await first.stop()).toBe(0);

    await expect(startServer({ dataDir, args: ['--no-demo', '--front-threads', '1', '--speed-bump-ms', '0'] }))
      .rejects.toThrow(/EngineConfigChangedError/);

    const again = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '1'] });
    try {
      const capital = await signed(again.base, account, 'GET', '/api/v1/capital', 'balanceQuery');
      expect(capital.body.USDC).toEqual({ available: '42', locked: '0', staked: '0' });
    } finally {
      await again.stop();
    }
  });
});

describe('the configuration change a journal accepts', () => {
  const dir = tempDataDir();
  const store = new LmdbJournalStore(dir);
  afterAll(async () => {
    await store.close();
    removeDir(dir);
  });
  const withMargin = loadConfig([], {}).engine;
  const { margin, interestStepAccounts: _review, ...withoutMargin } = withMargin;
  const identity = (config: EngineConfig) => checkJournalIdentity(store, engineConfigFingerprint(config), config);
  const tickChanged = (config: EngineConfig): EngineConfig => ({
    ...config, markets: config.markets.map((m, i) => (i === 0 ? { ...m, quoteUnitsPerTickLot: m.quoteUnitsPerTickLot * 10 } : m)),
  });

  it('accepts only margin parameters added to the journal\'s configuration', async () => {
    expect(margin).toBeDefined();
    expect(identity(withoutMargin)).toEqual({ changes: [], gained: false }); // first start: recorded
    store.append(1, new Uint8Array(JOURNAL_RECORD_BYTES)); // a record, so that the journal is not empty
    await store.commit();
    expect(store.lastSeq()).toBe(1);
    const refused = [
      { ...withMargin, takerFeeBps: (withMargin.takerFeeBps ?? 0) + 1 },
      tickChanged(withMargin),
      { ...withoutMargin, makerFeeBps: (withoutMargin.makerFeeBps ?? 0) + 1 },
    ];
    for (const config of refused) expect(() => identity(config)).toThrow(EngineConfigChangedError);
    // Accepted as the change after the journal's last record; recover() records it once replay checks.
    expect(identity(withMargin)).toEqual({ changes: [{ seq: store.lastSeq(), previousSha256: engineConfigFingerprint(withoutMargin) }], gained: true });
    expect(store.getMeta(CONFIG_KEY)).toBe(engineConfigFingerprint(withoutMargin));
    expect(readConfigChanges(store)).toEqual([]);
  });

  it('once the journal\'s configuration has margin parameters, changing or removing them is refused', () => {
    store.putMetaSync(CONFIG_KEY, engineConfigFingerprint(withMargin));
    const lendPools = margin!.lendPools.map((p, i) => (i === 0 ? { ...p, fee: p.fee + 1n } : p));
    const refused = [withoutMargin, { ...withMargin, margin: { ...margin!, lendPools } }, tickChanged(withMargin)];
    for (const config of refused) expect(() => identity(config)).toThrow(EngineConfigChangedError);
    expect(identity(withMargin).gained).toBe(false);
  });
});

describe('a chain of configuration changes', () => {
  const dir = tempDataDir();
  const store = new LmdbJournalStore(dir);
  afterAll(async () => {
    await store.close();
    removeDir(dir);
  });
  const full = loadConfig([], {}).engine; // today's default: spot, margin parameters, perpetuals
  // Without perpetuals a configuration has no realization at mark either (src/config.ts); the
  // version that realized none had no position limit.
  const { realizePnlIntervalUs: _realize, realizeStepPositions: _step, fundingStepPositions: _fundingStep, positionLimitUnits: _limit, ...perpsUnrealized } = full;
  const spotMargin = { ...perpsUnrealized, markets: full.markets.filter((m) => m.perp === undefined) };
  const { margin: _margin, interestStepAccounts: _review, ...spot } = spotMargin;
  const fp = engineConfigFingerprint;
  const identity = (config: EngineConfig) => checkJournalIdentity(store, fp(config), config);

  it('accepts the second gain after the first, in order, and nothing else beside it', async () => {
    expect(full.markets.length).toBeGreaterThan(spotMargin.markets.length);
    expect(identity(spot)).toEqual({ changes: [], gained: false });
    store.append(1, new Uint8Array(JOURNAL_RECORD_BYTES));
    await store.commit();
    // The first change as a server that accepted a single change recorded it.
    const first = { seq: 1, previousSha256: fp(spot) };
    store.putMetaSync(CONFIG_CHANGE_KEY, JSON.stringify(first));
    store.putMetaSync(CONFIG_KEY, fp(spotMargin));
    expect(readConfigChanges(store)).toEqual([first]);
    const perpsFirst = { ...full, markets: [...full.markets.filter((m) => m.perp !== undefined), ...spotMargin.markets] };
    const feeChanged = { ...full, takerFeeBps: (full.takerFeeBps ?? 0) + 1 };
    for (const config of [spot, perpsFirst, feeChanged]) expect(() => identity(config)).toThrow(EngineConfigChangedError);
    const second = { seq: 1, previousSha256: fp(spotMargin) };
    expect(identity(full)).toEqual({ changes: [first, second], gained: true });
    // Recorded (as recover() does: the chain, then the fingerprint), a third gain has nothing left to add.
    store.putMetaSync(CONFIG_CHANGES_KEY, JSON.stringify([first, second]));
    store.putMetaSync(CONFIG_KEY, fp(full));
    expect(identity(full)).toEqual({ changes: [first, second], gained: false });
    for (const config of [spot, spotMargin, feeChanged]) expect(() => identity(config)).toThrow(EngineConfigChangedError);
  });

  it('accepts realization at mark gained by a configuration that had perpetuals without it, and nothing else beside it', async () => {
    const otherDir = tempDataDir();
    const other = new LmdbJournalStore(otherDir);
    try {
      expect(full.realizePnlIntervalUs).toBe(10_000_000);
      expect(checkJournalIdentity(other, fp(perpsUnrealized), perpsUnrealized)).toEqual({ changes: [], gained: false });
      other.append(1, new Uint8Array(JOURNAL_RECORD_BYTES));
      await other.commit();
      const feeChanged = { ...full, takerFeeBps: (full.takerFeeBps ?? 0) + 1 };
      expect(() => checkJournalIdentity(other, fp(feeChanged), feeChanged)).toThrow(EngineConfigChangedError);
      expect(checkJournalIdentity(other, fp(full), full)).toEqual({ changes: [{ seq: 1, previousSha256: fp(perpsUnrealized) }], gained: true });
    } finally {
      await other.close();
      removeDir(otherDir);
    }
  });

  it('accepts the realization, funding and interest steps gained by a configuration that ran each pass in one command, and no other step later', async () => {
    const otherDir = tempDataDir();
    const other = new LmdbJournalStore(otherDir);
    try {
      // As the version before the steps wrote it: realization and the limit, each pass in one command.
      const { realizeStepPositions: step, fundingStepPositions: fundingStep, interestStepAccounts: reviewStep, ...unstepped } = full;
      expect([step, fundingStep, reviewStep]).toEqual([128, 128, 128]);
      expect(checkJournalIdentity(other, fp(unstepped), unstepped)).toEqual({ changes: [], gained: false });
      other.append(1, new Uint8Array(JOURNAL_RECORD_BYTES));
      await other.commit();
      const longer = { ...full, realizePnlIntervalUs: 20_000_000 };
      expect(() => checkJournalIdentity(other, fp(longer), longer)).toThrow(EngineConfigChangedError);
      expect(checkJournalIdentity(other, fp(full), full)).toEqual({ changes: [{ seq: 1, previousSha256: fp(unstepped) }], gained: true });
      // Recorded, another step is another configuration.
      other.putMetaSync(CONFIG_KEY, fp(full));
      for (const smaller of [{ ...full, realizeStepPositions: 16 }, { ...full, fundingStepPositions: 16 }, { ...full, interestStepAccounts: 16 }]) {
        expect(() => checkJournalIdentity(other, fp(smaller), smaller)).toThrow(EngineConfigChangedError);
      }
    } finally {
      await other.close();
      removeDir(otherDir);
    }
  });

  it('accepts the position limit gained by a configuration that had perpetuals (and realization) without it, and no other limit or weight', async () => {
    const otherDir = tempDataDir();
    const other = new LmdbJournalStore(otherDir);
    try {
      // As the version before the limit wrote it: perpetuals at weight 1 (left out), realization in one command a pass, no limit.
      const { positionLimitUnits: limit, realizeStepPositions: _steps, fundingStepPositions: _fundingSteps, interestStepAccounts: _reviewSteps, ...unlimited } = full;
      expect(limit).toBe(100_000_000 * 1e6);
      expect(checkJournalIdentity(other, fp(unlimited), unlimited)).toEqual({ changes: [], gained: false });
      other.append(1, new Uint8Array(JOURNAL_RECORD_BYTES));
      await other.commit();
      const weighted = { ...full, markets: full.markets.map((m) => (m.perp === undefined ? m : { ...m, perp: { ...m.perp, positionLimitWeight: 2n * 10n ** 12n } })) };
      expect(() => checkJournalIdentity(other, fp(weighted), weighted)).toThrow(EngineConfigChangedError);
      expect(checkJournalIdentity(other, fp(full), full)).toEqual({ changes: [{ seq: 1, previousSha256: fp(unlimited) }], gained: true });
      // Recorded, a changed limit is another configuration.
      other.putMetaSync(CONFIG_KEY, fp(full));
      const lower = { ...full, positionLimitUnits: 5 };
      expect(() => checkJournalIdentity(other, fp(lower), lower)).toThrow(EngineConfigChangedError);
    } finally {
      await other.close();
      removeDir(otherDir);
    }
  });

  it('leaves out a change whose new fingerprint was never stored (a stop between the two writes)', () => {
    const interrupted = { seq: 1, previousSha256: fp(full) };
    store.putMetaSync(CONFIG_CHANGES_KEY, JSON.stringify([...readConfigChanges(store), interrupted]));
    expect(readConfigChanges(store).map((change) => change.previousSha256)).toEqual([fp(spot), fp(spotMargin)]);
  });
});
