// Writes the core's outputs through the RecordSink, one reused record object per kind.
//
// The sink copies what it needs before returning (see RecordSink), so the hot path fills the
// same seven objects over and over and allocates nothing. Every record's header gets the seq and
// engine time of the apply in progress (set by begin), its addressing (a request's
// frontId/requestId, or FRONT_ID_NONE and 0 for a stream event) and its flags.

import {
  FRONT_ID_NONE,
  HeaderFlag,
  OrderEvent,
  OrderFlag,
  OrderType,
  RecordType,
  Side,
  type AccountRec,
  type BalanceRec,
  type DepthRec,
  type ExpiryReason,
  type MarketRec,
  type OrderRec,
  type OrderStatus,
  type RecordHeaderFields,
  type RecordSink,
  type ResultCode,
  type ResultRec,
  type TradeRec,
} from '../types.js';
import type { Accounts } from './accounts.js';
import { assert } from './assert.js';
import type { Book } from './book.js';
import type { Catalog } from './catalog.js';
import type { Ledger } from './ledger.js';
import type { OrderPool } from './orders.js';

function header(): RecordHeaderFields {
  return { seq: 0, timeUs: 0, requestId: 0, frontId: FRONT_ID_NONE, type: RecordType.None, flags: 0 };
}

/** A sink that drops everything; the output before the first apply. */
const NOWHERE: RecordSink = {
  result() {},
  order() {},
  trade() {},
  balance() {},
  depth() {},
  account() {},
  market() {},
};

export class Output {
  private sink: RecordSink = NOWHERE;
  private seq = 0;
  private timeUs = 0;
  private readonly resultRec: ResultRec = { ...header(), value: 0, code: 0 };
  private readonly orderRec: OrderRec = {
    ...header(), orderId: 0, priceTicks: 0, qtyLots: 0, quoteQtyUnits: 0, executedQtyLots: 0,
    executedQuoteUnits: 0, lastFillQtyLots: 0, lastFillPriceTicks: 0, tradeId: 0, feeUnits: 0,
    createdAtUs: 0, accountId: 0, clientId: 0, marketId: 0, feeAssetId: 0, event: 0, side: 0,
    orderType: 0, timeInForce: 0, selfTradePrevention: 0, status: 0, expiryReason: 0, orderFlags: 0,
  };
  private readonly tradeRec: TradeRec = {
    ...header(), tradeId: 0, priceTicks: 0, qtyLots: 0, buyerOrderId: 0, sellerOrderId: 0, marketId: 0, buyerIsMaker: false,
  };
  private readonly balanceRec: BalanceRec = { ...header(), availableUnits: 0, lockedUnits: 0, accountId: 0, assetId: 0 };
  private readonly depthRec: DepthRec = { ...header(), priceTicks: 0, qtyLots: 0, updateId: 0, marketId: 0, side: 0 };
  private readonly accountRec: AccountRec = { ...header(), key: new Uint8Array(32), accountId: 0 };
  private readonly marketRec: MarketRec = { ...header(), updateId: 0, lastTradeId: 0, marketId: 0 };

  constructor(
    private readonly catalog: Catalog,
    private readonly accounts: Accounts,
    private readonly ledger: Ledger,
    private readonly pool: OrderPool,
  ) {}

  /** Starts the outputs of one apply. */
  begin(sink: RecordSink, seq: number, timeUs: number): void {
    this.sink = sink;
    this.seq = seq;
    this.timeUs = timeUs;
  }

  private stamp(rec: RecordHeaderFields, type: RecordType, frontId: number, requestId: number, flags: number): void {
    assert(this.sink !== NOWHERE, 'output written outside an apply');
    rec.seq = this.seq;
    rec.timeUs = this.timeUs;
    rec.frontId = frontId;
    rec.requestId = requestId;
    rec.type = type;
    rec.flags = flags;
  }

  /** A result always ends its response. */
  result(code: ResultCode, value: number, frontId: number, requestId: number): void {
    const rec = this.resultRec;
    this.stamp(rec, RecordType.Result, frontId, requestId, HeaderFlag.Last);
    rec.code = code;
    rec.value = value;
    this.sink.result(rec);
  }

  /** An order record without fill details: an Accepted/Cancelled/Expired event or a state row. */
  order(slot: number, event: OrderEvent, status: OrderStatus, expiryReason: ExpiryReason, frontId: number, requestId: number, flags: number): void {
    this.fillOrder(slot, event, status, expiryReason);
    this.stamp(this.orderRec, RecordType.Order, frontId, requestId, flags);
    this.sink.order(this.orderRec);
  }

