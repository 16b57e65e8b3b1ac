// Position margin fractions (venue mechanics §1.4): the initial and maintenance margin fraction
// of one exposure of notional N, and the floor a leverage limit puts under the initial one.
//
//   positionIMF = max(BaseIMF, imf.factor · √N),  BaseIMF = max(imf.base, 1 / leverageLimit)
//   positionMMF = max(mmf.base, mmf.factor · √N)
//
// N is in whole units of the quote asset (USDC), as the venue's example reads: SOL perp
// {base 0.02, factor 0.0001275} at N = 100 000 gives 0.0001275 · 316.23 = 4.03 %.
//
// Precision and rounding: fractions at 10^-12 (fixed.ts), rounded up, exactly (the square root
// is never approximated: ceilTimesSqrtOver compares squares). The reciprocal of a leverage limit
// rounds up too. A margin requirement in quote units, N × fraction, rounds up. Every rounding
// here raises what the account must hold, never lowers it.

import { assert } from '../assert.js';
import type { MarginFunctionSpec } from '../../bus/margin-params.js';
import { ceilDiv, ceilTimesSqrtOver, FRACTION_ONE, maxBig, pow10, type Fraction } from './fixed.js';

/** Hundredths in one: a leverage limit is a decimal with at most two places (PATCH /account). */
const LEVERAGE_HUNDREDTHS_PER_UNIT = 100n;

/** ceil(factor × √(N / 10^quoteDecimals)) at 10^-12, exact; notionalUnits in quote units. */
export function sqrtTerm(factor: Fraction, notionalUnits: bigint, quoteDecimals: number): Fraction {
  assert(notionalUnits >= 0n && factor >= 0n, 'a notional and a factor are not negative');
  const scale = pow10(quoteDecimals);
  // √(N / 10^d) = √(N · 10^d) / 10^d, so factor·√N = factor · √(N·10^d) / 10^d.
  return ceilTimesSqrtOver(factor, notionalUnits * scale, scale);
}

/** 1 / leverageLimit at 10^-12, rounded up; the limit is given in hundredths (10× → 1000). */
export function leverageLimitFraction(leverageLimitHundredths: bigint): Fraction {
  assert(leverageLimitHundredths >= LEVERAGE_HUNDREDTHS_PER_UNIT, 'a leverage limit is at least 1');
  return ceilDiv(FRACTION_ONE * LEVERAGE_HUNDREDTHS_PER_UNIT, leverageLimitHundredths);
}

/** BaseIMF = max(imf.base, 1 / leverageLimit): the IMF of a position of any size. */
export function baseImf(imf: MarginFunctionSpec, leverageLimitHundredths: bigint): Fraction {
  return maxBig(imf.base, leverageLimitFraction(leverageLimitHundredths));
}

/** positionIMF = max(BaseIMF, imf.factor · √N). */
export function positionImf(
  imf: MarginFunctionSpec, notionalUnits: bigint, quoteDecimals: number, leverageLimitHundredths: bigint,
): Fraction {
  return maxBig(baseImf(imf, leverageLimitHundredths), sqrtTerm(imf.factor, notionalUnits, quoteDecimals));
}

/** positionMMF = max(mmf.base, mmf.factor · √N). */
export function positionMmf(mmf: MarginFunctionSpec, notionalUnits: bigint, quoteDecimals: number): Fraction {
  return maxBig(mmf.base, sqrtTerm(mmf.factor, notionalUnits, quoteDecimals));
}

/** N × fraction in quote units, rounded up: the equity one exposure requires. */
export function requirementUnits(notionalUnits: bigint, fraction: Fraction): bigint {
  assert(notionalUnits >= 0n && fraction >= 0n, 'a notional and a fraction are not negative');
  return ceilDiv(notionalUnits * fraction, FRACTION_ONE);
}
