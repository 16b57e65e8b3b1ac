// Collateral conversion (engine/core/liquidation/conversion.ts), by value: an account left owing
// USDC on its perpetual position sells its collateral on the USDC books, lowest weight first, only
// the lots that cover the debt, at the end of the command that left it owing (a fill, or a
// realization at mark that a tick's timer ran); an account with nothing to sell keeps the debt
// until a deposit pays it; with autoBorrowSettlements the borrow covers the debt and nothing is sold. Every command is followed by the harness's invariants and
// conservation checks, and the state survives a snapshot round trip.
//
// Grid (perp-harness): one lot is 10 units of the base, one tick × one lot 3 USDC units. A has
// SOL (weight 0.5) and BTC (weight 0.25 here) and no USDC; a maker bids 20 lots of SOL at 500 and
// 20 lots of BTC at 100 (1500 and 300 USDC units a lot). Spot fees are 0; the perpetual's taker
// fee is 5 bps.
//
//   A opens long 10 @500 (notional 15 000): fee 7, owed → 1 lot of BTC sold for 300, 293 left.
//   A closes 10 @400 (notional 12 000): fee 6 and a loss of 3 000, 287 of it paid → owes 2 713:
//     BTC first, all A has left (9 lots, 2 700), then SOL: 1 lot (1 500) covers the last 13.

import { describe, expect, it } from 'vitest';
import { OrderEvent, OrderFlag, RecordType, ResultCode, Side, SystemOrderType, type OrderRec } from '../../../engine/bus/types.js';
import { BASE, cmd, EngineHarness, M0, M1, OTHER, QUOTE, resultOf, type Rec } from '../../helpers/engine-harness.js';
import { lend, ONE } from '../../helpers/margin-harness.js';
import { PERP, perpConfig } from '../../helpers/perp-harness.js';

const PRICE_E9 = 150_000 * 1e9; // SOL at 500 ticks
const BTC_PRICE_E9 = 3_000 * 1e9; // BTC at 100 ticks (8 decimals: one tick is 30 USDC a whole BTC)

function setup(): { h: EngineHarness; a: number; b: number; maker: number } {
  const config = perpConfig();
  config.margin!.collateral.push({ assetId: OTHER, haircut: { kind: 'identity', weight: ONE / 4n }, imf: { base: ONE / 5n, factor: 0n }, mmf: { base: ONE / 10n, factor: 0n } });
  const h = new EngineHarness(config);
  const a = h.createAccount(1);
  const [b, maker] = [h.createAccount(2), h.createAccount(3)];
  h.apply(cmd.deposit(a, BASE, 1000));
  h.apply(cmd.deposit(a, OTHER, 100));
  h.apply(cmd.deposit(b, QUOTE, 1_000_000));
  h.apply(cmd.deposit(maker, QUOTE, 1_000_000));
  h.apply(cmd.setIndexPrice(BASE, PRICE_E9));
  h.apply(cmd.setIndexPrice(OTHER, BTC_PRICE_E9));
  h.apply(cmd.place(maker, 'bid', 500, 20, { postOnly: true }));
  return { h, a, b, maker };
}

/** The conversion orders' fill events of a command's records: [market, side, lots, price]. */
function conversionFills(records: Rec[]): [number, Side, number, number][] {
  return records
    .filter((r): r is OrderRec & { type: RecordType.Order } => r.type === RecordType.Order && r.event === OrderEvent.Fill && r.systemOrderType === SystemOrderType.CollateralConversion)
    .map((r) => [r.marketId, r.side, r.lastFillQtyLots, r.lastFillPriceTicks]);
}

