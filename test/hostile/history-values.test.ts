// The LMDB history values are declared in schemas/exchange.fbs and encoded by the generated
// engine/store/generated/values.ts. Data directories written before hold the bytes and JSON text
// of the first hand-written writers, so the generated codec must write exactly those and read them
// back:
// - trades and candles: the generated encoders write the first writers' bytes for random values,
//   and flatc's own layout of TradeValue and CandleValue, read big-endian, is those bytes;
// - the JSON values: the generated text is the first writers' text, old text reads back as the
//   same values (and re-encodes to the same text), and a value of another shape is refused;
// - an LMDB environment filled by the first writers reads through today's readers.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as flatbuffers from 'flatbuffers';
import { open, type RootDatabase } from 'lmdb';
import { afterAll, describe, expect, it } from 'vitest';
import * as G from '../../schemas/generated/exchange/schema.js';
import {
  AccountHistoryReader, openHistoryDbs, type DepositRecord, type DustRecord, type WithdrawalRecord,
} from '../../engine/store/history-account.js';
import {
  CandleResolution, candleKey, decodeCandle, decodeTrade, emptyCandle, encodeCandle, encodeTrade, latestCandle,
  openMarketHistoryDbs, tradeKey, type Candle, type TradeEntry,
} from '../../engine/store/history-market.js';
import {
  HistoryValueError,
} from '../../engine/store/value-primitives.js';
import {
  depositValueJson, dustValueJson, lastPriceValueJson, parseDepositValue, parseDustValue, parseLastPriceValue,
  parseWithdrawalPlace, parseWithdrawalValue, withdrawalIntentFrom, withdrawalIntentJson, withdrawalPlaceJson,
  withdrawalValueJson,
} from '../../engine/store/generated/values.js';
import { prng } from '../helpers/engine-harness.js';

// ---------------------------------------------------------------------------------------------
// The first writers, as they were written by hand before the schema declared the values.

const TWO_32 = 0x1_0000_0000;

function put53(dv: DataView, off: number, value: number): void {
  dv.setUint32(off, Math.floor(value / TWO_32));
  dv.setUint32(off + 4, value >>> 0);
}

function get53(dv: DataView, off: number): number {
  return dv.getUint32(off) * TWO_32 + dv.getUint32(off + 4);
}

function firstEncodeTrade(t: TradeEntry): Buffer {
  const value = Buffer.alloc(48);
  const dv = new DataView(value.buffer, value.byteOffset, 48);
  put53(dv, 0, t.tradeId);
  put53(dv, 8, t.priceTicks);
  put53(dv, 16, t.qtyLots);
  put53(dv, 24, t.timeUs);
  put53(dv, 32, t.seq);
  dv.setUint8(40, t.buyerIsMaker ? 1 : 0);
  return value;
}

function firstDecodeTrade(value: Uint8Array): TradeEntry {
  const dv = new DataView(value.buffer, value.byteOffset, value.byteLength);
  return {
    tradeId: get53(dv, 0), priceTicks: get53(dv, 8), qtyLots: get53(dv, 16), timeUs: get53(dv, 24), seq: get53(dv, 32),
    buyerIsMaker: dv.getUint8(40) !== 0,
  };
}

function firstEncodeCandle(c: Candle): Buffer {
  const value = Buffer.alloc(72);
  const dv = new DataView(value.buffer, value.byteOffset, 72);
  put53(dv, 0, c.openTicks);
  put53(dv, 8, c.highTicks);
  put53(dv, 16, c.lowTicks);
  put53(dv, 24, c.closeTicks);
  dv.setBigUint64(32, c.volumeLots);
  dv.setBigUint64(40, c.quoteTickLots);
  dv.setUint32(48, c.tradeCount);
  put53(dv, 52, Math.floor(c.firstTimeUs / 1000));
  put53(dv, 56, Math.floor(c.lastTimeUs / 1000));
  put53(dv, 64, c.lastSeq);
  return value;
}

