// Writes the core's outputs into the RecordSink, one reused record object per kind.
//
// Each record is filled here and encoded into the sink's bytes by its generated emitter (emitX),
// so the hot path fills the same objects over and over and allocates nothing, and a sink is only
// a place for bytes: it names no record kind. Every record's header gets the seq and
// engine time of the apply in progress (set by begin), its addressing (a request's
// frontId/requestId, or FRONT_ID_NONE and 0 for a stream event) and its flags.
//
// Why each writer stores its own header fields rather than calling one shared stamp(): V8 keys a
// property store's inline cache on the object's hidden class, and each record kind has its own
// class, so one shared function would see them all and go megamorphic (a slow generic store per
// field). Written out per kind, every store site sees exactly one class. For the same reason the
// records come from the generated newXRec(), plain literals with the header first and no spread.

import {
  FRONT_ID_NONE,
  HeaderFlag,
  OrderEvent,
  OrderFlag,
  OrderType,
  RecordType,
  Side,
  SystemOrderType,
  systemOrderTypeOf,
  type ExpiryReason,
  type IndexPriceSource,
  type MarkPriceSource,
  type OrderStatus,
  type RecordSink,
  type ResultCode,
} from '../bus/types.js';
import { isConversion } from './liquidation/conversion.js';
import {
  SLOT_BYTES,
  emitAccount,
  emitAccountSettings,
  emitBalance,
  emitBorrowLend,
  emitCollateral,
  emitLendPool,
  emitLendPoolSample,
  emitLiquidationPrice,
  emitMarginSummary,
  emitDepth,
  emitDust,
  emitFeeRates,
  emitIndexPrice,
  emitInsurance,
  emitSocializedLoss,
  emitBackstopProvider,
  emitMarket,
  emitMarkPrice,
  emitFundingRate,
  emitFundingPayment,
  emitMarketState,
  emitOrder,
  emitPosition,
  emitOpenInterest,
  emitResult,
  emitSystemState,
  emitTrade,
  newAccountRec,
  newAccountSettingsRec,
  newBalanceRec,
  newBorrowLendRec,
  newCollateralRec,
  newLendPoolRec,
  newLendPoolSampleRec,
  newLiquidationPriceRec,
  newMarginSummaryRec,
  newDepthRec,
  newDustRec,
  newFeeRatesRec,
  newIndexPriceRec,
  newInsuranceRec,
  newSocializedLossRec,
  newBackstopProviderRec,
  newMarketRec,
  newMarkPriceRec,
  newFundingRateRec,
  newFundingPaymentRec,
  newMarketStateRec,
  newOrderRec,
  newPositionRec,
  newOpenInterestRec,
  newResultRec,
  newSystemStateRec,
  newTradeRec,
} from '../bus/codec.js';
import type { Accounts } from './funds/accounts.js';
import type { AccountSettings } from './margin/account-settings.js';
import { assert } from './assert.js';
import type { Book } from './book/book.js';
import type { Catalog } from './catalog.js';
import type { Ledger } from './funds/ledger.js';
import { Of, type OrderPool } from './book/orders.js';
import type { LendPools } from './margin/pools.js';
import { NO_MARK_MARKET, type Mark } from './margin/mark.js';
import { floorDiv } from './margin/fixed.js';
import type { AssetMarginLine, MarginSummary } from './margin/valuation.js';

/** A position's figures as QueryPositions reports them (engine/core/perp/query.ts). */
export interface PositionView {
  accountId: number;
  marketId: number;
  positionId: number;
  netLots: number;
  exposureLots: number;
  costUnits: bigint;
  realizedUnits: bigint;
  unrealizedUnits: bigint;
  unsettledUnits: bigint;
  feesUnits: bigint;
  exposureNotionalUnits: bigint;
  markPriceE9: number;
  markSource: number;
  estLiquidationPriceE9: number;
  imf: bigint;
  mmf: bigint;
  /** Funding paid (< 0) or received since the position opened (perp/cumulative-funding.ts). */
  cumulativeFundingUnits: number;
}
import type { InsuranceLines } from './liquidation/fund.js';
import { BorrowLendEvent, BorrowLendSource, type PositionEvent } from '../bus/types.js';

/** A sink that drops everything (encodes into one scratch slot); the output before the first apply. */
const NOWHERE: RecordSink = { view: new DataView(new ArrayBuffer(SLOT_BYTES)), claim: () => 0, written() {} };

