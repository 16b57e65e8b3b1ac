// ccxt perpetuals, orders and open interest: ccxt's backpack class, unchanged except for its base
// URL, reads fetchOpenInterest (GET /api/v1/openInterest, its `[0]`; ccxt puts the wire's base
// quantity in openInterestValue) by value after two accounts
// trade SOL_USDC_PERP, and places a reduce-only order through createOrder's params (clipped to the
// position, then expired ReduceOnlyNotReduced once flat). The route's own answers: every perpetual
// without a symbol, 400 for a spot symbol. The account stream shows a resting reduce-only order
// decreased (orderModified, r true) and another expired as the position shrinks.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCli, createTestAccount, get, removeDir, signed, startServer, tempDataDir, type RunningServer, type TestAccount } from '../helpers/server.js';
import { ccxtRest } from '../helpers/ccxt.js';
import { StreamClient } from '../helpers/stream-client.js';

const PERP = 'SOL/USDC:USDC';

describe('ccxt backpack open interest and reduce-only orders against our server', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let shortAccount: TestAccount;
  let longAccount: TestAccount;
  let short: ReturnType<typeof ccxtRest>;
  let long: ReturnType<typeof ccxtRest>;

  beforeAll(async () => {
    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '1', '--speed-bump-ms', '0', '--no-index-default', '--index-max-age-ms', '86400000'] });
    shortAccount = await createTestAccount(server.adminPort, ['USDC=10000']);
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

  it('fetchOpenInterest reads the sum of long positions after two accounts trade', async () => {
    const before = await long.fetchOpenInterest(PERP);
    expect(before).toMatchObject({ symbol: PERP, openInterestValue: 0 });
    await short.createOrder(PERP, 'limit', 'sell', 3, 100, { postOnly: true });
    await long.createOrder(PERP, 'market', 'buy', 3);
    const after = await long.fetchOpenInterest(PERP);
    expect(after).toMatchObject({ symbol: PERP, openInterestValue: 3 });
    expect(after.info).toMatchObject({ symbol: 'SOL_USDC_PERP', openInterest: '3' });
    expect(typeof after.timestamp).toBe('number');
    expect(after.timestamp).toBeGreaterThan(Date.now() - 600_000);

    const all = await get(server.base, '/api/v1/openInterest');
    expect(all.status).toBe(200);
    expect((all.body as Array<{ symbol: string; openInterest: string }>).map(({ symbol, openInterest }) => [symbol, openInterest]))
      .toEqual([['SOL_USDC_PERP', '3'], ['BTC_USDC_PERP', '0'], ['ETH_USDC_PERP', '0']]);
    const spot = await get(server.base, '/api/v1/openInterest?symbol=SOL_USDC');
    expect([spot.status, (spot.body as { code: string }).code]).toEqual([400, 'INVALID_MARKET']);
  });

  it('a reduce-only order is clipped to the position, and one without a position expires ReduceOnlyNotReduced', async () => {
    // long holds 3 (previous test): a reduce-only sell of 5 rests as 3
    const clipped = await long.createOrder(PERP, 'limit', 'sell', 5, 120, { reduceOnly: true });
    expect(clipped).toMatchObject({ amount: 3, status: 'open', reduceOnly: true });
    // short buys the 3 back at 120: long is flat, the open interest 0
    await short.createOrder(PERP, 'market', 'buy', 3);
    expect(await long.fetchOpenInterest(PERP)).toMatchObject({ openInterestValue: 0 });
    const refused = await signed(server.base, shortAccount, 'POST', '/api/v1/order', 'orderExecute', {
      symbol: 'SOL_USDC_PERP', side: 'Bid', orderType: 'Limit', price: '90', quantity: '1', reduceOnly: true,
    });
    expect(refused.status).toBe(200);
    expect(refused.body).toMatchObject({ status: 'Expired', expiryReason: 'ReduceOnlyNotReduced', reduceOnly: true });
  });

  it('streams orderModified and the expiry of resting reduce-only orders as the position shrinks', async () => {
    const client = await StreamClient.connect(server.port);
    try {
      client.subscribeSigned(longAccount, ['account.orderUpdate']);
      await short.createOrder(PERP, 'limit', 'sell', 4, 100, { postOnly: true });
      await long.createOrder(PERP, 'market', 'buy', 4); // long 4
      await client.waitFor((m) => m.stream === 'account.orderUpdate' && m.data.e === 'orderFill', 'the long fill');
      const older = await long.createOrder(PERP, 'limit', 'sell', 3, 110, { reduceOnly: true });
      const newer = await long.createOrder(PERP, 'limit', 'sell', 3, 115, { reduceOnly: true });
      await short.createOrder(PERP, 'limit', 'buy', 2, 100, { postOnly: true });
      await long.createOrder(PERP, 'market', 'sell', 2); // long 2: 6 reduce-only lots trimmed to 2, newest first
      const modified = await client.waitFor((m) => m.stream === 'account.orderUpdate' && m.data.e === 'orderModified', 'orderModified');
      expect(modified.data).toMatchObject({ i: older.id, q: '2', X: 'New', r: true, s: 'SOL_USDC_PERP' });
      const expired = client.messages.find((m) => m.stream === 'account.orderUpdate' && m.data.e === 'orderExpired' && m.data.i === newer.id);
      expect(expired?.data).toMatchObject({ R: 'ReduceOnlyNotReduced', r: true });
    } finally {
      client.socket.close();
    }
  });
});
