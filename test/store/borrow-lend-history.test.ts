// The account history of borrow/lend (engine/store/history-account.ts): the engine's BorrowLend
// records, as the journal worker feeds them to the history writer, read back by the front
// threads' reader and rendered in the wire's shapes (src/routes/borrow-lend-history.ts), by value:
// moves one per command, interest one per hour and position, several hours caught up by one
// command kept apart; the pools' hourly samples (GET /api/v1/borrowLend/markets/history); each
// account's positions, open and closed (GET /wapi/v1/history/borrowLend/positions), also rebuilt
// once from moves stored before the position rows existed.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BorrowLendEvent, BorrowLendSide, CommandKind, newCommandSlot, type CommandSlot, type RecordSink } from '../../engine/bus/types.js';
import { BORROW_LEND_BYTES, SLOT_BYTES, commandFromSlot, newBorrowLendRec, readBorrowLend, writeBorrowLend } from '../../engine/bus/codec.js';
import { LmdbJournalStore } from '../../engine/store/journal-store.js';
import { AccountHistoryReader, AccountHistorySink } from '../../engine/store/history-account.js';
import { interestJson, moveJson, positionHistoryJson } from '../../src/routes/borrow-lend-history.js';
import { poolHistory, poolSampleJson } from '../../src/routes/borrow-lend-market-history.js';
import { loadConfig } from '../../src/config.js';
import type { FrontContext } from '../../src/front/context.js';
import { Exchange } from '../../engine/core/exchange.js';
import { cmd, FRONT } from '../helpers/engine-harness.js';

const HOUR_US = 3_600_000_000;
const T0 = 1_763_900_000_000_000; // an engine time in 2025, in µs
const USDC = 0;

/** Keeps a copy of every record's bytes, as the outbound ring hands them to the journal worker. */
class BytesSink implements RecordSink {
  readonly records: Uint8Array[] = [];
  readonly view = new DataView(new ArrayBuffer(SLOT_BYTES));
  claim(): number {
    return 0;
  }
  written(offset: number): void {
    this.records.push(new Uint8Array(this.view.buffer.slice(offset, offset + SLOT_BYTES)));
  }
}

