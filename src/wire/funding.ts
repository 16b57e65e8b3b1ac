// The wire units of perpetual mark prices and funding: the engine writes prices as USDC ×10^9
// (engine/core/margin/index-prices.ts) and rates at 10^-12 (engine/core/perp/funding.ts); the wire
// shows them as decimals with trailing zeros trimmed, and funding interval ends as the venue's
// naive date-time.

import { formatDecimal } from '../decimal.js';

export const PRICE_E9_DECIMALS = 9;
export const RATE_E12_DECIMALS = 12;

export function priceE9Text(priceE9: number): string {
  return formatDecimal(priceE9, PRICE_E9_DECIMALS);
}

export function rateE12Text(rateE12: number): string {
  return formatDecimal(rateE12, RATE_E12_DECIMALS);
}

/** A naive ISO date-time of engine µs, as the venue writes intervalEndTimestamp: "2025-09-11T20:00:00". */
export function naiveDateTime(timeUs: number): string {
  return new Date(Math.floor(timeUs / 1000)).toISOString().slice(0, 19);
}
