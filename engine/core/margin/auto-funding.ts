// Spot margin (venue mechanics §1.5 "Spot orders", §2 "Automation flags"): funding a spot order or
// a withdrawal beyond the available balance, using a fill's proceeds, and the largest borrow,
// withdrawal or order fund that passes.
//
// Funding. An order or withdrawal that needs `need` units of an asset with only `available` of
// them free covers the shortfall, in this order and only as its flags ask:
//   autoLendRedeem  redeems min(shortfall, the account's lend of the asset), keeping the pool's
//                   utilization within the throttle's ceiling (throttle.ts; InsufficientSupply). A
//                   Closed pool redeems nothing.
//   autoBorrow      borrows the rest, rounded up to the pool's step (the extra units stay
//                   available), by BorrowLend's rules for a new borrow: no lend of the asset left
//                   (BorrowRequiresLendRedeem), the pool Open (LendPoolNotOpen), the borrowed total
//                   within openBorrowLendLimit (BorrowLimit), utilization within the throttle's
//                   ceiling (InsufficientSupply), and the margin test marginAfter (InsufficientMargin,
//                   BorrowNoMarkPrice). An asset without a pool cannot be borrowed.
// Whatever is still short is InsufficientFunds. Redemption happens only with autoLendRedeem: the
// venue's docs say lends redeem "to fund spot trades and withdrawals" whatever the account's
// autoLend setting, and its order and withdrawal bodies carry the autoLendRedeem flag that asks
// for it; an order without the flag keeps the exact lock rule of spot/hold.ts.
//
// The borrow happens when the order is placed, not when it fills (the venue borrows on fill):
// the borrowed units are then locked with the rest of the hold, so the hold rule stays exact and a
// fill can never find its funds missing. A cancelled or expired order gives its hold back to the
// available balance; the borrow stays until repaid (by BorrowLend, or by a later order's
// autoBorrowRepay). Only orders whose hold does not depend on the available balance are funded:
// limit orders, market asks by quantity and market bids by quote quantity; a market bid by
// quantity and a market ask by quote quantity keep their available-capped holds.
//
// Proceeds. Each fill credits the received asset net of its fee, and a deposit credits its
// amount; then, as the order's flags (a fill) or the account's settings (a fill or a deposit:
// autoRepayBorrows, autoLend of PATCH /api/v1/account, account-settings.ts) ask:
//   repay   (autoBorrowRepay, autoRepayBorrows) repays min(credited, the account's borrow of
//           that asset), unless the pool is Closed;
//   lend    (autoLend) lends what is left of the credited units, rounded down to the pool's
//           step, when the pool is Open, the account borrows none of the asset, is not
//           liquidating, and within openBorrowLendLimit (cut down to fit, in whole steps).
// Nothing else happens when a move cannot: it is skipped silently. Only the credited units move:
// a balance the account already held (a borrow's own proceeds among them) stays where it is. A
// deposit then re-checks the account's liquidating state (a repayment may clear it).
// Every move writes a BorrowLendRecord as an event for everyone (like interest), and a balance;
// its source is the flag that made it (AutoBorrow, AutoLendRedeem, AutoBorrowRepay, AutoLend).
//
// Largest quantities (limits queries): a binary search over the whole check. The check only gets
// harder as the quantity grows (more borrowed or withdrawn never raises net equity and only raises
// Σ N·IMF; utilization and the borrow limit are monotone), so the largest passing quantity is found
// exactly in ⌈log2(bound)⌉ checks: borrows in whole pool steps up to the pool's room, withdrawals
// and order funds in units up to available + lend + the pool's room.

import { AccountSettingFlag, BorrowLendEvent, BorrowLendSource, CommandFlag, FRONT_ID_NONE, LendPoolStateCode, ResultCode } from '../../bus/types.js';
import type { EngineState } from '../state.js';
import { borrowRefusal, borrowsAnything, marginAfter, recordedMove, redeemRefusal } from './borrow-lend.js';
import { isLiquidating, reviewLiquidating } from './liquidating.js';

/** The moves a funding plans: redeem first, then borrow. */
export interface Funding {
  redeemUnits: number;
  borrowUnits: number;
}

/** Whether the flags ask for any funding beyond the available balance. */
export function fundsBeyondAvailable(flags: number): boolean {
  return (flags & (CommandFlag.AutoLendRedeem | CommandFlag.AutoBorrow)) !== 0;
}

