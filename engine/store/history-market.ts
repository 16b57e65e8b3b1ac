// Public market history in LMDB: every trade, and one-minute and one-hour candles built from them
// (from those on the book),
// written by the journal worker in the same transaction as the journal batch that carries the
// trades, and read by the front threads (REST trades, klines, tickers; the ticker and kline streams)
// through their own read transactions on the same environment.
//
// Layout (two databases in the journal's environment, binary keys ordered big-endian):
//   market-trades   [marketId u16][tradeId u64]              → TradeValue (48 bytes)
//   market-candles  [marketId u16][resolution u8][startS u64] → CandleValue (72 bytes): resolution
//                   0/1 the last-price candles (minute, hour) of a market's trades; 2/3/4 the mark
//                   price candles (second, minute, hour) of a perpetual's MarkPrice events (one a
//                   second); 5/6/7 the index price candles of an asset's IndexPrice events (keyed by
//                   the asset id in the market id's place: every market on that base shares them)
//   market-funding  [marketId u16][intervalEndUs u64]         → FundingRateValue (24 bytes): each
//                   perpetual funding interval's rate (a FundingRate event), for GET /api/v1/fundingRates
//   market-off-book [marketId u16][tradeId u64]              → one zero byte: the trade is off the
//                   book (a backstop fill, HeaderFlag.OffBook): stored among the trades (ids stay
//                   contiguous) but in no candle, stored or computed (one-second klines skip it)
// The values are declared in schemas/exchange.fbs (big-endian (store) structs) and encoded by
// engine/store/generated/values.ts.
// Mark and index candles hold prices ×10^9 (USDC per whole unit) where trade candles hold ticks,
// no volume, and the number of samples where trade candles count trades; they are written with the
// trades, in the same transaction as the journal batch that carries their events, so they survive
// (and are lost) exactly as last-price candles are.
// Trade ids are per market and contiguous from 1 (the engine's sequence), so "the newest n" and
// "offset from the newest" are key ranges. Candles keep integers only: prices in ticks, volume in
// lots, quote volume in tick·lots (× the market's quoteUnitsPerTickLot = quote units), sums as
// unsigned 64-bit values.
//
// Why stored candles and not candles computed from trades: a kline or 24-hour ticker request on a
// busy market would otherwise scan every trade of the window; a day is at most 1,440 one-minute
// rows, a week 168 one-hour rows plus the minutes at its edges. One-second klines are computed
// from the trades themselves (their window is bounded by the number of candles one response may
// hold).
//
// The sink sees each outbound record once (the journal worker's record loop, which runs inside the
// batch's synchronous LMDB transaction). A command's trades are held until the command's last
// record (HeaderFlag.CommandEnd) passes, the moment the journal writer appends the command's own
// journal record, so a command's trades and its journal record always share one transaction: a
// crash can never leave history ahead of, or behind, the journal. The candles touched in a batch
// are written once, by endBatch(), which the journal worker calls at the end of the same
// transaction. On start the sink reloads the latest candle of each market so a restart inside a
// minute continues that candle.

import type { Database, RootDatabase } from 'lmdb';
import { newFundingRateRec, newIndexPriceRec, newMarkPriceRec, readFundingRate, readIndexPrice, readMarkPrice, readTrade, recordFlags, recordType } from '../bus/codec.js';
import { FRONT_ID_NONE, HeaderFlag, RecordType, type FundingRateRec, type TradeRec } from '../bus/types.js';
import {
  FUNDING_RATE_VALUE_BYTES, newFundingRateValue, readFundingRateValue, writeFundingRateValue, type FundingRateValue,
  CANDLE_VALUE_BYTES, TRADE_VALUE_BYTES, newCandleValue, newTradeValue, readCandleValue, readTradeValue, writeCandleValue,
  writeTradeValue, type TradeValue,
} from './generated/values.js';

export const TRADES_DB = 'market-trades';
export const CANDLES_DB = 'market-candles';
export const FUNDING_DB = 'market-funding';
export const OFF_BOOK_DB = 'market-off-book';
const OFF_BOOK_VALUE = Buffer.alloc(1);

export const enum CandleResolution {
  Minute = 0,
  Hour = 1,
  MarkSecond = 2,
  MarkMinute = 3,
  MarkHour = 4,
  IndexSecond = 5,
  IndexMinute = 6,
  IndexHour = 7,
}
export const RESOLUTION_SECONDS = [60, 3600] as const;

/** What a kline's prices are: trades (Last), a perpetual's mark, or its base asset's index. */
export type KlinePrice = 'Last' | 'Mark' | 'Index';

