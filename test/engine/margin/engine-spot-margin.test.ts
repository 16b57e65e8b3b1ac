// Spot margin in the engine (engine/core/margin/auto-funding.ts), asserted by value: orders that
// redeem a lend (autoLendRedeem) or borrow (autoBorrow) the shortfall of their hold when placed,
// with the pool limits and the margin test refusing as BorrowLend does; fill proceeds that repay a
// borrow (autoBorrowRepay) or are lent (autoLend); the account settings autoRepayBorrows and
// autoLend acting on deposits and fills; plain orders of a borrower; withdrawals with autoBorrow / autoLendRedeem;
// and the exact largest borrow, withdrawal and order. The harness checks the invariants and
// conservation after every command; a replay and a snapshot round trip reproduce the state.

import { describe, expect, it } from 'vitest';
import {
  BorrowLendEvent, BorrowLendSource, CommandFlag, CommandKind, RecordType, ResultCode,
  type BorrowLendRec,
} from '../../../engine/bus/types.js';
import type { LendPoolSpec } from '../../../engine/bus/margin-params.js';
import { BASE, EngineHarness, M0, QUOTE, cmd, replay, resultOf, tradesOf, type Rec } from '../../helpers/engine-harness.js';
import { borrow, lend, marginConfig } from '../../helpers/margin-harness.js';

const withdraw = (accountId: number, assetId: number, amountUnits: number, flags = 0) => ({ kind: CommandKind.Withdraw, accountId, assetId, amountUnits, flags, key: new Uint8Array(32) });
const maxBorrow = (accountId: number, assetId: number) => resultOf(hq.h!.apply({ kind: CommandKind.QueryMaxBorrowQty, accountId, assetId })).value;
const maxWithdrawal = (accountId: number, assetId: number, flags = 0) => resultOf(hq.h!.apply({ kind: CommandKind.QueryMaxWithdrawalQty, accountId, assetId, flags })).value;
const maxOrder = (accountId: number, side: 'bid' | 'ask', priceTicks: number, flags = 0) => resultOf(hq.h!.apply({ ...cmd.place(accountId, side, priceTicks, 0), kind: CommandKind.QueryMaxOrderQty, flags })).value;
/** The harness the query helpers read (set by each test). */
const hq: { h?: EngineHarness } = {};

const codeOf = (records: Rec[]): ResultCode => resultOf(records).code;
const movesOf = (records: Rec[]) => records.filter((r): r is BorrowLendRec & { type: RecordType.BorrowLend } => r.type === RecordType.BorrowLend);

/** [lent, borrowed] of an account's asset. */
function position(h: EngineHarness, accountId: number, assetId: number): [number, number] {
  const row = movesOf(h.apply({ kind: CommandKind.QueryBorrowLendPositions, accountId })).find((r) => r.assetId === assetId);
  return row === undefined ? [0, 0] : [row.lentUnits, row.borrowedUnits];
}

/** Sets SOL's mark (M0's guarded reference) with one trade at 200: 1 SOL unit = 200 × 3 / 10 = 60 USDC units. */
function markSol(h: EngineHarness): void {
  const [seller, buyer] = [h.createAccount(100), h.createAccount(101)];
  h.apply(cmd.deposit(seller, BASE, 1_000));
  h.apply(cmd.deposit(buyer, QUOTE, 1_000_000));
  h.apply(cmd.place(seller, 'ask', 200, 5, { postOnly: true }));
  expect(tradesOf(h.apply(cmd.place(buyer, 'bid', 200, 5))).length).toBe(1);
}

/**
 * A harness with `lent` USDC lent (10^9 by default) by one account, SOL marked at 200 (its book and
 * a fresh index price: borrowing rests on fresh index prices), and a borrower at 10× leverage (the
 * pools' IMF bases apply) holding `sol` SOL units.
 */
function setup(sol: number, usdc: Partial<LendPoolSpec> = {}, lent = 1_000_000_000): { h: EngineHarness; borrower: number; lender: number } {
  const h = new EngineHarness(marginConfig(usdc));
  hq.h = h;
  const [lender] = h.fundedAccounts(1, { [QUOTE]: 1_000_000_000 });
  h.apply(lend(lender, QUOTE, lent));
  markSol(h);
  h.apply(cmd.setIndexPrice(BASE, 60_000_000_000_000)); // 60 000 USDC per whole SOL: 60 USDC units per SOL unit
  const borrower = h.createAccount(50);
  h.apply(cmd.updateAccountSettings(borrower, { leverageLimitHundredths: 1_000 }));
  h.apply(cmd.deposit(borrower, BASE, sol));
  return { h, borrower, lender };
}

