// Spot risk figures answered from the engine's own state: collateral value per asset
// (QueryCollateral), the largest order an account could place now (QueryMaxOrderQty), and the
// conversion of every dust balance at once (ConvertAllDust).
//
// Collateral. The account's margin summary (margin/valuation.ts): one line per asset it holds,
// lends or borrows, valued at mark (margin/mark.ts: a fresh index, else its USDC book's guarded
// reference, else its last index) with its collateral weight, then the account figures (net
// equity, liabilities, the margin its borrows need, the margin fraction and whether it is
// liquidating), at the query's engine time. The query names the valuation asset; another asset
// is UnknownAsset (the margin family values everything in one asset).
//
// Maximum order quantity, in whole lots, capped at the market's maxQtyLots: an ask sells its
// available base; a limit bid buys what its available quote pays at its price; a market bid
// (price 0) what its available quote buys walking the asks as a market order would now: best
// first, whole lots, stopping at the first level beyond the market's sweep band (matching.ts).
// Fees are taken from what a party receives, so they do not reduce what it can pay. With
// autoLendRedeem or autoBorrow the spendable amount is the most the order could fund instead
// (margin/auto-funding.ts); autoBorrowRepay only decides what happens to the proceeds. A
// liquidating account's largest order is 0 unless it receives an asset the account borrows, and
// its largest withdrawal is 0 (margin/liquidating.ts).
//
// On a perpetual the largest order is the most lots its margin admission passes (perp/hold.ts:
// an exact binary search, as the exposure only grows with the quantity; the price plays no part,
// exposure is valued at the mark); it carries no spot margin flags.
//
// Maximum borrow (QueryMaxBorrowQty) and maximum withdrawal (QueryMaxWithdrawalQty, with
// autoBorrow / autoLendRedeem): margin/auto-funding.ts, an exact binary search over the checks.
//
// ConvertAllDust converts, in one sequenced command, every dust balance of the account whose
// asset has a market quoted in the payout asset (or only the one market the command names), by
// ConvertDust's rule (capital.ts: the balance is positive, all available and below the market's
// minimum quantity; 95 % of min(guarded reference, last trade), rounded down, capped). A balance
// whose market has no mark price is left as it is. All or nothing: when the exchange's fees in
// the payout asset cannot pay the sum, nothing converts (DustTreasuryShort); with no dust at all
// the answer is DustNotEligible, with dust but no mark price DustNoMarkPrice. One command rather
// than one ConvertDust per asset from the front: the balances it reads are the ones it converts
// (no window for a fill or a deposit to change them in between), a refusal leaves nothing half
// done, and replay reproduces the set from engine state alone. Each conversion writes a
// DustRecord addressed to the request (the account history keeps it), then the balances change as
// events; result value = the total payout.

import {
  CommandFlag, FRONT_ID_NONE, ResultCode, Side, type ConvertAllDustCommand, type QueryCollateralCommand, type QueryMaxBorrowQtyCommand,
  type QueryMaxOrderQtyCommand, type QueryMaxWithdrawalQtyCommand,
} from '../../bus/types.js';
import { fundsBeyondAvailable, largestPassing, maxBorrowUnits, maxFundableUnits } from '../margin/auto-funding.js';
import { perpAdmission } from '../perp/hold.js';
import { MARKET_ID_ALL } from '../catalog.js';
import { sweepReferenceOf } from '../book/matching.js';
import { NO_LEVEL } from '../book/levels.js';
import { beyondSweepBand } from '../book/reference.js';
import type { EngineState } from '../state.js';
import { floorDiv, type AmountUnits } from '../units.js';
import { dustMarkTicks, dustPayoutUnits } from './capital.js';
import { isLiquidating, receivesBorrowedAsset } from '../margin/liquidating.js';
import { marginSummary } from '../margin/valuation.js';

/** The flags a maximum order query may carry: the spot margin flags (autoBorrowRepay changes nothing here). */
const MAX_ORDER_FLAGS = CommandFlag.AutoLendRedeem | CommandFlag.AutoBorrow | CommandFlag.AutoBorrowRepay;

/** First market with base `assetIndex` quoted in `quoteIndex`, or -1. */
function marketOfPair(s: EngineState, assetIndex: number, quoteIndex: number): number {
  for (let m = 0; m < s.catalog.marketCount; m++) {
    if (s.catalog.isSpot(m) && s.catalog.baseIndexOf[m] === assetIndex && s.catalog.quoteIndexOf[m] === quoteIndex) return m;
  }
  return -1;
}

/**
 * One CollateralRecord per asset of the account's margin summary at the query's own engine time,
 * the MarginSummaryRecord, then a Result (value = the lines).
 */
