// Borrow/lend pools in the engine (engine/core/margin/pools.ts, borrow-lend.ts), asserted by
// value: lend and redeem, repay before lend and redeem before borrow, borrows within and past the
// margin the account's collateral gives at the mark price, the pool's utilization cap, the hourly
// utilization throttle and openBorrowLendLimit, pool states, and one hour of interest exact to the
// unit with each rounding direction and the exchange's two ledger lines, the pools sampled at each
// hour, and each move's source. The harness checks the invariants and
// conservation (Σ available + locked + lent − borrowed + fees + interest lines = deposits −
// withdrawals) after every command; snapshots and replay reproduce the state.

import { describe, expect, it } from 'vitest';
import {
  BorrowLendEvent, BorrowLendSource, CommandFlag, CommandKind, LendPoolStateCode, RecordType, ResultCode,
  type BorrowLendRec, type LendPoolRec, type LendPoolSampleRec,
} from '../../../engine/bus/types.js';
import type { LendPoolState } from '../../../engine/bus/margin-params.js';
import { Exchange } from '../../../engine/core/exchange.js';
import { SnapshotFormatError, exportSnapshot, importSnapshot } from '../../../engine/core/snapshot.js';
import { hashState } from '../../../engine/core/stateHash.js';
import { BASE, EngineHarness, OTHER, QUOTE, cmd, replay, resultOf, tradesOf, testConfig, type Rec, stateOf } from '../../helpers/engine-harness.js';
import { ONE, borrow, lend, marginConfig } from '../../helpers/margin-harness.js';
import { formatNineSnapshot } from '../../helpers/snapshot-formats.js';

const HOUR_US = 3_600_000_000;

const pools = () => ({ kind: CommandKind.QueryLendPools });
const positions = (accountId: number) => ({ kind: CommandKind.QueryBorrowLendPositions, accountId });

const codeOf = (records: Rec[]): ResultCode => resultOf(records).code;
const movesOf = (records: Rec[]) => records.filter((r): r is BorrowLendRec & { type: RecordType.BorrowLend } => r.type === RecordType.BorrowLend);
const poolsOf = (records: Rec[]) => records.filter((r): r is LendPoolRec & { type: RecordType.LendPool } => r.type === RecordType.LendPool);
const samplesOf = (records: Rec[]) => records.filter((r): r is LendPoolSampleRec & { type: RecordType.LendPoolSample } => r.type === RecordType.LendPoolSample);

/** [lent, borrowed] of an account's asset, from the positions query (0, 0 when it has none). */
function position(h: EngineHarness, accountId: number, assetId: number): [number, number] {
  const row = movesOf(h.apply(positions(accountId))).find((r) => r.assetId === assetId);
  return row === undefined ? [0, 0] : [row.lentUnits, row.borrowedUnits];
}

/** Sets SOL's mark (M0's guarded reference) with one trade at `priceTicks`. */
function markSol(h: EngineHarness, priceTicks: number): void {
  const [seller, buyer] = [h.createAccount(100), h.createAccount(101)];
  h.apply(cmd.deposit(seller, BASE, 1_000));
  h.apply(cmd.deposit(buyer, QUOTE, 1_000_000));
  h.apply(cmd.place(seller, 'ask', priceTicks, 5, { postOnly: true }));
  expect(tradesOf(h.apply(cmd.place(buyer, 'bid', priceTicks, 5))).length).toBe(1);
}

/** The (empty) perpetual positions part of a format-9 snapshot of three assets: last position id, a settlement line per asset, no position, no claim. */
const POSITIONS_PART = 8 + 3 * 8 + 8 + 8;