describe('orders with autoBorrow', () => {
  it('borrow the shortfall of the hold when placed, within the margin the collateral gives', () => {
    // 100 SOL units × 60 × weight 0.5 = 3 000 of equity; a USDC borrow q keeps it and needs 0.1 q: q ≤ 30 000.
    const { h, borrower } = setup(100);
    expect(maxBorrow(borrower, QUOTE)).toBe(30_000);
    expect(maxOrder(borrower, 'bid', 200)).toBe(0);
    expect(maxOrder(borrower, 'bid', 200, CommandFlag.AutoBorrow)).toBe(50); // 30 000 / (200 × 3)
    expect(codeOf(h.apply(cmd.place(borrower, 'bid', 200, 10)))).toBe(ResultCode.InsufficientFunds);
    const before = h.exchange.stateHash();
    expect(codeOf(h.apply(cmd.place(borrower, 'bid', 200, 51, { flags: CommandFlag.AutoBorrow })))).toBe(ResultCode.InsufficientMargin);
    expect(h.exchange.stateHash()).toBe(before);
    const placed = h.apply(cmd.place(borrower, 'bid', 200, 10, { flags: CommandFlag.AutoBorrow }));
    expect(placed.some((r) => r.type === RecordType.Result)).toBe(false); // accepted: answered by its order record
    expect(movesOf(placed).map((r) => [r.accountId, r.event, r.quantityUnits, r.borrowedUnits, r.frontId])).toEqual([[borrower, BorrowLendEvent.Borrow, 6_000, 6_000, 0xffff]]);
    expect(h.balance(borrower, QUOTE)).toEqual([0, 6_000]);
    expect(position(h, borrower, QUOTE)).toEqual([0, 6_000]);
    // Locked units count as held: the borrow left equity as it was.
    expect(maxBorrow(borrower, QUOTE)).toBe(24_000);
    // Cancelled, the hold returns to available; the borrow stays until repaid.
    const orderId = h.log.filter((r) => r.type === RecordType.Order).at(-1)!.orderId;
    h.apply(cmd.cancel(borrower, orderId));
    expect(h.balance(borrower, QUOTE)).toEqual([6_000, 0]);
    expect(position(h, borrower, QUOTE)).toEqual([0, 6_000]);
  });

  it('borrow whole pool steps and refuse as BorrowLend does: BorrowLimit, InsufficientSupply, BorrowRequiresLendRedeem', () => {
    // 10 000 lent, at most 10 000 borrowed in all, utilization at most 0.8.
    const { h, borrower, lender } = setup(100, { stepUnits: 1_000n, openBorrowLendLimitUnits: 10_000n }, 10_000);
    expect(maxBorrow(borrower, QUOTE)).toBe(8_000);
    expect(codeOf(h.apply(cmd.place(borrower, 'bid', 200, 19, { flags: CommandFlag.AutoBorrow })))).toBe(ResultCode.BorrowLimit); // 11 400 → 12 000
    expect(codeOf(h.apply(cmd.place(borrower, 'bid', 200, 15, { flags: CommandFlag.AutoBorrow })))).toBe(ResultCode.InsufficientSupply); // 9 000: utilization 0.9
    h.apply(cmd.place(borrower, 'bid', 150, 7, { flags: CommandFlag.AutoBorrow })); // 3 150 → 4 000
    expect(h.balance(borrower, QUOTE)).toEqual([850, 3_150]);
    expect(position(h, borrower, QUOTE)).toEqual([0, 4_000]);
    // A lend of the asset stays without autoLendRedeem: no borrow while it lends.
    const saver = h.createAccount(70);
    h.apply(cmd.deposit(saver, BASE, 100));
    expect(codeOf(h.apply(lend(saver, BASE, 100)))).toBe(ResultCode.Ok);
    expect(codeOf(h.apply(cmd.place(saver, 'ask', 200, 1, { flags: CommandFlag.AutoBorrow })))).toBe(ResultCode.BorrowRequiresLendRedeem);
    expect(codeOf(h.apply(cmd.place(lender, 'bid', 200, 1, { flags: 0x80 })))).toBe(ResultCode.InvalidCommand);
    // 100 SOL units lent in the SOL pool: a borrow of 110 passes utilization 0.8 of it.
    expect(codeOf(h.apply(cmd.place(borrower, 'ask', 200, 21, { flags: CommandFlag.AutoBorrow })))).toBe(ResultCode.InsufficientSupply);
  });
});

