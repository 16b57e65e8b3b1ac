// Reduce-only perpetual orders (engine/core/perp/reduce-only.ts): expiry when they cannot reduce,
// clipping to the position, margin-free admission, and the resting ones decreased newest first
// (orderModified) or expired at 0 as the position shrinks; a spot market refuses the flag.

import { describe, expect, it } from 'vitest';
import { CommandFlag, ExpiryReason, OrderEvent, OrderStatus, RecordType, ResultCode, TimeInForce } from '../../../engine/bus/types.js';
import { BASE, M0, cmd, EngineHarness, QUOTE, ordersOf, resultOf, type Rec } from '../../helpers/engine-harness.js';
import { PERP, perpConfig } from '../../helpers/perp-harness.js';

const FUNDS = 10_000_000;
const RO = CommandFlag.ReduceOnly;

function setup(): { h: EngineHarness; a: number; b: number } {
  const h = new EngineHarness(perpConfig());
  const [a, b] = h.fundedAccounts(2, { [QUOTE]: FUNDS });
  h.apply(cmd.setIndexPrice(BASE, 150_000 * 1e9)); // 500 ticks
  return { h, a, b };
}

/** A long of `lots` for `a` (b short), at 500 ticks. */
function openLong(h: EngineHarness, a: number, b: number, lots: number): void {
  h.apply(cmd.place(b, 'ask', 500, lots, { market: PERP, postOnly: true }));
  h.apply(cmd.place(a, 'bid', 500, lots, { market: PERP }));
}

function events(records: Rec[], event: OrderEvent) {
  return ordersOf(records).filter((r) => r.event === event);
}

