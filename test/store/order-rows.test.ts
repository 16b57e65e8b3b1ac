// An order's row in the account history (['o', account, orderId], engine/store/history-account.ts)
// is written once per command, with the state the order has when the command's last record
// (HeaderFlag.CommandEnd) passes: the row holds what the last write of the record-by-record rule
// would have left (the last event, or a response that differs from it), and a command that
// accepts and fills a taker writes its row once. Outside a command (no Stamped record before) a
// row is written at once.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { CommandKind, FRONT_ID_NONE, HeaderFlag, OrderEvent, OrderStatus, OrderType, Side, TimeInForce } from '../../engine/bus/types.js';
import { ORDER_BYTES, SLOT_BYTES, newOrderRec, newStampedRec, writeOrder, writeStamped } from '../../engine/bus/codec.js';
import { LmdbJournalStore } from '../../engine/store/journal-store.js';
import { AccountHistoryReader, AccountHistorySink, openHistoryDbs } from '../../engine/store/history-account.js';

const T0 = 1_763_900_000_000_000;
const ACCOUNT = 7;

type Slot = DataView;

function stamped(seq: number): Slot {
  const view = new DataView(new ArrayBuffer(SLOT_BYTES));
  const rec = newStampedRec();
  rec.seq = seq;
  rec.timeUs = T0 + seq;
  rec.command.kind = CommandKind.PlaceOrder;
  rec.command.placeOrder.accountId = ACCOUNT;
  writeStamped(view, 0, rec);
  return view;
}

/** An order record of the command `seq`: an event for everyone, or a response to front 1. */
function order(seq: number, orderId: number, event: OrderEvent, status: OrderStatus, executedLots: number, extra: { frontId?: number; flags?: number } = {}): Slot {
  const view = new DataView(new ArrayBuffer(SLOT_BYTES));
  writeOrder(view, 0, {
    ...newOrderRec(), seq, timeUs: T0 + seq, frontId: extra.frontId ?? FRONT_ID_NONE, flags: extra.flags ?? 0,
    orderId, accountId: ACCOUNT, marketId: 0, qtyLots: 100, priceTicks: 15_000, executedQtyLots: executedLots,
    executedQuoteUnits: executedLots * 15, lastFillQtyLots: event === OrderEvent.Fill ? 50 : 0, lastFillPriceTicks: 15_000,
    tradeId: event === OrderEvent.Fill ? seq * 10 + executedLots : 0, createdAtUs: T0 + 1, event, status,
    side: Side.Bid, orderType: OrderType.Limit, timeInForce: TimeInForce.IOC,
  });
  return view;
}

const RESPONSE = { frontId: 1, flags: HeaderFlag.Last | HeaderFlag.CommandEnd };

function bytesOf(view: Slot): Buffer {
  return Buffer.from(view.buffer, 0, ORDER_BYTES);
}

describe('order rows of the account history', () => {
  const dir = mkdtempSync(join(tmpdir(), 'order-rows-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps each order\'s state at its command\'s end, written once per command', async () => {
    const store = new LmdbJournalStore(dir);
    const sink = new AccountHistorySink(store.root);
    const { history } = openHistoryDbs(store.root);
    // Command 1: a taker accepted, filled in two parts, and answered with the state its last
    // event carries (the response repeats it: the row keeps the event's bytes).
    const lastFill = order(1, 11, OrderEvent.Fill, OrderStatus.Filled, 100);
    const first = [stamped(1), order(1, 11, OrderEvent.Accepted, OrderStatus.New, 0), order(1, 11, OrderEvent.Fill, OrderStatus.PartiallyFilled, 50), lastFill,
      order(1, 11, OrderEvent.None, OrderStatus.Filled, 100, RESPONSE)];
    // Command 2: an IOC taker partially filled, then answered Cancelled (the response differs from
    // the event before it: the row keeps the response's bytes).
    const cancelled = order(2, 12, OrderEvent.None, OrderStatus.Cancelled, 50, RESPONSE);
    const second = [stamped(2), order(2, 12, OrderEvent.Accepted, OrderStatus.New, 0), order(2, 12, OrderEvent.Fill, OrderStatus.PartiallyFilled, 50), cancelled];
    // Every write goes through the store's put (putSync too).
    const proto = Object.getPrototypeOf(history) as { put: (...args: unknown[]) => unknown };
    const puts = vi.spyOn(proto, 'put');
    const seenInCommand: Array<Buffer | undefined> = [];
    store.root.transactionSync(() => {
      for (const view of first) sink.onRecord(view, 0);
      for (const view of second) {
        sink.onRecord(view, 0);
        seenInCommand.push(history.get(['o', ACCOUNT, 12]));
      }
    });
    const rowPuts = puts.mock.calls.filter(([key]) => Array.isArray(key) && key[0] === 'o').map(([key]) => (key as number[])[2]);
    puts.mockRestore();
    expect(rowPuts).toEqual([11, 12]);
    // Within its command the row waits; once the command's last record has passed, it is there.
    expect(seenInCommand.slice(0, 3)).toEqual([undefined, undefined, undefined]);
    expect(seenInCommand[3]).toEqual(bytesOf(cancelled));
    expect(history.get(['o', ACCOUNT, 11])).toEqual(bytesOf(lastFill));
    expect(history.get(['o', ACCOUNT, 12])).toEqual(bytesOf(cancelled));
    const reader = new AccountHistoryReader(store.root, 1);
    const page = { limit: 10, offset: 0, descending: false };
    expect(reader.orders(ACCOUNT, {}, page).map((rec) => [rec.orderId, rec.status, rec.executedQtyLots])).toEqual([[11, OrderStatus.Filled, 100], [12, OrderStatus.Cancelled, 50]]);
    expect(reader.fills(ACCOUNT, {}, { fromUs: 0, toUs: T0 + 10 }, page).map((rec) => [rec.orderId, rec.executedQtyLots])).toEqual([[11, 50], [11, 100], [12, 50]]);
    await store.close();
  });

  it('keeps the row and the open-order index of an order whose answer carries its orderAccepted', async () => {
    const store = new LmdbJournalStore(dir);
    const sink = new AccountHistorySink(store.root);
    const { history } = openHistoryDbs(store.root);
    // A resting order's only record is its answer, flagged as its event too (journal format 5).
    const accepted = order(4, 14, OrderEvent.Accepted, OrderStatus.New, 0, { frontId: 1, flags: HeaderFlag.Last | HeaderFlag.Event | HeaderFlag.CommandEnd });
    store.root.transactionSync(() => {
      for (const view of [stamped(4), accepted]) sink.onRecord(view, 0);
    });
    expect(history.get(['o', ACCOUNT, 14])).toEqual(bytesOf(accepted));
    const reader = new AccountHistoryReader(store.root, 1);
    expect(reader.orders(ACCOUNT, {}, { limit: 10, offset: 0, descending: true }).map((rec) => [rec.orderId, rec.status])[0]).toEqual([14, OrderStatus.New]);
    await store.close();
  });

  it('writes a row at once outside a command', async () => {
    const store = new LmdbJournalStore(dir);
    const sink = new AccountHistorySink(store.root);
    const { history } = openHistoryDbs(store.root);
    const expired = order(3, 13, OrderEvent.Expired, OrderStatus.Expired, 0);
    let seen: Buffer | undefined;
    store.root.transactionSync(() => {
      sink.onRecord(expired, 0);
      seen = history.get(['o', ACCOUNT, 13]);
    });
    expect(seen).toEqual(bytesOf(expired));
    await store.close();
  });
});
