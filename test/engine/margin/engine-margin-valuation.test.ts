// The margin summary (engine/core/margin/valuation.ts) through QueryCollateral, and the
// liquidating state (liquidating.ts), asserted by value: marks from a fresh index, the book's
// guarded reference (not the last trade) and a stale index; haircut weights, lends and borrows in
// the lines; a borrower pushed over by an index price, refused a borrow, a lend and a withdrawal
// (AccountLiquidating), allowed to repay, and cleared by it; its spot orders refused unless they
// trade what it holds for what it owes; values past 2^53 exactly.

import { describe, expect, it } from 'vitest';
import {
  AccountSettingFlag, CommandFlag, CommandKind, FRONT_ID_NONE, RecordType, ResultCode,
  type AccountSettingsRec, type CollateralRec, type EngineConfig, type MarginSummaryRec,
} from '../../../engine/bus/types.js';
import { BASE, EngineHarness, QUOTE, cmd, resultOf, type Rec } from '../../helpers/engine-harness.js';
import { ONE, borrow, lend, marginConfig as sharedMarginConfig } from '../../helpers/margin-harness.js';

const WIDE = 2n ** 53n;

/** The shared margin configuration with both pools allowed to be fully used and no exchange share. */
const marginConfig = (): EngineConfig => sharedMarginConfig({ maxUtilization: ONE, fee: 0n }, { maxUtilization: ONE, fee: 0n });

const collateral = (accountId: number, assetId = QUOTE) => ({ kind: CommandKind.QueryCollateral, accountId, assetId });
const withdraw = (accountId: number, assetId: number, amountUnits: number) => ({ kind: CommandKind.Withdraw, accountId, assetId, amountUnits, key: new Uint8Array(32) });
const codeOf = (records: Rec[]): ResultCode => resultOf(records).code;
const wide = (high: number, low: number): bigint => BigInt(high) * WIDE + BigInt(low);
/** SOL index: 60 000 USDC per whole SOL is 60 USDC units per SOL unit (9 and 6 decimals). */
const SOL_AT_60 = 60_000_000_000_000;

/** [asset, lent, borrowed, source, weight, notional, collateral value, liability] of each line. */
function lines(records: Rec[]): Array<[number, number, number, number, bigint, bigint, bigint, bigint]> {
  return records.filter((r): r is CollateralRec & { type: RecordType.Collateral } => r.type === RecordType.Collateral).map((r) => [
    r.assetId, r.lentUnits, r.borrowedUnits, r.markSource, BigInt(r.weight),
    wide(r.notionalHigh, r.notionalLow), wide(r.collateralValueHigh, r.collateralValueLow), wide(r.liabilityHigh, r.liabilityLow),
  ]);
}

/** [assets, liabilities, net equity, Σ N·IMF, Σ N·MMF, TEN, accountImf, accountMmf, marginFraction | null, liquidating]. */
function summaryOf(records: Rec[]): [bigint, bigint, bigint, bigint, bigint, bigint, number, number, bigint | null, boolean] {
  const r = records.find((x): x is MarginSummaryRec & { type: RecordType.MarginSummary } => x.type === RecordType.MarginSummary)!;
  return [
    wide(r.assetsValueHigh, r.assetsValueLow), wide(r.liabilitiesHigh, r.liabilitiesLow), wide(r.netEquityHigh, r.netEquityLow),
    wide(r.imfUnitsHigh, r.imfUnitsLow), wide(r.mmfUnitsHigh, r.mmfUnitsLow), wide(r.tenHigh, r.tenLow), r.accountImf, r.accountMmf,
    (r.summaryFlags & 1) !== 0 ? wide(r.marginFractionHigh, r.marginFractionLow) : null, (r.summaryFlags & 2) !== 0,
  ];
}

/** The liquidating flags the events of `records` set, in order. */
function flips(records: Rec[]): boolean[] {
  return records.filter((r): r is AccountSettingsRec & { type: RecordType.AccountSettings } => r.type === RecordType.AccountSettings && r.frontId === FRONT_ID_NONE)
    .map((r) => (r.settings & AccountSettingFlag.Liquidating) !== 0);
}

