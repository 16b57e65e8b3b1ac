// Borrow and lend (venue mechanics §2): the BorrowLend command, the hourly interest, and the two
// queries (the pools, an account's positions). The state is pools.ts.
//
// BorrowLend {asset, side, quantity}. An account lends or borrows an asset, never both, so a side
// against an open position of the other kind reduces that position first, and only that:
//   Lend,   no borrow   lend: available → lent. Needs the available units, the pool Open, and the
//                      lent total to stay within openBorrowLendLimit (LendLimit).
//   Lend,   borrowing   repay: available → less borrowed, at most the borrow
//                      (LendRequiresBorrowRepay beyond it). Allowed while RepayOnly.
//   Borrow, lending    redeem: lent → available, at most the lend (BorrowRequiresLendRedeem beyond
//                      it), keeping utilization within the throttle's ceiling (throttle.ts,
//                      never above maxUtilization; InsufficientSupply).
//                      Allowed while RepayOnly.
//   Borrow, no lend    borrow: borrowed units → available. Needs the pool Open, the borrowed total
//                      within openBorrowLendLimit (BorrowLimit), utilization within the
//                      throttle's ceiling (InsufficientSupply) and the account's margin after the
//                      borrow: netEquity ≥ Σ N·IMF(N) over its borrows (InsufficientMargin), every
//                      asset valued at its mark price (mark.ts); a borrowed asset without a mark
//                      price cannot be valued (BorrowNoMarkPrice).
// A new lend or borrow is a positive multiple of the pool's step; a repayment or redemption is
// any positive quantity up to the position (interest leaves positions off the step). A Closed
// pool refuses everything (LendPoolNotOpen). Answer: a BorrowLendRecord of the move addressed to
// the request, the balance as an event, then a Result whose value is the position after it,
// signed (lent positive, borrowed negative).
//
// Interest, every hour on the hour of engine time (TimerKind.Interest). For each pool with
// something borrowed, from its totals before the hour: the borrow rate r (lending.ts, rounded
// up) and the lend rate (rounded down). Each borrow grows by its hour of interest at r, rounded
// up; each lend by its hour at the lend rate, rounded down. The exchange keeps the difference:
// its share floor(fee × B × r × 1 h / 1 y) to interestFeeUnits, the rest (what rounding against
// each party kept, never negative since Σ lend interest ≤ (1 − fee) × the exact borrow interest)
// to interestRoundingUnits. A BorrowLendRecord per payment (source Interest), an event for
// everyone. A position opened within an hour pays or earns that hour in full at the next tick;
// there is no separate entry fee. After the hour's interest every pool is sampled: a
// LendPoolSampleRecord (totals, rates, utilization, the hour) per pool, an event for everyone that
// the history writer keeps for GET /api/v1/borrowLend/markets/history. With
// EngineConfig.interestStepAccounts the lenders are paid, and the pools sampled, in the hour's pass
// (interest-pass.ts): the same payments, spread over the commands after the hour.
//
// Records of moves carry their source (Manual for BorrowLend, the spot margin flag for the moves
// of auto-funding.ts); a move that closes its position carries the closed position's id and
// interest, so a history can tell which position it ended.
//
// A withdrawal by an account that borrows must pass the same margin test with the withdrawn units
// gone (funds/capital.ts): otherwise borrowed funds could leave the exchange uncovered.
//
// A borrow's IMF takes the account's leverage limit (account-settings.ts): max(imf.base,
// 1/leverageLimit, imf.factor·√N). Each hour of interest re-checks every borrower's liquidating
// state. The mark_ticks of the records is the asset's USDC book price (mark.ts bookMarkOf).

