// Units of the engine core and the only places they are multiplied or added.
//
// Prices are integer ticks, quantities integer lots, amounts integer smallest units of an asset.
// Branded types make passing a price where a quantity is expected a compile error. Every product
// and sum of amounts goes through a helper here that asserts the result is still a safe integer:
// the catalog proves at construction that the largest order's notional fits, and the ledger
// bounds each asset's supply, so these assertions can only fire on a bug.

import { assert } from './assert.js';

export type PriceTicks = number & { readonly __unit: 'price_ticks' };
export type QtyLots = number & { readonly __unit: 'qty_lots' };
export type AmountUnits = number & { readonly __unit: 'amount_units' };

export const MAX_AMOUNT_UNITS = Number.MAX_SAFE_INTEGER as AmountUnits;

/** priceTicks × qtyLots × quoteUnitsPerTickLot, exact. */
export function notionalUnits(priceTicks: PriceTicks, qtyLots: QtyLots, quoteUnitsPerTickLot: number): AmountUnits {
  const ticksLots = priceTicks * qtyLots;
  assert(Number.isSafeInteger(ticksLots), 'price × quantity left the safe-integer range');
  const units = ticksLots * quoteUnitsPerTickLot;
  assert(Number.isSafeInteger(units), 'notional left the safe-integer range');
  return units as AmountUnits;
}

/** qtyLots × baseUnitsPerLot, exact. */
export function baseUnits(qtyLots: QtyLots, baseUnitsPerLot: number): AmountUnits {
  const units = qtyLots * baseUnitsPerLot;
  assert(Number.isSafeInteger(units), 'base amount left the safe-integer range');
  return units as AmountUnits;
}

/** floor(a / b) for safe non-negative integers, exact (a float quotient can round up near 2^53). */
export function floorDiv(a: number, b: number): number {
  assert(Number.isSafeInteger(a) && a >= 0 && Number.isSafeInteger(b) && b > 0, 'floorDiv of a non-integer or by zero');
  // a % b is exact for doubles, so a - a % b is an exact multiple of b and the division is exact.
  return (a - (a % b)) / b;
}

/** One part in 10000. */
export const BPS_PER_UNIT = 10_000;

/**
 * The fee on `receivedUnits` at `feeBps` basis points: floor(received × bps / 10000), exact.
 * Rounding down means the fee never exceeds the rate, and since fee ≤ received the party never
 * gets a negative amount: no rounding step creates or destroys a unit (received = credited + fee).
 * The product can pass 2^53, so it is split: received = q × 10000 + r gives
 * floor(received × bps / 10000) = q × bps + floor(r × bps / 10000), every term a safe integer.
 */
export function feeUnits(receivedUnits: AmountUnits, feeBps: number): AmountUnits {
  assert(Number.isInteger(feeBps) && feeBps >= 0 && feeBps <= BPS_PER_UNIT, 'fee rate out of range');
  const remainder = receivedUnits % BPS_PER_UNIT;
  const whole = (receivedUnits - remainder) / BPS_PER_UNIT;
  const fee = whole * feeBps + floorDiv(remainder * feeBps, BPS_PER_UNIT);
  assert(fee <= receivedUnits, 'fee exceeds what was received');
  return fee as AmountUnits;
}

export function addUnits(a: AmountUnits, b: AmountUnits): AmountUnits {
  const sum = a + b;
  assert(Number.isSafeInteger(sum), 'amount sum left the safe-integer range');
  return sum as AmountUnits;
}

export function subUnits(a: AmountUnits, b: AmountUnits): AmountUnits {
  const difference = a - b;
  assert(difference >= 0, 'amount would go negative');
  return difference as AmountUnits;
}