/** Candle resolutions of price samples (mark, index), each with its bucket length in seconds. */
const SAMPLE_RESOLUTIONS: Record<'Mark' | 'Index', readonly [CandleResolution, number][]> = {
  Mark: [[CandleResolution.MarkSecond, 1], [CandleResolution.MarkMinute, 60], [CandleResolution.MarkHour, 3600]],
  Index: [[CandleResolution.IndexSecond, 1], [CandleResolution.IndexMinute, 60], [CandleResolution.IndexHour, 3600]],
};

/** The stored resolution that serves buckets of `seconds` (one second, under an hour, longer) for a kind of price. */
export function candleResolutionFor(price: KlinePrice, seconds: number): CandleResolution {
  const under = seconds !== 0 && seconds < 3600;
  if (price === 'Last') return under ? CandleResolution.Minute : CandleResolution.Hour;
  const [second, minute, hour] = SAMPLE_RESOLUTIONS[price];
  return (seconds === 1 ? second : under ? minute : hour)[0];
}

/** One stored trade: the schema's TradeValue. */
export type TradeEntry = TradeValue;

export interface Candle {
  startS: number;
  openTicks: number;
  highTicks: number;
  lowTicks: number;
  closeTicks: number;
  volumeLots: bigint;
  /** Σ priceTicks × qtyLots; × quoteUnitsPerTickLot gives quote units. */
  quoteTickLots: bigint;
  tradeCount: number;
  /**
   * Engine time of the first and last trade in the candle. A candle read back from LMDB knows the
   * last at millisecond precision and the first only to the high half CandleValue stores.
   */
  firstTimeUs: number;
  lastTimeUs: number;
  /**
   * Highest journal sequence among its trades. LMDB shows a batch once committed, a moment before
   * it is flushed: a stream publishes a candle only once seqDurable has reached this.
   */
  lastSeq: number;
}

const TWO_32 = 0x1_0000_0000;

// Keys are written here; the values' layouts are the schema's (TradeValue, CandleValue), through
// the generated codec.
function put53(dv: DataView, off: number, value: number): void {
  dv.setUint32(off, Math.floor(value / TWO_32));
  dv.setUint32(off + 4, value >>> 0);
}

function get53(dv: DataView, off: number): number {
  return dv.getUint32(off) * TWO_32 + dv.getUint32(off + 4);
}

export function tradeKey(marketId: number, tradeId: number): Buffer {
  const key = Buffer.allocUnsafe(TRADE_KEY_BYTES);
  writeTradeKey(new DataView(key.buffer, key.byteOffset, TRADE_KEY_BYTES), marketId, tradeId);
  return key;
}

const TRADE_KEY_BYTES = 10;

/** Writes a trade's key (market id, then trade id, big-endian) at the start of `dv`. */
function writeTradeKey(dv: DataView, marketId: number, tradeId: number): void {
  dv.setUint16(0, marketId);
  put53(dv, 2, tradeId);
}

export function candleKey(marketId: number, resolution: CandleResolution, startS: number): Buffer {
  const key = Buffer.allocUnsafe(11);
  key.writeUInt16BE(marketId, 0);
  key.writeUInt8(resolution, 2);
  const dv = new DataView(key.buffer, key.byteOffset, 11);
  put53(dv, 3, startS);
  return key;
}

export function encodeTrade(t: TradeEntry): Buffer {
  const value = Buffer.alloc(TRADE_VALUE_BYTES);
  writeTradeValue(new DataView(value.buffer, value.byteOffset, TRADE_VALUE_BYTES), 0, t);
  return value;
}

export function decodeTrade(value: Uint8Array): TradeEntry {
  const t = newTradeValue();
  readTradeValue(new DataView(value.buffer, value.byteOffset, value.byteLength), 0, t);
  return t;
}

/** The stored form of a candle, reused by encodeCandle (the journal worker encodes one at a time). */
const candleValue = newCandleValue();

/**
 * A candle's stored value: its trade times in milliseconds (the REST trade timestamp's unit), and
 * of the first trade's time only the high half (see CandleValue in the schema).
 */
