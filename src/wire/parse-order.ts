// Turns an order request body (the OrderExecute shape of the wire reference) into the integer
// fields of a PlaceOrder command, or the error to answer with. Pure; tested without sockets.
//
// Accepted as real clients send them: decimals as strings (or JSON numbers), clientId as an
// integer or a string of digits (bpx-py), orderType also in upper case (the Rust client), and
// unknown keys ignored (ccxt adds its own). Features the engine does not have yet (trigger /
// take-profit / stop-loss orders, reduce-only, slippage tolerance) are refused with
// NOT_IMPLEMENTED rather than silently ignored. The spot margin flags autoLend, autoLendRedeem,
// autoBorrow and autoBorrowRepay become command flags (engine/core/margin/auto-funding.ts).
//
// A market order carries exactly one of `quantity` (lots) and `quoteQuantity` (units of the quote
// asset, parsed at its decimals). A `price` on a market order is refused rather than ignored (ccxt
// sends none; a client that does probably meant a limit order), as are postOnly and FOK, which
// the engine does not offer for market orders. timeInForce GTC or IOC is accepted and recorded;
// either way the unfilled remainder of a market order expires.

import type { MarketInfo } from '../config.js';
import { Errors, type ApiError } from '../errors.js';
import { CommandFlag, OrderType, SelfTradePrevention, Side, TimeInForce } from '../../engine/bus/types.js';
import { ORDER_TYPE, SELF_TRADE_PREVENTION, SIDE, SLIPPAGE_TOLERANCE_TYPE, TIME_IN_FORCE, TRIGGER_BY, type WireEnum } from './enums.js';
import { parsePriceTicks, parseQtyLots, parseQuoteUnits } from './market-codec.js';

export interface ParsedOrder {
  market: MarketInfo;
  side: Side;
  orderType: OrderType;
  timeInForce: TimeInForce;
  selfTradePrevention: SelfTradePrevention;
  flags: number;
  /** 0 for a market order. */
  priceTicks: number;
  /** 0 for a market order by quote quantity. */
  qtyLots: number;
  /** Market orders by quote quantity only, else 0. */
  quoteQtyUnits: number;
  clientId: number;
}

const NOT_YET = [
  'triggerPrice', 'triggerQuantity', 'stopLossTriggerPrice', 'stopLossLimitPrice', 'takeProfitTriggerPrice',
  'takeProfitLimitPrice', 'slippageTolerance',
];
/**
 * Every field of the wire reference's OrderExecute body. Anything else is refused rather than
 * ignored: ccxt passes unknown params through (its unified `stopLossPrice`, say), and ignoring
 * one would place a plain order where the user asked for something else.
 */
const ORDER_FIELDS = new Set([
  'symbol', 'side', 'orderType', 'price', 'quantity', 'quoteQuantity', 'timeInForce', 'postOnly', 'reduceOnly',
  'selfTradePrevention', 'clientId', 'brokerId', 'triggerPrice', 'triggerQuantity', 'triggerBy', 'stopLossTriggerPrice',
  'stopLossLimitPrice', 'stopLossTriggerBy', 'takeProfitTriggerPrice', 'takeProfitLimitPrice', 'takeProfitTriggerBy',
  'autoLend', 'autoLendRedeem', 'autoBorrow', 'autoBorrowRepay', 'slippageTolerance', 'slippageToleranceType',
]);
/** The spot margin flags and their command bits (engine/core/margin/auto-funding.ts). */
const MARGIN_FLAGS: Array<[string, number]> = [
  ['autoLend', CommandFlag.AutoLend], ['autoLendRedeem', CommandFlag.AutoLendRedeem],
  ['autoBorrow', CommandFlag.AutoBorrow], ['autoBorrowRepay', CommandFlag.AutoBorrowRepay],
];

/** The command bits of the spot margin flags a body sets, or the error of a non-boolean one. */
function marginFlags(body: Record<string, unknown>): number | ApiError {
  let flags = 0;
  for (const [key, bit] of MARGIN_FLAGS) {
    const flag = parseBool(body[key], key);
    if (typeof flag !== 'boolean') return flag;
    if (flag) flags |= bit;
  }
  return flags;
}
/**
 * Enum fields that qualify features not built yet (trigger, stop-loss, take-profit, slippage
 * tolerance): a valid value alone changes nothing (the feature's own field is refused above), but
 * a value outside the wire reference's enum is refused like any other bad enum.
 */
