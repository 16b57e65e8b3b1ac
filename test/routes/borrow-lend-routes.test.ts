// Borrow/lend over real HTTP with the default configuration: the markets as the engine reports
// them (totals, rates, utilization) with the configured parameters, lend, borrow against USDC
// collateral, repay and redeem through POST /api/v1/borrowLend, the signed positions, the move
// history, the venue's error codes, and the same reads through ccxt's implicit methods (ccxt's
// backpack has no unified borrow/lend methods: fetchBorrowRate and the like are not offered).
// A restart keeps the positions (journal replay). Interest is tested in the engine
// (engine-borrow-lend.test.ts): it accrues on the hour of engine time, so the file starts clear of
// the wall clock's next hour and its figures are exact.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clearOfTheHour, createTestAccount, get, hourGuardTimeout, removeDir, signed, startServer, tempDataDir, type RunningServer, type TestAccount } from '../helpers/server.js';
import { ccxtRest } from '../helpers/ccxt.js';

const SERVER_ARGS = ['--no-demo', '--front-threads', '1'];
/** A bound on this file's duration, a restart included, on a loaded machine (about 10 s alone). */
const FILE_SPAN_MS = 60_000;

/** The default USDC pool's parameters as the markets endpoint shows them (proposed defaults, README). */
const USDC_PARAMETERS = {
  fee: '0', maxUtilization: '0.95', openBorrowLendLimit: '100000000', optimalUtilization: '0.7', stepSize: '0.01',
  throttleUtilizationThreshold: '0.8', throttleUtilizationBound: '0.9', throttleUpdateFraction: '0.1',
};

