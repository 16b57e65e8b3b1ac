// The mark price of a perpetual market, and the per-second sampling that feeds it and funding.
//
// A perpetual is priced by the index of its underlying (the base asset's index price, margin/
// index-prices.ts) corrected by where its own book trades (venue mechanics §3.3). The mark, first
// available wins:
//   Ewma        index + EWMA_1min(mid − index), clamped to index × (1 ± band) (band: the market's
//               markPriceBandBps, default 500 = 5 %), while the index is fresh;
//   Index       the index itself while it is fresh and the EWMA is exactly 0 (no sample moved it
//               yet), and always on a PostOnly book (the venue's rule);
//   BookMedian  median(best bid, best ask, last trade) of the perpetual's own book, once the
//               index is stale;   BookMid  (bid + ask) / 2;   BookLast  the last trade;
//   StaleIndex  the last index however old (as margin/mark.ts values an asset);
// and none when the market has neither. perpMarkPriceOf computes it from state at any engine time:
// the mark itself is not state.
//
// Sampling (venue mechanics [P]: once a second with α = 1 − e^(−1/60)): a MarkSample timer due
// on every whole second of engine time samples each perpetual whose underlying has a fresh
// index: x = mid − index on a two-sided book that is not PostOnly, else 0 (a book without two
// sides pulls the mark back to the index); ewma += trunc(α·(x − ewma)) with α the integer fraction
// ALPHA_E12 / 10^12 (no floating point); then it records the premium (mark − index) / index at
// 10^-12, truncated toward zero, into the open funding interval (funding.ts) and publishes a
// MarkPrice event. While no perpetual has a fresh index a sample would change nothing, so the
// sampler stops (a quiet engine is not woken each second for nothing) until a SetIndexPrice, the
// only command that freshens an index, wakes it (wakeSampler). After every command the sampler
// waits exactly while some perpetual's index was fresh at the last whole second at or before it,
// due on the next whole second, and each perpetual's funding timer on the first end of its
// funding interval after it (funding.ts): all follow from the state and the last engine time, so
// the snapshot does not carry them and import sets them again (armPerpTimers).
//
// Units: prices are USDC per whole unit of the underlying × 10^9 (IndexPriceE9's unit), the EWMA
// too (signed); a book price in ticks converts exactly to it when the tick has at most 9 decimals,
// else rounds down. Bounds: |ewma| stays within the largest |mid − index| sampled (safe integers);
// a premium is within ±band (at most 10^12), and a funding interval holds at most
// fundingIntervalMs / 1000 of them, which the configuration bounds below 2^53 (checkMarkBand).
//
// State (PerpMarks): per market its EWMA, the open interval's premium sum and sample count. It
// enters the snapshot from format 11 on and the state hash only for a market where one of them is
// not 0, so states from before perpetuals were sampled keep their hash and their snapshot.

import { MarkPriceSource, MarketKind, OrderBookState, type MarketSpec } from '../../bus/types.js';
import { assert } from '../assert.js';
import { NO_LEVEL } from '../book/book.js';
import type { Catalog } from '../catalog.js';
import { expectSnapshot, type SnapshotReader, type SnapshotWriter, type StateDigest } from '../parts.js';
import type { EngineState } from '../state.js';
import { NO_TIMER, TimerKind } from '../timers.js';
import { CumulativeFunding } from './cumulative-funding.js';

/** α = 1 − e^(−1/60) of the one-minute EWMA sampled each second, as ALPHA_E12 / 10^12 (0.016528546178). */
export const ALPHA_E12 = 16_528_546_178n;
/** 1 at the scale of premiums and funding rates (10^-12). */
export const ONE_E12 = 1_000_000_000_000n;
export const SECOND_US = 1_000_000;
/** The mark's band around the index when the market names none: 5 % (the venue's example). */
export const DEFAULT_MARK_BAND_BPS = 500;
const BPS_ONE = 10_000n;
/** Tags the mark part of the state hash. */
const HASH_TAG = 0x4d41524b; // 'MARK'

/**
 * A perpetual's mark band and funding interval, checked at configuration time: the band within
 * 1…10000 bps, the interval a whole number of seconds, and one interval's premiums (at most
 * band × 10^8 each at 10^-12, one a second) within the safe-integer range.
 */