const QUALIFIER_ENUMS: Array<[string, WireEnum<number>]> = [
  ['triggerBy', TRIGGER_BY],
  ['stopLossTriggerBy', TRIGGER_BY],
  ['takeProfitTriggerBy', TRIGGER_BY],
  ['slippageToleranceType', SLIPPAGE_TOLERANCE_TYPE],
];

function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/** A uint32 client id from a JSON integer or a string of digits; -1 if neither. */
export function parseClientId(value: unknown): number {
  const n = typeof value === 'string' && /^\d{1,10}$/.test(value) ? Number(value) : value;
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= 0xffffffff ? n : -1;
}

/** An order id from a string of digits or a JSON integer; -1 if neither. */
export function parseOrderId(value: unknown): number {
  const n = typeof value === 'string' && /^\d{1,16}$/.test(value) ? Number(value) : value;
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : -1;
}

function parseBool(value: unknown, name: string): boolean | ApiError {
  if (value === undefined || value === null) return false;
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === 'false') return value === 'true';
  return Errors.invalid(`${name} must be a boolean`);
}

/** A uint16 broker id from a JSON integer or a string of digits; -1 if neither. */
function parseBrokerId(value: unknown): number {
  const n = typeof value === 'string' && /^\d{1,5}$/.test(value) ? Number(value) : value;
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= 0xffff ? n : -1;
}

/** The error for a present brokerId or qualifier enum outside the wire reference's types, else null. */
function checkQualifiers(body: Record<string, unknown>): ApiError | null {
  for (const [key, allowed] of QUALIFIER_ENUMS) {
    const value = body[key];
    if (present(value) && allowed.value(value) === undefined) return Errors.invalid(`${key} must be ${allowed.choices()}`);
  }
  if (present(body.brokerId) && parseBrokerId(body.brokerId) < 0) return Errors.invalid('brokerId must be an integer from 0 to 65535');
  return null;
}

export function parseOrder(body: Record<string, unknown>, markets: Map<string, MarketInfo>): ParsedOrder | ApiError {
  for (const key of Object.keys(body)) {
    if (!ORDER_FIELDS.has(key)) return Errors.invalid(`Unknown order field: ${key.slice(0, 40)}`);
  }
  const symbol = body.symbol;
  if (typeof symbol !== 'string') return Errors.invalid('symbol is required');
  const market = markets.get(symbol);
  if (!market) return Errors.invalidMarket(symbol.slice(0, 40));

  const side = SIDE.value(body.side);
  if (side === undefined) return Errors.invalid(`side must be ${SIDE.choices()}`);

  const orderType = ORDER_TYPE.value(body.orderType);
  if (orderType === undefined) return Errors.invalid(`orderType must be ${ORDER_TYPE.choices()}`);
  const isMarket = orderType === OrderType.Market;

  for (const key of NOT_YET) if (present(body[key])) return Errors.notImplemented(`${key}`);
  const qualifierError = checkQualifiers(body);
  if (qualifierError) return qualifierError;
  const size = isMarket ? parseMarketSize(body, market) : parseLimitSize(body, market);
  if ('status' in size) return size;
  const { priceTicks, qtyLots, quoteQtyUnits } = size;

  let timeInForce = TimeInForce.GTC;
  if (present(body.timeInForce)) {
    const tif = TIME_IN_FORCE.value(body.timeInForce);
    if (tif === undefined) return Errors.invalid(`timeInForce must be ${TIME_IN_FORCE.choices()}`);
    timeInForce = tif;
  }
  if (isMarket && timeInForce === TimeInForce.FOK) return Errors.invalidOrder('FOK is not supported for market orders');
  let selfTradePrevention = SelfTradePrevention.RejectTaker;
  if (present(body.selfTradePrevention)) {
    const stp = SELF_TRADE_PREVENTION.value(body.selfTradePrevention);
    if (stp === undefined) return Errors.invalid(`selfTradePrevention must be ${SELF_TRADE_PREVENTION.choices()}`);
    selfTradePrevention = stp;
  }
  let flags = marginFlags(body);
  if (typeof flags !== 'number') return flags;
  // Reduce-only (futures only): the engine refuses it on a spot market (INVALID_ORDER).
  const reduceOnly = parseBool(body.reduceOnly, 'reduceOnly');
  if (typeof reduceOnly !== 'boolean') return reduceOnly;
  if (reduceOnly) flags |= CommandFlag.ReduceOnly;
  const postOnly = parseBool(body.postOnly, 'postOnly');
  if (typeof postOnly !== 'boolean') return postOnly;
  if (postOnly) {
    if (isMarket) return Errors.invalidOrder('postOnly is not allowed for market orders');
    if (timeInForce !== TimeInForce.GTC) return Errors.invalidOrder('postOnly orders must be GTC');
    flags |= CommandFlag.PostOnly;
  }
  let clientId = 0;
  if (present(body.clientId)) {
    clientId = parseClientId(body.clientId);
    if (clientId < 0) return Errors.invalid('clientId must be an integer from 0 to 4294967295');
    flags |= CommandFlag.HasClientId;
  }
  return { market, side, orderType, timeInForce, selfTradePrevention, flags, priceTicks, qtyLots, quoteQtyUnits, clientId };
}

