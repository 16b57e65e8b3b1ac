// The account history of borrow/lend (engine/store/history-account.ts): the engine's BorrowLend
// records, as the journal worker feeds them to the history writer, read back by the front
// threads' reader and rendered in the wire's shapes (src/routes/borrow-lend-history.ts), by value:
// moves one per command, interest one per hour and position, several hours caught up by one
// command kept apart.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BorrowLendEvent, BorrowLendSide, CommandKind, newCommandSlot, type CommandSlot, type RecordSink } from '../../engine/bus/types.js';
import { SLOT_BYTES, commandFromSlot } from '../../engine/bus/codec.js';
import { LmdbJournalStore } from '../../engine/store/journal-store.js';
import { AccountHistoryReader, AccountHistorySink } from '../../engine/store/history-account.js';
import { interestJson, moveJson } from '../../src/routes/borrow-lend-history.js';
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
