// The liquidation waterfall of the unified margin account's borrows (venue mechanics §4).
//
// Entry. When an account's maintenance margin ratio reaches 100 % (margin/liquidating.ts flips
// its Liquidating flag), every open order of it is cancelled at once (orderCancelled, reason
// Liquidation) and the step timer is armed (TimerKind.LiquidationStep, one stepIntervalUs of
// engine time later) if it does not wait already.
//
// Steps. Each time the timer is due, every liquidating account, in ascending account id, takes
// one step; the timer is set again one interval after the command that ran it while some account
// is still liquidating (so a long quiet spell runs one step, not one per interval it spans). A
// step, re-checking the ratio after each stage and stopping (the flag clears) once it is below
// 100 % or no borrow is left:
//   0. cancel the account's open orders (a liquidating account may place orders that buy what it
//      owes; what they lock is freed for the waterfall);
//   a. repay: redeem every lend the pool lets go (its throttle ceiling); a lend it does not let
//      go is auto-deleveraged (lend-adl.ts: other accounts' borrows of the asset close against
//      it, largest borrow first, and pay the lender its value at mark in USDC); then repay each
//      borrow from the available units of the borrowed asset;
//   b. unwind on the book (unwind.ts): for the borrow with the largest N·MMF, system IOC market
//      orders of the account that sell its collateral for USDC and buy the borrowed asset with
//      USDC, at most chunkBps of the borrow per step, then repay as in (a). Liquidation fees go to
//      the insurance fund (spot/settle.ts);
//   c. bankruptcy (bankruptcy.ts): when nothing the account holds can be sold any more and a
//      borrow remains (and no position: unwind.ts closes positions first), the insurance fund
//      covers it, and what the fund cannot cover is written off the pool's lenders pro rata.
// Perpetual positions (perp-unwind.ts, backstop.ts, adl.ts): they join (b)'s choice of what to
// close; a step that finds the account holding a position with net equity ≤ 0 skips (b) and
// deleverages every position (the insurance fund covers the deficit first, then auto-deleveraging
// closes each position against opposite-side holders at its bankruptcy price). With backstop
// liquidity providers set (§4.2, backstop.ts), a solvent account below the Auto-Close margin
// fraction skips (b) too: every position of it goes to the providers at mark, and what they do not
// take is deleveraged as above; a position whose book order in (b) filled nothing goes to the
// providers the same way (with none set: it is deleveraged at once).

import { BorrowLendEvent, BorrowLendSource, ExpiryReason, FRONT_ID_NONE, HeaderFlag, OrderEvent, OrderStatus, ResultCode } from '../../bus/types.js';
import { assert } from '../assert.js';
import { cancelOpenOrder, closeOrder } from '../book/cancel.js';
import { NO_SLOT, OrderState, Of } from '../book/orders.js';
import { recordedMove, redeemRefusal } from '../margin/borrow-lend.js';
import { isLiquidating, reviewLiquidating } from '../margin/liquidating.js';
import type { EngineState } from '../state.js';
import { NO_TIMER, TimerKind } from '../timers.js';
import { deleverageAll, positionsBankrupt } from './adl.js';
import { backstopAll, backstopPosition, belowAutoClose } from './backstop.js';
import { coverBankruptcy } from './bankruptcy.js';
import { deleverageLend } from './lend-adl.js';
import { largestPosition } from './perp-unwind.js';
import { unwindStep, UnwindOutcome } from './unwind.js';

/** An account just entered the liquidating state: cancel its open orders, arm the step timer (header). */
export function enterLiquidation(s: EngineState, accountId: number): void {
  cancelAccountOrders(s, accountId);
  armStep(s);
}

/**
 * An account stays liquidating: its steps continue. The timer waits already, except after loading
 * a snapshot written before the waterfall existed, which this re-check then arms.
 */
export function keepLiquidating(s: EngineState): void {
  if (!s.insurance.stepping) armStep(s);
}

/** Arms the step timer one interval from now unless it waits already. */
function armStep(s: EngineState): void {
  const fund = s.insurance;
  if (fund.stepTimer === NO_TIMER) fund.stepTimer = s.timers.add(s.lastTimeUs + fund.config.stepIntervalUs, TimerKind.LiquidationStep, 0);
}

/**
 * Cancels every open (pending or resting) order of the account with reason Liquidation, oldest
 * first. An order being matched in this apply is not open, and is left to end as it will.
 */
