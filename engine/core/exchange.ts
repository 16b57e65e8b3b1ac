// The engine core: a pure, synchronous state machine over the sequenced command stream.
//
// apply() is the only way state changes. Each state-changing command first activates the
// speed-bumped orders whose delay has ended by its engine time (in sequence order), then runs:
// validate the whole command (every rejection is a result code and changes nothing), mutate,
// write outputs. Queries (CommandKind >= 64) change nothing and activate nothing. No clock,
// randomness, I/O or floating point: replaying the same commands with the same seq and engine
// times rebuilds the same state (stateHash) and the same outputs, ids included.
//
// Market orders (by quantity, or by quote quantity) lock at sequencing time, before the book they
// will meet is known (they are taker orders, so speed-bumped), by rules that can never overdraw:
//   ask by quantity      locks the base quantity, as a limit ask;
//   ask by quote qty     locks min(lots the quote quantity could buy at minPriceTicks, maxQtyLots,
//                        whole lots of available base) lots of base; that many lots is its cap
//                        (InsufficientFunds when available base caps it below minQtyLots);
//   bid by quote qty     locks the quote quantity; its lot cap is what that buys at minPriceTicks;
//   bid by quantity      locks min(available quote, quantity × maxPriceTicks), the worst case of
//                        walking any book, so it fills only what available funds cover.
// A market order fills level by level while its lot cap and its quote limit allow a whole lot,
// never rests, and releases what it did not spend when it ends (see matching.ts). Fees are taken
// per fill from what each party receives (matching.ts) and kept in the ledger's fee column.
//
// A banded market (MarketSpec multipliers) refuses a limit price outside
// [last × minMultiplierBps, last × maxMultiplierBps] / 10000 around its last trade price, once it
// has one (PriceOutOfBand, checked after the price limits). A speed-bumped limit order is checked
// again when it takes effect, against the last price then: one now outside the band expires
// (ExpiryReason.PriceBand, "PriceOutOfBounds" on the wire) without trading. A market order has no
// price to refuse; its sweep stops at the band around the market's guarded reference price
// instead, the rest expiring with the same reason (matching.ts, reference.ts).
//
// A market's order book state (operator.ts) refuses places it does not take (MarketClosed,
// MarketCancelOnly, MarketLimitOnly, MarketPostOnly), checked right after the order's shape.
//
// See state.ts for the structures and their bounds, matching.ts for activation and fills,
// cancel.ts for cancels, queries.ts for reads, invariants.ts for the checked invariants.

import {
  CommandFlag,
  CommandKind,
  ExpiryReason,
  FRONT_ID_NONE,
  HeaderFlag,
  OrderEvent,
  OrderFlag,
  OrderStatus,
  OrderType,
  ResultCode,
  SelfTradePrevention,
  Side,
  TimeInForce,
  type Command,
  type EngineConfig,
  type RecordSink,
} from '../bus/types.js';
import { KEY_BYTES } from './funds/accounts.js';
import { assert } from './assert.js';
import { NO_LEVEL } from './book/book.js';
import { cancelOpenOrder, closeOrder } from './book/cancel.js';
import { validateState } from './invariants.js';
import { activateOrder, isOutsideBand } from './book/matching.js';
import { NO_SLOT } from './book/orders.js';
import { runQuery } from './queries.js';
import { bookStateRefusal, setFeeRates, setMarketState } from './operator.js';
import { confirmWithdrawal, convertDust, withdraw } from './funds/capital.js';
import { EngineState } from './state.js';
import { hashState } from './stateHash.js';
import {
  MAX_AMOUNT_UNITS,
  baseUnits,
  floorDiv,
  notionalUnits,
  type AmountUnits,
  type PriceTicks,
  type QtyLots,
} from './units.js';

/** Commands from this kind up are queries: no seq of their own, no state change. */
const FIRST_QUERY_KIND = 64;

/** The only command flags a spot limit order may carry in this version (a market order: no PostOnly). */
const SUPPORTED_PLACE_FLAGS = CommandFlag.PostOnly | CommandFlag.HasClientId;

export class Exchange {
  private readonly s: EngineState;
  /** Lock computed by validatePlace for the place that passes it (no per-command allocation). */
  private placeLockUnits = 0 as AmountUnits;
  private placeLockAsset = 0;
  /** Lot cap and quote limit computed by validatePlace (see the header for market orders). */
  private placeLots = 0 as QtyLots;
  private placeQuoteLimitUnits = 0 as AmountUnits;

