// ccxt REST compatibility: ccxt's backpack class, unchanged except for its base URL,
// against the real server — balances, every order type it can create, cancels, open orders,
// order history, own trades with fees, deposits, withdrawals (through the simulated chain),
// deposit addresses, status and time — asserting the values ccxt returns.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, removeDir, startServer, tempDataDir, waitUntil, type RunningServer, type TestAccount } from '../helpers/server.js';
import { ccxtRest } from '../helpers/ccxt.js';

const ADDRESS = 'So1anaDestinationAddress1111111111111111111';

describe('ccxt backpack REST against our server', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let makerAccount: TestAccount;
  let takerAccount: TestAccount;
  let maker: ReturnType<typeof ccxtRest>;
  let taker: ReturnType<typeof ccxtRest>;

  beforeAll(async () => {
    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '2', '--speed-bump-ms', '0'] });
    makerAccount = await createTestAccount(server.adminPort, ['USDC=1000', 'SOL=100']);
    takerAccount = await createTestAccount(server.adminPort, ['USDC=10000']);
    maker = ccxtRest(server, makerAccount);
    taker = ccxtRest(server, takerAccount);
    await maker.loadMarkets();
    await taker.loadMarkets();
  });
  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  it('fetchStatus and fetchTime', async () => {
    expect((await taker.fetchStatus()).status).toBe('ok');
    const time = await taker.fetchTime();
    expect(Math.abs((time ?? 0) - Date.now())).toBeLessThan(60_000);
  });

  it('fetchBalance', async () => {
    const balance = await taker.fetchBalance();
    expect(balance['USDC']).toMatchObject({ free: 10000, used: 0, total: 10000 });
    expect(balance['SOL']).toMatchObject({ free: 0, used: 0, total: 0 });
  });

  it('creates limit (postOnly), market, market-by-cost and IOC orders with the values ccxt reads', async () => {
    const ask = await maker.createOrder('SOL/USDC', 'limit', 'sell', 5, 100, { postOnly: true });
    expect(ask).toMatchObject({ symbol: 'SOL/USDC', type: 'limit', side: 'sell', price: 100, amount: 5, filled: 0, status: 'open', postOnly: true });
    await maker.createOrder('SOL/USDC', 'limit', 'sell', 5, 101, { postOnly: true });

    const market = await taker.createOrder('SOL/USDC', 'market', 'buy', 2);
    expect(market).toMatchObject({ type: 'market', side: 'buy', amount: 2, filled: 2, cost: 200, average: 100, status: 'closed' });

    const byCost = await taker.createOrder('SOL/USDC', 'market', 'buy', undefined as unknown as number, undefined, { cost: 250 });
    expect(byCost).toMatchObject({ type: 'market', side: 'buy', filled: 2.5, cost: 250, average: 100, status: 'closed' });

    const ioc = await taker.createOrder('SOL/USDC', 'limit', 'buy', 1, 100, { timeInForce: 'IOC' });
    expect(ioc).toMatchObject({ type: 'limit', timeInForce: 'IOC', price: 100, amount: 1, filled: 0.5, remaining: 0.5, cost: 50, status: 'canceled' });

    const crossing = await taker.createOrder('SOL/USDC', 'limit', 'buy', 1, 101, { postOnly: true });
    expect(crossing).toMatchObject({ filled: 0, status: 'canceled', postOnly: true });

    const balance = await taker.fetchBalance();
    // 5 SOL bought at 100 less 5 bps taker fees (0.0025 SOL); 500 USDC spent.
    expect(balance['SOL']).toMatchObject({ free: 4.9975, used: 0 });
    expect(balance['USDC']).toMatchObject({ free: 9500, used: 0 });
  });

  it('fetchOpenOrders, fetchOpenOrder, cancelOrder, cancelAllOrders', async () => {
    const bid = await taker.createOrder('SOL/USDC', 'limit', 'buy', 1, 90, { postOnly: true, clientOrderId: 42 });
    expect(bid.status).toBe('open');
    const open = await taker.fetchOpenOrders('SOL/USDC');
    expect(open.map((o) => [o.id, o.price, o.amount, o.clientOrderId])).toEqual([[bid.id, 90, 1, '42']]);
    const one = await taker.fetchOpenOrder(bid.id, 'SOL/USDC');
    expect(one).toMatchObject({ id: bid.id, price: 90, status: 'open', side: 'buy' });
    expect((await taker.fetchBalance())['USDC']).toMatchObject({ free: 9410, used: 90 });
    const cancelled = await taker.cancelOrder(bid.id, 'SOL/USDC');
    expect(cancelled).toMatchObject({ id: bid.id, status: 'canceled', filled: 0 });
    await taker.createOrder('SOL/USDC', 'limit', 'buy', 1, 80, { postOnly: true });
    await taker.createOrder('SOL/USDC', 'limit', 'buy', 2, 81, { postOnly: true });
    const all = await taker.cancelAllOrders('SOL/USDC');
    expect(all.map((o) => o.status)).toEqual(['canceled', 'canceled']);
    expect(await taker.fetchOpenOrders('SOL/USDC')).toEqual([]);
    expect((await taker.fetchBalance())['USDC']).toMatchObject({ free: 9500, used: 0 });
  });

  it('fetchOrders lists every order with its final state', async () => {
    const orders = await taker.fetchOrders('SOL/USDC');
    expect(orders).toHaveLength(7);
    const byStatus = (status: string) => orders.filter((o) => o.status === status).length;
    expect(byStatus('closed')).toBe(2);
    expect(byStatus('canceled')).toBe(5);
    const ioc = orders.find((o) => o.timeInForce === 'IOC');
    expect(ioc).toMatchObject({ price: 100, amount: 1, filled: 0.5, cost: 50 });
    expect(typeof ioc?.timestamp).toBe('number');
    const makerOrders = await maker.fetchOrders('SOL/USDC');
    expect(makerOrders.map((o) => [o.price, o.filled, o.status]).sort()).toEqual([[100, 5, 'closed'], [101, 0, 'open']]);
  });

  it('fetchMyTrades with prices, amounts, fees and maker/taker', async () => {
    const trades = await taker.fetchMyTrades('SOL/USDC');
    expect(trades.map((t) => [t.price, t.amount, t.side, t.takerOrMaker, t.fee?.cost, t.fee?.currency])).toEqual([
      [100, 2, 'buy', 'taker', 0.001, 'SOL'],
      [100, 2.5, 'buy', 'taker', 0.00125, 'SOL'],
      [100, 0.5, 'buy', 'taker', 0.00025, 'SOL'],
    ]);
    expect(trades.every((t) => typeof t.timestamp === 'number' && t.timestamp > 0)).toBe(true);
    const makerTrades = await maker.fetchMyTrades('SOL/USDC');
    expect(makerTrades.map((t) => [t.side, t.takerOrMaker, t.fee?.currency])).toEqual([
      ['sell', 'maker', 'USDC'], ['sell', 'maker', 'USDC'], ['sell', 'maker', 'USDC'],
    ]);
    expect(makerTrades.map((t) => t.fee?.cost)).toEqual([0.04, 0.05, 0.01]);
  });

  it('fetchDeposits, fetchDepositAddress', async () => {
    const deposits = await taker.fetchDeposits();
    expect(deposits.map((d) => [d.currency, d.amount, d.status])).toEqual([['USDC', 10000, 'ok']]);
    const address = await taker.fetchDepositAddress('USDC', { network: 'SOL' });
    expect(address.currency).toBe('USDC');
    expect(address.address).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    expect((await taker.fetchDepositAddress('SOL', { network: 'SOL' })).address).toBe(address.address);
    expect((await maker.fetchDepositAddress('USDC', { network: 'SOL' })).address).not.toBe(address.address);
  });

  it('withdraw, then fetchWithdrawals until the simulated chain confirms it', async () => {
    const response = await fetch(`http://127.0.0.1:${server.adminPort}/admin/address-book`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ accountId: 2, blockchain: 'Solana', address: ADDRESS }),
    });
    expect(response.status).toBe(200);
    const withdrawal = await taker.withdraw('USDC', 25.5, ADDRESS, undefined, { network: 'SOL' });
    expect(withdrawal).toMatchObject({ currency: 'USDC', amount: 25.5, status: 'pending', addressTo: ADDRESS, network: 'SOL' });
    expect((await taker.fetchBalance())['USDC']).toMatchObject({ free: 9474.5 });
    const confirmed = await waitUntil(async () => {
      const list = await taker.fetchWithdrawals('USDC');
      return list.length === 1 && list[0].status === 'ok' ? list[0] : undefined;
    }, 'the withdrawal confirmed');
    expect(confirmed).toMatchObject({ id: withdrawal.id, amount: 25.5, currency: 'USDC', addressTo: ADDRESS });
    expect(confirmed.txid).toMatch(/^[0-9a-f]{64}$/);
  });
});