export class Output {
  private sink: RecordSink = NOWHERE;
  private seq = 0;
  private timeUs = 0;
  private readonly resultRec = newResultRec();
  private readonly orderRec = newOrderRec();
  private readonly tradeRec = newTradeRec();
  private readonly balanceRec = newBalanceRec();
  private readonly depthRec = newDepthRec();
  private readonly accountRec = newAccountRec();
  private readonly marketRec = newMarketRec();
  private readonly marketStateRec = newMarketStateRec();
  private readonly feeRatesRec = newFeeRatesRec();
  /**
   * What an order record takes from its market, by market index, looked up once here rather than
   * through the catalog's market objects on every record: the market id, whether it is spot, and
   * the fee asset id of a bid (index × 2) and of an ask (index × 2 + 1): the asset the order
   * receives (a spot bid's base, else the quote; a perpetual's: its quote, USDC).
   */
  private readonly marketIdOf: Uint16Array;
  private readonly spotOf: Uint8Array;
  private readonly feeAssetIdOf: Uint16Array;

  constructor(
    private readonly catalog: Catalog,
    private readonly accounts: Accounts,
    private readonly ledger: Ledger,
    private readonly pool: OrderPool,
    private readonly settings: AccountSettings,
    private readonly pools: LendPools,
  ) {
    const count = catalog.marketCount;
    this.marketIdOf = new Uint16Array(count);
    this.spotOf = new Uint8Array(count);
    this.feeAssetIdOf = new Uint16Array(count * 2);
    for (let m = 0; m < count; m++) {
      const spot = catalog.isSpot(m);
      this.marketIdOf[m] = catalog.markets[m].marketId;
      this.spotOf[m] = spot ? 1 : 0;
      this.feeAssetIdOf[m * 2 + Side.Bid] = catalog.assetIdOf[spot ? catalog.baseIndexOf[m] : catalog.quoteIndexOf[m]];
      this.feeAssetIdOf[m * 2 + Side.Ask] = catalog.assetIdOf[catalog.quoteIndexOf[m]];
    }
  }

  /**
   * Whether an order's event rides in the answer that would repeat its state (HeaderFlag.Event on
   * the answer; book/matching.ts and book/cancel.ts name the cases) instead of a record of its own.
   * True for every command this engine journals (journal format 5); replay of the commands a
   * journal recorded before format 5 turns it off, so that their outputs digest as they did.
   */
  eventsInAnswers = true;

  /**
   * Whether a taker's match ends in one summary (book/matching.ts): its balance records wait until
   * the match ends and are written once, with the amounts it ended with, instead of after each of
   * its fills (takerBalances); and its last fill on a spot market rides in its answer
   * (HeaderFlag.Event, with the fill's quantity, price, trade id and fee) when that fill ends it
   * Filled (carriesLastFill). True for every command this engine journals (journal format 6);
   * replay of the commands a journal recorded before format 6 turns it off, so that their outputs
   * digest as they did.
   */
  takerSummary = true;

  /** The engine time of the apply in progress (what its records carry). */
  get applyTimeUs(): number {
    return this.timeUs;
  }

  /** Starts the outputs of one apply. */
  begin(sink: RecordSink, seq: number, timeUs: number): void {
    this.sink = sink;
    this.seq = seq;
    this.timeUs = timeUs;
  }

  private checkOpen(): void {
    assert(this.sink !== NOWHERE, 'output written outside an apply');
  }

  /** A result always ends its response. */
  result(code: ResultCode, value: number, frontId: number, requestId: number): void {
    const rec = this.resultRec;
    this.checkOpen();
    rec.seq = this.seq;
    rec.timeUs = this.timeUs;
    rec.frontId = frontId;
    rec.requestId = requestId;
    rec.type = RecordType.Result;
    rec.flags = HeaderFlag.Last;
    rec.code = code;
    rec.value = value;
    emitResult(this.sink, rec);
  }

  /**
   * An order record without fill details: an Accepted/Cancelled/Expired event or a state row. An
   * answer (addressed) with an event carries that event: it is flagged HeaderFlag.Event here.
   */
  order(slot: number, event: OrderEvent, status: OrderStatus, expiryReason: ExpiryReason, frontId: number, requestId: number, flags: number): void {
    const rec = this.orderRec;
    this.fillOrder(slot, event, status, expiryReason);
    this.checkOpen();
    rec.seq = this.seq;
    rec.timeUs = this.timeUs;
    rec.frontId = frontId;
    rec.requestId = requestId;
    rec.type = RecordType.Order;
    rec.flags = event !== OrderEvent.None && frontId !== FRONT_ID_NONE ? flags | HeaderFlag.Event : flags;
    emitOrder(this.sink, rec);
  }

