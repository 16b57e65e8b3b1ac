// Order shapes on the wire: the REST Order object (execute, get, cancel, open orders) and the
// account.orderUpdate stream payload, built from the engine's OrderRecord with the key names,
// string decimals, id types and time units of the wire reference (§3.3, §5.3, §6): ids are
// strings of digits, clientId an integer or null, createdAt integer milliseconds, stream times
// integer microseconds, the order type upper case on the stream. The Order object is a union on
// orderType: a limit order has price, quantity and postOnly; a market order has quantity and
// quoteQuantity (either may be null: it was placed by the other) and the slippage fields, which
// are always null here (slippage tolerance is not offered).

import type { MarketInfo } from '../config.js';
import { OrderEvent, OrderFlag, OrderType, type OrderRec } from '../../engine/bus/types.js';
import { EXPIRY_REASON, ORDER_EVENT, ORDER_ORIGIN, ORDER_STATUS, ORDER_TYPE, ORDER_TYPE_STREAM, SELF_TRADE_PREVENTION, SIDE, TIME_IN_FORCE } from './enums.js';
import { formatDecimal } from '../decimal.js';
import { priceText, qtyText, quoteText } from './market-codec.js';

/** The type-specific fields of the REST Order object (§3.3). */
function orderSizeJson(market: MarketInfo, rec: OrderRec): Record<string, unknown> {
  if (rec.orderType === OrderType.Market) {
    return {
      quantity: rec.quoteQtyUnits > 0 ? null : qtyText(market, rec.qtyLots),
      quoteQuantity: rec.quoteQtyUnits > 0 ? quoteText(market, rec.quoteQtyUnits) : null,
      slippageTolerance: null,
      slippageToleranceType: null,
    };
  }
  return {
    price: priceText(market, rec.priceTicks),
    quantity: qtyText(market, rec.qtyLots),
    postOnly: (rec.orderFlags & OrderFlag.PostOnly) !== 0,
  };
}

/** The REST Order object of a limit or market order (trigger orders are not offered yet). */
export function orderJson(market: MarketInfo, rec: OrderRec): Record<string, unknown> {
  return {
    orderType: ORDER_TYPE.name(rec.orderType),
    id: String(rec.orderId),
    clientId: (rec.orderFlags & OrderFlag.HasClientId) !== 0 ? rec.clientId : null,
    symbol: market.symbol,
    side: SIDE.name(rec.side),
    ...orderSizeJson(market, rec),
    executedQuantity: qtyText(market, rec.executedQtyLots),
    executedQuoteQuantity: quoteText(market, rec.executedQuoteUnits),
    reduceOnly: (rec.orderFlags & OrderFlag.ReduceOnly) !== 0 ? true : null,
    timeInForce: TIME_IN_FORCE.name(rec.timeInForce),
    selfTradePrevention: SELF_TRADE_PREVENTION.name(rec.selfTradePrevention),
    status: ORDER_STATUS.name(rec.status),
    expiryReason: EXPIRY_REASON.name(rec.expiryReason) ?? null,
    createdAt: Math.floor(rec.createdAtUs / 1000),
    relatedOrderId: null,
    strategyId: null,
    triggerBy: null,
    triggerPrice: null,
    triggerQuantity: null,
    triggeredAt: null,
    stopLossLimitPrice: null,
    stopLossTriggerBy: null,
    stopLossTriggerPrice: null,
    takeProfitLimitPrice: null,
    takeProfitTriggerBy: null,
    takeProfitTriggerPrice: null,
  };
}

/** `,"key":value` for a string (JSON-escaped) or null; nothing for undefined, as JSON.stringify omits it. */
function stringMember(key: string, value: string | null | undefined): string {
  if (value === undefined) return '';
  return value === null ? `,"${key}":null` : `,"${key}":${JSON.stringify(value)}`;
}

/** The members every REST Order object ends with: trigger and take-profit/stop-loss, never set here. */
const UNSET_TRIGGER_MEMBERS = ',"relatedOrderId":null,"strategyId":null,"triggerBy":null,"triggerPrice":null,'
  + '"triggerQuantity":null,"triggeredAt":null,"stopLossLimitPrice":null,"stopLossTriggerBy":null,'
  + '"stopLossTriggerPrice":null,"takeProfitLimitPrice":null,"takeProfitTriggerBy":null,"takeProfitTriggerPrice":null}';

/**
 * The REST Order object as JSON text, written member by member: the same text as
 * `JSON.stringify(orderJson(market, rec))` (same keys, order and values), without building the
 * object first. An order answer is sent once per request, on the path of every acknowledgement.
 */
