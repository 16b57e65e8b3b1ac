// The reference model's perpetual mark prices and funding (engine/core/perp/mark-price.ts,
// funding.ts), written the obvious way: per perpetual a bigint EWMA, premium sum and sample count
// in a Map by market id, the sampler's and each funding interval's next due time as plain numbers.
// Same rules as those headers: the mark, first available wins, is index + EWMA(mid − index)
// clamped to the band while the index is fresh (the index itself on a PostOnly book or while the
// EWMA is 0), else the book's median(bid, ask, last trade), its mid, its last trade, else the stale
// index, else none; a sample each whole second of engine time while some perpetual's index is
// fresh (woken by SetIndexPrice, stopped by a sample that finds none fresh); at each interval end
// with samples a FundingRate record and the payments (engine-model-perp.ts payFunding).

import { FRONT_ID_NONE, MarkPriceSource, OrderBookState, RecordType, ResultCode, type CommandSlot as Command, type EngineConfig, type MarketSpec } from '../../engine/bus/types.js';
import type { Rec } from './engine-harness.js';

const ONE_E12 = 10n ** 12n;
const ALPHA_E12 = 16_528_546_178n;
const SECOND_US = 1_000_000;

/** What the marks model reads of the rest of the model. */
export interface MarksHost {
  header(type: RecordType, frontId: number, requestId: number, flags: number): Record<string, number>;
  push(rec: Rec): void;
  result(cmd: Command, code: ResultCode, value: number): void;
  timeUs(): number;
  index(assetId: number): { priceE9: number; timeUs: number } | undefined;
  /** Best bid and ask in ticks (0: empty side), the last trade of a banded market (0: none or unbanded), the book's state. */
  book(market: MarketSpec): { bid: number; ask: number; last: number; state: OrderBookState };
  /** Pays perpetual `market`'s funding at `rateE12` and `markE9` for the interval ending at `endUs`. */
  payFunding(market: MarketSpec, rateE12: bigint, markE9: bigint, endUs: number): void;
  /** The perpetual's open interest in base units. */
  openInterestUnits(market: MarketSpec): number;
  /** Re-checks the liquidating state of the perpetual's position holders, in account order. */
  reviewHolders(market: MarketSpec): void;
}

export interface ModelMark {
  markE9: bigint;
  indexE9: bigint;
  source: MarkPriceSource;
}

interface Sums {
  ewma: bigint;
  premiumSum: bigint;
  count: bigint;
  fundingDueUs: number;
}

const clamp = (v: bigint, lo: bigint, hi: bigint): bigint => (v < lo ? lo : v > hi ? hi : v);

export class ModelMarks {
  private readonly sums = new Map<number, Sums>();
  /** The sampler's next whole second, or -1 while it is stopped. */
  private sampleDueUs = -1;
  private armed = false;

  constructor(private readonly config: EngineConfig, private readonly host: MarksHost) {
    for (const m of this.perps()) this.sums.set(m.marketId, { ewma: 0n, premiumSum: 0n, count: 0n, fundingDueUs: -1 });
  }

  private perps(): MarketSpec[] {
    return this.config.markets.filter((m) => m.perp !== undefined);
  }

  private decimals(assetId: number): bigint {
    return BigInt(this.config.assets.find((a) => a.assetId === assetId)!.decimals);
  }

  private fresh(assetId: number, nowUs: number): boolean {
    const index = this.host.index(assetId);
    return index !== undefined && nowUs - index.timeUs <= (this.config.indexMaxAgeUs ?? 30_000_000);
  }

  private anyFresh(nowUs: number): boolean {
    return this.perps().some((m) => this.fresh(m.baseAssetId, nowUs));
  }

  /** `ticks / divisor` ticks as USDC per whole unit ×10^9, rounded down. */
  private ticksE9(market: MarketSpec, ticks: bigint, divisor: bigint): bigint {
    const numerator = ticks * BigInt(market.quoteUnitsPerTickLot) * 10n ** (9n + this.decimals(market.baseAssetId));
    return numerator / (divisor * BigInt(market.baseUnitsPerLot) * 10n ** this.decimals(market.quoteAssetId));
  }