describe('plain orders of an account that borrows', () => {
  it('keep the exact lock rule: no borrow, no margin test, InsufficientFunds past the available balance', () => {
    const { h, borrower } = setup(100);
    h.apply(borrow(borrower, QUOTE, 6_000));
    expect(h.balance(borrower, QUOTE)).toEqual([6_000, 0]);
    // A bid of 10 lots at 200 holds 10 × 200 × 3 = 6 000: exactly the available USDC.
    const before = h.exchange.stateHash();
    expect(codeOf(h.apply(cmd.place(borrower, 'bid', 200, 11, { postOnly: true })))).toBe(ResultCode.InsufficientFunds);
    expect(h.exchange.stateHash()).toBe(before);
    const placed = h.apply(cmd.place(borrower, 'bid', 199, 10, { postOnly: true }));
    expect(placed.some((r) => r.type === RecordType.Result)).toBe(false);
    expect(movesOf(placed)).toEqual([]);
    expect(h.balance(borrower, QUOTE)).toEqual([6_000 - 5_970, 5_970]);
    // An ask of the SOL it holds, the borrow of USDC untouched.
    const ask = h.apply(cmd.place(borrower, 'ask', 201, 10, { postOnly: true }));
    expect(movesOf(ask)).toEqual([]);
    expect(h.balance(borrower, BASE)).toEqual([0, 100]);
    expect(codeOf(h.apply(cmd.place(borrower, 'ask', 201, 1, { postOnly: true })))).toBe(ResultCode.InsufficientFunds);
    expect(position(h, borrower, QUOTE)).toEqual([0, 6_000]);
  });
});

describe('orders with autoLendRedeem', () => {
  it('redeem the shortfall from the lend of the spent asset, only with the flag', () => {
    const h = new EngineHarness(marginConfig());
    hq.h = h;
    const [a] = h.fundedAccounts(1, { [QUOTE]: 1_000 });
    h.apply(lend(a, QUOTE, 800));
    expect(maxOrder(a, 'bid', 100)).toBe(0); // 200 / 300
    expect(maxOrder(a, 'bid', 100, CommandFlag.AutoLendRedeem)).toBe(3); // 1 000 / 300
    expect(codeOf(h.apply(cmd.place(a, 'bid', 100, 2)))).toBe(ResultCode.InsufficientFunds);
    const placed = h.apply(cmd.place(a, 'bid', 100, 2, { flags: CommandFlag.AutoLendRedeem }));
    expect(placed.some((r) => r.type === RecordType.Result)).toBe(false); // accepted: answered by its order record
    expect(movesOf(placed).map((r) => [r.event, r.quantityUnits, r.lentUnits])).toEqual([[BorrowLendEvent.LendRedeem, 400, 400]]);
    expect(h.balance(a, QUOTE)).toEqual([0, 600]);
    expect(codeOf(h.apply(cmd.place(a, 'bid', 100, 2, { flags: CommandFlag.AutoLendRedeem })))).toBe(ResultCode.InsufficientFunds);
  });
});

