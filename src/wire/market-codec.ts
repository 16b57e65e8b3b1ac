// Decimal strings ↔ a market's integer units, at the edge (front threads) only.
//
// A price string is parsed exactly at the market's price decimals, then must be a whole number of
// ticks; a quantity likewise at the step's decimals and a whole number of lots. More decimals than
// the grid allows is "Price decimal too long" / "Quantity decimal too long" (the messages clients
// know); on-grid decimals that are not a multiple of a non-unit tick are "not a multiple".
// Clients send decimals as JSON strings; a JSON number is accepted too (rendered with String(n),
// which is exact for the short decimals clients send), never used as a float.

import type { AssetConfig, MarketInfo } from '../config.js';
import { apiError, type ApiError } from '../errors.js';
import { decimalError, formatDecimal, formatDecimalFixed, parseDecimal } from '../decimal.js';

export function decimalText(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return String(value);
  return null;
}

function parseOnGrid(
  value: unknown,
  decimals: number,
  unit: number,
  what: 'Price' | 'Quantity',
  code: string,
): number | ApiError {
  const text = decimalText(value);
  if (text === null) return apiError(400, code, `${what} must be a decimal string`);
  const units = parseDecimal(text, decimals);
  if (units < 0) {
    const why = decimalError(text, decimals);
    if (why === 'too_many_decimals') return apiError(400, code, `${what} decimal too long`);
    if (why === 'too_large') return apiError(400, code, `${what} is too large`);
    return apiError(400, code, `${what} is not a valid decimal: ${JSON.stringify(text).slice(0, 40)}`);
  }
  if (units % unit !== 0) return apiError(400, code, `${what} is not a multiple of the ${what === 'Price' ? 'tick' : 'step'} size`);
  const count = units / unit;
  if (count === 0) return apiError(400, code, `${what} must be positive`);
  return count;
}

export function parsePriceTicks(market: MarketInfo, value: unknown): number | ApiError {
  return parseOnGrid(value, market.priceDecimals, market.tickUnits, 'Price', 'INVALID_PRICE');
}

export function parseQtyLots(market: MarketInfo, value: unknown): number | ApiError {
  return parseOnGrid(value, market.quantityDecimals, market.stepUnits, 'Quantity', 'INVALID_QUANTITY');
}

/** A quote quantity (market orders) at the quote asset's decimals; positive only. */
export function parseQuoteUnits(market: MarketInfo, value: unknown): number | ApiError {
  const text = decimalText(value);
  if (text === null) return apiError(400, 'INVALID_QUANTITY', 'Quote quantity must be a decimal string');
  const units = parseDecimal(text, market.quoteDecimals);
  if (units < 0) {
    const why = decimalError(text, market.quoteDecimals);
    if (why === 'too_many_decimals') return apiError(400, 'INVALID_QUANTITY', 'Quote quantity decimal too long');
    if (why === 'too_large') return apiError(400, 'INVALID_QUANTITY', 'Quote quantity is too large');
    return apiError(400, 'INVALID_QUANTITY', `Quote quantity is not a valid decimal: ${JSON.stringify(text).slice(0, 40)}`);
  }
  if (units === 0) return apiError(400, 'INVALID_QUANTITY', 'Quote quantity must be positive');
  return units;
}

/**
 * Parses an asset amount at the asset's decimals; positive only, and at most the largest whole
 * count of units the server holds exactly (Number.MAX_SAFE_INTEGER units).
 */
export function parseAssetUnits(asset: AssetConfig, value: unknown): number | ApiError {
  const text = decimalText(value);
  const units = text === null ? -1 : parseDecimal(text, asset.decimals);
  if (text !== null && units < 0 && decimalError(text, asset.decimals) === 'too_large') {
    const max = formatDecimal(Number.MAX_SAFE_INTEGER, asset.decimals);
    return apiError(400, 'INVALID_QUANTITY', `Quantity is too large: at most ${max} ${asset.symbol}`);
  }
  if (units <= 0) {
    return apiError(400, 'INVALID_QUANTITY', `Quantity must be a positive decimal with at most ${asset.decimals} decimals`);
  }
  return units;
}

export function priceText(market: MarketInfo, priceTicks: number): string {
  return formatDecimal(priceTicks * market.tickUnits, market.priceDecimals);
}

export function qtyText(market: MarketInfo, qtyLots: number): string {
  return formatDecimal(qtyLots * market.stepUnits, market.quantityDecimals);
}

/** Padded to the market's precision, as depth snapshots and stream payloads show them. */
export function priceTextFixed(market: MarketInfo, priceTicks: number): string {
  return formatDecimalFixed(priceTicks * market.tickUnits, market.priceDecimals);
}

export function qtyTextFixed(market: MarketInfo, qtyLots: number): string {
  return formatDecimalFixed(qtyLots * market.stepUnits, market.quantityDecimals);
}

export function quoteText(market: MarketInfo, quoteUnits: number): string {
  return formatDecimal(quoteUnits, market.quoteDecimals);
}

export function assetText(asset: AssetConfig, units: number): string {
  return formatDecimal(units, asset.decimals);
}

/** Naive ISO date-time with milliseconds ("2025-08-13T17:26:01.197"), from engine microseconds. */
export function isoMillis(timeUs: number): string {
  return new Date(Math.floor(timeUs / 1000)).toISOString().slice(0, 23);
}
