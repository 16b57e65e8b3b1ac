// A front thread's reader of the public market history the journal worker writes into LMDB
// (engine/store/history-market.ts): recent and historical trades, klines of every interval, and
// the rolling 24-hour / 7-day statistics of tickers.
//
// Reads happen in LMDB read transactions on this thread; each public call first renews the
// thread's read snapshot so it sees every batch committed so far. Trades are bounded above by the
// market's last trade id as this thread has seen it on the durable event stream, so a trade is
// never served before it is durable and before the trade stream has carried it.
//
// Sources per interval: one-second klines from the trades on the book (a backstop fill's off-book
// trade is in no kline), intervals under an hour from the stored
// one-minute candles, longer ones from the one-hour candles. Mark and index klines come from their
// own stored second, minute and hour candles (engine/store/history-market.ts). Rolling windows use whole minutes
// (the window's edge is the minute boundary at or after now − window), the interior in hours.

import { join } from 'node:path';
import { open, type RootDatabase } from 'lmdb';
import {
  CandleResolution,
  addTradeToCandle,
  candleResolutionFor,
  candleKey,
  candleStartOfKey,
  decodeCandle,
  decodeTrade,
  emptyCandle,
  offBookTradeIds,
  openMarketHistoryDbs,
  readFundingRates,
  tradeKey,
  type FundingRateEntry,
  type Candle,
  type KlinePrice,
  type MarketHistoryDbs,
  type TradeEntry,
} from '../../engine/store/history-market.js';

/** The klines intervals of the public API, with their length in seconds (1month: calendar). */
export const KLINE_INTERVALS = new Map<string, number>([
  ['1s', 1], ['1m', 60], ['3m', 180], ['5m', 300], ['15m', 900], ['30m', 1800],
  ['1h', 3600], ['2h', 7200], ['4h', 14400], ['6h', 21600], ['8h', 28800], ['12h', 43200],
  ['1d', 86400], ['3d', 259200], ['1w', 604800], ['1month', 0],
]);

/** At most this many candles per klines response (the range is cut after that many buckets). */
export const MAX_KLINE_BUCKETS = 1000;

const MONDAY_OFFSET_S = 4 * 86400; // 1970-01-01 was a Thursday; weeks start on Monday 00:00 UTC

/** Start (UTC seconds) of the bucket of `interval` that contains `timeS`. */
export function bucketStart(interval: string, timeS: number): number {
  const seconds = KLINE_INTERVALS.get(interval)!;
  if (seconds === 0) {
    const d = new Date(timeS * 1000);
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) / 1000;
  }
  if (interval === '1w') return timeS - ((((timeS - MONDAY_OFFSET_S) % seconds) + seconds) % seconds);
  return timeS - (((timeS % seconds) + seconds) % seconds);
}

/** Start of the bucket after the one starting at `startS`. */
export function nextBucket(interval: string, startS: number): number {
  const seconds = KLINE_INTERVALS.get(interval)!;
  if (seconds === 0) {
    const d = new Date(startS * 1000);
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) / 1000;
  }
  return startS + seconds;
}

export interface Kline extends Candle {
  endS: number;
}

/** Where a rolling window from `fromS` starts: the minute boundary at or after it. */
export function windowStartS(fromS: number): number {
  return Math.ceil(fromS / 60) * 60;
}

export class MarketHistory {
  readonly root: RootDatabase;
  private readonly dbs: MarketHistoryDbs;

  constructor(dataDir: string) {
    this.root = open({ path: join(dataDir, 'journal'), maxDbs: 16 });
    this.dbs = openMarketHistoryDbs(this.root);
  }

  /** A fresh read snapshot: everything committed so far becomes visible. */
  private renew(): void {
    this.root.resetReadTxn();
  }

  /** A perpetual's funding intervals newest first, durable ones only (engine/store/history-market.ts). */
  fundingRates(marketId: number, offset: number, limit: number, seqDurable: number): FundingRateEntry[] {
    this.renew();
    return readFundingRates(this.dbs, marketId, offset, limit, seqDurable);
  }

  /** Trades newest first: ids from `newestId - offset` down, at most `limit`. */
  trades(marketId: number, newestId: number, offset: number, limit: number): TradeEntry[] {
    this.renew();
    const top = newestId - offset;
    if (top < 1 || limit <= 0) return [];
    const out: TradeEntry[] = [];
    for (const { value } of this.dbs.trades.getRange({
      start: tradeKey(marketId, top),
      end: tradeKey(marketId, 0),
      reverse: true,
      limit,
    })) {
      out.push(decodeTrade(value));
    }
    return out;
  }

  /** Stored candles of one resolution with startS in [fromS, toS), ascending; `each` returns false to stop. */
  private candles(marketId: number, resolution: CandleResolution, fromS: number, toS: number, each: (c: Candle) => boolean | void): void {
    if (toS <= fromS) return;
    for (const { key, value } of this.dbs.candles.getRange({
      start: candleKey(marketId, resolution, Math.max(0, fromS)),
      end: candleKey(marketId, resolution, Math.max(0, toS)),
    })) {
      if (each(decodeCandle(candleStartOfKey(key), value)) === false) return;
    }
  }

