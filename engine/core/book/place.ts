// PlaceOrder: the book's checks of a place, the hold its market's rules compute (kinds.ts), and the
// order's entry into the book, at once or after the speed bump.
//
// Every check runs before anything changes, in the documented order: account, market, the order's
// shape, the market's order book state (book.ts bookStateRefusal: MarketClosed, MarketCancelOnly,
// MarketLimitOnly, MarketPostOnly), quantity and price limits, the price band, the account's and
// the book's order limits, the price levels a resting order may need, a liquidating account's
// risk-increasing order (margin/liquidating.ts, AccountLiquidating), then the hold (spot:
// spot/hold.ts, InsufficientFunds among others). An order with autoLendRedeem or autoBorrow whose
// hold exceeds the available balance redeems and borrows the shortfall when it is placed
// (margin/auto-funding.ts), after every other check passed.
//
// A banded market (MarketSpec multipliers) refuses a limit price outside
// [last × minMultiplierBps, last × maxMultiplierBps] / 10000 around its last trade price, once it
// has one (PriceOutOfBand, checked after the price limits). A speed-bumped limit order is checked
// again when it takes effect, against the last price then: one now outside the band expires
// (ExpiryReason.PriceBand, "PriceOutOfBounds" on the wire) without trading. A market order has no
// price to refuse; its sweep stops at the band around the market's guarded reference price
// instead, the rest expiring with the same reason (matching.ts, reference.ts).

import {
  CommandFlag,
  FRONT_ID_NONE,
  OrderFlag,
  OrderType,
  ResultCode,
  SelfTradePrevention,
  Side,
  TimeInForce,
  type PlaceOrderCommand,
} from '../../bus/types.js';
import { assert } from '../assert.js';
import { rulesOf, type PlaceHold } from '../kinds.js';
import type { EngineState } from '../state.js';
import type { AmountUnits, PriceTicks, QtyLots } from '../units.js';
import { applyFunding, fundsBeyondAvailable, planFunding, type Funding } from '../margin/auto-funding.js';
import { isLiquidating, receivesBorrowedAsset } from '../margin/liquidating.js';
import { NO_LEVEL, bookStateRefusal } from './book.js';
import { activateOrder, isOutsideBand } from './matching.js';
import { Of } from './orders.js';

/** The spot margin flags (margin/auto-funding.ts). */
const MARGIN_FLAGS = CommandFlag.AutoLend | CommandFlag.AutoLendRedeem | CommandFlag.AutoBorrow | CommandFlag.AutoBorrowRepay;
/** The only command flags a spot limit order may carry in this version (a market order: no PostOnly). */
const SUPPORTED_PLACE_FLAGS = CommandFlag.PostOnly | CommandFlag.HasClientId | CommandFlag.ReduceOnly | MARGIN_FLAGS;

/** The hold of the place being applied (one at a time: no per-command allocation). */
const HOLD: PlaceHold = { assetIndex: 0, units: 0 as AmountUnits, lots: 0 as QtyLots, quoteLimitUnits: 0 as AmountUnits };
/** What the place being applied redeems and borrows to fund its hold (spot margin flags). */
const FUNDING: Funding = { redeemUnits: 0, borrowUnits: 0 };