  /**
   * An orderFill event; feeUnits is the fee of this fill, in the asset received. Addressed (a
   * frontId), it is the order's answer carrying its last fill (takerSummary): flagged
   * HeaderFlag.Event besides `flags`.
   */
  orderFill(slot: number, status: OrderStatus, qtyLots: number, priceTicks: number, tradeId: number, isMaker: boolean, feeUnits: number, frontId = FRONT_ID_NONE, requestId = 0, flags = 0): void {
    const rec = this.orderRec;
    this.fillOrder(slot, OrderEvent.Fill, status, 0);
    rec.feeUnits = feeUnits;
    rec.lastFillQtyLots = qtyLots;
    rec.lastFillPriceTicks = priceTicks;
    rec.tradeId = tradeId;
    if (isMaker) rec.orderFlags |= OrderFlag.IsMaker;
    this.checkOpen();
    rec.seq = this.seq;
    rec.timeUs = this.timeUs;
    rec.frontId = frontId;
    rec.requestId = requestId;
    rec.type = RecordType.Order;
    rec.flags = frontId === FRONT_ID_NONE ? flags : flags | HeaderFlag.Event;
    emitOrder(this.sink, rec);
  }

  private fillOrder(slot: number, event: OrderEvent, status: OrderStatus, expiryReason: ExpiryReason): void {
    const pool = this.pool;
    const rec = this.orderRec;
    // The slot's first element in each view (orders.ts Of): one shift each, not one per field.
    const f = slot << Of.f64;
    const w = slot << Of.w32;
    const b = slot << Of.w8;
    const marketIndex = pool.u16[slot << Of.w16 | Of.marketIndex];
    const side = pool.u8[b | Of.side];
    rec.orderId = pool.f64[f | Of.orderId];
    rec.priceTicks = pool.f64[f | Of.priceTicks];
    // An order by quote quantity has no quantity of its own (its lot cap is internal).
    rec.quoteQtyUnits = pool.f64[f | Of.quoteQtyUnits];
    rec.qtyLots = rec.quoteQtyUnits > 0 ? 0 : pool.f64[f | Of.qtyLots];
    rec.executedQtyLots = pool.f64[f | Of.executedLots];
    rec.executedQuoteUnits = pool.f64[f | Of.executedQuoteUnits];
    rec.lastFillQtyLots = 0;
    rec.lastFillPriceTicks = 0;
    rec.tradeId = 0;
    rec.feeUnits = 0;
    rec.createdAtUs = pool.f64[f | Of.createdAtUs];
    rec.accountId = pool.u32[w | Of.accountId];
    rec.clientId = pool.u32[w | Of.clientId];
    rec.marketId = this.marketIdOf[marketIndex];
    // The fee asset is the one the order receives; feeUnits is set on fill events only.
    rec.feeAssetId = this.feeAssetIdOf[marketIndex * 2 + side];
    rec.event = event;
    rec.side = side;
    rec.orderType = pool.u8[b | Of.orderType] as OrderType;
    rec.timeInForce = pool.u8[b | Of.timeInForce];
    rec.selfTradePrevention = pool.u8[b | Of.selfTradePrevention];
    rec.status = status;
    rec.expiryReason = expiryReason;
    const flags = pool.u8[b | Of.flags];
    rec.orderFlags = flags;
    // Liquidation and Adl on a spot market: a collateral conversion (liquidation/conversion.ts).
    rec.systemOrderType = isConversion(flags, this.spotOf[marketIndex] === 1) ? SystemOrderType.CollateralConversion : systemOrderTypeOf(flags);
  }

  /** A trade; `headerFlags` HeaderFlag.OffBook for a backstop fill's (liquidation/backstop.ts), else 0. */
  trade(marketIndex: number, tradeId: number, priceTicks: number, qtyLots: number, buyerOrderId: number, sellerOrderId: number, buyerIsMaker: boolean, headerFlags = 0): void {
    const rec = this.tradeRec;
    this.checkOpen();
    rec.seq = this.seq;
    rec.timeUs = this.timeUs;
    rec.frontId = FRONT_ID_NONE;
    rec.requestId = 0;
    rec.type = RecordType.Trade;
    rec.flags = headerFlags;
    rec.tradeId = tradeId;
    rec.priceTicks = priceTicks;
    rec.qtyLots = qtyLots;
    rec.buyerOrderId = buyerOrderId;
    rec.sellerOrderId = sellerOrderId;
    rec.marketId = this.marketIdOf[marketIndex];
    rec.buyerIsMaker = buyerIsMaker;
    emitTrade(this.sink, rec);
  }

  balance(accountId: number, assetIndex: number, frontId: number, requestId: number): void {
    const rec = this.balanceRec;
    this.checkOpen();
    rec.seq = this.seq;
    rec.timeUs = this.timeUs;
    rec.frontId = frontId;
    rec.requestId = requestId;
    rec.type = RecordType.Balance;
    rec.flags = 0;
    rec.availableUnits = this.ledger.availableUnits(accountId, assetIndex);
    rec.lockedUnits = this.ledger.lockedUnits(accountId, assetIndex);
    rec.accountId = accountId;
    rec.assetId = this.catalog.assetIdOf[assetIndex];
    emitBalance(this.sink, rec);
  }