export function encodeCandle(c: Candle): Buffer {
  const v = candleValue;
  v.openTicks = c.openTicks;
  v.highTicks = c.highTicks;
  v.lowTicks = c.lowTicks;
  v.closeTicks = c.closeTicks;
  v.volumeLots = c.volumeLots;
  v.quoteTickLots = c.quoteTickLots;
  v.tradeCount = c.tradeCount;
  v.firstTimeMsHigh = Math.floor(Math.floor(c.firstTimeUs / 1000) / TWO_32);
  v.lastTimeMs = Math.floor(c.lastTimeUs / 1000);
  v.lastSeq = c.lastSeq;
  const value = Buffer.alloc(CANDLE_VALUE_BYTES);
  writeCandleValue(new DataView(value.buffer, value.byteOffset, CANDLE_VALUE_BYTES), 0, v);
  return value;
}

/** A stored candle; its firstTimeUs keeps only the high half the value stores (nothing serves it). */
export function decodeCandle(startS: number, value: Uint8Array): Candle {
  const v = newCandleValue();
  readCandleValue(new DataView(value.buffer, value.byteOffset, value.byteLength), 0, v);
  return {
    startS,
    openTicks: v.openTicks,
    highTicks: v.highTicks,
    lowTicks: v.lowTicks,
    closeTicks: v.closeTicks,
    volumeLots: v.volumeLots,
    quoteTickLots: v.quoteTickLots,
    tradeCount: v.tradeCount,
    firstTimeUs: v.firstTimeMsHigh * TWO_32 * 1000,
    lastTimeUs: v.lastTimeMs * 1000,
    lastSeq: v.lastSeq,
  };
}

/** The trade id of a market-trades (or market-off-book) key. */
export function tradeIdOfKey(key: Uint8Array): number {
  return get53(new DataView(key.buffer, key.byteOffset, key.byteLength), 2);
}

export function candleStartOfKey(key: Uint8Array): number {
  const dv = new DataView(key.buffer, key.byteOffset, key.byteLength);
  return get53(dv, 3);
}

/** Adds one trade to a candle (the candle covers the trade's time). */
export function addTradeToCandle(c: Candle, priceTicks: number, qtyLots: number, timeUs: number, seq: number): void {
  if (c.tradeCount === 0) {
    c.openTicks = priceTicks;
    c.highTicks = priceTicks;
    c.lowTicks = priceTicks;
    c.firstTimeUs = timeUs;
  } else {
    if (priceTicks > c.highTicks) c.highTicks = priceTicks;
    if (priceTicks < c.lowTicks) c.lowTicks = priceTicks;
  }
  c.closeTicks = priceTicks;
  c.lastTimeUs = timeUs;
  c.volumeLots += BigInt(qtyLots);
  c.quoteTickLots += BigInt(priceTicks) * BigInt(qtyLots);
  c.tradeCount += 1;
  if (seq > c.lastSeq) c.lastSeq = seq;
}

export function emptyCandle(startS: number): Candle {
  return {
    startS, openTicks: 0, highTicks: 0, lowTicks: 0, closeTicks: 0,
    volumeLots: 0n, quoteTickLots: 0n, tradeCount: 0, firstTimeUs: 0, lastTimeUs: 0, lastSeq: 0,
  };
}

export interface MarketHistoryDbs {
  trades: Database<Buffer, Buffer>;
  candles: Database<Buffer, Buffer>;
  funding: Database<Buffer, Buffer>;
  offBook: Database<Buffer, Buffer>;
}

export function fundingKey(marketId: number, intervalEndUs: number): Buffer {
  const key = Buffer.allocUnsafe(10);
  key.writeUInt16BE(marketId, 0);
  put53(new DataView(key.buffer, key.byteOffset, 10), 2, intervalEndUs);
  return key;
}

/** One stored funding interval: its end (engine µs) and the stored value. */
export interface FundingRateEntry extends FundingRateValue {
  intervalEndUs: number;
}

export function encodeFundingRate(r: FundingRateRec): Buffer {
  const value = Buffer.alloc(FUNDING_RATE_VALUE_BYTES);
  writeFundingRateValue(new DataView(value.buffer, value.byteOffset, FUNDING_RATE_VALUE_BYTES), 0, {
    fundingRateE12: r.fundingRateE12, markPriceE9: r.markPriceE9, seq: r.seq,
  });
  return value;
}

/**
 * A perpetual's funding intervals, newest first, skipping `offset` and at most `limit`, leaving
 * out any written by a command not yet durable (seq > seqDurable).
 */