function firstDecodeCandle(startS: number, value: Uint8Array): Candle {
  const dv = new DataView(value.buffer, value.byteOffset, value.byteLength);
  return {
    startS, openTicks: get53(dv, 0), highTicks: get53(dv, 8), lowTicks: get53(dv, 16), closeTicks: get53(dv, 24),
    volumeLots: dv.getBigUint64(32), quoteTickLots: dv.getBigUint64(40), tradeCount: dv.getUint32(48),
    firstTimeUs: get53(dv, 52) * 1000, lastTimeUs: get53(dv, 56) * 1000, lastSeq: get53(dv, 64),
  };
}

/** The first writers' JSON: object literals in the order the history sink built them. */
const first = {
  deposit: (d: DepositRecord) => JSON.stringify({ id: d.id, accountId: d.accountId, assetId: d.assetId, amountUnits: d.amountUnits, timeUs: d.timeUs }),
  dust: (d: DustRecord) => JSON.stringify({ id: d.id, accountId: d.accountId, marketId: d.marketId, amountUnits: d.amountUnits, payoutUnits: d.payoutUnits, timeUs: d.timeUs }),
  withdrawal: (w: WithdrawalRecord) => JSON.stringify({
    id: w.id, accountId: w.accountId, assetId: w.assetId, amountUnits: w.amountUnits, timeUs: w.timeUs,
    blockchain: w.blockchain, address: w.address, clientId: w.clientId,
    status: w.status, transactionHash: w.transactionHash, confirmedUs: w.confirmedUs,
  }),
  place: (accountId: number, timeUs: number) => JSON.stringify([accountId, timeUs]),
  lastPrice: (priceTicks: number, tradeId: number, timeUs: number) => JSON.stringify([priceTicks, tradeId, timeUs]),
};

// ---------------------------------------------------------------------------------------------
// Random values (seeded)

const random = prng(0x5eed_4157);
/** A non-negative safe integer, its magnitude spread over every bit length. */
const int53 = (): number => Math.floor(((Math.floor(random() * 2 ** 21) * TWO_32) + Math.floor(random() * TWO_32)) / 2 ** Math.floor(random() * 54));
const u32 = (): number => Math.floor(random() * TWO_32);
const u64 = (): bigint => (BigInt(u32()) << 32n) | BigInt(u32());
const id = (): string => random().toString(36).slice(2, 2 + Math.floor(random() * 10));
const ROUNDS = 2000;

function randomTrade(): TradeEntry {
  return { tradeId: int53(), priceTicks: int53(), qtyLots: int53(), timeUs: int53(), seq: int53(), buyerIsMaker: random() < 0.5 };
}

function randomCandle(): Candle {
  return {
    startS: int53(), openTicks: int53(), highTicks: int53(), lowTicks: int53(), closeTicks: int53(),
    volumeLots: u64(), quoteTickLots: u64(), tradeCount: u32(), firstTimeUs: int53(), lastTimeUs: int53(), lastSeq: int53(),
  };
}

function randomWithdrawal(): WithdrawalRecord {
  const confirmed = random() < 0.5;
  return {
    id: int53(), accountId: u32(), assetId: u32() & 0xffff, amountUnits: int53(), timeUs: int53(),
    blockchain: id(), address: `addr-${id()}"\\\n\u00e9`, clientId: random() < 0.5 ? null : id(),
    status: confirmed ? 'confirmed' : 'pending', transactionHash: confirmed ? id() : null, confirmedUs: confirmed ? int53() : null,
  };
}

// ---------------------------------------------------------------------------------------------
// flatc's layout, read big-endian

/** The [offset, width] of each accessor of a flatc struct class, in declaration order, recorded from its reads. */
function flatcFields(struct: string): Array<[number, number]> {
  const bytes = new Uint8Array(256);
  const fields: Array<[number, number]> = [];
  const bb = new flatbuffers.ByteBuffer(bytes);
  let depth = 0;
  const widths: Record<string, number> = { readInt64: 8, readUint64: 8, readInt32: 4, readUint32: 4, readInt16: 2, readUint16: 2, readInt8: 1, readUint8: 1 };
  for (const [method, width] of Object.entries(widths)) {
    const read = (bb as unknown as Record<string, (at: number) => unknown>)[method].bind(bb);
    // Only the accessor's own read counts: some reads call others (readUint32 reads readInt32).
    (bb as unknown as Record<string, (at: number) => unknown>)[method] = (at: number) => {
      if (depth === 0) fields.push([at, width]);
      depth++;
      try {
        return read(at);
      } finally {
        depth--;
      }
    };
  }
  const cls = (G as unknown as Record<string, new () => { __init(at: number, bb: flatbuffers.ByteBuffer): Record<string, () => unknown> }>)[struct];
  const o = new cls().__init(0, bb);
  for (const name of Object.getOwnPropertyNames(cls.prototype)) {
    if (name !== 'constructor' && name !== '__init' && !name.startsWith('mutate')) o[name]();
  }
  return fields;
}

