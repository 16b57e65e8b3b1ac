// The order answer's JSON text (orderJsonText, src/wire/orders.ts) against the object it replaces:
// for every configured market and a seeded spread of order records (limit and market, by base or
// by quote quantity, every flag combination, enum values the wire names and ones it does not, the
// edges of the safe-integer range), the text is exactly JSON.stringify(orderJson(market, rec)).

import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { orderJson, orderJsonText } from '../../src/wire/orders.js';
import { newOrderRec } from '../../engine/bus/codec.js';
import { OrderFlag } from '../../engine/bus/types.js';

const SEED = Number(process.env.SEED ?? 20261127);

function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** A non-negative safe integer of a random digit count (1 to 16), or one of the edges. */
function randomInt(next: () => number): number {
  const edges = [0, 1, 9, 10, 999_999, Number.MAX_SAFE_INTEGER];
  if (next() < 0.1) return edges[Math.floor(next() * edges.length)];
  const digits = 1 + Math.floor(next() * 16);
  return Math.min(Number.MAX_SAFE_INTEGER, Math.floor(next() * 10 ** digits));
}

describe('order answer text', () => {
  it('is JSON.stringify of the REST Order object for every market and a seeded spread of records', () => {
    const next = random(SEED);
    const markets = loadConfig([], {}).markets;
    const flags = [0, OrderFlag.HasClientId, OrderFlag.PostOnly, OrderFlag.ReduceOnly, OrderFlag.HasClientId | OrderFlag.PostOnly | OrderFlag.ReduceOnly];
    let checked = 0;
    for (const market of markets) {
      for (let i = 0; i < 400; i++) {
        const rec = newOrderRec();
        rec.marketId = markets.indexOf(market);
        rec.orderType = Math.floor(next() * 4); // 0..3: the named types and one the wire does not name
        rec.side = Math.floor(next() * 3);
        rec.timeInForce = Math.floor(next() * 5);
        rec.selfTradePrevention = Math.floor(next() * 5);
        rec.status = Math.floor(next() * 8);
        rec.expiryReason = Math.floor(next() * 8);
        rec.orderFlags = flags[Math.floor(next() * flags.length)];
        rec.orderId = randomInt(next);
        rec.clientId = Math.floor(next() * 2 ** 32);
        rec.priceTicks = randomInt(next);
        rec.qtyLots = randomInt(next);
        rec.quoteQtyUnits = next() < 0.5 ? 0 : randomInt(next);
        rec.executedQtyLots = randomInt(next);
        rec.executedQuoteUnits = randomInt(next);
        rec.createdAtUs = randomInt(next);
        expect(orderJsonText(market, rec)).toBe(JSON.stringify(orderJson(market, rec)));
        checked++;
      }
    }
    expect(checked).toBe(markets.length * 400);
  });
});