/**
 * Plans covering `needUnits` of an asset (header rules, no change); `withdrawn` units leave the
 * account (a withdrawal) and are part of the margin test. Ok fills `plan`.
 */
export function planFunding(
  s: EngineState, accountId: number, assetIndex: number, needUnits: number, withdrawn: number, flags: number, plan: Funding,
): ResultCode {
  const pools = s.pools;
  plan.redeemUnits = 0;
  plan.borrowUnits = 0;
  let short = needUnits - s.ledger.availableUnits(accountId, assetIndex);
  const pool = pools.poolOf[assetIndex];
  const cell = pool === undefined ? -1 : pools.cell(accountId, assetIndex);
  if (short > 0 && pool !== undefined && (flags & CommandFlag.AutoLendRedeem) !== 0 && pools.stateOf[assetIndex] !== LendPoolStateCode.Closed) {
    const redeem = Math.min(short, pools.lent[cell]);
    if (redeem > 0 && redeemRefusal(s, assetIndex, redeem) !== ResultCode.Ok) return ResultCode.InsufficientSupply;
    plan.redeemUnits = redeem;
    short -= redeem;
  }
  if (short > 0 && (flags & CommandFlag.AutoBorrow) !== 0 && pool !== undefined) {
    // A liquidating account borrows nothing, whichever way the borrow is asked for.
    if (isLiquidating(s, accountId)) return ResultCode.AccountLiquidating;
    if (pools.lent[cell] > plan.redeemUnits) return ResultCode.BorrowRequiresLendRedeem;
    if (pools.stateOf[assetIndex] !== LendPoolStateCode.Open) return ResultCode.LendPoolNotOpen;
    const step = Number(pool.stepUnits);
    const borrow = Math.ceil(short / step) * step;
    const supply = borrowRefusal(s, assetIndex, borrow, plan.redeemUnits);
    if (supply !== ResultCode.Ok) return supply;
    plan.borrowUnits = borrow;
    short -= borrow;
  }
  if (short > 0) return ResultCode.InsufficientFunds;
  if (plan.borrowUnits > 0 || (withdrawn > 0 && borrowsAnything(s, accountId))) {
    return marginAfter(s, accountId, assetIndex, BigInt(plan.borrowUnits - withdrawn), BigInt(plan.borrowUnits));
  }
  return ResultCode.Ok;
}

/** Makes a planned funding: the redemption, then the borrow, each with its record and balance. */
export function applyFunding(s: EngineState, accountId: number, assetIndex: number, plan: Funding): void {
  if (plan.redeemUnits > 0) autoMove(s, accountId, assetIndex, BorrowLendEvent.LendRedeem, plan.redeemUnits);
  if (plan.borrowUnits > 0) autoMove(s, accountId, assetIndex, BorrowLendEvent.Borrow, plan.borrowUnits);
}

/**
 * A deposit credited `units` of an asset to the account: repay and lend as the account's
 * settings ask (autoRepayBorrows, autoLend; header), then re-check its liquidating state.
 */
export function applyDepositAutomation(s: EngineState, accountId: number, assetIndex: number, units: number): void {
  const flags = s.accountSettings.flags[accountId];
  const repay = (flags & AccountSettingFlag.AutoRepayBorrows) !== 0;
  const lend = (flags & AccountSettingFlag.AutoLend) !== 0;
  if ((repay || lend) && units > 0) applyProceeds(s, accountId, assetIndex, units, repay, lend);
  reviewLiquidating(s, accountId);
}

/** A fill or a deposit credited `units` of an asset to the account: repay and lend as asked (header). */
export function applyProceeds(s: EngineState, accountId: number, assetIndex: number, units: number, repay: boolean, lend: boolean): void {
  const pools = s.pools;
  const pool = pools.poolOf[assetIndex];
  if (pool === undefined || units <= 0) return;
  const cell = pools.cell(accountId, assetIndex);
  let left = units;
  if (repay && pools.borrowed[cell] > 0 && pools.stateOf[assetIndex] !== LendPoolStateCode.Closed) {
    const repaid = Math.min(left, pools.borrowed[cell]);
    autoMove(s, accountId, assetIndex, BorrowLendEvent.BorrowRepay, repaid);
    left -= repaid;
  }
  if (!lend || pools.borrowed[cell] > 0 || pools.stateOf[assetIndex] !== LendPoolStateCode.Open || isLiquidating(s, accountId)) return;
  const step = Number(pool.stepUnits);
  const room = Number(pool.openBorrowLendLimitUnits - BigInt(pools.lentTotal[assetIndex]));
  const lent = Math.floor(Math.min(left, Math.max(room, 0)) / step) * step;
  if (lent > 0) autoMove(s, accountId, assetIndex, BorrowLendEvent.Lend, lent);
}