describe('fill proceeds', () => {
  it('repay the borrow of the received asset (autoBorrowRepay) and are lent in whole steps (autoLend)', () => {
    const { h, borrower } = setup(100, { stepUnits: 1_000n });
    h.apply(cmd.place(borrower, 'bid', 200, 10, { flags: CommandFlag.AutoBorrow }));
    expect(position(h, borrower, QUOTE)).toEqual([0, 6_000]);
    const [seller] = [h.createAccount(60)];
    h.apply(cmd.deposit(seller, BASE, 100));
    // The seller lends its proceeds: 10 lots × 200 × 3 = 6 000 less its fee, rounded down to 1 000s.
    const fill = h.apply(cmd.place(seller, 'ask', 200, 10, { flags: CommandFlag.AutoLend }));
    expect(tradesOf(fill).length).toBe(1);
    expect(movesOf(fill).map((r) => [r.accountId, r.event, r.source])).toEqual([[seller, BorrowLendEvent.Lend, BorrowLendSource.AutoLend]]);
    const proceeds = 6_000; // fees are 0 in this configuration
    const lentBySeller = Math.floor(proceeds / 1_000) * 1_000;
    expect(position(h, seller, QUOTE)).toEqual([lentBySeller, 0]);
    expect(h.balance(seller, QUOTE)).toEqual([proceeds - lentBySeller, 0]);
    // The borrower sells the SOL it bought with autoBorrowRepay: the USDC proceeds repay the borrow.
    const sol = h.balance(borrower, BASE)[0];
    const buyer = h.createAccount(61);
    h.apply(cmd.deposit(buyer, QUOTE, 100_000));
    h.apply(cmd.place(borrower, 'ask', 200, 5, { flags: CommandFlag.AutoBorrowRepay, postOnly: true }));
    const repayFill = h.apply(cmd.place(buyer, 'bid', 200, 5));
    expect(tradesOf(repayFill).length).toBe(1);
    expect(movesOf(repayFill).map((r) => [r.accountId, r.event, r.source])).toEqual([[borrower, BorrowLendEvent.BorrowRepay, BorrowLendSource.AutoBorrowRepay]]);
    const repaid = 3_000;
    expect(position(h, borrower, QUOTE)).toEqual([0, 6_000 - repaid]);
    expect(h.balance(borrower, QUOTE)).toEqual([0, 0]);
    expect(h.balance(borrower, BASE)).toEqual([sol - 50, 0]);
  });
});

describe('account settings autoRepayBorrows and autoLend', () => {
  it('a deposit repays the borrow of its asset first, the excess stays or is lent; fills likewise; pool limits cut lends silently', () => {
    const { h, borrower } = setup(100, { openBorrowLendLimitUnits: 1_000_000_800n });
    h.apply(borrow(borrower, QUOTE, 6_000));
    // Without the settings a deposit only credits.
    expect(movesOf(h.apply(cmd.deposit(borrower, QUOTE, 10)))).toEqual([]);
    h.apply(cmd.updateAccountSettings(borrower, { autoRepayBorrows: true }));
    const first = h.apply(cmd.deposit(borrower, QUOTE, 4_000));
    expect(movesOf(first).map((r) => [r.event, r.quantityUnits, r.borrowedUnits, r.frontId])).toEqual([[BorrowLendEvent.BorrowRepay, 4_000, 2_000, 0xffff]]);
    expect(resultOf(first).value).toBe(6_010); // the borrowed units already held stay available
    const second = h.apply(cmd.deposit(borrower, QUOTE, 3_000));
    expect(movesOf(second).map((r) => [r.event, r.quantityUnits])).toEqual([[BorrowLendEvent.BorrowRepay, 2_000]]);
    expect(position(h, borrower, QUOTE)).toEqual([0, 0]);
    expect(h.balance(borrower, QUOTE)).toEqual([7_010, 0]);
    // With autoLend the excess is lent, within openBorrowLendLimit: 800 of room above the 10^9 lent.
    h.apply(cmd.updateAccountSettings(borrower, { autoLend: true }));
    expect(movesOf(h.apply(cmd.deposit(borrower, QUOTE, 500))).map((r) => [r.event, r.quantityUnits])).toEqual([[BorrowLendEvent.Lend, 500]]);
    expect(movesOf(h.apply(cmd.deposit(borrower, QUOTE, 500))).map((r) => [r.event, r.quantityUnits])).toEqual([[BorrowLendEvent.Lend, 300]]);
    expect(movesOf(h.apply(cmd.deposit(borrower, QUOTE, 500)))).toEqual([]);
    expect(position(h, borrower, QUOTE)).toEqual([800, 0]);
    expect(h.balance(borrower, QUOTE)).toEqual([7_010 + 200 + 500, 0]);
    // A fill's proceeds are lent as the settings ask.
    const seller = h.createAccount(80);
    h.apply(cmd.deposit(seller, BASE, 100));
    h.apply(cmd.updateAccountSettings(seller, { autoLend: true }));
    h.apply({ kind: CommandKind.BorrowLend, accountId: borrower, assetId: QUOTE, side: 0, amountUnits: 800 }); // redeems the 800: room again
    h.apply(cmd.place(seller, 'ask', 200, 1, { postOnly: true }));
    const fill = h.apply(cmd.place(borrower, 'bid', 200, 1));
    expect(tradesOf(fill).length).toBe(1);
    // The buyer has autoLend too: it lends the SOL it bought; the seller the USDC it earned.
    expect(movesOf(fill).map((r) => [r.accountId, r.event, r.assetId, r.quantityUnits])).toEqual([[borrower, BorrowLendEvent.Lend, BASE, 10], [seller, BorrowLendEvent.Lend, QUOTE, 600]]);
    expect(position(h, seller, QUOTE)).toEqual([600, 0]);
  });
});

