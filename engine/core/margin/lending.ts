// Borrow/lend pool arithmetic (venue mechanics §2): utilization, the two-slope borrow rate, the
// lend rate, interest over a duration (hourly, or to the next hour for an entry fee), and the
// throttle's utilization ceiling.
//
//   u          = borrowed / lent                                   (0 when nothing is lent)
//                (the rate takes u at most 1: rMax from full utilization on)
//   borrowRate = r0 + (rOpt − r0) · u / uOpt                        for u ≤ uOpt
//              = rOpt + (rMax − rOpt) · (u − uOpt) / (1 − uOpt)      above
//   lendRate   = borrowRate · u · (1 − fee)                         (fee: the exchange's share)
//   interest   = quantity · annualRate · durationMs / (365 days in ms)
//
// Precision and rounding: fractions and annual rates at 10^-12 (fixed.ts); quantities in the
// asset's smallest units. Each rate is computed from the exact utilization B/L (no rounded
// utilization in between) with one rounding: the borrow rate up, the lend rate down. Interest
// owed rounds up, interest earned rounds down, and each returns its residue: what the rounding
// kept from the party, in 1/INTEREST_RESIDUE_DENOMINATOR of a unit, exact, for the caller to book
// to a ledger line of the venue. Together these keep a pool from paying out more than it takes:
// Σ lend interest ≤ (1 − fee) · Σ borrow interest, since lent · lendRate ≤ borrowed · borrowRate · (1 − fee).

import { assert } from '../assert.js';
import type { LendPoolSpec } from '../../bus/margin-params.js';
import { ceilDiv, floorDiv, FRACTION_ONE, minBig, type Fraction } from './fixed.js';

/** 365 days in milliseconds: annual rates accrue per millisecond of this year. */
export const MS_PER_YEAR = 31_536_000_000n;
/** One hour in milliseconds: the venue charges interest on the hour. */
export const MS_PER_HOUR = 3_600_000n;
/** Interest residues count 1/(10^12 · MS_PER_YEAR) of an asset's smallest unit. */
export const INTEREST_RESIDUE_DENOMINATOR = FRACTION_ONE * MS_PER_YEAR;

// Borrowed may pass lent: borrow interest adds to the borrows, lend interest (smaller by the fee
// and the rounding) to the lends, so a pool at full utilization drifts above 1.
function checkTotals(borrowedUnits: bigint, lentUnits: bigint): void {
  assert(borrowedUnits >= 0n && lentUnits >= 0n, 'pool totals are not negative');
  assert(lentUnits > 0n || borrowedUnits === 0n, 'a pool with nothing lent has nothing borrowed');
}

/** borrowed / lent at 10^-12, rounded down (the published utilization); 0 for an empty pool. */
export function utilization(borrowedUnits: bigint, lentUnits: bigint): Fraction {
  checkTotals(borrowedUnits, lentUnits);
  return lentUnits === 0n ? 0n : (borrowedUnits * FRACTION_ONE) / lentUnits;
}

/** The annual borrow rate at the exact utilization borrowed/lent, rounded up; rMax from u = 1 on. */
export function borrowRate(pool: LendPoolSpec, borrowedUnits: bigint, lentUnits: bigint): Fraction {
  checkTotals(borrowedUnits, lentUnits);
  const { borrowRateMin: r0, borrowRateOptimal: rOpt, borrowRateMax: rMax, optimalUtilization: uOpt } = pool;
  assert(r0 <= rOpt && rOpt <= rMax && uOpt > 0n && uOpt <= FRACTION_ONE, 'a pool curve rises and has 0 < uOpt <= 1');
  if (lentUnits === 0n) return r0;
  if (borrowedUnits >= lentUnits) return rMax;
  // u ≤ uOpt ⇔ B · 10^12 ≤ uOpt · L, compared exactly.
  const scaledBorrowed = borrowedUnits * FRACTION_ONE;
  if (scaledBorrowed <= uOpt * lentUnits) {
    // r0 + (rOpt − r0) · (B/L) / (uOpt/10^12) = r0 + (rOpt − r0) · B · 10^12 / (L · uOpt)
    return r0 + ceilDiv((rOpt - r0) * scaledBorrowed, lentUnits * uOpt);
  }
  // rOpt + (rMax − rOpt) · (B/L − uOpt/10^12) / (1 − uOpt/10^12)
  //   = rOpt + (rMax − rOpt) · (B · 10^12 − uOpt · L) / (L · (10^12 − uOpt))
  return rOpt + ceilDiv((rMax - rOpt) * (scaledBorrowed - uOpt * lentUnits), lentUnits * (FRACTION_ONE - uOpt));
}