describe('BorrowLend: lend, redeem, repay', () => {
  it('lends available units, redeems them, and keeps one kind of position per asset', () => {
    const h = new EngineHarness(marginConfig());
    const [a] = h.fundedAccounts(1, { [QUOTE]: 1_000 });
    const lent = h.apply(lend(a, QUOTE, 600));
    expect(resultOf(lent)).toMatchObject({ code: ResultCode.Ok, value: 600 });
    expect(movesOf(lent).map((r) => [r.event, r.quantityUnits, r.lentUnits, r.borrowedUnits, r.positionId])).toEqual([[BorrowLendEvent.Lend, 600, 600, 0, h.seq]]);
    expect(h.balance(a, QUOTE)).toEqual([400, 0]);
    expect(poolsOf(h.apply(pools())).map((p) => [p.assetId, p.lentUnits, p.borrowedUnits, p.utilization, p.state])).toEqual([
      [QUOTE, 600, 0, 0, LendPoolStateCode.Open], [BASE, 0, 0, 0, LendPoolStateCode.Open],
    ]);
    // More than available; more than lent on redeem (a borrow redeems the lend first, and only that).
    expect(codeOf(h.apply(lend(a, QUOTE, 401)))).toBe(ResultCode.InsufficientFunds);
    expect(codeOf(h.apply(borrow(a, QUOTE, 601)))).toBe(ResultCode.BorrowRequiresLendRedeem);
    const redeemed = h.apply(borrow(a, QUOTE, 250));
    expect(resultOf(redeemed).value).toBe(350);
    expect(movesOf(redeemed).map((r) => [r.event, r.quantityUnits, r.lentUnits])).toEqual([[BorrowLendEvent.LendRedeem, 250, 350]]);
    expect(h.balance(a, QUOTE)).toEqual([650, 0]);
    expect(resultOf(h.apply(borrow(a, QUOTE, 350))).value).toBe(0);
    expect(h.apply(positions(a)).filter((r) => r.type === RecordType.BorrowLend)).toEqual([]);
    expect(h.balance(a, QUOTE)).toEqual([1_000, 0]);
  });

  it('refuses bad input with its code and changes nothing', () => {
    const h = new EngineHarness(marginConfig({ stepUnits: 10n }));
    const [a] = h.fundedAccounts(1, { [QUOTE]: 1_000, [OTHER]: 1_000 });
    const before = h.exchange.stateHash();
    expect(codeOf(h.apply(lend(99, QUOTE, 10)))).toBe(ResultCode.UnknownAccount);
    expect(codeOf(h.apply(lend(a, OTHER, 10)))).toBe(ResultCode.LendPoolUnknown);
    expect(codeOf(h.apply({ ...lend(a, QUOTE, 10), side: 7 as number }))).toBe(ResultCode.LendPoolUnknown);
    expect(codeOf(h.apply(lend(a, QUOTE, 0)))).toBe(ResultCode.BorrowLendQuantityInvalid);
    expect(codeOf(h.apply(lend(a, QUOTE, 15)))).toBe(ResultCode.BorrowLendQuantityInvalid);
    expect(h.exchange.stateHash()).toBe(before);
  });

  it('applies the pool states and openBorrowLendLimit', () => {
    const state = (s: LendPoolState) => ({ state: s });
    const closed = new EngineHarness(marginConfig(state('Closed')));
    const [c] = closed.fundedAccounts(1, { [QUOTE]: 1_000 });
    expect(codeOf(closed.apply(lend(c, QUOTE, 10)))).toBe(ResultCode.LendPoolNotOpen);
    const repayOnly = new EngineHarness(marginConfig(state('RepayOnly')));
    const [r] = repayOnly.fundedAccounts(1, { [QUOTE]: 1_000 });
    expect(codeOf(repayOnly.apply(lend(r, QUOTE, 10)))).toBe(ResultCode.LendPoolNotOpen);
    const limited = new EngineHarness(marginConfig({ openBorrowLendLimitUnits: 500n }));
    const [l] = limited.fundedAccounts(1, { [QUOTE]: 1_000 });
    expect(codeOf(limited.apply(lend(l, QUOTE, 501)))).toBe(ResultCode.LendLimit);
    expect(codeOf(limited.apply(lend(l, QUOTE, 500)))).toBe(ResultCode.Ok);
    expect(codeOf(limited.apply(lend(l, QUOTE, 1)))).toBe(ResultCode.LendLimit);
  });

  it('is refused in maintenance', () => {
    const h = new EngineHarness(marginConfig());
    const [a] = h.fundedAccounts(1, { [QUOTE]: 1_000 });
    h.apply(cmd.setSystemState(1));
    expect(codeOf(h.apply(lend(a, QUOTE, 10)))).toBe(ResultCode.SystemMaintenance);
  });
});