export function orderJsonText(market: MarketInfo, rec: OrderRec): string {
  let text = stringMember('orderType', ORDER_TYPE.name(rec.orderType));
  text += `,"id":"${String(rec.orderId)}","clientId":${(rec.orderFlags & OrderFlag.HasClientId) !== 0 ? JSON.stringify(rec.clientId) : 'null'}`;
  text += stringMember('symbol', market.symbol) + stringMember('side', SIDE.name(rec.side));
  if (rec.orderType === OrderType.Market) {
    const byQuote = rec.quoteQtyUnits > 0;
    text += stringMember('quantity', byQuote ? null : qtyText(market, rec.qtyLots));
    text += stringMember('quoteQuantity', byQuote ? quoteText(market, rec.quoteQtyUnits) : null);
    text += ',"slippageTolerance":null,"slippageToleranceType":null';
  } else {
    text += stringMember('price', priceText(market, rec.priceTicks)) + stringMember('quantity', qtyText(market, rec.qtyLots));
    text += `,"postOnly":${(rec.orderFlags & OrderFlag.PostOnly) !== 0}`;
  }
  text += stringMember('executedQuantity', qtyText(market, rec.executedQtyLots));
  text += stringMember('executedQuoteQuantity', quoteText(market, rec.executedQuoteUnits));
  text += `,"reduceOnly":${(rec.orderFlags & OrderFlag.ReduceOnly) !== 0 ? 'true' : 'null'}`;
  text += stringMember('timeInForce', TIME_IN_FORCE.name(rec.timeInForce));
  text += stringMember('selfTradePrevention', SELF_TRADE_PREVENTION.name(rec.selfTradePrevention));
  text += stringMember('status', ORDER_STATUS.name(rec.status));
  text += stringMember('expiryReason', EXPIRY_REASON.name(rec.expiryReason) ?? null);
  text += `,"createdAt":${JSON.stringify(Math.floor(rec.createdAtUs / 1000))}`;
  return `{${text.slice(1)}${UNSET_TRIGGER_MEMBERS}`;
}

/** The account.orderUpdate payload (`data`) of one order event. */
export function orderUpdateJson(
  market: MarketInfo,
  rec: OrderRec,
  eventTimeUs: number,
  feeSymbol: string,
): Record<string, unknown> {
  const data: Record<string, unknown> = {
    e: ORDER_EVENT.name(rec.event) ?? 'orderUpdate',
    E: eventTimeUs,
    s: market.symbol,
  };
  if ((rec.orderFlags & OrderFlag.HasClientId) !== 0) data.c = rec.clientId;
  data.S = SIDE.name(rec.side);
  data.o = ORDER_TYPE_STREAM.name(rec.orderType);
  data.f = TIME_IN_FORCE.name(rec.timeInForce);
  const isMarket = rec.orderType === OrderType.Market;
  // An order by quote quantity shows it as Q (and q as 0, as the venue does); a market order has no p.
  if (rec.quoteQtyUnits > 0) data.Q = quoteText(market, rec.quoteQtyUnits);
  data.q = qtyText(market, rec.qtyLots);
  if (!isMarket) data.p = priceText(market, rec.priceTicks);
  data.X = ORDER_STATUS.name(rec.status);
  if (rec.event === OrderEvent.Expired) data.R = EXPIRY_REASON.name(rec.expiryReason) ?? 'Unknown';
  data.i = String(rec.orderId);
  data.t = rec.event === OrderEvent.Fill ? rec.tradeId : null;
  if (rec.event === OrderEvent.Fill) {
    data.l = qtyText(market, rec.lastFillQtyLots);
    data.L = priceText(market, rec.lastFillPriceTicks);
    data.m = (rec.orderFlags & OrderFlag.IsMaker) !== 0;
    data.n = quoteTextForFee(market, rec, feeSymbol);
    data.N = feeSymbol;
  }
  data.z = qtyText(market, rec.executedQtyLots);
  data.Z = quoteText(market, rec.executedQuoteUnits);
  data.V = SELF_TRADE_PREVENTION.name(rec.selfTradePrevention);
  data.T = rec.timeUs;
  // Who placed it (the wire's origin): a liquidation's system order, or the account itself.
  data.O = ORDER_ORIGIN.name(rec.systemOrderType) ?? 'USER';
  data.r = (rec.orderFlags & OrderFlag.ReduceOnly) !== 0;
  data.y = (rec.orderFlags & OrderFlag.PostOnly) !== 0;
  return data;
}

/** The fee is charged in the asset the party receives: base for a buyer, quote for a seller. */
function quoteTextForFee(market: MarketInfo, rec: OrderRec, feeSymbol: string): string {
  const decimals = feeSymbol === market.baseSymbol ? market.baseDecimals : market.quoteDecimals;
  return formatDecimal(rec.feeUnits, decimals);
}
