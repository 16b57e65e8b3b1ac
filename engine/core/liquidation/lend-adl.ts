// Borrow/lend auto-deleveraging (venue mechanics §2 "At 100 % utilization"): a liquidated lender
// is made whole in notional terms when its pool cannot let its lend go.
//
// When. Stage (a) of the waterfall (waterfall.ts) redeems each lend of a liquidating account that
// its pool lets go whole (redeemRefusal: utilization within the throttle's ceiling). A lend of an
// asset X the pool refuses is deleveraged instead, when X is not the valuation asset (USDC: paying
// its value in USDC would be the same units) and has a mark price (mark.ts markOf; without one
// the next step tries again).
//
// Against whom. The ADL providers are the other accounts that borrow X, largest borrow of X
// first, ties by the lower account id (a borrower's own liquidating state does not matter). Each
// in turn closes q = the most of min(its borrow, the lend left) that it can pay for, until the
// lend is closed or no provider is left (what is left stays lent; the next step tries again).
//
// The price. q units of X are worth v = ceil(q × X's mark) USDC (the lender is made whole; the
// rounding is the provider's). The provider pays v from its available USDC; what it lacks it
// borrows from the USDC pool when it lends no USDC and the pool has the room (borrowRefusal: the
// borrow limit and the throttle's ceiling; no margin test and no step: the debt changes asset at
// mark, it does not grow). q is the largest quantity whose v the provider can pay that way.
//
// The moves. X: the lender's lend and the provider's borrow both fall by q (the pool's lent and
// borrowed totals too; no unit of X moves, so every balance of X is conserved). USDC: v moves from
// the provider's available balance to the lender's. Records, each an event for everyone with the
// balances it changes: the provider's USDC borrow (Borrow, source AdlProvider) when it has one,
// its repayment of X (BorrowRepay, AdlProvider), the lender's redemption of X (LendRedeem,
// LiquidationAdl). A move that closes a position reports its id and interest, as any move does.
// Afterwards each provider's liquidating state is re-checked (liquidating.ts), in ranking order.

import { BorrowLendEvent, BorrowLendSource, FRONT_ID_NONE, ResultCode } from '../../bus/types.js';
import { borrowRefusal, recordedMove } from '../margin/borrow-lend.js';
import { largestPassing } from '../margin/auto-funding.js';
import { notionalCeil, type UnitPrice } from '../margin/collateral.js';
import { reviewLiquidating } from '../margin/liquidating.js';
import { bookMarkOf, markOf } from '../margin/mark.js';
import type { EngineState } from '../state.js';
import type { AmountUnits } from '../units.js';

/** Deleverages the account's lend of `assetIndex` its pool refused to let go (header). */
export function deleverageLend(s: EngineState, accountId: number, assetIndex: number): void {
  const pools = s.pools;
  const mark = assetIndex === pools.valuationIndex ? null : markOf(s, assetIndex);
  if (mark === null) return;
  const providers = rankProviders(s, accountId, assetIndex);
  for (const provider of providers) {
    const left = pools.lent[pools.cell(accountId, assetIndex)];
    if (left === 0) break;
    const units = payableUnits(s, provider, Math.min(left, pools.borrowed[pools.cell(provider, assetIndex)]), mark.price);
    if (units > 0) closeAgainst(s, accountId, provider, assetIndex, units, mark.price);
  }
  for (const provider of providers) reviewLiquidating(s, provider);
}

/** The other accounts borrowing the asset: largest borrow first, ties by the lower account id. */
export function rankProviders(s: EngineState, accountId: number, assetIndex: number): number[] {
  const pools = s.pools;
  const ranked: number[] = [];
  for (let i = 0; i < pools.borrowerCount; i++) {
    const id = pools.borrowerIds[i];
    if (id !== accountId && pools.borrowed[pools.cell(id, assetIndex)] > 0) ranked.push(id);
  }
  const borrowedOf = (id: number): number => pools.borrowed[pools.cell(id, assetIndex)];
  return ranked.sort((a, b) => borrowedOf(b) - borrowedOf(a) || a - b);
}

/** The most of `bound` units the provider can pay for at `price` (header: its USDC, then a USDC borrow the pool allows). */
function payableUnits(s: EngineState, provider: number, bound: number, price: UnitPrice): number {
  const usdc = s.pools.valuationIndex;
  const available = BigInt(s.ledger.availableUnits(provider, usdc));
  const mayBorrow = s.pools.poolOf[usdc] !== undefined && s.pools.lent[s.pools.cell(provider, usdc)] === 0;
  return largestPassing(bound, (units) => {
    const lacking = notionalCeil(BigInt(units), price) - available;
    return lacking <= 0n || (mayBorrow && borrowRefusal(s, usdc, Number(lacking), 0) === ResultCode.Ok);
  });
}

/** Closes `units` of the lender's lend against the provider's borrow, the provider paying their USDC value (header moves). */
function closeAgainst(s: EngineState, lender: number, provider: number, assetIndex: number, units: number, price: UnitPrice): void {
  const usdc = s.pools.valuationIndex;
  const value = Number(notionalCeil(BigInt(units), price));
  const lacking = value - s.ledger.availableUnits(provider, usdc);
  if (lacking > 0) recordedMove(s, provider, usdc, BorrowLendEvent.Borrow, lacking, BorrowLendSource.AdlProvider, FRONT_ID_NONE, 0);
  closePosition(s, provider, assetIndex, BorrowLendEvent.BorrowRepay, units, BorrowLendSource.AdlProvider);
  closePosition(s, lender, assetIndex, BorrowLendEvent.LendRedeem, units, BorrowLendSource.LiquidationAdl);
  if (value === 0) return;
  s.ledger.toPool(provider, usdc, value as AmountUnits);
  s.ledger.fromPool(lender, usdc, value as AmountUnits);
  s.out.balance(provider, usdc, FRONT_ID_NONE, 0);
  s.out.balance(lender, usdc, FRONT_ID_NONE, 0);
}

/** Shrinks one side's position of the asset by `units` without moving any unit of it, and records it. */
function closePosition(s: EngineState, accountId: number, assetIndex: number, event: BorrowLendEvent, units: number, source: BorrowLendSource): void {
  const pools = s.pools;
  const cell = pools.cell(accountId, assetIndex);
  const positionId = pools.positionId[cell];
  const interest = pools.interest[cell];
  if (event === BorrowLendEvent.LendRedeem) pools.removeLent(accountId, assetIndex, units);
  else pools.removeBorrowed(accountId, assetIndex, units);
  s.out.borrowLend(accountId, assetIndex, event, units, 0n, bookMarkOf(s, assetIndex), source, positionId, interest, FRONT_ID_NONE, 0);
  s.out.balance(accountId, assetIndex, FRONT_ID_NONE, 0);
}
