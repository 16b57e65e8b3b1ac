// Borrow/lend auto-deleveraging on the wire, against a real server with the default configuration
// (SOL pool: throttle ceiling 0.9 of what is lent while utilization stays below 0.8): a borrower
// of USDC that lends 100 of its SOL is pushed over the line by the operator's index price while
// another account borrows 90 SOL, the pool's ceiling, so no SOL lend can be redeemed. The first
// liquidation step closes 90 SOL of the lend against that borrow at the mark (130 USDC): the
// borrow/lend history lists the lender's redemption with source LiquidationAdl and the borrower's
// repayment with source AdlProvider, and 11 700 USDC moved from the borrower to the lender.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCli, createTestAccount, removeDir, signed, startServer, tempDataDir, waitUntil, type RunningServer, type TestAccount } from '../helpers/server.js';

const ARGS = ['--no-demo', '--front-threads', '1', '--speed-bump-ms', '0', '--no-index-default', '--index-max-age-ms', '3600000'];

describe('borrow/lend auto-deleveraging on the wire', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let lender: TestAccount;
  let provider: TestAccount;
  const execute = (account: TestAccount, body: Record<string, string>) => signed(server.base, account, 'POST', '/api/v1/borrowLend', 'borrowLendExecute', body);
  const moves = async (account: TestAccount, sources: string) =>
    ((await signed(server.base, account, 'GET', '/wapi/v1/history/borrowLend', 'borrowHistoryQueryAll', { sources, sortDirection: 'Asc' })).body as Array<Record<string, string>>)
      .map((m) => [m.eventType, m.source, m.symbol, m.quantity]);
  const usdcAvailable = async (account: TestAccount) => {
    const balances = (await signed(server.base, account, 'GET', '/api/v1/capital', 'balanceQuery')).body as Record<string, { available: string }>;
    return balances.USDC.available;
  };

  beforeAll(async () => {
    server = await startServer({ dataDir, args: ARGS });
    const usdcLender = await createTestAccount(server.adminPort, ['USDC=100000']);
    const seller = await createTestAccount(server.adminPort, ['SOL=200']);
    lender = await createTestAccount(server.adminPort, ['SOL=40']);
    provider = await createTestAccount(server.adminPort, ['USDC=100000']);
    await adminCli(server.adminPort, ['set-index-price', 'SOL=150']);
    expect((await execute(usdcLender, { symbol: 'USDC', side: 'Lend', quantity: '50000' })).status).toBe(200);
    for (const account of [lender, provider]) {
      expect((await signed(server.base, account, 'PATCH', '/api/v1/account', 'accountUpdate', { leverageLimit: '10' })).status).toBe(200);
    }
    // The lender borrows 15 000 USDC, buys 100 SOL with them (139.95 SOL after the fee) and lends 100.
    expect((await execute(lender, { symbol: 'USDC', side: 'Borrow', quantity: '15000' })).status).toBe(200);
    const order = (account: TestAccount, body: Record<string, string | boolean>) =>
      signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { symbol: 'SOL_USDC', orderType: 'Limit', ...body });
    expect((await order(seller, { side: 'Ask', price: '150', quantity: '100', postOnly: true })).status).toBe(200);
    expect((await order(lender, { side: 'Bid', price: '150', quantity: '100' })).body.status).toBe('Filled');
    expect((await execute(lender, { symbol: 'SOL', side: 'Lend', quantity: '100' })).status).toBe(200);
    expect((await execute(provider, { symbol: 'SOL', side: 'Borrow', quantity: '90' })).status).toBe(200);
    const more = await execute(provider, { symbol: 'SOL', side: 'Borrow', quantity: '0.01' });
    expect(more.status).toBe(400);
  });

  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  it('lists the lender\'s LiquidationAdl redemption and the borrower\'s AdlProvider repayment, paid in USDC at mark', async () => {
    const before = await usdcAvailable(provider);
    expect(before).toBe('100000');
    await adminCli(server.adminPort, ['set-index-price', 'SOL=130']);
    await waitUntil(async () => ((await moves(lender, 'LiquidationAdl')).length > 0 ? true : undefined), 'the lender\'s lend deleveraged');
    expect(await moves(lender, 'LiquidationAdl')).toEqual([['LendRedeem', 'LiquidationAdl', 'SOL', '90']]);
    expect(await moves(provider, 'AdlProvider')).toEqual([['BorrowRepay', 'AdlProvider', 'SOL', '90']]);
    expect(await moves(provider, 'LiquidationAdl,Liquidation')).toEqual([]);
    // 90 SOL at 130: 11 700 USDC from the borrower; the lender's repayment of its USDC borrow follows from them.
    expect(await usdcAvailable(provider)).toBe('88300');
    const repaid = await moves(lender, 'Liquidation');
    expect(repaid[0]).toEqual(['BorrowRepay', 'Liquidation', 'USDC', '11700']);
  });
});
