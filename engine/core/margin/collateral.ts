// Collateral value of a holding and the value of a liability, at a mark price (venue mechanics
// §1.1, §1.2).
//
// A holding counts free + locked + lent quantity (lent assets count in full); its value is
// quantity × mark × collateral weight. The weight is the asset's haircut function: constant
// (identity) or min(weight, base / (1 + penalty·√x)) (inverseSqrt, the FTX-lineage reading the
// venue's parameters suggest; x is the holding in whole tokens or its notional in whole USDC, a
// per-asset switch). An asset without collateral parameters has weight 0. Liabilities (borrowed
// quantity) count at mark with no haircut.
//
// Precision and rounding: weights are fractions at 10^-12 (fixed.ts). A weight rounds down
// (inverseSqrt is irrational in general; the floor is exact, found by comparing squares). A
// collateral value is one floor of the exact product quantity × price × weight: the account is
// never credited more than its collateral is worth. A liability value is the ceiling of
// quantity × price: never less than the debt.

import { assert } from '../assert.js';
import type { HaircutSpec } from '../../bus/margin-params.js';
import { ceilDiv, FRACTION_ONE, minBig, pow10, isqrt, type Fraction } from './fixed.js';

/** A mark price: `quoteUnits` of the quote asset (USDC) for `baseUnits` of the asset. */
export interface UnitPrice {
  quoteUnits: bigint;
  baseUnits: bigint;
}

function checkPrice(price: UnitPrice): void {
  assert(price.quoteUnits >= 0n && price.baseUnits > 0n, 'a price needs quoteUnits >= 0 and baseUnits > 0');
}

/** floor(qty × price), in quote units: the notional of a holding before its haircut. */
export function notionalFloor(qtyUnits: bigint, price: UnitPrice): bigint {
  checkPrice(price);
  assert(qtyUnits >= 0n, 'a holding is not negative');
  return (qtyUnits * price.quoteUnits) / price.baseUnits;
}

/** ceil(qty × price), in quote units: a liability, or an exposure notional. */
export function notionalCeil(qtyUnits: bigint, price: UnitPrice): bigint {
  checkPrice(price);
  assert(qtyUnits >= 0n, 'a liability quantity is not negative');
  return ceilDiv(qtyUnits * price.quoteUnits, price.baseUnits);
}

/**
 * floor(10^12 × base / (1 + penalty·√x)) with x = xUnits / 10^xDecimals, exact. Writing
 * E = 10^12 · 10^xDecimals, X = xUnits · 10^xDecimals and N = base · E, the weight is the largest
 * m with m·(E + penalty·√X) ≤ N, i.e. N − m·E ≥ 0 and (m·penalty)²·X ≤ (N − m·E)². With
 * s = floor(penalty·√X) the answer lies in [N / (E + s + 1), N / (E + s)], an interval of width
 * below base/E + 1, so a short upward search from its floor finds it.
 */
export function inverseSqrtWeight(base: Fraction, penalty: Fraction, xUnits: bigint, xDecimals: number): Fraction {
  assert(base >= 0n && penalty >= 0n && xUnits >= 0n, 'inverseSqrt parameters and x are not negative');
  const scale = pow10(xDecimals);
  const e = FRACTION_ONE * scale;
  const x = xUnits * scale;
  const n = base * e;
  const s = isqrt(penalty * penalty * x);
  const fits = (m: bigint): boolean => {
    const room = n - m * e;
    return room >= 0n && m * m * penalty * penalty * x <= room * room;
  };
  const high = n / (e + s);
  let m = n / (e + s + 1n);
  assert(fits(m), 'inverseSqrt weight: the lower bound does not fit');
  while (m < high && fits(m + 1n)) m += 1n;
  return m;
}

/**
 * The collateral weight of a holding. `quantityUnits`/`quantityDecimals` measure it in tokens,
 * `notionalUnits`/`notionalDecimals` in the quote asset; the haircut's basis picks one.
 */