export function readFundingRates(dbs: MarketHistoryDbs, marketId: number, offset: number, limit: number, seqDurable: number): FundingRateEntry[] {
  const out: FundingRateEntry[] = [];
  let skipped = 0;
  for (const { key, value } of dbs.funding.getRange({ start: fundingKey(marketId, Number.MAX_SAFE_INTEGER), end: fundingKey(marketId, 0), reverse: true })) {
    const entry = { ...newFundingRateValue(), intervalEndUs: get53(new DataView(key.buffer, key.byteOffset, key.byteLength), 2) };
    readFundingRateValue(new DataView(value.buffer, value.byteOffset, value.byteLength), 0, entry);
    if (entry.seq > seqDurable) continue;
    if (skipped++ < offset) continue;
    out.push(entry);
    if (out.length >= limit) break;
  }
  return out;
}

export function openMarketHistoryDbs(root: RootDatabase): MarketHistoryDbs {
  return {
    trades: root.openDB<Buffer, Buffer>({ name: TRADES_DB, keyEncoding: 'binary', encoding: 'binary' }),
    candles: root.openDB<Buffer, Buffer>({ name: CANDLES_DB, keyEncoding: 'binary', encoding: 'binary' }),
    funding: root.openDB<Buffer, Buffer>({ name: FUNDING_DB, keyEncoding: 'binary', encoding: 'binary' }),
    offBook: root.openDB<Buffer, Buffer>({ name: OFF_BOOK_DB, keyEncoding: 'binary', encoding: 'binary' }),
  };
}

/** The ids of the market's off-book trades in [firstId, lastId]. */
export function offBookTradeIds(dbs: MarketHistoryDbs, marketId: number, firstId: number, lastId: number): Set<number> {
  const ids = new Set<number>();
  for (const { key } of dbs.offBook.getRange({ start: tradeKey(marketId, firstId), end: tradeKey(marketId, lastId + 1) })) ids.add(tradeIdOfKey(key));
  return ids;
}

/** The latest stored candle of a market at a resolution, or null. */
export function latestCandle(dbs: MarketHistoryDbs, marketId: number, resolution: CandleResolution): Candle | null {
  for (const { key, value } of dbs.candles.getRange({
    start: candleKey(marketId, resolution, Number.MAX_SAFE_INTEGER),
    // The key's (market, resolution) prefix alone: it sorts before the candle starting at 0,
    // which an exclusive end at that candle's own key would leave out.
    end: candleKey(marketId, resolution, 0).subarray(0, 3),
    reverse: true,
    limit: 1,
  })) {
    return decodeCandle(candleStartOfKey(key), value);
  }
  return null;
}

function newTradeRec(): TradeRec {
  return {
    seq: 0, timeUs: 0, requestId: 0, frontId: 0, type: RecordType.Trade, flags: 0,
    tradeId: 0, priceTicks: 0, qtyLots: 0, buyerOrderId: 0, sellerOrderId: 0, marketId: 0, buyerIsMaker: false,
  };
}

/** One mark or index sample of the current command, until its last record passes. */
interface PriceSample {
  /** Market id (mark) or asset id (index): the key's first field. */
  id: number;
  price: 'Mark' | 'Index';
  priceE9: number;
  timeUs: number;
  seq: number;
}

/** The journal worker's sink: one call per outbound record, inside the batch's transaction. */
export class MarketHistorySink {
  private readonly dbs: MarketHistoryDbs;
  /** The current command's trades, until its last record passes (reused records). */
  private readonly pending: TradeRec[] = [];
  private pendingCount = 0;
  /** The current command's funding intervals (FundingRate events), until its last record passes. */
  private readonly pendingFunding: FundingRateRec[] = [];
  /** The current command's mark samples and index prices (events only, not query rows). */
  private readonly pendingSamples: PriceSample[] = [];
  private readonly markRec = newMarkPriceRec();
  private readonly indexRec = newIndexPriceRec();
  /** (id × 8 + resolution) → the current candle (loaded lazily from LMDB on its first use). */
  private readonly current = new Map<number, Candle>();
  /** Candles touched in this batch → their (id × 8 + resolution). */
  private readonly dirty = new Map<Candle, number>();
  /**
   * A trade's key and value, written in place for each trade (reused: the sink runs inside the
   * batch's synchronous transaction, where a put is written at once; putSync keeps that true
   * anywhere).
   */
  private readonly tradeKeyBytes = Buffer.alloc(TRADE_KEY_BYTES);
  private readonly tradeKeyView = new DataView(this.tradeKeyBytes.buffer, this.tradeKeyBytes.byteOffset, TRADE_KEY_BYTES);
  private readonly tradeBytes = Buffer.alloc(TRADE_VALUE_BYTES);
  private readonly tradeView = new DataView(this.tradeBytes.buffer, this.tradeBytes.byteOffset, TRADE_VALUE_BYTES);

  constructor(root: RootDatabase) {
    this.dbs = openMarketHistoryDbs(root);
  }