describe('BorrowLend: borrow', () => {
  it('borrows against collateral at the mark price, up to netEquity = Σ N·IMF, and repays through Lend', () => {
    const h = new EngineHarness(marginConfig());
    const [lender] = h.fundedAccounts(1, { [QUOTE]: 10_000_000_000 });
    const borrower = h.createAccount(50);
    h.apply(cmd.deposit(borrower, BASE, 10_000_000));
    h.apply(lend(lender, QUOTE, 10_000_000_000));
    // 10× leverage: the borrow's IMF is the pool's 0.1 (at the default 1× it would be 1).
    h.apply(cmd.updateAccountSettings(borrower, { leverageLimitHundredths: 1_000 }));
    // SOL has no price at all: no borrow may rest on it.
    expect(codeOf(h.apply(borrow(borrower, QUOTE, 1)))).toBe(ResultCode.BorrowNoMarkPrice);
    markSol(h, 200); // 1 SOL unit = 200 × 3 / 10 = 60 USDC units
    // Its book price values it, but only a fresh index lets the account borrow against it.
    expect(codeOf(h.apply(borrow(borrower, QUOTE, 1)))).toBe(ResultCode.BorrowNoMarkPrice);
    h.apply(cmd.setIndexPrice(BASE, 60_000_000_000_000)); // 60 000 USDC per whole SOL: 60 USDC units per SOL unit
    // 10^7 SOL units × 60 × weight 0.5 = 3·10^8 of collateral; a USDC borrow of q adds q held (weight 1)
    // and q owed, so equity stays 3·10^8 ≥ 0.1 q while q ≤ 3·10^9.
    expect(codeOf(h.apply(borrow(borrower, QUOTE, 3_000_000_001)))).toBe(ResultCode.InsufficientMargin);
    const borrowed = h.apply(borrow(borrower, QUOTE, 3_000_000_000));
    expect(resultOf(borrowed)).toMatchObject({ code: ResultCode.Ok, value: -3_000_000_000 });
    expect(movesOf(borrowed).map((r) => [r.event, r.quantityUnits, r.borrowedUnits])).toEqual([[BorrowLendEvent.Borrow, 3_000_000_000, 3_000_000_000]]);
    expect(h.balance(borrower, QUOTE)).toEqual([3_000_000_000, 0]);
    const [row] = movesOf(h.apply(positions(borrower)));
    expect([row.event, row.borrowedUnits, row.imf, row.mmf, row.markTicks]).toEqual([BorrowLendEvent.Position, 3_000_000_000, 1e11, 5e10, 0]);
    // Repay through Lend: at most the borrow (then it would be a lend while borrowing).
    expect(codeOf(h.apply(lend(borrower, QUOTE, 3_000_000_001)))).toBe(ResultCode.LendRequiresBorrowRepay);
    expect(movesOf(h.apply(lend(borrower, QUOTE, 1_000_000_000))).map((r) => [r.event, r.borrowedUnits])).toEqual([[BorrowLendEvent.BorrowRepay, 2_000_000_000]]);
    expect(position(h, borrower, QUOTE)).toEqual([0, 2_000_000_000]);
    expect(h.balance(borrower, QUOTE)).toEqual([2_000_000_000, 0]);
  });

  it('keeps utilization within maxUtilization, for borrows and for redemptions', () => {
    const h = new EngineHarness(marginConfig());
    const [lender, borrower] = h.fundedAccounts(2, { [QUOTE]: 1_000_000 });
    expect(codeOf(h.apply(borrow(borrower, QUOTE, 1)))).toBe(ResultCode.InsufficientSupply); // nothing lent
    h.apply(lend(lender, QUOTE, 1_000_000));
    expect(codeOf(h.apply(borrow(borrower, QUOTE, 800_001)))).toBe(ResultCode.InsufficientSupply);
    expect(codeOf(h.apply(borrow(borrower, QUOTE, 800_000)))).toBe(ResultCode.Ok);
    expect(poolsOf(h.apply(pools()))[0].utilization).toBe(800_000_000_000);
    // Redeeming any of the lend would take utilization past 0.8.
    expect(codeOf(h.apply(borrow(lender, QUOTE, 1)))).toBe(ResultCode.InsufficientSupply);
    h.apply(lend(borrower, QUOTE, 400_000)); // repay half
    expect(codeOf(h.apply(borrow(lender, QUOTE, 500_001)))).toBe(ResultCode.InsufficientSupply);
    expect(codeOf(h.apply(borrow(lender, QUOTE, 500_000)))).toBe(ResultCode.Ok);
  });
});

