// Borrow/lend auto-deleveraging (engine/core/liquidation/lend-adl.ts), asserted by value on the
// margin test configuration with a SOL pool that may reach 100 % utilization: a liquidated
// lender of SOL whose pool cannot let its lend go is paid the lend's value at SOL's mark in USDC
// by the largest SOL borrower, whose debt falls by the same units; a borrower short of USDC
// borrows what it lacks; a lend the pool lets go is redeemed and nobody is deleveraged. The
// harness checks the invariants and exact conservation of every asset after every command, and
// the reference model (test/helpers/engine-model.ts) writes the same records for every command.

import { describe, expect, it } from 'vitest';
import { BorrowLendEvent, BorrowLendSource, CommandKind, RecordType, ResultCode, type BorrowLendRec } from '../../../engine/bus/types.js';
import { BASE, EngineHarness, QUOTE, cmd, resultOf, type Rec } from '../../helpers/engine-harness.js';
import { ModelExchange } from '../../helpers/engine-model.js';
import { ONE, borrow, lend, marginConfig } from '../../helpers/margin-harness.js';

const SECOND_US = 1_000_000;
/** SOL's index at `usdcPerUnit` USDC units per SOL unit (10^-9 SOL): ×10^12 in priceE9. */
const solIndex = (usdcPerUnit: number) => cmd.setIndexPrice(BASE, usdcPerUnit * 1_000_000_000_000);
const movesIn = (records: Rec[]) => records.filter((r): r is BorrowLendRec & { type: RecordType.BorrowLend } => r.type === RecordType.BorrowLend);

function liquidating(h: EngineHarness, accountId: number): boolean {
  const rec = h.apply(cmd.queryAccountSettings(accountId)).find((r) => r.type === RecordType.AccountSettings);
  return rec?.type === RecordType.AccountSettings && (rec.settings & 16) !== 0;
}

function position(h: EngineHarness, accountId: number, assetId: number): [number, number] {
  const row = movesIn(h.apply({ kind: CommandKind.QueryBorrowLendPositions, accountId })).find((r) => r.assetId === assetId);
  return row === undefined ? [0, 0] : [row.lentUnits, row.borrowedUnits];
}

/** A new account of key seed `seed` holding `units` of the asset. */
function funded(h: EngineHarness, seed: number, assetId: number, units: number): number {
  const accountId = h.createAccount(seed);
  h.apply(cmd.deposit(accountId, assetId, units));
  return accountId;
}

/**
 * SOL indexed at 60 USDC units per unit, its pool allowed to 100 % utilization; a USDC lender of
 * 10^9; the lender (10× leverage) lends 10 000 SOL units, borrows 250 000 USDC and withdraws
 * 240 000 of them; a second SOL lender of `otherLent`; two SOL borrowers (10× leverage) holding
 * `providerUsdc` USDC each, the larger borrowing `largeBorrow` and the smaller `smallBorrow` SOL units.
 */
function setup(otherLent: number, largeBorrow: number, smallBorrow: number, providerUsdc = 1_000_000) {
  const h = new EngineHarness(marginConfig({}, { maxUtilization: ONE }));
  h.apply(solIndex(60));
  const usdcLender = funded(h, 1, QUOTE, 1_000_000_000);
  expect(resultOf(h.apply(lend(usdcLender, QUOTE, 1_000_000_000))).code).toBe(ResultCode.Ok);
  const [lender, otherLender] = [funded(h, 2, BASE, 50_000), funded(h, 3, BASE, 50_000)];
  h.apply(cmd.updateAccountSettings(lender, { leverageLimitHundredths: 1_000 }));
  expect(resultOf(h.apply(lend(lender, BASE, 10_000))).code).toBe(ResultCode.Ok);
  expect(resultOf(h.apply(lend(otherLender, BASE, otherLent))).code).toBe(ResultCode.Ok);
  expect(resultOf(h.apply(borrow(lender, QUOTE, 250_000))).code).toBe(ResultCode.Ok);
  expect(resultOf(h.apply({ kind: CommandKind.Withdraw, accountId: lender, assetId: QUOTE, amountUnits: 240_000, key: new Uint8Array(32) })).code).toBe(ResultCode.Ok);
  expect(resultOf(h.apply({ kind: CommandKind.Withdraw, accountId: lender, assetId: BASE, amountUnits: 40_000, key: new Uint8Array(32) })).code).toBe(ResultCode.Ok);
  const [small, large] = [funded(h, 4, QUOTE, providerUsdc), funded(h, 5, QUOTE, providerUsdc)];
  for (const provider of [small, large]) h.apply(cmd.updateAccountSettings(provider, { leverageLimitHundredths: 1_000 }));
  expect(resultOf(h.apply(borrow(large, BASE, largeBorrow))).code).toBe(ResultCode.Ok);
  expect(resultOf(h.apply(borrow(small, BASE, smallBorrow))).code).toBe(ResultCode.Ok);
  return { h, lender, otherLender, small, large };
}

/** The reference model, fed the same commands, writes the same records. */
function expectModelAgrees(h: EngineHarness): void {
  const model = new ModelExchange(h.config);
  let index = 0;
  for (const stamped of h.stream) {
    const expected = model.apply(stamped.command, stamped.seq, stamped.timeUs);
    expect(h.log.slice(index, index + expected.length), `seq ${stamped.seq}`).toEqual(expected);
    index += expected.length;
  }
  expect(index).toBe(h.log.length);
}