  onRecord(view: DataView, offset: number): void {
    const type = recordType(view, offset);
    if (type === RecordType.Trade) {
      if (this.pendingCount === this.pending.length) this.pending.push(newTradeRec());
      readTrade(view, offset, this.pending[this.pendingCount++]);
    } else if (type === RecordType.FundingRate) {
      const rate = newFundingRateRec();
      readFundingRate(view, offset, rate);
      this.pendingFunding.push(rate);
    } else if (type === RecordType.MarkPrice || type === RecordType.IndexPrice) {
      this.onPriceRecord(view, offset, type);
    }
    if ((recordFlags(view, offset) & HeaderFlag.CommandEnd) === 0) return;
    if (this.pendingCount > 0) this.commitCommand();
    for (const rate of this.pendingFunding) void this.dbs.funding.put(fundingKey(rate.marketId, rate.intervalEndUs), encodeFundingRate(rate));
    this.pendingFunding.length = 0;
    for (const sample of this.pendingSamples) this.addSample(sample);
    this.pendingSamples.length = 0;
  }

  /** A MarkPrice or IndexPrice event (a sample, a SetIndexPrice); query rows, addressed to a front, are not prices moving. */
  private onPriceRecord(view: DataView, offset: number, type: RecordType.MarkPrice | RecordType.IndexPrice): void {
    if (type === RecordType.MarkPrice) {
      const r = this.markRec;
      readMarkPrice(view, offset, r);
      if (r.frontId === FRONT_ID_NONE) this.pendingSamples.push({ id: r.marketId, price: 'Mark', priceE9: r.markPriceE9, timeUs: r.timeUs, seq: r.seq });
    } else {
      const r = this.indexRec;
      readIndexPrice(view, offset, r);
      if (r.frontId === FRONT_ID_NONE) this.pendingSamples.push({ id: r.assetId, price: 'Index', priceE9: r.priceE9, timeUs: r.timeUs, seq: r.seq });
    }
  }

  /** Writes the candles touched since the last call; called at the end of each batch's transaction. */
  endBatch(): void {
    for (const [candle, tag] of this.dirty) {
      void this.dbs.candles.put(candleKey(Math.floor(tag / 8), (tag % 8) as CandleResolution, candle.startS), encodeCandle(candle));
    }
    this.dirty.clear();
  }

  /**
   * The command's last record has passed: its trades join the transaction its journal record is
   * in. A trade off the book (HeaderFlag.OffBook: a backstop fill) is stored, but joins no candle.
   */
  private commitCommand(): void {
    for (let i = 0; i < this.pendingCount; i++) {
      const t = this.pending[i];
      writeTradeKey(this.tradeKeyView, t.marketId, t.tradeId);
      writeTradeValue(this.tradeView, 0, t);
      this.dbs.trades.putSync(this.tradeKeyBytes, this.tradeBytes);
      if ((t.flags & HeaderFlag.OffBook) !== 0) {
        this.dbs.offBook.putSync(this.tradeKeyBytes, OFF_BOOK_VALUE);
        continue;
      }
      const timeS = Math.floor(t.timeUs / 1_000_000);
      for (let r = 0; r < RESOLUTION_SECONDS.length; r++) {
        const candle = this.candleAt(t.marketId, r as CandleResolution, timeS - (timeS % RESOLUTION_SECONDS[r]));
        addTradeToCandle(candle, t.priceTicks, t.qtyLots, t.timeUs, t.seq);
      }
    }
    this.pendingCount = 0;
  }

  /** One mark or index price into its second, minute and hour candles (a sample with no volume). */
  private addSample(sample: PriceSample): void {
    const timeS = Math.floor(sample.timeUs / 1_000_000);
    for (const [resolution, seconds] of SAMPLE_RESOLUTIONS[sample.price]) {
      addTradeToCandle(this.candleAt(sample.id, resolution, timeS - (timeS % seconds)), sample.priceE9, 0, sample.timeUs, sample.seq);
    }
  }

  /** The current candle of (id, resolution) starting at `startS` (a new one once time moved past the last), marked dirty. */
  private candleAt(id: number, resolution: CandleResolution, startS: number): Candle {
    const tag = id * 8 + resolution;
    let candle = this.current.get(tag);
    if (candle === undefined) candle = latestCandle(this.dbs, id, resolution) ?? emptyCandle(-1);
    if (candle.startS !== startS) candle = emptyCandle(startS);
    this.current.set(tag, candle);
    this.dirty.set(candle, tag);
    return candle;
  }
}
