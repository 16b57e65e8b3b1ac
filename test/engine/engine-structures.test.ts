// The engine core's building blocks on their own: the order-id permutation, the order-id hash
// table (against a Map, through clusters and wrap-around), the order pool's slot layout, a book side's sorted levels, the
// account key table, the split of a wide value into a record's two fields, and the configuration
// checks that keep every product a safe integer.
import { describe, expect, it } from 'vitest';
import { Accounts } from '../../engine/core/funds/accounts.js';
import { BookSide, NO_LEVEL } from '../../engine/core/book/book.js';
import { LADDER_MAX_TICKS } from '../../engine/core/book/levels.js';
import { Exchange } from '../../engine/core/exchange.js';
import { ORDER_ID_SPAN, permuteOrderNumber, unpermuteOrderId } from '../../engine/core/ids.js';
import { widePair } from '../../engine/core/output.js';
import { mixId } from '../../engine/core/hashing.js';
import { SnapshotReader, SnapshotWriter, StateDigest } from '../../engine/core/parts.js';
import { hashBig, hashWide, readBig, writeBig, writeWide } from '../../engine/core/perp/positions.js';
import { OrderIndex } from '../../engine/core/book/orderIndex.js';
import { MAX_ORDER_SLOTS, NO_SLOT, Of, OrderPool } from '../../engine/core/book/orders.js';
import type { PriceTicks } from '../../engine/core/units.js';
import { Side } from '../../engine/bus/types.js';
import { keyOf, prng, randomInt, testConfig } from '../helpers/engine-harness.js';

describe('order ids', () => {
  const KEY = 0x2f7d397d;
  it('are a bijection on 52 bits, inverted exactly', () => {
    const random = prng(7);
    const samples = [0, 1, 2, ORDER_ID_SPAN - 1, 2 ** 26, 2 ** 26 - 1];
    for (let i = 0; i < 2000; i++) samples.push(randomInt(random, 0, 2 ** 26 - 1) * 2 ** 26 + randomInt(random, 0, 2 ** 26 - 1));
    for (const n of samples) {
      const id = permuteOrderNumber(n, KEY);
      expect(Number.isSafeInteger(id) && id >= 0 && id < ORDER_ID_SPAN).toBe(true);
      expect(unpermuteOrderId(id, KEY)).toBe(n);
    }
  });

  it('never repeat and do not follow the order number', () => {
    const seen = new Set<number>();
    let increasing = 0;
    let previous = -1;
    for (let n = 1; n <= 50_000; n++) {
      const id = permuteOrderNumber(n, KEY);
      seen.add(id);
      if (id > previous) increasing++;
      previous = id;
    }
    expect(seen.size).toBe(50_000);
    // A monotonic or near-monotonic mapping would leak the order count; a permutation is ~50/50.
    expect(increasing).toBeGreaterThan(20_000);
    expect(increasing).toBeLessThan(30_000);
    expect(permuteOrderNumber(1, KEY)).not.toBe(permuteOrderNumber(1, KEY + 1));
  });

  it('refuse numbers outside 52 bits', () => {
    expect(() => permuteOrderNumber(ORDER_ID_SPAN, KEY)).toThrow(/out of range/);
    expect(() => permuteOrderNumber(-1, KEY)).toThrow(/out of range/);
  });
});

describe('order index', () => {
  it('agrees with a Map through random inserts and removals', () => {
    const index = new OrderIndex(32); // 64 cells: long clusters and wrap-around
    const model = new Map<number, number>();
    const random = prng(3);
    for (let step = 0; step < 20_000; step++) {
      if (model.size < 32 && random() < 0.55) {
        let id = 0;
        while (id === 0 || model.has(id)) id = randomInt(random, 1, 2 ** 52 - 1);
        index.insert(id, step);
        model.set(id, step);
      } else if (model.size > 0) {
        const keys = [...model.keys()];
        const id = keys[randomInt(random, 0, keys.length - 1)];
        index.remove(id);
        model.delete(id);
      }
      if (step % 97 === 0) {
        for (const [id, slot] of model) expect(index.find(id)).toBe(slot);
        expect(index.size).toBe(model.size);
      }
    }
    expect(index.find(12345)).toBe(model.get(12345) ?? NO_SLOT);
  });

  it('answers NO_SLOT for ids no order can have', () => {
    const index = new OrderIndex(4);
    index.insert(5, 1);
    for (const id of [0, -5, 1.5, Number.NaN, 2 ** 60]) expect(index.find(id)).toBe(NO_SLOT);
    expect(index.find(5)).toBe(1);
    expect(() => index.insert(5, 2)).toThrow(/twice/);
  });
});

