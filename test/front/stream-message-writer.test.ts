// The trade stream's byte encoding (message-writer.ts, streams/trades.ts) against the JSON it
// replaces: integers and fixed decimals are written as JSON.stringify and formatDecimalFixed write
// them, within the sizes the stream's buffer is made for; for every configured market and a seeded
// spread of records, including the edges of the safe-integer range, zero and sub-unit values, the
// published bytes are exactly JSON.stringify({stream, data}) of the same trade with priceTextFixed
// and qtyTextFixed; one message is pinned as literal text. The fixed parts left in place from the last message are
// right whichever values grow or shrink, and a refused record leaves the next message whole. The
// output reads a topic's subscriber count once per drained batch, and the emit time E once per
// EMIT_TIME_MESSAGES messages of a batch and afresh for each batch.

import { describe, expect, it } from 'vitest';
import { loadConfig, type MarketInfo } from '../../src/config.js';
import { formatDecimalFixed } from '../../src/decimal.js';
import { priceTextFixed, qtyTextFixed } from '../../src/wire/market-codec.js';
import { INT_BYTES_MAX, fixedBytesMax, putFixed, putInt } from '../../src/front/streams/message-writer.js';
import { TradeStreams } from '../../src/front/streams/trades.js';
import { EMIT_TIME_MESSAGES, StreamOutput, nowUs } from '../../src/front/streams/family.js';
import { newTradeRec } from '../../engine/bus/codec.js';
import type { TradeRec } from '../../engine/bus/types.js';

const SEED = Number(process.env.SEED ?? 20261123);

function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** A safe integer of a random digit count (1 to 16), so every length is covered. */
function randomInt(next: () => number, max = Number.MAX_SAFE_INTEGER): number {
  const digits = 1 + Math.floor(next() * 16);
  return Math.min(max, Math.floor(next() * 10 ** digits));
}

function decode(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('utf8');
}

/** Trade streams over a recording output: E is `eventUs`, every topic but ETH_USDC's has 7 subscribers. */
function recordingTradeStreams(eventUs: () => number) {
  const config = loadConfig(['--no-demo'], {});
  const published: Array<{ topic: string; message: string; subscriberCount: number }> = [];
  const out = {
    front: { config },
    batch: 0,
    eventTimeUs: eventUs,
    subscriberCount: (topic: Uint8Array) => (decode(topic) === 'trade.ETH_USDC' ? 0 : 7),
    publishEncoded: (topic: Uint8Array, message: Uint8Array, subscriberCount: number) =>
      published.push({ topic: decode(topic), message: decode(message), subscriberCount }),
  } as unknown as StreamOutput;
  return { config, published, streams: new TradeStreams(out) };
}

/** The message JSON.stringify writes for `rec` on `market` at emit time `E`. */
function expectedTrade(market: MarketInfo, rec: TradeRec, E: number): string {
  return JSON.stringify({
    stream: `trade.${market.symbol}`,
    data: {
      e: 'trade', E, s: market.symbol,
      p: priceTextFixed(market, rec.priceTicks), q: qtyTextFixed(market, rec.qtyLots),
      b: String(rec.buyerOrderId), a: String(rec.sellerOrderId),
      t: rec.tradeId, T: rec.timeUs, m: rec.buyerIsMaker,
    },
  });
}

