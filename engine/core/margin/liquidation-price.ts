// The estimated liquidation price of a borrow/lend position (venue mechanics §4: `estLiquidationPrice`
// is informational; the proposed rule: solve for the asset's mark where the maintenance margin
// ratio reaches 100 %, everything else fixed).
//
// QueryLiquidationPrice {account, asset, side, quantity}. The account is first taken as it would
// be after a BorrowLend of `side` and `quantity` (the venue's query carries the borrow/lend
// payload), with BorrowLend's reading of the side: Lend repays a borrow (at most the borrow,
// LendRequiresBorrowRepay; with the units available, InsufficientFunds) or lends available units
// (no change to the valuation: lent units count as held ones); Borrow redeems a lend (at most the
// lend, BorrowRequiresLendRedeem; no change to the valuation) or borrows (the units held and owed).
// Quantity 0 takes the account as it stands. The pool's limits and the margin test are not asked:
// the estimate answers "what if", BorrowLend decides.
//
// Then, with every other asset at its mark and every quantity fixed, the account is liquidatable at
// a price p of the asset when it has exposure and netEquity(p) ≤ Σ N·MMF(N)(p) (account.ts
// `liquidatable`, on valuation.ts's maintenance figures with the asset valued at p). Prices are
// USDC per whole unit ×10^9 (the index price's grid), searched exactly:
//   - liquidatable at the mark already: the liquidation price is the mark;
//   - else above the mark (a net borrower of the asset loses as it rises): the smallest p in
//     (mark, 2^53 − 1] that is liquidatable, by binary search, when the top of the range is;
//   - else below the mark (a holder of the asset that borrows something else loses as it falls):
//     the largest p in [0, mark) that is liquidatable, when 0 is;
//   - both (an account whose equity rises and falls with the asset): the one nearer the mark, the
//     lower on a tie; neither: none (0).
// Each side's search holds its invariant (liquidatable at one end, not at the other), so the answer
// is a price where the ratio crosses 100 % between two neighbouring grid points even where the
// haircut curve bends. The valuation asset itself (USDC, fixed at 1), an asset without a mark, or
// an account with a borrowed asset that has no mark has none. Cost: about 2 × 53 valuations of
// the maintenance figures, each O(the account's assets).

import { BorrowLendSide, ResultCode, type QueryLiquidationPriceCommand } from '../../bus/types.js';
import type { EngineState } from '../state.js';
import { liquidatable } from './account.js';
import type { UnitPrice } from './collateral.js';
import { pow10 } from './fixed.js';
import { INDEX_PRICE_DECIMALS } from './index-prices.js';
import { MarkSource, markOf, type Mark } from './mark.js';
import { maintenanceFigures, type MarginChange } from './valuation.js';

/** The top of the searched price range (USDC per whole unit ×10^9). */
const MAX_PRICE_E9 = BigInt(Number.MAX_SAFE_INTEGER);

/** The valuation of the account after the assumed BorrowLend (header), or the refusal. */
function assumedMove(s: EngineState, accountId: number, assetIndex: number, side: number, qty: number): MarginChange | ResultCode {
  const pools = s.pools;
  const cell = pools.cell(accountId, assetIndex);
  const available = s.ledger.availableUnits(accountId, assetIndex);
  const none: MarginChange = { assetIndex, heldDelta: 0n, borrowDelta: 0n };
  if (qty === 0) return none;
  if (side === BorrowLendSide.Lend) {
    if (pools.borrowed[cell] > 0 && qty > pools.borrowed[cell]) return ResultCode.LendRequiresBorrowRepay;
    if (qty > available) return ResultCode.InsufficientFunds;
    return pools.borrowed[cell] > 0 ? { assetIndex, heldDelta: -BigInt(qty), borrowDelta: -BigInt(qty) } : none;
  }
  if (pools.lent[cell] > 0) return qty > pools.lent[cell] ? ResultCode.BorrowRequiresLendRedeem : none;
  return { assetIndex, heldDelta: BigInt(qty), borrowDelta: BigInt(qty) };
}

