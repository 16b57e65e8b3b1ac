// Order shapes on the wire: the REST Order object (execute, get, cancel, open orders) and the
// account.orderUpdate stream payload, built from the engine's OrderRecord with the key names,
// string decimals, id types and time units of the wire reference (§3.3, §5.3, §6): ids are
// strings of digits, clientId an integer or null, createdAt integer milliseconds, stream times
// integer microseconds, the order type upper case on the stream.

import type { MarketInfo } from '../config.js';
import { OrderEvent, OrderFlag, type OrderRec } from '../../engine/types.js';
import { formatDecimal } from '../decimal.js';
import { priceText, qtyText, quoteText } from './market-codec.js';

export const SIDE_NAMES = ['Bid', 'Ask'] as const;
export const ORDER_TYPE_NAMES = ['Limit', 'Market'] as const;
export const ORDER_TYPE_STREAM_NAMES = ['LIMIT', 'MARKET'] as const;
export const TIME_IN_FORCE_NAMES = ['GTC', 'IOC', 'FOK'] as const;
export const STP_NAMES = ['RejectTaker', 'RejectMaker', 'RejectBoth'] as const;
export const STATUS_NAMES = [
  'New', 'PartiallyFilled', 'Filled', 'Cancelled', 'Expired', 'TriggerPending', 'TriggerFailed',
] as const;
/** ExpiryReason enum → the REST expiryReason names (the stream's `R` uses the same names). */
export const EXPIRY_REASON_NAMES = [
  null, 'ImmediateOrCancel', 'FillOrKill', 'PostOnlyTaker', 'SelfTradePrevention', 'InsufficientLiquidity', 'PriceOutOfBounds',
] as const;
export const ORDER_EVENT_NAMES: Record<number, string> = {
  [OrderEvent.Accepted]: 'orderAccepted',
  [OrderEvent.Cancelled]: 'orderCancelled',
  [OrderEvent.Expired]: 'orderExpired',
  [OrderEvent.Fill]: 'orderFill',
  [OrderEvent.Modified]: 'orderModified',
  [OrderEvent.TriggerPlaced]: 'triggerPlaced',
  [OrderEvent.TriggerFailed]: 'triggerFailed',
};

/** The REST Order object of a limit order (market and trigger orders come with issue 3). */
export function orderJson(market: MarketInfo, rec: OrderRec): Record<string, unknown> {
  return {
    orderType: ORDER_TYPE_NAMES[rec.orderType],
    id: String(rec.orderId),
    clientId: (rec.orderFlags & OrderFlag.HasClientId) !== 0 ? rec.clientId : null,
    symbol: market.symbol,
    side: SIDE_NAMES[rec.side],
    price: priceText(market, rec.priceTicks),
    quantity: qtyText(market, rec.qtyLots),
    executedQuantity: qtyText(market, rec.executedQtyLots),
    executedQuoteQuantity: quoteText(market, rec.executedQuoteUnits),
    postOnly: (rec.orderFlags & OrderFlag.PostOnly) !== 0,
    reduceOnly: null,
    timeInForce: TIME_IN_FORCE_NAMES[rec.timeInForce],
    selfTradePrevention: STP_NAMES[rec.selfTradePrevention],
    status: STATUS_NAMES[rec.status],
    expiryReason: EXPIRY_REASON_NAMES[rec.expiryReason] ?? null,
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

/** The account.orderUpdate payload (`data`) of one order event. */
export function orderUpdateJson(
  market: MarketInfo,
  rec: OrderRec,
  eventTimeUs: number,
  feeSymbol: string,
): Record<string, unknown> {
  const data: Record<string, unknown> = {
    e: ORDER_EVENT_NAMES[rec.event] ?? 'orderUpdate',
    E: eventTimeUs,
    s: market.symbol,
  };
  if ((rec.orderFlags & OrderFlag.HasClientId) !== 0) data.c = rec.clientId;
  data.S = SIDE_NAMES[rec.side];
  data.o = ORDER_TYPE_STREAM_NAMES[rec.orderType];
  data.f = TIME_IN_FORCE_NAMES[rec.timeInForce];
  data.q = qtyText(market, rec.qtyLots);
  data.p = priceText(market, rec.priceTicks);
  data.X = STATUS_NAMES[rec.status];
  if (rec.event === OrderEvent.Expired) data.R = EXPIRY_REASON_NAMES[rec.expiryReason] ?? 'Unknown';
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
  data.V = STP_NAMES[rec.selfTradePrevention];
  data.T = rec.timeUs;
  data.O = 'USER';
  data.r = false;
  data.y = (rec.orderFlags & OrderFlag.PostOnly) !== 0;
  return data;
}

/** The fee is charged in the asset the party receives: base for a buyer, quote for a seller. */
function quoteTextForFee(market: MarketInfo, rec: OrderRec, feeSymbol: string): string {
  const decimals = feeSymbol === market.baseSymbol ? market.baseDecimals : market.quoteDecimals;
  return formatDecimal(rec.feeUnits, decimals);
}