import {
  BorrowLendEvent, BorrowLendSide, BorrowLendSource, FRONT_ID_NONE, LendPoolStateCode, ResultCode,
  type BorrowLendCommand, type CommandHeader, type QueryBorrowLendPositionsCommand,
} from '../../bus/types.js';
import { assert } from '../assert.js';
import type { EngineState } from '../state.js';
import { NO_TIMER, TimerKind } from '../timers.js';
import { expectSnapshot, type SnapshotReader, type SnapshotWriter, type StateDigest } from '../parts.js';
import type { AmountUnits } from '../units.js';
import { admits } from './account.js';
import { notionalCeil } from './collateral.js';
import { FRACTION_ONE } from './fixed.js';
import { positionImf, positionMmf } from './fractions.js';
import { hourlyUnits, MS_PER_HOUR, MS_PER_YEAR, withinCeiling } from './lending.js';
import { isLiquidating, reviewLiquidating } from './liquidating.js';
import { creditLendInterest, finishInterestPass, payLendersOf, poolRates, samplePools, startInterestPass } from './interest-pass.js';
import { bookMarkOf, markOf } from './mark.js';
import { startThrottleStep, throttleCeilingOf } from './throttle.js';
import { admissionFigures } from './valuation.js';

/** One hour of engine time. */
export const HOUR_US = Number(MS_PER_HOUR) * 1000;

/** The first hour boundary strictly after `timeUs`. */
export function nextHourUs(timeUs: number): number {
  return Math.floor(timeUs / HOUR_US) * HOUR_US + HOUR_US;
}

interface Move {
  event: BorrowLendEvent;
  code: ResultCode;
}

/** What a BorrowLend of `qty` would do, and whether it may (no change). */
function decide(s: EngineState, accountId: number, assetIndex: number, side: number, qty: number): Move {
  const pools = s.pools;
  const pool = pools.poolOf[assetIndex]!;
  const cell = pools.cell(accountId, assetIndex);
  const available = s.ledger.availableUnits(accountId, assetIndex);
  const lentTotal = BigInt(pools.lentTotal[assetIndex]);
  const open = pools.stateOf[assetIndex] === LendPoolStateCode.Open;
  const onStep = qty % Number(pool.stepUnits) === 0;
  const refuse = (event: BorrowLendEvent, code: ResultCode): Move => ({ event, code });
  if (side === BorrowLendSide.Lend) {
    if (pools.borrowed[cell] > 0) {
      if (qty > pools.borrowed[cell]) return refuse(BorrowLendEvent.BorrowRepay, ResultCode.LendRequiresBorrowRepay);
      return refuse(BorrowLendEvent.BorrowRepay, available < qty ? ResultCode.InsufficientFunds : ResultCode.Ok);
    }
    if (isLiquidating(s, accountId)) return refuse(BorrowLendEvent.Lend, ResultCode.AccountLiquidating);
    if (!onStep) return refuse(BorrowLendEvent.Lend, ResultCode.BorrowLendQuantityInvalid);
    if (!open) return refuse(BorrowLendEvent.Lend, ResultCode.LendPoolNotOpen);
    if (available < qty) return refuse(BorrowLendEvent.Lend, ResultCode.InsufficientFunds);
    return refuse(BorrowLendEvent.Lend, lentTotal + BigInt(qty) > pool.openBorrowLendLimitUnits ? ResultCode.LendLimit : ResultCode.Ok);
  }
  if (pools.lent[cell] > 0) {
    if (qty > pools.lent[cell]) return refuse(BorrowLendEvent.LendRedeem, ResultCode.BorrowRequiresLendRedeem);
    return refuse(BorrowLendEvent.LendRedeem, redeemRefusal(s, assetIndex, qty));
  }
  if (isLiquidating(s, accountId)) return refuse(BorrowLendEvent.Borrow, ResultCode.AccountLiquidating);
  if (!onStep) return refuse(BorrowLendEvent.Borrow, ResultCode.BorrowLendQuantityInvalid);
  if (!open) return refuse(BorrowLendEvent.Borrow, ResultCode.LendPoolNotOpen);
  const supply = borrowRefusal(s, assetIndex, qty, 0);
  if (supply !== ResultCode.Ok) return refuse(BorrowLendEvent.Borrow, supply);
  return refuse(BorrowLendEvent.Borrow, marginAfter(s, accountId, assetIndex, BigInt(qty), BigInt(qty)));
}