/** Builds a struct with flatc's createX (little-endian) and turns every field's bytes around. */
function flatcBigEndian(struct: string, args: Array<number | bigint | boolean>): Uint8Array {
  const builder = new flatbuffers.Builder(16);
  const cls = (G as unknown as Record<string, Record<string, (...a: unknown[]) => number> & { sizeOf(): number }>)[struct];
  const end = cls[`create${struct}`](builder, ...args);
  const all = builder.dataBuffer().bytes();
  const bytes = all.slice(all.length - end, all.length - end + cls.sizeOf());
  for (const [at, width] of flatcFields(struct)) bytes.subarray(at, at + width).reverse();
  return bytes;
}

// ---------------------------------------------------------------------------------------------

describe('trade values', () => {
  it('the generated encoder writes the first writer\'s bytes, and reads them back as the first reader did', () => {
    for (let i = 0; i < ROUNDS; i++) {
      const t = randomTrade();
      const old = firstEncodeTrade(t);
      expect(encodeTrade(t)).toEqual(old);
      expect(decodeTrade(old)).toEqual(firstDecodeTrade(old));
      expect(decodeTrade(old)).toEqual(t);
    }
  });

  it('flatc\'s layout of TradeValue, read big-endian, is the first writer\'s bytes', () => {
    expect(G.TradeValue.sizeOf()).toBe(48);
    expect(flatcFields('TradeValue')).toEqual([[0, 8], [8, 8], [16, 8], [24, 8], [32, 8], [40, 1]]);
    for (let i = 0; i < 200; i++) {
      const t = randomTrade();
      const args = [BigInt(t.tradeId), BigInt(t.priceTicks), BigInt(t.qtyLots), BigInt(t.timeUs), BigInt(t.seq), t.buyerIsMaker];
      expect(Buffer.from(flatcBigEndian('TradeValue', args))).toEqual(firstEncodeTrade(t));
    }
  });
});

describe('candle values', () => {
  it('the generated encoder writes the first writer\'s bytes', () => {
    for (let i = 0; i < ROUNDS; i++) {
      const c = randomCandle();
      expect(encodeCandle(c)).toEqual(firstEncodeCandle(c));
    }
  });

  it('reads old bytes as the first reader did, but for the first trade time it only half stores', () => {
    for (let i = 0; i < ROUNDS; i++) {
      const c = randomCandle();
      const old = firstEncodeCandle(c);
      const read = decodeCandle(c.startS, old);
      const { firstTimeUs, ...rest } = firstDecodeCandle(c.startS, old);
      expect({ ...read, firstTimeUs }).toEqual({ ...rest, firstTimeUs });
      // The stored half of the first trade's time, and nothing below it.
      expect(Math.floor(read.firstTimeUs / 1000 / TWO_32)).toBe(Math.floor(Math.floor(c.firstTimeUs / 1000) / TWO_32));
      expect((read.firstTimeUs / 1000) % TWO_32).toBe(0);
      // A candle reloaded after a restart and written again keeps its bytes.
      expect(encodeCandle(read)).toEqual(old);
    }
  });

  it('flatc\'s layout of CandleValue, read big-endian, is the first writer\'s bytes', () => {
    expect(G.CandleValue.sizeOf()).toBe(72);
    expect(flatcFields('CandleValue').map(([at]) => at)).toEqual([0, 8, 16, 24, 32, 40, 48, 52, 56, 64]);
    for (let i = 0; i < 200; i++) {
      const c = randomCandle();
      const firstMs = Math.floor(c.firstTimeUs / 1000);
      const args = [
        BigInt(c.openTicks), BigInt(c.highTicks), BigInt(c.lowTicks), BigInt(c.closeTicks), c.volumeLots, c.quoteTickLots,
        c.tradeCount, Math.floor(firstMs / TWO_32), BigInt(Math.floor(c.lastTimeUs / 1000)), BigInt(c.lastSeq),
      ];
      expect(Buffer.from(flatcBigEndian('CandleValue', args))).toEqual(firstEncodeCandle(c));
    }
  });
});