  /** Trades on the book with engine time in [fromS, toS) seconds, ascending, up to the newest durable id (off-book trades skipped). */
  private tradesInTime(marketId: number, newestId: number, fromS: number, toS: number, each: (t: TradeEntry) => void): void {
    const first = this.firstTradeAtOrAfter(marketId, newestId, fromS * 1_000_000);
    if (first === 0) return;
    const offBook = offBookTradeIds(this.dbs, marketId, first, newestId);
    for (const { value } of this.dbs.trades.getRange({ start: tradeKey(marketId, first), end: tradeKey(marketId, newestId + 1) })) {
      const t = decodeTrade(value);
      if (t.timeUs >= toS * 1_000_000) break;
      if (!offBook.has(t.tradeId)) each(t);
    }
  }

  /** Binary search over the contiguous trade ids (engine time never decreases along them). */
  private firstTradeAtOrAfter(marketId: number, newestId: number, timeUs: number): number {
    let lo = 1;
    let hi = newestId + 1;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      const value = this.dbs.trades.get(tradeKey(marketId, mid));
      // A trade missing from the history (see engine/store/history-market.ts) counts as "earlier".
      if (value === undefined || decodeTrade(value).timeUs < timeUs) lo = mid + 1;
      else hi = mid;
    }
    return lo <= newestId ? lo : 0;
  }

  /**
   * Klines of `interval` whose bucket starts in [startS, endS), ascending, only buckets with
   * trades (or samples), at most MAX_KLINE_BUCKETS of them (clients page forward from the last
   * one). One-second klines are cut after MAX_KLINE_BUCKETS seconds instead. `price` Last: the
   * market's trades (`id` its market id, `newestId` its newest durable trade id); Mark: the
   * perpetual's mark samples (`id` its market id); Index: the index prices of `id`, an asset.
   */
  klines(id: number, newestId: number, interval: string, startS: number, endS: number, price: KlinePrice = 'Last'): Kline[] {
    this.renew();
    let first = bucketStart(interval, startS);
    if (first < startS) first = nextBucket(interval, first);
    const seconds = KLINE_INTERVALS.get(interval)!;
    const toS = seconds === 1 ? Math.min(endS, first + MAX_KLINE_BUCKETS) : endS;
    const out: Kline[] = [];
    const into = (timeS: number): Kline => {
      const b = bucketStart(interval, timeS);
      let current = out.length > 0 ? out[out.length - 1] : undefined;
      if (current === undefined || current.startS !== b) {
        current = { ...emptyCandle(b), endS: nextBucket(interval, b) };
        out.push(current);
      }
      return current;
    };
    if (seconds === 1 && price === 'Last') {
      this.tradesInTime(id, newestId, first, toS, (t) => {
        addTradeToCandle(into(Math.floor(t.timeUs / 1_000_000)), t.priceTicks, t.qtyLots, t.timeUs, t.seq);
      });
    } else {
      // Stored candles: seconds for 1s (mark and index), minutes divide every interval under an
      // hour, hours every longer one (weeks start on Monday 00:00, months on the 1st 00:00 UTC,
      // both whole hours).
      this.candles(id, candleResolutionFor(price, seconds), first, toS, (c) => {
        mergeCandle(into(c.startS), c);
        return out.length <= MAX_KLINE_BUCKETS;
      });
    }
    const filled = out.filter((k) => k.tradeCount > 0);
    return filled.length > MAX_KLINE_BUCKETS ? filled.slice(0, MAX_KLINE_BUCKETS) : filled;
  }

  /** Aggregate of the trades from windowStartS(fromS) up to now. */
  window(marketId: number, fromS: number, nowS: number): Candle {
    this.renew();
    const total = emptyCandle(0);
    const m0 = windowStartS(fromS);
    const h0 = Math.ceil(m0 / 3600) * 3600;
    const h1 = Math.floor(nowS / 3600) * 3600;
    const add = (c: Candle) => mergeCandle(total, c);
    if (h1 - h0 < 3600) {
      this.candles(marketId, CandleResolution.Minute, m0, nowS + 60, add);
    } else {
      this.candles(marketId, CandleResolution.Minute, m0, h0, add);
      this.candles(marketId, CandleResolution.Hour, h0, h1, add);
      this.candles(marketId, CandleResolution.Minute, h1, nowS + 60, add);
    }
    return total;
  }

  /** The newest trade stored for a market at or below `newestId`, or null. */
  lastTrade(marketId: number, newestId: number): TradeEntry | null {
    const [trade] = this.trades(marketId, newestId, 0, 1);
    return trade ?? null;
  }

  close(): void {
    void this.root.close();
  }
}

/** Adds a later candle into an aggregate (parts arrive in time order). */
export function mergeCandle(into: Candle, part: Candle): void {
  if (part.tradeCount === 0) return;
  if (into.tradeCount === 0) {
    into.openTicks = part.openTicks;
    into.highTicks = part.highTicks;
    into.lowTicks = part.lowTicks;
    into.firstTimeUs = part.firstTimeUs;
  } else {
    if (part.highTicks > into.highTicks) into.highTicks = part.highTicks;
    if (part.lowTicks < into.lowTicks) into.lowTicks = part.lowTicks;
  }
  into.closeTicks = part.closeTicks;
  into.lastTimeUs = part.lastTimeUs;
  into.volumeLots += part.volumeLots;
  into.quoteTickLots += part.quoteTickLots;
  into.tradeCount += part.tradeCount;
  if (part.lastSeq > into.lastSeq) into.lastSeq = part.lastSeq;
}