describe('order pool', () => {
  type View = 'f64' | 'u32' | 'i32' | 'u16' | 'u8';
  // Every field: its view, its element within a slot, the view's shift, and the largest value it holds.
  const FIELDS: [string, View, number, number, number][] = [
    ['orderId', 'f64', Of.orderId, Of.f64, 2 ** 53 - 1], ['priceTicks', 'f64', Of.priceTicks, Of.f64, 2 ** 53 - 1],
    ['qtyLots', 'f64', Of.qtyLots, Of.f64, 2 ** 53 - 1], ['remainingLots', 'f64', Of.remainingLots, Of.f64, 2 ** 53 - 1],
    ['executedLots', 'f64', Of.executedLots, Of.f64, 2 ** 53 - 1], ['executedQuoteUnits', 'f64', Of.executedQuoteUnits, Of.f64, 2 ** 53 - 1],
    ['createdAtUs', 'f64', Of.createdAtUs, Of.f64, 2 ** 53 - 1], ['quoteQtyUnits', 'f64', Of.quoteQtyUnits, Of.f64, 2 ** 53 - 1],
    ['quoteLimitUnits', 'f64', Of.quoteLimitUnits, Of.f64, 2 ** 53 - 1], ['restNumber', 'f64', Of.restNumber, Of.f64, 2 ** 53 - 1],
    ['accountId', 'u32', Of.accountId, Of.w32, 2 ** 32 - 1], ['clientId', 'u32', Of.clientId, Of.w32, 2 ** 32 - 1],
    ['requestId', 'u32', Of.requestId, Of.w32, 2 ** 32 - 1], ['prev', 'i32', Of.prev, Of.w32, 2 ** 31 - 1],
    ['next', 'i32', Of.next, Of.w32, 2 ** 31 - 1], ['level', 'i32', Of.level, Of.w32, 2 ** 31 - 1],
    ['accountPrev', 'i32', Of.accountPrev, Of.w32, 2 ** 31 - 1], ['accountNext', 'i32', Of.accountNext, Of.w32, 2 ** 31 - 1],
    ['frontId', 'u16', Of.frontId, Of.w16, 0xffff], ['marketIndex', 'u16', Of.marketIndex, Of.w16, 0xffff],
    ['side', 'u8', Of.side, Of.w8, 0xff], ['orderType', 'u8', Of.orderType, Of.w8, 0xff], ['timeInForce', 'u8', Of.timeInForce, Of.w8, 0xff],
    ['selfTradePrevention', 'u8', Of.selfTradePrevention, Of.w8, 0xff], ['flags', 'u8', Of.flags, Of.w8, 0xff], ['state', 'u8', Of.state, Of.w8, 0xff],
  ];
  const BYTES: Record<View, number> = { f64: 8, u32: 4, i32: 4, u16: 2, u8: 1 };

  it('gives every field its own bytes inside its slot', () => {
    const taken = new Set<number>();
    for (const [name, view, element, shift] of FIELDS) {
      // A view's shift is its elements per 128-byte slot.
      expect((1 << shift) * BYTES[view], name).toBe(128);
      for (let b = element * BYTES[view]; b < (element + 1) * BYTES[view]; b++) {
        expect(b < 128 && !taken.has(b), `${name} byte ${b}`).toBe(true);
        taken.add(b);
      }
    }
  });

  it('reads back every field of every slot at its extremes, neighbours written alongside', () => {
    const pool = new OrderPool(4, 2);
    const value = (slot: number, i: number, max: number): number => max - slot * 64 - i;
    for (let slot = 0; slot < 4; slot++) {
      FIELDS.forEach(([, view, element, shift, max], i) => { pool[view][slot << shift | element] = view === 'i32' && slot % 2 === 1 ? -value(slot, i, max) : value(slot, i, max); });
    }
    for (let slot = 0; slot < 4; slot++) {
      FIELDS.forEach(([name, view, element, shift, max], i) => {
        expect(pool[view][slot << shift | element], `${name} of slot ${slot}`).toBe(view === 'i32' && slot % 2 === 1 ? -value(slot, i, max) : value(slot, i, max));
      });
    }
  });

  it('starts with every slot out of every queue, the free list in slot order', () => {
    const pool = new OrderPool(3, 2);
    expect([0, 1, 2].map((slot) => [pool.i32[slot << Of.w32 | Of.prev], pool.i32[slot << Of.w32 | Of.next], pool.i32[slot << Of.w32 | Of.level]]))
      .toEqual([[NO_SLOT, 1, NO_SLOT], [NO_SLOT, 2, NO_SLOT], [NO_SLOT, NO_SLOT, NO_SLOT]]);
    expect([pool.open(1), pool.open(2), pool.open(1)]).toEqual([0, 1, 2]);
  });
});

