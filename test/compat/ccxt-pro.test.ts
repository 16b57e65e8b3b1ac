// ccxt pro's backpack class (WebSocket), unchanged but for its URLs, against our streams:
// watchOrderBook (which waits for 11 depth messages, then syncs from REST), watchTrades,
// watchTicker, watchOHLCV, watchBidsAsks and watchOrders, each asserting the values it returns.
// No sleeps: the order of subscriptions on one socket is what proves a stream is live.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, get, removeDir, startServer, tempDataDir, type RunningServer, type TestAccount } from '../helpers/server.js';
import { ccxtPro } from '../helpers/ccxt.js';
import { placeOrder } from '../helpers/market-trades.js';

describe('ccxt pro backpack against our streams', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let maker: TestAccount;
  let taker: TestAccount;
  const exchanges: Array<{ close(): Promise<unknown> }> = [];
  const pro = async (account?: TestAccount) => {
    const exchange = await ccxtPro(server, account);
    exchanges.push(exchange);
    return exchange;
  };

  beforeAll(async () => {
    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '1', '--speed-bump-ms', '0'] });
    maker = await createTestAccount(server.adminPort, ['SOL=100', 'USDC=10000']);
    taker = await createTestAccount(server.adminPort, ['SOL=100', 'USDC=10000']);
    for (const [side, price, quantity] of [['Bid', '19', '2'], ['Bid', '19.5', '1'], ['Ask', '20.5', '1.5'], ['Ask', '21', '3']]) {
      await placeOrder(server, maker, { side, orderType: 'Limit', price, quantity, postOnly: 'true' });
    }
  });
  afterAll(async () => {
    for (const e of exchanges) await e.close();
    await server?.stop();
    removeDir(dataDir);
  });

  it('watchOrderBook on a quiet book', async () => {
    const exchange = await pro();
    const book = await exchange.watchOrderBook('SOL/USDC');
    expect(book.bids).toEqual([[19.5, 1], [19, 2]]);
    expect(book.asks).toEqual([[20.5, 1.5], [21, 3]]);
    const rest = (await get(server.base, '/api/v1/depth?symbol=SOL_USDC')).body;
    expect(book.nonce).toBe(Number(rest.lastUpdateId));
    // A change arrives as a delta on top of the snapshot.
    await placeOrder(server, maker, { side: 'Ask', orderType: 'Limit', price: '20.25', quantity: '0.5', postOnly: 'true' });
    let updated = await exchange.watchOrderBook('SOL/USDC');
    while (updated.asks[0]?.[0] !== 20.25) updated = await exchange.watchOrderBook('SOL/USDC');
    expect(updated.asks).toEqual([[20.25, 0.5], [20.5, 1.5], [21, 3]]);
  });

  it('watchBidsAsks', async () => {
    const exchange = await pro();
    const watching = exchange.watchBidsAsks(['SOL/USDC']);
    // Subscriptions on one socket are handled in order: once the book (subscribed after) has
    // synced, the server has the bookTicker subscription.
    await exchange.watchOrderBook('SOL/USDC');
    await placeOrder(server, maker, { side: 'Bid', orderType: 'Limit', price: '19.75', quantity: '0.4', postOnly: 'true' });
    const bidsAsks = await watching;
    expect(bidsAsks['SOL/USDC']).toMatchObject({ symbol: 'SOL/USDC', bid: 19.75, bidVolume: 0.4, ask: 20.25, askVolume: 0.5 });
  });

  it('watchTrades, watchTicker, watchOHLCV and watchOrders', async () => {
    const pub = await pro();
    const priv = await pro(taker);
    const trades = pub.watchTrades('SOL/USDC');
    const orders = priv.watchOrders('SOL/USDC');
    const candles = pub.watchOHLCV('SOL/USDC', '1m');
    // Each socket handles subscriptions in order: once a book subscribed after them has synced,
    // the server has the others (the private socket mixes public and private streams).
    await pub.watchOrderBook('SOL/USDC');
    await priv.watchOrderBook('SOL/USDC');
    const bought = await placeOrder(server, taker, { side: 'Bid', orderType: 'Market', quantity: '0.5' });

    const [trade] = await trades;
    expect(trade).toMatchObject({ symbol: 'SOL/USDC', price: 20.25, amount: 0.5, side: 'buy', id: '1', order: bought.id });

    let watched = await orders;
    while (!watched.some((o) => o.id === bought.id && o.status === 'closed')) watched = await priv.watchOrders('SOL/USDC');
    expect(watched.find((o) => o.id === bought.id)).toMatchObject({ symbol: 'SOL/USDC', side: 'buy', type: 'market', amount: 0.5, status: 'closed' });

    const ohlcv = await candles;
    expect(ohlcv[ohlcv.length - 1].slice(1)).toEqual([20.25, 20.25, 20.25, 20.25, 0.5]);

    const ticker = await pub.watchTicker('SOL/USDC');
    expect(ticker).toMatchObject({ symbol: 'SOL/USDC', open: 20.25, close: 20.25, high: 20.25, low: 20.25, baseVolume: 0.5, quoteVolume: 10.125 });
  });
});