/**
 * The pool's check of a redemption of `redeemUnits`: what stays lent must keep utilization within
 * the throttle's ceiling, itself within maxUtilization (throttle.ts; any redemption passes while
 * nothing is borrowed). Ok or InsufficientSupply.
 */
export function redeemRefusal(s: EngineState, assetIndex: number, redeemUnits: number): ResultCode {
  const pools = s.pools;
  const borrowedTotal = BigInt(pools.borrowedTotal[assetIndex]);
  const rest = BigInt(pools.lentTotal[assetIndex]) - BigInt(redeemUnits);
  const fits = borrowedTotal === 0n || (rest > 0n && withinCeiling(borrowedTotal, rest, throttleCeilingOf(s, assetIndex)));
  return fits ? ResultCode.Ok : ResultCode.InsufficientSupply;
}

/**
 * The pool's check of a new borrow of `borrowUnits` after `redeemUnits` of the same request were
 * redeemed: the borrowed total within openBorrowLendLimit (BorrowLimit), then utilization of what
 * stays lent within the throttle's ceiling, itself within maxUtilization (throttle.ts;
 * InsufficientSupply). BorrowLend, auto-funding and the
 * largest-borrow query all ask it.
 */
export function borrowRefusal(s: EngineState, assetIndex: number, borrowUnits: number, redeemUnits: number): ResultCode {
  const pools = s.pools;
  const pool = pools.poolOf[assetIndex]!;
  const borrowedAfter = BigInt(pools.borrowedTotal[assetIndex]) + BigInt(borrowUnits);
  const lentAfter = BigInt(pools.lentTotal[assetIndex]) - BigInt(redeemUnits);
  if (borrowedAfter > pool.openBorrowLendLimitUnits) return ResultCode.BorrowLimit;
  if (lentAfter === 0n || !withinCeiling(borrowedAfter, lentAfter, throttleCeilingOf(s, assetIndex))) return ResultCode.InsufficientSupply;
  return ResultCode.Ok;
}

/**
 * The margin test: the account as it would be with `heldDelta` more units of one asset available
 * and `borrowDelta` more borrowed passes iff netEquity ≥ Σ N·IMF(N) over its borrows, at mark
 * prices (valuation.ts; a borrow: both +qty; a withdrawal: held −qty). Ok, InsufficientMargin, or
 * BorrowNoMarkPrice when a borrowed asset has no mark price to value it at; a borrow
 * (`borrowDelta` > 0) also when the valuation rests on anything but fresh index prices.
 */
export function marginAfter(s: EngineState, accountId: number, changedIndex: number, heldDelta: bigint, borrowDelta: bigint): ResultCode {
  const figures = admissionFigures(s, accountId, { assetIndex: changedIndex, heldDelta, borrowDelta });
  if (figures.unpriced || (borrowDelta > 0n && figures.stale)) return ResultCode.BorrowNoMarkPrice;
  return admits(figures.netEquityUnits, figures) ? ResultCode.Ok : ResultCode.InsufficientMargin;
}

/** Whether the account borrows anything or holds a perpetual position (a withdrawal then needs the margin test). */
export function borrowsAnything(s: EngineState, accountId: number): boolean {
  for (let assetIndex = 0; assetIndex < s.pools.assetCount; assetIndex++) if (s.pools.borrowed[s.pools.cell(accountId, assetIndex)] > 0) return true;
  const p = s.positions;
  for (let ordinal = 0; ordinal < p.perpCount; ordinal++) if (p.isOpen(p.cell(accountId, p.marketOf[ordinal]))) return true;
  return false;
}