describe('withdrawals with autoBorrow and autoLendRedeem', () => {
  it('redeem or borrow the shortfall, margin-tested with the withdrawn units gone', () => {
    const { h, borrower } = setup(100);
    // Equity 3 000 − w after borrowing and withdrawing w must cover 0.1 w.
    const most = maxWithdrawal(borrower, QUOTE, CommandFlag.AutoBorrow);
    expect(most).toBe(2_727);
    expect(maxWithdrawal(borrower, QUOTE)).toBe(0);
    expect(codeOf(h.apply(withdraw(borrower, QUOTE, most + 1, CommandFlag.AutoBorrow)))).toBe(ResultCode.InsufficientMargin);
    expect(codeOf(h.apply(withdraw(borrower, QUOTE, most)))).toBe(ResultCode.InsufficientFunds);
    const borrowed = h.apply(withdraw(borrower, QUOTE, most, CommandFlag.AutoBorrow));
    expect(codeOf(borrowed)).toBe(ResultCode.Ok);
    expect(movesOf(borrowed).map((r) => [r.event, r.quantityUnits, r.source])).toEqual([[BorrowLendEvent.Borrow, most, BorrowLendSource.AutoBorrow]]);
    expect(position(h, borrower, QUOTE)).toEqual([0, most]);
    expect(maxWithdrawal(borrower, QUOTE, CommandFlag.AutoBorrow)).toBe(0);
    const saver = h.createAccount(70);
    h.apply(cmd.deposit(saver, QUOTE, 1_000));
    h.apply(lend(saver, QUOTE, 700));
    expect(maxWithdrawal(saver, QUOTE)).toBe(300);
    expect(maxWithdrawal(saver, QUOTE, CommandFlag.AutoLendRedeem)).toBe(1_000);
    const redeemed = h.apply(withdraw(saver, QUOTE, 900, CommandFlag.AutoLendRedeem));
    expect(codeOf(redeemed)).toBe(ResultCode.Ok);
    expect(movesOf(redeemed).map((r) => [r.event, r.quantityUnits, r.source])).toEqual([[BorrowLendEvent.LendRedeem, 600, BorrowLendSource.AutoLendRedeem]]);
    expect(position(h, saver, QUOTE)).toEqual([100, 0]);
    expect(h.balance(saver, QUOTE)).toEqual([0, 0]);
    expect(codeOf(h.apply(withdraw(saver, QUOTE, 1, 0x80)))).toBe(ResultCode.InvalidCommand);
  });

  it('replays and survives a snapshot round trip with the same state', () => {
    const { h, borrower } = setup(100);
    h.apply(cmd.place(borrower, 'bid', 200, 10, { flags: CommandFlag.AutoBorrow | CommandFlag.AutoBorrowRepay }));
    h.apply(withdraw(borrower, QUOTE, 1_000, CommandFlag.AutoBorrow));
    h.restartFromSnapshot();
    const again = replay(h.config, h.stream);
    expect(again.exchange.stateHash()).toBe(h.exchange.stateHash());
    expect(h.apply({ kind: CommandKind.QueryOpenOrders, accountId: borrower, marketId: M0 }).filter((r) => r.type === RecordType.Order).length).toBe(1);
  });
});