export function queryCollateral(s: EngineState, cmd: QueryCollateralCommand): void {
  const nowUs = s.out.applyTimeUs;
  const valuationIndex = s.catalog.assetIndex(cmd.assetId);
  if (!s.accounts.exists(cmd.accountId)) return s.out.result(ResultCode.UnknownAccount, 0, cmd.frontId, cmd.requestId);
  if (valuationIndex < 0 || valuationIndex !== s.pools.valuationIndex) return s.out.result(ResultCode.UnknownAsset, 0, cmd.frontId, cmd.requestId);
  const summary = marginSummary(s, cmd.accountId, undefined, nowUs);
  for (const line of summary.lines) s.out.collateral(line, cmd.frontId, cmd.requestId);
  s.out.marginSummary(cmd.accountId, summary, isLiquidating(s, cmd.accountId), cmd.frontId, cmd.requestId);
  s.out.result(ResultCode.Ok, summary.lines.length, cmd.frontId, cmd.requestId);
}

/** The whole lots the account could order now (header rules); result value = the lots. */
export function queryMaxOrderQty(s: EngineState, cmd: QueryMaxOrderQtyCommand): void {
  const marketIndex = s.catalog.marketIndex(cmd.marketId);
  if (!s.accounts.exists(cmd.accountId)) return s.out.result(ResultCode.UnknownAccount, 0, cmd.frontId, cmd.requestId);
  if (marketIndex < 0) return s.out.result(ResultCode.UnknownMarket, 0, cmd.frontId, cmd.requestId);
  const market = s.catalog.markets[marketIndex];
  const price = cmd.priceTicks;
  let code: ResultCode = ResultCode.Ok;
  if ((cmd.side !== Side.Bid && cmd.side !== Side.Ask) || !Number.isSafeInteger(price) || price < 0) code = ResultCode.InvalidCommand;
  else if (price > 0 && price < market.minPriceTicks) code = ResultCode.PriceBelowMinimum;
  else if (price > market.maxPriceTicks) code = ResultCode.PriceAboveMaximum;
  if (code !== ResultCode.Ok) return s.out.result(code, 0, cmd.frontId, cmd.requestId);
  if ((cmd.flags & ~MAX_ORDER_FLAGS) !== 0) return s.out.result(ResultCode.InvalidCommand, 0, cmd.frontId, cmd.requestId);
  // A liquidating account may place only orders that receive an asset it borrows (liquidating.ts).
  if (isLiquidating(s, cmd.accountId) && !receivesBorrowedAsset(s, cmd.accountId, marketIndex, cmd.side)) return s.out.result(ResultCode.Ok, 0, cmd.frontId, cmd.requestId);
  if (!s.catalog.isSpot(marketIndex)) {
    if (cmd.flags !== 0) return s.out.result(ResultCode.InvalidCommand, 0, cmd.frontId, cmd.requestId);
    const lots = largestPassing(market.maxQtyLots, (k) => k === 0 || perpAdmission(s, cmd.accountId, marketIndex, cmd.side, k) === ResultCode.Ok);
    return s.out.result(ResultCode.Ok, lots, cmd.frontId, cmd.requestId);
  }
  const spentIndex = cmd.side === Side.Ask ? s.catalog.baseIndexOf[marketIndex] : s.catalog.quoteIndexOf[marketIndex];
  const spendable = fundsBeyondAvailable(cmd.flags)
    ? maxFundableUnits(s, cmd.accountId, spentIndex, cmd.flags, false) : s.ledger.availableUnits(cmd.accountId, spentIndex);
  let lots: number;
  if (cmd.side === Side.Ask) {
    lots = floorDiv(spendable as AmountUnits, market.baseUnitsPerLot);
  } else {
    const budget = BigInt(spendable);
    lots = price > 0 ? Number(budget / (BigInt(price) * BigInt(market.quoteUnitsPerTickLot))) : marketBidLots(s, marketIndex, budget);
  }
  s.out.result(ResultCode.Ok, Math.min(lots, market.maxQtyLots), cmd.frontId, cmd.requestId);
}

/** QueryMaxBorrowQty: the largest borrow BorrowLend would make now (margin/auto-funding.ts); result value = units. */
export function queryMaxBorrowQty(s: EngineState, cmd: QueryMaxBorrowQtyCommand): void {
  const code = marginQueryRefusal(s, cmd);
  if (code !== ResultCode.Ok) return s.out.result(code, 0, cmd.frontId, cmd.requestId);
  s.out.result(ResultCode.Ok, maxBorrowUnits(s, cmd.accountId, s.catalog.assetIndex(cmd.assetId)), cmd.frontId, cmd.requestId);
}

/** QueryMaxWithdrawalQty: the largest withdrawal Withdraw would make now with the command's flags; result value = units. */
export function queryMaxWithdrawalQty(s: EngineState, cmd: QueryMaxWithdrawalQtyCommand): void {
  let code = marginQueryRefusal(s, cmd);
  if (code === ResultCode.Ok && (cmd.flags & ~(CommandFlag.AutoBorrow | CommandFlag.AutoLendRedeem)) !== 0) code = ResultCode.InvalidCommand;
  if (code !== ResultCode.Ok) return s.out.result(code, 0, cmd.frontId, cmd.requestId);
  // A liquidating account withdraws nothing (liquidating.ts).
  const units = isLiquidating(s, cmd.accountId) ? 0 : maxFundableUnits(s, cmd.accountId, s.catalog.assetIndex(cmd.assetId), cmd.flags, true);
  s.out.result(ResultCode.Ok, units, cmd.frontId, cmd.requestId);
}