/** BorrowLend: lend, repay, redeem or borrow (header rules). */
export function borrowLend(s: EngineState, cmd: BorrowLendCommand): void {
  const pools = s.pools;
  const assetIndex = s.catalog.assetIndex(cmd.assetId);
  const qty = cmd.quantityUnits;
  let code: ResultCode = ResultCode.Ok;
  if (!s.accounts.exists(cmd.accountId)) code = ResultCode.UnknownAccount;
  else if (assetIndex < 0 || pools.poolOf[assetIndex] === undefined || (cmd.side as number) > BorrowLendSide.Lend) code = ResultCode.LendPoolUnknown;
  else if (!Number.isSafeInteger(qty) || qty <= 0) code = ResultCode.BorrowLendQuantityInvalid;
  else if (pools.stateOf[assetIndex] === LendPoolStateCode.Closed) code = ResultCode.LendPoolNotOpen;
  if (code !== ResultCode.Ok) return s.out.result(code, 0, cmd.frontId, cmd.requestId);
  const move = decide(s, cmd.accountId, assetIndex, cmd.side, qty);
  if (move.code !== ResultCode.Ok) return s.out.result(move.code, 0, cmd.frontId, cmd.requestId);
  recordedMove(s, cmd.accountId, assetIndex, move.event, qty, BorrowLendSource.Manual, cmd.frontId, cmd.requestId);
  const cell = pools.cell(cmd.accountId, assetIndex);
  reviewLiquidating(s, cmd.accountId);
  s.out.result(ResultCode.Ok, pools.lent[cell] - pools.borrowed[cell], cmd.frontId, cmd.requestId);
}

/**
 * Makes one checked move made by `source`, arms the interest timer, and writes the move's record
 * (addressed to the request, or an event for everyone with FRONT_ID_NONE) and the balance as an
 * event. A move that closes its position reports that position's id and interest.
 */
export function recordedMove(
  s: EngineState, accountId: number, assetIndex: number, event: BorrowLendEvent, qty: number, source: BorrowLendSource, frontId: number, requestId: number,
): void {
  const cell = s.pools.cell(accountId, assetIndex);
  const positionId = s.pools.positionId[cell];
  const interest = s.pools.interest[cell];
  applyMove(s, accountId, assetIndex, event, qty);
  armInterest(s);
  s.out.borrowLend(accountId, assetIndex, event, qty, 0n, bookMarkOf(s, assetIndex), source, positionId, interest, frontId, requestId);
  s.out.balance(accountId, assetIndex, FRONT_ID_NONE, 0);
}

/** Arms the hourly interest timer once some position is open (header). */
export function armInterest(s: EngineState): void {
  const pools = s.pools;
  if (pools.interestTimer === NO_TIMER && pools.anyPosition()) pools.interestTimer = s.timers.add(nextHourUs(s.lastTimeUs), TimerKind.Interest, 0);
}

/** Makes one checked move: the ledger and the pool change together. */
export function applyMove(s: EngineState, accountId: number, assetIndex: number, event: BorrowLendEvent, qty: number): void {
  const pools = s.pools;
  const amount = qty as AmountUnits;
  switch (event) {
    case BorrowLendEvent.Lend:
      s.ledger.toPool(accountId, assetIndex, amount);
      return pools.addLent(accountId, assetIndex, qty, s.lastSeq);
    case BorrowLendEvent.LendRedeem:
      pools.removeLent(accountId, assetIndex, qty);
      return s.ledger.fromPool(accountId, assetIndex, amount);
    case BorrowLendEvent.Borrow:
      pools.addBorrowed(accountId, assetIndex, qty, s.lastSeq);
      return s.ledger.fromPool(accountId, assetIndex, amount);
    case BorrowLendEvent.BorrowRepay:
      s.ledger.toPool(accountId, assetIndex, amount);
      return pools.removeBorrowed(accountId, assetIndex, qty);
    default:
      throw new Error(`engine assertion failed: borrow/lend move ${event}`);
  }
}