describe('the utilization throttle', () => {
  /** Threshold 0.5, bound 0.8, update fraction 0.5, maxUtilization 1. */
  const throttled = () => marginConfig({ maxUtilization: ONE, throttleUtilizationThreshold: ONE / 2n, throttleUtilizationBound: (ONE * 8n) / 10n, throttleUpdateFraction: ONE / 2n });
  const maxBorrow = (h: EngineHarness, accountId: number) => resultOf(h.apply({ kind: CommandKind.QueryMaxBorrowQty, accountId, assetId: QUOTE })).value;
  const withdraw = (accountId: number, amountUnits: number, flags: number) => ({ kind: CommandKind.Withdraw, accountId, assetId: QUOTE, amountUnits, flags, key: new Uint8Array(32) });
  /** The borrow that brings the pool to its step ceiling: u0 from the hour's totals, the proposed formula. */
  function roomToCeiling(u0: bigint, lent: bigint, borrowed: bigint): bigint {
    const ceiling = u0 < ONE / 2n ? (ONE * 8n) / 10n : u0 + ((ONE / 2n) * ((ONE * 8n) / 10n - u0)) / ONE;
    return (ceiling * lent) / ONE - borrowed;
  }

  it('caps each hour at min(maxUtilization, bound) below the threshold, then lets utilization rise by the update fraction per hour', () => {
    const h = new EngineHarness(throttled());
    const [lender, borrower] = h.fundedAccounts(2, { [QUOTE]: 1_000_000 });
    h.apply(cmd.deposit(borrower, QUOTE, 1_000_000)); // 2 000 000 of USDC collateral at 1×
    h.apply(lend(lender, QUOTE, 1_000_000));
    // The first hour began empty: u0 = 0, ceiling = min(1, 0.8).
    expect(maxBorrow(h, borrower)).toBe(800_000);
    expect(codeOf(h.apply(borrow(borrower, QUOTE, 800_001)))).toBe(ResultCode.InsufficientSupply); // maxUtilization 1 would allow it
    expect(codeOf(h.apply(borrow(borrower, QUOTE, 600_000)))).toBe(ResultCode.Ok);
    // The hour turns at u0 ≈ 0.6 ≥ 0.5: the ceiling is u0 + 0.5 × (0.8 − u0) ≈ 0.7.
    h.apply(cmd.tick(), HOUR_US);
    const [usdc] = poolsOf(h.apply(pools()));
    const room = roomToCeiling(BigInt(usdc.utilization), BigInt(usdc.lentUnits), BigInt(usdc.borrowedUnits));
    expect(room > 99_000n && room < 100_000n).toBe(true);
    expect(maxBorrow(h, borrower)).toBe(Number(room));
    expect(codeOf(h.apply(borrow(borrower, QUOTE, Number(room) + 1)))).toBe(ResultCode.InsufficientSupply);
    // Redemptions meet the same ceiling: the lender may take out only what keeps borrowed/lent ≤ it.
    expect(codeOf(h.apply(borrow(lender, QUOTE, 200_000)))).toBe(ResultCode.InsufficientSupply);
    expect(codeOf(h.apply(withdraw(lender, 200_000, CommandFlag.AutoLendRedeem)))).toBe(ResultCode.InsufficientSupply);
    expect(codeOf(h.apply(borrow(borrower, QUOTE, Number(room))))).toBe(ResultCode.Ok);
    // The next hour starts near 0.7: the ceiling moves on to about 0.75; a snapshot keeps u0.
    h.apply(cmd.tick(), 2 * HOUR_US);
    h.restartFromSnapshot();
    const [next] = poolsOf(h.apply(pools()));
    const more = roomToCeiling(BigInt(next.utilization), BigInt(next.lentUnits), BigInt(next.borrowedUnits));
    expect(more > 49_000n && more < 51_000n).toBe(true);
    expect(maxBorrow(h, borrower)).toBe(Number(more));
    expect(replay(h.config, h.stream).exchange.stateHash()).toBe(h.exchange.stateHash());
  });

  it('reads format-7 snapshots (written before the throttle) with u0 taken as the utilization then', () => {
    const h = new EngineHarness(throttled());
    const [lender, borrower] = h.fundedAccounts(2, { [QUOTE]: 1_000_000 });
    h.apply(lend(lender, QUOTE, 1_000_000));
    h.apply(borrow(borrower, QUOTE, 400_000));
    h.apply(cmd.tick(), HOUR_US); // u0 ≈ 0.4 < 0.5: the ceiling is 0.8 this hour
    h.apply(borrow(borrower, QUOTE, 200_000));
    const today = formatNineSnapshot(h.exchange, h.config.assets.length);
    expect(new DataView(today.buffer, today.byteOffset).getUint32(4, true)).toBe(9);
    // The throttle part: the pool count, then index and u0 of two pools, then the (empty) positions
    // part; format 7 ends before both.
    const part = 8 + 2 * 2 * 8 + POSITIONS_PART;
    const old = new Uint8Array(today.length - part);
    old.set(today.subarray(0, today.length - 4 - part));
    old.set(today.subarray(today.length - 4), today.length - 4 - part);
    new DataView(old.buffer).setUint32(4, 7, true);
    const restored = new Exchange(h.config);
    importSnapshot(restored, old);
    restored.validateInvariants();
    // u0 is now ≈ 0.6: ceiling ≈ 0.7 there, 0.8 in the engine that saw the hour begin.
    const [usdc] = poolsOf(h.apply(pools()));
    expect(maxBorrow(h, borrower)).toBe(Number(roomToCeiling(0n, BigInt(usdc.lentUnits), BigInt(usdc.borrowedUnits))));
    expect(restored.stateHash()).not.toBe(h.exchange.stateHash());
    // The hash an engine before the throttle computed (no throttle part), as its snapshot files and
    // clean stops carry it, is still this state's hash.
    const before = hashState(stateOf(h.exchange), true, false);
    expect(hashState(stateOf(restored), true, false)).toBe(before);
    expect(restored.hasStateHash(before)).toBe(true);
    h.exchange = restored;
    expect(maxBorrow(h, borrower)).toBe(Number(roomToCeiling(BigInt(usdc.utilization), BigInt(usdc.lentUnits), BigInt(usdc.borrowedUnits))));
  });
});

