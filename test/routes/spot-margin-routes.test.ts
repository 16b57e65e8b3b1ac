// Spot margin over real HTTP with the default configuration: orders with autoLendRedeem and
// autoBorrow (POST /api/v1/order), and the engine's limits GET /api/v1/account/limits/borrow,
// /limits/withdrawal (autoBorrow, autoLendRedeem) and /limits/order (autoBorrow, autoBorrowRepay,
// autoLendRedeem; reduceOnly is NOT_IMPLEMENTED there, and a spot order with it is INVALID_ORDER). The rules are tested by value
// in the engine (engine-spot-margin.test.ts). ccxt's backpack passes the flags through its
// createOrder params unchanged.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ccxtRest } from '../helpers/ccxt.js';
import { createTestAccount, removeDir, signed, startServer, tempDataDir, type RunningServer, type TestAccount } from '../helpers/server.js';

describe('spot margin routes', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let lender: TestAccount;
  let borrower: TestAccount;
  beforeAll(async () => {
    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '1'] });
    lender = await createTestAccount(server.adminPort, ['USDC=10000']);
    borrower = await createTestAccount(server.adminPort, ['USDC=100']);
    // At 10× leverage the pool's IMF base (0.1) applies; at the default 1× it would be 1.
    expect((await signed(server.base, borrower, 'PATCH', '/api/v1/account', 'accountUpdate', { leverageLimit: '10' })).status).toBe(200);
    const lent = await signed(server.base, lender, 'POST', '/api/v1/borrowLend', 'borrowLendExecute', { quantity: '5000', side: 'Lend', symbol: 'USDC' });
    expect(lent.status).toBe(200);
  });
  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  const limit = (account: TestAccount, path: string, instruction: string, query: Record<string, string>) =>
    signed(server.base, account, 'GET', `/api/v1/account/limits/${path}`, instruction, query);
  const bid = (account: TestAccount, price: string, quantity: string, flags: Record<string, boolean>) =>
    signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { symbol: 'SOL_USDC', side: 'Bid', orderType: 'Limit', price, quantity, ...flags });
  const usdcPosition = async (account: TestAccount) =>
    ((await signed(server.base, account, 'GET', '/api/v1/borrowLend/positions', 'borrowLendPositionQuery')).body as Array<Record<string, unknown>>)
      .find((p) => p.symbol === 'USDC')?.netQuantity;

  it('answers the largest borrow, withdrawal and order the engine would take', async () => {
    // 100 USDC of equity covers a borrow of 1000 at IMF 0.1.
    expect((await limit(borrower, 'borrow', 'maxBorrowQuantity', { symbol: 'USDC' })).body).toEqual({ maxBorrowQuantity: '1000', symbol: 'USDC' });
    expect((await limit(lender, 'borrow', 'maxBorrowQuantity', { symbol: 'USDC' })).body.maxBorrowQuantity).toBe('0'); // it lends USDC
    expect((await limit(lender, 'withdrawal', 'maxWithdrawalQuantity', { symbol: 'USDC' })).body.maxWithdrawalQuantity).toBe('5000');
    expect((await limit(lender, 'withdrawal', 'maxWithdrawalQuantity', { symbol: 'USDC', autoLendRedeem: 'true' })).body)
      .toEqual({ autoBorrow: null, autoLendRedeem: true, maxWithdrawalQuantity: '10000', symbol: 'USDC' });
    // A bid at 100 spends 100 USDC per SOL: 1 SOL from the balance, 11 with the 1000 it may borrow.
    expect((await limit(borrower, 'order', 'maxOrderQuantity', { symbol: 'SOL_USDC', side: 'Bid', price: '100' })).body.maxOrderQuantity).toBe('1');
    expect((await limit(borrower, 'order', 'maxOrderQuantity', { symbol: 'SOL_USDC', side: 'Bid', price: '100', autoBorrow: 'true', autoBorrowRepay: 'true' })).body)
      .toMatchObject({ maxOrderQuantity: '11', autoBorrow: true, autoBorrowRepay: true, autoLendRedeem: null, reduceOnly: null });
    const reduceOnly = await limit(borrower, 'order', 'maxOrderQuantity', { symbol: 'SOL_USDC', side: 'Bid', reduceOnly: 'true' });
    expect([reduceOnly.status, reduceOnly.body.code]).toEqual([501, 'NOT_IMPLEMENTED']);
    expect((await limit(borrower, 'borrow', 'maxBorrowQuantity', { symbol: 'DOGE' })).body.code).toBe('INVALID_ASSET');
    expect((await limit(borrower, 'withdrawal', 'maxWithdrawalQuantity', { symbol: 'USDC', autoBorrow: 'yes' })).status).toBe(400);
  });

  it('funds orders beyond the balance by redeeming and borrowing, with the venue\'s codes', async () => {
    expect((await bid(lender, '100', '60', {})).body.code).toBe('INSUFFICIENT_FUNDS');
    expect((await bid(lender, '100', '60', { autoLendRedeem: true })).status).toBe(200);
    expect(await usdcPosition(lender)).toBe('4000');
    expect((await bid(borrower, '100', '20', { autoBorrow: true })).body.code).toBe('INSUFFICIENT_MARGIN');
    expect((await bid(borrower, '100', '5', { autoBorrow: true, autoBorrowRepay: true })).status).toBe(200);
    expect(await usdcPosition(borrower)).toBe('-400');
    expect((await bid(borrower, '100', '1', { autoBorrow: 'yes' as unknown as boolean })).status).toBe(400);
    const reduceOnly = await bid(borrower, '100', '1', { reduceOnly: true }); // futures only
    expect([reduceOnly.status, reduceOnly.body.code]).toEqual([400, 'INVALID_ORDER']);
  });

  it('takes the flags from ccxt\'s createOrder params', async () => {
    const client = ccxtRest(server, borrower);
    // 100 USDC of equity, 400 borrowed: another 600 may be borrowed; a bid of 6 SOL at 100 needs 600.
    const order = await client.createOrder('SOL/USDC', 'limit', 'buy', 6, 100, { autoBorrow: true });
    expect(order.status).toBe('open');
    expect(await usdcPosition(borrower)).toBe('-1000');
    await expect(client.createOrder('SOL/USDC', 'limit', 'buy', 1, 100, { autoBorrow: true })).rejects.toThrow(/INSUFFICIENT_MARGIN|Insufficient margin/);
  });
});