/**
 * The interest timer is due: every pool accrues an hour (header rules), the throttle's next step
 * starts (throttle.ts), then the timer is set again while positions remain.
 */
export function accrueInterest(s: EngineState, timer: number): void {
  const pools = s.pools;
  const dueUs = s.timers.dueOf(timer);
  s.timers.remove(timer);
  pools.interestTimer = NO_TIMER;
  // In steps (interest-pass.ts) the lenders are paid in the pass; a pass still running ends first.
  const lenders = s.interestPass.stepAccounts === 0;
  if (!lenders) finishInterestPass(s);
  // Without the lenders, only the borrowers' cells accrue: the borrower set, ascending, once for every pool.
  const borrowers = lenders ? null : pools.borrowersAscending();
  for (let assetIndex = 0; assetIndex < pools.assetCount; assetIndex++) {
    if (pools.poolOf[assetIndex] !== undefined && pools.borrowedTotal[assetIndex] > 0) accruePool(s, assetIndex, borrowers);
  }
  if (lenders) {
    samplePools(s, dueUs);
    startThrottleStep(s);
  }
  startInterestPass(s, dueUs);
  if (pools.anyPosition()) pools.interestTimer = s.timers.add(dueUs + HOUR_US, TimerKind.Interest, 0);
}

/**
 * One pool's hour at the rates of its totals: every borrow grows by its interest rounded up, and
 * without `borrowers` every lend by its interest rounded down, every account's cell walked; the
 * exchange's share to its fee line and the rest of the difference to the rounding line. With
 * `borrowers` (the borrowing accounts, ascending) only their cells accrue, the rounding line keeps
 * the lenders' part and the interest pass pays it at the lend rate fixed here (interest-pass.ts).
 */
function accruePool(s: EngineState, assetIndex: number, borrowers: Int32Array | null): void {
  const lenders = borrowers === null;
  const pools = s.pools;
  const pool = pools.poolOf[assetIndex]!;
  const borrowedTotal = BigInt(pools.borrowedTotal[assetIndex]);
  const { rate, earnRate } = poolRates(s, assetIndex);
  const mark = bookMarkOf(s, assetIndex);
  const owedPerHour = rate * MS_PER_HOUR;
  const earnedPerHour = earnRate * MS_PER_HOUR;
  // Sums of units, each far below its position, so of safe integers.
  let owed = 0;
  let earned = 0;
  const { borrowed, lent, assetCount } = pools;
  const count = borrowers === null ? s.accounts.count : borrowers.length;
  // Every account's cell of the asset, ascending (a plain stride: most accounts hold no position),
  // or only the borrowers'.
  for (let k = 1; k <= count; k++) {
    const accountId = borrowers === null ? k : borrowers[k - 1];
    const cell = accountId * assetCount + assetIndex;
    if (borrowed[cell] === 0 && lent[cell] === 0) continue;
    if (borrowed[cell] > 0) {
      const units = hourlyUnits(borrowed[cell], owedPerHour, 'owed');
      if (units === 0) continue;
      pools.addBorrowed(accountId, assetIndex, units, s.lastSeq);
      pools.interest[cell] += units;
      owed += units;
      s.out.borrowLend(accountId, assetIndex, BorrowLendEvent.BorrowInterest, units, rate, mark, BorrowLendSource.Interest, 0, 0, FRONT_ID_NONE, 0);
    } else if (lenders && lent[cell] > 0) {
      const units = hourlyUnits(lent[cell], earnedPerHour, 'earned');
      if (units === 0) continue;
      creditLendInterest(s, accountId, assetIndex, units, earnRate, mark);
      earned += units;
    }
  }
  const share = (pool.fee * borrowedTotal * rate * MS_PER_HOUR) / (FRACTION_ONE * FRACTION_ONE * MS_PER_YEAR);
  if (!lenders) payLendersOf(s, assetIndex, earnRate);
  assert(Number.isSafeInteger(owed) && Number.isSafeInteger(earned), 'an hour of interest beyond the safe-integer range');
  const rounding = BigInt(owed) - BigInt(earned) - share;
  assert(rounding >= 0n, 'lenders earned more than borrowers paid after the exchange share');
  pools.interestFeeUnits[assetIndex] += Number(share);
  pools.interestRoundingUnits[assetIndex] += Number(rounding);
}