/** M0's guarded reference at `priceTicks`, by one trade between two fresh accounts. */
function tradeSol(h: EngineHarness, priceTicks: number): void {
  const [seller, buyer] = [h.createAccount(100 + priceTicks), h.createAccount(200 + priceTicks)];
  h.apply(cmd.deposit(seller, BASE, 1_000));
  h.apply(cmd.deposit(buyer, QUOTE, 1_000_000));
  h.apply(cmd.place(seller, 'ask', priceTicks, 5, { postOnly: true }));
  h.apply(cmd.place(buyer, 'bid', priceTicks, 5));
}

describe('QueryCollateral: the margin summary', () => {
  it('values at a fresh index, else the book (not the last trade), else a stale index, with weights, lends and borrows', () => {
    const config = marginConfig();
    config.indexMaxAgeUs = 1_000_000;
    const h = new EngineHarness(config);
    const [lender, a] = h.fundedAccounts(2, { [QUOTE]: 100_000 });
    h.apply(cmd.deposit(a, BASE, 1_000));
    h.apply(cmd.updateAccountSettings(a, { leverageLimitHundredths: 1_000 }));
    h.apply(lend(lender, QUOTE, 50_000));
    // No SOL price: SOL counts for nothing; USDC at 1 (source 1).
    expect(lines(h.apply(collateral(a)))).toEqual([[QUOTE, 0, 0, 1, ONE, 100_000n, 100_000n, 0n], [BASE, 0, 0, 0, 0n, 0n, 0n, 0n]]);
    h.apply(cmd.setIndexPrice(BASE, SOL_AT_60));
    expect(codeOf(h.apply(borrow(a, QUOTE, 40_000)))).toBe(ResultCode.Ok);
    expect(codeOf(h.apply(lend(a, BASE, 200)))).toBe(ResultCode.Ok);
    // SOL: 1 000 units (800 held, 200 lent) × 60 = 60 000, weight 0.5: 30 000. USDC: 140 000 held, 40 000 owed.
    const atIndex = h.apply(collateral(a));
    expect(lines(atIndex)).toEqual([[QUOTE, 0, 40_000, 1, ONE, 140_000n, 140_000n, 40_000n], [BASE, 200, 0, 2, ONE / 2n, 60_000n, 30_000n, 0n]]);
    // Equity 130 000; one borrow of 40 000: IMF 0.1 (4 000), MMF 0.05 (2 000); MF 130 000 / 40 000 = 3.25.
    expect(summaryOf(atIndex)).toEqual([170_000n, 40_000n, 130_000n, 4_000n, 2_000n, 40_000n, Number(ONE / 10n), Number(ONE / 20n), (ONE * 13n) / 4n, false]);
    expect(resultOf(atIndex)).toMatchObject({ code: ResultCode.Ok, value: 2 });
    // The index goes stale; a trade at 200 ticks (60 units per SOL unit) sets the book's mark, a print at 240 does not move it.
    tradeSol(h, 200);
    h.apply(cmd.tick(), h.timeUs + 2_000_000);
    tradeSol(h, 240);
    const atBook = h.apply(collateral(a));
    expect(lines(atBook)[1]).toEqual([BASE, 200, 0, 3, ONE / 2n, 60_000n, 30_000n, 0n]);
    // Stale prices block new borrowing, whatever the margin.
    expect(codeOf(h.apply(borrow(a, QUOTE, 1)))).toBe(ResultCode.BorrowNoMarkPrice);
    expect(resultOf(h.apply(collateral(99))).code).toBe(ResultCode.UnknownAccount);
    expect(resultOf(h.apply(collateral(a, BASE))).code).toBe(ResultCode.UnknownAsset);
  });

  it('falls back to the stale index without a book price, and gives values past 2^53 exactly', () => {
    const config = marginConfig();
    config.indexMaxAgeUs = 1_000_000;
    const h = new EngineHarness(config);
    const [whale] = h.fundedAccounts(1, { [BASE]: 2 ** 52 });
    h.apply(cmd.setIndexPrice(BASE, SOL_AT_60));
    h.apply(cmd.tick(), h.timeUs + 2_000_000);
    const [sol] = lines(h.apply(collateral(whale)));
    expect(sol.slice(0, 4)).toEqual([BASE, 0, 0, 4]);
    expect(sol[5]).toBe(BigInt(2 ** 52) * 60n);
    expect(sol[5] > WIDE).toBe(true);
  });
});