  depth(marketIndex: number, side: Side, priceTicks: number, qtyLots: number, updateId: number, frontId: number, requestId: number): void {
    const rec = this.depthRec;
    this.checkOpen();
    rec.seq = this.seq;
    rec.timeUs = this.timeUs;
    rec.frontId = frontId;
    rec.requestId = requestId;
    rec.type = RecordType.Depth;
    rec.flags = 0;
    rec.priceTicks = priceTicks;
    rec.qtyLots = qtyLots;
    rec.updateId = updateId;
    rec.marketId = this.marketIdOf[marketIndex];
    rec.side = side;
    emitDepth(this.sink, rec);
  }

  account(accountId: number, frontId: number, requestId: number): void {
    const rec = this.accountRec;
    this.checkOpen();
    rec.seq = this.seq;
    rec.timeUs = this.timeUs;
    rec.frontId = frontId;
    rec.requestId = requestId;
    rec.type = RecordType.Account;
    rec.flags = 0;
    rec.key.set(this.accounts.keyOf(accountId));
    rec.accountId = accountId;
    emitAccount(this.sink, rec);
  }

  market(book: Book, frontId: number, requestId: number): void {
    const rec = this.marketRec;
    this.checkOpen();
    rec.seq = this.seq;
    rec.timeUs = this.timeUs;
    rec.frontId = frontId;
    rec.requestId = requestId;
    rec.type = RecordType.Market;
    rec.flags = 0;
    rec.updateId = book.updateId;
    rec.lastTradeId = book.lastTradeId;
    rec.marketId = this.catalog.markets[book.marketIndex].marketId;
    emitMarket(this.sink, rec);
  }

  // Order book states and fee rates
  marketState(book: Book, frontId: number, requestId: number): void {
    const rec = this.marketStateRec;
    this.checkOpen();
    rec.seq = this.seq;
    rec.timeUs = this.timeUs;
    rec.frontId = frontId;
    rec.requestId = requestId;
    rec.type = RecordType.MarketState;
    rec.flags = 0;
    rec.marketId = this.catalog.markets[book.marketIndex].marketId;
    rec.state = book.orderBookState;
    emitMarketState(this.sink, rec);
  }

  feeRates(accountId: number, frontId: number, requestId: number, flags: number): void {
    const rec = this.feeRatesRec;
    this.checkOpen();
    rec.seq = this.seq;
    rec.timeUs = this.timeUs;
    rec.frontId = frontId;
    rec.requestId = requestId;
    rec.type = RecordType.FeeRates;
    rec.flags = flags;
    rec.accountId = accountId;
    rec.makerFeeBps = this.accounts.makerFeeBps[accountId];
    rec.takerFeeBps = this.accounts.takerFeeBps[accountId];
    emitFeeRates(this.sink, rec);
  }

  // The whole exchange's state (system.ts)
  private readonly systemStateRec = newSystemStateRec();

  systemState(state: number, frontId: number, requestId: number): void {
    const rec = this.systemStateRec;
    this.checkOpen();
    rec.seq = this.seq;
    rec.timeUs = this.timeUs;
    rec.frontId = frontId;
    rec.requestId = requestId;
    rec.type = RecordType.SystemState;
    rec.flags = 0;
    rec.state = state;
    emitSystemState(this.sink, rec);
  }

  // Spot risk answers (funds/risk.ts)
  private readonly collateralRec = newCollateralRec();
  private readonly dustRec = newDustRec();

  /** One asset's line of the account's margin summary (valuation.ts); the wide values as high × 2^53 + low. */
  collateral(line: AssetMarginLine, frontId: number, requestId: number): void {
    const rec = this.collateralRec;
    this.checkOpen();
    rec.seq = this.seq;
    rec.timeUs = this.timeUs;
    rec.frontId = frontId;
    rec.requestId = requestId;
    rec.type = RecordType.Collateral;
    rec.flags = 0;
    rec.availableUnits = Number(line.availableUnits);
    rec.lockedUnits = Number(line.lockedUnits);
    rec.lentUnits = Number(line.lentUnits);
    rec.borrowedUnits = Number(line.borrowedUnits);
    rec.markTicks = line.mark?.ticks ?? 0;
    rec.markPriceE9 = line.mark?.priceE9 ?? 0;
    rec.weight = Number(line.weight);
    [rec.notionalHigh, rec.notionalLow] = widePair(line.notionalUnits);
    [rec.collateralValueHigh, rec.collateralValueLow] = widePair(line.collateralUnits);
    [rec.liabilityHigh, rec.liabilityLow] = widePair(line.liabilityUnits);
    rec.assetId = this.catalog.assetIdOf[line.assetIndex];
    rec.marketId = line.mark?.marketId ?? NO_MARK_MARKET;
    rec.markSource = line.mark?.source ?? 0;
    emitCollateral(this.sink, rec);
  }