describe('interest', () => {
  it('accrues one hour on the hour, exact to the unit: borrows round up, lends down, the exchange keeps its share and the rounding', () => {
    const h = new EngineHarness(marginConfig());
    const [lenderA, lenderB, borrower] = h.fundedAccounts(3, { [QUOTE]: 6_000_000_000 });
    h.apply(lend(lenderA, QUOTE, 6_000_000_000));
    h.apply(lend(lenderB, QUOTE, 4_000_000_000));
    h.apply(borrow(borrower, QUOTE, 4_000_000_000));
    // u = 0.4 ≤ uOpt 0.5: r = 0.1 × 0.4 / 0.5 = 0.08; lend rate = 0.08 × 0.4 × (1 − 0.2) = 0.0256.
    const [usdc] = poolsOf(h.apply(pools()));
    expect([usdc.borrowRate, usdc.lendRate, usdc.utilization]).toEqual([80_000_000_000, 25_600_000_000, 400_000_000_000]);
    // Nothing before the hour; the hour's tick pays.
    expect(movesOf(h.apply(cmd.tick(), HOUR_US - 1))).toEqual([]);
    const paid = movesOf(h.apply(cmd.tick(), HOUR_US));
    // 4·10^9 × 0.08 / 8760 = 36 529.68… → 36 530; 6·10^9 × 0.0256 / 8760 = 17 534.24… → 17 534;
    // 4·10^9 × 0.0256 / 8760 = 11 689.49… → 11 689.
    expect(paid.map((r) => [r.accountId, r.event, r.quantityUnits, r.rate, r.lentUnits, r.borrowedUnits, r.interestUnits, r.frontId])).toEqual([
      [lenderA, BorrowLendEvent.LendInterest, 17_534, 25_600_000_000, 6_000_017_534, 0, 17_534, 0xffff],
      [lenderB, BorrowLendEvent.LendInterest, 11_689, 25_600_000_000, 4_000_011_689, 0, 11_689, 0xffff],
      [borrower, BorrowLendEvent.BorrowInterest, 36_530, 80_000_000_000, 0, 4_000_036_530, 36_530, 0xffff],
    ]);
    // The exchange's share: floor(0.2 × 4·10^9 × 0.08 / 8760) = floor(7 305.93…) = 7 305; rounding kept 36 530 − 29 223 − 7 305 = 2.
    const after = poolsOf(h.apply(pools()))[0];
    expect([after.lentUnits, after.borrowedUnits, after.interestFeeUnits, after.interestRoundingUnits]).toEqual([10_000_029_223, 4_000_036_530, 7_305, 2]);
    // The next hour is due an hour on; a quiet spell of three hours pays three ticks.
    expect(h.exchange.nextWakeUs()).toBe(2 * HOUR_US);
    const spell = h.apply(cmd.tick(), 4 * HOUR_US + 5);
    const three = movesOf(spell).filter((r) => r.accountId === borrower);
    expect(three.map((r) => r.timeUs)).toEqual([4 * HOUR_US + 5, 4 * HOUR_US + 5, 4 * HOUR_US + 5]);
    expect(h.exchange.nextWakeUs()).toBe(5 * HOUR_US);
    // Each hour also samples every pool, after its interest, at the hour itself (the market history); the last one is the pools as they stand.
    const samples = samplesOf(spell);
    expect(samples.map((r) => [r.assetId, r.hourUs, r.frontId])).toEqual([2, 3, 4].flatMap((hour) => [[QUOTE, hour * HOUR_US, 0xffff], [BASE, hour * HOUR_US, 0xffff]]));
    const now = poolsOf(h.apply(pools()));
    expect(samples.slice(4).map((r) => [r.lentUnits, r.borrowedUnits, r.borrowRate, r.lendRate, r.utilization]))
      .toEqual(now.map((p) => [p.lentUnits, p.borrowedUnits, p.borrowRate, p.lendRate, p.utilization]));
    expect(samples[5]).toMatchObject({ lentUnits: 0, borrowedUnits: 0, borrowRate: 0, lendRate: 0, utilization: 0 });
    expect(three.every((r) => r.source === BorrowLendSource.Interest)).toBe(true);
  });

  it('writes the source of a move, and a move that closes a position carries its id and interest', () => {
    const h = new EngineHarness(marginConfig());
    const [lender, borrower] = h.fundedAccounts(2, { [QUOTE]: 6_000_000_000 });
    h.apply(lend(lender, QUOTE, 6_000_000_000));
    const [opened] = movesOf(h.apply(borrow(borrower, QUOTE, 1_000_000_000)));
    expect([opened.event, opened.source, opened.positionId > 0]).toEqual([BorrowLendEvent.Borrow, BorrowLendSource.Manual, true]);
    const [interest] = movesOf(h.apply(cmd.tick(), HOUR_US)).filter((r) => r.accountId === borrower);
    const owed = opened.borrowedUnits + interest.quantityUnits;
    const [closing] = movesOf(h.apply(lend(borrower, QUOTE, owed)));
    expect([closing.event, closing.lentUnits, closing.borrowedUnits, closing.positionId, closing.interestUnits, closing.source])
      .toEqual([BorrowLendEvent.BorrowRepay, 0, 0, opened.positionId, interest.quantityUnits, BorrowLendSource.Manual]);
  });

  it('stops the timer once no position is left, and a snapshot and a replay reproduce the state', () => {
    const h = new EngineHarness(marginConfig());
    const [lender, borrower] = h.fundedAccounts(2, { [QUOTE]: 1_000_000_000 });
    h.apply(lend(lender, QUOTE, 1_000_000_000));
    h.apply(borrow(borrower, QUOTE, 500_000_000));
    h.restartFromSnapshot();
    h.apply(cmd.tick(), HOUR_US);
    h.restartFromSnapshot();
    const [, owed] = position(h, borrower, QUOTE);
    h.apply(cmd.deposit(borrower, QUOTE, owed - 500_000_000));
    h.apply(lend(borrower, QUOTE, owed));
    h.apply(borrow(lender, QUOTE, position(h, lender, QUOTE)[0]));
    expect(h.exchange.nextWakeUs()).toBe(2 * HOUR_US);
    h.apply(cmd.tick(), 2 * HOUR_US);
    expect(h.exchange.nextWakeUs()).toBe(-1);
    const replayed = replay(h.config, h.stream);
    expect(replayed.exchange.stateHash()).toBe(h.exchange.stateHash());
  });

  it('leaves the state hash of an engine without borrow or lend as it was without pools', () => {
    const withPools = new EngineHarness(marginConfig());
    const without = new EngineHarness(testConfig({ markets: marginConfig().markets }));
    for (const h of [withPools, without]) h.fundedAccounts(2, { [QUOTE]: 1_000 });
    expect(withPools.exchange.stateHash()).toBe(without.exchange.stateHash());
    withPools.apply(lend(1, QUOTE, 10));
    expect(withPools.exchange.stateHash()).not.toBe(without.exchange.stateHash());
  });
});