/** Pushes SOL to 46 (the lender's equity goes negative), then runs the first step; its records. */
function firstStep(h: EngineHarness, lender: number): Rec[] {
  h.apply(solIndex(46));
  expect(liquidating(h, lender)).toBe(true);
  return h.apply(cmd.tick(), h.timeUs + SECOND_US);
}

describe('borrow/lend ADL: a liquidated lender whose pool cannot let its lend go', () => {
  it('is paid the USDC value at mark by the largest borrower, whose debt falls by the same units', () => {
    // 15 000 lent, 15 000 borrowed: 100 % utilization, so no lend can be redeemed.
    const { h, lender, otherLender, small, large } = setup(5_000, 12_000, 3_000);
    expect(resultOf(h.apply(borrow(lender, BASE, 1))).code).toBe(ResultCode.InsufficientSupply);
    const [largeUsdc, lenderUsdc] = [h.balance(large, QUOTE)[0], h.balance(lender, QUOTE)[0]];
    const moves = movesIn(firstStep(h, lender));
    const adl = moves.filter((r) => r.source === BorrowLendSource.LiquidationAdl || r.source === BorrowLendSource.AdlProvider);
    expect(adl.map((r) => [r.accountId, r.assetId, r.event, r.quantityUnits, r.source])).toEqual([
      [large, BASE, BorrowLendEvent.BorrowRepay, 10_000, BorrowLendSource.AdlProvider],
      [lender, BASE, BorrowLendEvent.LendRedeem, 10_000, BorrowLendSource.LiquidationAdl],
    ]);
    // 10 000 SOL units at 46 USDC units each: 460 000 USDC from the borrower to the lender.
    expect(h.balance(large, QUOTE)[0]).toBe(largeUsdc - 460_000);
    expect(position(h, large, BASE)).toEqual([0, 2_000]);
    expect(position(h, small, BASE)).toEqual([0, 3_000]);
    expect(position(h, otherLender, BASE)).toEqual([5_000, 0]);
    // The lender then repays its USDC borrow from the payment and leaves the state.
    expect(position(h, lender, BASE)).toEqual([0, 0]);
    expect(position(h, lender, QUOTE)).toEqual([0, 0]);
    expect(h.balance(lender, QUOTE)[0]).toBe(lenderUsdc + 460_000 - 250_000);
    expect(h.balance(lender, BASE)[0]).toBe(0);
    expect(liquidating(h, lender)).toBe(false);
    expect(liquidating(h, large)).toBe(false);
    expectModelAgrees(h);
  });

  it('goes on to the next borrower, and a borrower short of USDC borrows what it lacks', () => {
    const { h, lender, small, large } = setup(2_000, 8_000, 4_000, 600_000);
    // The larger borrower's bid locks 400 320 USDC, leaving it 199 680 available.
    h.apply(cmd.place(large, 'bid', 160, 834, { postOnly: true }));
    expect(h.balance(large, QUOTE)).toEqual([199_680, 400_320]);
    const moves = movesIn(firstStep(h, lender)).filter((r) => r.source !== BorrowLendSource.Liquidation);
    expect(moves.map((r) => [r.accountId, r.assetId, r.event, r.quantityUnits, r.source])).toEqual([
      // 8 000 units are worth 368 000: the larger borrower lacks 168 320 and borrows them.
      [large, QUOTE, BorrowLendEvent.Borrow, 168_320, BorrowLendSource.AdlProvider],
      [large, BASE, BorrowLendEvent.BorrowRepay, 8_000, BorrowLendSource.AdlProvider],
      [lender, BASE, BorrowLendEvent.LendRedeem, 8_000, BorrowLendSource.LiquidationAdl],
      [small, BASE, BorrowLendEvent.BorrowRepay, 2_000, BorrowLendSource.AdlProvider],
      [lender, BASE, BorrowLendEvent.LendRedeem, 2_000, BorrowLendSource.LiquidationAdl],
    ]);
    expect(h.balance(large, QUOTE)).toEqual([0, 400_320]);
    expect(position(h, large, QUOTE)).toEqual([0, 168_320]);
    expect(position(h, large, BASE)).toEqual([0, 0]);
    expect(position(h, small, BASE)).toEqual([0, 2_000]);
    expect(h.balance(small, QUOTE)[0]).toBe(600_000 - 92_000);
    expectModelAgrees(h);
  });
});

describe('borrow/lend ADL: a pool that lets the lend go', () => {
  it('redeems the lend and deleverages nobody', () => {
    // 60 000 lent, 15 000 borrowed: redeeming 10 000 leaves utilization at 30 %.
    const { h, lender, small, large } = setup(50_000, 12_000, 3_000);
    const moves = movesIn(firstStep(h, lender));
    expect(moves.some((r) => r.source === BorrowLendSource.LiquidationAdl || r.source === BorrowLendSource.AdlProvider)).toBe(false);
    expect(moves.find((r) => r.accountId === lender && r.assetId === BASE)).toMatchObject({ event: BorrowLendEvent.LendRedeem, quantityUnits: 10_000, source: BorrowLendSource.Liquidation });
    expect(position(h, large, BASE)).toEqual([0, 12_000]);
    expect(position(h, small, BASE)).toEqual([0, 3_000]);
    expect(h.balance(lender, BASE)[0]).toBe(10_000);
    expectModelAgrees(h);
  });
});