  constructor(config: EngineConfig) {
    this.s = new EngineState(config);
  }

  /** Applies one command; every output goes through `out`. */
  apply(cmd: Command, seq: number, timeUs: number, out: RecordSink): void {
    const s = this.s;
    assert(Number.isSafeInteger(seq) && seq >= 0 && Number.isSafeInteger(timeUs) && timeUs >= 0, 'seq and engine time must be safe integers');
    if (cmd.kind >= FIRST_QUERY_KIND) {
      s.out.begin(out, seq, timeUs);
      runQuery(s, cmd);
      return;
    }
    assert(seq > s.lastSeq, 'sequence numbers must increase');
    assert(timeUs >= s.lastTimeUs, 'engine time went backwards');
    s.lastSeq = seq;
    s.lastTimeUs = timeUs;
    s.out.begin(out, seq, timeUs);
    this.activateDue(timeUs);
    switch (cmd.kind) {
      case CommandKind.CreateAccount:
        return this.createAccount(cmd);
      case CommandKind.Deposit:
        return this.deposit(cmd);
      case CommandKind.PlaceOrder:
        return this.placeOrder(cmd, timeUs);
      case CommandKind.CancelOrder:
        return this.cancelOrder(cmd);
      case CommandKind.CancelAll:
        return this.cancelAll(cmd);
      case CommandKind.Tick:
        return;
      // The shell serialises the state after this apply; the core only
      // answers with the snapshot's sequence.
      case CommandKind.Snapshot:
        return s.out.result(ResultCode.Ok, seq, cmd.frontId, cmd.requestId);
      // Operator commands
      case CommandKind.SetMarketState:
        return setMarketState(s, cmd);
      case CommandKind.SetFeeRates:
        return setFeeRates(s, cmd);
      // Capital: see capital.ts
      case CommandKind.Withdraw:
        return withdraw(s, cmd);
      case CommandKind.ConvertDust:
        return convertDust(s, cmd);
      case CommandKind.ConfirmWithdrawal:
        return confirmWithdrawal(s, cmd);
      default:
        s.out.result(ResultCode.InvalidCommand, 0, cmd.frontId, cmd.requestId);
    }
  }

  /** Engine time at which the oldest pending order activates, or -1 when none waits. */
  nextWakeUs(): number {
    const head = this.s.pending.head;
    return head === NO_SLOT ? -1 : this.s.pool.createdAtUs[head] + this.s.speedBumpUs;
  }

  stateHash(): string {
    return hashState(this.s);
  }

  /**
   * Whether `hash` is this state's hash: today's, or the one engines computed before markets kept
   * a guarded reference price (format-2 snapshot files and clean-stop marks carry that one; it
   * covers everything else, and a hash of one kind never equals the other's by accident).
   */
  hasStateHash(hash: string): boolean {
    return hash === hashState(this.s) || hash === hashState(this.s, false);
  }

  validateInvariants(): void {
    validateState(this.s);
  }

  /**
   * Sum over accounts of available + locked units of an asset, plus the fees collected in it:
   * equal to the asset's deposits minus its withdrawals (conservation).
   */
  totalUnits(assetId: number): number {
    const s = this.s;
    const assetIndex = s.catalog.assetIndex(assetId);
    assert(assetIndex >= 0, 'totalUnits of an unknown asset');
    let total = BigInt(s.ledger.feeUnits[assetIndex]);
    for (let accountId = 1; accountId <= s.accounts.count; accountId++) {
      const cell = s.ledger.cell(accountId, assetIndex);
      total += BigInt(s.ledger.available[cell]) + BigInt(s.ledger.locked[cell]);
    }
    assert(total <= BigInt(Number.MAX_SAFE_INTEGER), 'an asset total left the safe-integer range');
    return Number(total);
  }

  /** Activates, in sequence order, every pending order whose speed bump ended by `timeUs`. */
  private activateDue(timeUs: number): void {
    const s = this.s;
    for (let steps = 0; s.pending.head !== NO_SLOT; steps++) {
      assert(steps <= s.pool.capacity, 'activation loop ran past the number of orders');
      const slot = s.pending.head;
      if (s.pool.createdAtUs[slot] + s.speedBumpUs > timeUs) return;
      const book = s.books[s.pool.marketIndex[slot]];
      s.pending.remove(slot);
      book.pendingCount--;
      if (s.pool.reservesLevel(slot)) book.pendingGtc[s.pool.side[slot]]--;
      activateOrder(s, slot);
    }
  }