describe('book side', () => {
  // Both level orders: a ladder over 100,000 ticks (four bitmap layers) and, past LADDER_MAX_TICKS,
  // the sorted array; prices drawn from a few clusters and the range's two ends.
  const forms = [
    { form: 'ladder', maxPriceTicks: 100_000 },
    { form: 'sorted array', maxPriceTicks: LADDER_MAX_TICKS + 1 },
  ];
  for (const { form, maxPriceTicks } of forms) {
    for (const side of [Side.Bid, Side.Ask]) {
      it(`${Side[side]}, ${form}: walks levels best first, through inserts and removals`, () => {
        const capacity = 48;
        const bookSide = new BookSide(side, capacity, 1, maxPriceTicks);
        const random = prng(side + 1);
        const centres = [1, 33, 1024, 1057, 32_768, 65_000, 100_000];
        const prices = new Set<number>();
        for (let step = 0; step < 4000; step++) {
          const centre = centres[randomInt(random, 0, centres.length - 1)];
          const price = Math.min(100_000, Math.max(1, centre + randomInt(random, -40, 40)));
          const level = bookSide.find(price as PriceTicks);
          expect(level === NO_LEVEL).toBe(!prices.has(price));
          if (level === NO_LEVEL && prices.size < capacity) {
            bookSide.insert(price as PriceTicks);
            prices.add(price);
          } else if (level !== NO_LEVEL) {
            bookSide.remove(level);
            prices.delete(price);
          }
          const expected = [...prices].sort((a, b) => (side === Side.Bid ? b - a : a - b));
          const ranked: number[] = [];
          for (let at = bookSide.best(); at !== NO_LEVEL; at = bookSide.worse(at)) ranked.push(bookSide.levelPrice[at]);
          expect(ranked).toEqual(expected);
          expect(bookSide.count).toBe(prices.size);
        }
        expect(() => {
          for (let price = 1; bookSide.count < capacity; price++) if (bookSide.find(price as PriceTicks) === NO_LEVEL) bookSide.insert(price as PriceTicks);
          bookSide.insert(99_999 as PriceTicks);
        }).toThrow(/exhausted/);
      });
    }
  }
});

describe('accounts', () => {
  it('find keys by content, in a table with collisions', () => {
    const accounts = new Accounts(200);
    for (let seed = 1; seed <= 200; seed++) expect(accounts.add(keyOf(seed))).toBe(seed);
    for (let seed = 1; seed <= 200; seed++) expect(accounts.find(keyOf(seed))).toBe(seed);
    expect(accounts.find(keyOf(201))).toBe(0);
    expect(Array.from(accounts.keyOf(17))).toEqual(Array.from(keyOf(17)));
    expect(() => accounts.add(keyOf(201))).toThrow(/capacity/);
  });
});

describe('wide values', () => {
  it('split as high × 2^53 + low with 0 ≤ low < 2^53, for every sign and size, through both ways of computing it', () => {
    const base = 2n ** 53n;
    const random = prng(11);
    const values = [0n, 1n, -1n, base - 1n, base, base + 1n, -base, -base - 1n, -base + 1n, 2n * base, -2n * base, 2n ** 100n, -(2n ** 100n) - 7n, 2n ** 63n - 1n, -(2n ** 63n), 2n ** 32n, -(2n ** 32n), 2n ** 32n - 1n];
    for (let i = 0; i < 2000; i++) {
      const magnitude = BigInt(randomInt(random, 0, 2 ** 30)) * BigInt(randomInt(random, 0, 2 ** 30)) * BigInt(randomInt(random, 1, 2 ** 20));
      values.push(random() < 0.5 ? magnitude : -magnitude);
    }
    for (const value of values) {
      const [high, low] = widePair(value);
      expect(Number.isSafeInteger(high) && Number.isSafeInteger(low) && low >= 0 && BigInt(low) < base).toBe(true);
      expect(BigInt(high) * base + BigInt(low)).toBe(value);
      // A position's wide fields in a snapshot: the same split, read back to the value.
      const w = new SnapshotWriter();
      writeBig(w, value);
      const written = w.finish();
      const pair = new SnapshotReader(written);
      expect([pair.number(), pair.number()]).toEqual([high, low]);
      expect(readBig(new SnapshotReader(written))).toBe(value);
      // In the state hash: the sign, then the magnitude's high and low, as the definition has them.
      const magnitude = value < 0n ? -value : value;
      const hashed = new StateDigest();
      hashBig(hashed, value);
      const expected = new StateDigest();
      for (const n of [value < 0n ? 1 : 0, Number(magnitude / base), Number(magnitude % base)]) expected.number(n);
      const expectedHex = expected.hex();
      expect(hashed.hex()).toBe(expectedHex);
      // The same from a 64-bit column's two words (positions' columns), where the value fits in 64 bits.
      if (value >= -(2n ** 63n) && value < 2n ** 63n) {
        const column = new BigInt64Array([7n, value]);
        const words = new Int32Array(column.buffer);
        const fromWords = new SnapshotWriter();
        writeWide(fromWords, column, words, 1);
        expect(Buffer.from(fromWords.finish()).equals(Buffer.from(written))).toBe(true);
        const hashedWords = new StateDigest();
        hashWide(hashedWords, column, words, 1);
        expect(hashedWords.hex()).toBe(expectedHex);
      }
    }
  });
});

