// Wire shapes of public market history (wire reference §3.1 and §5.2): REST Trade, Kline and
// Ticker, and the ticker and kline stream payloads, from integer candles and trades.
//
// REST values are trimmed decimals ("4422.62"), stream values padded to the market's precision,
// as the venue writes them. Volumes are sums that can pass 2^53 units, so they are formatted from
// bigint. priceChangePercent is a fraction (ccxt multiplies it by 100), truncated to 6 decimals.

import type { MarketInfo } from '../config.js';
import { formatDecimalBig } from '../decimal.js';
import type { Candle, TradeEntry } from '../../engine/store/history-market.js';
import { priceText, priceTextFixed, qtyText } from './market-codec.js';
import { priceE9Text } from './funding.js';

const PERCENT_DECIMALS = 6;

export function volumeText(market: MarketInfo, volumeLots: bigint): string {
  return formatDecimalBig(volumeLots * BigInt(market.stepUnits), market.quantityDecimals);
}

export function quoteVolumeText(market: MarketInfo, quoteTickLots: bigint): string {
  return formatDecimalBig(quoteTickLots * BigInt(market.spec.quoteUnitsPerTickLot), market.quoteDecimals);
}

/** "YYYY-MM-DD HH:MM:SS" (REST klines) or "YYYY-MM-DDTHH:MM:SS" (kline stream), UTC, no zone. */
export function dateText(timeS: number, separator: ' ' | 'T'): string {
  const iso = new Date(timeS * 1000).toISOString();
  return iso.slice(0, 10) + separator + iso.slice(11, 19);
}

export function tradeJson(market: MarketInfo, t: TradeEntry): Record<string, unknown> {
  const quoteUnits = BigInt(t.priceTicks) * BigInt(t.qtyLots) * BigInt(market.spec.quoteUnitsPerTickLot);
  return {
    id: t.tradeId,
    price: priceText(market, t.priceTicks),
    quantity: qtyText(market, t.qtyLots),
    quoteQuantity: formatDecimalBig(quoteUnits, market.quoteDecimals),
    timestamp: Math.floor(t.timeUs / 1000),
    isBuyerMaker: t.buyerIsMaker,
  };
}

export function klineJson(market: MarketInfo, k: Candle & { endS: number }): Record<string, unknown> {
  return {
    start: dateText(k.startS, ' '),
    end: dateText(k.endS, ' '),
    open: priceText(market, k.openTicks),
    high: priceText(market, k.highTicks),
    low: priceText(market, k.lowTicks),
    close: priceText(market, k.closeTicks),
    volume: volumeText(market, k.volumeLots),
    quoteVolume: quoteVolumeText(market, k.quoteTickLots),
    trades: String(k.tradeCount),
  };
}

/**
 * A mark or index price kline: prices are USDC per whole unit ×10^9 (engine/store/history-market.ts),
 * written as decimals; a price has no volume nor trades.
 */
export function priceKlineJson(k: Candle & { endS: number }): Record<string, unknown> {
  return {
    start: dateText(k.startS, ' '),
    end: dateText(k.endS, ' '),
    open: priceE9Text(k.openTicks),
    high: priceE9Text(k.highTicks),
    low: priceE9Text(k.lowTicks),
    close: priceE9Text(k.closeTicks),
    volume: '0',
    quoteVolume: '0',
    trades: '0',
  };
}

/**
 * The REST ticker of a window. With no trade in the window the prices are the last trade's (no
 * change, zero volume); a market that never traded shows prices "0" (not null: the official Rust
 * client's Ticker requires every price field as a decimal).
 */
export function tickerJson(market: MarketInfo, w: Candle, last: TradeEntry | null): Record<string, unknown> {
  if (w.tradeCount === 0) {
    const price = last === null ? '0' : priceText(market, last.priceTicks);
    return {
      symbol: market.symbol, firstPrice: price, lastPrice: price, priceChange: '0', priceChangePercent: '0',
      high: price, low: price, volume: '0', quoteVolume: '0', trades: '0',
    };
  }
  const changeTicks = w.closeTicks - w.openTicks;
  const fraction = (BigInt(changeTicks) * 10n ** BigInt(PERCENT_DECIMALS)) / BigInt(w.openTicks);
  return {
    symbol: market.symbol,
    firstPrice: priceText(market, w.openTicks),
    lastPrice: priceText(market, w.closeTicks),
    priceChange: changeTicks < 0 ? '-' + priceText(market, -changeTicks) : priceText(market, changeTicks),
    priceChangePercent: formatDecimalBig(fraction, PERCENT_DECIMALS),
    high: priceText(market, w.highTicks),
    low: priceText(market, w.lowTicks),
    volume: volumeText(market, w.volumeLots),
    quoteVolume: quoteVolumeText(market, w.quoteTickLots),
    trades: String(w.tradeCount),
  };
}

/**
 * ticker.<symbol> payload: the 24-hour window (`n` is an integer here, a string in REST); prices
 * "0" for a market that never traded, as in REST.
 */
export function tickerStreamJson(market: MarketInfo, w: Candle, last: TradeEntry | null, eventUs: number): Record<string, unknown> {
  const none = w.tradeCount === 0;
  const lastPrice = priceTextFixed(market, last === null ? 0 : last.priceTicks);
  return {
    e: 'ticker', E: eventUs, s: market.symbol,
    o: none ? lastPrice : priceTextFixed(market, w.openTicks),
    c: none ? lastPrice : priceTextFixed(market, w.closeTicks),
    h: none ? lastPrice : priceTextFixed(market, w.highTicks),
    l: none ? lastPrice : priceTextFixed(market, w.lowTicks),
    v: volumeText(market, w.volumeLots),
    V: quoteVolumeText(market, w.quoteTickLots),
    n: w.tradeCount,
  };
}

/** kline.<interval>.<symbol> payload. */
export function klineStreamJson(market: MarketInfo, k: Candle & { endS: number }, closed: boolean, eventUs: number): Record<string, unknown> {
  return {
    e: 'kline', E: eventUs, s: market.symbol,
    t: dateText(k.startS, 'T'), T: dateText(k.endS, 'T'),
    o: priceTextFixed(market, k.openTicks), c: priceTextFixed(market, k.closeTicks),
    h: priceTextFixed(market, k.highTicks), l: priceTextFixed(market, k.lowTicks),
    v: volumeText(market, k.volumeLots), n: k.tradeCount, X: closed,
  };
}
