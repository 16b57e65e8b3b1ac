// The latest stored candle of a market at one resolution (engine/store/history-market.ts
// latestCandle), which the market history sink reloads on start so that a restart inside a
// bucket continues its candle: the newest key of the (market, resolution) prefix, the bucket
// starting at 0 included, and never a key of another market or resolution.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open, type RootDatabase } from 'lmdb';
import { afterAll, describe, expect, it } from 'vitest';
import { CandleResolution, addTradeToCandle, candleKey, emptyCandle, encodeCandle, latestCandle, openMarketHistoryDbs } from '../../engine/store/history-market.js';

const dir = mkdtempSync(join(tmpdir(), 'latest-candle-'));
const root: RootDatabase = open({ path: join(dir, 'history'), maxDbs: 8 });
const dbs = openMarketHistoryDbs(root);

afterAll(async () => {
  await root.close();
  rmSync(dir, { recursive: true, force: true });
});

function putCandle(marketId: number, resolution: CandleResolution, startS: number, priceTicks: number): void {
  const candle = emptyCandle(startS);
  addTradeToCandle(candle, priceTicks, 3, startS * 1_000_000 + 5, 1);
  dbs.candles.putSync(candleKey(marketId, resolution, startS), encodeCandle(candle));
}

describe('latestCandle', () => {
  it('finds a candle starting at 0, the only one of its market and resolution', () => {
    putCandle(1, CandleResolution.Minute, 0, 111);
    putCandle(0, CandleResolution.Minute, 600, 222); // another market, later
    putCandle(1, CandleResolution.Hour, 3600, 333); // another resolution, later
    const latest = latestCandle(dbs, 1, CandleResolution.Minute);
    expect(latest?.startS).toBe(0);
    expect(latest?.closeTicks).toBe(111);
  });

  it('takes the newest bucket of the prefix and nothing of the next market or resolution', () => {
    putCandle(1, CandleResolution.Minute, 120, 444);
    putCandle(2, CandleResolution.Minute, 0, 555);
    expect(latestCandle(dbs, 1, CandleResolution.Minute)?.closeTicks).toBe(444);
    expect(latestCandle(dbs, 0, CandleResolution.Minute)?.closeTicks).toBe(222);
    expect(latestCandle(dbs, 1, CandleResolution.Hour)?.closeTicks).toBe(333);
    expect(latestCandle(dbs, 0, CandleResolution.Hour)).toBeNull();
    expect(latestCandle(dbs, 3, CandleResolution.Minute)).toBeNull();
  });
});