describe('the snapshot writer', () => {
  it('writes the same bytes whatever its first capacity, growing past it, and returns exactly what it wrote', () => {
    const random = prng(31);
    const values = Array.from({ length: 5_000 }, () => randomInt(random, 0, 2 ** 31) * randomInt(random, 0, 2 ** 21));
    const written = [64, 1 << 10, 40_008, 40_008 + 40_008 / 8, 1 << 20].map((capacity) => {
      const w = new SnapshotWriter(capacity);
      w.word(0x31535845);
      for (const value of values) w.number(value);
      const bytes = w.finish();
      expect(bytes.length).toBe(w.length);
      return Buffer.from(bytes);
    });
    expect(written[0].length).toBe(4 + 8 * values.length);
    for (const bytes of written) expect(bytes.equals(written[0])).toBe(true);
    const r = new SnapshotReader(written[2]);
    expect(r.word()).toBe(0x31535845);
    expect(values.every((value) => r.number() === value)).toBe(true);
  });
});

describe('order id mixing', () => {
  it('splits an id into its 32-bit words exactly, as the definition with integer division does', () => {
    const random = prng(12);
    const ids = [0, 1, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1, 2 ** 53 - 1, 2 ** 40 + 12345];
    for (let i = 0; i < 2000; i++) ids.push(randomInt(random, 0, 2 ** 21 - 1) * 2 ** 32 + randomInt(random, 0, 2 ** 32 - 1));
    for (const id of ids) {
      const low = Number(BigInt(id) & 0xffffffffn);
      const high = Number(BigInt(id) >> 32n);
      let x = (low ^ Math.imul(high, 0x9e3779b1)) >>> 0;
      x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
      x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
      expect(mixId(id)).toBe((x ^ (x >>> 16)) >>> 0);
    }
  });
});

describe('configuration checks', () => {
  const base = testConfig();
  const withMarket = (patch: object) => ({ ...base, markets: [{ ...base.markets[0], ...patch }] });
  it.each([
    ['a notional past 2^53', withMarket({ maxPriceTicks: 2 ** 30, maxQtyLots: 2 ** 20, quoteUnitsPerTickLot: 16 })],
    ['a base amount past 2^53', withMarket({ maxQtyLots: 2 ** 40, baseUnitsPerLot: 2 ** 14 })],
    ['a fractional lot size', withMarket({ baseUnitsPerLot: 2.5 })],
    ['min above max', withMarket({ minPriceTicks: 5, maxPriceTicks: 4 })],
    ['an unknown asset', withMarket({ baseAssetId: 40 })],
    ['the same asset on both sides', withMarket({ baseAssetId: 0 })],
    ['a market id of 0xFFFF (means all markets)', withMarket({ marketId: 0xffff })],
    ['a duplicate market id', { ...base, markets: [base.markets[0], base.markets[0]] }],
    ['a duplicate asset id', { ...base, assets: [base.assets[0], base.assets[0], ...base.assets.slice(1)] }],
    ['zero accounts', { ...base, limits: { ...base.limits, maxAccounts: 0 } }],
    ['a negative speed bump', { ...base, speedBumpUs: -1 }],
  ])('refuses %s', (_name, config) => {
    expect(() => new Exchange(config)).toThrow();
  });

  it('refuses more open orders in all than the order pool holds (each slot index must stay a 32-bit integer)', () => {
    const limits = { ...base.limits, maxOrdersPerBook: MAX_ORDER_SLOTS + 1, maxAccounts: 2 ** 10, maxOpenOrdersPerAccount: 2 ** 15 };
    expect(() => new Exchange({ ...base, limits })).toThrow(/engine configuration: at most 16777216 open orders in all/);
    expect(() => new OrderPool(MAX_ORDER_SLOTS + 1, 1)).toThrow(/order pool capacity out of range/);
    // The largest slot's last byte is still a positive 32-bit index.
    expect((MAX_ORDER_SLOTS - 1) << Of.w8 | 127).toBe(MAX_ORDER_SLOTS * 128 - 1);
  });

  it('accepts the largest notional that still fits', () => {
    expect(() => new Exchange(withMarket({ maxPriceTicks: 2 ** 30, maxQtyLots: 2 ** 20, quoteUnitsPerTickLot: 8 - 1 }))).not.toThrow();
  });
});