  private createAccount(cmd: Command): void {
    const s = this.s;
    let code: ResultCode = ResultCode.Ok;
    if (cmd.key.length !== KEY_BYTES || cmd.key.every((byte) => byte === 0)) code = ResultCode.InvalidCommand;
    else if (s.accounts.find(cmd.key) !== 0) code = ResultCode.DuplicateKey;
    else if (s.accounts.count >= s.accounts.capacity) code = ResultCode.AccountLimitReached;
    if (code !== ResultCode.Ok) return s.out.result(code, 0, cmd.frontId, cmd.requestId);
    const accountId = s.accounts.add(cmd.key);
    s.out.account(accountId, FRONT_ID_NONE, 0);
    s.out.result(ResultCode.Ok, accountId, cmd.frontId, cmd.requestId);
  }

  private deposit(cmd: Command): void {
    const s = this.s;
    const assetIndex = s.catalog.assetIndex(cmd.assetId);
    const amount = cmd.amountUnits as AmountUnits;
    let code: ResultCode = ResultCode.Ok;
    if (!s.accounts.exists(cmd.accountId)) code = ResultCode.UnknownAccount;
    else if (assetIndex < 0) code = ResultCode.UnknownAsset;
    else if (!s.ledger.canDeposit(assetIndex, amount)) code = ResultCode.AmountOutOfRange;
    if (code !== ResultCode.Ok) return s.out.result(code, 0, cmd.frontId, cmd.requestId);
    s.ledger.deposit(cmd.accountId, assetIndex, amount);
    s.out.balance(cmd.accountId, assetIndex, FRONT_ID_NONE, 0);
    s.out.result(ResultCode.Ok, s.ledger.availableUnits(cmd.accountId, assetIndex), cmd.frontId, cmd.requestId);
  }

  private placeOrder(cmd: Command, timeUs: number): void {
    const s = this.s;
    const code = this.validatePlace(cmd);
    if (code !== ResultCode.Ok) return s.out.result(code, 0, cmd.frontId, cmd.requestId);
    const pool = s.pool;
    const marketIndex = s.catalog.marketIndex(cmd.marketId);
    const book = s.books[marketIndex];
    const postOnly = (cmd.flags & CommandFlag.PostOnly) !== 0;
    const hasClientId = (cmd.flags & CommandFlag.HasClientId) !== 0;
    const slot = pool.open(cmd.accountId);
    pool.orderId[slot] = s.nextOrderId();
    pool.priceTicks[slot] = cmd.priceTicks;
    pool.qtyLots[slot] = this.placeLots;
    pool.remainingLots[slot] = this.placeLots;
    pool.orderType[slot] = cmd.orderType;
    if (cmd.orderType === OrderType.Market) {
      pool.quoteQtyUnits[slot] = cmd.quoteQtyUnits;
      pool.quoteLimitUnits[slot] = this.placeQuoteLimitUnits;
    }
    pool.createdAtUs[slot] = timeUs;
    pool.clientId[slot] = hasClientId ? cmd.clientId : 0;
    pool.requestId[slot] = cmd.requestId;
    pool.frontId[slot] = cmd.frontId;
    pool.marketIndex[slot] = marketIndex;
    pool.side[slot] = cmd.side;
    pool.timeInForce[slot] = cmd.timeInForce;
    pool.selfTradePrevention[slot] = cmd.selfTradePrevention;
    pool.flags[slot] = (postOnly ? OrderFlag.PostOnly : 0) | (hasClientId ? OrderFlag.HasClientId : 0);
    s.index.insert(pool.orderId[slot], slot);
    s.ledger.lock(cmd.accountId, this.placeLockAsset, this.placeLockUnits);
    assert(s.lockUnitsOf(slot) === this.placeLockUnits, 'lock differs from what the order can spend');
    s.out.balance(cmd.accountId, this.placeLockAsset, FRONT_ID_NONE, 0);
    if (postOnly || s.speedBumpUs === 0) return activateOrder(s, slot);
    s.pending.push(slot);
    book.pendingCount++;
    if (pool.reservesLevel(slot)) book.pendingGtc[cmd.side]++;
  }

