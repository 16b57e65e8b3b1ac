// ccxt's createOrders (backpack: POST /api/v1/orders, signed by the batch rule) against our
// server, unchanged but for the base URL: the orders it returns, in item order, with the values
// ccxt parses from our entries, and the same orders seen afterwards through fetchOpenOrders.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, removeDir, startServer, tempDataDir, type RunningServer, type TestAccount } from '../helpers/server.js';
import { ccxtRest } from '../helpers/ccxt.js';

describe('ccxt createOrders against our server', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let account: TestAccount;
  let other: TestAccount;

  beforeAll(async () => {
    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '1', '--speed-bump-ms', '0'] });
    account = await createTestAccount(server.adminPort, ['USDC=5000', 'SOL=20']);
    other = await createTestAccount(server.adminPort, ['USDC=5000', 'SOL=20']);
  });
  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  it('places a batch of limit orders and returns each, in order', async () => {
    const exchange = ccxtRest(server, account);
    await exchange.loadMarkets();
    const orders = await exchange.createOrders([
      { symbol: 'SOL/USDC', type: 'limit', side: 'buy', amount: 1.5, price: 100.25, params: { clientOrderId: 41 } },
      { symbol: 'SOL/USDC', type: 'limit', side: 'sell', amount: 2, price: 110, params: { postOnly: true } },
      { symbol: 'SOL/USDC', type: 'limit', side: 'buy', amount: 0.5, price: 99.5, params: { timeInForce: 'GTC' } },
    ]);
    expect(orders).toHaveLength(3);
    expect(orders[0]).toMatchObject({ symbol: 'SOL/USDC', type: 'limit', side: 'buy', price: 100.25, amount: 1.5, filled: 0, status: 'open', clientOrderId: '41' });
    expect(orders[1]).toMatchObject({ symbol: 'SOL/USDC', type: 'limit', side: 'sell', price: 110, amount: 2, status: 'open', postOnly: true });
    expect(orders[2]).toMatchObject({ symbol: 'SOL/USDC', side: 'buy', price: 99.5, amount: 0.5, status: 'open' });
    for (const o of orders) expect(o.id).toMatch(/^\d+$/);
    expect(new Set(orders.map((o) => o.id)).size).toBe(3);

    const open = await exchange.fetchOpenOrders('SOL/USDC');
    expect(open.map((o) => o.id).sort()).toEqual(orders.map((o) => o.id).sort());
    const balance = await exchange.fetchBalance();
    // Locked: 1.5 × 100.25 + 0.5 × 99.5 = 200.125 USDC, and 2 SOL.
    expect(balance['USDC']).toMatchObject({ free: 4799.875, used: 200.125 });
    expect(balance['SOL']).toMatchObject({ free: 18, used: 2 });
  });

  it('a batch whose orders trade: a market order and a crossing limit order fill against the resting ones', async () => {
    const exchange = ccxtRest(server, other);
    await exchange.loadMarkets();
    const orders = await exchange.createOrders([
      { symbol: 'SOL/USDC', type: 'market', side: 'sell', amount: 1 },
      { symbol: 'SOL/USDC', type: 'limit', side: 'buy', amount: 1, price: 110 },
    ]);
    expect(orders[0]).toMatchObject({ type: 'market', side: 'sell', amount: 1, filled: 1, cost: 100.25, status: 'closed' });
    expect(orders[1]).toMatchObject({ type: 'limit', side: 'buy', amount: 1, filled: 1, cost: 110, status: 'closed' });
    const mine = await ccxtRest(server, account).fetchOpenOrders('SOL/USDC');
    expect(mine.map((o) => [o.side, o.price, o.remaining]).sort()).toEqual([['buy', 100.25, 0.5], ['buy', 99.5, 0.5], ['sell', 110, 1]]);
  });
});
