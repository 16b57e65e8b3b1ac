// A journal replays to the same state only under the engine configuration it was written with,
// so a restart with a different one (here: another speed bump) must stop with a named error and
// write nothing, and the original configuration must still start and show the same state. The
// one change accepted, a configuration that only gained margin parameters (engine/shell/journal.ts,
// test/store/journal-upgrade.test.ts), does not open the door to any other: a fee, a market's tick, or
// the margin parameters themselves changed or removed beside it are refused as before.

import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { EngineConfig } from '../../engine/bus/types.js';
import { JOURNAL_RECORD_BYTES } from '../../engine/bus/codec.js';
import { EngineConfigChangedError, checkJournalIdentity, engineConfigFingerprint } from '../../engine/shell/journal.js';
import { LmdbJournalStore } from '../../engine/store/journal-store.js';
import { CONFIG_KEY, readConfigChange } from '../../engine/store/journal-layout.js';
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
  const { margin, ...withoutMargin } = withMargin;
  const identity = (config: EngineConfig) => checkJournalIdentity(store, engineConfigFingerprint(config), config);
  const tickChanged = (config: EngineConfig): EngineConfig => ({
    ...config, markets: config.markets.map((m, i) => (i === 0 ? { ...m, quoteUnitsPerTickLot: m.quoteUnitsPerTickLot * 10 } : m)),
  });

  it('accepts only margin parameters added to the journal\'s configuration', async () => {
    expect(margin).toBeDefined();
    expect(identity(withoutMargin)).toEqual({ change: null, gained: false }); // first start: recorded
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
    expect(identity(withMargin)).toEqual({ change: { seq: store.lastSeq(), previousSha256: engineConfigFingerprint(withoutMargin) }, gained: true });
    expect(store.getMeta(CONFIG_KEY)).toBe(engineConfigFingerprint(withoutMargin));
    expect(readConfigChange(store)).toBeNull();
  });

  it('once the journal\'s configuration has margin parameters, changing or removing them is refused', () => {
    store.putMetaSync(CONFIG_KEY, engineConfigFingerprint(withMargin));
    const lendPools = margin!.lendPools.map((p, i) => (i === 0 ? { ...p, fee: p.fee + 1n } : p));
    const refused = [withoutMargin, { ...withMargin, margin: { ...margin!, lendPools } }, tickChanged(withMargin)];
    for (const config of refused) expect(() => identity(config)).toThrow(EngineConfigChangedError);
    expect(identity(withMargin).gained).toBe(false);
  });
});