/** PlaceOrder: at the command's engine time (s.lastTimeUs). */
export function placeOrder(s: EngineState, cmd: PlaceOrderCommand): void {
  let code = validatePlace(s, cmd);
  const marketIndex = s.catalog.marketIndex(cmd.marketId);
  if (code === ResultCode.Ok) code = placeHold(s, cmd, marketIndex);
  if (code !== ResultCode.Ok) return s.out.result(code, 0, cmd.frontId, cmd.requestId);
  const pool = s.pool;
  const postOnly = (cmd.flags & CommandFlag.PostOnly) !== 0;
  const hasClientId = (cmd.flags & CommandFlag.HasClientId) !== 0;
  const slot = pool.open(cmd.accountId);
  const f = slot << Of.f64;
  const w = slot << Of.w32;
  const h = slot << Of.w16;
  const b = slot << Of.w8;
  pool.f64[f | Of.orderId] = s.nextOrderId();
  pool.f64[f | Of.priceTicks] = cmd.priceTicks;
  pool.f64[f | Of.qtyLots] = HOLD.lots;
  pool.f64[f | Of.remainingLots] = HOLD.lots;
  pool.u8[b | Of.orderType] = cmd.orderType;
  if (cmd.orderType === OrderType.Market) {
    pool.f64[f | Of.quoteQtyUnits] = cmd.quoteQtyUnits;
    pool.f64[f | Of.quoteLimitUnits] = HOLD.quoteLimitUnits;
  }
  pool.f64[f | Of.createdAtUs] = s.lastTimeUs;
  pool.u32[w | Of.clientId] = hasClientId ? cmd.clientId : 0;
  pool.u32[w | Of.requestId] = cmd.requestId;
  pool.u16[h | Of.frontId] = cmd.frontId;
  pool.u16[h | Of.marketIndex] = marketIndex;
  pool.u8[b | Of.side] = cmd.side;
  pool.u8[b | Of.timeInForce] = cmd.timeInForce;
  pool.u8[b | Of.selfTradePrevention] = cmd.selfTradePrevention;
  pool.u8[b | Of.flags] = (postOnly ? OrderFlag.PostOnly : 0) | (hasClientId ? OrderFlag.HasClientId : 0)
    | ((cmd.flags & CommandFlag.AutoLend) !== 0 ? OrderFlag.AutoLend : 0) | ((cmd.flags & CommandFlag.AutoBorrowRepay) !== 0 ? OrderFlag.AutoBorrowRepay : 0)
    | ((cmd.flags & CommandFlag.ReduceOnly) !== 0 ? OrderFlag.ReduceOnly : 0);
  s.index.insert(pool.f64[f | Of.orderId], slot);
  applyFunding(s, cmd.accountId, HOLD.assetIndex, FUNDING);
  s.ledger.lock(cmd.accountId, HOLD.assetIndex, HOLD.units);
  assert(rulesOf(s.catalog.kindOf[marketIndex]).holdUnitsOf(s, slot) === HOLD.units, 'hold differs from what the order can spend');
  s.out.balance(cmd.accountId, HOLD.assetIndex, FRONT_ID_NONE, 0);
  if (postOnly || s.speedBumpUs === 0) return activateOrder(s, slot);
  s.pending.push(slot);
}

/** Every check of a place before its hold (placeHold), in the documented order. */
function validatePlace(s: EngineState, cmd: PlaceOrderCommand): ResultCode {
  if (!s.accounts.exists(cmd.accountId)) return ResultCode.UnknownAccount;
  const marketIndex = s.catalog.marketIndex(cmd.marketId);
  if (marketIndex < 0) return ResultCode.UnknownMarket;
  const isMarket = cmd.orderType === OrderType.Market;
  if (!(isMarket ? isSupportedMarketOrder(cmd) : isSupportedLimitOrder(cmd))) return ResultCode.InvalidCommand;
  // Reduce-only is for perpetuals (perp/reduce-only.ts): a spot order carrying it is refused.
  if ((cmd.flags & CommandFlag.ReduceOnly) !== 0 && s.catalog.isSpot(marketIndex)) return ResultCode.InvalidCommand;
  const book = s.books[marketIndex];
  const stateCode = bookStateRefusal(book.orderBookState, isMarket, (cmd.flags & CommandFlag.PostOnly) !== 0);
  if (stateCode !== ResultCode.Ok) return stateCode;
  const market = s.catalog.markets[marketIndex];
  const byQuote = isMarket && cmd.quoteQtyUnits > 0;
  if (!byQuote && cmd.qtyLots < market.minQtyLots) return ResultCode.QuantityBelowMinimum;
  if (!byQuote && cmd.qtyLots > market.maxQtyLots) return ResultCode.QuantityAboveMaximum;
  if (!isMarket && cmd.priceTicks < market.minPriceTicks) return ResultCode.PriceBelowMinimum;
  if (!isMarket && cmd.priceTicks > market.maxPriceTicks) return ResultCode.PriceAboveMaximum;
  if (!isMarket && isOutsideBand(market, book.bandReferenceTicks, cmd.priceTicks)) return ResultCode.PriceOutOfBand;
  if (s.pool.accountOpenCount[cmd.accountId] >= s.limits.maxOpenOrdersPerAccount) return ResultCode.OrderLimitReached;
  // The order itself takes a slot while it matches, even if it will not rest.
  if (book.restingCount + book.pendingCount >= s.limits.maxOrdersPerBook) return ResultCode.BookFull;
  if (!isMarket && cmd.timeInForce === TimeInForce.GTC) {
    // A GTC order may rest; a delayed one cannot know yet whether its price level will exist,
    // so it reserves a level until it activates.
    const bookSide = book.sideOf(cmd.side);
    const delayed = (cmd.flags & CommandFlag.PostOnly) === 0 && s.speedBumpUs > 0;
    const needsLevel = delayed || bookSide.find(cmd.priceTicks as PriceTicks) === NO_LEVEL;
    if (needsLevel && bookSide.count + book.pendingGtc[cmd.side] >= s.limits.maxPriceLevelsPerSide) return ResultCode.BookFull;
  }
  if (isLiquidating(s, cmd.accountId) && !receivesBorrowedAsset(s, cmd.accountId, marketIndex, cmd.side)) return ResultCode.AccountLiquidating;
  return ResultCode.Ok;
}

