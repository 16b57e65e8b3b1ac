// Fills and orders in the account history keep their order's system order type
// (engine/store/history-account.ts): a fill is stored as its order's record at the fill, and the
// type sits in that record's tail padding. Versions before the type existed left that byte as the
// ring slot's earlier contents, so an old record may hold any value there: the reader believes
// the type only on a record whose flags mark a system order. Asserted through the wire shapes and
// the fillType filter (src/wire/fill-type.ts).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FRONT_ID_NONE, OrderEvent, OrderFlag, OrderStatus, OrderType, Side, SystemOrderType, TimeInForce } from '../../engine/bus/types.js';
import { ORDER_BYTES, SLOT_BYTES, newOrderRec, writeOrder } from '../../engine/bus/codec.js';
import { LmdbJournalStore } from '../../engine/store/journal-store.js';
import { AccountHistoryReader, AccountHistorySink } from '../../engine/store/history-account.js';
import { loadConfig } from '../../src/config.js';
import { parseFillType, type FillFilter } from '../../src/wire/fill-type.js';
import { fillJson, orderHistoryJson } from '../../src/wire/history.js';

const T0 = 1_763_900_000_000_000;
/** OrderRecord.system_order_type: the first byte of the struct's tail padding. */
const SYSTEM_ORDER_TYPE_OFFSET = 132;

/** The bytes of an order's record (its fill event by default), as the engine writes it. */
function orderBytes(orderId: number, timeUs: number, flags: number, systemOrderType: SystemOrderType, event: OrderEvent = OrderEvent.Fill): Uint8Array {
  const view = new DataView(new ArrayBuffer(SLOT_BYTES));
  writeOrder(view, 0, {
    ...newOrderRec(), seq: orderId, timeUs, frontId: FRONT_ID_NONE, orderId, accountId: 1, marketId: 0, feeAssetId: 0,
    qtyLots: 100, executedQtyLots: 100, lastFillQtyLots: 100, lastFillPriceTicks: 15_000, tradeId: orderId, feeUnits: 5, createdAtUs: timeUs,
    event, side: Side.Ask, orderType: OrderType.Market, timeInForce: TimeInForce.IOC, status: OrderStatus.Filled,
    orderFlags: flags, systemOrderType,
  });
  return new Uint8Array(view.buffer, 0, ORDER_BYTES);
}

describe('system order types in the stored account history', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fill-history-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a liquidation fill as one, and an older client fill with a stray padding byte as a client\'s', async () => {
    const config = loadConfig(['--no-demo'], {});
    // An older version's record: a client's fill whose padding kept a byte of the slot's earlier record.
    // Each order's accepted event (it writes the order's index entry), then its fill.
    const old = [orderBytes(1, T0, 0, SystemOrderType.None, OrderEvent.Accepted), orderBytes(1, T0, 0, SystemOrderType.None)];
    for (const bytes of old) bytes[SYSTEM_ORDER_TYPE_OFFSET] = SystemOrderType.LiquidatePositionOnBook;
    const liquidation = [
      orderBytes(2, T0 + 1, OrderFlag.Liquidation, SystemOrderType.LiquidatePositionOnBook, OrderEvent.Accepted),
      orderBytes(2, T0 + 1, OrderFlag.Liquidation, SystemOrderType.LiquidatePositionOnBook),
    ];
    const store = new LmdbJournalStore(dir);
    const writer = new AccountHistorySink(store.root);
    store.root.transactionSync(() => {
      for (const bytes of [...old, ...liquidation]) writer.onRecord(new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), 0);
    });
    const reader = new AccountHistoryReader(store.root, config.markets.length);
    const page = { limit: 100, offset: 0, descending: false };
    const fills = reader.fills(1, {}, { fromUs: 0, toUs: T0 + 1_000 }, page);
    expect(fills.map((rec) => fillJson(config, rec)).map((f) => [f.orderId, f.systemOrderType])).toEqual([['1', null], ['2', 'LiquidatePositionOnBook']]);
    const orders = reader.orders(1, {}, page).map((rec) => orderHistoryJson(config.markets[rec.marketId], rec));
    expect(orders.map((o) => [o.id, o.systemOrderType])).toEqual([['1', null], ['2', 'LiquidatePositionOnBook']]);
    const only = (name: string) => ({ keep: parseFillType(config, new URLSearchParams({ fillType: name })) as FillFilter });
    const range = { fromUs: 0, toUs: T0 + 1_000 };
    expect(reader.fills(1, only('User'), range, page).map((r) => r.orderId)).toEqual([1]);
    expect(reader.fills(1, only('BookLiquidation'), range, page).map((r) => r.orderId)).toEqual([2]);
    expect(reader.fills(1, { ...only('Liquidation'), orderId: 1 }, range, page)).toEqual([]);
    expect(reader.fills(1, { ...only('Liquidation'), orderId: 2 }, range, page).map((r) => r.orderId)).toEqual([2]);
    expect(reader.fills(1, { ...only('User'), marketId: 0 }, range, { ...page, offset: 1 })).toEqual([]);
    await store.close();
  });
});