describe('borrow/lend history', () => {
  const dir = mkdtempSync(join(tmpdir(), 'borrow-lend-history-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps moves and hourly interest and lists them in the wire shapes', async () => {
    const config = loadConfig(['--speed-bump-ms', '0'], {});
    const exchange = new Exchange(config.engine);
    const sink = new BytesSink();
    let seq = 0;
    const apply = (fields: Partial<CommandSlot>, timeUs: number) => exchange.apply(commandFromSlot({ ...newCommandSlot(), frontId: FRONT, requestId: seq + 1, ...fields }), ++seq, timeUs, sink);
    const lend = (accountId: number, side: BorrowLendSide, amountUnits: number) => ({ kind: CommandKind.BorrowLend, accountId, assetId: USDC, side: side as number, amountUnits });
    apply(cmd.createAccount(1), T0);
    apply(cmd.createAccount(2), T0);
    apply(cmd.deposit(1, USDC, 10_000_000_000), T0); // 10 000 USDC
    apply(cmd.deposit(2, USDC, 1_000_000_000), T0);
    apply(cmd.updateAccountSettings(2, { leverageLimitHundredths: 1_000 }), T0); // 10×: the pool's IMF base applies
    apply(lend(1, BorrowLendSide.Lend, 10_000_000_000), T0 + 1);
    apply(lend(2, BorrowLendSide.Borrow, 2_000_000_000), T0 + 2); // u = 0.2
    const firstHour = Math.floor(T0 / HOUR_US) * HOUR_US + HOUR_US;
    apply(cmd.tick(), firstHour + 2 * HOUR_US + 7); // three hours at once
    const store = new LmdbJournalStore(dir);
    const writer = new AccountHistorySink(store.root);
    store.root.transactionSync(() => {
      for (const bytes of sink.records) writer.onRecord(new DataView(bytes.buffer), 0);
    });
    const reader = new AccountHistoryReader(store.root, config.markets.length);
    const page = { limit: 100, offset: 0, descending: false };
    const front = { config } as unknown as FrontContext;
    const moves = reader.borrowLendHistory(2, 'bl', () => true, page);
    expect(moves.map((r) => moveJson(front, r))).toEqual([{
      eventType: 'Borrow', positionId: '7', positionQuantity: '-2000', quantity: '2000', source: 'Manual', symbol: 'USDC',
      timestamp: new Date(Math.floor((T0 + 2) / 1000)).toISOString().slice(0, 23), spotMarginOrderId: null,
    }]);
    // Hour 1: u = 0.2, r = 0.1 × 0.2 / 0.7 → 0.028571428572 (up); 2·10^9 × r / 8760 = 6 523.17… → 6 524
    // owed; the lend rate r × 0.2 → 0.005714285714 (down) earns 10^10 × it / 8760 = 6 523.1… → 6 523.
    // Each hour starts from the totals the last one left, so the rate creeps up with the borrow.
    const paid = reader.borrowLendHistory(2, 'bi', () => true, page).map((r) => interestJson(front, r));
    expect(paid.map((p) => [p.paymentType, p.quantity, p.interestRate, p.positionId, p.interval])).toEqual([
      ['Borrow', '0.006524', '0.028571428572', '7', 3_600_000],
      ['Borrow', '0.006524', '0.028571503135', '7', 3_600_000],
      ['Borrow', '0.006524', '0.028571577697', '7', 3_600_000],
    ]);
    const earned = reader.borrowLendHistory(1, 'bi', () => true, { ...page, descending: true }).map((r) => interestJson(front, r));
    expect(earned.map((p) => [p.paymentType, p.quantity, p.interestRate, p.positionId])).toEqual([
      ['Lend', '0.006523', '0.005714345364', '6'],
      ['Lend', '0.006523', '0.005714315539', '6'],
      ['Lend', '0.006523', '0.005714285714', '6'],
    ]);
    expect(reader.borrowLendHistory(1, 'bl', (r) => r.event === BorrowLendEvent.Borrow, page)).toEqual([]);
    await store.close();
  });
});

describe('borrow/lend positions and pool samples', () => {
  const dir = mkdtempSync(join(tmpdir(), 'borrow-lend-positions-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps each position and each pool hour, and rebuilds the positions of an older history', async () => {
    const config = loadConfig(['--speed-bump-ms', '0'], {});
    const exchange = new Exchange(config.engine);
    const sink = new BytesSink();
    let seq = 0;
    const apply = (fields: Partial<CommandSlot>, timeUs: number) => exchange.apply(commandFromSlot({ ...newCommandSlot(), frontId: FRONT, requestId: seq + 1, ...fields }), ++seq, timeUs, sink);
    const move = (accountId: number, side: BorrowLendSide, amountUnits: number) => ({ kind: CommandKind.BorrowLend, accountId, assetId: USDC, side: side as number, amountUnits });
    for (const account of [1, 2]) apply(cmd.createAccount(account), T0);
    apply(cmd.deposit(1, USDC, 10_000_000_000), T0);
    apply(cmd.deposit(2, USDC, 1_000_000_000), T0);
    apply(cmd.updateAccountSettings(2, { leverageLimitHundredths: 1_000 }), T0);
    apply(move(1, BorrowLendSide.Lend, 10_000_000_000), T0 + 1);
    apply(move(2, BorrowLendSide.Borrow, 2_000_000_000), T0 + 2);
    const firstHour = Math.floor(T0 / HOUR_US) * HOUR_US + HOUR_US;
    apply(cmd.tick(), firstHour + 2 * HOUR_US + 7);
    // Three hours of 0.006524 owed: repaying 2000.019572 closes the borrow.
    apply(move(2, BorrowLendSide.Lend, 2_000_019_572), firstHour + 3 * HOUR_US - 1);
    const store = new LmdbJournalStore(dir);
    const writer = new AccountHistorySink(store.root);
    store.root.transactionSync(() => {
      for (const bytes of sink.records) writer.onRecord(new DataView(bytes.buffer), 0);
    });
    const reader = new AccountHistoryReader(store.root, config.markets.length);
    const front = { config, accountHistory: reader } as unknown as FrontContext;
    const page = { limit: 100, offset: 0, descending: false };
    const positions = (accountId: number) => reader.borrowLendPositions(accountId, () => true, page).map((p) => positionHistoryJson(front, p));
    // The borrow: three hours at 0.028571428572, 0.028571503135 and 0.028571577697 average 0.028571503134 (rounded down).
    const closedBorrow = {
      positionId: '7', quantity: '0', symbol: 'USDC', cumulativeInterest: '-0.019572', avgInterestRate: '0.028571503134',
      createdAt: new Date(Math.floor((T0 + 2) / 1000)).toISOString().slice(0, 23), source: 'Manual', side: 'Borrow',
    };
    expect(positions(2)).toEqual([closedBorrow]);
    expect(positions(1)).toEqual([{
      positionId: '6', quantity: '10000.019569', symbol: 'USDC', cumulativeInterest: '0.019569', avgInterestRate: '0.005714315539',
      createdAt: new Date(Math.floor((T0 + 1) / 1000)).toISOString().slice(0, 23), source: 'Manual', side: 'Lend',
    }]);
    expect(reader.borrowLendPositions(2, (p) => p.closedUs === null, page)).toEqual([]);
    // The closing repay names the position it closed.
    const moves = reader.borrowLendHistory(2, 'bl', () => true, page).map((r) => moveJson(front, r));
    expect(moves.map((m) => [m.eventType, m.positionId, m.positionQuantity, m.quantity])).toEqual([['Borrow', '7', '-2000', '2000'], ['BorrowRepay', '7', '0', '2000.019572']]);
    // The USDC pool after each hour: the rates it charges in the next (the interest history's hours 2 and 3), totals and utilization.
    const samples = poolHistory(front, [USDC], 0, Number.MAX_SAFE_INTEGER).map((r) => poolSampleJson(front, r));
    expect(samples.map((x) => x.timestamp)).toEqual([0, 1, 2].map((h) => new Date((firstHour + h * HOUR_US) / 1000).toISOString()));
    expect(samples.slice(0, 2)).toEqual([
      { borrowInterestRate: '0.028571503135', borrowedQuantity: '2000.006524', lendInterestRate: '0.005714315539', lentQuantity: '10000.006523', symbol: 'USDC', timestamp: samples[0].timestamp, utilization: '0.200000521939' },
      { borrowInterestRate: '0.028571577697', borrowedQuantity: '2000.013048', lendInterestRate: '0.005714345364', lentQuantity: '10000.013046', symbol: 'USDC', timestamp: samples[1].timestamp, utilization: '0.200001043878' },
    ]);
    expect(samples[2]).toMatchObject({ borrowedQuantity: '2000.019572', lentQuantity: '10000.019569', utilization: '0.200001565816' });
    // Every pool is sampled each hour; the others stand empty.
    const all = poolHistory(front, config.margin.lendPools.map((l) => l.spec.assetId), firstHour, firstHour);
    expect(all.map((r) => [config.assets[r.assetId].symbol, r.lentUnits, r.borrowedUnits])).toEqual([['USDC', 10_000_006_523, 2_000_006_524], ['SOL', 0, 0], ['BTC', 0, 0], ['ETH', 0, 0]]);

    // The stored row, as its text stays from now on (BorrowLendPositionValue).
    const db = store.root.openDB<Buffer, Array<string | number>>({ name: 'history-account', encoding: 'binary' });
    expect(db.get(['bp', 2, 7])!.toString()).toBe(`{"positionId":7,"accountId":2,"assetId":0,"side":"Borrow","source":"Manual","openedUs":${T0 + 2},`
      + `"closedUs":${firstHour + 3 * HOUR_US - 1},"quantityUnits":0,"interestUnits":19572,"hours":3,"rateMean":28571503134,"rateRest":2}`);
    // A history written before the position rows: the closing move stored under the old key, without the position's id.
    const closing = newBorrowLendRec();
    store.root.transactionSync(() => {
      for (const { key } of db.getRange({ start: ['bp', 0], end: ['bp', 2 ** 32] })) db.remove(key);
      db.remove(['bp-built']);
      for (const { key, value } of db.getRange({ start: ['bl', 2], end: ['bl', 3] })) {
        readBorrowLend(new DataView(value.buffer, value.byteOffset, value.byteLength), 0, closing);
        if (closing.borrowedUnits !== 0) continue;
        [closing.positionId, closing.interestUnits] = [0, 0];
        const old = Buffer.alloc(BORROW_LEND_BYTES);
        writeBorrowLend(new DataView(old.buffer, old.byteOffset, BORROW_LEND_BYTES), 0, closing);
        db.remove(key);
        db.put(key.slice(0, 4), old);
      }
    });
    expect(reader.borrowLendPositions(2, () => true, page)).toEqual([]);
    new AccountHistorySink(store.root);
    expect(positions(2)).toEqual([closedBorrow]);
    expect(positions(1)[0]).toMatchObject({ positionId: '6', quantity: '10000.019569', avgInterestRate: '0.005714315539' });
    await store.close();
  });
});