  /** Every check of a place, in the documented order; on Ok also computes the lock. */
  private validatePlace(cmd: Command): ResultCode {
    const s = this.s;
    if (!s.accounts.exists(cmd.accountId)) return ResultCode.UnknownAccount;
    const marketIndex = s.catalog.marketIndex(cmd.marketId);
    if (marketIndex < 0) return ResultCode.UnknownMarket;
    const isMarket = cmd.orderType === OrderType.Market;
    if (!(isMarket ? isSupportedMarketOrder(cmd) : isSupportedLimitOrder(cmd))) return ResultCode.InvalidCommand;
    const stateCode = bookStateRefusal(s.books[marketIndex].orderBookState, isMarket, (cmd.flags & CommandFlag.PostOnly) !== 0);
    if (stateCode !== ResultCode.Ok) return stateCode;
    const market = s.catalog.markets[marketIndex];
    const byQuote = isMarket && cmd.quoteQtyUnits > 0;
    if (!byQuote && cmd.qtyLots < market.minQtyLots) return ResultCode.QuantityBelowMinimum;
    if (!byQuote && cmd.qtyLots > market.maxQtyLots) return ResultCode.QuantityAboveMaximum;
    if (!isMarket && cmd.priceTicks < market.minPriceTicks) return ResultCode.PriceBelowMinimum;
    if (!isMarket && cmd.priceTicks > market.maxPriceTicks) return ResultCode.PriceAboveMaximum;
    if (!isMarket && isOutsideBand(market, s.books[marketIndex].bandReferenceTicks, cmd.priceTicks)) return ResultCode.PriceOutOfBand;
    if (s.pool.accountOpenCount[cmd.accountId] >= s.limits.maxOpenOrdersPerAccount) return ResultCode.OrderLimitReached;
    const book = s.books[marketIndex];
    // The order itself takes a slot while it matches, even if it will not rest.
    if (book.restingCount + book.pendingCount >= s.limits.maxOrdersPerBook) return ResultCode.BookFull;
    if (isMarket) return this.marketLock(cmd, marketIndex);
    if (cmd.timeInForce === TimeInForce.GTC) {
      // A GTC order may rest; a delayed one cannot know yet whether its price level will exist,
      // so it reserves a level until it activates.
      const bookSide = book.sideOf(cmd.side);
      const delayed = (cmd.flags & CommandFlag.PostOnly) === 0 && s.speedBumpUs > 0;
      const needsLevel = delayed || bookSide.find(cmd.priceTicks as PriceTicks) === NO_LEVEL;
      if (needsLevel && bookSide.count + book.pendingGtc[cmd.side] >= s.limits.maxPriceLevelsPerSide) return ResultCode.BookFull;
    }
    const bid = cmd.side === Side.Bid;
    this.placeLockAsset = bid ? s.catalog.quoteIndexOf[marketIndex] : s.catalog.baseIndexOf[marketIndex];
    this.placeLockUnits = bid
      ? notionalUnits(cmd.priceTicks as PriceTicks, cmd.qtyLots as QtyLots, market.quoteUnitsPerTickLot)
      : baseUnits(cmd.qtyLots as QtyLots, market.baseUnitsPerLot);
    this.placeLots = cmd.qtyLots as QtyLots;
    if (s.ledger.availableUnits(cmd.accountId, this.placeLockAsset) < this.placeLockUnits) return ResultCode.InsufficientFunds;
    return ResultCode.Ok;
  }

