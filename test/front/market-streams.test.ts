// Every public and private market stream over a real WebSocket client (`ws`): the depth
// synchronisation contract (REST snapshot + stream rebuild exactly the engine's book) with
// compression on and off and on the aggregated variants, quiet-book depth, bookTicker, trade,
// ticker, kline (with the final X: true), account.balanceUpdate, mixed subscribe/unsubscribe in one
// message, the error frames, the subscription bound, and a slow consumer dropped while a fast one
// continues.

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestAccount, get, removeDir, signed, startServer, tempDataDir, waitUntil, type RunningServer, type TestAccount,
} from '../helpers/server.js';
import { placeOrder } from '../helpers/market-trades.js';
import { BookReplica, StreamClient, assertContiguous } from '../helpers/stream-client.js';

describe('market streams', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let maker: TestAccount;
  let taker: TestAccount;
  const clients: StreamClient[] = [];
  const connect = async (compress = false) => {
    const client = await StreamClient.connect(server.port, { compress });
    clients.push(client);
    return client;
  };
  const depth = async (symbol = 'SOL_USDC') => (await get(server.base, `/api/v1/depth?symbol=${symbol}`)).body;
  const cancel = (account: TestAccount, orderId: string) =>
    signed(server.base, account, 'DELETE', '/api/v1/order', 'orderCancel', { symbol: 'SOL_USDC', orderId });

  /** Cancels every open SOL_USDC order, so each case starts from an empty book. */
  const clearBook = async () => {
    for (const account of [maker, taker]) {
      for (const order of (await signed(server.base, account, 'GET', '/api/v1/orders', 'orderQueryAll', { symbol: 'SOL_USDC' })).body) {
        await cancel(account, order.id);
      }
    }
    expect(await depth()).toMatchObject({ bids: [], asks: [] });
  };

  beforeAll(async () => {
    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '1', '--speed-bump-ms', '0'] });
    maker = await createTestAccount(server.adminPort, ['SOL=1000', 'USDC=100000']);
    taker = await createTestAccount(server.adminPort, ['SOL=1000', 'USDC=100000']);
  });
  // Even when a case fails, the next one starts from an empty SOL_USDC book.
  afterEach(async () => {
    if (server) await clearBook();
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await server?.stop();
    removeDir(dataDir);
  });

  it('sends depth messages for a quiet book, contiguous and in the REST id space', async () => {
    const client = await connect();
    client.subscribe(['depth.ETH_USDC']);
    const messages = await waitUntil(() => (client.on('depth.ETH_USDC').length >= 11 ? client.on('depth.ETH_USDC') : undefined), '11 depth messages');
    const snapshot = await depth('ETH_USDC');
    for (const m of messages) {
      expect(m).toMatchObject({ e: 'depth', s: 'ETH_USDC', a: [], b: [], u: Number(snapshot.lastUpdateId), U: Number(snapshot.lastUpdateId) + 1 });
      expect(Number.isInteger(m.E) && Number.isInteger(m.T)).toBe(true);
    }
    assertContiguous(messages);
  });

  it.each([false, true])('rebuilds the engine book from a REST snapshot and the depth stream (compression %s)', async (compress) => {
    const client = await connect(compress);
    expect(client.extensions.includes('permessage-deflate')).toBe(compress);
    const streams = ['depth.SOL_USDC', 'depth.200ms.SOL_USDC', 'depth.600ms.SOL_USDC', 'depth.1000ms.SOL_USDC'];
    client.subscribe(streams);
    await client.waitFor((m) => m.stream === 'depth.SOL_USDC', 'first depth message');
    const ids: string[] = [];
    const rest = async (side: string, price: string, quantity: string) => {
      const order = await placeOrder(server, maker, { side, orderType: 'Limit', price, quantity, postOnly: 'true' });
      ids.push(order.id);
    };
    await rest('Ask', '30', '1');
    await rest('Ask', '31', '2');
    const snapshot = await depth(); // taken mid-stream: later changes must come from the stream
    await rest('Bid', '29', '3');
    await rest('Ask', '30', '0.5');
    await cancel(maker, ids[1]);
    await placeOrder(server, taker, { side: 'Bid', orderType: 'Limit', price: '30', quantity: '1.2', timeInForce: 'IOC' });
    await placeOrder(server, taker, { side: 'Ask', orderType: 'Market', quantity: '0.5' });
    const final = await depth();
    for (const stream of streams) {
      const messages = await waitUntil(() => {
        const got = client.on(stream);
        return got.length > 0 && got[got.length - 1].u >= Number(final.lastUpdateId) ? got : undefined;
      }, `${stream} up to ${final.lastUpdateId}`);
      assertContiguous(messages);
      const replica = new BookReplica(snapshot);
      for (const m of messages) replica.apply(m);
      expect(replica.lastId, stream).toBe(Number(final.lastUpdateId));
      expect(replica.levels(), stream).toEqual({ bids: final.bids, asks: final.asks });
    }
    await clearBook();
  });

  it('sends bookTicker on every change of the best levels', async () => {
    const client = await connect();
    client.subscribe(['bookTicker.SOL_USDC']);
    await waitUntil(() => (client.socket.readyState === 1 ? true : undefined), 'open');
    await placeOrder(server, maker, { side: 'Bid', orderType: 'Limit', price: '25', quantity: '1', postOnly: 'true' });
    // One side only: the empty side shows price and quantity 0 (the official Rust client requires decimals).
    const oneSide = await client.waitFor((m) => m.data?.b === '25.00', 'bookTicker with the bid only');
    expect(oneSide.data).toMatchObject({ a: '0.00', A: '0.00', b: '25.00', B: '1.00' });
    await placeOrder(server, maker, { side: 'Ask', orderType: 'Limit', price: '26', quantity: '2', postOnly: 'true' });
    const both = await client.waitFor((m) => m.data?.a === '26.00', 'bookTicker with both sides');
    expect(both.stream).toBe('bookTicker.SOL_USDC');
    const snapshot = await depth();
    expect(both.data).toMatchObject({ e: 'bookTicker', s: 'SOL_USDC', a: '26.00', A: '2.00', b: '25.00', B: '1.00', u: Number(snapshot.lastUpdateId) });
    await placeOrder(server, maker, { side: 'Ask', orderType: 'Limit', price: '25.5', quantity: '0.5', postOnly: 'true' });
    const better = await client.waitFor((m) => m.data?.a === '25.50', 'bookTicker after a better ask');
    expect(better.data).toMatchObject({ A: '0.50', b: '25.00', B: '1.00' });
  });

  it('streams trades, ticker and klines (with the final message of a closed candle)', async () => {
    const client = await connect(true);
    // Trades go out uncompressed also on a connection that negotiated permessage-deflate.
    expect(client.extensions).toContain('permessage-deflate');
    client.subscribe(['trade.SOL_USDC', 'ticker.SOL_USDC', 'kline.1s.SOL_USDC', 'kline.1m.SOL_USDC']);
    await client.waitFor((m) => m.stream === 'ticker.SOL_USDC', 'a ticker message');
    // Book: bid 25 × 1, asks 25.5 × 0.5 and 26 × 2. Buy 1 (0.5 @ 25.5, 0.5 @ 26), sell 0.4 @ 25.
    await clearBook();
    for (const [side, price, quantity] of [['Bid', '25', '1'], ['Ask', '25.5', '0.5'], ['Ask', '26', '2']]) {
      await placeOrder(server, maker, { side, orderType: 'Limit', price, quantity, postOnly: 'true' });
    }
    await placeOrder(server, taker, { side: 'Bid', orderType: 'Market', quantity: '1' });
    await placeOrder(server, taker, { side: 'Ask', orderType: 'Market', quantity: '0.4' });
    const trades = await waitUntil(() => (client.on('trade.SOL_USDC').length >= 3 ? client.on('trade.SOL_USDC') : undefined), '3 trades');
    expect(trades.map((t) => [t.p, t.q, t.m])).toEqual([['25.50', '0.50', false], ['26.00', '0.50', false], ['25.00', '0.40', true]]);
    expect(trades[1].t).toBe(trades[0].t + 1);
    expect(trades[2].t).toBe(trades[1].t + 1);
    // Earlier cases traded too; the ticker covers every SOL_USDC trade of the last 24 hours.
    const rest = (await get(server.base, '/api/v1/ticker?symbol=SOL_USDC')).body;
    const ticker = await client.waitFor((m) => m.stream === 'ticker.SOL_USDC' && m.data.n === Number(rest.trades), 'ticker with every trade');
    expect(ticker.data).toMatchObject({ e: 'ticker', s: 'SOL_USDC', c: '25.00' });
    expect(Number(ticker.data.v)).toBe(Number(rest.volume));
    expect(Number(ticker.data.V)).toBe(Number(rest.quoteVolume));
    expect(Number(ticker.data.o)).toBe(Number(rest.firstPrice));
    expect(Number(ticker.data.h)).toBe(Number(rest.high));
    expect(Number(ticker.data.l)).toBe(Number(rest.low));

    const minute = await client.waitFor((m) => m.stream === 'kline.1m.SOL_USDC' && m.data.c === '25.00', 'a 1m kline');
    expect(minute.data).toMatchObject({ e: 'kline', s: 'SOL_USDC', X: false });
    expect(minute.data.t).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:00$/);
    expect(Date.parse(minute.data.T + 'Z') - Date.parse(minute.data.t + 'Z')).toBe(60_000);
    // One-second candles close quickly: every trade ends up in a final (X: true) candle. Earlier
    // cases may have traded in the same second, so each final candle is checked against every
    // SOL_USDC trade the REST API reports for its second.
    const seconds = [...new Set(trades.map((t) => Math.floor(t.T / 1_000_000)))];
    const startOf = (k: any) => Date.parse(k.t + 'Z') / 1000;
    const finals = await waitUntil(() => {
      const closed = client.on('kline.1s.SOL_USDC').filter((k) => k.X === true && seconds.includes(startOf(k)));
      return closed.length === seconds.length ? closed.sort((a, b) => startOf(a) - startOf(b)) : undefined;
    }, 'final 1s klines of the three trades').catch((error) => {
      throw new Error(`${error}: ${JSON.stringify(client.on('kline.1s.SOL_USDC'))} trades ${JSON.stringify(trades)}`);
    });
    const recent = (await get(server.base, '/api/v1/trades?symbol=SOL_USDC&limit=1000')).body;
    for (const k of finals) {
      const inSecond = recent.filter((t: any) => Math.floor(t.timestamp / 1000) === startOf(k));
      expect(k.n, k.t).toBe(inSecond.length);
      const cents = inSecond.reduce((sum: number, t: any) => sum + Math.round(Number(t.quantity) * 100), 0);
      expect(Math.round(Number(k.v) * 100), k.t).toBe(cents);
      expect(Number(k.c), k.t).toBe(Number(inSecond.reduce((last: any, t: any) => (t.id > last.id ? t : last)).price));
      expect(Date.parse(k.T + 'Z') - Date.parse(k.t + 'Z')).toBe(1000);
    }
    // The three trades of this case are among the trades of those candles.
    expect(finals.reduce((n, k) => n + k.n, 0)).toBeGreaterThanOrEqual(3);
    const restKlines = (await get(server.base, `/api/v1/klines?symbol=SOL_USDC&interval=1s&startTime=${Math.floor(Date.parse(finals[0].t + 'Z') / 1000)}`)).body;
    expect(restKlines.map((k: any) => [k.start.replace(' ', 'T'), Number(k.close), k.trades])).toEqual(
      finals.map((k) => [k.t, Number(k.c), String(k.n)]),
    );
    await clearBook();
  });

  it('sends account.balanceUpdate with absolute quantities, on a connection mixing public and private streams', async () => {
    const client = await connect();
    client.subscribeSigned(maker, ['account.balanceUpdate', 'account.orderUpdate', 'depth.SOL_USDC']);
    await client.waitFor((m) => m.stream === 'depth.SOL_USDC', 'public depth on the same connection');
    const order = await placeOrder(server, maker, { side: 'Bid', orderType: 'Limit', price: '20', quantity: '3', postOnly: 'true' });
    const capital = (await signed(server.base, maker, 'GET', '/api/v1/capital', 'balanceQuery')).body;
    const update = await client.waitFor((m) => m.stream === 'account.balanceUpdate' && m.data.s === 'USDC', 'USDC balanceUpdate');
    expect(update.data).toMatchObject({ e: 'balanceUpdate', s: 'USDC', f: capital.USDC.available, l: capital.USDC.locked, x: '0' });
    expect(Number.isInteger(update.data.E) && Number.isInteger(update.data.T)).toBe(true);
    await client.waitFor((m) => m.stream === 'account.orderUpdate' && m.data.i === order.id, 'orderAccepted');
    // Unsubscribe two streams in one message: no more balance or depth messages afterwards.
    client.send({ method: 'UNSUBSCRIBE', params: ['account.balanceUpdate', 'depth.SOL_USDC'] });
    const marker = client.messages.length;
    await cancel(maker, order.id);
    await client.waitFor((m) => m.stream === 'account.orderUpdate' && m.data.e === 'orderCancelled', 'orderCancelled');
    const after = client.messages.slice(marker);
    expect(after.some((m) => m.stream === 'account.balanceUpdate' || m.stream === 'depth.SOL_USDC')).toBe(false);
  });

  it('sends a taker one account.balanceUpdate per asset once its match ends, with what it holds after every fill', async () => {
    const client = await connect();
    client.subscribeSigned(taker, ['account.balanceUpdate', 'account.orderUpdate', 'depth.SOL_USDC']);
    await placeOrder(server, maker, { side: 'Ask', orderType: 'Limit', price: '20', quantity: '0.1', postOnly: 'true' });
    await placeOrder(server, maker, { side: 'Ask', orderType: 'Limit', price: '21', quantity: '0.1', postOnly: 'true' });
    // One subscribe message: once its public depth arrives, its private streams are in place too.
    await client.waitFor((m) => m.stream === 'depth.SOL_USDC' && m.data.a.some(([price]: string[]) => Number(price) === 21), 'the asks\' depth');
    const marker = client.messages.length;
    // Fills both asks, then expires its last 0.1 and releases what it held for it.
    const order = await placeOrder(server, taker, { side: 'Bid', orderType: 'Limit', price: '21', quantity: '0.3', timeInForce: 'IOC' });
    await client.waitFor((m) => m.stream === 'account.orderUpdate' && m.data.i === order.id && m.data.e === 'orderExpired', 'the taker\'s orderExpired');
    const mine = client.messages.slice(marker);
    expect(mine.filter((m) => m.stream === 'account.orderUpdate' && m.data.e === 'orderFill').map((m) => m.data.t)).toHaveLength(2);
    const balances = mine.filter((m) => m.stream === 'account.balanceUpdate').map((m) => m.data);
    // The lock at placement (USDC), then SOL and USDC once: as they stand after both fills and the release.
    expect(balances.map((b) => b.s)).toEqual(['USDC', 'SOL', 'USDC']);
    const capital = (await signed(server.base, taker, 'GET', '/api/v1/capital', 'balanceQuery')).body;
    for (const b of balances.slice(1)) expect({ f: b.f, l: b.l }).toEqual({ f: capital[b.s].available, l: capital[b.s].locked });
  });

  it('answers invalid streams and bad signatures without disturbing other streams, and bounds subscriptions', async () => {
    const client = await connect();
    client.subscribe(['depth.NOPE_USDC', 'kline.2m.SOL_USDC', 'depth.100ms.SOL_USDC', 'trade.SOL_USDC']);
    await client.waitFor((m) => m.error?.code === 4006, 'invalid stream error');
    expect(client.messages.filter((m) => m.error).map((m) => m.error)).toEqual([
      { code: 4006, message: 'Invalid stream' }, { code: 4006, message: 'Invalid stream' }, { code: 4006, message: 'Invalid stream' },
    ]);
    client.subscribeSigned({ ...maker, secretKey: taker.secretKey }, ['account.balanceUpdate']);
    await client.waitFor((m) => m.error?.code === 4001, 'bad signature error');
    await placeOrder(server, taker, { side: 'Bid', orderType: 'Limit', price: '21', quantity: '0.1', postOnly: 'true' });
    await placeOrder(server, maker, { side: 'Ask', orderType: 'Market', quantity: '0.1' });
    await client.waitFor((m) => m.stream === 'trade.SOL_USDC', 'trade still delivered');
    // Subscription bound.
    const intervals = ['1s', '1m', '3m', '5m', '15m', '30m', '1h', '2h', '4h', '6h', '8h', '12h', '1d', '3d', '1w', '1month'];
    const perMarket = [...intervals.map((i) => `kline.${i}`), 'depth', 'depth.200ms', 'depth.600ms', 'depth.1000ms', 'bookTicker', 'ticker'];
    const many = ['SOL_USDC', 'BTC_USDC', 'ETH_USDC'].flatMap((s) => perMarket.map((kind) => `${kind}.${s}`));
    expect(many.length + 1).toBeGreaterThan(64);
    client.subscribe(many);
    await client.waitFor((m) => m.error?.code === 4005, 'too many subscriptions');
  });

  it('drops a slow consumer with close code 1008 while a fast one keeps receiving', async () => {
    const slow = await connect(false);
    const fast = await connect(false);
    const streams = ['trade.SOL_USDC', 'depth.SOL_USDC', 'depth.200ms.SOL_USDC', 'bookTicker.SOL_USDC'];
    slow.subscribeSigned(maker, [...streams, 'account.orderUpdate', 'account.orderUpdate.SOL_USDC', 'account.balanceUpdate']);
    fast.subscribe(['trade.SOL_USDC']);
    await slow.waitFor((m) => m.stream === 'depth.SOL_USDC', 'slow client subscribed');
    slow.pause();
    const tradesBefore = fast.on('trade.SOL_USDC').length;
    let traded = 0;
    // The slow reader's kernel buffers take a few MB before the server's own buffer starts to fill.
    for (let round = 0; round < 30 && !server.lines.some((l) => l.includes('slow WebSocket consumer')); round++) {
      // 400 asks on distinct ticks, then one taker order sweeps them: 400 trades, fills, depth.
      for (let chunk = 0; chunk < 400; chunk += 50) {
        await Promise.all(Array.from({ length: 50 }, (_, i) => placeOrder(server, maker, {
          side: 'Ask', orderType: 'Limit', price: (22 + (chunk + i) / 100).toFixed(2), quantity: '0.01', postOnly: 'true',
        })));
      }
      const sweep = await placeOrder(server, taker, { side: 'Bid', orderType: 'Market', quantity: '4' });
      expect(sweep.executedQuantity).toBe('4');
      traded += 400;
    }
    await waitUntil(() => (server.lines.some((l) => l.includes('slow WebSocket consumer')) ? true : undefined), 'the server closing the slow consumer');
    await waitUntil(() => (fast.on('trade.SOL_USDC').length === tradesBefore + traded ? true : undefined), 'every trade on the fast client');
    slow.resume();
    await waitUntil(() => (slow.closeCode !== null ? true : undefined), 'slow client closed');
    expect(slow.closeCode).toBe(1008);
    // The fast connection still works after the slow one is gone.
    await placeOrder(server, taker, { side: 'Bid', orderType: 'Limit', price: '21', quantity: '0.1', postOnly: 'true' });
    await placeOrder(server, maker, { side: 'Ask', orderType: 'Market', quantity: '0.1' });
    await waitUntil(() => (fast.on('trade.SOL_USDC').length === tradesBefore + traded + 1 ? true : undefined), 'a later trade');
  });
});