export function checkMarkBand(market: MarketSpec): void {
  const perp = market.perp;
  if (perp === undefined) return;
  const band = perp.markPriceBandBps ?? DEFAULT_MARK_BAND_BPS;
  const name = `market ${market.symbol}`;
  if (!(Number.isInteger(band) && band >= 1 && band <= 10_000)) throw new Error(`${name}: markPriceBandBps must be an integer from 1 to 10000`);
  if (perp.fundingIntervalMs % 1000 !== 0) throw new Error(`${name}: fundingIntervalMs must be a whole number of seconds`);
  if (BigInt(perp.fundingIntervalMs / 1000) * BigInt(band) * 100_000_000n > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new Error(`${name}: fundingIntervalMs × markPriceBandBps is too large to sum an interval's premiums exactly`);
  }
}

export class PerpMarks {
  /** Market indexes of the perpetual markets, in catalog order. */
  readonly perpMarkets: number[] = [];
  /** By market index: the mark band in bps and the funding interval in µs (0 for spot markets). */
  readonly bandBps: Int32Array;
  readonly intervalUs: Float64Array;
  /** By market index: EWMA of (mid − index), ×10^9 USDC, signed. */
  readonly ewmaE9: Float64Array;
  /** By market index: the open funding interval's premiums (×10^12, signed) and their number. */
  readonly premiumSumE12: Float64Array;
  readonly sampleCount: Float64Array;
  /** The MarkSample timer (NO_TIMER until the first command, and without perpetuals). */
  sampleTimer = NO_TIMER;
  /** By market index: its Funding timer (NO_TIMER for spot markets and until armed). */
  readonly fundingTimer: Int32Array;
  /** Each open position's funding since it opened (cumulative-funding.ts), by position cell. */
  readonly cumulative: CumulativeFunding;

  constructor(catalog: Catalog, maxAccounts: number) {
    const count = catalog.marketCount;
    this.bandBps = new Int32Array(count);
    this.intervalUs = new Float64Array(count);
    this.ewmaE9 = new Float64Array(count);
    this.premiumSumE12 = new Float64Array(count);
    this.sampleCount = new Float64Array(count);
    this.fundingTimer = new Int32Array(count).fill(NO_TIMER);
    catalog.markets.forEach((market, m) => {
      if (market.kind !== MarketKind.Perp || market.perp === undefined) return;
      checkMarkBand(market);
      this.perpMarkets.push(m);
      this.bandBps[m] = market.perp.markPriceBandBps ?? DEFAULT_MARK_BAND_BPS;
      this.intervalUs[m] = market.perp.fundingIntervalMs * 1000;
    });
    this.cumulative = new CumulativeFunding((maxAccounts + 1) * this.perpMarkets.length);
  }

  /** Timers a configuration needs beside the orders' and interest's: the sampler and one funding timer per perpetual. */
  static timerCount(catalog: Catalog): number {
    const perps = catalog.markets.filter((market) => market.kind === MarketKind.Perp).length;
    return perps === 0 ? 0 : 2 * perps + 1; // each one's funding end and funding step, and the sampler
  }

  /** Whether a market's sampling state is as configuration made it. */
  isFresh(m: number): boolean {
    return this.ewmaE9[m] === 0 && this.premiumSumE12[m] === 0 && this.sampleCount[m] === 0;
  }

  /** Snapshot part (format 11 on): count of markets off fresh, then per market: index, ewma, premium sum, samples. */
  exportTo(w: SnapshotWriter): void {
    const used = this.perpMarkets.filter((m) => !this.isFresh(m));
    w.number(used.length);
    for (const m of used) {
      w.number(m);
      w.number(this.ewmaE9[m]);
      w.number(this.premiumSumE12[m]);
      w.number(this.sampleCount[m]);
    }
  }