describe('snapshot format', () => {
  it('reads format-6 snapshots (written before the pools) with every pool empty and the same hash', () => {
    const h = new EngineHarness(marginConfig());
    h.fundedAccounts(2, { [QUOTE]: 1_000 });
    const today = formatNineSnapshot(h.exchange, h.config.assets.length);
    expect(new DataView(today.buffer, today.byteOffset).getUint32(4, true)).toBe(9);
    // The pool part of this state: the pool count, two pools of five numbers (index, totals, lines), no
    // position, no interest due; then the throttle part (the pool count, index and u0 of each) and
    // the (empty) perpetual positions part; format 6 ends before all three.
    const part = 8 + 2 * 5 * 8 + 8 + 8 + (8 + 2 * 2 * 8) + POSITIONS_PART;
    const old = new Uint8Array(today.length - part);
    old.set(today.subarray(0, today.length - 4 - part));
    old.set(today.subarray(today.length - 4), today.length - 4 - part);
    new DataView(old.buffer).setUint32(4, 6, true);
    const restored = new Exchange(h.config);
    importSnapshot(restored, old);
    restored.validateInvariants();
    expect(restored.stateHash()).toBe(h.exchange.stateHash());
  });

  it('refuses a snapshot whose pools differ from the configuration', () => {
    const h = new EngineHarness(marginConfig());
    h.fundedAccounts(1, { [QUOTE]: 1_000 });
    h.apply(lend(1, QUOTE, 10));
    expect(() => importSnapshot(new Exchange(testConfig({ markets: marginConfig().markets })), exportSnapshot(h.exchange))).toThrow(SnapshotFormatError);
  });
});