  /** Lot cap, quote limit and lock of a market order that passed the other checks (header rules). */
  private marketLock(cmd: Command, marketIndex: number): ResultCode {
    const s = this.s;
    const market = s.catalog.markets[marketIndex];
    const bid = cmd.side === Side.Bid;
    this.placeLockAsset = bid ? s.catalog.quoteIndexOf[marketIndex] : s.catalog.baseIndexOf[marketIndex];
    const available = s.ledger.availableUnits(cmd.accountId, this.placeLockAsset);
    // No lot can trade below minPriceTicks, so this is the cheapest a lot can ever cost.
    const lotQuoteUnitsMin = notionalUnits(market.minPriceTicks as PriceTicks, 1 as QtyLots, market.quoteUnitsPerTickLot);
    if (cmd.quoteQtyUnits > 0) {
      const quoteLots = Math.min(market.maxQtyLots, floorDiv(cmd.quoteQtyUnits, lotQuoteUnitsMin));
      if (quoteLots < market.minQtyLots) return ResultCode.QuantityBelowMinimum;
      this.placeQuoteLimitUnits = cmd.quoteQtyUnits as AmountUnits;
      this.placeLots = (bid ? quoteLots : Math.min(quoteLots, floorDiv(available, market.baseUnitsPerLot))) as QtyLots;
      // An ask capped by its available base below the market's minimum cannot sell the minimum.
      if (this.placeLots < market.minQtyLots) return ResultCode.InsufficientFunds;
      this.placeLockUnits = bid ? this.placeQuoteLimitUnits : baseUnits(this.placeLots, market.baseUnitsPerLot);
    } else {
      this.placeLots = cmd.qtyLots as QtyLots;
      const worstUnits = notionalUnits(market.maxPriceTicks as PriceTicks, this.placeLots, market.quoteUnitsPerTickLot);
      this.placeQuoteLimitUnits = bid ? (Math.min(available, worstUnits) as AmountUnits) : MAX_AMOUNT_UNITS;
      if (bid && this.placeQuoteLimitUnits < lotQuoteUnitsMin) return ResultCode.InsufficientFunds;
      this.placeLockUnits = bid ? this.placeQuoteLimitUnits : baseUnits(this.placeLots, market.baseUnitsPerLot);
    }
    if (available < this.placeLockUnits) return ResultCode.InsufficientFunds;
    return ResultCode.Ok;
  }

  private cancelOrder(cmd: Command): void {
    const s = this.s;
    const marketIndex = s.catalog.marketIndex(cmd.marketId);
    let slot = NO_SLOT;
    let code: ResultCode = ResultCode.Ok;
    if (!s.accounts.exists(cmd.accountId)) code = ResultCode.UnknownAccount;
    else if (marketIndex < 0) code = ResultCode.UnknownMarket;
    else {
      const byClientId = (cmd.flags & CommandFlag.HasClientId) !== 0;
      slot = s.findOpenOrder(cmd.accountId, marketIndex, byClientId, cmd.orderId, cmd.clientId);
      if (slot === NO_SLOT) code = ResultCode.UnknownOrder;
    }
    if (code !== ResultCode.Ok) return s.out.result(code, 0, cmd.frontId, cmd.requestId);
    cancelOpenOrder(s, slot, ExpiryReason.None);
    s.out.order(slot, OrderEvent.None, OrderStatus.Cancelled, ExpiryReason.None, cmd.frontId, cmd.requestId, HeaderFlag.Last);
    closeOrder(s, slot);
  }

  private cancelAll(cmd: Command): void {
    const s = this.s;
    const pool = s.pool;
    const marketIndex = s.catalog.marketIndex(cmd.marketId);
    if (!s.accounts.exists(cmd.accountId)) return s.out.result(ResultCode.UnknownAccount, 0, cmd.frontId, cmd.requestId);
    if (marketIndex < 0) return s.out.result(ResultCode.UnknownMarket, 0, cmd.frontId, cmd.requestId);
    let cancelled = 0;
    for (let slot = pool.accountHead[cmd.accountId], after = NO_SLOT; slot !== NO_SLOT; slot = after) {
      after = pool.accountNext[slot];
      if (pool.marketIndex[slot] !== marketIndex) continue;
      cancelOpenOrder(s, slot, ExpiryReason.None);
      s.out.order(slot, OrderEvent.None, OrderStatus.Cancelled, ExpiryReason.None, cmd.frontId, cmd.requestId, 0);
      closeOrder(s, slot);
      cancelled++;
    }
    s.out.result(ResultCode.Ok, cancelled, cmd.frontId, cmd.requestId);
  }
}

/** Enum values, flags and client id a place of either type must have. */
function hasKnownFields(cmd: Command, supportedFlags: number): boolean {
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
function isSupportedLimitOrder(cmd: Command): boolean {
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
function isSupportedMarketOrder(cmd: Command): boolean {
  if (cmd.timeInForce !== TimeInForce.GTC && cmd.timeInForce !== TimeInForce.IOC) return false;
  if (!hasKnownFields(cmd, CommandFlag.HasClientId)) return false;
  if (cmd.priceTicks !== 0 || !Number.isSafeInteger(cmd.qtyLots) || !Number.isSafeInteger(cmd.quoteQtyUnits)) return false;
  return (cmd.qtyLots > 0 && cmd.quoteQtyUnits === 0) || (cmd.qtyLots === 0 && cmd.quoteQtyUnits > 0);
}