  /** The mark of `market` at engine time `nowUs`. */
  markAt(market: MarketSpec, nowUs: number): ModelMark {
    const index = this.host.index(market.baseAssetId);
    const indexE9 = BigInt(index?.priceE9 ?? 0);
    const book = this.host.book(market);
    if (this.fresh(market.baseAssetId, nowUs)) {
      const ewma = this.sums.get(market.marketId)!.ewma;
      if (ewma === 0n || book.state === OrderBookState.PostOnly) return { markE9: indexE9, indexE9, source: MarkPriceSource.Index };
      const band = BigInt(market.perp!.markPriceBandBps ?? 500);
      const lower = (indexE9 * (10_000n - band) + 9_999n) / 10_000n;
      const banded = (indexE9 * (10_000n + band)) / 10_000n;
      const upper = banded > BigInt(Number.MAX_SAFE_INTEGER) ? BigInt(Number.MAX_SAFE_INTEGER) : banded;
      return { markE9: clamp(indexE9 + ewma, lower, upper), indexE9, source: MarkPriceSource.Ewma };
    }
    const { bid, ask, last } = book;
    if (bid > 0 && ask > 0 && last > 0) {
      const median = [bid, ask, last].sort((a, b) => a - b)[1];
      return { markE9: this.ticksE9(market, BigInt(median), 1n), indexE9, source: MarkPriceSource.BookMedian };
    }
    if (bid > 0 && ask > 0) return { markE9: this.ticksE9(market, BigInt(bid + ask), 2n), indexE9, source: MarkPriceSource.BookMid };
    if (last > 0) return { markE9: this.ticksE9(market, BigInt(last), 1n), indexE9, source: MarkPriceSource.BookLast };
    if (indexE9 > 0n) return { markE9: indexE9, indexE9, source: MarkPriceSource.StaleIndex };
    return { markE9: 0n, indexE9: 0n, source: MarkPriceSource.None };
  }

  /** The rate at 10^-12 of `market`'s open interval (funding.ts fundingRateE12). */
  rateE12(market: MarketSpec): bigint {
    const sums = this.sums.get(market.marketId)!;
    const perp = market.perp!;
    const mean = sums.count === 0n ? 0n : sums.premiumSum / sums.count;
    const f8 = mean + clamp(100_000_000n - mean, -500_000_000n, 500_000_000n);
    const rate = (f8 * BigInt(perp.fundingIntervalMs)) / 28_800_000n;
    return clamp(rate, BigInt(perp.fundingRateLowerBoundBps) * 100_000_000n, BigInt(perp.fundingRateUpperBoundBps) * 100_000_000n);
  }

  /** QueryMarkPrices (funding.ts queryMarkPrices): a row per perpetual with a mark at the query's time. */
  query(cmd: Command): void {
    const nowUs = this.host.timeUs();
    let rows = 0;
    for (const m of this.perps()) {
      const mark = this.markAt(m, nowUs);
      if (mark.source === MarkPriceSource.None) continue;
      const interval = m.perp!.fundingIntervalMs * 1000;
      const due = this.sums.get(m.marketId)!.fundingDueUs;
      this.host.push({
        ...this.host.header(RecordType.MarkPrice, cmd.frontId, cmd.requestId, 0), markPriceE9: Number(mark.markE9), indexPriceE9: Number(mark.indexE9),
        fundingRateE12: Number(this.rateE12(m)), nextFundingUs: due >= 0 ? due : Math.floor(nowUs / interval) * interval + interval, marketId: m.marketId, source: mark.source,
      } as Rec);
      rows++;
    }
    this.host.result(cmd, ResultCode.Ok, rows);
  }