describe('the liquidating state', () => {
  it('an index price pushes a borrower over; it may repay but not borrow, lend or withdraw; repaying clears it', () => {
    const h = new EngineHarness(marginConfig());
    const [lender, a, bystander] = h.fundedAccounts(3, { [QUOTE]: 1_000_000 });
    for (const account of [a, bystander]) h.apply(cmd.deposit(account, BASE, 10_000));
    h.apply(cmd.updateAccountSettings(a, { leverageLimitHundredths: 1_000 }));
    h.apply(lend(lender, QUOTE, 1_000_000));
    h.apply(cmd.setIndexPrice(BASE, SOL_AT_60));
    h.apply(withdraw(a, QUOTE, 1_000_000)); // a holds only SOL now: 10 000 × 60 × 0.5 = 300 000 of collateral
    expect(codeOf(h.apply(borrow(a, QUOTE, 600_000)))).toBe(ResultCode.Ok); // IMF 60 000 ≤ 300 000
    expect(summaryOf(h.apply(collateral(a)))[2]).toBe(300_000n);
    // SOL at 5 units: collateral 25 000 ≤ MMF 30 000. The bystander borrows nothing: no event for it.
    const fall = h.apply(cmd.setIndexPrice(BASE, 5_000_000_000_000));
    expect(flips(fall)).toEqual([true]);
    expect(summaryOf(h.apply(collateral(a))).slice(2, 10)).toEqual([25_000n, 60_000n, 30_000n, 600_000n, Number(ONE / 10n), Number(ONE / 20n), ONE / 24n, true]);
    const settings = h.apply(cmd.queryAccountSettings(a)).find((r) => r.type === RecordType.AccountSettings) as AccountSettingsRec;
    expect(settings.settings & AccountSettingFlag.Liquidating).toBe(AccountSettingFlag.Liquidating);
    expect(codeOf(h.apply(borrow(a, QUOTE, 1)))).toBe(ResultCode.AccountLiquidating);
    expect(codeOf(h.apply(lend(a, BASE, 1)))).toBe(ResultCode.AccountLiquidating);
    expect(codeOf(h.apply(withdraw(a, QUOTE, 1)))).toBe(ResultCode.AccountLiquidating);
    // Nor through an order that borrows its shortfall: a bid needing more USDC than the 600 000 it holds.
    const before = h.exchange.stateHash();
    expect(codeOf(h.apply(cmd.place(a, 'bid', 1_000, 1_000, { flags: CommandFlag.AutoBorrow })))).toBe(ResultCode.AccountLiquidating); // holds 3 000 000
    expect(h.exchange.stateHash()).toBe(before);
    expect(resultOf(h.apply({ kind: CommandKind.QueryMaxBorrowQty, accountId: a, assetId: QUOTE })).value).toBe(0);
    // Repaying part leaves the ratio over 100 %: 25 000 vs 0.05 × 580 000 = 29 000.
    const part = h.apply(lend(a, QUOTE, 20_000));
    expect([codeOf(part), flips(part)]).toEqual([ResultCode.Ok, []]);
    // Repaying down to 400 000 (MMF 20 000 < 25 000) clears the state at once.
    const more = h.apply(lend(a, QUOTE, 180_000));
    expect([codeOf(more), flips(more)]).toEqual([ResultCode.Ok, [false]]);
    // Out of the state, a withdrawal meets the margin test again: equity 25 000 < IMF 40 000.
    expect(codeOf(h.apply(withdraw(a, QUOTE, 1)))).toBe(ResultCode.InsufficientMargin);
    expect(flips(h.apply(cmd.setIndexPrice(BASE, SOL_AT_60)))).toEqual([]);
  });

  it('a liquidating account places only orders that trade what it holds for what it owes; cancels stay open', () => {
    const h = new EngineHarness(marginConfig());
    const [lender, a] = h.fundedAccounts(2, { [QUOTE]: 1_000_000 });
    h.apply(cmd.deposit(a, BASE, 10_000));
    h.apply(cmd.updateAccountSettings(a, { leverageLimitHundredths: 1_000 }));
    h.apply(lend(lender, QUOTE, 1_000_000));
    h.apply(cmd.setIndexPrice(BASE, SOL_AT_60));
    h.apply(withdraw(a, QUOTE, 1_000_000));
    h.apply(borrow(a, QUOTE, 600_000));
    // Before the fall a bid of SOL paid with the USDC it holds is an ordinary order.
    expect(resultOf(h.apply({ ...cmd.place(a, 'bid', 1_000, 0), kind: CommandKind.QueryMaxOrderQty })).value).toBe(200); // 600 000 / 3 000
    const early = h.apply(cmd.place(a, 'bid', 500, 1, { postOnly: true }));
    expect(early.some((r) => r.type === RecordType.Result)).toBe(false);
    const restingBid = early.find((r) => r.type === RecordType.Order)!.orderId;
    expect(flips(h.apply(cmd.setIndexPrice(BASE, 5_000_000_000_000)))).toEqual([true]);
    // It borrows USDC, not SOL: a bid receives SOL and adds risk, whatever pays for it. The limits
    // queries agree: no bid, every lot of its SOL as an ask, no withdrawal.
    const maxOrder = (side: 'bid' | 'ask') => resultOf(h.apply({ ...cmd.place(a, side, 1_000, 0), kind: CommandKind.QueryMaxOrderQty })).value;
    const maxWithdrawal = (assetId: number) => resultOf(h.apply({ kind: CommandKind.QueryMaxWithdrawalQty, accountId: a, assetId })).value;
    expect([maxOrder('bid'), maxOrder('ask'), maxWithdrawal(BASE), maxWithdrawal(QUOTE)]).toEqual([0, 1_000, 0, 0]);
    const before = h.exchange.stateHash();
    expect(codeOf(h.apply(cmd.place(a, 'bid', 1_000, 1, { postOnly: true })))).toBe(ResultCode.AccountLiquidating);
    expect(codeOf(h.apply(cmd.place(a, 'bid', 1_000, 1, { flags: CommandFlag.AutoLendRedeem })))).toBe(ResultCode.AccountLiquidating);
    expect(h.exchange.stateHash()).toBe(before);
    // An ask sells SOL it holds for the USDC it owes: accepted, with the exact lock of the SOL.
    const ask = h.apply(cmd.place(a, 'ask', 1_000, 3, { postOnly: true }));
    expect(ask.some((r) => r.type === RecordType.Result)).toBe(false);
    expect(h.balance(a, BASE)).toEqual([10_000 - 30, 30]);
    // Not beyond what it holds: the shortfall of an ask would be a SOL borrow.
    expect(codeOf(h.apply(cmd.place(a, 'ask', 1_000, 1_000, { postOnly: true, flags: CommandFlag.AutoBorrow })))).toBe(ResultCode.AccountLiquidating);
    expect(codeOf(h.apply(cmd.place(a, 'ask', 1_000, 1_000, { postOnly: true })))).toBe(ResultCode.InsufficientFunds);
    // Cancels are always open: the bid placed before, and the ask.
    const askId = ask.find((r) => r.type === RecordType.Order)!.orderId;
    for (const orderId of [restingBid, askId]) h.apply(cmd.cancel(a, orderId));
    expect(h.apply(cmd.queryOpenOrders(a)).filter((r) => r.type === RecordType.Order)).toEqual([]);
    expect(h.balance(a, BASE)).toEqual([10_000, 0]);
  });

  it('each hour of interest re-checks the borrowers', () => {
    const h = new EngineHarness(marginConfig());
    const [lender, a] = h.fundedAccounts(2, { [QUOTE]: 1_000_000 });
    h.apply(cmd.deposit(a, BASE, 10_000));
    h.apply(cmd.updateAccountSettings(a, { leverageLimitHundredths: 1_000 }));
    h.apply(lend(lender, QUOTE, 1_000_000));
    h.apply(cmd.setIndexPrice(BASE, SOL_AT_60));
    h.apply(withdraw(a, QUOTE, 1_000_000));
    h.apply(borrow(a, QUOTE, 600_000));
    // SOL at 6.0002 units: equity 30 001, MMF 30 000: not yet.
    expect(flips(h.apply(cmd.setIndexPrice(BASE, 6_000_200_000_000)))).toEqual([]);
    // An hour at utilization 0.6 adds interest to the borrow: equity falls to the MMF.
    const hour = h.apply(cmd.tick(), 3_600_000_000 * (Math.floor(h.timeUs / 3_600_000_000) + 1));
    expect(flips(hour)).toEqual([true]);
  });
});
