// The borrow/lend reads built on the engine's records and the LMDB history, over real HTTP with the
// default configuration: the estimated liquidation price (GET /api/v1/borrowLend/position/
// liquidationPrice, signed with the empty instruction ccxt uses), the sources of automatic moves
// in /wapi/v1/history/borrowLend, the positions history (/wapi/v1/history/borrowLend/positions)
// and the markets history (/api/v1/borrowLend/markets/history), also through ccxt's implicit
// methods. The hourly samples and the position rows are asserted by value in
// test/store/borrow-lend-history.test.ts, which sets engine time. The positions here are asserted
// without interest, so the file starts clear of the wall clock's next hour.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ccxtRest } from '../helpers/ccxt.js';
import { adminCli, clearOfTheHour, createTestAccount, get, hourGuardTimeout, removeDir, signed, startServer, tempDataDir, type RunningServer, type TestAccount } from '../helpers/server.js';

/** A bound on this file's duration on a loaded machine (about 6 s alone). */
const FILE_SPAN_MS = 60_000;
const LIQUIDATION_PATH = '/api/v1/borrowLend/position/liquidationPrice';
const b64 = (payload: unknown): string => Buffer.from(JSON.stringify(payload)).toString('base64');

describe('borrow/lend history and estimate routes', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let holder: TestAccount;
  let saver: TestAccount;
  beforeAll(async () => {
    await clearOfTheHour(FILE_SPAN_MS);
    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '1', '--index-max-age-ms', '3600000'] });
    const lender = await createTestAccount(server.adminPort, ['USDC=10000']);
    holder = await createTestAccount(server.adminPort, ['SOL=10']);
    saver = await createTestAccount(server.adminPort, ['USDC=100']);
    expect((await signed(server.base, lender, 'POST', '/api/v1/borrowLend', 'borrowLendExecute', { quantity: '5000', side: 'Lend', symbol: 'USDC' })).status).toBe(200);
    for (const account of [holder, saver]) {
      expect((await signed(server.base, account, 'PATCH', '/api/v1/account', 'accountUpdate', { leverageLimit: '10' })).status).toBe(200);
    }
    await adminCli(server.adminPort, ['set-index-price', 'SOL=100']);
  }, hourGuardTimeout(FILE_SPAN_MS));
  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  const liquidation = (account: TestAccount, query: Record<string, string>) => signed(server.base, account, 'GET', LIQUIDATION_PATH, '', query);

  it('estimates the liquidation price of a position after the borrow it is asked about', async () => {
    const solLender = await createTestAccount(server.adminPort, ['SOL=100']);
    const shorter = await createTestAccount(server.adminPort, ['USDC=1000']);
    expect((await signed(server.base, solLender, 'POST', '/api/v1/borrowLend', 'borrowLendExecute', { quantity: '50', side: 'Lend', symbol: 'SOL' })).status).toBe(200);
    expect((await signed(server.base, shorter, 'PATCH', '/api/v1/account', 'accountUpdate', { leverageLimit: '10' })).status).toBe(200);
    // 1000 USDC and a borrow of 5 SOL held (weight 0.85) and owed, MMF 0.125: at p (USDC per SOL
    // ×10^9) equity 10^9 + floor(17 p / 4000) − ceil(p / 200) USDC units against ceil(ceil(p / 200) / 8).
    // At p = 727 272 726 001 that is 454 545 455 ≤ 454 545 455; one less, 454 545 456 > 454 545 454.
    const borrow = b64({ quantity: '5', side: 'Borrow', symbol: 'SOL' });
    const estimate = await liquidation(shorter, { borrow });
    expect([estimate.status, estimate.body]).toEqual([200, { liquidationPrice: '727.272726001', markPrice: '100' }]);
    expect((await signed(server.base, shorter, 'POST', '/api/v1/borrowLend', 'borrowLendExecute', { quantity: '5', side: 'Borrow', symbol: 'SOL' })).status).toBe(200);
    // Through ccxt (which signs with an empty instruction): 5 SOL more owed, liquidated from 363.636363101;
    // the borrow repaid, nothing can liquidate the account.
    const client = ccxtRest(server, shorter) as unknown as Record<string, (params?: Record<string, unknown>) => Promise<any>>;
    expect(await client.privateGetApiV1BorrowLendPositionLiquidationPrice({ borrow })).toEqual({ liquidationPrice: '363.636363101', markPrice: '100' });
    expect(await client.privateGetApiV1BorrowLendPositionLiquidationPrice({ borrow: b64({ quantity: '5', side: 'Lend', symbol: 'SOL' }) }))
      .toEqual({ liquidationPrice: '0', markPrice: '100' });
    // USDC, the asset everything is valued in, has no liquidation price of its own.
    expect((await liquidation(holder, { borrow: b64({ quantity: '300', side: 'Borrow', symbol: 'USDC' }) })).body).toEqual({ liquidationPrice: '0', markPrice: '1' });
  });

  it('refuses bad estimate requests with the venue\'s codes', async () => {
    const refusals = await Promise.all([
      liquidation(holder, {}),
      liquidation(holder, { borrow: 'not base64!' }),
      liquidation(holder, { borrow: b64({ quantity: '1', side: 'Give', symbol: 'USDC' }) }),
      liquidation(holder, { borrow: b64({ quantity: '1', side: 'Borrow', symbol: 'DOGE' }) }),
      liquidation(holder, { borrow: b64({ quantity: '0', side: 'Borrow', symbol: 'USDC' }) }),
      liquidation(holder, { borrow: b64({ quantity: '1', side: 'Borrow', symbol: 'USDC' }), subaccountId: '1' }),
    ]);
    expect(refusals.map((r) => [r.status, r.body.code])).toEqual([
      [400, 'INVALID_CLIENT_REQUEST'], [400, 'INVALID_CLIENT_REQUEST'], [400, 'INVALID_CLIENT_REQUEST'],
      [400, 'INVALID_ASSET'], [400, 'INVALID_QUANTITY'], [400, 'INVALID_CLIENT_REQUEST'],
    ]);
    const unsigned = await get(server.base, `${LIQUIDATION_PATH}?borrow=${encodeURIComponent(b64({ quantity: '1', side: 'Borrow', symbol: 'USDC' }))}`);
    expect(unsigned.status).toBe(401);
  });

  it('names the source of automatic moves, and keeps one row per move of a command', async () => {
    expect((await signed(server.base, saver, 'POST', '/api/v1/borrowLend', 'borrowLendExecute', { quantity: '50', side: 'Lend', symbol: 'USDC' })).status).toBe(200);
    // A bid needing 200 USDC with 50 available: redeem the 50 lent, borrow the other 100, in one command.
    const order = await signed(server.base, saver, 'POST', '/api/v1/order', 'orderExecute',
      { symbol: 'SOL_USDC', side: 'Bid', orderType: 'Limit', price: '100', quantity: '2', autoLendRedeem: true, autoBorrow: true });
    expect(order.status).toBe(200);
    const moves = async (query: Record<string, string> = {}) => ((await signed(server.base, saver, 'GET', '/wapi/v1/history/borrowLend', 'borrowHistoryQueryAll', query)).body as Array<Record<string, unknown>>)
      .map((e) => [e.eventType, e.quantity, e.positionQuantity, e.source]);
    expect(await moves()).toEqual([['Borrow', '100', '-100', 'AutoBorrow'], ['LendRedeem', '50', '0', 'AutoLendRedeem'], ['Lend', '50', '50', 'Manual']]);
    expect(await moves({ sources: 'AutoBorrow' })).toEqual([['Borrow', '100', '-100', 'AutoBorrow']]);
    expect(await moves({ sources: 'Manual,AutoLendRedeem' })).toEqual([['LendRedeem', '50', '0', 'AutoLendRedeem'], ['Lend', '50', '50', 'Manual']]);
    expect(await moves({ sources: 'Liquidation' })).toEqual([]);
  });

  it('lists the positions, open and closed, with their filters', async () => {
    const positions = async (query: Record<string, string> = {}) => {
      const response = await signed(server.base, saver, 'GET', '/wapi/v1/history/borrowLend/positions', 'borrowPositionHistoryQueryAll', query);
      expect(response.status).toBe(200);
      return (response.body as Array<Record<string, unknown>>).map((p) => [p.side, p.quantity, p.source, p.symbol, p.cumulativeInterest, p.avgInterestRate]);
    };
    const borrowRow = ['Borrow', '100', 'AutoBorrow', 'USDC', '0', '0'];
    const lendRow = ['Lend', '0', 'Manual', 'USDC', '0', '0'];
    expect(await positions()).toEqual([borrowRow, lendRow]);
    expect(await positions({ state: 'Open' })).toEqual([borrowRow]);
    expect(await positions({ state: 'Closed', side: 'Lend', symbol: 'USDC' })).toEqual([lendRow]);
    expect(await positions({ sortDirection: 'Asc', limit: '1' })).toEqual([lendRow]);
    expect(await positions({ symbol: 'SOL' })).toEqual([]);
    const bad = await Promise.all([{ state: 'Gone' }, { side: 'Short' }, { symbol: 'DOGE' }].map((query) =>
      signed(server.base, saver, 'GET', '/wapi/v1/history/borrowLend/positions', 'borrowPositionHistoryQueryAll', query)));
    expect(bad.map((r) => [r.status, r.body.code])).toEqual([[400, 'INVALID_CLIENT_REQUEST'], [400, 'INVALID_CLIENT_REQUEST'], [400, 'INVALID_ASSET']]);
    const client = ccxtRest(server, saver) as unknown as Record<string, (params?: Record<string, unknown>) => Promise<any>>;
    const viaCcxt = await client.privateGetWapiV1HistoryBorrowLendPositions();
    expect(viaCcxt.map((p: Record<string, unknown>) => [p.side, p.quantity, p.source])).toEqual([['Borrow', '100', 'AutoBorrow'], ['Lend', '0', 'Manual']]);
  });

  it('serves the markets history of the hours sampled, and refuses bad intervals and symbols', async () => {
    const history = await get(server.base, '/api/v1/borrowLend/markets/history?interval=1year&symbol=USDC');
    expect(history.status).toBe(200);
    // No hour of engine time has to pass during the test: any sample there is has the wire's keys.
    for (const item of history.body as Array<Record<string, unknown>>) {
      expect(Object.keys(item)).toEqual(['borrowInterestRate', 'borrowedQuantity', 'lendInterestRate', 'lentQuantity', 'symbol', 'timestamp', 'utilization']);
      expect(item.symbol).toBe('USDC');
    }
    const refusals = await Promise.all(['', '?interval=2d', '?interval=1d&symbol=DOGE'].map((q) => get(server.base, `/api/v1/borrowLend/markets/history${q}`)));
    expect(refusals.map((r) => [r.status, r.body.code])).toEqual([[400, 'INVALID_CLIENT_REQUEST'], [400, 'INVALID_CLIENT_REQUEST'], [400, 'INVALID_ASSET']]);
    const client = ccxtRest(server) as unknown as Record<string, (params?: Record<string, unknown>) => Promise<any>>;
    expect(Array.isArray(await client.publicGetApiV1BorrowLendMarketsHistory({ interval: '1d' }))).toBe(true);
  });
});