describe('JSON values', () => {
  it('the generated text is the first writers\' text, and old text reads back to the same value and text', () => {
    for (let i = 0; i < ROUNDS; i++) {
      const deposit: DepositRecord = { id: int53(), accountId: u32(), assetId: u32() & 0xffff, amountUnits: int53(), timeUs: int53() };
      const dust: DustRecord = { id: int53(), accountId: u32(), marketId: u32() & 0xffff, amountUnits: int53(), payoutUnits: int53(), timeUs: int53() };
      const withdrawal = randomWithdrawal();
      const [a, b, c] = [int53(), int53(), int53()];
      expect(depositValueJson(deposit)).toBe(first.deposit(deposit));
      expect(dustValueJson(dust)).toBe(first.dust(dust));
      expect(withdrawalValueJson(withdrawal)).toBe(first.withdrawal(withdrawal));
      expect(withdrawalPlaceJson({ accountId: deposit.accountId, timeUs: a })).toBe(first.place(deposit.accountId, a));
      expect(lastPriceValueJson({ priceTicks: a, tradeId: b, timeUs: c })).toBe(first.lastPrice(a, b, c));
      expect(depositValueJson(parseDepositValue(first.deposit(deposit)))).toBe(first.deposit(deposit));
      expect(dustValueJson(parseDustValue(first.dust(dust)))).toBe(first.dust(dust));
      expect(withdrawalValueJson(parseWithdrawalValue(first.withdrawal(withdrawal)))).toBe(first.withdrawal(withdrawal));
      expect(parseWithdrawalValue(first.withdrawal(withdrawal))).toEqual(withdrawal);
      expect(parseWithdrawalPlace(first.place(deposit.accountId, a))).toEqual({ accountId: deposit.accountId, timeUs: a });
      expect(parseLastPriceValue(first.lastPrice(a, b, c))).toEqual({ priceTicks: a, tradeId: b, timeUs: c });
    }
  });

  it('reads a withdrawal and an intent as the first writers stored them', () => {
    const text = '{"id":42,"accountId":7,"assetId":1,"amountUnits":150000000,"timeUs":1763000000123456,"blockchain":"Solana",'
      + '"address":"9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin","clientId":null,"status":"pending","transactionHash":null,"confirmedUs":null}';
    const w = parseWithdrawalValue(text);
    expect(w.status).toBe('pending');
    expect(w.clientId).toBeNull();
    expect(withdrawalValueJson(w)).toBe(text);
    const intent = { accountId: 7, blockchain: 'Solana', address: w.address, clientId: 'c-1' };
    expect(withdrawalIntentFrom(JSON.parse(JSON.stringify(intent)))).toEqual(intent);
    expect(withdrawalIntentJson(intent)).toBe(JSON.stringify(intent));
  });

  it('refuses a value of another shape, naming the field', () => {
    const good = { id: 1, accountId: 2, assetId: 3, amountUnits: 4, timeUs: 5 };
    const bad: Array<[string, unknown]> = [
      ['DepositValue.amountUnits', { ...good, amountUnits: '4' }],
      ['DepositValue.assetId', { ...good, assetId: 70000 }],
      ['DepositValue.timeUs', { ...good, timeUs: 1.5 }],
      ['DepositValue', { ...good, extra: 1 }],
      ['DepositValue', [1, 2, 3, 4, 5]],
      ['DepositValue.id', { ...good, id: null }],
    ];
    for (const [what, value] of bad) {
      expect(() => parseDepositValue(JSON.stringify(value)), what).toThrow(HistoryValueError);
      expect(() => parseDepositValue(JSON.stringify(value)), what).toThrow(`history value ${what}:`);
    }
    const w = JSON.parse(first.withdrawal(randomWithdrawal())) as Record<string, unknown>;
    expect(() => parseWithdrawalValue(JSON.stringify({ ...w, status: 'lost' }))).toThrow('WithdrawalValue.status');
    expect(() => parseWithdrawalValue(JSON.stringify({ ...w, blockchain: null }))).toThrow('WithdrawalValue.blockchain');
    expect(() => parseLastPriceValue('[1,2]')).toThrow('LastPriceValue');
    expect(() => withdrawalIntentFrom({ accountId: 1, blockchain: 'x', address: 'y' })).toThrow('WithdrawalIntent');
  });
});

