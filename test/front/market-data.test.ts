// Public market history over real HTTP: GET /api/v1/trades, /trades/history, /klines, /ticker and
// /tickers against a known trade tape (test/helpers/market-trades.ts), their bounds and errors,
// and the same answers after a restart (the history lives in LMDB, not in memory).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get, removeDir, startServer, tempDataDir, type RunningServer } from '../helpers/server.js';
import { TAPE, placeOrder, tradeTape, type Tape } from '../helpers/market-trades.js';

const SERVER_ARGS = ['--no-demo', '--front-threads', '1', '--speed-bump-ms', '0'];
const DATE = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

function sumKlines(klines: Array<Record<string, string>>) {
  // Decimal sums in integer hundredths (every figure of the tape has at most 2 decimals).
  const cents = (s: string) => Math.round(Number(s) * 100);
  return {
    volume: klines.reduce((a, k) => a + cents(k.volume), 0),
    quoteVolume: klines.reduce((a, k) => a + cents(k.quoteVolume), 0),
    trades: klines.reduce((a, k) => a + Number(k.trades), 0),
    open: klines[0]?.open,
    close: klines[klines.length - 1]?.close,
    high: Math.max(...klines.map((k) => Number(k.high))),
    low: Math.min(...klines.map((k) => Number(k.low))),
  };
}