export function haircutWeight(
  haircut: HaircutSpec | undefined,
  quantityUnits: bigint, quantityDecimals: number,
  notionalUnits: bigint, notionalDecimals: number,
): Fraction {
  if (haircut === undefined) return 0n;
  if (haircut.kind === 'identity') return haircut.weight;
  const byQuantity = haircut.basis === 'quantity';
  const curve = inverseSqrtWeight(
    haircut.base, haircut.penalty,
    byQuantity ? quantityUnits : notionalUnits, byQuantity ? quantityDecimals : notionalDecimals,
  );
  return minBig(haircut.weight, curve);
}

/** A holding's collateral line: its notional, its weight and its collateral value (quote units). */
export interface CollateralLine {
  notionalUnits: bigint;
  weight: Fraction;
  collateralUnits: bigint;
}

/**
 * Collateral value of `qtyUnits` (free + locked + lent) of an asset with `assetDecimals` at
 * `price`, quote decimals `quoteDecimals`: floor(qty × price × weight), one rounding.
 */
export function collateralLine(
  haircut: HaircutSpec | undefined, qtyUnits: bigint, assetDecimals: number, price: UnitPrice, quoteDecimals: number,
): CollateralLine {
  const notionalUnits = notionalFloor(qtyUnits, price);
  const weight = haircutWeight(haircut, qtyUnits, assetDecimals, notionalUnits, quoteDecimals);
  return { notionalUnits, weight, collateralUnits: weighted(qtyUnits, price, weight) };
}

/**
 * floor(qty × price × weight): the one rounding of a collateral value. A full weight cancels
 * FRACTION_ONE exactly, and a price of one unit for one unit (the valuation asset's own) leaves
 * the quantity: the same floor with fewer bigint products.
 */
function weighted(qtyUnits: bigint, price: UnitPrice, weight: Fraction): bigint {
  if (weight !== FRACTION_ONE) return (qtyUnits * price.quoteUnits * weight) / (price.baseUnits * FRACTION_ONE);
  return price.quoteUnits === price.baseUnits ? qtyUnits : (qtyUnits * price.quoteUnits) / price.baseUnits;
}

/**
 * collateralLine(…).collateralUnits alone, the same value: the notional is computed only when the
 * haircut's curve reads it (an inverseSqrt on the notional basis), and an asset without collateral
 * parameters (weight 0) is worth 0 at once.
 */
export function collateralValue(
  haircut: HaircutSpec | undefined, qtyUnits: bigint, assetDecimals: number, price: UnitPrice, quoteDecimals: number,
): bigint {
  checkPrice(price);
  assert(qtyUnits >= 0n, 'a holding is not negative');
  if (haircut === undefined) return 0n;
  const notionalUnits = haircut.kind === 'inverseSqrt' && haircut.basis === 'notional' ? notionalFloor(qtyUnits, price) : 0n;
  return weighted(qtyUnits, price, haircutWeight(haircut, qtyUnits, assetDecimals, notionalUnits, quoteDecimals));
}

/** One asset of an account: held (free + locked in orders), lent and borrowed, in the asset's units. */
export interface AssetHolding {
  heldUnits: bigint;
  lentUnits: bigint;
  borrowedUnits: bigint;
}

/**
 * What one asset adds to net equity and what it owes: the collateral value of held + lent
 * (lent counts in full, one holding for the haircut) and the liability of the borrowed quantity.
 */
export function assetValue(
  haircut: HaircutSpec | undefined, holding: AssetHolding, assetDecimals: number, price: UnitPrice, quoteDecimals: number,
): { collateralUnits: bigint; liabilityUnits: bigint } {
  assert(holding.heldUnits >= 0n && holding.lentUnits >= 0n && holding.borrowedUnits >= 0n, 'holdings are not negative');
  const line = collateralLine(haircut, holding.heldUnits + holding.lentUnits, assetDecimals, price, quoteDecimals);
  return { collateralUnits: line.collateralUnits, liabilityUnits: notionalCeil(holding.borrowedUnits, price) };
}