interface OrderSize {
  priceTicks: number;
  qtyLots: number;
  quoteQtyUnits: number;
}

function parseLimitSize(body: Record<string, unknown>, market: MarketInfo): OrderSize | ApiError {
  if (present(body.quoteQuantity)) return Errors.invalidOrder('quoteQuantity is only for market orders');
  if (!present(body.price)) return Errors.invalidPrice('price is required for limit orders');
  const priceTicks = parsePriceTicks(market, body.price);
  if (typeof priceTicks !== 'number') return priceTicks;
  if (!present(body.quantity)) return Errors.invalidQuantity('quantity is required');
  const qtyLots = parseQtyLots(market, body.quantity);
  if (typeof qtyLots !== 'number') return qtyLots;
  return { priceTicks, qtyLots, quoteQtyUnits: 0 };
}

function parseMarketSize(body: Record<string, unknown>, market: MarketInfo): OrderSize | ApiError {
  if (present(body.price)) return Errors.invalidOrder('price is not allowed for market orders');
  const hasQuantity = present(body.quantity);
  if (hasQuantity === present(body.quoteQuantity)) {
    return Errors.invalidQuantity('Market orders need exactly one of quantity and quoteQuantity');
  }
  if (hasQuantity) {
    const qtyLots = parseQtyLots(market, body.quantity);
    return typeof qtyLots === 'number' ? { priceTicks: 0, qtyLots, quoteQtyUnits: 0 } : qtyLots;
  }
  const quoteQtyUnits = parseQuoteUnits(market, body.quoteQuantity);
  return typeof quoteQtyUnits === 'number' ? { priceTicks: 0, qtyLots: 0, quoteQtyUnits } : quoteQtyUnits;
}

export interface OrderTarget {
  market: MarketInfo;
  orderId: number;
  clientId: number;
  byClientId: boolean;
}

/** symbol plus exactly one of orderId / clientId (cancel and query). */
export function parseOrderTarget(source: Record<string, unknown>, markets: Map<string, MarketInfo>): OrderTarget | ApiError {
  const symbol = source.symbol;
  if (typeof symbol !== 'string') return Errors.invalid('symbol is required');
  const market = markets.get(symbol);
  if (!market) return Errors.invalidMarket(symbol.slice(0, 40));
  const hasOrderId = present(source.orderId);
  const hasClientId = present(source.clientId);
  if (hasOrderId === hasClientId) return Errors.invalid('Specify exactly one of orderId and clientId');
  if (hasOrderId) {
    const orderId = parseOrderId(source.orderId);
    if (orderId < 0) return Errors.invalid('orderId must be a string of digits');
    return { market, orderId, clientId: 0, byClientId: false };
  }
  const clientId = parseClientId(source.clientId);
  if (clientId < 0) return Errors.invalid('clientId must be an integer from 0 to 4294967295');
  return { market, orderId: 0, clientId, byClientId: true };
}