/**
 * The annual lend rate: rate × (borrowed/lent) × (1 − fee), rounded down, from the borrow rate
 * the pool charges (already rounded up), so the lenders' interest never exceeds the borrowers'.
 */
export function lendRate(rate: Fraction, fee: Fraction, borrowedUnits: bigint, lentUnits: bigint): Fraction {
  checkTotals(borrowedUnits, lentUnits);
  assert(rate >= 0n && fee >= 0n && fee <= FRACTION_ONE, 'a rate is not negative and a fee is a fraction of 1');
  if (lentUnits === 0n) return 0n;
  return (rate * borrowedUnits * (FRACTION_ONE - fee)) / (lentUnits * FRACTION_ONE);
}

/** Interest in whole units and what its rounding kept, in 1/INTEREST_RESIDUE_DENOMINATOR of a unit. */
export interface Interest {
  units: bigint;
  residue: bigint;
}

/** Who the interest is for: owed by a borrower (rounds up) or earned by a lender (rounds down). */
export type InterestSide = 'owed' | 'earned';

/**
 * Interest on `qtyUnits` at `annualRate` over `durationMs`, rounded against the party: owed up,
 * earned down. The residue is |units − exact| in 1/INTEREST_RESIDUE_DENOMINATOR of a unit, always
 * 0 ≤ residue < INTEREST_RESIDUE_DENOMINATOR: the venue's gain from the rounding.
 */
export function interest(qtyUnits: bigint, annualRate: Fraction, durationMs: bigint, side: InterestSide): Interest {
  assert(qtyUnits >= 0n && annualRate >= 0n && durationMs >= 0n, 'interest inputs are not negative');
  const exact = qtyUnits * annualRate * durationMs; // in 1/INTEREST_RESIDUE_DENOMINATOR units
  const floor = exact / INTEREST_RESIDUE_DENOMINATOR;
  const remainder = exact - floor * INTEREST_RESIDUE_DENOMINATOR;
  if (side === 'earned' || remainder === 0n) return { units: floor, residue: remainder };
  return { units: floor + 1n, residue: INTEREST_RESIDUE_DENOMINATOR - remainder };
}

/** One hour of interest (the venue charges on the hour). */
export function hourlyInterest(qtyUnits: bigint, annualRate: Fraction, side: InterestSide): Interest {
  return interest(qtyUnits, annualRate, MS_PER_HOUR, side);
}

/**
 * The units of hourlyInterest(qtyUnits, annualRate, side), for the many positions of an hour:
 * `hourRate` is annualRate × MS_PER_HOUR, made once; no residue and no object per position.
 */
export function hourlyUnits(qtyUnits: number, hourRate: bigint, side: InterestSide): number {
  const exact = BigInt(qtyUnits) * hourRate;
  const floor = exact / INTEREST_RESIDUE_DENOMINATOR;
  if (side === 'earned' || floor * INTEREST_RESIDUE_DENOMINATOR === exact) return Number(floor);
  return Number(floor + 1n);
}

/** A new borrow's entry fee: the interest owed from `timeMs` (epoch ms) to the next full hour. */
export function entryFee(qtyUnits: bigint, annualRate: Fraction, timeMs: bigint): Interest {
  assert(timeMs >= 0n, 'a time is not negative');
  return interest(qtyUnits, annualRate, MS_PER_HOUR - (timeMs % MS_PER_HOUR), 'owed');
}

/**
 * The utilization a voluntary borrow or lend redemption may reach in a throttle step that began
 * at utilization u0 (the proposed throttle of §2): min(maxUtilization, bound) below the threshold,
 * else min(maxUtilization, u0 + updateFraction · (bound − u0)), the step rounded down.
 */
export function throttleCeiling(pool: LendPoolSpec, u0: Fraction): Fraction {
  const { maxUtilization, throttleUtilizationThreshold, throttleUtilizationBound, throttleUpdateFraction } = pool;
  if (u0 < throttleUtilizationThreshold) return minBig(maxUtilization, throttleUtilizationBound);
  const step = floorDiv(throttleUpdateFraction * (throttleUtilizationBound - u0), FRACTION_ONE);
  return minBig(maxUtilization, u0 + step);
}

/** Whether totals borrowed/lent stay at or under a utilization ceiling, compared exactly. */
export function withinCeiling(borrowedUnits: bigint, lentUnits: bigint, ceiling: Fraction): boolean {
  checkTotals(borrowedUnits, lentUnits);
  return borrowedUnits * FRACTION_ONE <= ceiling * lentUnits;
}
