// Mark and index price klines (GET /api/v1/klines?priceType=Mark|Index) against the real server.
// The operator moves SOL's index 150.25 → 152.5 → 151; SOL_USDC_PERP's book is empty, so each
// second's mark sample is exactly the index then (the EWMA of mid − index stays 0). A sample's
// kline second is the engine time of the command that ran it (a Tick just after it fell due), so
// two samples may share a second and a second may have none.
// Index candles come from the SetIndexPrice events, mark candles from the MarkPrice events, both
// stored beside the trade candles: the one-second klines show each price as it was set or
// sampled, every longer interval is their aggregate (first open, highest high, lowest low, last
// close), and all of it reads the same after a restart.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ccxtRest } from '../helpers/ccxt.js';
import { get, removeDir, startServer, tempDataDir, waitUntil, type RunningServer } from '../helpers/server.js';

interface WireKline {
  start: string;
  end: string;
  open: string;
  high: string;
  low: string;
  close: string;
  volume: string;
  quoteVolume: string;
  trades: string;
}

const ARGS = ['--no-demo', '--no-index-default', '--front-threads', '1', '--speed-bump-ms', '0', '--index-max-age-ms', '600000'];
const PRICES = ['150.25', '152.5', '151'];

let server: RunningServer;
let dataDir: string;
let startS: number;

async function setIndex(price: string): Promise<void> {
  const response = await fetch(`http://127.0.0.1:${server.adminPort}/admin/index-prices`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ prices: { SOL: price }, source: 'Operator' }),
  });
  expect(response.status).toBe(200);
}

/** The klines since the test began: from its first second (1s), else from that day's start (whole buckets). */
async function klines(symbol: string, priceType: string, interval: string): Promise<WireKline[]> {
  const from = interval === '1s' ? startS : startS - (startS % 86_400);
  const response = await get(server.base, `/api/v1/klines?symbol=${symbol}&interval=${interval}&startTime=${from}&priceType=${priceType}`);
  expect(response.status, `${priceType} ${interval}`).toBe(200);
  return response.body as WireKline[];
}

/** One-second klines aggregated into the buckets of a longer interval (by the bucket start of each). */
function aggregate(seconds: WireKline[], bucketSeconds: number): Omit<WireKline, 'end'>[] {
  const out: Omit<WireKline, 'end'>[] = [];
  for (const k of seconds) {
    const t = Date.parse(`${k.start.replace(' ', 'T')}Z`) / 1000;
    const start = new Date((t - (t % bucketSeconds)) * 1000).toISOString().slice(0, 19).replace('T', ' ');
    const last = out[out.length - 1];
    if (last === undefined || last.start !== start) {
      const { end: _end, ...rest } = k;
      out.push({ ...rest, start });
    } else {
      if (Number(k.high) > Number(last.high)) last.high = k.high;
      if (Number(k.low) < Number(last.low)) last.low = k.low;
      last.close = k.close;
    }
  }
  return out;
}

const withoutEnd = (rows: WireKline[]) => rows.map(({ end: _end, ...k }) => k);

beforeAll(async () => {
  dataDir = tempDataDir();
  server = await startServer({ dataDir, args: ARGS });
  startS = Math.floor(Date.now() / 1000) - 1;
  // Each price holds until the marks have sampled it twice, so each shows in its own seconds.
  for (const price of PRICES) {
    await setIndex(price);
    await waitUntil(async () => {
      const marks = await klines('SOL_USDC_PERP', 'Mark', '1s');
      return marks.filter((k) => k.close === price).length >= 2 ? true : undefined;
    }, `two mark samples at ${price}`);
  }
});

afterAll(async () => {
  await server?.stop();
  removeDir(dataDir);
});