/**
 * The last check of a place, after validatePlace: the hold its market's rules compute (into
 * HOLD), funded beyond the available balance as its flags ask (into FUNDING). A function of its
 * own so that the book's checks and the hold are each compiled with their helpers inlined.
 */
function placeHold(s: EngineState, cmd: PlaceOrderCommand, marketIndex: number): ResultCode {
  FUNDING.redeemUnits = 0;
  FUNDING.borrowUnits = 0;
  const code = rulesOf(s.catalog.kindOf[marketIndex]).hold(s, cmd, marketIndex, HOLD);
  if (code !== ResultCode.InsufficientFunds || !fundsBeyondAvailable(cmd.flags) || !holdIsFixed(cmd)) return code;
  return planFunding(s, cmd.accountId, HOLD.assetIndex, HOLD.units, 0, cmd.flags, FUNDING);
}

/** Whether the order's hold does not depend on the available balance (auto-funding.ts: only those are funded). */
function holdIsFixed(cmd: PlaceOrderCommand): boolean {
  if (cmd.orderType !== OrderType.Market) return true;
  return cmd.side === Side.Bid ? cmd.quoteQtyUnits > 0 : cmd.qtyLots > 0;
}

/** Enum values, flags and client id a place of either type must have. */
function hasKnownFields(cmd: PlaceOrderCommand, supportedFlags: number): boolean {
  if (cmd.side !== Side.Bid && cmd.side !== Side.Ask) return false;
  const stp = cmd.selfTradePrevention;
  if (stp !== SelfTradePrevention.RejectTaker && stp !== SelfTradePrevention.RejectMaker && stp !== SelfTradePrevention.RejectBoth) return false;
  if ((cmd.flags & ~supportedFlags) !== 0) return false;
  if ((cmd.flags & CommandFlag.HasClientId) !== 0 && !(Number.isInteger(cmd.clientId) && cmd.clientId >= 0 && cmd.clientId <= 0xffffffff)) return false;
  // Compared one by one: these are 64-bit fields, and bitwise operators would cut them to 32 bits.
  const noConditions =
    cmd.triggerPriceTicks === 0 && cmd.triggerQtyLots === 0 && cmd.takeProfitTriggerTicks === 0 &&
    cmd.takeProfitLimitTicks === 0 && cmd.stopLossTriggerTicks === 0 && cmd.stopLossLimitTicks === 0 && cmd.slippageTolerance === 0;
  const noTriggerModes = cmd.triggerBy === 0 && cmd.takeProfitTriggerBy === 0 && cmd.stopLossTriggerBy === 0 && cmd.slippageToleranceType === 0;
  return noConditions && noTriggerModes;
}

/**
 * Shape checks of a limit place beyond the documented rejections: known enum values, only the
 * flags this version honours, post-only only with GTC, no conditional parts, integer price and
 * quantity, no quote quantity, and a 32-bit client id. Anything else is InvalidCommand rather
 * than half-honoured.
 */
function isSupportedLimitOrder(cmd: PlaceOrderCommand): boolean {
  if (cmd.orderType !== OrderType.Limit) return false;
  const tif = cmd.timeInForce;
  if (tif !== TimeInForce.GTC && tif !== TimeInForce.IOC && tif !== TimeInForce.FOK) return false;
  if (!hasKnownFields(cmd, SUPPORTED_PLACE_FLAGS)) return false;
  if ((cmd.flags & CommandFlag.PostOnly) !== 0 && tif !== TimeInForce.GTC) return false;
  return Number.isSafeInteger(cmd.priceTicks) && Number.isSafeInteger(cmd.qtyLots) && cmd.quoteQtyUnits === 0;
}

/**
 * Shape checks of a market place: no price, no post-only, GTC or IOC (either way the remainder
 * expires; fill-or-kill is not offered for market orders), and exactly one of a positive integer
 * quantity or quote quantity.
 */
function isSupportedMarketOrder(cmd: PlaceOrderCommand): boolean {
  if (cmd.timeInForce !== TimeInForce.GTC && cmd.timeInForce !== TimeInForce.IOC) return false;
  if (!hasKnownFields(cmd, CommandFlag.HasClientId | CommandFlag.ReduceOnly | MARGIN_FLAGS)) return false;
  if (cmd.priceTicks !== 0 || !Number.isSafeInteger(cmd.qtyLots) || !Number.isSafeInteger(cmd.quoteQtyUnits)) return false;
  return (cmd.qtyLots > 0 && cmd.quoteQtyUnits === 0) || (cmd.qtyLots === 0 && cmd.quoteQtyUnits > 0);
}
