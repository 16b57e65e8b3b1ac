// ccxt's backpack REST class, unchanged but for its base URL, reading our public market history:
// fetchTicker, fetchTickers, fetchOHLCV and fetchTrades (recent, and paged with an offset) over the
// known trade tape of test/helpers/market-trades.ts, asserting the values ccxt returns.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, startServer, tempDataDir, type RunningServer } from '../helpers/server.js';
import { ccxtRest } from '../helpers/ccxt.js';
import { tradeTape, type Tape } from '../helpers/market-trades.js';

describe('ccxt backpack REST market data', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let tape: Tape;

  beforeAll(async () => {
    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '1', '--speed-bump-ms', '0'] });
    tape = await tradeTape(server);
  });
  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  it('fetchTicker and fetchTickers', async () => {
    const exchange = ccxtRest(server);
    const ticker = await exchange.fetchTicker('SOL/USDC');
    expect(ticker).toMatchObject({
      symbol: 'SOL/USDC', open: 20, last: 19, close: 19, high: 21, low: 19,
      change: -1, percentage: -5, baseVolume: 2.5, quoteVolume: 49.5,
    });
    const tickers = await exchange.fetchTickers();
    expect(Object.keys(tickers).sort()).toEqual(['BTC/USDC', 'BTC/USDC:USDC', 'ETH/USDC', 'ETH/USDC:USDC', 'SOL/USDC', 'SOL/USDC:USDC']);
    expect(tickers['SOL/USDC']).toMatchObject({ last: 19, baseVolume: 2.5 });
    expect(tickers['BTC/USDC']).toMatchObject({ last: undefined, baseVolume: 0 });
  });

  it('fetchOHLCV', async () => {
    const exchange = ccxtRest(server);
    for (const timeframe of ['1m', '1h', '1d']) {
      const candles = await exchange.fetchOHLCV('SOL/USDC', timeframe);
      expect(candles.length, timeframe).toBeGreaterThan(0);
      const volume = candles.reduce((sum, c) => sum + Math.round(Number(c[5]) * 100), 0);
      expect(volume, timeframe).toBe(250);
      expect(candles[0][1], timeframe).toBe(20); // open of the first candle: the first trade
      expect(candles[candles.length - 1][4], timeframe).toBe(19); // close of the last: the last trade
      expect(Math.max(...candles.map((c) => Number(c[2]))), timeframe).toBe(21);
      expect(Math.min(...candles.map((c) => Number(c[3]))), timeframe).toBe(19);
      const periodMs = exchange.parseTimeframe(timeframe) * 1000;
      for (const c of candles) expect(Number(c[0]) % periodMs, timeframe).toBe(0);
      expect(Number(candles[0][0])).toBeLessThanOrEqual(tape.startedMs);
    }
    const since = await exchange.fetchOHLCV('SOL/USDC', '1m', tape.endedMs + 120_000);
    expect(since).toEqual([]);
  });

  it('fetchTrades, recent and with an offset', async () => {
    const exchange = ccxtRest(server);
    const trades = await exchange.fetchTrades('SOL/USDC');
    expect(trades.map((t) => [t.id, t.price, t.amount, t.cost, t.side])).toEqual([
      ['1', 20, 0.5, 10, 'buy'],
      ['2', 20, 0.5, 10, 'buy'],
      ['3', 21, 0.5, 10.5, 'buy'],
      ['4', 19, 1, 19, 'sell'],
    ]);
    for (const t of trades) {
      expect(t.timestamp).toBeGreaterThanOrEqual(tape.startedMs - 1);
      expect(t.timestamp).toBeLessThanOrEqual(tape.endedMs + 1);
    }
    const limited = await exchange.fetchTrades('SOL/USDC', undefined, 2);
    expect(limited.map((t) => t.id)).toEqual(['3', '4']);
    const paged = await exchange.fetchTrades('SOL/USDC', undefined, 2, { offset: 2 });
    expect(paged.map((t) => t.id)).toEqual(['1', '2']);
  });
});