describe('mark and index price klines', () => {
  it('index klines: each SetIndexPrice in its second, longer intervals their aggregate', async () => {
    const seconds = await klines('SOL_USDC_PERP', 'Index', '1s');
    expect(seconds.map((k) => [k.open, k.high, k.low, k.close])).toEqual(PRICES.map((p) => [p, p, p, p]));
    for (const k of seconds) expect([k.volume, k.quoteVolume, k.trades]).toEqual(['0', '0', '0']);
    // The spot market on the same base shows the same index.
    expect(await klines('SOL_USDC', 'Index', '1s')).toEqual(seconds);
    expect(withoutEnd(await klines('SOL_USDC_PERP', 'Index', '1m'))).toEqual(aggregate(seconds, 60));
    const hours = withoutEnd(await klines('SOL_USDC_PERP', 'Index', '1h'));
    expect(hours).toEqual(aggregate(seconds, 3600));
    if (hours.length === 1) expect(hours[0]).toMatchObject({ open: '150.25', high: '152.5', low: '150.25', close: '151' });
  });

  it('mark klines: each sample at the index of its time, in the order set; longer intervals their aggregate', async () => {
    const seconds = await klines('SOL_USDC_PERP', 'Mark', '1s');
    expect(seconds.length).toBeGreaterThanOrEqual(PRICES.length * 2 - 1);
    for (const k of seconds) expect([k.open, k.high, k.low, k.close].every((p) => PRICES.includes(p)), k.start).toBe(true);
    // The closes run through the prices in order, each at least twice.
    const runs = seconds.map((k) => k.close).filter((close, i, all) => i === 0 || all[i - 1] !== close);
    expect(runs).toEqual(PRICES);
    expect(withoutEnd(await klines('SOL_USDC_PERP', 'Mark', '1m'))).toEqual(aggregate(seconds, 60));
    expect(withoutEnd(await klines('SOL_USDC_PERP', 'Mark', '1d'))).toEqual(aggregate(seconds, 86_400));
    // ccxt's fetchMarkOHLCV sends priceType=Mark and reads the same candles.
    const ohlcv = await ccxtRest(server).fetchMarkOHLCV('SOL/USDC:USDC', '1m', (startS - (startS % 60)) * 1000);
    expect(ohlcv.map((c) => c.slice(1, 5).map(String))).toEqual(aggregate(seconds, 60).map((k) => [k.open, k.high, k.low, k.close]));
  });

  it('refuses Mark on a spot market and an unknown priceType; Last still reads trades (none here)', async () => {
    for (const priceType of ['Mark', 'Foo']) {
      const response = await get(server.base, `/api/v1/klines?symbol=SOL_USDC&interval=1m&startTime=${startS}&priceType=${priceType}`);
      expect(response.status, priceType).toBe(400);
      expect((response.body as { code: string }).code).toBe('INVALID_CLIENT_REQUEST');
    }
    expect(await klines('SOL_USDC_PERP', 'Last', '1m')).toEqual([]);
  });

  it('both kinds read the same after a restart', async () => {
    // Up to a second T the marks have sampled past (a later sample is visible only after every
    // earlier one, batches committing in order), the stored klines are final.
    const T = Math.floor(Date.now() / 1000);
    await waitUntil(async () => ((await klines('SOL_USDC_PERP', 'Mark', '1s')).some((k) => Date.parse(`${k.start.replace(' ', 'T')}Z`) / 1000 >= T) ? true : undefined), 'a mark sample after T');
    const upToT = async (priceType: string) => {
      const response = await get(server.base, `/api/v1/klines?symbol=SOL_USDC_PERP&interval=1s&startTime=${startS}&endTime=${T}&priceType=${priceType}`);
      expect(response.status).toBe(200);
      return response.body as WireKline[];
    };
    const before = { index: await upToT('Index'), mark: await upToT('Mark') };
    expect(before.index.map((k) => k.close)).toEqual(PRICES);
    expect(before.mark.length).toBeGreaterThanOrEqual(PRICES.length * 2 - 1);
    await server.stop();
    server = await startServer({ dataDir, args: ARGS });
    expect({ index: await upToT('Index'), mark: await upToT('Mark') }).toEqual(before);
  });
});