  private readonly marginSummaryRec = newMarginSummaryRec();

  /** The account figures of its margin summary (valuation.ts); `liquidating` its flag. */
  marginSummary(accountId: number, summary: MarginSummary, liquidating: boolean, frontId: number, requestId: number): void {
    const rec = this.marginSummaryRec;
    const margin = summary.margin;
    this.checkOpen();
    rec.seq = this.seq;
    rec.timeUs = this.timeUs;
    rec.frontId = frontId;
    rec.requestId = requestId;
    rec.type = RecordType.MarginSummary;
    rec.flags = 0;
    [rec.assetsValueHigh, rec.assetsValueLow] = widePair(summary.assetsUnits);
    [rec.liabilitiesHigh, rec.liabilitiesLow] = widePair(summary.liabilitiesUnits);
    [rec.netEquityHigh, rec.netEquityLow] = widePair(summary.netEquityUnits);
    [rec.imfUnitsHigh, rec.imfUnitsLow] = widePair(margin.imfUnits);
    [rec.mmfUnitsHigh, rec.mmfUnitsLow] = widePair(margin.mmfUnits);
    [rec.tenHigh, rec.tenLow] = widePair(margin.tenUnits);
    [rec.marginFractionHigh, rec.marginFractionLow] = widePair(margin.marginFraction ?? 0n);
    rec.accountImf = Number(margin.accountImf);
    rec.accountMmf = Number(margin.accountMmf);
    [rec.pnlUnrealizedHigh, rec.pnlUnrealizedLow] = widePair(summary.perp.pnlUnrealizedUnits);
    [rec.unsettledHigh, rec.unsettledLow] = widePair(summary.perp.unsettledUnits);
    [rec.futuresExposureHigh, rec.futuresExposureLow] = widePair(summary.perp.exposures.reduce((sum, e) => sum + e.notionalUnits, 0n));
    rec.accountId = accountId;
    rec.summaryFlags = (margin.marginFraction === null ? 0 : 1) | (liquidating ? 2 : 0);
    emitMarginSummary(this.sink, rec);
  }


  private readonly positionRec = newPositionRec();

  /** One perpetual position: a row answering QueryPositions (event None) or an event of its change (perp/query.ts computes its figures). */
  position(view: PositionView, event: PositionEvent, frontId: number, requestId: number): void {
    const rec = this.positionRec;
    this.checkOpen();
    rec.seq = this.seq;
    rec.timeUs = this.timeUs;
    rec.frontId = frontId;
    rec.requestId = requestId;
    rec.type = RecordType.Position;
    rec.flags = 0;
    rec.netLots = view.netLots;
    rec.exposureLots = view.exposureLots;
    [rec.costHigh, rec.costLow] = widePair(view.costUnits);
    [rec.realizedHigh, rec.realizedLow] = widePair(view.realizedUnits);
    [rec.unrealizedHigh, rec.unrealizedLow] = widePair(view.unrealizedUnits);
    [rec.unsettledHigh, rec.unsettledLow] = widePair(view.unsettledUnits);
    [rec.feesHigh, rec.feesLow] = widePair(view.feesUnits);
    [rec.exposureNotionalHigh, rec.exposureNotionalLow] = widePair(view.exposureNotionalUnits);
    rec.markPriceE9 = view.markPriceE9;
    rec.estLiquidationPriceE9 = view.estLiquidationPriceE9;
    rec.imf = Number(view.imf);
    rec.mmf = Number(view.mmf);
    rec.positionId = view.positionId;
    rec.cumulativeFundingUnits = view.cumulativeFundingUnits;
    rec.accountId = view.accountId;
    rec.marketId = view.marketId;
    rec.markSource = view.markSource;
    rec.event = event;
    emitPosition(this.sink, rec);
  }

  /** One dust conversion of ConvertAllDust. */
  dust(accountId: number, marketIndex: number, amountUnits: number, payoutUnits: number, frontId: number, requestId: number): void {
    const rec = this.dustRec;
    this.checkOpen();
    rec.seq = this.seq;
    rec.timeUs = this.timeUs;
    rec.frontId = frontId;
    rec.requestId = requestId;
    rec.type = RecordType.Dust;
    rec.flags = 0;
    rec.amountUnits = amountUnits;
    rec.payoutUnits = payoutUnits;
    rec.accountId = accountId;
    rec.marketId = this.marketIdOf[marketIndex];
    emitDust(this.sink, rec);
  }

  // Index prices (margin/index-prices.ts)
  private readonly indexPriceRec = newIndexPriceRec();