  /** Reads the part (`hasPart`: format 11 on; older files hold none, and every perpetual starts fresh). */
  importFrom(r: SnapshotReader, hasPart: boolean): void {
    const count = hasPart ? r.number() : 0;
    expectSnapshot(count >= 0 && count <= this.perpMarkets.length, 'mark price count out of range');
    let previous = -1;
    for (let n = 0; n < count; n++) {
      const m = r.number();
      expectSnapshot(m > previous && this.perpMarkets.includes(m), 'mark price of an unknown, repeated or spot market');
      this.ewmaE9[m] = r.number();
      this.premiumSumE12[m] = r.number();
      this.sampleCount[m] = r.number();
      expectSnapshot(this.sampleCount[m] >= 0 && Math.abs(this.premiumSumE12[m]) <= this.sampleCount[m] * 1_000_000_000_000, 'premium sum out of range');
      previous = m;
    }
  }

  /** State hash part: only the markets off fresh, so earlier states keep their hash. */
  hashInto(d: StateDigest): void {
    const used = this.perpMarkets.filter((m) => !this.isFresh(m));
    if (used.length === 0) return;
    d.number(HASH_TAG);
    d.number(used.length);
    const signed = (value: number): void => {
      d.number(value < 0 ? 1 : 0);
      d.number(Math.abs(value));
    };
    for (const m of used) {
      d.number(m);
      signed(this.ewmaE9[m]);
      signed(this.premiumSumE12[m]);
      d.number(this.sampleCount[m]);
    }
  }

  /** Spot markets hold nothing; sums within their samples' bound. Timers: checkPerpTimers. */
  validate(): void {
    for (let m = 0; m < this.ewmaE9.length; m++) {
      if (this.bandBps[m] === 0) {
        assert(this.isFresh(m) && this.fundingTimer[m] === NO_TIMER, 'a spot market has mark or funding state');
        continue;
      }
      assert(Number.isSafeInteger(this.ewmaE9[m]) && Number.isSafeInteger(this.premiumSumE12[m]), 'mark state is not a safe integer');
      assert(Number.isSafeInteger(this.sampleCount[m]) && this.sampleCount[m] >= 0 && this.sampleCount[m] <= this.intervalUs[m] / SECOND_US, 'more samples than seconds in a funding interval');
      assert(Math.abs(this.premiumSumE12[m]) <= this.sampleCount[m] * this.bandBps[m] * 100_000_000, 'premium sum beyond the band');
    }
  }
}

/** A perpetual's mark: price and index ×10^9 (0 when none) and where the mark came from. */
export interface PerpMark {
  markE9: number;
  indexE9: number;
  source: MarkPriceSource;
}

