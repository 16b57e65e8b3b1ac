// The walking skeleton end to end: the real server as a child process, accounts made through the
// admin CLI, signed orders over HTTP, the fill seen in balances, depth and the WebSocket streams,
// then a restart on the same data directory that must show the same open orders and balances.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestAccount,
  get,
  removeDir,
  signed,
  startServer,
  tempDataDir,
  waitUntil,
  type RunningServer,
  type TestAccount,
} from '../helpers/server.js';
import { StreamClient } from '../helpers/stream-client.js';

describe('walking skeleton: one signed order through the whole path', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let maker: TestAccount;
  let taker: TestAccount;
  let publicStream: StreamClient;
  let makerStream: StreamClient;
  let takerStream: StreamClient;
  let makerOrderId = '';

  beforeAll(async () => {
    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '2'] });
    maker = await createTestAccount(server.adminPort, ['SOL=100', 'USDC=1000']);
    taker = await createTestAccount(server.adminPort, ['USDC=10000']);
    publicStream = await StreamClient.connect(server.port);
    makerStream = await StreamClient.connect(server.port);
    takerStream = await StreamClient.connect(server.port);
  });

  afterAll(async () => {
    for (const s of [publicStream, makerStream, takerStream]) s?.close();
    await server?.stop();
    removeDir(dataDir);
  });

  it('creates accounts through the admin CLI with generated keys and deposits', async () => {
    expect(maker.accountId).toBe(1);
    expect(taker.accountId).toBe(2);
    expect(Buffer.from(maker.publicKey, 'base64')).toHaveLength(32);
    expect(Buffer.from(maker.secretKey, 'base64')).toHaveLength(32);
    const capital = await signed(server.base, maker, 'GET', '/api/v1/capital', 'balanceQuery');
    expect(capital.status).toBe(200);
    expect(capital.body.SOL).toEqual({ available: '100', locked: '0', staked: '0' });
    expect(capital.body.USDC).toEqual({ available: '1000', locked: '0', staked: '0' });
    expect(capital.body.BTC).toEqual({ available: '0', locked: '0', staked: '0' });
  });

  it('serves markets in the wire shape', async () => {
    const markets = await get(server.base, '/api/v1/markets');
    expect(markets.status).toBe(200);
    const sol = markets.body.find((m: any) => m.symbol === 'SOL_USDC');
    expect(sol).toMatchObject({
      baseSymbol: 'SOL', quoteSymbol: 'USDC', marketType: 'SPOT', orderBookState: 'Open', visible: true,
      filters: {
        price: { tickSize: '0.01', minPrice: '0.01', maxMultiplier: '1.25', minMultiplier: '0.75' },
        quantity: { stepSize: '0.01', minQuantity: '0.01' },
      },
    });
    expect(markets.body.map((m: any) => m.symbol)).toEqual(['SOL_USDC', 'BTC_USDC', 'ETH_USDC', 'SOL_USDC_PERP', 'BTC_USDC_PERP', 'ETH_USDC_PERP']);
    expect(sol).toMatchObject({ imfFunction: null, mmfFunction: null, fundingInterval: null, openInterestLimit: null });
    // A perpetual as the venue shows one: its margin functions, hourly funding and bounds in bps.
    expect(markets.body.find((m: any) => m.symbol === 'SOL_USDC_PERP')).toEqual({
      symbol: 'SOL_USDC_PERP', baseSymbol: 'SOL', quoteSymbol: 'USDC', marketType: 'PERP',
      filters: {
        price: {
          minPrice: '0.01', maxPrice: '10000', tickSize: '0.01', maxMultiplier: '1.25', minMultiplier: '0.75',
          maxImpactMultiplier: null, minImpactMultiplier: null, meanMarkPriceBand: null, meanPremiumBand: null,
          borrowEntryFeeMaxMultiplier: null, borrowEntryFeeMinMultiplier: null,
        },
        quantity: { minQuantity: '0.01', maxQuantity: '100000', stepSize: '0.01' },
      },
      imfFunction: { type: 'sqrt', base: '0.02', factor: '0.0001275' },
      mmfFunction: { type: 'sqrt', base: '0.0125', factor: '0.0000765' },
      fundingInterval: 3600000, fundingRateUpperBound: '100', fundingRateLowerBound: '-100', openInterestLimit: '4000000',
      orderBookState: 'Open', createdAt: '2024-01-01T00:00:00.000000', visible: true, positionLimitWeight: '1', rwaMarketType: null,
    });
    // A spot market holds no position: no weight in the position limit.
    expect(sol.positionLimitWeight).toBeNull();
  });

  it('rests a maker order, fills a crossing taker order, and streams it all', async () => {
    publicStream.send({ method: 'SUBSCRIBE', params: ['depth.SOL_USDC', 'trade.SOL_USDC'] });
    makerStream.subscribeSigned(maker, ['account.orderUpdate']);
    takerStream.subscribeSigned(taker, ['account.orderUpdate.SOL_USDC']);
    // Subscriptions are processed in order on each connection; a round trip through an invalid
    // stream proves each connection has handled its SUBSCRIBE before orders are sent.
    for (const s of [publicStream, makerStream, takerStream]) {
      s.send({ method: 'SUBSCRIBE', params: ['nonsense.stream'] });
      await waitUntil(() => s.find((m) => m.error?.code === 4006) ?? undefined, 'invalid-stream error frame');
    }

    const ask = await signed(server.base, maker, 'POST', '/api/v1/order', 'orderExecute', {
      symbol: 'SOL_USDC', side: 'Ask', orderType: 'Limit', price: '20', quantity: '2', clientId: 7,
    });
    expect(ask.status).toBe(200);
    expect(ask.body).toMatchObject({
      orderType: 'Limit', clientId: 7, symbol: 'SOL_USDC', side: 'Ask', price: '20', quantity: '2',
      executedQuantity: '0', executedQuoteQuantity: '0', postOnly: false, timeInForce: 'GTC',
      selfTradePrevention: 'RejectTaker', status: 'New',
    });
    expect(ask.body.id).toMatch(/^\d+$/);
    expect(typeof ask.body.createdAt).toBe('number');
    expect(ask.body).not.toHaveProperty('code');
    makerOrderId = ask.body.id;

    const bid = await signed(server.base, taker, 'POST', '/api/v1/order', 'orderExecute', {
      symbol: 'SOL_USDC', side: 'Bid', orderType: 'Limit', price: '21', quantity: '1.5',
    });
    expect(bid.status).toBe(200);
    expect(bid.body).toMatchObject({
      side: 'Bid', price: '21', quantity: '1.5', executedQuantity: '1.5', executedQuoteQuantity: '30', status: 'Filled', clientId: null,
    });

    // Balances: the taker paid 1.5 × 20 (the maker's price) and got 1.5 SOL less its 5 bps taker
    // fee (0.00075 SOL); its lock at 21 was released in full. The maker got 30 USDC less its 2 bps
    // maker fee (0.006 USDC).
    const takerCapital = await signed(server.base, taker, 'GET', '/api/v1/capital', 'balanceQuery');
    expect(takerCapital.body.SOL).toEqual({ available: '1.49925', locked: '0', staked: '0' });
    expect(takerCapital.body.USDC).toEqual({ available: '9970', locked: '0', staked: '0' });
    const makerCapital = await signed(server.base, maker, 'GET', '/api/v1/capital', 'balanceQuery');
    expect(makerCapital.body.SOL).toEqual({ available: '98', locked: '0.5', staked: '0' });
    expect(makerCapital.body.USDC).toEqual({ available: '1029.994', locked: '0', staked: '0' });

    const depth = await get(server.base, '/api/v1/depth?symbol=SOL_USDC');
    expect(depth.status).toBe(200);
    expect(depth.body.asks).toEqual([['20.00', '0.50']]);
    expect(depth.body.bids).toEqual([]);
    expect(depth.body.lastUpdateId).toMatch(/^\d+$/);
    expect(Number.isInteger(depth.body.timestamp)).toBe(true);
    expect(depth.body.timestamp).toBeGreaterThan(1_600_000_000_000_000);

    const trade = await waitUntil(() => publicStream.find((m) => m.stream === 'trade.SOL_USDC'), 'trade message');
    expect(trade.data).toMatchObject({ e: 'trade', s: 'SOL_USDC', p: '20.00', q: '1.50', a: makerOrderId, b: bid.body.id, m: false });
    expect(Number.isInteger(trade.data.t)).toBe(true);

    // The last depth message carries the book as REST shows it, in the same update-id space.
    const lastDepth = await waitUntil(() => {
      const all = publicStream.messages.filter((m) => m.stream === 'depth.SOL_USDC');
      const last = all[all.length - 1];
      return last && String(last.data.u) === depth.body.lastUpdateId ? last : undefined;
    }, 'depth message matching the REST lastUpdateId');
    expect(lastDepth.data).toMatchObject({ e: 'depth', s: 'SOL_USDC', a: [['20.00', '0.50']] });
    const depthMessages = publicStream.messages.filter((m) => m.stream === 'depth.SOL_USDC');
    for (let i = 1; i < depthMessages.length; i++) expect(depthMessages[i].data.U).toBe(depthMessages[i - 1].data.u + 1);

    const makerFill = await waitUntil(() => makerStream.find((m) => m.data?.e === 'orderFill'), 'maker orderFill');
    expect(makerFill.stream).toBe('account.orderUpdate');
    expect(makerFill.data).toMatchObject({
      s: 'SOL_USDC', c: 7, S: 'Ask', o: 'LIMIT', f: 'GTC', q: '2', p: '20', X: 'PartiallyFilled', i: makerOrderId,
      l: '1.5', L: '20', m: true, n: '0.006', N: 'USDC', z: '1.5', Z: '30', V: 'RejectTaker', O: 'USER',
    });
    const takerEvents = await waitUntil(() => {
      const events = takerStream.messages.filter((m) => m.stream === 'account.orderUpdate.SOL_USDC').map((m) => m.data.e);
      return events.includes('orderFill') ? events : undefined;
    }, 'taker orderAccepted and orderFill');
    expect(takerEvents).toEqual(['orderAccepted', 'orderFill']);
    const takerFill = takerStream.find((m) => m.data?.e === 'orderFill');
    expect(takerFill.data).toMatchObject({ X: 'Filled', m: false, l: '1.5', n: '0.00075', N: 'SOL', z: '1.5', Z: '30', i: bid.body.id });
    expect(Number.isInteger(takerFill.data.E)).toBe(true);
    expect(Number.isInteger(takerFill.data.T)).toBe(true);
    // The maker's stream never carries the taker's events, and the reverse.
    expect(makerStream.messages.every((m) => !m.data || m.data.i === makerOrderId)).toBe(true);
  });

  it('lists open orders and answers order queries', async () => {
    const open = await signed(server.base, maker, 'GET', '/api/v1/orders', 'orderQueryAll', { symbol: 'SOL_USDC' });
    expect(open.status).toBe(200);
    expect(open.body).toHaveLength(1);
    expect(open.body[0]).toMatchObject({ id: makerOrderId, status: 'PartiallyFilled', executedQuantity: '1.5', quantity: '2' });
    const none = await signed(server.base, taker, 'GET', '/api/v1/orders', 'orderQueryAll');
    expect(none.body).toEqual([]);
  });

  it('keeps open orders and balances across a restart on the same data directory', async () => {
    const before = {
      orders: (await signed(server.base, maker, 'GET', '/api/v1/orders', 'orderQueryAll')).body,
      maker: (await signed(server.base, maker, 'GET', '/api/v1/capital', 'balanceQuery')).body,
      taker: (await signed(server.base, taker, 'GET', '/api/v1/capital', 'balanceQuery')).body,
      depth: (await get(server.base, '/api/v1/depth?symbol=SOL_USDC')).body,
    };
    for (const s of [publicStream, makerStream, takerStream]) s.close();
    expect(await server.stop('SIGTERM')).toBe(0);

    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '2'] });
    const after = {
      orders: (await signed(server.base, maker, 'GET', '/api/v1/orders', 'orderQueryAll')).body,
      maker: (await signed(server.base, maker, 'GET', '/api/v1/capital', 'balanceQuery')).body,
      taker: (await signed(server.base, taker, 'GET', '/api/v1/capital', 'balanceQuery')).body,
      depth: (await get(server.base, '/api/v1/depth?symbol=SOL_USDC')).body,
    };
    expect(after.orders).toEqual(before.orders);
    expect(after.maker).toEqual(before.maker);
    expect(after.taker).toEqual(before.taker);
    expect(after.depth.asks).toEqual(before.depth.asks);
    expect(after.depth.lastUpdateId).toBe(before.depth.lastUpdateId);

    // And the restarted exchange keeps trading: cancel the rest of the maker's order.
    const cancel = await signed(server.base, maker, 'DELETE', '/api/v1/order', 'orderCancel', { symbol: 'SOL_USDC', orderId: makerOrderId });
    expect(cancel.status).toBe(200);
    expect(cancel.body).toMatchObject({ id: makerOrderId, status: 'Cancelled', executedQuantity: '1.5' });
    const makerAfterCancel = await signed(server.base, maker, 'GET', '/api/v1/capital', 'balanceQuery');
    expect(makerAfterCancel.body.SOL).toEqual({ available: '98.5', locked: '0', staked: '0' });
  });
});
