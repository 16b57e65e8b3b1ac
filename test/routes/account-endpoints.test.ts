// Account endpoints against the real server: account settings (GET/PATCH, stored and
// returned across a restart) beside the configured position limit, collateral valued at mark (the guarded reference price) with exact arithmetic,
// order and withdrawal limits, and dust conversion with the spec's preconditions and its 95%
// payout rounded down, recorded in dust history.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminCli, createTestAccount, removeDir, signed, startServer, tempDataDir, type RunningServer, type TestAccount,
} from '../helpers/server.js';

// Every account's position limit on perpetuals, shown by GET /api/v1/account.
const ARGS = ['--no-demo', '--front-threads', '1', '--speed-bump-ms', '0', '--position-limit', '2500000.5'];

describe('account endpoints', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let seller: TestAccount;
  let buyer: TestAccount;
  let dusty: TestAccount;

  beforeAll(async () => {
    server = await startServer({ dataDir, args: ARGS });
    seller = await createTestAccount(server.adminPort, ['SOL=200', 'USDC=1000']);
    buyer = await createTestAccount(server.adminPort, ['USDC=30000']);
    dusty = await createTestAccount(server.adminPort, ['SOL=0.005', 'BTC=0.00000123']);
    // 100 SOL at 123.45: the seller (maker, 2 bps) pays 2.469 USDC of fees, which the exchange keeps.
    await signed(server.base, seller, 'POST', '/api/v1/order', 'orderExecute', { symbol: 'SOL_USDC', side: 'Ask', orderType: 'Limit', price: '123.45', quantity: '100', postOnly: true });
    const taken = await signed(server.base, buyer, 'POST', '/api/v1/order', 'orderExecute', { symbol: 'SOL_USDC', side: 'Bid', orderType: 'Limit', price: '123.45', quantity: '100' });
    expect(taken.body.status).toBe('Filled');
    // A resting ask of the seller at 130 locks 10 SOL.
    await signed(server.base, seller, 'POST', '/api/v1/order', 'orderExecute', { symbol: 'SOL_USDC', side: 'Ask', orderType: 'Limit', price: '130', quantity: '10', postOnly: true });
  });
  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  it('returns and updates account settings, with the configured fee rates, and keeps them across a restart', async () => {
    const account = await signed(server.base, seller, 'GET', '/api/v1/account', 'accountQuery');
    expect(account.status).toBe(200);
    expect(account.body).toMatchObject({ autoLend: false, spotMakerFee: '2', spotTakerFee: '5', limitOrders: 500, liquidating: false, leverageLimit: '1' });
    // The official Rust client requires the futures fees as decimals: the account's own rates.
    expect(account.body).toMatchObject({ futuresMakerFee: '2', futuresTakerFee: '5' });
    // The configured position limit, in USDC.
    expect(account.body.positionLimit).toBe('2500000.5');
    const patched = await signed(server.base, seller, 'PATCH', '/api/v1/account', 'accountUpdate', { autoLend: true, leverageLimit: '2.5' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ autoLend: true, leverageLimit: '2.5', autoRepayBorrows: false });
    const bad = await signed(server.base, seller, 'PATCH', '/api/v1/account', 'accountUpdate', { autoLend: 'yes' });
    expect(bad.status).toBe(400);
    const badLeverage = await signed(server.base, seller, 'PATCH', '/api/v1/account', 'accountUpdate', { leverageLimit: '500' });
    expect(badLeverage.body.code).toBe('INVALID_CLIENT_REQUEST');
    expect((await signed(server.base, seller, 'GET', '/api/v1/account', 'accountQuery')).body).toMatchObject({ autoLend: true, leverageLimit: '2.5' });
    expect((await signed(server.base, buyer, 'GET', '/api/v1/account', 'accountQuery')).body.autoLend).toBe(false);
    // Stored, not held in memory: a restart on the same data directory returns them.
    expect(await server.stop()).toBe(0);
    server = await startServer({ dataDir, args: ARGS });
    expect((await signed(server.base, seller, 'GET', '/api/v1/account', 'accountQuery')).body).toMatchObject({ autoLend: true, leverageLimit: '2.5' });
    expect((await signed(server.base, buyer, 'GET', '/api/v1/account', 'accountQuery')).body).toMatchObject({ autoLend: false, leverageLimit: '1' });
  });

  it('reports the own spot fee rates of each account once the operator changes them, and the configured futures rates', async () => {
    await adminCli(server.adminPort, ['set-fee-rates', '--account', String(buyer.accountId), '--maker-bps', '1', '--taker-bps', '7']);
    expect((await signed(server.base, buyer, 'GET', '/api/v1/account', 'accountQuery')).body).toMatchObject({ spotMakerFee: '1', spotTakerFee: '7', futuresMakerFee: '2', futuresTakerFee: '5' });
    expect((await signed(server.base, seller, 'GET', '/api/v1/account', 'accountQuery')).body).toMatchObject({ spotMakerFee: '2', spotTakerFee: '5' });
  });

  it('values collateral at the mark price with its haircut weight, here the first trade\'s', async () => {
    const response = await signed(server.base, seller, 'GET', '/api/v1/capital/collateral', 'collateralQuery');
    expect(response.status).toBe(200);
    const body = response.body;
    // Only the assets the account holds, lends or borrows.
    expect(body.collateral.map((c: any) => c.symbol)).toEqual(['USDC', 'SOL']);
    const sol = body.collateral.find((c: any) => c.symbol === 'SOL');
    // 100 SOL left: 90 available, 10 locked, at 123.45; weight min(0.85, 1.1 / (1 + 0.0003·√100)) = 0.85.
    expect(sol).toEqual({
      symbol: 'SOL', assetMarkPrice: '123.45', totalQuantity: '100', availableQuantity: '90', openOrderQuantity: '10', lendQuantity: '0',
      balanceNotional: '12345', collateralWeight: '0.85', collateralValue: '10493.25',
    });
    const usdc = body.collateral.find((c: any) => c.symbol === 'USDC');
    // 1000 + 12345 − 2.469 fee
    expect(usdc).toMatchObject({ assetMarkPrice: '1', totalQuantity: '13342.531', balanceNotional: '13342.531', collateralWeight: '1', collateralValue: '13342.531' });
    // No borrows: nothing locked, no margin fraction; imf is 1 / the leverage limit (2.5×).
    expect(body).toEqual({
      assetsValue: '23835.781', borrowLiability: '0', collateral: body.collateral, imf: '0.4', unsettledEquity: '0', liabilitiesValue: '0', marginFraction: null,
      mmf: '0', netEquity: '23835.781', netEquityAvailable: '23835.781', netEquityLocked: '0', netExposureFutures: '0', pnlUnrealized: '0',
    });
  });

  it('shows lends and borrows in the collateral summary, with the margin the borrow locks', async () => {
    const execute = (account: TestAccount, side: string, quantity: string) =>
      signed(server.base, account, 'POST', '/api/v1/borrowLend', 'borrowLendExecute', { quantity, side, symbol: 'USDC' });
    const borrower = await createTestAccount(server.adminPort, ['USDC=100']);
    expect((await execute(seller, 'Lend', '1000')).status).toBe(200);
    expect((await signed(server.base, borrower, 'PATCH', '/api/v1/account', 'accountUpdate', { leverageLimit: '10' })).status).toBe(200);
    expect((await execute(borrower, 'Borrow', '500')).status).toBe(200);
    const lent = (await signed(server.base, seller, 'GET', '/api/v1/capital/collateral', 'collateralQuery')).body;
    // Lent units count in full: the total stays, available falls.
    expect(lent.collateral.find((c: any) => c.symbol === 'USDC')).toMatchObject({ totalQuantity: '13342.531', availableQuantity: '12342.531', lendQuantity: '1000', collateralValue: '13342.531' });
    const owed = (await signed(server.base, borrower, 'GET', '/api/v1/capital/collateral', 'collateralQuery')).body;
    // 600 held, 500 owed: equity 100; IMF max(0.1, 1/10, 0.0001275·√500) = 0.1 locks 50; MMF 0.0625; MF 100 / 500.
    expect(owed).toEqual({
      assetsValue: '600', borrowLiability: '500', imf: '0.1', unsettledEquity: '0', liabilitiesValue: '500', marginFraction: '0.2', mmf: '0.0625',
      netEquity: '100', netEquityAvailable: '50', netEquityLocked: '50', netExposureFutures: '0', pnlUnrealized: '0',
      collateral: [{
        symbol: 'USDC', assetMarkPrice: '1', totalQuantity: '600', availableQuantity: '600', openOrderQuantity: '0', lendQuantity: '0',
        balanceNotional: '600', collateralWeight: '1', collateralValue: '600',
      }],
    });
    expect((await signed(server.base, borrower, 'GET', '/api/v1/account', 'accountQuery')).body.liquidating).toBe(false);
    expect((await execute(borrower, 'Lend', '500')).status).toBe(200);
    expect((await execute(seller, 'Borrow', '1000')).status).toBe(200);
  });

  it('answers order and withdrawal limits from live balances', async () => {
    const ask = await signed(server.base, seller, 'GET', '/api/v1/account/limits/order', 'maxOrderQuantity', { symbol: 'SOL_USDC', side: 'Ask' });
    expect(ask.body).toMatchObject({ maxOrderQuantity: '90', symbol: 'SOL_USDC', side: 'Ask' });
    // 13342.531 USDC at 200 → 66.71 SOL (lots of 0.01, rounded down)
    const bid = await signed(server.base, seller, 'GET', '/api/v1/account/limits/order', 'maxOrderQuantity', { symbol: 'SOL_USDC', side: 'Bid', price: '200' });
    expect(bid.body).toMatchObject({ maxOrderQuantity: '66.71', price: '200' });
    // A market bid walks the asks: only the seller's 10 SOL at 130 rest.
    const market = await signed(server.base, buyer, 'GET', '/api/v1/account/limits/order', 'maxOrderQuantity', { symbol: 'SOL_USDC', side: 'Bid' });
    expect(market.body.maxOrderQuantity).toBe('10');
    const withdrawal = await signed(server.base, seller, 'GET', '/api/v1/account/limits/withdrawal', 'maxWithdrawalQuantity', { symbol: 'SOL' });
    expect(withdrawal.body).toMatchObject({ maxWithdrawalQuantity: '90', symbol: 'SOL' });
    const unknown = await signed(server.base, seller, 'GET', '/api/v1/account/limits/order', 'maxOrderQuantity', { symbol: 'DOGE_USDC', side: 'Ask' });
    expect(unknown.body.code).toBe('INVALID_MARKET');
    const badSide = await signed(server.base, seller, 'GET', '/api/v1/account/limits/order', 'maxOrderQuantity', { symbol: 'SOL_USDC', side: 'Buy' });
    expect(badSide.status).toBe(400);
  });

  it('converts dust at 95% of the mark price, rounded down, under the spec preconditions', async () => {
    const notDust = await signed(server.base, seller, 'POST', '/api/v1/account/convertDust', 'convertDust', { symbol: 'SOL' });
    expect(notDust.body.code).toBe('PRECONDITION_FAILED');
    const usdc = await signed(server.base, dusty, 'POST', '/api/v1/account/convertDust', 'convertDust', { symbol: 'USDC' });
    expect(usdc.body.code).toBe('PRECONDITION_FAILED');
    const noPrice = await signed(server.base, dusty, 'POST', '/api/v1/account/convertDust', 'convertDust', { symbol: 'BTC' });
    expect(noPrice.body.code).toBe('PRECONDITION_FAILED');
    const before = (await signed(server.base, dusty, 'GET', '/api/v1/capital', 'balanceQuery')).body;
    expect(before.BTC.available).toBe('0.00000123');
    const done = await signed(server.base, dusty, 'POST', '/api/v1/account/convertDust', 'convertDust', { symbol: 'SOL' });
    expect(done.status).toBe(200);
    const after = (await signed(server.base, dusty, 'GET', '/api/v1/capital', 'balanceQuery')).body;
    // 0.005 SOL × 123.45 = 0.61725 USDC; 95% = 0.5863875 → 0.586387 (6 decimals, rounded down)
    expect(after.SOL.available).toBe('0');
    expect(after.USDC.available).toBe('0.586387');
    expect(after.BTC.available).toBe('0.00000123');
    const history = await signed(server.base, dusty, 'GET', '/wapi/v1/history/dust', 'dustHistoryQueryAll', {});
    expect(history.body).toHaveLength(1);
    expect(history.body[0]).toMatchObject({ symbol: 'SOL', quantity: '0.005', usdcReceived: '0.586387' });
    const again = await signed(server.base, dusty, 'POST', '/api/v1/account/convertDust', 'convertDust', {});
    expect(again.body.code).toBe('PRECONDITION_FAILED'); // BTC has no mark price; nothing else is dust
  });
});
