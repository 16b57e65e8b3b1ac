// The backstop liquidity providers (engine/core/liquidation/backstop.ts, backstop-admin.ts),
// asserted by value on the perpetuals' test configuration (SOL_USDC_PERP: IMF 0.1, MMF 0.05, one
// lot 10 SOL units, one tick × one lot 3 USDC units; 185 ticks = 55.5 USDC units per SOL unit).
// The harness checks the invariants (Σ positions per perpetual = 0 among them) and exact USDC
// conservation (balances, fee ledger, settlement line, insurance fund) after every command.

import { describe, expect, it } from 'vitest';
import {
  HeaderFlag, OrderEvent, OrderStatus, RecordType, ResultCode, SystemOrderType,
  type BackstopProviderRec, type OrderRec, type TradeRec,
} from '../../../engine/bus/types.js';
import { EngineHarness, QUOTE, cmd, resultOf, type Rec } from '../../helpers/engine-harness.js';
import { Exchange } from '../../../engine/core/exchange.js';
import { exportSnapshot, importSnapshot } from '../../../engine/core/snapshot.js';
import { PERP, perpConfig } from '../../helpers/perp-harness.js';
import { formatTwelveSnapshot } from '../../helpers/snapshot-formats.js';
import { fundOf, liquidating, longTrader, lotsOf, ordersIn, runSteps, solIndex } from '../../helpers/perp-liquidation-harness.js';

const providersIn = (records: Rec[]) => records.filter((r): r is BackstopProviderRec & { type: RecordType.BackstopProvider } => r.type === RecordType.BackstopProvider);
const tradesIn = (records: Rec[]) => records.filter((r): r is TradeRec & { type: RecordType.Trade } => r.type === RecordType.Trade);
const backstopFills = (records: Rec[]) => ordersIn(records).filter((r): r is OrderRec & { type: RecordType.Order } => r.event === OrderEvent.Fill && r.systemOrderType === SystemOrderType.LiquidatePositionOnBackstop);

/** A provider account with `deposit` USDC at 10× leverage, named a provider. */
function provider(h: EngineHarness, seed: number, deposit: number): number {
  const accountId = h.createAccount(seed);
  if (deposit > 0) h.apply(cmd.deposit(accountId, QUOTE, deposit));
  h.apply(cmd.updateAccountSettings(accountId, { leverageLimitHundredths: 1_000 }));
  expect(resultOf(h.apply(cmd.setBackstopProvider(accountId))).code).toBe(ResultCode.Ok);
  return accountId;
}

describe('backstop liquidity providers: the operator\'s list', () => {
  it('sets, lists in ascending account id with ranks, removes, and refuses what would change nothing', () => {
    const h = new EngineHarness(perpConfig());
    const [a, b, c] = [h.createAccount(1), h.createAccount(2), h.createAccount(3)];
    const set = h.apply(cmd.setBackstopProvider(c));
    expect(providersIn(set).map((r) => [r.accountId, r.rank])).toEqual([[c, 1]]);
    expect(resultOf(set)).toMatchObject({ code: ResultCode.Ok, value: 1 });
    h.apply(cmd.setBackstopProvider(a));
    expect(providersIn(h.apply(cmd.queryBackstop())).map((r) => [r.accountId, r.rank])).toEqual([[a, 1], [c, 2]]);
    const hash = h.exchange.stateHash();
    // Refusals: twice, an unknown account, removing one that is not a provider.
    expect(resultOf(h.apply(cmd.setBackstopProvider(c))).code).toBe(ResultCode.BackstopProviderAlreadySet);
    expect(resultOf(h.apply(cmd.setBackstopProvider(99))).code).toBe(ResultCode.UnknownAccount);
    expect(resultOf(h.apply(cmd.setBackstopProvider(0))).code).toBe(ResultCode.UnknownAccount);
    expect(resultOf(h.apply(cmd.removeBackstopProvider(b))).code).toBe(ResultCode.BackstopProviderNotSet);
    expect(h.exchange.stateHash()).toBe(hash);
    // A snapshot round trip keeps the list (and the hash).
    h.restartFromSnapshot();
    expect(h.exchange.stateHash()).toBe(hash);
    const removed = h.apply(cmd.removeBackstopProvider(a));
    expect(providersIn(removed).map((r) => [r.accountId, r.rank])).toEqual([[c, 1]]);
    h.apply(cmd.removeBackstopProvider(c));
    expect(resultOf(h.apply(cmd.queryBackstop()))).toMatchObject({ code: ResultCode.Ok, value: 0 });
  });

  it('reads a format-12 snapshot (before providers) with none, and the same hash', () => {
    const { h } = longTrader();
    const old = formatTwelveSnapshot(h.exchange);
    expect(new DataView(old.buffer, old.byteOffset).getUint32(4, true)).toBe(12);
    const restored = new Exchange(perpConfig());
    importSnapshot(restored, old);
    restored.validateInvariants();
    expect(restored.stateHash()).toBe(h.exchange.stateHash());
    expect(Buffer.from(exportSnapshot(restored)).equals(Buffer.from(exportSnapshot(h.exchange)))).toBe(true);
  });

  it('leaves the state hash of an engine without providers as it was', () => {
    const h = new EngineHarness(perpConfig());
    const a = h.createAccount(1);
    const before = h.exchange.stateHash();
    h.apply(cmd.setBackstopProvider(a));
    expect(h.exchange.stateHash()).not.toBe(before);
    h.apply(cmd.removeBackstopProvider(a));
    expect(h.exchange.stateHash()).toBe(before);
  });
});