  indexPrice(assetId: number, priceE9: number, updatedUs: number, source: IndexPriceSource, stale: boolean, frontId: number, requestId: number, flags: number): void {
    const rec = this.indexPriceRec;
    this.checkOpen();
    rec.seq = this.seq;
    rec.timeUs = this.timeUs;
    rec.frontId = frontId;
    rec.requestId = requestId;
    rec.type = RecordType.IndexPrice;
    rec.flags = flags;
    rec.priceE9 = priceE9;
    rec.updatedUs = updatedUs;
    rec.assetId = assetId;
    rec.source = source;
    rec.stale = stale;
    emitIndexPrice(this.sink, rec);
  }

  // Margin: an account's settings (margin/account-settings.ts)
  private readonly accountSettingsRec = newAccountSettingsRec();

  accountSettings(accountId: number, frontId: number, requestId: number, flags: number): void {
    const rec = this.accountSettingsRec;
    this.checkOpen();
    rec.seq = this.seq;
    rec.timeUs = this.timeUs;
    rec.frontId = frontId;
    rec.requestId = requestId;
    rec.type = RecordType.AccountSettings;
    rec.flags = flags;
    rec.accountId = accountId;
    rec.leverageLimitHundredths = this.settings.leverageLimitHundredths[accountId];
    rec.settings = this.settings.flags[accountId];
    emitAccountSettings(this.sink, rec);
  }

  // Borrow/lend (margin/borrow-lend.ts)
  private readonly borrowLendRec = newBorrowLendRec();
  private readonly lendPoolRec = newLendPoolRec();

  /**
   * A borrow/lend move or an hour's interest (quantityUnits moved or paid, at annual `rate`), made
   * by `source`. A move that closed its position reports the position it closed: `closedId` and
   * `closedInterest` are the position's id and interest as they were before the move (read only
   * when the cell has no position any more).
   */
  borrowLend(
    accountId: number, assetIndex: number, event: BorrowLendEvent, quantityUnits: number, rate: bigint, mark: Mark | null,
    source: BorrowLendSource, closedId: number, closedInterest: number, frontId: number, requestId: number,
  ): void {
    this.fillBorrowLend(accountId, assetIndex, event, mark);
    const rec = this.borrowLendRec;
    if (rec.positionId === 0) {
      rec.positionId = closedId;
      rec.interestUnits = closedInterest;
    }
    rec.quantityUnits = quantityUnits;
    rec.rate = Number(rate);
    rec.imf = 0;
    rec.mmf = 0;
    rec.source = source;
    rec.frontId = frontId;
    rec.requestId = requestId;
    emitBorrowLend(this.sink, rec);
  }

  /** An account's position in one asset, answering a query; imf and mmf of a borrow at its notional. */
  borrowLendPosition(accountId: number, assetIndex: number, imf: bigint, mmf: bigint, mark: Mark | null, frontId: number, requestId: number): void {
    this.fillBorrowLend(accountId, assetIndex, BorrowLendEvent.Position, mark);
    const rec = this.borrowLendRec;
    rec.quantityUnits = 0;
    rec.rate = 0;
    rec.imf = Number(imf);
    rec.mmf = Number(mmf);
    rec.source = BorrowLendSource.Manual;
    rec.frontId = frontId;
    rec.requestId = requestId;
    emitBorrowLend(this.sink, rec);
  }

  private fillBorrowLend(accountId: number, assetIndex: number, event: BorrowLendEvent, mark: Mark | null): void {
    const rec = this.borrowLendRec;
    const cell = this.pools.cell(accountId, assetIndex);
    this.checkOpen();
    rec.seq = this.seq;
    rec.timeUs = this.timeUs;
    rec.type = RecordType.BorrowLend;
    rec.flags = 0;
    rec.lentUnits = this.pools.lent[cell];
    rec.borrowedUnits = this.pools.borrowed[cell];
    rec.interestUnits = this.pools.interest[cell];
    rec.positionId = this.pools.positionId[cell];
    rec.markTicks = mark?.ticks ?? 0;
    rec.accountId = accountId;
    rec.assetId = this.catalog.assetIdOf[assetIndex];
    rec.marketId = mark?.marketId ?? NO_MARK_MARKET;
    rec.event = event;
  }