/** QueryLendPools: one LendPoolRecord per pool, then a Result (value = their number). */
export function queryLendPools(s: EngineState, cmd: CommandHeader): void {
  const pools = s.pools;
  let count = 0;
  for (let assetIndex = 0; assetIndex < pools.assetCount; assetIndex++) {
    if (pools.poolOf[assetIndex] === undefined) continue;
    const now = poolRates(s, assetIndex);
    s.out.lendPool(assetIndex, now.rate, now.earnRate, now.utilization, bookMarkOf(s, assetIndex), cmd.frontId, cmd.requestId);
    count++;
  }
  s.out.result(ResultCode.Ok, count, cmd.frontId, cmd.requestId);
}

/** QueryBorrowLendPositions: one BorrowLendRecord (Position) per asset the account lends or borrows, then a Result. */
export function queryBorrowLendPositions(s: EngineState, cmd: QueryBorrowLendPositionsCommand): void {
  const pools = s.pools;
  const nowUs = s.out.applyTimeUs;
  if (!s.accounts.exists(cmd.accountId)) return s.out.result(ResultCode.UnknownAccount, 0, cmd.frontId, cmd.requestId);
  let count = 0;
  for (let assetIndex = 0; assetIndex < pools.assetCount; assetIndex++) {
    const cell = pools.cell(cmd.accountId, assetIndex);
    if (pools.lent[cell] === 0 && pools.borrowed[cell] === 0) continue;
    const mark = markOf(s, assetIndex, nowUs);
    let imf = 0n;
    let mmf = 0n;
    const collateral = pools.collateralOf[assetIndex];
    if (pools.borrowed[cell] > 0 && mark !== null && collateral !== undefined) {
      const quoteDecimals = pools.decimalsOf[pools.valuationIndex];
      const notional = notionalCeil(BigInt(pools.borrowed[cell]), mark.price);
      imf = positionImf(collateral.imf, notional, quoteDecimals, BigInt(s.accountSettings.leverageLimitHundredths[cmd.accountId]));
      mmf = positionMmf(collateral.mmf, notional, quoteDecimals);
    }
    s.out.borrowLendPosition(cmd.accountId, assetIndex, imf, mmf, bookMarkOf(s, assetIndex), cmd.frontId, cmd.requestId);
    count++;
  }
  s.out.result(ResultCode.Ok, count, cmd.frontId, cmd.requestId);
}


// The pools' part of the snapshot and of the hash (pools.ts), with the interest timer's due time.

export function exportPoolsTo(s: EngineState, w: SnapshotWriter): void {
  s.pools.exportTo(w, s.accounts.count, interestDueUs(s));
}

/** Format 5 on; an older snapshot has no pool part: every pool starts empty. */
export function importPoolsFrom(s: EngineState, r: SnapshotReader, hasPart: boolean): void {
  if (!hasPart) return;
  const dueUs = s.pools.importFrom(r, s.accounts.count);
  expectSnapshot(dueUs === -1 || (Number.isSafeInteger(dueUs) && dueUs > s.lastTimeUs && dueUs % HOUR_US === 0), 'interest due at a bad time');
  if (dueUs >= 0) s.pools.interestTimer = s.timers.add(dueUs, TimerKind.Interest, 0);
}

export function hashPoolsInto(s: EngineState, d: StateDigest): void {
  s.pools.hashInto(d, s.accounts.count, interestDueUs(s));
}

function interestDueUs(s: EngineState): number {
  return s.pools.interestTimer === NO_TIMER ? -1 : s.timers.dueOf(s.pools.interestTimer);
}
