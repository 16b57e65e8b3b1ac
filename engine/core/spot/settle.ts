// A spot fill's ledger moves: the buyer pays quote from what its order holds and receives base,
// the seller delivers base from its hold and receives quote.
//
// Settlement only moves units that are already locked, so a fill can never find the money missing.
// A limit buyer held its own limit price for these lots; what it did not pay is price improvement,
// released from locked to available on this fill. A market buyer held a quote budget; what it did
// not spend is released when the order ends (book/matching.ts).
//
// Fees: each fill charges the taker its taker rate and the maker its maker rate (per account, in
// basis points) on what each receives: the buyer pays in base, the seller in quote.
// fee = floor(received × bps / 10000), exact (units.ts feeUnits); the fee goes to the ledger's fee
// column, the rest to the party. Rounding down never creates money, and every credit is bounded by
// the asset's supply (funds/ledger.ts), so no step can overflow half-way through a match.
//
// A liquidation order (liquidation/unwind.ts) also pays the liquidation fee out of what it receives,
// into the insurance fund (liquidation/fee.ts).
//
// Spot margin: an order placed with autoBorrowRepay or autoLend, or of an account whose settings
// have autoRepayBorrows or autoLend, then repays a borrow of, or lends, what the fill paid it
// (margin/auto-funding.ts). A collateral conversion's proceeds do neither: they pay the account's
// perpetual debts (liquidation/conversion.ts), and it pays no liquidation fee.

import { AccountSettingFlag, FRONT_ID_NONE, OrderFlag } from '../../bus/types.js';
import { applyProceeds } from '../margin/auto-funding.js';
import type { Fill } from '../kinds.js';
import type { EngineState } from '../state.js';
import { addUnits, baseUnits, feeUnits, notionalUnits, subUnits } from '../units.js';
import { takeLiquidationFee } from '../liquidation/fee.js';
import { isConversion } from '../liquidation/conversion.js';
import { Of } from '../book/orders.js';

/** The fee rate of the order in `slot` for a fill in which it is the taker or the maker. */
function feeBpsOf(s: EngineState, slot: number, isTaker: boolean): number {
  const accountId = s.pool.u32[slot << Of.w32 | Of.accountId];
  return isTaker ? s.accounts.takerFeeBps[accountId] : s.accounts.makerFeeBps[accountId];
}

export function settleSpot(s: EngineState, fill: Fill): void {
  const pool = s.pool;
  const market = s.catalog.markets[fill.marketIndex];
  const baseIndex = s.catalog.baseIndexOf[fill.marketIndex];
  const quoteIndex = s.catalog.quoteIndexOf[fill.marketIndex];
  const { buyer, seller, qtyLots, quoteUnits } = fill;
  const baseAmount = baseUnits(qtyLots, market.baseUnitsPerLot);
  const buyerHeld = pool.isMarket(buyer) ? quoteUnits : notionalUnits(pool.price(buyer), qtyLots, market.quoteUnitsPerTickLot);
  const improvement = subUnits(buyerHeld, quoteUnits);
  fill.buyerFeeUnits = feeUnits(baseAmount, feeBpsOf(s, buyer, buyer === fill.taker));
  fill.sellerFeeUnits = feeUnits(quoteUnits, feeBpsOf(s, seller, seller === fill.taker));
  const buyerAccount = pool.u32[buyer << Of.w32 | Of.accountId];
  const sellerAccount = pool.u32[seller << Of.w32 | Of.accountId];
  s.ledger.spendLocked(buyerAccount, quoteIndex, quoteUnits);
  if (improvement > 0) s.ledger.unlock(buyerAccount, quoteIndex, improvement);
  s.ledger.credit(buyerAccount, baseIndex, subUnits(baseAmount, fill.buyerFeeUnits));
  s.ledger.collectFee(baseIndex, fill.buyerFeeUnits);
  s.ledger.spendLocked(sellerAccount, baseIndex, baseAmount);
  s.ledger.credit(sellerAccount, quoteIndex, subUnits(quoteUnits, fill.sellerFeeUnits));
  s.ledger.collectFee(quoteIndex, fill.sellerFeeUnits);
  // A liquidation order's fills also pay the liquidation fee (liquidation/fee.ts), reported with the trading fee.
  fill.buyerFeeUnits = addUnits(fill.buyerFeeUnits, takeLiquidationFee(s, buyer, baseIndex, subUnits(baseAmount, fill.buyerFeeUnits)));
  fill.sellerFeeUnits = addUnits(fill.sellerFeeUnits, takeLiquidationFee(s, seller, quoteIndex, subUnits(quoteUnits, fill.sellerFeeUnits)));
  marginProceeds(s, buyer, baseIndex, subUnits(baseAmount, fill.buyerFeeUnits));
  marginProceeds(s, seller, quoteIndex, subUnits(quoteUnits, fill.sellerFeeUnits));
}

/**
 * An order with autoBorrowRepay or autoLend, or of an account with autoRepayBorrows or autoLend,
 * repays or lends what its fill paid it (margin/auto-funding.ts).
 */
function marginProceeds(s: EngineState, slot: number, assetIndex: number, units: number): void {
  const flags = s.pool.u8[slot << Of.w8 | Of.flags];
  if (isConversion(flags, true)) return; // its proceeds pay the account's debts (liquidation/conversion.ts)
  const accountId = s.pool.u32[slot << Of.w32 | Of.accountId];
  const settings = s.accountSettings.flags[accountId];
  const repay = (flags & OrderFlag.AutoBorrowRepay) !== 0 || (settings & AccountSettingFlag.AutoRepayBorrows) !== 0;
  const lend = (flags & OrderFlag.AutoLend) !== 0 || (settings & AccountSettingFlag.AutoLend) !== 0;
  if (repay || lend) applyProceeds(s, accountId, assetIndex, units, repay, lend);
}

/** Balances of a fill: maker base, maker quote, then (with `takerToo`) taker base, taker quote. */
export function reportSpotSettlement(s: EngineState, fill: Fill, takerToo: boolean): void {
  // The four writes stay in this one small function (not reportSpotBalances twice): a fill's path
  // is hot, and V8 inlines it whole this way.
  const baseIndex = s.catalog.baseIndexOf[fill.marketIndex];
  const quoteIndex = s.catalog.quoteIndexOf[fill.marketIndex];
  const makerAccount = s.pool.u32[fill.maker << Of.w32 | Of.accountId];
  s.out.balance(makerAccount, baseIndex, FRONT_ID_NONE, 0);
  s.out.balance(makerAccount, quoteIndex, FRONT_ID_NONE, 0);
  if (!takerToo) return;
  const takerAccount = s.pool.u32[fill.taker << Of.w32 | Of.accountId];
  s.out.balance(takerAccount, baseIndex, FRONT_ID_NONE, 0);
  s.out.balance(takerAccount, quoteIndex, FRONT_ID_NONE, 0);
}

/** An account's balances of a spot market's base and quote assets. */
export function reportSpotBalances(s: EngineState, marketIndex: number, accountId: number): void {
  s.out.balance(accountId, s.catalog.baseIndexOf[marketIndex], FRONT_ID_NONE, 0);
  s.out.balance(accountId, s.catalog.quoteIndexOf[marketIndex], FRONT_ID_NONE, 0);
}
