// Wire shapes of account history (§3.2, §3.4, §6 of the wire reference): the order history item,
// the fill, the deposit, the withdrawal and the dust conversion, built from the integer records of
// engine/store/history-account.ts with the configuration's decimals.
//
// Times: order history createdAt, fill timestamp, deposit/withdrawal createdAt and dust timestamp
// are naive ISO date-times with milliseconds (ccxt parses fills with parse8601). Ids: order ids
// are strings of digits, trade/deposit/withdrawal/dust ids integers, clientId an integer in
// orders and a string in fills. Deposits and withdrawals are simulated on-chain flows: deposits
// come from the operator (source "administrator"), withdrawals are confirmed by the simulated
// chain with a deterministic transaction hash.

import type { AssetConfig, MarketInfo, ServerConfig } from '../config.js';
import { OrderFlag, OrderType, type OrderRec } from '../../engine/bus/types.js';
import type { DepositRecord, DustRecord, WithdrawalRecord } from '../../engine/store/history-account.js';
import { assetText, isoMillis, priceText, qtyText, quoteText } from './market-codec.js';
import { EXPIRY_REASON, ORDER_STATUS, ORDER_TYPE, SELF_TRADE_PREVENTION, SIDE, SYSTEM_ORDER_TYPE, TIME_IN_FORCE } from './enums.js';
import { formatDecimal } from '../decimal.js';

/** An order history item: the Order keys, createdAt as a date-time, plus expiryReason and systemOrderType. */
export function orderHistoryJson(market: MarketInfo, rec: OrderRec): Record<string, unknown> {
  const isMarket = rec.orderType === OrderType.Market;
  const byQuote = rec.quoteQtyUnits > 0;
  return {
    id: String(rec.orderId),
    clientId: (rec.orderFlags & OrderFlag.HasClientId) !== 0 ? rec.clientId : null,
    createdAt: isoMillis(rec.createdAtUs),
    executedQuantity: qtyText(market, rec.executedQtyLots),
    executedQuoteQuantity: quoteText(market, rec.executedQuoteUnits),
    expiryReason: EXPIRY_REASON.name(rec.expiryReason) ?? null,
    orderType: ORDER_TYPE.name(rec.orderType),
    postOnly: (rec.orderFlags & OrderFlag.PostOnly) !== 0,
    price: isMarket ? null : priceText(market, rec.priceTicks),
    quantity: byQuote ? null : qtyText(market, rec.qtyLots),
    quoteQuantity: byQuote ? quoteText(market, rec.quoteQtyUnits) : null,
    selfTradePrevention: SELF_TRADE_PREVENTION.name(rec.selfTradePrevention),
    status: ORDER_STATUS.name(rec.status),
    side: SIDE.name(rec.side),
    symbol: market.symbol,
    timeInForce: TIME_IN_FORCE.name(rec.timeInForce),
    systemOrderType: SYSTEM_ORDER_TYPE.name(rec.systemOrderType) ?? null,
    strategyId: null,
    slippageTolerance: null,
    slippageToleranceType: null,
    triggerBy: null,
    triggerPrice: null,
    triggerQuantity: null,
    stopLossTriggerPrice: null,
    stopLossLimitPrice: null,
    stopLossTriggerBy: null,
    takeProfitTriggerPrice: null,
    takeProfitLimitPrice: null,
    takeProfitTriggerBy: null,
  };
}

/**
 * A fill from its fill event: the fee is in the asset the party received (a liquidation fill's
 * includes the liquidation fee), systemOrderType the order's (null: a client's own order).
 */
export function fillJson(config: ServerConfig, rec: OrderRec): Record<string, unknown> {
  const market = config.markets[rec.marketId];
  const feeAsset = config.assets[rec.feeAssetId];
  return {
    tradeId: rec.tradeId,
    orderId: String(rec.orderId),
    clientId: (rec.orderFlags & OrderFlag.HasClientId) !== 0 ? String(rec.clientId) : null,
    symbol: market.symbol,
    side: SIDE.name(rec.side),
    price: priceText(market, rec.lastFillPriceTicks),
    quantity: qtyText(market, rec.lastFillQtyLots),
    fee: formatDecimal(rec.feeUnits, feeAsset.decimals),
    feeSymbol: feeAsset.symbol,
    isMaker: (rec.orderFlags & OrderFlag.IsMaker) !== 0,
    systemOrderType: SYSTEM_ORDER_TYPE.name(rec.systemOrderType) ?? null,
    timestamp: isoMillis(rec.timeUs),
  };
}

export function depositJson(config: ServerConfig, d: DepositRecord): Record<string, unknown> {
  const asset = config.assets[d.assetId];
  return {
    id: d.id,
    toAddress: null,
    fromAddress: null,
    source: 'administrator',
    status: 'confirmed',
    transactionHash: null,
    symbol: asset.symbol,
    quantity: assetText(asset, d.amountUnits),
    createdAt: isoMillis(d.timeUs),
    fiatAmount: null,
    fiatCurrency: null,
    institutionBic: null,
    platformMemo: null,
  };
}

export function withdrawalJson(config: ServerConfig, w: WithdrawalRecord): Record<string, unknown> {
  const asset = config.assets[w.assetId];
  return {
    id: w.id,
    blockchain: w.blockchain,
    clientId: w.clientId,
    identifier: null,
    quantity: assetText(asset, w.amountUnits),
    fee: '0',
    fiatFee: null,
    fiatState: null,
    fiatSymbol: null,
    providerId: null,
    symbol: asset.symbol,
    status: w.status,
    subaccountId: null,
    toAddress: w.address,
    transactionHash: w.transactionHash,
    createdAt: isoMillis(w.timeUs),
    isInternal: false,
    bankName: null,
    bankIdentifier: null,
    accountIdentifier: null,
    triggerAt: null,
  };
}

export function dustJson(config: ServerConfig, d: DustRecord): Record<string, unknown> {
  const market = config.markets[d.marketId];
  const base: AssetConfig = config.assets[market.spec.baseAssetId];
  return {
    id: d.id,
    quantity: assetText(base, d.amountUnits),
    symbol: base.symbol,
    usdcReceived: quoteText(market, d.payoutUnits),
    timestamp: isoMillis(d.timeUs),
  };
}