describe('withdrawals of an account that borrows', () => {
  it('keep its margin: borrowed funds cannot leave uncovered', () => {
    const h = new EngineHarness(marginConfig());
    const [lender, borrower] = h.fundedAccounts(2, { [QUOTE]: 10_000 });
    h.apply(lend(lender, QUOTE, 10_000));
    h.apply(cmd.updateAccountSettings(borrower, { leverageLimitHundredths: 1_000 }));
    // 1 000 of equity covers a borrow of up to 10 000 at IMF 0.1; borrow 5 000: 500 required.
    h.apply(borrow(borrower, QUOTE, 5_000));
    expect(h.balance(borrower, QUOTE)).toEqual([15_000, 0]);
    const withdraw = (amountUnits: number) => ({ kind: CommandKind.Withdraw, accountId: borrower, assetId: QUOTE, amountUnits, key: new Uint8Array(32) });
    // Withdrawing w leaves equity 10 000 − w ≥ 500: at most 9 500.
    expect(codeOf(h.apply(withdraw(9_501)))).toBe(ResultCode.InsufficientMargin);
    expect(codeOf(h.apply(withdraw(9_500)))).toBe(ResultCode.Ok);
    expect(codeOf(h.apply(withdraw(1)))).toBe(ResultCode.InsufficientMargin);
    // The lender borrows nothing: its withdrawals are limited by its balance only.
    h.apply(cmd.deposit(lender, QUOTE, 7));
    expect(codeOf(h.apply({ ...withdraw(7), accountId: lender }))).toBe(ResultCode.Ok);
  });
});