/** A mark as USDC per whole unit ×10^9 (rounded down for a book price). */
function markE9(s: EngineState, assetIndex: number, mark: Mark): bigint {
  if (mark.source !== MarkSource.Book) return BigInt(mark.priceE9);
  const scale = pow10(INDEX_PRICE_DECIMALS) * pow10(s.pools.decimalsOf[assetIndex]);
  return (mark.price.quoteUnits * scale) / (mark.price.baseUnits * pow10(s.pools.decimalsOf[s.pools.valuationIndex]));
}

/** USDC per whole unit ×10^9 as a unit price of the asset, exact. */
function unitPrice(s: EngineState, assetIndex: number, priceE9: bigint): UnitPrice {
  return {
    quoteUnits: priceE9 * pow10(s.pools.decimalsOf[s.pools.valuationIndex]),
    baseUnits: pow10(INDEX_PRICE_DECIMALS) * pow10(s.pools.decimalsOf[assetIndex]),
  };
}

/** The first price where `at` turns from `from` to its opposite between `pass` (at = from) and `fail` (at ≠ from). */
function crossing(pass: bigint, fail: bigint, at: (p: bigint) => boolean, from: boolean): bigint {
  let low = pass;
  let high = fail;
  while (high - low > 1n || low - high > 1n) {
    const mid = (low + high) / 2n;
    if (at(mid) === from) low = mid;
    else high = mid;
  }
  return high;
}

/** The estimated liquidation price ×10^9 of the change's account and asset (header), 0 for none. */
export function liquidationPriceE9(s: EngineState, accountId: number, change: MarginChange, mark: bigint, nowUs: number): bigint {
  const at = (p: bigint): boolean => {
    const figures = maintenanceFigures(s, accountId, { ...change, price: unitPrice(s, change.assetIndex, p) }, nowUs);
    return !figures.unpriced && liquidatable(figures.netEquityUnits, figures);
  };
  if (maintenanceFigures(s, accountId, change, nowUs).unpriced) return 0n;
  if (at(mark)) return mark;
  const above = mark < MAX_PRICE_E9 && at(MAX_PRICE_E9) ? crossing(mark, MAX_PRICE_E9, at, false) : -1n;
  const below = mark > 0n && at(0n) ? crossing(mark, 0n, at, false) : -1n;
  if (above < 0n) return below < 0n ? 0n : below;
  if (below < 0n) return above;
  return above - mark < mark - below ? above : below;
}

/** QueryLiquidationPrice: one LiquidationPriceRecord, then a Result (value = the price ×10^9, 0: none). */
export function queryLiquidationPrice(s: EngineState, cmd: QueryLiquidationPriceCommand): void {
  const pools = s.pools;
  const assetIndex = s.catalog.assetIndex(cmd.assetId);
  const qty = cmd.quantityUnits;
  let code: ResultCode = ResultCode.Ok;
  if (!s.accounts.exists(cmd.accountId)) code = ResultCode.UnknownAccount;
  else if (assetIndex < 0 || pools.poolOf[assetIndex] === undefined || (cmd.side as number) > BorrowLendSide.Lend) code = ResultCode.LendPoolUnknown;
  else if (!Number.isSafeInteger(qty) || qty < 0) code = ResultCode.BorrowLendQuantityInvalid;
  const change = code === ResultCode.Ok ? assumedMove(s, cmd.accountId, assetIndex, cmd.side, qty) : code;
  if (typeof change !== 'object') return s.out.result(change, 0, cmd.frontId, cmd.requestId);
  const nowUs = s.out.applyTimeUs;
  const mark = markOf(s, assetIndex, nowUs);
  const markPrice = mark === null ? 0n : markE9(s, assetIndex, mark);
  const valued = mark !== null && assetIndex !== pools.valuationIndex;
  const price = valued ? liquidationPriceE9(s, cmd.accountId, change, markPrice, nowUs) : 0n;
  s.out.liquidationPrice(cmd.accountId, assetIndex, Number(markPrice), Number(price), price > 0n && price === markPrice, cmd.frontId, cmd.requestId);
  s.out.result(ResultCode.Ok, Number(price), cmd.frontId, cmd.requestId);
}