function marginQueryRefusal(s: EngineState, cmd: QueryMaxBorrowQtyCommand | QueryMaxWithdrawalQtyCommand): ResultCode {
  if (!s.accounts.exists(cmd.accountId)) return ResultCode.UnknownAccount;
  return s.catalog.assetIndex(cmd.assetId) < 0 ? ResultCode.UnknownAsset : ResultCode.Ok;
}

/** Whole lots `budget` quote units buy walking the asks, best first, within the sweep band. */
function marketBidLots(s: EngineState, marketIndex: number, budget: bigint): number {
  const market = s.catalog.markets[marketIndex];
  const asks = s.books[marketIndex].asks;
  const reference = sweepReferenceOf(s, marketIndex, Side.Bid);
  let lots = 0;
  for (let level = asks.best(); level !== NO_LEVEL && lots < market.maxQtyLots; level = asks.worse(level)) {
    const priceTicks = asks.levelPrice[level];
    if (beyondSweepBand(market, reference, Side.Bid, priceTicks)) break;
    const lotCost = BigInt(priceTicks) * BigInt(market.quoteUnitsPerTickLot);
    const levelLots = asks.levelQty[level];
    const take = Math.min(Number(budget / lotCost), levelLots);
    lots += take;
    budget -= BigInt(take) * lotCost;
    if (take < levelLots) break;
  }
  return lots;
}

/** One planned conversion of ConvertAllDust. */
interface DustPlan {
  marketIndex: number;
  amountUnits: number;
  payoutUnits: number;
}

/** ConvertAllDust (header): plans every conversion, then makes all of them or none. */
export function convertAllDust(s: EngineState, cmd: ConvertAllDustCommand): void {
  const payoutIndex = s.catalog.assetIndex(cmd.assetId);
  const all = cmd.marketId === MARKET_ID_ALL;
  let code: ResultCode = ResultCode.Ok;
  if (!s.accounts.exists(cmd.accountId)) code = ResultCode.UnknownAccount;
  else if (payoutIndex < 0) code = ResultCode.UnknownAsset;
  else if (!all && s.catalog.marketIndex(cmd.marketId) < 0) code = ResultCode.UnknownMarket;
  if (code !== ResultCode.Ok) return s.out.result(code, 0, cmd.frontId, cmd.requestId);
  const { plans, found } = planDust(s, cmd, payoutIndex, all);
  let total = 0n;
  for (const plan of plans) total += BigInt(plan.payoutUnits);
  if (plans.length === 0) code = found ? ResultCode.DustNoMarkPrice : ResultCode.DustNotEligible;
  else if (BigInt(s.ledger.feeUnits[payoutIndex]) < total) code = ResultCode.DustTreasuryShort;
  if (code !== ResultCode.Ok) return s.out.result(code, 0, cmd.frontId, cmd.requestId);
  for (const plan of plans) {
    s.ledger.sweepToFees(cmd.accountId, s.catalog.baseIndexOf[plan.marketIndex], plan.amountUnits as AmountUnits);
    if (plan.payoutUnits > 0) s.ledger.payFromFees(cmd.accountId, payoutIndex, plan.payoutUnits as AmountUnits);
    s.out.dust(cmd.accountId, plan.marketIndex, plan.amountUnits, plan.payoutUnits, cmd.frontId, cmd.requestId);
  }
  for (const plan of plans) s.out.balance(cmd.accountId, s.catalog.baseIndexOf[plan.marketIndex], FRONT_ID_NONE, 0);
  s.out.balance(cmd.accountId, payoutIndex, FRONT_ID_NONE, 0);
  s.out.result(ResultCode.Ok, Number(total), cmd.frontId, cmd.requestId);
}

/**
 * The conversions ConvertAllDust would make, in market order (one per base asset: through its
 * first market quoted in the payout asset), and whether any dust was found at all.
 */
function planDust(s: EngineState, cmd: ConvertAllDustCommand, payoutIndex: number, all: boolean): { plans: DustPlan[]; found: boolean } {
  const plans: DustPlan[] = [];
  let found = false;
  for (let m = 0; m < s.catalog.marketCount; m++) {
    const market = s.catalog.markets[m];
    const baseIndex = s.catalog.baseIndexOf[m];
    if (s.catalog.quoteIndexOf[m] !== payoutIndex || (!all && market.marketId !== cmd.marketId)) continue;
    if (marketOfPair(s, baseIndex, payoutIndex) !== m) continue;
    const available = s.ledger.availableUnits(cmd.accountId, baseIndex);
    const locked = s.ledger.lockedUnits(cmd.accountId, baseIndex);
    if (available === 0 || locked > 0 || available >= market.minQtyLots * market.baseUnitsPerLot) continue;
    found = true;
    const markTicks = dustMarkTicks(s, m);
    if (markTicks === 0) continue;
    const payout = Math.min(dustPayoutUnits(available, markTicks, market.quoteUnitsPerTickLot, market.baseUnitsPerLot), s.catalog.dustMaxPayoutUnitsOf[m]);
    plans.push({ marketIndex: m, amountUnits: available, payoutUnits: payout });
  }
  return { plans, found };
}