describe('reduce-only perpetual orders', () => {
  it('expire ReduceOnlyNotReduced with no position or on the position side, and are clipped to the position', () => {
    const { h, a, b } = setup();
    const flat = events(h.apply(cmd.place(a, 'ask', 510, 3, { market: PERP, flags: RO })), OrderEvent.Expired);
    expect(flat.map((r) => r.expiryReason)).toEqual([ExpiryReason.ReduceOnlyNotReduced]);
    openLong(h, a, b, 4);
    const sameSide = events(h.apply(cmd.place(a, 'bid', 490, 1, { market: PERP, flags: RO })), OrderEvent.Expired);
    expect(sameSide.map((r) => r.expiryReason)).toEqual([ExpiryReason.ReduceOnlyNotReduced]);
    const clipped = ordersOf(h.apply(cmd.place(a, 'ask', 520, 9, { market: PERP, flags: RO }))).at(-1)!;
    expect([clipped.status, clipped.qtyLots]).toEqual([OrderStatus.New, 4]);
    h.restartFromSnapshot();
  });

  it('pass margin admission although the account could not open the position', () => {
    const { h, a, b } = setup();
    openLong(h, a, b, 4);
    const poor = h.createAccount(9);
    h.apply(cmd.deposit(poor, QUOTE, 2000)); // margin for about one lot
    h.apply(cmd.place(a, 'ask', 500, 3, { market: PERP, postOnly: true }));
    h.apply(cmd.place(poor, 'bid', 500, 1, { market: PERP })); // poor long 1
    const records = h.apply(cmd.place(poor, 'ask', 600, 1, { market: PERP, flags: RO }));
    expect(records.some((r) => r.type === RecordType.Result)).toBe(false);
    expect(ordersOf(records).at(-1)!.status).toBe(OrderStatus.New);
    const plain = h.apply(cmd.place(poor, 'ask', 600, 5, { market: PERP }));
    expect(resultOf(plain).code).toBe(ResultCode.InsufficientMargin);
  });

  it('resting ones shrink newest first as the position shrinks, and expire at 0', () => {
    const { h, a, b } = setup();
    openLong(h, a, b, 6);
    const first = ordersOf(h.apply(cmd.place(a, 'ask', 520, 3, { market: PERP, flags: RO }))).at(-1)!;
    const second = ordersOf(h.apply(cmd.place(a, 'ask', 530, 3, { market: PERP, flags: RO }))).at(-1)!;
    // a sells 2 outside its reduce-only orders: long 4, the newest (second) is decreased to 1
    h.apply(cmd.place(b, 'bid', 500, 2, { market: PERP, postOnly: true }));
    const sold = h.apply(cmd.place(a, 'ask', 500, 2, { market: PERP }));
    const modified = events(sold, OrderEvent.Modified);
    expect(modified.map((r) => [r.orderId, r.qtyLots, r.executedQtyLots])).toEqual([[second.orderId, 1, 0]]);
    // a sells 3 more: long 1, second expires, first decreased to 1
    h.apply(cmd.place(b, 'bid', 500, 3, { market: PERP, postOnly: true }));
    const more = h.apply(cmd.place(a, 'ask', 500, 3, { market: PERP }));
    expect(events(more, OrderEvent.Expired).map((r) => [r.orderId, r.expiryReason])).toEqual([[second.orderId, ExpiryReason.ReduceOnlyNotReduced]]);
    expect(events(more, OrderEvent.Modified).map((r) => [r.orderId, r.qtyLots])).toEqual([[first.orderId, 1]]);
    h.restartFromSnapshot();
    // b buys the last lot from the reduce-only order itself: flat, nothing left open
    const closed = h.apply(cmd.place(b, 'bid', 520, 1, { market: PERP }));
    expect(events(closed, OrderEvent.Fill).map((r) => r.orderId)).toContain(first.orderId);
    const open = h.apply({ kind: 65, accountId: a, marketId: PERP });
    expect(ordersOf(open)).toEqual([]);
  });

  it('a flip by a plain order expires the resting reduce-only orders on the old side', () => {
    const { h, a, b } = setup();
    openLong(h, a, b, 2);
    const ro = ordersOf(h.apply(cmd.place(a, 'ask', 520, 2, { market: PERP, flags: RO }))).at(-1)!;
    h.apply(cmd.place(b, 'bid', 500, 5, { market: PERP, postOnly: true }));
    const flip = h.apply(cmd.place(a, 'ask', 500, 5, { market: PERP })); // long 2 → short 3
    expect(events(flip, OrderEvent.Expired).map((r) => [r.orderId, r.expiryReason])).toEqual([[ro.orderId, ExpiryReason.ReduceOnlyNotReduced]]);
  });

  it('a reduce-only maker fills only what still reduces its position, and a fill-or-kill walk counts it so', () => {
    const { h, a, b } = setup();
    const c = h.createAccount(7);
    h.apply(cmd.deposit(c, QUOTE, FUNDS));
    openLong(h, a, b, 10);
    h.apply(cmd.place(a, 'ask', 510, 5, { market: PERP, postOnly: true }));
    const ro1 = ordersOf(h.apply(cmd.place(a, 'ask', 520, 5, { market: PERP, flags: RO }))).at(-1)!;
    const ro2 = ordersOf(h.apply(cmd.place(a, 'ask', 530, 5, { market: PERP, flags: RO }))).at(-1)!;
    // 15 lots rest, but after the plain 5 only 5 more reduce a's long: the fill-or-kill bid of 15 cannot fill
    const fok = h.apply(cmd.place(c, 'bid', 530, 15, { market: PERP, tif: TimeInForce.FOK }));
    expect(events(fok, OrderEvent.Expired).map((r) => r.expiryReason)).toEqual([ExpiryReason.FillOrKill]);
    // a bid of 15 takes 10: the plain 5 and ro1's 5; ro2 expires where the bid meets it, a flat
    const bid = h.apply(cmd.place(c, 'bid', 530, 15, { market: PERP, tif: TimeInForce.IOC }));
    expect(events(bid, OrderEvent.Fill).filter((r) => r.accountId === c).reduce((sum, r) => sum + r.lastFillQtyLots, 0)).toBe(10);
    expect(events(bid, OrderEvent.Expired).map((r) => [r.orderId, r.expiryReason])).toEqual([
      [ro2.orderId, ExpiryReason.ReduceOnlyNotReduced], [expect.any(Number), ExpiryReason.ImmediateOrCancel],
    ]);
    expect(events(bid, OrderEvent.Fill).map((r) => r.orderId)).toContain(ro1.orderId);
    h.restartFromSnapshot();
  });

  it('a spot market refuses reduce-only', () => {
    const { h, a } = setup();
    expect(resultOf(h.apply(cmd.place(a, 'ask', 500, 1, { market: M0, flags: RO }))).code).toBe(ResultCode.InvalidCommand);
  });
});