  /** One pool as it stands, with its rates and utilization (fractions at 10^-12). */
  lendPool(assetIndex: number, borrowRate: bigint, lendRate: bigint, utilization: bigint, mark: Mark | null, frontId: number, requestId: number): void {
    const rec = this.lendPoolRec;
    this.checkOpen();
    rec.seq = this.seq;
    rec.timeUs = this.timeUs;
    rec.frontId = frontId;
    rec.requestId = requestId;
    rec.type = RecordType.LendPool;
    rec.flags = 0;
    rec.lentUnits = this.pools.lentTotal[assetIndex];
    rec.borrowedUnits = this.pools.borrowedTotal[assetIndex];
    rec.borrowRate = Number(borrowRate);
    rec.lendRate = Number(lendRate);
    rec.utilization = Number(utilization);
    rec.interestFeeUnits = this.pools.interestFeeUnits[assetIndex];
    rec.interestRoundingUnits = this.pools.interestRoundingUnits[assetIndex];
    rec.markTicks = mark?.ticks ?? 0;
    rec.assetId = this.catalog.assetIdOf[assetIndex];
    rec.marketId = mark?.marketId ?? NO_MARK_MARKET;
    rec.state = this.pools.stateOf[assetIndex];
    emitLendPool(this.sink, rec);
  }

  private readonly lendPoolSampleRec = newLendPoolSampleRec();

  /** One pool as it stands at the hour `hourUs` of interest, an event for everyone (the market history). */
  lendPoolSample(assetIndex: number, hourUs: number, borrowRate: bigint, lendRate: bigint, utilization: bigint): void {
    const rec = this.lendPoolSampleRec;
    this.checkOpen();
    rec.seq = this.seq;
    rec.timeUs = this.timeUs;
    rec.frontId = FRONT_ID_NONE;
    rec.requestId = 0;
    rec.type = RecordType.LendPoolSample;
    rec.flags = 0;
    rec.hourUs = hourUs;
    rec.lentUnits = this.pools.lentTotal[assetIndex];
    rec.borrowedUnits = this.pools.borrowedTotal[assetIndex];
    rec.borrowRate = Number(borrowRate);
    rec.lendRate = Number(lendRate);
    rec.utilization = Number(utilization);
    rec.assetId = this.catalog.assetIdOf[assetIndex];
    emitLendPoolSample(this.sink, rec);
  }

  private readonly liquidationPriceRec = newLiquidationPriceRec();

  /** QueryLiquidationPrice's answer (prices ×10^9, 0: none). */
  liquidationPrice(accountId: number, assetIndex: number, markE9: number, liquidationE9: number, atMark: boolean, frontId: number, requestId: number): void {
    const rec = this.liquidationPriceRec;
    this.checkOpen();
    rec.seq = this.seq;
    rec.timeUs = this.timeUs;
    rec.frontId = frontId;
    rec.requestId = requestId;
    rec.type = RecordType.LiquidationPrice;
    rec.flags = 0;
    rec.markPriceE9 = markE9;
    rec.liquidationPriceE9 = liquidationE9;
    rec.accountId = accountId;
    rec.assetId = this.catalog.assetIdOf[assetIndex];
    rec.liquidatingAtMark = atMark;
    emitLiquidationPrice(this.sink, rec);
  }

  // Perpetuals: mark prices and funding (perp/mark-price.ts, perp/funding.ts)
  private readonly markPriceRec = newMarkPriceRec();
  private readonly fundingRateRec = newFundingRateRec();

  /** A perpetual's mark, index and running funding estimate (an event each sample, or a query row). */
  markPrice(marketId: number, markE9: number, indexE9: number, rateE12: number, nextFundingUs: number, source: MarkPriceSource, frontId: number, requestId: number): void {
    const rec = this.markPriceRec;
    this.checkOpen();
    rec.seq = this.seq;
    rec.timeUs = this.timeUs;
    rec.frontId = frontId;
    rec.requestId = requestId;
    rec.type = RecordType.MarkPrice;
    rec.flags = 0;
    rec.markPriceE9 = markE9;
    rec.indexPriceE9 = indexE9;
    rec.fundingRateE12 = rateE12;
    rec.nextFundingUs = nextFundingUs;
    rec.marketId = marketId;
    rec.source = source;
    emitMarkPrice(this.sink, rec);
  }

  /** A perpetual's funding interval ended at `intervalEndUs` with `rateE12`, settled at `markE9` (an event). */
  fundingRate(marketId: number, intervalEndUs: number, rateE12: number, markE9: number): void {
    const rec = this.fundingRateRec;
    this.checkOpen();
    rec.seq = this.seq;
    rec.timeUs = this.timeUs;
    rec.frontId = FRONT_ID_NONE;
    rec.requestId = 0;
    rec.type = RecordType.FundingRate;
    rec.flags = 0;
    rec.intervalEndUs = intervalEndUs;
    rec.fundingRateE12 = rateE12;
    rec.markPriceE9 = markE9;
    rec.marketId = marketId;
    emitFundingRate(this.sink, rec);
  }

  private readonly fundingPaymentRec = newFundingPaymentRec();