describe('public market history', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let tape: Tape;

  beforeAll(async () => {
    server = await startServer({ dataDir, args: SERVER_ARGS });
    tape = await tradeTape(server);
  });
  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  const checkTrades = async () => {
    const recent = await get(server.base, '/api/v1/trades?symbol=SOL_USDC');
    expect(recent.status).toBe(200);
    expect(recent.body).toMatchObject([...TAPE].reverse());
    for (const t of recent.body) {
      expect(t.timestamp).toBeGreaterThanOrEqual(tape.startedMs - 1);
      expect(t.timestamp).toBeLessThanOrEqual(tape.endedMs + 1);
    }
    const two = await get(server.base, '/api/v1/trades?symbol=SOL_USDC&limit=2');
    expect(two.body.map((t: { id: number }) => t.id)).toEqual([4, 3]);
    const paged = await get(server.base, '/api/v1/trades/history?symbol=SOL_USDC&offset=1&limit=2');
    expect(paged.body.map((t: { id: number }) => t.id)).toEqual([3, 2]);
    const beyond = await get(server.base, '/api/v1/trades/history?symbol=SOL_USDC&offset=4');
    expect(beyond.body).toEqual([]);
  };

  it('lists trades newest first, with limit and offset', checkTrades);

  it('bounds and validates trade queries', async () => {
    const other = await get(server.base, '/api/v1/trades?symbol=BTC_USDC');
    expect(other.body).toEqual([]);
    for (const [path, code] of [
      ['/api/v1/trades?symbol=NOPE_USDC', 'INVALID_MARKET'],
      ['/api/v1/trades', 'INVALID_MARKET'],
      ['/api/v1/trades?symbol=SOL_USDC&limit=0', 'INVALID_CLIENT_REQUEST'],
      ['/api/v1/trades?symbol=SOL_USDC&limit=1001', 'INVALID_CLIENT_REQUEST'],
      ['/api/v1/trades?symbol=SOL_USDC&limit=-1', 'INVALID_CLIENT_REQUEST'],
      ['/api/v1/trades?symbol=SOL_USDC&limit=1e3', 'INVALID_CLIENT_REQUEST'],
      ['/api/v1/trades/history?symbol=SOL_USDC&offset=9500&limit=501', 'INVALID_CLIENT_REQUEST'],
      ['/api/v1/trades/history?symbol=SOL_USDC&offset=x', 'INVALID_CLIENT_REQUEST'],
    ] as const) {
      const response = await get(server.base, path);
      expect(response.status, path).toBe(400);
      expect(response.body.code, path).toBe(code);
    }
    const deepest = await get(server.base, '/api/v1/trades/history?symbol=SOL_USDC&offset=9000&limit=1000');
    expect(deepest.status).toBe(200);
  });

  const checkKlines = async () => {
    const startTime = Math.floor(tape.startedMs / 1000) - 3600 * 24 * 40;
    for (const interval of ['1s', '1m', '3m', '5m', '15m', '30m', '1h', '2h', '4h', '6h', '8h', '12h', '1d', '3d', '1w', '1month']) {
      const from = interval === '1s' ? Math.floor(tape.startedMs / 1000) - 5 : startTime;
      const response = await get(server.base, `/api/v1/klines?symbol=SOL_USDC&interval=${interval}&startTime=${from}`);
      expect(response.status, interval).toBe(200);
      const klines = response.body as Array<Record<string, string>>;
      expect(klines.length, interval).toBeGreaterThan(0);
      for (const k of klines) {
        expect(Object.keys(k).sort(), interval).toEqual(['close', 'end', 'high', 'low', 'open', 'quoteVolume', 'start', 'trades', 'volume']);
        expect(k.start, interval).toMatch(DATE);
        expect(k.end > k.start, interval).toBe(true);
      }
      expect(klines.map((k) => k.start), interval).toEqual([...klines.map((k) => k.start)].sort());
      expect(sumKlines(klines), interval).toEqual({ volume: 250, quoteVolume: 4950, trades: 4, open: '20', close: '19', high: 21, low: 19 });
    }
    const hour = await get(server.base, `/api/v1/klines?symbol=SOL_USDC&interval=1h&startTime=${startTime}`);
    const start = Date.parse(hour.body[0].start.replace(' ', 'T') + 'Z');
    expect(start % 3_600_000).toBe(0);
    expect(Date.parse(hour.body[0].end.replace(' ', 'T') + 'Z') - start).toBe(3_600_000);
    const week = await get(server.base, `/api/v1/klines?symbol=SOL_USDC&interval=1w&startTime=${startTime}`);
    expect(new Date(week.body[0].start.replace(' ', 'T') + 'Z').getUTCDay()).toBe(1); // Monday
    // A window that ends before the tape holds nothing.
    const before = await get(server.base, `/api/v1/klines?symbol=SOL_USDC&interval=1m&startTime=${startTime}&endTime=${Math.floor(tape.startedMs / 1000) - 120}`);
    expect(before.body).toEqual([]);
  };

  it('serves klines of every interval from the trades', checkKlines);

  it('validates kline queries', async () => {
    const now = Math.floor(Date.now() / 1000);
    for (const [path, status, code] of [
      [`/api/v1/klines?symbol=SOL_USDC&interval=2m&startTime=${now}`, 400, 'INVALID_CLIENT_REQUEST'],
      ['/api/v1/klines?symbol=SOL_USDC&interval=1m', 400, 'INVALID_CLIENT_REQUEST'],
      [`/api/v1/klines?symbol=SOL_USDC&interval=1m&startTime=${now}000.5`, 400, 'INVALID_CLIENT_REQUEST'],
      [`/api/v1/klines?symbol=XXX&interval=1m&startTime=${now}`, 400, 'INVALID_MARKET'],
      [`/api/v1/klines?symbol=SOL_USDC&interval=1m&startTime=${now}&priceType=Mark`, 400, 'INVALID_CLIENT_REQUEST'], // a spot market has no mark
      [`/api/v1/klines?symbol=SOL_USDC&interval=1m&startTime=${now}&priceType=Foo`, 400, 'INVALID_CLIENT_REQUEST'],
    ] as const) {
      const response = await get(server.base, path);
      expect(response.status, path).toBe(status);
      expect(response.body.code, path).toBe(code);
    }
  });

  const TICKER = {
    symbol: 'SOL_USDC', firstPrice: '20', lastPrice: '19', priceChange: '-1', priceChangePercent: '-0.05',
    high: '21', low: '19', volume: '2.5', quoteVolume: '49.5', trades: '4',
  };

  const checkTickers = async () => {
    const day = await get(server.base, '/api/v1/ticker?symbol=SOL_USDC');
    expect(day.status).toBe(200);
    expect(day.body).toEqual(TICKER);
    const week = await get(server.base, '/api/v1/ticker?symbol=SOL_USDC&interval=1w');
    expect(week.body).toEqual(TICKER);
    const all = await get(server.base, '/api/v1/tickers?interval=1d');
    expect(all.body.map((t: { symbol: string }) => t.symbol)).toEqual(['SOL_USDC', 'BTC_USDC', 'ETH_USDC', 'SOL_USDC_PERP', 'BTC_USDC_PERP', 'ETH_USDC_PERP']);
    expect(all.body[0]).toEqual(TICKER);
    // A market that never traded: prices "0" (the official Rust client requires decimals), zero volume.
    expect(all.body[1]).toEqual({
      symbol: 'BTC_USDC', firstPrice: '0', lastPrice: '0', priceChange: '0', priceChangePercent: '0',
      high: '0', low: '0', volume: '0', quoteVolume: '0', trades: '0',
    });
  };

  it('computes 1d and 1w tickers from the trades', checkTickers);

  it('validates ticker queries', async () => {
    for (const path of ['/api/v1/ticker?symbol=SOL_USDC&interval=1h', '/api/v1/tickers?interval=2d', '/api/v1/ticker?symbol=NOPE']) {
      const response = await get(server.base, path);
      expect(response.status, path).toBe(400);
      expect(typeof response.body.code).toBe('string');
    }
  });

  it('serves the same history after a restart', async () => {
    await server.stop();
    server = await startServer({ dataDir, args: SERVER_ARGS });
    await checkTrades();
    await checkKlines();
    await checkTickers();
  });

  it('updates a ticker it has served once a new trade is stored', async () => {
    expect((await get(server.base, '/api/v1/ticker?symbol=SOL_USDC')).body).toEqual(TICKER); // served, now kept
    // The taker buys 0.5 from the ask left at 22 (after the tape: 0.5 @ 21 and 1 @ 22 rest).
    await placeOrder(server, tape.taker, { side: 'Bid', orderType: 'Market', quantity: '1' });
    const updated = { ...TICKER, lastPrice: '22', priceChange: '2', priceChangePercent: '0.1', high: '22', volume: '3.5', quoteVolume: '71', trades: '6' };
    expect((await get(server.base, '/api/v1/ticker?symbol=SOL_USDC')).body).toEqual(updated);
    expect((await get(server.base, '/api/v1/tickers')).body[0]).toEqual(updated);
  });
});