/** The mark price of perpetual market `marketIndex` at engine time `nowUs` (see the header). */
export function perpMarkPriceOf(s: EngineState, marketIndex: number, nowUs = s.lastTimeUs): PerpMark {
  const underlying = s.catalog.baseIndexOf[marketIndex];
  const indexE9 = s.indexPrices.priceOf(underlying);
  if (!s.indexPrices.isStale(underlying, nowUs)) {
    const ewma = s.perpMarks.ewmaE9[marketIndex];
    if (ewma === 0 || s.books[marketIndex].orderBookState === OrderBookState.PostOnly) return { markE9: indexE9, indexE9, source: MarkPriceSource.Index };
    return { markE9: clampToBand(BigInt(indexE9) + BigInt(ewma), indexE9, s.perpMarks.bandBps[marketIndex]), indexE9, source: MarkPriceSource.Ewma };
  }
  const book = bookMark(s, marketIndex);
  if (book !== null) return { markE9: book.markE9, indexE9, source: book.source };
  if (indexE9 > 0) return { markE9: indexE9, indexE9, source: MarkPriceSource.StaleIndex };
  return { markE9: 0, indexE9: 0, source: MarkPriceSource.None };
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * `priceE9` within indexE9 × (1 ± bandBps / 10^4): the lower bound rounded up, the upper down and
 * never above the largest safe integer (an index near it leaves no room for the band above).
 */
export function clampToBand(priceE9: bigint, indexE9: number, bandBps: number): number {
  const index = BigInt(indexE9);
  const lower = (index * (BPS_ONE - BigInt(bandBps)) + BPS_ONE - 1n) / BPS_ONE;
  const banded = (index * (BPS_ONE + BigInt(bandBps))) / BPS_ONE;
  const upper = banded > MAX_SAFE ? MAX_SAFE : banded;
  const price = priceE9;
  return Number(price < lower ? lower : price > upper ? upper : price);
}

/** Best bid and ask of a book in ticks (0 for an empty side). */
function bestTicks(s: EngineState, marketIndex: number): [number, number] {
  const book = s.books[marketIndex];
  const bid = book.bids.best();
  const ask = book.asks.best();
  return [bid === NO_LEVEL ? 0 : book.bids.levelPrice[bid], ask === NO_LEVEL ? 0 : book.asks.levelPrice[ask]];
}

/** The mid of a two-sided book ×10^9 (rounded down), or 0 when a side is empty. */
export function midE9(s: EngineState, marketIndex: number): number {
  const [bid, ask] = bestTicks(s, marketIndex);
  return bid > 0 && ask > 0 ? ticksToE9(s, marketIndex, BigInt(bid + ask), 2n) : 0;
}

/** The book's own mark (BookMedian, BookMid, BookLast), for a perpetual whose index is stale. */
function bookMark(s: EngineState, marketIndex: number): { markE9: number; source: MarkPriceSource } | null {
  const [bid, ask] = bestTicks(s, marketIndex);
  const last = s.books[marketIndex].bandReferenceTicks;
  if (bid > 0 && ask > 0 && last > 0) {
    const median = bid + ask + last - Math.max(bid, ask, last) - Math.min(bid, ask, last);
    return { markE9: ticksToE9(s, marketIndex, BigInt(median), 1n), source: MarkPriceSource.BookMedian };
  }
  if (bid > 0 && ask > 0) return { markE9: ticksToE9(s, marketIndex, BigInt(bid + ask), 2n), source: MarkPriceSource.BookMid };
  if (last > 0) return { markE9: ticksToE9(s, marketIndex, BigInt(last), 1n), source: MarkPriceSource.BookLast };
  return null;
}

/**
 * A price of `ticks / divisor` ticks as USDC per whole unit ×10^9, rounded down: one tick × one
 * lot is quoteUnitsPerTickLot quote units for baseUnitsPerLot base units.
 */
export function ticksToE9(s: EngineState, marketIndex: number, ticks: bigint, divisor: bigint): number {
  const market = s.catalog.markets[marketIndex];
  const baseDecimals = BigInt(s.pools.decimalsOf[s.catalog.baseIndexOf[marketIndex]]);
  const quoteDecimals = BigInt(s.pools.decimalsOf[s.catalog.quoteIndexOf[marketIndex]]);
  const numerator = ticks * BigInt(market.quoteUnitsPerTickLot) * 10n ** (9n + baseDecimals);
  return Number(numerator / (divisor * BigInt(market.baseUnitsPerLot) * 10n ** quoteDecimals));
}

/** One EWMA step toward `x`: ewma + trunc(α·(x − ewma)). */
export function ewmaStep(ewmaE9: number, xE9: number): number {
  return ewmaE9 + Number((ALPHA_E12 * BigInt(xE9 - ewmaE9)) / ONE_E12);
}

/** (mark − index) / index at 10^-12, truncated toward zero. */
export function premiumE12(markE9: number, indexE9: number): number {
  assert(indexE9 > 0, 'a premium without an index');
  return Number((BigInt(markE9 - indexE9) * ONE_E12) / BigInt(indexE9));
}

/**
 * One sample of one perpetual at engine time `dueUs` (header): nothing while its index is stale,
 * else the EWMA step, the premium recorded into the open interval; returns the mark sampled (or null).
 */
export function sampleMark(s: EngineState, marketIndex: number, dueUs: number): PerpMark | null {
  const marks = s.perpMarks;
  const underlying = s.catalog.baseIndexOf[marketIndex];
  if (s.indexPrices.isStale(underlying, dueUs)) return null;
  const indexE9 = s.indexPrices.priceOf(underlying);
  const mid = s.books[marketIndex].orderBookState === OrderBookState.PostOnly ? 0 : midE9(s, marketIndex);
  marks.ewmaE9[marketIndex] = ewmaStep(marks.ewmaE9[marketIndex], mid > 0 ? mid - indexE9 : 0);
  const mark = perpMarkPriceOf(s, marketIndex, dueUs);
  marks.premiumSumE12[marketIndex] += premiumE12(mark.markE9, indexE9);
  marks.sampleCount[marketIndex]++;
  return mark;
}

/** The first whole second of engine time after `timeUs`. */
export function nextSecondUs(timeUs: number): number {
  return Math.floor(timeUs / SECOND_US) * SECOND_US + SECOND_US;
}

/** Whether some perpetual's underlying has a fresh index at `timeUs` (then the next second samples something). */
export function anyFreshIndex(s: EngineState, timeUs: number): boolean {
  return s.perpMarks.perpMarkets.some((m) => !s.indexPrices.isStale(s.catalog.baseIndexOf[m], timeUs));
}

/**
 * Sets the funding timers from the last engine time (the first command, or a snapshot's import):
 * each due on the first end of its interval after it; and the sampler when it should wait (wakeSampler).
 */
export function armPerpTimers(s: EngineState): void {
  const marks = s.perpMarks;
  assert(needsPerpTimers(s), 'perpetual timers armed twice');
  for (const m of marks.perpMarkets) {
    const interval = marks.intervalUs[m];
    marks.fundingTimer[m] = s.timers.add(Math.floor(s.lastTimeUs / interval) * interval + interval, TimerKind.Funding, m);
  }
  // The sampler as a live engine holds it: waiting while some index was fresh at the last whole
  // second at or before the last command (that second's sample found it fresh and set the next),
  // even when the index has gone stale since (the next sample finds that and stops).
  if (marks.sampleTimer === NO_TIMER && anyFreshIndex(s, nextSecondUs(s.lastTimeUs) - SECOND_US)) {
    marks.sampleTimer = s.timers.add(nextSecondUs(s.lastTimeUs), TimerKind.MarkSample, 0);
  }
}

/**
 * The sampler waits (due on the first whole second after the last command) exactly while some
 * perpetual's index was fresh at the last whole second at or before the last command: it stops
 * when a sample finds no fresh index (funding.ts sampleMarks) and only a SetIndexPrice, the one
 * command that freshens an index, wakes it (Exchange.apply).
 */
export function wakeSampler(s: EngineState): void {
  const marks = s.perpMarks;
  if (marks.sampleTimer !== NO_TIMER || marks.perpMarkets.length === 0) return;
  if (!anyFreshIndex(s, s.lastTimeUs)) return;
  marks.sampleTimer = s.timers.add(nextSecondUs(s.lastTimeUs), TimerKind.MarkSample, 0);
}

/** Whether the funding timers wait for their first arming (perpetuals configured, none set yet). */
export function needsPerpTimers(s: EngineState): boolean {
  const marks = s.perpMarks;
  return marks.perpMarkets.length > 0 && marks.fundingTimer[marks.perpMarkets[0]] === NO_TIMER;
}

/** The timers wait exactly as the header says: the sampler on the next second, each funding timer on its next interval end. */
export function checkPerpTimers(s: EngineState): void {
  const marks = s.perpMarks;
  const armed = marks.perpMarkets.length > 0 && s.lastSeq >= 0;
  const sampling = armed && anyFreshIndex(s, nextSecondUs(s.lastTimeUs) - SECOND_US);
  assert(s.timers.inOrder(TimerKind.MarkSample).length === (sampling ? 1 : 0) && (marks.sampleTimer !== NO_TIMER) === sampling, 'the mark sampler waits other than while an index is fresh');
  assert(s.timers.inOrder(TimerKind.Funding).length === (armed ? marks.perpMarkets.length : 0), 'funding timers differ from the perpetuals');
  if (!armed) return;
  assert(!sampling || s.timers.dueOf(marks.sampleTimer) === nextSecondUs(s.lastTimeUs), 'the mark sampler is not due on the next second');
  for (const m of marks.perpMarkets) {
    const interval = marks.intervalUs[m];
    const timer = marks.fundingTimer[m];
    assert(s.timers.refOf(timer) === m && s.timers.dueOf(timer) === Math.floor(s.lastTimeUs / interval) * interval + interval, 'a funding timer is not due on its next interval end');
  }
}
