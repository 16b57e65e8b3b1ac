// Realization of perpetual PnL at mark on a running server (engine/core/perp/realize.ts): with
// --realize-pnl-interval-ms, each position's unrealized PnL moves into USDC at the next multiple
// of the interval without changing its size; ccxt's fetchPositions then reads the PnL as realized
// and the entry price unchanged, fetchBalance the USDC moved, and GET /api/v1/account shows
// autoRealizePnl. (Other server tests run with realization off, so their figures stay where they
// put them.)

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCli, createTestAccount, removeDir, signed, startServer, tempDataDir, waitUntil, type RunningServer, type TestAccount } from '../helpers/server.js';
import { ccxtRest } from '../helpers/ccxt.js';

const PERP = 'SOL/USDC:USDC';

describe('perpetual PnL realized at mark, read through ccxt', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let longAccount: TestAccount;
  let short: ReturnType<typeof ccxtRest>;
  let long: ReturnType<typeof ccxtRest>;

  beforeAll(async () => {
    server = await startServer({
      dataDir,
      args: ['--no-demo', '--front-threads', '1', '--speed-bump-ms', '0', '--no-index-default', '--index-max-age-ms', '86400000', '--realize-pnl-interval-ms', '1000'],
    });
    const shortAccount = await createTestAccount(server.adminPort, ['USDC=10000']);
    longAccount = await createTestAccount(server.adminPort, ['USDC=10000']);
    short = ccxtRest(server, shortAccount);
    long = ccxtRest(server, longAccount);
    await short.loadMarkets();
    await long.loadMarkets();
    await adminCli(server.adminPort, ['set-index-price', 'SOL=100']);
  });
  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  it('shows autoRealizePnl on the account', async () => {
    const account = await signed(server.base, longAccount, 'GET', '/api/v1/account', 'accountQuery');
    expect(account.body).toMatchObject({ autoRealizePnl: true });
  });

  it('moves the long’s 20 USDC of PnL at mark 110 into USDC: realized 20, unrealized 0, entry price kept', async () => {
    await short.createOrder(PERP, 'limit', 'sell', 2, 100, { postOnly: true });
    await long.createOrder(PERP, 'market', 'buy', 2);
    await adminCli(server.adminPort, ['set-index-price', 'SOL=110']);
    const realized = await waitUntil(async () => {
      const [position] = await long.fetchPositions();
      return position?.realizedPnl === '20' ? position : undefined;
    }, 'the long position realized at mark 110');
    expect(realized).toMatchObject({ side: 'long', contracts: '2', entryPrice: '100', markPrice: '110', unrealizedPnl: '0', realizedPnl: '20' });
    expect(realized.info).toMatchObject({ netCost: '200', netQuantity: '2', breakEvenPrice: '100.05' });
    const [shortPosition] = await short.fetchPositions();
    expect(shortPosition).toMatchObject({ side: 'short', contracts: '2', entryPrice: '100', unrealizedPnl: '0', realizedPnl: '-20' });
    // USDC: the long paid 0.1 in taker fees and received 20; the short 0.04 in maker fees and paid 20.
    expect((await long.fetchBalance())['USDC']).toMatchObject({ free: 10019.9, used: 0 });
    expect((await short.fetchBalance())['USDC']).toMatchObject({ free: 9979.96, used: 0 });
  });
});