  /** The first mutating command sets each perpetual's first interval end. */
  arm(nowUs: number): void {
    if (this.armed || this.sums.size === 0) return;
    this.armed = true;
    for (const m of this.perps()) {
      const interval = m.perp!.fundingIntervalMs * 1000;
      this.sums.get(m.marketId)!.fundingDueUs = Math.floor(nowUs / interval) * interval + interval;
    }
  }

  /** After a SetIndexPrice: a stopped sampler starts again on the next second when an index is fresh. */
  wake(nowUs: number): void {
    if (this.sampleDueUs >= 0 || this.sums.size === 0 || !this.anyFresh(nowUs)) return;
    this.sampleDueUs = Math.floor(nowUs / SECOND_US) * SECOND_US + SECOND_US;
  }

  /** The next perpetual timer: due time and kind (3 the sampler, 4 an interval end, as timers.ts), or null. */
  next(): { dueUs: number; kind: number; market: MarketSpec | null } | null {
    let best: { dueUs: number; kind: number; market: MarketSpec | null } | null = this.sampleDueUs >= 0 ? { dueUs: this.sampleDueUs, kind: 3, market: null } : null;
    for (const m of this.perps()) {
      const due = this.sums.get(m.marketId)!.fundingDueUs;
      if (due >= 0 && (best === null || due < best.dueUs)) best = { dueUs: due, kind: 4, market: m };
    }
    return best;
  }

  /** Runs the timer next() gave. */
  run(timer: { dueUs: number; kind: number; market: MarketSpec | null }): void {
    if (timer.kind === 3) this.sample(timer.dueUs);
    else this.fund(timer.market!, timer.dueUs);
  }

  private sample(dueUs: number): void {
    for (const m of this.perps()) {
      if (!this.fresh(m.baseAssetId, dueUs)) continue;
      const sums = this.sums.get(m.marketId)!;
      const indexE9 = BigInt(this.host.index(m.baseAssetId)!.priceE9);
      const book = this.host.book(m);
      const mid = book.state !== OrderBookState.PostOnly && book.bid > 0 && book.ask > 0 ? this.ticksE9(m, BigInt(book.bid + book.ask), 2n) : 0n;
      const x = mid > 0n ? mid - indexE9 : 0n;
      sums.ewma += (ALPHA_E12 * (x - sums.ewma)) / ONE_E12;
      const mark = this.markAt(m, dueUs);
      sums.premiumSum += ((mark.markE9 - indexE9) * ONE_E12) / indexE9;
      sums.count++;
      this.host.push({
        ...this.host.header(RecordType.MarkPrice, FRONT_ID_NONE, 0, 0), markPriceE9: Number(mark.markE9), indexPriceE9: Number(mark.indexE9),
        fundingRateE12: Number(this.rateE12(m)), nextFundingUs: sums.fundingDueUs, marketId: m.marketId, source: mark.source,
      } as Rec);
      this.host.push({ ...this.host.header(RecordType.OpenInterest, FRONT_ID_NONE, 0, 0), openInterestUnits: this.host.openInterestUnits(m), marketId: m.marketId } as unknown as Rec);
      this.host.reviewHolders(m);
    }
    this.sampleDueUs = this.anyFresh(dueUs) ? dueUs + SECOND_US : -1;
  }

  private fund(market: MarketSpec, dueUs: number): void {
    const sums = this.sums.get(market.marketId)!;
    if (sums.count > 0n) {
      const rate = this.rateE12(market);
      const markE9 = this.markAt(market, dueUs).markE9;
      this.host.push({
        ...this.host.header(RecordType.FundingRate, FRONT_ID_NONE, 0, 0), intervalEndUs: dueUs, fundingRateE12: Number(rate), markPriceE9: Number(markE9), marketId: market.marketId,
      } as Rec);
      this.host.payFunding(market, rate, markE9, dueUs);
      sums.premiumSum = 0n;
      sums.count = 0n;
      this.host.reviewHolders(market);
    }
    sums.fundingDueUs = dueUs + market.perp!.fundingIntervalMs * 1000;
  }
}
