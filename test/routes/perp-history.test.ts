// GET /wapi/v1/history/position and GET /wapi/v1/history/settlement against a running server: two
// accounts open, close and reopen SOL_USDC_PERP positions; asserted by value: one row per position
// (open or closed, newest first), the settlements each fill made (realized PnL, futures fees),
// and the filters, with their refusals; and the marketType filter of the order and fill history and
// the open orders, which selects the markets of each type.
// The file holds perpetual positions and asserts every settlement by value, so it starts clear of
// the wall clock's next hour (the hour of engine time brings funding).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCli, clearOfTheHour, createTestAccount, hourGuardTimeout, removeDir, signed, startServer, tempDataDir, type RunningServer, type TestAccount } from '../helpers/server.js';

/** A bound on this file's duration on a loaded machine (about 5 s alone). */
const FILE_SPAN_MS = 60_000;

const ORDER = { symbol: 'SOL_USDC_PERP', orderType: 'Limit' };

describe('perpetual position and settlement history', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let maker: TestAccount;
  let taker: TestAccount;

  const order = async (account: TestAccount, body: Record<string, unknown>): Promise<void> => {
    const response = await signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { ...ORDER, ...body });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
  };
  const positions = async (account: TestAccount, query: Record<string, string> = {}) => signed(server.base, account, 'GET', '/wapi/v1/history/position', 'positionHistoryQueryAll', query);
  const settlements = async (account: TestAccount, query: Record<string, string> = {}) => signed(server.base, account, 'GET', '/wapi/v1/history/settlement', 'settlementHistoryQueryAll', query);

  beforeAll(async () => {
    await clearOfTheHour(FILE_SPAN_MS);
    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '1', '--speed-bump-ms', '0', '--no-index-default', '--index-max-age-ms', '86400000'] });
    maker = await createTestAccount(server.adminPort, ['USDC=10000', 'SOL=10']);
    taker = await createTestAccount(server.adminPort, ['USDC=10000']);
    await adminCli(server.adminPort, ['set-index-price', 'SOL=100']);
    // The taker buys 2 at 100 and sells them at 110 (taker fees 0.1 and 0.11, +20 realized), then buys 1 at 110.
    await order(maker, { side: 'Ask', price: '100', quantity: '2', postOnly: true });
    await order(taker, { side: 'Bid', price: '100', quantity: '2', timeInForce: 'IOC' });
    await adminCli(server.adminPort, ['set-index-price', 'SOL=110']);
    await order(maker, { side: 'Bid', price: '110', quantity: '2', postOnly: true });
    await order(taker, { side: 'Ask', price: '110', quantity: '2', timeInForce: 'IOC' });
    await order(maker, { side: 'Ask', price: '110', quantity: '1', postOnly: true });
    await order(taker, { side: 'Bid', price: '110', quantity: '1', timeInForce: 'IOC' });
    // A spot trade, and one resting order of the maker in each market.
    await order(maker, { symbol: 'SOL_USDC', side: 'Ask', price: '20', quantity: '1', postOnly: true });
    await order(taker, { symbol: 'SOL_USDC', side: 'Bid', price: '20', quantity: '1', timeInForce: 'IOC' });
    await order(maker, { symbol: 'SOL_USDC', side: 'Bid', price: '19', quantity: '1', postOnly: true });
    await order(maker, { side: 'Bid', price: '90', quantity: '1', postOnly: true });
  }, hourGuardTimeout(FILE_SPAN_MS));
  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  it('lists each position, open or closed, newest first, with its figures', async () => {
    const response = await positions(taker);
    expect(response.status).toBe(200);
    const [open, closed] = response.body as Array<Record<string, unknown>>;
    expect((response.body as unknown[]).length).toBe(2);
    expect(closed).toMatchObject({
      symbol: 'SOL_USDC_PERP', state: 'Closed', netQuantity: '0', netCost: '0', entryPrice: '0', cumulativePnlRealized: '20',
      fees: '0.21', closedVolume: '2', closingPrice: '110', liquidated: false, fundingQuantity: '0', interest: '0',
      liquidationFees: null, accountLeverage: null,
    });
    expect(closed.openedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/);
    expect(typeof closed.closedAt).toBe('string');
    expect(open).toMatchObject({
      symbol: 'SOL_USDC_PERP', state: 'Open', netQuantity: '1', netCost: '110', entryPrice: '110', markPrice: '110',
      cumulativePnlRealized: '0', fees: '0.055', closedVolume: '0', closingPrice: null, closedAt: null, unrealizedPnl: '0',
    });
    expect(Number(open.id)).toBeGreaterThan(Number(closed.id));
    // The maker's short lost what the taker realized.
    expect(((await positions(maker, { state: 'Closed' })).body as Array<Record<string, unknown>>)[0]).toMatchObject({ cumulativePnlRealized: '-20', fees: '0.084', closingPrice: '110' });
  });

  it('filters by state, symbol and marketType, ascending on request, and pages', async () => {
    const all = (await positions(taker)).body as Array<{ id: string }>;
    expect(((await positions(taker, { state: 'Open' })).body as Array<{ id: string }>).map((p) => p.id)).toEqual([all[0].id]);
    expect(((await positions(taker, { state: 'Closed' })).body as Array<{ id: string }>).map((p) => p.id)).toEqual([all[1].id]);
    expect(((await positions(taker, { sortDirection: 'Asc' })).body as Array<{ id: string }>).map((p) => p.id)).toEqual([all[1].id, all[0].id]);
    expect(((await positions(taker, { limit: '1', offset: '1' })).body as Array<{ id: string }>).map((p) => p.id)).toEqual([all[1].id]);
    expect((await positions(taker, { symbol: 'BTC_USDC_PERP' })).body).toEqual([]);
    expect((await positions(taker, { marketType: 'SPOT' })).body).toEqual([]);
    expect(((await positions(taker, { marketType: 'PERP' })).body as unknown[]).length).toBe(2);
    for (const query of [{ symbol: 'SOL_USDC' }, { state: 'Gone' }, { marketType: 'NOPE' }, { limit: '0' }]) {
      const response = await positions(taker, query);
      expect(response.status, JSON.stringify(query)).toBe(400);
      expect(Object.keys(response.body as object).sort()).toEqual(['code', 'message']);
    }
  });

  it('lists the settlements of each fill: realized PnL and futures fees, newest first', async () => {
    const response = await settlements(taker);
    expect(response.status).toBe(200);
    const rows = response.body as Array<Record<string, unknown>>;
    const [open, closed] = (await positions(taker)).body as Array<{ id: string }>;
    expect(rows.map((r) => [r.source, r.quantity, r.positionId])).toEqual([
      ['TradingFees', '-0.055', open.id],
      ['TradingFees', '-0.11', closed.id],
      ['RealizePnl', '20', closed.id],
      ['TradingFees', '-0.1', closed.id],
    ]);
    for (const r of rows) {
      expect(r).toMatchObject({ subaccountId: null, userId: taker.accountId });
      expect(Number.isInteger(r.engineSequence)).toBe(true);
      expect(r.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/);
    }
    expect(rows[1].engineSequence).toBe(rows[2].engineSequence);
    expect(((await settlements(taker, { source: 'RealizePnl' })).body as Array<{ quantity: string }>).map((r) => r.quantity)).toEqual(['20']);
    expect(((await settlements(maker, { source: 'RealizePnl' })).body as Array<{ quantity: string }>).map((r) => r.quantity)).toEqual(['-20']);
    expect(((await settlements(taker, { limit: '2', offset: '1' })).body as unknown[]).length).toBe(2);
    const refused = await settlements(taker, { source: 'Nope' });
    expect(refused.status).toBe(400);
    expect(Object.keys(refused.body as object).sort()).toEqual(['code', 'message']);
  });

  it('marketType selects the markets of each type in the order and fill history and the open orders', async () => {
    const symbols = (rows: unknown): string[] => (rows as Array<{ symbol: string }>).map((r) => r.symbol);
    const fills = (query: Record<string, string>) => signed(server.base, taker, 'GET', '/wapi/v1/history/fills', 'fillHistoryQueryAll', query);
    const orders = (query: Record<string, string>) => signed(server.base, taker, 'GET', '/wapi/v1/history/orders', 'orderHistoryQueryAll', query);
    const open = (query: Record<string, string>) => signed(server.base, maker, 'GET', '/api/v1/orders', 'orderQueryAll', query);
    expect(symbols((await fills({})).body).sort()).toEqual(['SOL_USDC', 'SOL_USDC_PERP', 'SOL_USDC_PERP', 'SOL_USDC_PERP']);
    expect(symbols((await fills({ marketType: 'PERP' })).body)).toEqual(['SOL_USDC_PERP', 'SOL_USDC_PERP', 'SOL_USDC_PERP']);
    expect(symbols((await fills({ marketType: 'spot' })).body)).toEqual(['SOL_USDC']);
    expect(symbols((await fills({ marketType: 'IPERP' })).body)).toEqual([]);
    expect(symbols((await fills({ marketType: 'PERP', symbol: 'SOL_USDC' })).body)).toEqual([]);
    expect(symbols((await orders({ marketType: 'PERP' })).body)).toEqual(['SOL_USDC_PERP', 'SOL_USDC_PERP', 'SOL_USDC_PERP']);
    expect(symbols((await orders({ marketType: 'SPOT' })).body)).toEqual(['SOL_USDC']);
    expect(symbols((await orders({ marketType: 'PERP', symbol: 'SOL_USDC_PERP' })).body)).toEqual(['SOL_USDC_PERP', 'SOL_USDC_PERP', 'SOL_USDC_PERP']);
    expect((await open({ marketType: 'PERP' })).body).toMatchObject([{ symbol: 'SOL_USDC_PERP', price: '90' }]);
    expect((await open({ marketType: 'SPOT' })).body).toMatchObject([{ symbol: 'SOL_USDC', price: '19' }]);
    expect((await orders({ marketType: 'NOPE' })).status).toBe(400);
  });
});