describe('a data directory the first writers filled', () => {
  const dir = mkdtempSync(join(tmpdir(), 'history-values-'));
  const root: RootDatabase = open({ path: join(dir, 'journal'), maxDbs: 16 });
  afterAll(async () => {
    await root.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads through today\'s readers', async () => {
    const market = openMarketHistoryDbs(root);
    const { history } = openHistoryDbs(root);
    const trade: TradeEntry = { tradeId: 9, priceTicks: 101_000, qtyLots: 3, timeUs: 1_763_000_000_123_456, seq: 77, buyerIsMaker: true };
    const candle = { ...emptyCandle(1_763_000_000 - (1_763_000_000 % 60)), openTicks: 100_000, highTicks: 101_000, lowTicks: 99_000, closeTicks: 101_000,
      volumeLots: 12n, quoteTickLots: 1_200_000n, tradeCount: 4, firstTimeUs: 1_763_000_000_001_000, lastTimeUs: 1_763_000_000_123_000, lastSeq: 77 };
    const deposit: DepositRecord = { id: 5, accountId: 7, assetId: 1, amountUnits: 10_000, timeUs: 1_763_000_000_000_000 };
    const dust: DustRecord = { id: 6, accountId: 7, marketId: 0, amountUnits: 3, payoutUnits: 2, timeUs: 1_763_000_000_000_100 };
    const withdrawal: WithdrawalRecord = { ...randomWithdrawal(), id: 8, accountId: 7, timeUs: 1_763_000_000_000_200, status: 'pending', transactionHash: null, confirmedUs: null };
    await root.transaction(() => {
      void market.trades.put(tradeKey(0, trade.tradeId), firstEncodeTrade(trade));
      void market.candles.put(candleKey(0, CandleResolution.Minute, candle.startS), firstEncodeCandle(candle));
      void history.put(['d', 7, deposit.timeUs, deposit.id], Buffer.from(first.deposit(deposit)));
      void history.put(['u', 7, dust.timeUs, dust.id], Buffer.from(first.dust(dust)));
      void history.put(['w', 7, withdrawal.timeUs, withdrawal.id], Buffer.from(first.withdrawal(withdrawal)));
      void history.put(['wi', withdrawal.id], Buffer.from(first.place(7, withdrawal.timeUs)));
      void history.put(['wp', withdrawal.id], Buffer.alloc(0));
      void history.put(['lp', 0], Buffer.from(first.lastPrice(101_000, 9, trade.timeUs)));
    });
    expect(decodeTrade(market.trades.get(tradeKey(0, 9))!)).toEqual(trade);
    const stored = latestCandle(market, 0, CandleResolution.Minute)!;
    expect({ ...stored, firstTimeUs: 0 }).toEqual({ ...candle, firstTimeUs: 0 });
    const reader = new AccountHistoryReader(root, 1);
    const page = { limit: 10, offset: 0, descending: false };
    const all = { fromUs: 0, toUs: Number.MAX_SAFE_INTEGER - 1 };
    expect(reader.deposits(7, all, page)).toEqual([deposit]);
    expect(reader.dust(7, {}, page)).toEqual([dust]);
    expect(reader.withdrawals(7, {}, all, page)).toEqual([withdrawal]);
    expect(reader.withdrawals(7, { id: 8 }, all, page)).toEqual([withdrawal]);
    expect(reader.pendingWithdrawals()).toEqual([[8, 7, withdrawal.timeUs]]);
    expect(reader.lastPriceTicks(0)).toBe(101_000);
  });
});
