// The trade stream's byte encoding (message-writer.ts, streams/trades.ts) against the JSON it
// replaces: for every configured market and a seeded spread of records, including the edges of
// the safe-integer range, zero and sub-unit values, the published bytes are exactly
// JSON.stringify({stream, data}) of the same trade with priceTextFixed and qtyTextFixed.

import { describe, expect, it } from 'vitest';
import { loadConfig, type MarketInfo } from '../../src/config.js';
import { formatDecimalFixed } from '../../src/decimal.js';
import { priceTextFixed, qtyTextFixed } from '../../src/wire/market-codec.js';
import { MessageWriter } from '../../src/front/streams/message-writer.js';
import { TradeStreams } from '../../src/front/streams/trades.js';
import type { StreamOutput } from '../../src/front/streams/family.js';
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

describe('stream message writer', () => {
  it('writes integers and fixed decimals as JSON.stringify and formatDecimalFixed do', () => {
    const next = random(SEED);
    const writer = new MessageWriter(new Uint8Array(0), 8);
    const edges = [0, 1, 9, 10, 99, 100, 101, 999_999, 1_000_000, Number.MAX_SAFE_INTEGER, -1, -10, -Number.MAX_SAFE_INTEGER];
    const values = [...edges, ...Array.from({ length: 2000 }, () => (next() < 0.1 ? -1 : 1) * randomInt(next))];
    for (const value of values) {
      expect(decode(writer.begin().int(value).view()), `int ${value} (SEED=${SEED})`).toBe(JSON.stringify(value));
      expect(decode(writer.begin().intText(value).view())).toBe(JSON.stringify(String(value)));
      for (const scale of [0, 1, 2, 5, 8, 12, 15, 16, 17, 30]) {
        const written = decode(writer.begin().fixedText(value, scale).view());
        expect(written, `fixed ${value} at ${scale} (SEED=${SEED})`).toBe(JSON.stringify(formatDecimalFixed(value, scale)));
      }
    }
  });

  it('keeps its opening in place across messages and when it grows', () => {
    const writer = new MessageWriter(Buffer.from('{"x":'), 8);
    expect(decode(writer.begin().int(7).view())).toBe('{"x":7');
    const long = decode(writer.begin().int(Number.MAX_SAFE_INTEGER).intText(123).fixedText(5, 30).view());
    expect(long).toBe(`{"x":${Number.MAX_SAFE_INTEGER}"123"${JSON.stringify(formatDecimalFixed(5, 30))}`);
    expect(decode(writer.begin().bool(true).view())).toBe('{"x":true');
  });

  it('refuses values outside the safe-integer range, as the JSON formatting did', () => {
    const writer = new MessageWriter();
    expect(() => writer.int(2 ** 53)).toThrow(RangeError);
    expect(() => writer.fixedText(1.5, 2)).toThrow(RangeError);
  });

  it('publishes each trade as the exact bytes of its JSON envelope, once per event', () => {
    const config = loadConfig(['--no-demo'], {});
    const published: Array<{ topic: string; message: string; subscriberCount: number }> = [];
    const out = {
      front: { config },
      subscriberCount: (topic: Uint8Array) => (decode(topic) === 'trade.ETH_USDC' ? 0 : 7),
      publishEncoded: (topic: Uint8Array, message: Uint8Array, subscriberCount: number) =>
        published.push({ topic: decode(topic), message: decode(message), subscriberCount }),
    } as unknown as StreamOutput;
    const streams = new TradeStreams(out);
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
      const topic = `trade.${market.symbol}`;
      expected.push(JSON.stringify({
        stream: topic,
        data: {
          e: 'trade', E, s: market.symbol,
          p: priceTextFixed(market, rec.priceTicks), q: qtyTextFixed(market, rec.qtyLots),
          b: String(rec.buyerOrderId), a: String(rec.sellerOrderId),
          t: rec.tradeId, T: rec.timeUs, m: rec.buyerIsMaker,
        },
      }));
      expect(sent.topic).toBe(topic);
      expect(sent.subscriberCount).toBe(7);
    }
    expect(published.map((p) => p.message), `SEED=${SEED}`).toEqual(expected);
    expect(config.markets.map((m) => m.symbol)).toContain('ETH_USDC');
  });
});