describe('stream message writer', () => {
  it('writes integers and fixed decimals as JSON.stringify and formatDecimalFixed do, within their sizes', () => {
    const next = random(SEED);
    const bytes = new Uint8Array(64);
    const dv = new DataView(bytes.buffer);
    const text = (end: number): string => decode(bytes.subarray(0, end));
    const edges = [0, 1, 9, 10, 99, 100, 101, 999_999, 1_000_000, Number.MAX_SAFE_INTEGER, -1, -10, -Number.MAX_SAFE_INTEGER];
    const values = [...edges, ...Array.from({ length: 2000 }, () => (next() < 0.1 ? -1 : 1) * randomInt(next))];
    for (const value of values) {
      const intEnd = putInt(dv, 0, value);
      expect(text(intEnd), `int ${value} (SEED=${SEED})`).toBe(JSON.stringify(value));
      expect(intEnd).toBeLessThanOrEqual(INT_BYTES_MAX);
      for (const scale of [0, 1, 2, 5, 8, 12, 15, 16, 17, 30]) {
        const fixedEnd = putFixed(dv, 0, value, scale);
        expect(text(fixedEnd), `fixed ${value} at ${scale} (SEED=${SEED})`).toBe(formatDecimalFixed(value, scale));
        expect(fixedEnd).toBeLessThanOrEqual(fixedBytesMax(scale));
      }
    }
  });

  it('writes a value at an offset after what is already there, leaving it in place', () => {
    const bytes = new Uint8Array(64);
    const dv = new DataView(bytes.buffer);
    bytes.set(Buffer.from('{"x":'));
    const end = putFixed(dv, putInt(dv, 5, Number.MAX_SAFE_INTEGER), 5, 30);
    expect(decode(bytes.subarray(0, end))).toBe(`{"x":${Number.MAX_SAFE_INTEGER}${formatDecimalFixed(5, 30)}`);
  });

  it('refuses trade values outside the safe-integer range, as the JSON formatting did, and publishes nothing', () => {
    const { config, published, streams } = recordingTradeStreams(() => nowUs());
    const rec = newTradeRec();
    rec.marketId = config.markets.find((m) => m.symbol === 'SOL_USDC')!.spec.marketId;
    expect(() => streams.onTrade({ ...rec, tradeId: 2 ** 53 })).toThrow(RangeError);
    expect(() => streams.onTrade({ ...rec, priceTicks: 2 ** 53 })).toThrow(RangeError);
    expect(() => streams.onTrade({ ...rec, timeUs: 1.5 })).toThrow(RangeError);
    expect(published).toEqual([]);
  });

  it('publishes each trade as the exact bytes of its JSON envelope, once per event', () => {
    const { config, published, streams } = recordingTradeStreams(() => nowUs());
    const next = random(SEED + 1);
    const expected: string[] = [];
    for (let i = 0; i < 3000; i++) {
      const market: MarketInfo = config.markets[i % config.markets.length];
      const rec: TradeRec = newTradeRec();
      rec.marketId = market.spec.marketId;
      rec.priceTicks = i < 3 ? i : randomInt(next, Math.floor(Number.MAX_SAFE_INTEGER / market.tickUnits));
      rec.qtyLots = i < 3 ? i : randomInt(next, Math.floor(Number.MAX_SAFE_INTEGER / market.stepUnits));
      rec.buyerOrderId = randomInt(next);
      rec.sellerOrderId = i === 0 ? Number.MAX_SAFE_INTEGER : randomInt(next);
      rec.tradeId = randomInt(next);
      rec.timeUs = randomInt(next);
      rec.buyerIsMaker = next() < 0.5;
      const before = published.length;
      streams.onTrade(rec);
      if (market.symbol === 'ETH_USDC') {
        expect(published.length).toBe(before);
        continue;
      }
      expect(published.length).toBe(before + 1);
      const sent = published[published.length - 1];
      const E = (JSON.parse(sent.message) as { data: { E: number } }).data.E;
      expected.push(expectedTrade(market, rec, E));
      expect(sent.topic).toBe(`trade.${market.symbol}`);
      expect(sent.subscriberCount).toBe(7);
    }
    expect(published.map((p) => p.message), `SEED=${SEED}`).toEqual(expected);
    expect(config.markets.map((m) => m.symbol)).toContain('ETH_USDC');
  });

  it('writes a trade message as this exact text', () => {
    const { config, published, streams } = recordingTradeStreams(() => 1_795_331_459_791_958);
    const rec = newTradeRec();
    rec.marketId = config.markets.find((m) => m.symbol === 'SOL_USDC')!.spec.marketId;
    Object.assign(rec, {
      priceTicks: 2_000, qtyLots: 150, buyerOrderId: 2_502_219_465_904_651, sellerOrderId: 12_319_717_905_572,
      tradeId: 1_234_567, timeUs: 1_795_331_459_790_001, buyerIsMaker: false,
    });
    streams.onTrade(rec);
    rec.buyerIsMaker = true;
    rec.priceTicks = 5;
    streams.onTrade(rec);
    expect(published.map((p) => p.message)).toEqual([
      '{"stream":"trade.SOL_USDC","data":{"e":"trade","E":1795331459791958,"s":"SOL_USDC","p":"20.00","q":"1.50",'
        + '"b":"2502219465904651","a":"12319717905572","t":1234567,"T":1795331459790001,"m":false}}',
      '{"stream":"trade.SOL_USDC","data":{"e":"trade","E":1795331459791958,"s":"SOL_USDC","p":"0.05","q":"1.50",'
        + '"b":"2502219465904651","a":"12319717905572","t":1234567,"T":1795331459790001,"m":true}}',
    ]);
  });

  it('keeps the fixed parts right as values grow and shrink from one message to the next', () => {
    let E = 999_999;
    const { config, published, streams } = recordingTradeStreams(() => E);
    const market = config.markets.find((m) => m.symbol === 'SOL_USDC')!;
    const next = random(SEED + 2);
    // Each value takes one of two lengths, so every part is sometimes in place, sometimes moved.
    const pick = (short: number, long: number) => (next() < 0.5 ? short : long);
    const expected: string[] = [];
    for (let i = 0; i < 500; i++) {
      E = pick(999_999, 1_000_000);
      const rec = newTradeRec();
      rec.marketId = market.spec.marketId;
      rec.priceTicks = pick(99, 100);
      rec.qtyLots = pick(5, 123_456);
      rec.buyerOrderId = pick(9, 10);
      rec.sellerOrderId = pick(7, Number.MAX_SAFE_INTEGER);
      rec.tradeId = pick(0, 10);
      rec.timeUs = pick(1, 22);
      rec.buyerIsMaker = next() < 0.5;
      streams.onTrade(rec);
      expected.push(expectedTrade(market, rec, E));
      if (i % 50 === 7) {
        // Refused before any byte is written: the next message is written whole.
        const refused = { ...rec, buyerOrderId: 2 ** 53 };
        expect(() => streams.onTrade(refused)).toThrow(RangeError);
      }
    }
    expect(published.map((p) => p.message), `SEED=${SEED}`).toEqual(expected);
  });

  it('reads a topic\'s subscriber count once per batch, and the emit time once per few messages', () => {
    const config = loadConfig(['--no-demo'], {});
    let subscribers = 0;
    let countReads = 0;
    const sent: string[] = [];
    const app = {
      numSubscribers: () => {
        countReads++;
        return subscribers;
      },
      publish: (_topic: Uint8Array, message: Uint8Array) => sent.push(decode(message)),
    };
    const out = new StreamOutput(app as never, { config } as never, {} as never);
    const streams = new TradeStreams(out);
    const rec = newTradeRec();
    rec.marketId = config.markets.find((m) => m.symbol === 'SOL_USDC')!.spec.marketId;
    rec.qtyLots = 1;
    streams.onTrade(rec);
    streams.onTrade(rec);
    expect([countReads, sent.length]).toEqual([1, 0]);
    // Subscriptions change between batches (in uWS's callbacks), never during one.
    subscribers = 3;
    out.endBatch();
    const before = nowUs();
    for (let i = 0; i < 2 * EMIT_TIME_MESSAGES; i++) streams.onTrade(rec);
    expect([countReads, sent.length]).toEqual([2, 2 * EMIT_TIME_MESSAGES]);
    const emitTimes = sent.map((message) => (JSON.parse(message) as { data: { E: number } }).data.E);
    expect(emitTimes[0]).toBeGreaterThanOrEqual(before);
    expect(new Set(emitTimes.slice(0, EMIT_TIME_MESSAGES)).size).toBe(1);
    expect(emitTimes[EMIT_TIME_MESSAGES]).toBeGreaterThanOrEqual(emitTimes[0]);
    expect(new Set(emitTimes.slice(EMIT_TIME_MESSAGES)).size).toBe(1);
    // A new batch reads the clock afresh, whatever is left of the last reading.
    streams.onTrade(rec);
    const lastReading = JSON.parse(sent[sent.length - 1]).data.E as number;
    let beforeBatch = nowUs();
    while (beforeBatch <= lastReading) beforeBatch = nowUs();
    out.endBatch();
    streams.onTrade(rec);
    expect(JSON.parse(sent[sent.length - 1]).data.E).toBeGreaterThanOrEqual(beforeBatch);
    expect(countReads).toBe(3);
    expect(sent.length).toBe(2 * EMIT_TIME_MESSAGES + 2);
  });
});