  /** An orderFill event (always a stream event); feeUnits is the fee of this fill, in the asset received. */
  orderFill(slot: number, status: OrderStatus, qtyLots: number, priceTicks: number, tradeId: number, isMaker: boolean, feeUnits: number): void {
    const rec = this.orderRec;
    this.fillOrder(slot, OrderEvent.Fill, status, 0);
    rec.feeUnits = feeUnits;
    rec.lastFillQtyLots = qtyLots;
    rec.lastFillPriceTicks = priceTicks;
    rec.tradeId = tradeId;
    if (isMaker) rec.orderFlags |= OrderFlag.IsMaker;
    this.stamp(rec, RecordType.Order, FRONT_ID_NONE, 0, 0);
    this.sink.order(rec);
  }

  private fillOrder(slot: number, event: OrderEvent, status: OrderStatus, expiryReason: ExpiryReason): void {
    const pool = this.pool;
    const rec = this.orderRec;
    const marketIndex = pool.marketIndex[slot];
    const side = pool.side[slot];
    rec.orderId = pool.orderId[slot];
    rec.priceTicks = pool.priceTicks[slot];
    // An order by quote quantity has no quantity of its own (its lot cap is internal).
    rec.quoteQtyUnits = pool.quoteQtyUnits[slot];
    rec.qtyLots = rec.quoteQtyUnits > 0 ? 0 : pool.qtyLots[slot];
    rec.executedQtyLots = pool.executedLots[slot];
    rec.executedQuoteUnits = pool.executedQuoteUnits[slot];
    rec.lastFillQtyLots = 0;
    rec.lastFillPriceTicks = 0;
    rec.tradeId = 0;
    rec.feeUnits = 0;
    rec.createdAtUs = pool.createdAtUs[slot];
    rec.accountId = pool.accountId[slot];
    rec.clientId = pool.clientId[slot];
    rec.marketId = this.catalog.markets[marketIndex].marketId;
    // The fee asset is the one the order receives; feeUnits is set on fill events only.
    rec.feeAssetId = this.catalog.assetIdOf[side === Side.Bid ? this.catalog.baseIndexOf[marketIndex] : this.catalog.quoteIndexOf[marketIndex]];
    rec.event = event;
    rec.side = side;
    rec.orderType = pool.orderType[slot] as OrderType;
    rec.timeInForce = pool.timeInForce[slot];
    rec.selfTradePrevention = pool.selfTradePrevention[slot];
    rec.status = status;
    rec.expiryReason = expiryReason;
    rec.orderFlags = pool.flags[slot];
  }

  trade(marketIndex: number, tradeId: number, priceTicks: number, qtyLots: number, buyerOrderId: number, sellerOrderId: number, buyerIsMaker: boolean): void {
    const rec = this.tradeRec;
    this.stamp(rec, RecordType.Trade, FRONT_ID_NONE, 0, 0);
    rec.tradeId = tradeId;
    rec.priceTicks = priceTicks;
    rec.qtyLots = qtyLots;
    rec.buyerOrderId = buyerOrderId;
    rec.sellerOrderId = sellerOrderId;
    rec.marketId = this.catalog.markets[marketIndex].marketId;
    rec.buyerIsMaker = buyerIsMaker;
    this.sink.trade(rec);
  }

  balance(accountId: number, assetIndex: number, frontId: number, requestId: number): void {
    const rec = this.balanceRec;
    this.stamp(rec, RecordType.Balance, frontId, requestId, 0);
    rec.availableUnits = this.ledger.availableUnits(accountId, assetIndex);
    rec.lockedUnits = this.ledger.lockedUnits(accountId, assetIndex);
    rec.accountId = accountId;
    rec.assetId = this.catalog.assetIdOf[assetIndex];
    this.sink.balance(rec);
  }

  depth(marketIndex: number, side: Side, priceTicks: number, qtyLots: number, updateId: number, frontId: number, requestId: number): void {
    const rec = this.depthRec;
    this.stamp(rec, RecordType.Depth, frontId, requestId, 0);
    rec.priceTicks = priceTicks;
    rec.qtyLots = qtyLots;
    rec.updateId = updateId;
    rec.marketId = this.catalog.markets[marketIndex].marketId;
    rec.side = side;
    this.sink.depth(rec);
  }

  account(accountId: number, frontId: number, requestId: number): void {
    const rec = this.accountRec;
    this.stamp(rec, RecordType.Account, frontId, requestId, 0);
    rec.key.set(this.accounts.keyOf(accountId));
    rec.accountId = accountId;
    this.sink.account(rec);
  }

  market(book: Book, frontId: number, requestId: number): void {
    const rec = this.marketRec;
    this.stamp(rec, RecordType.Market, frontId, requestId, 0);
    rec.updateId = book.updateId;
    rec.lastTradeId = book.lastTradeId;
    rec.marketId = this.catalog.markets[book.marketIndex].marketId;
    this.sink.market(rec);
  }
}