export function cancelAccountOrders(s: EngineState, accountId: number): void {
  const pool = s.pool;
  for (let slot = pool.accountHead[accountId], after = NO_SLOT; slot !== NO_SLOT; slot = after) {
    after = pool.i32[slot << Of.w32 | Of.accountNext];
    const state = pool.u8[slot << Of.w8 | Of.state];
    if (state !== OrderState.Pending && state !== OrderState.Resting) continue;
    const wasPending = state === OrderState.Pending;
    cancelOpenOrder(s, slot, ExpiryReason.Liquidation);
    // A resting order's place was answered long ago; a pending one's answer went out with the cancel.
    if (!wasPending) s.out.order(slot, OrderEvent.None, OrderStatus.Cancelled, ExpiryReason.Liquidation, FRONT_ID_NONE, 0, HeaderFlag.Last);
    closeOrder(s, slot);
  }
}

/** The step timer is due: one step for every liquidating account, in account order, then re-arm while any is left. */
export function liquidationStep(s: EngineState, timer: number): void {
  const fund = s.insurance;
  assert(fund.stepTimer === timer, 'a liquidation step timer the fund does not record');
  s.timers.remove(timer);
  fund.stepTimer = NO_TIMER;
  fund.stepping = true;
  let left = false;
  for (let accountId = 1; accountId <= s.accounts.count; accountId++) {
    if (!isLiquidating(s, accountId)) continue;
    stepAccount(s, accountId);
    if (isLiquidating(s, accountId)) left = true;
  }
  fund.stepping = false;
  if (left) armStep(s);
}

/** One step of one account (header stages 0, a, b, c; positions: the backstop, then the fund and ADL), stopping once the account is out of the state. */
function stepAccount(s: EngineState, accountId: number): void {
  cancelAccountOrders(s, accountId);
  repayFromHoldings(s, accountId);
  if (!stillLiquidating(s, accountId)) return;
  if (positionsBankrupt(s, accountId)) {
    deleverageAll(s, accountId);
    reviewLiquidating(s, accountId);
    return;
  }
  if (belowAutoClose(s, accountId)) {
    backstopAll(s, accountId);
    reviewLiquidating(s, accountId);
    return;
  }
  const outcome = unwindStep(s, accountId);
  repayFromHoldings(s, accountId);
  if (!stillLiquidating(s, accountId)) return;
  if (outcome === UnwindOutcome.Unfilled) {
    backstopPosition(s, accountId, largestPosition(s, accountId).marketIndex);
    reviewLiquidating(s, accountId);
  } else if (outcome === UnwindOutcome.NothingToSell) {
    coverBankruptcy(s, accountId);
    reviewLiquidating(s, accountId);
  }
}

/** Re-checks the ratio (the flag clears below 100 %, or with neither a borrow nor a position); whether the account is still liquidating. */
function stillLiquidating(s: EngineState, accountId: number): boolean {
  reviewLiquidating(s, accountId);
  return isLiquidating(s, accountId);
}

/**
 * Stage (a): redeems every lend of the account its pool lets go (and deleverages the others,
 * lend-adl.ts), then repays each borrow from the available units of the borrowed asset (moves of
 * source Liquidation).
 */
export function repayFromHoldings(s: EngineState, accountId: number): void {
  const pools = s.pools;
  for (let assetIndex = 0; assetIndex < pools.assetCount; assetIndex++) {
    const cell = pools.cell(accountId, assetIndex);
    const lent = pools.lent[cell];
    if (lent === 0) continue;
    if (redeemRefusal(s, assetIndex, lent) === ResultCode.Ok) move(s, accountId, assetIndex, BorrowLendEvent.LendRedeem, lent);
    else deleverageLend(s, accountId, assetIndex);
  }
  for (let assetIndex = 0; assetIndex < pools.assetCount; assetIndex++) {
    const borrowed = pools.borrowed[pools.cell(accountId, assetIndex)];
    const repaid = Math.min(borrowed, s.ledger.availableUnits(accountId, assetIndex));
    if (repaid > 0) move(s, accountId, assetIndex, BorrowLendEvent.BorrowRepay, repaid);
  }
}

function move(s: EngineState, accountId: number, assetIndex: number, event: BorrowLendEvent, units: number): void {
  recordedMove(s, accountId, assetIndex, event, units, BorrowLendSource.Liquidation, FRONT_ID_NONE, 0);
}
