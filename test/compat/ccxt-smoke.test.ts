// The smallest ccxt compatibility check: ccxt's backpack class, pointed at our server, loads the
// markets, reads the balance a deposit made and the order book, and places, lists and cancels an
// order. The full
// suites build on test/helpers/ccxt.ts the same way.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, removeDir, startServer, tempDataDir, type RunningServer, type TestAccount } from '../helpers/server.js';
import { ccxtRest } from '../helpers/ccxt.js';

describe('ccxt backpack against our server', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let account: TestAccount;

  beforeAll(async () => {
    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '1', '--speed-bump-ms', '0'] });
    account = await createTestAccount(server.adminPort, ['USDC=5000', 'SOL=12.5']);
  });
  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  it('loads markets, balance and the order book, and places, lists and cancels an order', async () => {
    const exchange = ccxtRest(server, account);
    const markets = await exchange.loadMarkets();
    expect(markets['SOL/USDC']?.precision).toMatchObject({ price: 0.01, amount: 0.01 });
    const balance = await exchange.fetchBalance();
    expect(balance['USDC']).toMatchObject({ free: 5000, used: 0, total: 5000 });
    expect(balance['SOL']?.total).toBe(12.5);

    const order = await exchange.createOrder('SOL/USDC', 'limit', 'buy', 2, 100.5);
    expect(order).toMatchObject({ symbol: 'SOL/USDC', side: 'buy', type: 'limit', price: 100.5, amount: 2, status: 'open' });
    const locked = await exchange.fetchBalance();
    expect(locked['USDC']).toMatchObject({ free: 4799, used: 201 });

    const book = await exchange.fetchOrderBook('SOL/USDC');
    expect(book.bids).toEqual([[100.5, 2]]);
    expect(book.asks).toEqual([]);
    expect(book.nonce).toBeGreaterThan(0);
    expect(book.timestamp).toBeGreaterThan(Date.now() - 60_000);

    const open = await exchange.fetchOpenOrders('SOL/USDC');
    expect(open.map((o) => o.id)).toEqual([order.id]);
    const cancelled = await exchange.cancelOrder(order.id, 'SOL/USDC');
    expect(cancelled.status).toBe('canceled');
    expect(await exchange.fetchOpenOrders('SOL/USDC')).toEqual([]);
  });
});