describe('backstop liquidity providers: the waterfall', () => {
  it('takes a position too large for the book off the book at mark, the 1 % fee to the fund, with trade ids and the off-book flag', () => {
    const { h, trader, maker } = longTrader();
    // The liquidated account is a provider too: it is passed over.
    expect(resultOf(h.apply(cmd.setBackstopProvider(trader))).code).toBe(ResultCode.Ok);
    const p = provider(h, 201, 1_000_000);
    // SOL at 55.5: equity 6 970 − 4 500 = 2 470 ≤ MMF 2 775, above the Auto-Close MF (2 442 units):
    // the book is tried first, and has no bid.
    h.apply(solIndex(55.5));
    expect(liquidating(h, trader)).toBe(true);
    const step = runSteps(h, trader, 1);
    expect(ordersIn(step).some((r) => r.accountId === trader && r.systemOrderType === SystemOrderType.LiquidatePositionOnBook)).toBe(true);
    const fills = backstopFills(step);
    // ⌈100 × 555 / 300⌉ = 185 ticks; the trader's half pays 1 % of 55 500 = 555, the provider's nothing.
    expect(fills.map((r) => [r.accountId, r.side, r.lastFillQtyLots, r.lastFillPriceTicks, r.feeUnits, (r.orderFlags & 0xc0)])).toEqual([
      [p, 0, 100, 185, 0, 128], [trader, 1, 100, 185, 555, 128],
    ]);
    const trades = tradesIn(step);
    expect(trades.map((t) => [t.tradeId, t.priceTicks, t.qtyLots, t.flags & HeaderFlag.OffBook, t.buyerIsMaker])).toEqual([[2, 185, 100, HeaderFlag.OffBook, true]]);
    expect(fills.every((r) => r.tradeId === 2)).toBe(true);
    expect(ordersIn(step).filter((r) => r.systemOrderType === SystemOrderType.LiquidatePositionOnBackstop && r.event === OrderEvent.None).map((r) => r.status)).toEqual([OrderStatus.Filled, OrderStatus.Filled]);
    expect([lotsOf(h, trader), lotsOf(h, p), lotsOf(h, maker)]).toEqual([0, 100, -100]);
    expect(fundOf(h, QUOTE)).toMatchObject({ feesUnits: 555, fundUnits: 555 });
    expect(h.balance(trader, QUOTE)[0]).toBe(7_000 - 30 - 4_500 - 555);
    expect(liquidating(h, trader)).toBe(false);
  });

  it('skips the book below the Auto-Close MF: every position to the providers at once', () => {
    const { h, trader } = longTrader();
    const bidder = h.createAccount(102);
    h.apply(cmd.deposit(bidder, QUOTE, 10_000_000));
    h.apply(cmd.updateAccountSettings(bidder, { leverageLimitHundredths: 1_000 }));
    h.apply(cmd.place(bidder, 'bid', 183, 100, { market: PERP, postOnly: true }));
    const p = provider(h, 201, 1_000_000);
    // SOL at 55.2: equity 2 170 below max(2 760 / 2, 2 760 − 0.006 × 55 200) = 2 428.8.
    h.apply(solIndex(55.2));
    const step = runSteps(h, trader, 1);
    expect(ordersIn(step).some((r) => r.systemOrderType === SystemOrderType.LiquidatePositionOnBook)).toBe(false);
    expect(backstopFills(step).map((r) => [r.accountId, r.lastFillQtyLots, r.lastFillPriceTicks])).toEqual([[p, 100, 184], [trader, 100, 184]]);
    expect([lotsOf(h, trader), lotsOf(h, p), lotsOf(h, bidder)]).toEqual([0, 100, 0]);
  });

  it('without providers the same account is unwound on the book as before', () => {
    const { h, trader } = longTrader();
    const bidder = h.createAccount(102);
    h.apply(cmd.deposit(bidder, QUOTE, 10_000_000));
    h.apply(cmd.updateAccountSettings(bidder, { leverageLimitHundredths: 1_000 }));
    h.apply(cmd.place(bidder, 'bid', 183, 100, { market: PERP, postOnly: true }));
    h.apply(solIndex(55.2));
    const step = runSteps(h, trader, 1);
    expect(backstopFills(step)).toEqual([]);
    expect(ordersIn(step).some((r) => r.accountId === trader && r.systemOrderType === SystemOrderType.LiquidatePositionOnBook && r.event === OrderEvent.Fill)).toBe(true);
  });

  it('skips a provider at its margin limit, lets the next take what its margin allows, and sends the rest to auto-deleveraging', () => {
    const { h, trader, maker } = longTrader();
    // The first provider's 50 USDC covers no lot (IMF 55.5 a lot); the second's 2 220 exactly 40.
    const full = provider(h, 201, 50);
    const partial = provider(h, 202, 2_220);
    h.apply(solIndex(55.5));
    const step = runSteps(h, trader, 1);
    expect(backstopFills(step).map((r) => [r.accountId, r.lastFillQtyLots, r.lastFillPriceTicks])).toEqual([[partial, 40, 185], [trader, 40, 185]]);
    const adl = ordersIn(step).filter((r) => r.event === OrderEvent.Fill && r.systemOrderType === SystemOrderType.LiquidatePositionOnAdl);
    expect(adl.map((r) => [r.accountId, r.lastFillQtyLots, r.lastFillPriceTicks])).toEqual([[maker, 60, 185], [trader, 60, 185]]);
    expect([lotsOf(h, trader), lotsOf(h, full), lotsOf(h, partial), lotsOf(h, maker)]).toEqual([0, 0, 40, -40]);
    // The fee is the backstop fill's alone: 1 % of 40 × 555.
    expect(fundOf(h, QUOTE).feesUnits).toBe(222);
    expect(h.balance(trader, QUOTE)[0]).toBe(7_000 - 30 - 4_500 - 222);
    // One lot more would have taken the second provider past its initial margin.
    expect(h.exchange.totalUnits(QUOTE)).toBe(7_000 + 10_000_000 + 50 + 2_220);
  });

  it('passes over a provider that is itself liquidating', () => {
    const { h, trader, maker } = longTrader();
    // A provider long 10 lots at 200 ticks with 700 USDC: at 55.5 its equity 700 − 3 − 450 is below its MMF 277.5 too.
    const weak = provider(h, 201, 700);
    h.apply(cmd.place(maker, 'ask', 200, 10, { market: PERP, postOnly: true }));
    h.apply(cmd.market(weak, 'bid', { qtyLots: 10 }, { market: PERP }));
    const strong = provider(h, 202, 1_000_000);
    h.apply(solIndex(55.5));
    expect(liquidating(h, weak)).toBe(true);
    const step = runSteps(h, trader, 1);
    // The strong provider takes the trader's 100 lots, then (the weak account's own step) its 10.
    expect(backstopFills(step).filter((r) => (r.orderFlags & 8) !== 0).map((r) => [r.accountId, r.lastFillQtyLots])).toEqual([[strong, 100], [strong, 10]]);
    expect(backstopFills(step).filter((r) => (r.orderFlags & 8) === 0).map((r) => [r.accountId, r.lastFillQtyLots])).toEqual([[trader, 100], [weak, 10]]);
    expect([lotsOf(h, trader), lotsOf(h, weak), lotsOf(h, strong)]).toEqual([0, 0, 110]);
  });
});
