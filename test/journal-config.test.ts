// A journal replays to the same state only under the engine configuration it was written with,
// so a restart with a different one (here: another speed bump) must stop with a named error and
// write nothing, and the original configuration must still start and show the same state.

import { afterAll, describe, expect, it } from 'vitest';
import { createTestAccount, removeDir, signed, startServer, tempDataDir } from './helpers/server.js';

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
