// Stage (c) of the waterfall (waterfall.ts): a liquidating account that has nothing left to sell
// (unwind.ts NothingToSell) and still borrows is bankrupt.
//
// The rule, per asset in asset order, no unit created or lost:
//   1. What the account still holds (dust below any market's minimum, an unredeemable lend is
//      left alone) goes to the insurance fund of its asset: available → fund.
//   2. Each borrow is covered by the fund of the borrowed asset, as far as it holds: fund → pool,
//      the borrow shrinks by the same units (a BorrowRepay move of source Liquidation), so the
//      pool's lenders are whole.
//   3. What the fund cannot cover is socialized: written off the lends of the pool's lenders, pro
//      rata to what each lends (floor of loss × lent / lentTotal, the units rounding left over
//      taken one each from the lenders in ascending account id), and off the borrow by the same
//      units. If the borrow passes what all lenders hold (the pool lent out interest the exchange
//      kept), the rest comes off the exchange's interest lines (rounding line first, then its
//      fee line), which the pool's own invariant (borrowed ≤ lent + lines) guarantees suffice.
//      Every lender's loss is a SocializedLossRecord, and the fund's socialized line counts it.
// Then the account neither holds nor borrows anything of that asset, and its liquidation ends at
// the re-check that follows.

import { BorrowLendEvent, BorrowLendSource, FRONT_ID_NONE } from '../../bus/types.js';
import { assert } from '../assert.js';
import { bookMarkOf } from '../margin/mark.js';
import type { EngineState } from '../state.js';

/** Stage (c) for one account (header). */
export function coverBankruptcy(s: EngineState, accountId: number): void {
  const pools = s.pools;
  for (let assetIndex = 0; assetIndex < pools.assetCount; assetIndex++) {
    const available = s.ledger.availableUnits(accountId, assetIndex);
    const borrowed = pools.borrowed[pools.cell(accountId, assetIndex)];
    if (available === 0 && borrowed === 0) continue;
    if (available > 0) {
      s.ledger.toFund(accountId, assetIndex, available);
      s.insurance.takeLeftover(assetIndex, available);
      s.out.balance(accountId, assetIndex, FRONT_ID_NONE, 0);
    }
    if (borrowed > 0) closeBorrow(s, accountId, assetIndex, borrowed);
    s.out.insurance(assetIndex, s.insurance, FRONT_ID_NONE, 0);
  }
}

/** Steps 2 and 3 for one bankrupt borrow of `borrowed` units. */
function closeBorrow(s: EngineState, accountId: number, assetIndex: number, borrowed: number): void {
  const pools = s.pools;
  const cell = pools.cell(accountId, assetIndex);
  const positionId = pools.positionId[cell];
  const interest = pools.interest[cell];
  const covered = Math.min(borrowed, s.insurance.fundUnits[assetIndex]);
  if (covered > 0) s.insurance.cover(assetIndex, covered);
  const loss = borrowed - covered;
  if (loss > 0) socialize(s, accountId, assetIndex, loss);
  pools.removeBorrowed(accountId, assetIndex, borrowed);
  s.out.borrowLend(accountId, assetIndex, BorrowLendEvent.BorrowRepay, borrowed, 0n, bookMarkOf(s, assetIndex), BorrowLendSource.Liquidation, positionId, interest, FRONT_ID_NONE, 0);
}

/** Step 3: `loss` units written off the lenders pro rata, then off the exchange's interest lines (header). */
function socialize(s: EngineState, bankruptId: number, assetIndex: number, loss: number): void {
  const pools = s.pools;
  s.insurance.socialize(assetIndex, loss);
  const lentTotal = pools.lentTotal[assetIndex];
  const fromLenders = Math.min(loss, lentTotal);
  const lenders: number[] = [];
  const shares: number[] = [];
  let shared = 0;
  for (let accountId = 1; accountId <= s.accounts.count && fromLenders > 0; accountId++) {
    const lent = pools.lent[pools.cell(accountId, assetIndex)];
    if (lent === 0) continue;
    const share = Number((BigInt(fromLenders) * BigInt(lent)) / BigInt(lentTotal));
    lenders.push(accountId);
    shares.push(share);
    shared += share;
  }
  for (let i = 0; shared < fromLenders; i++) {
    assert(i < lenders.length, 'a socialized loss left units no lender could take');
    if (shares[i] < pools.lent[pools.cell(lenders[i], assetIndex)]) {
      shares[i]++;
      shared++;
    }
  }
  for (let i = 0; i < lenders.length; i++) {
    if (shares[i] === 0) continue;
    pools.removeLent(lenders[i], assetIndex, shares[i]);
    s.out.socializedLoss(lenders[i], bankruptId, assetIndex, shares[i], pools.lent[pools.cell(lenders[i], assetIndex)]);
  }
  const rest = loss - fromLenders;
  if (rest > 0) fromInterestLines(s, bankruptId, assetIndex, rest);
}

/** The part of a loss beyond what lenders hold: off the rounding line, then the fee line. */
function fromInterestLines(s: EngineState, bankruptId: number, assetIndex: number, units: number): void {
  const pools = s.pools;
  const fromRounding = Math.min(units, pools.interestRoundingUnits[assetIndex]);
  pools.interestRoundingUnits[assetIndex] -= fromRounding;
  const fromFee = units - fromRounding;
  assert(fromFee <= pools.interestFeeUnits[assetIndex], 'a bankrupt borrow passes what its pool lent and kept');
  pools.interestFeeUnits[assetIndex] -= fromFee;
  s.out.socializedLoss(0, bankruptId, assetIndex, units, 0);
}
