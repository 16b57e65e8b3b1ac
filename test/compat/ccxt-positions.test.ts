// ccxt perpetuals: ccxt's backpack class, unchanged except for its base URL, lists the PERP
// markets as linear USDC-settled swaps, trades SOL_USDC_PERP between two accounts and reads both
// positions with fetchPositions (GET /api/v1/position), asserting by value what ccxt parses (this
// ccxt version's parsePosition keeps the wire's decimal strings):
// side from netCost's sign, contracts, entry and mark price, notional, unrealized and realized
// PnL, the estimated liquidation price, IMF and MMF.
// The file trades a perpetual and asserts its figures to the unit, so it starts clear of the wall
// clock's next hour (the hour of engine time brings funding).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCli, clearOfTheHour, createTestAccount, hourGuardTimeout, removeDir, signed, startServer, tempDataDir, type RunningServer, type TestAccount } from '../helpers/server.js';
import { ccxtRest } from '../helpers/ccxt.js';

/** A bound on this file's duration on a loaded machine (about 6 s alone). */
const FILE_SPAN_MS = 60_000;

const PERP = 'SOL/USDC:USDC';

describe('ccxt backpack perpetual positions against our server', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let shortAccount: TestAccount;
  let longAccount: TestAccount;
  let short: ReturnType<typeof ccxtRest>;
  let long: ReturnType<typeof ccxtRest>;

  beforeAll(async () => {
    await clearOfTheHour(FILE_SPAN_MS);
    // Index prices only from the operator, and fresh for a day: the marks below are exactly the ones set.
    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '1', '--speed-bump-ms', '0', '--no-index-default', '--index-max-age-ms', '86400000'] });
    shortAccount = await createTestAccount(server.adminPort, ['USDC=10000']);
    longAccount = await createTestAccount(server.adminPort, ['USDC=10000']);
    short = ccxtRest(server, shortAccount);
    long = ccxtRest(server, longAccount);
    await short.loadMarkets();
    await long.loadMarkets();
    await adminCli(server.adminPort, ['set-index-price', 'SOL=100']);
  }, hourGuardTimeout(FILE_SPAN_MS));
  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  it('lists the perpetuals as linear swaps settled in USDC', () => {
    expect(long.markets[PERP]).toMatchObject({
      id: 'SOL_USDC_PERP', type: 'swap', swap: true, spot: false, contract: true, linear: true, inverse: false,
      settle: 'USDC', contractSize: 1, active: true, precision: { amount: 0.01, price: 0.01 },
    });
    expect(Object.keys(long.markets).sort()).toEqual(['BTC/USDC', 'BTC/USDC:USDC', 'ETH/USDC', 'ETH/USDC:USDC', 'SOL/USDC', 'SOL/USDC:USDC']);
  });

  it('fetchPositions after two accounts trade: both sides, then a partial close that realizes PnL', async () => {
    expect(await long.fetchPositions()).toEqual([]);
    await short.createOrder(PERP, 'limit', 'sell', 2, 100, { postOnly: true });
    const bought = await long.createOrder(PERP, 'market', 'buy', 2);
    expect(bought).toMatchObject({ symbol: PERP, filled: 2, average: 100, status: 'closed' });
    await adminCli(server.adminPort, ['set-index-price', 'SOL=110']);

    const [longPosition] = await long.fetchPositions();
    expect(longPosition).toMatchObject({
      symbol: PERP, side: 'long', contracts: '2', entryPrice: '100', markPrice: '110', notional: '200',
      unrealizedPnl: '20', realizedPnl: '0', liquidationPrice: '0', initialMarginPercentage: '1', maintenanceMarginPercentage: '0.0125',
    });
    // Taker fee 0.05 % of 200: break-even is (200 + 0.1) / 2. Exposure at mark: 2 × 110.
    expect(longPosition.info).toMatchObject({
      breakEvenPrice: '100.05', netQuantity: '2', netExposureQuantity: '2', netExposureNotional: '220', netCost: '200',
      pnlUnrealized: '20', cumulativeFundingPayment: '0', imfFunction: { type: 'sqrt', base: '0.02', factor: '0.0001275' }, symbol: 'SOL_USDC_PERP',
    });
    const [shortPosition] = await short.fetchPositions();
    expect(shortPosition).toMatchObject({ symbol: PERP, side: 'short', contracts: '2', entryPrice: '100', markPrice: '110', notional: '200', unrealizedPnl: '-20', realizedPnl: '0' });
    // Liquidation where equity (9999.96 − 20 at mark 110) meets 2 × m × 0.0125: m = (9979.96 + 220) / 2.025.
    expect(Number(shortPosition.liquidationPrice)).toBeCloseTo(10199.96 / 2.025, 6);
    expect(shortPosition.info).toMatchObject({ netQuantity: '-2', netCost: '-200', breakEvenPrice: '99.98' });

    // The short buys 1 back at 110 from the long: each realizes 10, the loss paying the profit.
    await short.createOrder(PERP, 'limit', 'buy', 1, 110, { postOnly: true });
    await long.createOrder(PERP, 'market', 'sell', 1);
    const [after] = await long.fetchPositions();
    expect(after).toMatchObject({ side: 'long', contracts: '1', entryPrice: '100', realizedPnl: '10', unrealizedPnl: '10', notional: '100' });
    const [shortAfter] = await short.fetchPositions();
    expect(shortAfter).toMatchObject({ side: 'short', contracts: '1', entryPrice: '100', realizedPnl: '-10', unrealizedPnl: '-10' });
    // USDC: the long paid 0.1 + 0.055 in taker fees and received its 10; the short 0.04 + 0.022 in maker fees and paid 10.
    expect((await long.fetchBalance())['USDC']).toMatchObject({ free: 10009.845, used: 0 });
    expect((await short.fetchBalance())['USDC']).toMatchObject({ free: 9989.938, used: 0 });
    // The account summary counts the position: uPnL in net equity, its exposure in the futures exposure.
    const summary = await signed(server.base, longAccount, 'GET', '/api/v1/capital/collateral', 'collateralQuery');
    expect(summary.body).toMatchObject({ pnlUnrealized: '10', unsettledEquity: '0', netExposureFutures: '110', netEquity: '10019.845' });
  });

  it('answers a symbol without a position with 404 and a spot symbol with 400', async () => {
    const none = await signed(server.base, longAccount, 'GET', '/api/v1/position', 'positionQuery', { symbol: 'ETH_USDC_PERP' });
    expect(none.status).toBe(404);
    expect(none.body).toEqual({ code: 'RESOURCE_NOT_FOUND', message: 'Position not found' });
    const spot = await signed(server.base, longAccount, 'GET', '/api/v1/position', 'positionQuery', { symbol: 'SOL_USDC' });
    expect(spot.status).toBe(400);
    const one = await signed(server.base, longAccount, 'GET', '/api/v1/position', 'positionQuery', { symbol: 'SOL_USDC_PERP' });
    expect(one.status).toBe(200);
    expect((one.body as Array<{ netQuantity: string }>).map((p) => p.netQuantity)).toEqual(['1']);
    expect((await signed(server.base, longAccount, 'GET', '/api/v1/position', 'positionQuery', { marketType: 'SPOT' })).body).toEqual([]);
  });
});
