// Fixed-point arithmetic of the margin family: one scale for every fraction, exact integer
// square roots, and divisions whose rounding direction is named at the call site.
//
// Precision. Every fraction (collateral weight, IMF, MMF, utilization, annual rate, the
// exchange's share of interest, a leverage limit's reciprocal) is an integer count of 10^-12:
// FRACTION_ONE (10^12) is 1, 0.0001275 is 127_500_000. Twelve decimals hold every parameter the
// venue publishes (the finest seen has seven) with room for the products below. Amounts are
// integer smallest units of an asset. Products of an amount and a fraction pass 2^53 easily
// (10^15 units × 10^12), so this family computes in bigint throughout and leaves conversion back
// to numbers to its callers, which know their bounds.
//
// Rounding. Nothing here rounds silently: floorDiv and ceilDiv say which way, and each caller
// rounds against the party that would otherwise gain (requirements and liabilities up, collateral
// and earnings down). Square roots are floors (isqrt) and the functions that need a ceiling of a
// product with a root derive it exactly from the floor (ceilTimesSqrtOver).

import { assert } from '../assert.js';
import { MARGIN_FRACTION_DECIMALS } from '../../bus/margin-params.js';

/** Decimals of a fraction: a fraction is an integer count of 10^-FRACTION_DECIMALS. */
export const FRACTION_DECIMALS = MARGIN_FRACTION_DECIMALS;
/** The fraction 1. */
export const FRACTION_ONE = 10n ** BigInt(FRACTION_DECIMALS);

/** A fraction scaled by FRACTION_ONE (0.02 → 20_000_000_000n). */
export type Fraction = bigint;

/**
 * floor(a / b) for any sign of a and b > 0 (bigint division truncates toward zero). The remainder
 * test is a multiplication, q × b ≠ a, not a second division (`%`): one division a call.
 */
export function floorDiv(a: bigint, b: bigint): bigint {
  assert(b > 0n, 'floorDiv by a non-positive divisor');
  const q = a / b;
  return a < 0n && q * b !== a ? q - 1n : q;
}

/** ceil(a / b) for any sign of a and b > 0; one division, as floorDiv. */
export function ceilDiv(a: bigint, b: bigint): bigint {
  assert(b > 0n, 'ceilDiv by a non-positive divisor');
  const q = a / b;
  return a > 0n && q * b !== a ? q + 1n : q;
}

/** floor(√n) for n ≥ 0, exact (Newton's iteration from above, in bigint). */
export function isqrt(n: bigint): bigint {
  assert(n >= 0n, 'square root of a negative number');
  if (n < 2n) return n;
  // Start above the root: 2^ceil(bits/2) > √n. Newton's step then decreases strictly until it
  // reaches floor(√n), where the next step would not decrease.
  let x = 1n << BigInt((n.toString(2).length + 1) >> 1);
  for (;;) {
    const next = (x + n / x) >> 1n;
    if (next >= x) return x;
    x = next;
  }
}

/**
 * ceil(m × √x / d) for m ≥ 0, x ≥ 0, d > 0, exact: s = floor(m√x) = isqrt(m²x). When m√x is a
 * whole number (s² = m²x) the answer is ceil(s / d); otherwise m√x lies strictly between s and
 * s + 1, where no multiple of d can sit, so the answer is floor(s / d) + 1.
 */
export function ceilTimesSqrtOver(m: bigint, x: bigint, d: bigint): bigint {
  assert(m >= 0n && x >= 0n, 'ceilTimesSqrtOver of a negative value');
  const square = m * m * x;
  const s = isqrt(square);
  return s * s === square ? ceilDiv(s, d) : s / d + 1n;
}

/** The larger of two bigints. */
export function maxBig(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

/** The smaller of two bigints. */
export function minBig(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

/** 10^0 … 10^36, computed once: every valuation asks for a few of them. */
const POWERS_OF_TEN: readonly bigint[] = Array.from({ length: 37 }, (_, exponent) => 10n ** BigInt(exponent));

/** 10^decimals as a bigint. */
export function pow10(decimals: number): bigint {
  const power = POWERS_OF_TEN[decimals];
  assert(power !== undefined, 'pow10 of a bad exponent');
  return power;
}