/** The flag that makes each automatic move: the source its record carries. */
const AUTO_SOURCES: Record<number, BorrowLendSource> = {
  [BorrowLendEvent.Borrow]: BorrowLendSource.AutoBorrow,
  [BorrowLendEvent.LendRedeem]: BorrowLendSource.AutoLendRedeem,
  [BorrowLendEvent.BorrowRepay]: BorrowLendSource.AutoBorrowRepay,
  [BorrowLendEvent.Lend]: BorrowLendSource.AutoLend,
};

function autoMove(s: EngineState, accountId: number, assetIndex: number, event: BorrowLendEvent, units: number): void {
  recordedMove(s, accountId, assetIndex, event, units, AUTO_SOURCES[event], FRONT_ID_NONE, 0);
}

/** The largest k in [0, bound] with passes(k), for a `passes` true at 0 and monotone (header). */
export function largestPassing(bound: number, passes: (k: number) => boolean): number {
  let low = 0;
  let high = bound;
  while (low < high) {
    const mid = low + Math.ceil((high - low) / 2);
    if (passes(mid)) low = mid;
    else high = mid - 1;
  }
  return low;
}

/** The largest borrow BorrowLend would make now, in units (a multiple of the pool's step; 0 when none). */
export function maxBorrowUnits(s: EngineState, accountId: number, assetIndex: number): number {
  const pools = s.pools;
  const pool = pools.poolOf[assetIndex];
  if (pool === undefined || pools.stateOf[assetIndex] !== LendPoolStateCode.Open) return 0;
  if (pools.lent[pools.cell(accountId, assetIndex)] > 0 || isLiquidating(s, accountId)) return 0;
  const step = Number(pool.stepUnits);
  const borrowedTotal = BigInt(pools.borrowedTotal[assetIndex]);
  const lentTotal = BigInt(pools.lentTotal[assetIndex]);
  const room = pool.openBorrowLendLimitUnits - borrowedTotal;
  if (room <= 0n || lentTotal === 0n) return 0;
  const bound = Number((room < lentTotal ? room : lentTotal) / BigInt(step));
  const steps = largestPassing(bound, (k) => {
    const units = k * step;
    return borrowRefusal(s, assetIndex, units, 0) === ResultCode.Ok && marginAfter(s, accountId, assetIndex, BigInt(units), BigInt(units)) === ResultCode.Ok;
  });
  return steps * step;
}

/**
 * The most units of an asset an order (withdrawn 0) or a withdrawal could use now with `flags`:
 * the largest need planFunding admits. Without funding flags: the available balance (a
 * withdrawal of a borrower also passes the margin test).
 */
export function maxFundableUnits(s: EngineState, accountId: number, assetIndex: number, flags: number, withdrawal: boolean): number {
  const pools = s.pools;
  const available = s.ledger.availableUnits(accountId, assetIndex);
  const pool = pools.poolOf[assetIndex];
  let bound: number = available;
  if (pool !== undefined && (flags & CommandFlag.AutoLendRedeem) !== 0) bound += pools.lent[pools.cell(accountId, assetIndex)];
  if (pool !== undefined && (flags & CommandFlag.AutoBorrow) !== 0) {
    bound += Math.max(0, Math.min(Number(pool.openBorrowLendLimitUnits - BigInt(pools.borrowedTotal[assetIndex])), pools.lentTotal[assetIndex]));
  }
  const plan: Funding = { redeemUnits: 0, borrowUnits: 0 };
  const passes = (need: number): boolean => planFunding(s, accountId, assetIndex, need, withdrawal ? need : 0, flags, plan) === ResultCode.Ok;
  if (!passes(0)) return 0;
  return largestPassing(bound, passes);
}
