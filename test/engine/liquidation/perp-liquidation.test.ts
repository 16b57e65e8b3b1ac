// Liquidation of perpetual positions (engine/core/liquidation/, margin/liquidating.ts), asserted by
// value on the perpetuals' test configuration (SOL_USDC_PERP: IMF 0.1, MMF 0.05, one lot 10 SOL
// units, one tick × one lot 3 USDC units; 200 ticks = 60 USDC units per SOL unit). The harness
// checks the invariants (Σ positions per perpetual = 0 among them) and exact USDC conservation
// (balances, fee ledger, settlement line, insurance fund) after every command.

import { describe, expect, it } from 'vitest';
import {
  CommandKind, ExpiryReason, OrderEvent, RecordType, ResultCode,
  SystemOrderType, type AccountSettingsRec,
} from '../../../engine/bus/types.js';
import { EngineHarness, QUOTE, cmd, resultOf, type Rec } from '../../helpers/engine-harness.js';
import { PERP, perpConfig } from '../../helpers/perp-harness.js';
import { fundOf, liquidating, longTrader, lotsOf, ordersIn, runSteps, solIndex } from '../../helpers/perp-liquidation-harness.js';

const SECOND_US = 1_000_000;
const flipsIn = (records: Rec[]) => records.filter((r): r is AccountSettingsRec & { type: RecordType.AccountSettings } => r.type === RecordType.AccountSettings);

describe('perpetual liquidation: trigger', () => {
  it('puts a perpetual-only account (no borrow) in the state at the index price where netEquity ≤ Σ N·MMF, cancelling its orders', () => {
    const { h, trader } = longTrader();
    h.apply(cmd.place(trader, 'ask', 240, 10, { market: PERP, postOnly: true, reduceOnly: true }));
    // Equity 6 970 + 1 000 × (p − 60) against MMF 50 × p: above the line at 56, at or below it at 55.
    h.apply(solIndex(56));
    expect(liquidating(h, trader)).toBe(false);
    const pushed = h.apply(solIndex(55));
    expect(flipsIn(pushed).map((r) => [r.accountId, r.settings & 16])).toEqual([[trader, 16]]);
    expect(ordersIn(pushed).filter((r) => r.accountId === trader).map((r) => [r.event, r.expiryReason, r.priceTicks])).toContainEqual([OrderEvent.Cancelled, ExpiryReason.Liquidation, 240]);
    expect(liquidating(h, trader)).toBe(true);
  });

  it('re-checks the holders at a mark sample (the book pulls the mark below an unchanged index), and no one else', () => {
    const { h, trader, maker } = longTrader();
    const bystander = h.createAccount(77);
    h.apply(cmd.deposit(bystander, QUOTE, 100));
    // The index at 56 (equity 2 970 against MMF 2 800): above the line while the mark is the index.
    h.apply(solIndex(56));
    expect(liquidating(h, trader)).toBe(false);
    // A book around 150 ticks (45 USDC units): each second's sample moves the EWMA, so the mark, down.
    h.apply(cmd.place(maker, 'bid', 150, 1, { market: PERP, postOnly: true }));
    h.apply(cmd.place(maker, 'ask', 151, 1, { market: PERP, postOnly: true }));
    const sampled: Rec[] = [];
    for (let i = 0; i < 20 && !liquidating(h, trader); i++) sampled.push(...h.apply(cmd.tick(), h.timeUs + SECOND_US));
    expect(sampled.some((r) => r.type === RecordType.MarkPrice)).toBe(true);
    expect(flipsIn(sampled).map((r) => r.accountId)).toEqual([trader]);
    expect(liquidating(h, bystander)).toBe(false);
  });
});

describe('perpetual liquidation: on the book', () => {
  it('closes a perpetual-only account in reduce-only chunks of 10 % on the book, the 1 % fee to the fund, and lets it go when healthy', () => {
    const { h, trader } = longTrader();
    const bidder = h.createAccount(102);
    h.apply(cmd.deposit(bidder, QUOTE, 10_000_000));
    h.apply(cmd.updateAccountSettings(bidder, { leverageLimitHundredths: 1_000 }));
    h.apply(cmd.place(bidder, 'bid', 183, 100, { market: PERP, postOnly: true }));
    h.apply(solIndex(55));
    expect(liquidating(h, trader)).toBe(true);
    const steps = runSteps(h, trader, 20);
    const system = ordersIn(steps).filter((r) => r.accountId === trader && r.systemOrderType === SystemOrderType.LiquidatePositionOnBook);
    const fills = system.filter((r) => r.event === OrderEvent.Fill);
    // Chunks of ceil(10 % of the size) lots, each a reduce-only ask filled at the bid, until healthy.
    expect(fills.length).toBeGreaterThan(0);
    expect(fills.every((r) => r.side === 1 && r.lastFillPriceTicks === 183 && (r.orderFlags & 66) === 66)).toBe(true);
    expect(fills[0].lastFillQtyLots).toBe(10);
    expect(liquidating(h, trader)).toBe(false);
    const closed = fills.reduce((sum, r) => sum + r.lastFillQtyLots, 0);
    expect(lotsOf(h, trader)).toBe(100 - closed);
    expect(lotsOf(h, bidder)).toBe(closed);
    // Each fill pays 1 % of its notional (183 × lots × 3 USDC units) to the fund beside the 5 bps taker fee.
    const liquidationFees = fills.reduce((sum, r) => sum + Math.floor(r.lastFillQtyLots * 183 * 3 / 100), 0);
    expect(liquidationFees).toBeGreaterThan(200);
    expect(fundOf(h, QUOTE).feesUnits).toBe(liquidationFees);
    expect(fundOf(h, QUOTE).fundUnits).toBe(liquidationFees);
    expect(fills.reduce((sum, r) => sum + r.feeUnits, 0)).toBe(liquidationFees + fills.reduce((sum, r) => sum + Math.floor(r.lastFillQtyLots * 183 * 3 * 5 / 10_000), 0));
  });
});