describe('collateral conversion', () => {
  it('sells the lowest-weight collateral first, only the lots that cover the debt, at the end of the command that left it', () => {
    const { h, a, b, maker } = setup();
    h.apply(cmd.place(maker, 'bid', 100, 20, { market: M1, postOnly: true }));
    h.apply(cmd.place(b, 'ask', 500, 10, { market: PERP, postOnly: true }));
    const open = h.apply(cmd.place(a, 'bid', 500, 10, { market: PERP }));
    expect(conversionFills(open)).toEqual([[M1, Side.Ask, 1, 100]]);
    expect([h.balance(a, QUOTE), h.balance(a, OTHER), h.balance(a, BASE)]).toEqual([[293, 0], [90, 0], [1000, 0]]);
    // The conversion order: a market IOC ask of the account, Liquidation | Adl on a spot book, filled.
    const order = open.find((r): r is OrderRec & { type: RecordType.Order } => r.type === RecordType.Order && r.event === OrderEvent.Accepted && r.systemOrderType === SystemOrderType.CollateralConversion)!;
    expect(order).toMatchObject({ accountId: a, marketId: M1, side: Side.Ask, qtyLots: 1, orderFlags: OrderFlag.Liquidation | OrderFlag.Adl });
    // It comes after the perpetual fill that left the debt.
    const perpFill = open.findIndex((r) => r.type === RecordType.Order && r.event === OrderEvent.Fill && r.marketId === PERP);
    expect(open.indexOf(order)).toBeGreaterThan(perpFill);
    h.restartFromSnapshot();

    h.apply(cmd.place(b, 'bid', 400, 10, { market: PERP, postOnly: true }));
    const close = h.apply(cmd.place(a, 'ask', 400, 10, { market: PERP }));
    expect(conversionFills(close)).toEqual([[M1, Side.Ask, 9, 100], [M0, Side.Ask, 1, 500]]);
    expect([h.balance(a, QUOTE), h.balance(a, OTHER), h.balance(a, BASE)]).toEqual([[1500 - 13, 0], [0, 0], [990, 0]]);
    // The maker bought what was sold; the books keep the rest of its bids.
    expect(h.book(M1).bids).toEqual([[100, 10]]);
    expect(h.book(M0).bids).toEqual([[500, 19]]);
    h.restartFromSnapshot();
  });

  it('passes a book whose best bid is the account\'s own (self-trade prevention would stop the sale there)', () => {
    const { h, a, b, maker } = setup();
    h.apply(cmd.place(maker, 'bid', 100, 20, { market: M1, postOnly: true }));
    // A's own BTC bid above the maker's locks all its USDC.
    h.apply(cmd.deposit(a, QUOTE, 303));
    h.apply(cmd.place(a, 'bid', 101, 1, { market: M1, postOnly: true }));
    h.apply(cmd.place(b, 'ask', 500, 10, { market: PERP, postOnly: true }));
    const open = h.apply(cmd.place(a, 'bid', 500, 10, { market: PERP }));
    expect(conversionFills(open)).toEqual([[M0, Side.Ask, 1, 500]]);
    expect([h.balance(a, QUOTE), h.balance(a, OTHER), h.balance(a, BASE)]).toEqual([[1493, 303], [100, 0], [990, 0]]);
    expect(h.openOrders(a, M1)).toHaveLength(1);
  });

  it('keeps the debt of an account with nothing to sell until a deposit pays it', () => {
    const { h, a, b, maker } = setup();
    h.apply(cmd.cancelAll(maker, M0));
    h.apply(cmd.place(b, 'ask', 500, 10, { market: PERP, postOnly: true }));
    // No bid on either book: nothing is sold, the fee stays owed on the position.
    const open = h.apply(cmd.place(a, 'bid', 500, 10, { market: PERP }));
    expect(conversionFills(open)).toEqual([]);
    expect(open.some((r) => r.type === RecordType.Order && r.systemOrderType === SystemOrderType.CollateralConversion)).toBe(false);
    expect([h.balance(a, QUOTE), h.balance(a, OTHER), h.balance(a, BASE)]).toEqual([[0, 0], [100, 0], [1000, 0]]);
    // Bids arriving later do not sell it by themselves; the debt waits, and a deposit pays it.
    h.apply(cmd.place(maker, 'bid', 500, 20, { postOnly: true }));
    expect(h.balance(a, BASE)).toEqual([1000, 0]);
    h.apply(cmd.deposit(a, QUOTE, 100));
    expect(h.balance(a, QUOTE)).toEqual([93, 0]);
  });

  it('converts in the command whose timer left the debt: a realization at mark run by a tick', () => {
    const config = perpConfig();
    config.realizePnlIntervalUs = 1_000_000;
    const h = new EngineHarness(config);
    const [a, b, maker] = [h.createAccount(1), h.createAccount(2), h.createAccount(3)];
    h.apply(cmd.deposit(a, BASE, 1000));
    h.apply(cmd.deposit(a, QUOTE, 100));
    h.apply(cmd.deposit(b, QUOTE, 1_000_000));
    h.apply(cmd.deposit(maker, QUOTE, 1_000_000));
    h.apply(cmd.setIndexPrice(BASE, PRICE_E9));
    h.apply(cmd.place(maker, 'bid', 500, 20, { postOnly: true }));
    h.apply(cmd.place(b, 'ask', 500, 10, { market: PERP, postOnly: true }));
    expect(conversionFills(h.apply(cmd.place(a, 'bid', 500, 10, { market: PERP })))).toEqual([]);
    expect(h.balance(a, QUOTE)).toEqual([93, 0]);
    // The index falls to 450 ticks; the next realization moves 10 × 3 × (450 − 500) = −1500 into
    // USDC: 93 paid, 1407 owed, and one lot of SOL (1500) covers it in the same command.
    h.apply(cmd.setIndexPrice(BASE, (PRICE_E9 / 500) * 450));
    expect(h.balance(a, BASE)).toEqual([1000, 0]);
    const tick = h.apply(cmd.tick(), h.timeUs + 1_000_000);
    expect(conversionFills(tick)).toEqual([[M0, Side.Ask, 1, 500]]);
    expect([h.balance(a, QUOTE), h.balance(a, BASE)]).toEqual([[1500 - 1407, 0], [990, 0]]);
    h.restartFromSnapshot();
  });

  it('lets the borrow cover the debt of an account with autoBorrowSettlements, and sells nothing', () => {
    const { h, a, b, maker } = setup();
    h.apply(cmd.place(maker, 'bid', 100, 20, { market: M1, postOnly: true }));
    // A lender gives the USDC pool something to lend.
    const lender = h.createAccount(4);
    h.apply(cmd.deposit(lender, QUOTE, 1_000_000));
    expect(resultOf(h.apply(lend(lender, QUOTE, 500_000))).code).toBe(ResultCode.Ok);
    h.apply(cmd.updateAccountSettings(a, { autoBorrowSettlements: true }));
    h.apply(cmd.place(b, 'ask', 500, 10, { market: PERP, postOnly: true }));
    const open = h.apply(cmd.place(a, 'bid', 500, 10, { market: PERP }));
    expect(conversionFills(open)).toEqual([]);
    expect(open.some((r) => r.type === RecordType.BorrowLend && r.accountId === a)).toBe(true);
    expect([h.balance(a, OTHER), h.balance(a, BASE)]).toEqual([[100, 0], [1000, 0]]);
  });
});