  /** One account's funding payment (signed from its side: negative paid) at a perpetual's interval end (an event). */
  fundingPayment(accountId: number, marketId: number, quantityUnits: number, intervalEndUs: number, rateE12: number, positionLots: number): void {
    const rec = this.fundingPaymentRec;
    this.checkOpen();
    rec.seq = this.seq;
    rec.timeUs = this.timeUs;
    rec.frontId = FRONT_ID_NONE;
    rec.requestId = 0;
    rec.type = RecordType.FundingPayment;
    rec.flags = 0;
    rec.quantityUnits = quantityUnits;
    rec.intervalEndUs = intervalEndUs;
    rec.fundingRateE12 = rateE12;
    rec.positionLots = positionLots;
    rec.accountId = accountId;
    rec.marketId = marketId;
    emitFundingPayment(this.sink, rec);
  }

  private readonly openInterestRec = newOpenInterestRec();

  /** A perpetual's open interest in base units, answering QueryOpenInterest (perp/open-interest.ts). */
  openInterest(marketId: number, openInterestUnits: number, frontId: number, requestId: number): void {
    const rec = this.openInterestRec;
    this.checkOpen();
    rec.seq = this.seq;
    rec.timeUs = this.timeUs;
    rec.frontId = frontId;
    rec.requestId = requestId;
    rec.type = RecordType.OpenInterest;
    rec.flags = 0;
    rec.openInterestUnits = openInterestUnits;
    rec.marketId = marketId;
    emitOpenInterest(this.sink, rec);
  }

  private readonly insuranceRec = newInsuranceRec();

  /** The insurance fund of one asset (liquidation/fund.ts): an answer, or with FRONT_ID_NONE an event. */
  insurance(assetIndex: number, fund: InsuranceLines, frontId: number, requestId: number): void {
    const rec = this.insuranceRec;
    this.checkOpen();
    rec.seq = this.seq;
    rec.timeUs = this.timeUs;
    rec.frontId = frontId;
    rec.requestId = requestId;
    rec.type = RecordType.Insurance;
    rec.flags = 0;
    rec.fundUnits = fund.fundUnits[assetIndex];
    rec.feesUnits = fund.feesUnits[assetIndex];
    rec.coveredUnits = fund.coveredUnits[assetIndex];
    rec.socializedUnits = fund.socializedUnits[assetIndex];
    rec.depositedUnits = fund.depositedUnits[assetIndex];
    rec.assetId = this.catalog.assetIdOf[assetIndex];
    emitInsurance(this.sink, rec);
  }

  private readonly backstopProviderRec = newBackstopProviderRec();

  /** One backstop liquidity provider and its rank (from 1) in the order providers take positions (liquidation/backstop.ts): an answer. */
  backstopProvider(accountId: number, rank: number, frontId: number, requestId: number): void {
    const rec = this.backstopProviderRec;
    this.checkOpen();
    rec.seq = this.seq;
    rec.timeUs = this.timeUs;
    rec.frontId = frontId;
    rec.requestId = requestId;
    rec.type = RecordType.BackstopProvider;
    rec.flags = 0;
    rec.accountId = accountId;
    rec.rank = rank;
    emitBackstopProvider(this.sink, rec);
  }

  private readonly socializedLossRec = newSocializedLossRec();

  /** A loss written off one lender's lend (liquidation/bankruptcy.ts), an event for everyone. */
  socializedLoss(lenderId: number, bankruptId: number, assetIndex: number, units: number, lentAfterUnits: number): void {
    const rec = this.socializedLossRec;
    this.checkOpen();
    rec.seq = this.seq;
    rec.timeUs = this.timeUs;
    rec.frontId = FRONT_ID_NONE;
    rec.requestId = 0;
    rec.type = RecordType.SocializedLoss;
    rec.flags = 0;
    rec.units = units;
    rec.lentAfterUnits = lentAfterUnits;
    rec.accountId = lenderId;
    rec.bankruptAccountId = bankruptId;
    rec.assetId = this.catalog.assetIdOf[assetIndex];
    emitSocializedLoss(this.sink, rec);
  }
}

/** A wide value's split: high × 2^53 + low (schemas/exchange.fbs, CollateralRecord). */
const WIDE_BASE = 2n ** 53n;

/**
 * [high, low] with value = high × 2^53 + low, 0 ≤ low < 2^53, for any sign (high rounds down). A
 * value in [−2^53, 2^53), every amount a position or a collateral line holds in practice, has high
 * 0 or −1 and takes no bigint division.
 */
export function widePair(value: bigint): [number, number] {
  if (value >= 0n) {
    if (value < WIDE_BASE) return [0, Number(value)];
  } else if (value >= -WIDE_BASE) {
    return [-1, Number(value + WIDE_BASE)];
  }
  const high = floorDiv(value, WIDE_BASE);
  const pair: [number, number] = [Number(high), Number(value - high * WIDE_BASE)];
  assert(Number.isSafeInteger(pair[0]), 'a wide value beyond 2^106');
  return pair;
}
