// Account history from LMDB, against the real server: orders (final and open states),
// fills with fees, deposits, withdrawals (pending, then confirmed by the simulated chain) and
// their filters and paging, all surviving a restart. Also the two-factor rule and the address
// book, and that refused withdrawals change no balance.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminCli, createTestAccount, removeDir, signed, startServer, tempDataDir, waitUntil, type RunningServer, type TestAccount,
} from '../helpers/server.js';
import { totpCode, totpStep } from '../../src/front/account-settings.js';

const ARGS = ['--no-demo', '--front-threads', '2', '--speed-bump-ms', '0'];
const ADDRESS = 'So1anaDestinationAddress1111111111111111111';

describe('account history', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let maker: TestAccount;
  let taker: TestAccount;
  const orderIds: string[] = [];

  const balances = async (account: TestAccount) => (await signed(server.base, account, 'GET', '/api/v1/capital', 'balanceQuery')).body;

  beforeAll(async () => {
    server = await startServer({ dataDir, args: ARGS });
    maker = await createTestAccount(server.adminPort, ['USDC=10000', 'SOL=100']);
    taker = await createTestAccount(server.adminPort, ['USDC=10000']);
    // maker rests three asks; taker lifts two of them in one order, and one more order partially.
    for (const price of ['100', '101', '102']) {
      const placed = await signed(server.base, maker, 'POST', '/api/v1/order', 'orderExecute', { symbol: 'SOL_USDC', side: 'Ask', orderType: 'Limit', price, quantity: '2', postOnly: true });
      expect(placed.status).toBe(200);
      orderIds.push(placed.body.id);
    }
    const take = await signed(server.base, taker, 'POST', '/api/v1/order', 'orderExecute', { symbol: 'SOL_USDC', side: 'Bid', orderType: 'Limit', price: '101', quantity: '4', clientId: 7 });
    expect(take.body.status).toBe('Filled');
    orderIds.push(take.body.id);
    const partial = await signed(server.base, taker, 'POST', '/api/v1/order', 'orderExecute', { symbol: 'SOL_USDC', side: 'Bid', orderType: 'Limit', price: '102', quantity: '3' });
    expect(partial.body.status).toBe('PartiallyFilled');
    orderIds.push(partial.body.id);
  });
  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  it('lists fills with prices, fees, maker flags and filters', async () => {
    const all = await signed(server.base, taker, 'GET', '/wapi/v1/history/fills', 'fillHistoryQueryAll', { sortDirection: 'Asc' });
    expect(all.status).toBe(200);
    expect(all.body.map((f: any) => [f.price, f.quantity, f.side, f.isMaker, f.feeSymbol])).toEqual([
      ['100', '2', 'Bid', false, 'SOL'], ['101', '2', 'Bid', false, 'SOL'], ['102', '2', 'Bid', false, 'SOL'],
    ]);
    // Taker fee 5 bps of 2 SOL = 0.001 SOL; the fill carries its trade id, order id and client id.
    expect(all.body[0]).toMatchObject({ fee: '0.001', orderId: orderIds[3], clientId: '7', symbol: 'SOL_USDC', systemOrderType: null });
    expect(all.body[0].timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/);
    expect(all.body.map((f: any) => f.tradeId)).toEqual([1, 2, 3]);
    const makerFills = await signed(server.base, maker, 'GET', '/wapi/v1/history/fills', 'fillHistoryQueryAll', { fillType: 'User' });
    // Maker fee 2 bps of 200 USDC = 0.04 USDC; newest first by default.
    expect(makerFills.body.map((f: any) => [f.price, f.isMaker, f.fee, f.feeSymbol])).toEqual([
      ['102', true, '0.0408', 'USDC'], ['101', true, '0.0404', 'USDC'], ['100', true, '0.04', 'USDC'],
    ]);
    const byOrder = await signed(server.base, taker, 'GET', '/wapi/v1/history/fills', 'fillHistoryQueryAll', { orderId: orderIds[3] });
    expect(byOrder.body.map((f: any) => f.price)).toEqual(['101', '100']);
    const page = await signed(server.base, taker, 'GET', '/wapi/v1/history/fills', 'fillHistoryQueryAll', { limit: 1, offset: 1, sortDirection: 'Asc', symbol: 'SOL_USDC' });
    expect(page.body.map((f: any) => f.price)).toEqual(['101']);
    const none = await signed(server.base, taker, 'GET', '/wapi/v1/history/fills', 'fillHistoryQueryAll', { fillType: 'Liquidation' });
    expect(none.body).toEqual([]);
    const future = await signed(server.base, taker, 'GET', '/wapi/v1/history/fills', 'fillHistoryQueryAll', { from: Date.now() + 60_000 });
    expect(future.body).toEqual([]);
    const other = await signed(server.base, taker, 'GET', '/wapi/v1/history/fills', 'fillHistoryQueryAll', { symbol: 'BTC_USDC' });
    expect(other.body).toEqual([]);
  });

  it('lists orders in their latest states', async () => {
    const history = await signed(server.base, maker, 'GET', '/wapi/v1/history/orders', 'orderHistoryQueryAll', { sortDirection: 'Asc' });
    expect(history.body.map((o: any) => [o.id, o.status, o.executedQuantity, o.price])).toEqual([
      [orderIds[0], 'Filled', '2', '100'], [orderIds[1], 'Filled', '2', '101'], [orderIds[2], 'Filled', '2', '102'],
    ]);
    expect(history.body[0]).toMatchObject({ postOnly: true, orderType: 'Limit', timeInForce: 'GTC', expiryReason: null, symbol: 'SOL_USDC' });
    const takerOrders = await signed(server.base, taker, 'GET', '/wapi/v1/history/orders', 'orderHistoryQueryAll', {});
    expect(takerOrders.body.map((o: any) => [o.status, o.executedQuantity, o.executedQuoteQuantity, o.clientId])).toEqual([
      ['PartiallyFilled', '2', '204', null], ['Filled', '4', '402', 7],
    ]);
    const one = await signed(server.base, taker, 'GET', '/wapi/v1/history/orders', 'orderHistoryQueryAll', { orderId: orderIds[4] });
    expect(one.body.map((o: any) => o.id)).toEqual([orderIds[4]]);
    const cancelled = await signed(server.base, taker, 'DELETE', '/api/v1/order', 'orderCancel', { symbol: 'SOL_USDC', orderId: orderIds[4] });
    expect(cancelled.body.status).toBe('Cancelled');
    const after = await signed(server.base, taker, 'GET', '/wapi/v1/history/orders', 'orderHistoryQueryAll', { orderId: orderIds[4] });
    expect(after.body[0]).toMatchObject({ status: 'Cancelled', executedQuantity: '2' });
    const paged = await signed(server.base, maker, 'GET', '/wapi/v1/history/orders', 'orderHistoryQueryAll', { limit: 2, offset: 1 });
    expect(paged.body.map((o: any) => o.id)).toEqual([orderIds[1], orderIds[0]]);
  });

  it('lists deposits, and refuses withdrawals without two-factor, changing nothing', async () => {
    const deposits = await signed(server.base, maker, 'GET', '/wapi/v1/capital/deposits', 'depositQueryAll', {});
    expect(deposits.body.map((d: any) => [d.symbol, d.quantity, d.status, d.source])).toEqual([
      ['SOL', '100', 'confirmed', 'administrator'], ['USDC', '10000', 'confirmed', 'administrator'],
    ]);
    const before = await balances(taker);
    const request = { symbol: 'USDC', blockchain: 'Solana', address: ADDRESS, quantity: '100' };
    const refused = await signed(server.base, taker, 'POST', '/wapi/v1/capital/withdrawals', 'withdraw', request);
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('INVALID_TWO_FACTOR_CODE');
    const wrong = await signed(server.base, taker, 'POST', '/wapi/v1/capital/withdrawals', 'withdraw', { ...request, twoFactorToken: '123456' });
    expect(wrong.body.code).toBe('INVALID_TWO_FACTOR_CODE');
    const tooMuch = await signed(server.base, taker, 'POST', '/wapi/v1/capital/withdrawals', 'withdraw', { ...request, quantity: '99999' });
    expect(tooMuch.body.code).toBe('INVALID_TWO_FACTOR_CODE');
    expect(await balances(taker)).toEqual(before);
  });

  it('withdraws with a one-time code, once per code, and to exempt addresses without one', async () => {
    // Through the operator's CLI, as the README tells operators to do it.
    const enrolled = await adminCli(server.adminPort, ['new-two-factor-secret', '--account', '2']);
    expect(enrolled).toMatchObject({ accountId: 2, secret: expect.stringMatching(/^[A-Z2-7]+$/) });
    expect(enrolled.otpauthUri).toContain(`secret=${enrolled.secret as string}`);
    const secret = base32Decode(enrolled.secret as string);
    const code = totpCode(secret, totpStep(Date.now()));
    const before = await balances(taker);
    const request = { symbol: 'USDC', blockchain: 'Solana', address: ADDRESS, quantity: '100.5', clientId: 'w-1', twoFactorToken: code };
    // A withdrawal the engine refuses changes nothing: the code it carried stays usable.
    const refused = await signed(server.base, taker, 'POST', '/wapi/v1/capital/withdrawals', 'withdraw', { ...request, quantity: '9999999' });
    expect(refused.body.code).toBe('INSUFFICIENT_FUNDS');
    expect(await balances(taker)).toEqual(before);
    const done = await signed(server.base, taker, 'POST', '/wapi/v1/capital/withdrawals', 'withdraw', request);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ symbol: 'USDC', quantity: '100.5', status: 'pending', toAddress: ADDRESS, clientId: 'w-1', blockchain: 'Solana', transactionHash: null });
    const after = await balances(taker);
    expect(Number(after.USDC.available)).toBeCloseTo(Number(before.USDC.available) - 100.5, 6);
    const reused = await signed(server.base, taker, 'POST', '/wapi/v1/capital/withdrawals', 'withdraw', { ...request, clientId: 'w-2' });
    expect(reused.body.code).toBe('INVALID_TWO_FACTOR_CODE');
    expect(await adminCli(server.adminPort, ['add-withdrawal-address', '--account', '2', '--blockchain', 'Solana', '--address', ADDRESS]))
      .toEqual({ accountId: 2, blockchain: 'Solana', address: ADDRESS, twoFactorExempt: true });
    const exempt = await signed(server.base, taker, 'POST', '/wapi/v1/capital/withdrawals', 'withdraw', { symbol: 'SOL', blockchain: 'Solana', address: ADDRESS, quantity: '1' });
    expect(exempt.body.status).toBe('pending');
    const poor = await signed(server.base, taker, 'POST', '/wapi/v1/capital/withdrawals', 'withdraw', { symbol: 'SOL', blockchain: 'Solana', address: ADDRESS, quantity: '100' });
    expect(poor.body.code).toBe('INSUFFICIENT_FUNDS');
    const confirmed = await waitUntil(async () => {
      const list = await signed(server.base, taker, 'GET', '/wapi/v1/capital/withdrawals', 'withdrawalQueryAll', {});
      return list.body.length === 2 && list.body.every((w: any) => w.status === 'confirmed') ? list.body : undefined;
    }, 'withdrawals confirmed by the simulated chain');
    expect(confirmed.map((w: any) => [w.symbol, w.quantity, w.id])).toEqual([['SOL', '1', exempt.body.id], ['USDC', '100.5', done.body.id]]);
    expect(confirmed[0].transactionHash).toMatch(/^[0-9a-f]{64}$/);
    const byClient = await signed(server.base, taker, 'GET', '/wapi/v1/capital/withdrawals', 'withdrawalQueryAll', { clientId: 'w-1' });
    expect(byClient.body.map((w: any) => w.id)).toEqual([done.body.id]);
    const byId = await signed(server.base, taker, 'GET', '/wapi/v1/capital/withdrawals', 'withdrawalQueryAll', { id: exempt.body.id });
    expect(byId.body.map((w: any) => w.symbol)).toEqual(['SOL']);
    const notMine = await signed(server.base, maker, 'GET', '/wapi/v1/capital/withdrawals', 'withdrawalQueryAll', { id: exempt.body.id });
    expect(notMine.body).toEqual([]);
  });

  it('merges markets into one time order for listings across markets', async () => {
    const a = await createTestAccount(server.adminPort, ['USDC=100000', 'SOL=100', 'BTC=1']);
    const b = await createTestAccount(server.adminPort, ['USDC=100000']);
    const trade = async (symbol: string, price: string, quantity: string) => {
      await signed(server.base, a, 'POST', '/api/v1/order', 'orderExecute', { symbol, side: 'Ask', orderType: 'Limit', price, quantity, postOnly: true });
      const taken = await signed(server.base, b, 'POST', '/api/v1/order', 'orderExecute', { symbol, side: 'Bid', orderType: 'Limit', price, quantity });
      expect(taken.body.status).toBe('Filled');
    };
    await trade('BTC_USDC', '50000', '0.1');
    await trade('SOL_USDC', '100', '1');
    await trade('BTC_USDC', '50001', '0.1');
    const asc = await signed(server.base, b, 'GET', '/wapi/v1/history/fills', 'fillHistoryQueryAll', { sortDirection: 'Asc' });
    expect(asc.body.map((f: any) => [f.symbol, f.price])).toEqual([['BTC_USDC', '50000'], ['SOL_USDC', '100'], ['BTC_USDC', '50001']]);
    const desc = await signed(server.base, b, 'GET', '/wapi/v1/history/fills', 'fillHistoryQueryAll', { limit: 1, offset: 1 });
    expect(desc.body.map((f: any) => f.symbol)).toEqual(['SOL_USDC']);
    const orders = await signed(server.base, a, 'GET', '/wapi/v1/history/orders', 'orderHistoryQueryAll', { sortDirection: 'Asc' });
    expect(orders.body.map((o: any) => o.symbol)).toEqual(['BTC_USDC', 'SOL_USDC', 'BTC_USDC']);
    const btc = await signed(server.base, a, 'GET', '/wapi/v1/history/orders', 'orderHistoryQueryAll', { symbol: 'BTC_USDC' });
    expect(btc.body.map((o: any) => o.price)).toEqual(['50001', '50000']);
  });

  it('keeps every history across a restart', async () => {
    const read = async () => ({
      fills: (await signed(server.base, taker, 'GET', '/wapi/v1/history/fills', 'fillHistoryQueryAll', {})).body,
      orders: (await signed(server.base, maker, 'GET', '/wapi/v1/history/orders', 'orderHistoryQueryAll', {})).body,
      deposits: (await signed(server.base, taker, 'GET', '/wapi/v1/capital/deposits', 'depositQueryAll', {})).body,
      withdrawals: (await signed(server.base, taker, 'GET', '/wapi/v1/capital/withdrawals', 'withdrawalQueryAll', {})).body,
    });
    const before = await read();
    expect(before.fills.length).toBe(3);
    // A withdrawal still pending at shutdown is confirmed after the restart (its work list is in LMDB).
    const pending = await signed(server.base, taker, 'POST', '/wapi/v1/capital/withdrawals', 'withdraw', { symbol: 'USDC', blockchain: 'Solana', address: ADDRESS, quantity: '2' });
    expect(pending.body.status).toBe('pending');
    expect(await server.stop()).toBe(0);
    server = await startServer({ dataDir, args: ARGS });
    const after = await read();
    expect(after.fills).toEqual(before.fills);
    expect(after.orders).toEqual(before.orders);
    expect(after.deposits).toEqual(before.deposits);
    expect(after.withdrawals.slice(1)).toEqual(before.withdrawals);
    expect(after.withdrawals[0]).toMatchObject({ id: pending.body.id, quantity: '2' });
    await waitUntil(async () => {
      const list = await signed(server.base, taker, 'GET', '/wapi/v1/capital/withdrawals', 'withdrawalQueryAll', { id: pending.body.id });
      return list.body[0]?.status === 'confirmed' ? true : undefined;
    }, 'the pending withdrawal confirmed after the restart');
  });
});

function base32Decode(text: string): Buffer {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const char of text) {
    value = (value << 5) | alphabet.indexOf(char);
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}