describe('borrow/lend routes', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let lender: TestAccount;
  let borrower: TestAccount;
  beforeAll(async () => {
    await clearOfTheHour(FILE_SPAN_MS);
    server = await startServer({ dataDir, args: SERVER_ARGS });
    lender = await createTestAccount(server.adminPort, ['USDC=10000']);
    borrower = await createTestAccount(server.adminPort, ['USDC=100']);
    // 10× leverage: a borrow's IMF is then the pool's 0.1 (at the default 1× it would be 1).
    expect((await signed(server.base, borrower, 'PATCH', '/api/v1/account', 'accountUpdate', { leverageLimit: '10' })).status).toBe(200);
  }, hourGuardTimeout(FILE_SPAN_MS));
  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  const execute = (account: TestAccount, side: string, symbol: string, quantity: string) =>
    signed(server.base, account, 'POST', '/api/v1/borrowLend', 'borrowLendExecute', { quantity, side, symbol });
  const usdcMarket = async () => ((await get(server.base, '/api/v1/borrowLend/markets')).body as Array<Record<string, unknown>>).find((m) => m.symbol === 'USDC')!;

  it('lists every pool with the engine\'s figures and the configured parameters', async () => {
    const response = await get(server.base, '/api/v1/borrowLend/markets');
    expect(response.status).toBe(200);
    const markets = response.body as Array<Record<string, unknown>>;
    expect(markets.map((m) => m.symbol)).toEqual(['USDC', 'SOL', 'BTC', 'ETH']);
    expect(markets[0]).toMatchObject({
      state: 'Open', assetMarkPrice: '1', borrowInterestRate: '0', lendInterestRate: '0', borrowedQuantity: '0', lentQuantity: '0', utilization: '0', ...USDC_PARAMETERS,
    });
    expect(markets[1]).toMatchObject({ symbol: 'SOL', assetMarkPrice: '0', stepSize: '0.01', openBorrowLendLimit: '1000000' });
  });

  it('lends, borrows against collateral, repays and redeems, with the positions and the history', async () => {
    expect((await execute(lender, 'Lend', 'USDC', '5000')).status).toBe(200);
    // 100 USDC of equity covers a borrow of up to 1000 at IMF 0.1: equity stays 100 ≥ 0.1 × 1000.
    const tooMuch = await execute(borrower, 'Borrow', 'USDC', '1000.01');
    expect([tooMuch.status, tooMuch.body]).toEqual([400, { code: 'INSUFFICIENT_MARGIN', message: 'Insufficient margin' }]);
    expect((await execute(borrower, 'Borrow', 'USDC', '1000')).status).toBe(200);
    // u = 1000 / 5000 = 0.2 ≤ 0.7: r = 0.1 × 0.2 / 0.7 = 0.028571428572 (rounded up), lend rate = r × 0.2 rounded down.
    expect(await usdcMarket()).toMatchObject({
      lentQuantity: '5000', borrowedQuantity: '1000', utilization: '0.2', borrowInterestRate: '0.028571428572', lendInterestRate: '0.005714285714',
    });
    const positions = await signed(server.base, borrower, 'GET', '/api/v1/borrowLend/positions', 'borrowLendPositionQuery');
    expect(positions.body).toEqual([{
      cumulativeInterest: '0', id: expect.stringMatching(/^\d+$/), imf: '0.1', imfFunction: { type: 'sqrt', base: '0.1', factor: '0.0001275' },
      markPrice: '1', mmf: '0.0625', mmfFunction: { type: 'sqrt', base: '0.0625', factor: '0.0000765' },
      netExposureNotional: '1000', netExposureQuantity: '1000', netQuantity: '-1000', estLiquidationPrice: null, symbol: 'USDC',
    }]);
    const borrowerCapital = await signed(server.base, borrower, 'GET', '/api/v1/capital', 'balanceQuery');
    expect(borrowerCapital.body.USDC.available).toBe('1100');
    // Lend on a borrowed asset repays, at most the borrow; Borrow on a lent asset redeems, at most the lend.
    expect((await execute(borrower, 'Lend', 'USDC', '1000.01')).body.code).toBe('LEND_REQUIRES_BORROW_REPAY');
    expect((await execute(borrower, 'Lend', 'USDC', '400')).status).toBe(200);
    expect((await execute(lender, 'Borrow', 'USDC', '5000.01')).body.code).toBe('BORROW_REQUIRES_LEND_REDEEM');
    expect((await execute(lender, 'Borrow', 'USDC', '1000')).status).toBe(200);
    const lenderPositions = await signed(server.base, lender, 'GET', '/api/v1/borrowLend/positions', 'borrowLendPositionQuery');
    expect(lenderPositions.body).toMatchObject([{ symbol: 'USDC', netQuantity: '4000', netExposureQuantity: '0', imf: '0', cumulativeInterest: '0' }]);
    const history = await signed(server.base, borrower, 'GET', '/wapi/v1/history/borrowLend', 'borrowHistoryQueryAll');
    expect(history.body.map((e: Record<string, unknown>) => [e.eventType, e.quantity, e.positionQuantity, e.source, e.symbol])).toEqual([
      ['BorrowRepay', '400', '-600', 'Manual', 'USDC'],
      ['Borrow', '1000', '-1000', 'Manual', 'USDC'],
    ]);
    const repays = await signed(server.base, borrower, 'GET', '/wapi/v1/history/borrowLend', 'borrowHistoryQueryAll', { type: 'BorrowRepay', sortDirection: 'Asc' });
    expect(repays.body.map((e: Record<string, unknown>) => e.eventType)).toEqual(['BorrowRepay']);
    const interest = await signed(server.base, borrower, 'GET', '/wapi/v1/history/interest', 'interestHistoryQueryAll');
    expect([interest.status, interest.body]).toEqual([200, []]);
  });

  it('answers bad requests with the venue\'s codes', async () => {
    expect((await execute(lender, 'Lend', 'DOGE', '1')).body.code).toBe('INVALID_ASSET');
    expect((await execute(lender, 'Give', 'USDC', '1')).body.code).toBe('INVALID_CLIENT_REQUEST');
    expect((await execute(lender, 'Lend', 'USDC', '0.001')).body.code).toBe('INVALID_QUANTITY'); // below USDC's step 0.01
    expect((await execute(lender, 'Lend', 'USDC', '-1')).body.code).toBe('INVALID_QUANTITY');
    expect((await execute(lender, 'Lend', 'SOL', '1')).body.code).toBe('INSUFFICIENT_FUNDS');
    expect((await execute(borrower, 'Borrow', 'SOL', '0.01')).body.code).toBe('INSUFFICIENT_SUPPLY'); // nothing lent
  });

  it('serves the same through ccxt\'s implicit methods, and keeps the positions over a restart', async () => {
    const client = ccxtRest(server, borrower) as unknown as Record<string, (params?: Record<string, unknown>) => Promise<any>>;
    const markets = await client.publicGetApiV1BorrowLendMarkets();
    expect(markets.find((m: Record<string, unknown>) => m.symbol === 'USDC')).toMatchObject({ lentQuantity: '4000', borrowedQuantity: '600', utilization: '0.15' });
    await client.privatePostApiV1BorrowLend({ symbol: 'USDC', side: 'Lend', quantity: '100' });
    expect((await client.privateGetApiV1BorrowLendPositions()).map((p: Record<string, unknown>) => [p.symbol, p.netQuantity])).toEqual([['USDC', '-500']]);
    const history = await client.privateGetWapiV1HistoryBorrowLend({ limit: 1 });
    expect(history.map((e: Record<string, unknown>) => [e.eventType, e.quantity])).toEqual([['BorrowRepay', '100']]);
    expect(await client.privateGetWapiV1HistoryInterest()).toEqual([]);
    await server.stop();
    server = await startServer({ dataDir, args: SERVER_ARGS });
    const after = await signed(server.base, borrower, 'GET', '/api/v1/borrowLend/positions', 'borrowLendPositionQuery');
    expect(after.body.map((p: Record<string, unknown>) => [p.symbol, p.netQuantity])).toEqual([['USDC', '-500']]);
    expect(await usdcMarket()).toMatchObject({ lentQuantity: '4000', borrowedQuantity: '500' });
  });
});
