// QueryLiquidationPrice (engine/core/margin/liquidation-price.ts) asserted by value on hand-computed
// accounts: a holder of SOL that borrows USDC is liquidated as SOL falls, a borrower of SOL as it
// rises; the estimate for an assumed borrow equals the one after making it; refusals; and the
// leverage-limit check (leverage-limit.ts) on an account's real exposure.
//
// Prices: SOL has 9 decimals, USDC 6, so p (USDC per SOL ×10^9) is p × 10^6 USDC units per 10^18
// SOL units, and 10 000 SOL units are worth p / 10^8 USDC units.

import { describe, expect, it } from 'vitest';
import { BorrowLendSide, CommandKind, RecordType, ResultCode, type LiquidationPriceRec } from '../../../engine/bus/types.js';
import { BASE, EngineHarness, QUOTE, cmd, resultOf, type Rec } from '../../helpers/engine-harness.js';
import { ONE, borrow, lend, marginConfig } from '../../helpers/margin-harness.js';

/** SOL at 60 000 USDC per SOL (60 USDC units per SOL unit). */
const SOL_AT_60 = 60_000_000_000_000;

const query = (accountId: number, assetId: number, side = BorrowLendSide.Borrow, amountUnits = 0) => (
  { kind: CommandKind.QueryLiquidationPrice, accountId, assetId, side: side as number, amountUnits }
);

/** [mark ×10^9, liquidation price ×10^9, liquidating at the mark, result value]. */
function answer(records: Rec[]): [number, number, boolean, number] {
  const r = records.find((x): x is LiquidationPriceRec & { type: RecordType.LiquidationPrice } => x.type === RecordType.LiquidationPrice)!;
  return [r.markPriceE9, r.liquidationPriceE9, r.liquidatingAtMark, resultOf(records).value];
}

/** A lender of both pools and an account `a` at 10× leverage with 10 000 SOL units and, when `usdc`, 1 000 000 USDC units. */
function setup(usdc: boolean): { h: EngineHarness; a: number } {
  const h = new EngineHarness(marginConfig({ maxUtilization: ONE, fee: 0n }, { maxUtilization: ONE, fee: 0n }));
  const [lender, a] = h.fundedAccounts(2, { [QUOTE]: 1_000_000 });
  h.apply(cmd.deposit(lender, BASE, 1_000_000));
  h.apply(lend(lender, QUOTE, 1_000_000));
  h.apply(lend(lender, BASE, 1_000_000));
  h.apply(cmd.updateAccountSettings(a, { leverageLimitHundredths: 1_000 }));
  h.apply(cmd.setIndexPrice(BASE, SOL_AT_60));
  if (!usdc) h.apply({ kind: CommandKind.Withdraw, accountId: a, assetId: QUOTE, amountUnits: 1_000_000, key: new Uint8Array(32) });
  return { h, a };
}

describe('QueryLiquidationPrice', () => {
  it('a holder of SOL borrowing USDC: the largest SOL price at which equity ≤ Σ N·MMF', () => {
    const { h, a } = setup(false);
    h.apply(cmd.deposit(a, BASE, 10_000));
    expect(resultOf(h.apply(borrow(a, QUOTE, 600_000))).code).toBe(ResultCode.Ok);
    // Equity at p: SOL floor(p / (2 × 10^8)) (weight 0.5) + 600 000 USDC held − 600 000 owed; MMF 0.05 × 600 000 = 30 000.
    // Liquidatable iff floor(p / (2 × 10^8)) ≤ 30 000, i.e. p < 6 000 200 000 000: the largest is 6 000 199 999 999.
    expect(answer(h.apply(query(a, BASE)))).toEqual([SOL_AT_60, 6_000_199_999_999, false, 6_000_199_999_999]);
    // USDC is the valuation asset (always 1): no liquidation price.
    expect(answer(h.apply(query(a, QUOTE)))).toEqual([1_000_000_000, 0, false, 0]);
  });

  it('a borrower of SOL: the smallest price at which it is liquidated, the same before and after the borrow', () => {
    const { h, a } = setup(true);
    // Before borrowing, nothing can liquidate the account.
    expect(answer(h.apply(query(a, BASE)))).toEqual([SOL_AT_60, 0, false, 0]);
    // Assuming a borrow of 10 000 SOL units: L = ceil(p / 10^8) owed, floor(p / (2 × 10^8)) held, MMF ceil(L / 10).
    // At p = 166 666 300 000 001: L = 1 666 664, held 833 331, equity 166 667 ≤ MMF 166 667; one less: equity 166 668 > 166 667.
    const assumed = answer(h.apply(query(a, BASE, BorrowLendSide.Borrow, 10_000)));
    expect(assumed).toEqual([SOL_AT_60, 166_666_300_000_001, false, 166_666_300_000_001]);
    expect(resultOf(h.apply(borrow(a, BASE, 10_000))).code).toBe(ResultCode.Ok);
    expect(answer(h.apply(query(a, BASE)))).toEqual(assumed);
    // Assuming the borrow repaid (a Lend of the whole borrow) there is none again; more than the borrow is refused.
    expect(answer(h.apply(query(a, BASE, BorrowLendSide.Lend, 10_000)))).toEqual([SOL_AT_60, 0, false, 0]);
    expect(resultOf(h.apply(query(a, BASE, BorrowLendSide.Lend, 10_001))).code).toBe(ResultCode.LendRequiresBorrowRepay);
    // Past the price the account is liquidating; the query then answers the mark.
    h.apply(cmd.setIndexPrice(BASE, 170_000_000_000_000));
    expect(answer(h.apply(query(a, BASE)))).toEqual([170_000_000_000_000, 170_000_000_000_000, true, 170_000_000_000_000]);
  });

  it('refuses unknown accounts and assets without a pool, and changes nothing', () => {
    const { h, a } = setup(true);
    const before = h.exchange.stateHash();
    expect(resultOf(h.apply(query(99, BASE))).code).toBe(ResultCode.UnknownAccount);
    expect(resultOf(h.apply(query(a, 77))).code).toBe(ResultCode.LendPoolUnknown);
    expect(resultOf(h.apply(query(a, BASE, 2 as BorrowLendSide))).code).toBe(ResultCode.LendPoolUnknown);
    expect(resultOf(h.apply(query(a, BASE, BorrowLendSide.Borrow, -1))).code).toBe(ResultCode.BorrowLendQuantityInvalid);
    expect(h.exchange.stateHash()).toBe(before);
  });
});

describe('the leverage limit and real exposure', () => {
  it('refuses a limit below TEN / net equity of an account that borrows', () => {
    const { h, a } = setup(false);
    h.apply(cmd.deposit(a, BASE, 10_000));
    h.apply(borrow(a, QUOTE, 600_000));
    // TEN 600 000, net equity 300 000 (10 000 × 60 × 0.5): 2× in use. 1.99× is refused, 2× passes.
    expect(resultOf(h.apply(cmd.updateAccountSettings(a, { leverageLimitHundredths: 199 }))).code).toBe(ResultCode.MaxLeverageReached);
    expect(resultOf(h.apply(cmd.updateAccountSettings(a, { leverageLimitHundredths: 200 }))).code).toBe(ResultCode.Ok);
  });
});