describe('perpetual liquidation: bankruptcy and auto-deleveraging', () => {
  /**
   * A trader long 100 lots at 200 ticks with 7 000 USDC: 60 lots from a short with 20 000 USDC
   * (high leverage), 40 from one with 10^6 (low leverage); the fund holds 1 000 USDC.
   */
  function bankruptLong(): { h: EngineHarness; trader: number; levered: number; calm: number } {
    const h = new EngineHarness(perpConfig());
    h.apply(solIndex(60));
    const [levered, calm] = [h.createAccount(101), h.createAccount(102)];
    h.apply(cmd.deposit(levered, QUOTE, 20_000));
    h.apply(cmd.deposit(calm, QUOTE, 1_000_000));
    for (const accountId of [levered, calm]) h.apply(cmd.updateAccountSettings(accountId, { leverageLimitHundredths: 1_000 }));
    h.apply(cmd.place(levered, 'ask', 200, 60, { market: PERP, postOnly: true }));
    h.apply(cmd.place(calm, 'ask', 200, 40, { market: PERP, postOnly: true }));
    const trader = h.createAccount(50);
    h.apply(cmd.updateAccountSettings(trader, { leverageLimitHundredths: 1_000 }));
    h.apply(cmd.deposit(trader, QUOTE, 7_000));
    h.apply(cmd.market(trader, 'bid', { qtyLots: 100 }, { market: PERP }));
    expect([lotsOf(h, trader), lotsOf(h, levered), lotsOf(h, calm)]).toEqual([100, -60, -40]);
    expect(resultOf(h.apply({ kind: CommandKind.DepositInsurance, assetId: QUOTE, amountUnits: 1_000 })).code).toBe(ResultCode.Ok);
    return { h, trader, levered, calm };
  }

  it('covers the deficit from the fund, then closes the position against the opposite side at the bankruptcy price, most profitable × levered first', () => {
    const { h, trader, levered, calm } = bankruptLong();
    // SOL at 50: equity 6 970 − 10 000 = −3 030; no bid on the book.
    h.apply(solIndex(50));
    expect(liquidating(h, trader)).toBe(true);
    const step = runSteps(h, trader, 1);
    // The fund pays its 1 000: the deficit left is 2 030, so the long sells at
    // ⌈(100 × 500 + 2 030) / (100 × 3)⌉ = 174 ticks (52.2 USDC units per SOL unit, above the mark 50).
    expect(fundOf(h, QUOTE).coveredUnits).toBe(1_000);
    expect(fundOf(h, QUOTE).fundUnits).toBe(0);
    const adl = ordersIn(step).filter((r) => r.event === OrderEvent.Fill && r.systemOrderType === SystemOrderType.LiquidatePositionOnAdl);
    expect(adl.map((r) => [r.accountId, r.side, r.lastFillQtyLots, r.lastFillPriceTicks, r.feeUnits])).toEqual([
      [levered, 0, 60, 174, 0], [trader, 1, 60, 174, 0], [calm, 0, 40, 174, 0], [trader, 1, 40, 174, 0],
    ]);
    expect([lotsOf(h, trader), lotsOf(h, levered), lotsOf(h, calm)]).toEqual([0, 0, 0]);
    // The trader keeps 7 000 − 30 (fee) + 1 000 (fund) − 26 × 3 × 100 (loss at 174) = 170: no deficit is left.
    expect(h.balance(trader, QUOTE)[0]).toBe(170);
    expect(liquidating(h, trader)).toBe(false);
    expect(step.filter((r) => r.type === RecordType.Trade).map((r) => (r as { priceTicks: number }).priceTicks)).toEqual([174, 174]);
    // Σ positions stays 0 and every USDC unit deposited (the fund's 1 000 included) is still held somewhere.
    expect(lotsOf(h, trader) + lotsOf(h, levered) + lotsOf(h, calm)).toBe(0);
    expect(h.exchange.totalUnits(QUOTE)).toBe(7_000 + 20_000 + 1_000_000 + 1_000);
    // Only the liquidated half of each ADL fill is a message of the public liquidation stream (the maker's is not).
    expect(adl.filter((r) => (r.orderFlags & 8) === 0).map((r) => r.accountId)).toEqual([trader, trader]);
  });

  it('closes a solvent position the book cannot take at the mark (rounded in its favour), and ranks the calm short last', () => {
    const { h, trader, levered, calm } = bankruptLong();
    // SOL at 55.5: equity 6 970 − 4 500 = 2 470 ≤ MMF 2 775, positive; the book has no bid.
    h.apply(solIndex(55.5));
    expect(liquidating(h, trader)).toBe(true);
    const step = runSteps(h, trader, 1);
    const adl = ordersIn(step).filter((r) => r.event === OrderEvent.Fill && r.systemOrderType === SystemOrderType.LiquidatePositionOnAdl && r.accountId !== trader);
    // ⌈100 × 555 / 300⌉ = 185 ticks (55.5): the fund pays nothing.
    expect(adl.map((r) => [r.accountId, r.lastFillQtyLots, r.lastFillPriceTicks])).toEqual([[levered, 60, 185], [calm, 40, 185]]);
    expect(fundOf(h, QUOTE).coveredUnits).toBe(0);
    expect(h.balance(trader, QUOTE)[0]).toBe(7_000 - 30 - 15 * 3 * 100);
  });
});

export { OrderEvent };
