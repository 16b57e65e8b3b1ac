// The margin family's arithmetic (engine/core/margin/) by value: hand-computed examples (the
// venue's SOL perp IMF example among them), the rounding direction of every function, the largest
// values a configuration allows, and a seeded comparison against a deliberately naive reference
// (exact rationals and binary searches on squares) on random inputs.

import { describe, expect, it } from 'vitest';
import { ceilDiv, ceilTimesSqrtOver, floorDiv, FRACTION_ONE, isqrt } from '../../../engine/core/margin/fixed.js';
import { baseImf, leverageLimitFraction, positionImf, positionMmf, requirementUnits, sqrtTerm } from '../../../engine/core/margin/fractions.js';
import { assetValue, collateralLine, collateralValue, haircutWeight, inverseSqrtWeight, notionalCeil, notionalFloor, type UnitPrice } from '../../../engine/core/margin/collateral.js';
import { accountMargin, admits, exposureQuantity, liquidatable, netEquity, netEquityAvailable } from '../../../engine/core/margin/account.js';
import {
  borrowRate, entryFee, hourlyInterest, hourlyUnits, interest, INTEREST_RESIDUE_DENOMINATOR, lendRate, MS_PER_HOUR, throttleCeiling, utilization, withinCeiling,
} from '../../../engine/core/margin/lending.js';
import type { HaircutSpec, LendPoolSpec } from '../../../engine/bus/margin-params.js';
import { prng } from '../../helpers/engine-harness.js';
import { seedLabel, seedsForRun } from '../../helpers/engine-random.js';

/** A decimal fraction at 10^-12: f('0.0001275') = 127_500_000n. */
function f(text: string): bigint {
  const [whole, part = ''] = text.split('.');
  return BigInt(whole + part.padEnd(12, '0'));
}

const USDC = 10n ** 6n;
/** A price of `usdc` whole USDC per whole token of `decimals`. */
const perToken = (usdc: string, decimals: number): UnitPrice => ({ quoteUnits: f(usdc) / 10n ** 6n, baseUnits: 10n ** BigInt(decimals) });

const POOL: LendPoolSpec = {
  assetId: 0, state: 'Open', borrowRateMin: 0n, borrowRateOptimal: f('0.1'), borrowRateMax: f('1'), optimalUtilization: f('0.7'),
  maxUtilization: f('0.95'), throttleUtilizationThreshold: f('0.8'), throttleUtilizationBound: f('0.9'), throttleUpdateFraction: f('0.1'),
  fee: 0n, openBorrowLendLimitUnits: 10n ** 14n, stepUnits: 10_000n,
};

describe('fixed-point helpers', () => {
  it('takes exact integer square roots and rounds divisions the way they are named', () => {
    expect([0n, 1n, 2n, 3n, 4n, 15n, 16n, 17n, 99n, 100n].map(isqrt)).toEqual([0n, 1n, 1n, 1n, 2n, 3n, 4n, 4n, 9n, 10n]);
    const big = (1n << 64n) - 1n;
    expect(isqrt(big * big)).toBe(big);
    expect(isqrt(big * big - 1n)).toBe(big - 1n);
    expect(isqrt(10n ** 40n + 1n)).toBe(10n ** 20n);
    expect([floorDiv(7n, 2n), floorDiv(-7n, 2n), floorDiv(-8n, 2n), floorDiv(0n, 5n)]).toEqual([3n, -4n, -4n, 0n]);
    expect([ceilDiv(7n, 2n), ceilDiv(-7n, 2n), ceilDiv(8n, 2n), ceilDiv(0n, 5n)]).toEqual([4n, -3n, 4n, 0n]);
    // Against the definitions, over both signs, exact multiples and products past 2^64 (seeded):
    // floor is the q with q·b ≤ a < (q + 1)·b, ceil the q with (q − 1)·b < a ≤ q·b.
    let seed = 0x2545f491;
    const next = (): bigint => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return BigInt(seed);
    };
    for (let i = 0; i < 4000; i++) {
      const b = (next() % 1_000_000n) + 1n;
      const magnitude = i % 3 === 0 ? next() * next() * next() : next() % 10_000n;
      const a = (i % 5 === 0 ? magnitude - (magnitude % b) : magnitude) * (i % 2 === 0 ? -1n : 1n);
      const f = floorDiv(a, b);
      const c = ceilDiv(a, b);
      expect(f * b <= a && a < (f + 1n) * b, `floor ${a} / ${b}`).toBe(true);
      expect((c - 1n) * b < a && a <= c * b, `ceil ${a} / ${b}`).toBe(true);
    }
    expect(() => isqrt(-1n)).toThrow(/negative/);
    expect(() => floorDiv(1n, 0n)).toThrow(/non-positive/);
  });

  it('ceilTimesSqrtOver is exact on perfect squares and rounds up otherwise', () => {
    expect(ceilTimesSqrtOver(3n, 16n, 2n)).toBe(6n); // 3·4/2, exact
    expect(ceilTimesSqrtOver(3n, 16n, 5n)).toBe(3n); // 12/5 → 3
    expect(ceilTimesSqrtOver(1n, 2n, 1n)).toBe(2n); // √2 → 2
    expect(ceilTimesSqrtOver(10n, 2n, 10n)).toBe(2n); // √2 → 2
    expect(ceilTimesSqrtOver(0n, 2n, 10n)).toBe(0n);
  });
});

describe('position margin fractions', () => {
  const solImf = { base: f('0.02'), factor: f('0.0001275') };
  const solMmf = { base: f('0.0125'), factor: f('0.0000765') };

  it("reproduces the venue's SOL perp example: N = 100 000 gives IMF 4.03 %", () => {
    const n = 100_000n * USDC;
    // 0.0001275 × √100000 = 0.04031904016807..., rounded up at 10^-12.
    expect(positionImf(solImf, n, 6, 10_000n)).toBe(40_319_040_168n); // at 100× the limit does not bind
    expect(positionMmf(solMmf, n, 6)).toBe(24_191_424_101n);
    // Below (base/factor)² ≈ 24 606 USDC the base governs.
    expect(positionImf(solImf, 10_000n * USDC, 6, 10_000n)).toBe(f('0.02'));
    expect(positionImf(solImf, 10_000n * USDC, 6, 100n)).toBe(FRACTION_ONE); // 1× leverage: fully margined
    expect(sqrtTerm(solImf.factor, 10_000n * USDC, 6)).toBe(f('0.01275'));
    expect(positionMmf(solMmf, 0n, 6)).toBe(f('0.0125'));
  });

  it('puts 1 / leverageLimit under the IMF, rounded up', () => {
    expect(leverageLimitFraction(100n)).toBe(FRACTION_ONE);
    expect(leverageLimitFraction(1000n)).toBe(f('0.1'));
    expect(leverageLimitFraction(300n)).toBe(333_333_333_334n);
    expect(leverageLimitFraction(10_000n)).toBe(f('0.01'));
    expect(baseImf(solImf, 1000n)).toBe(f('0.1'));
    expect(baseImf(solImf, 10_000n)).toBe(f('0.02'));
    // 10× caps a 100 000 USDC SOL position at 10 %, above its size-driven 4.03 %.
    expect(positionImf(solImf, 100_000n * USDC, 6, 1000n)).toBe(f('0.1'));
    expect(() => leverageLimitFraction(99n)).toThrow(/at least 1/);
  });

  it('rounds a requirement up to a whole quote unit', () => {
    expect(requirementUnits(100_000n * USDC, 40_319_040_168n)).toBe(4_031_904_017n);
    expect(requirementUnits(3n, f('0.5'))).toBe(2n);
    expect(requirementUnits(4n, f('0.5'))).toBe(2n);
    expect(requirementUnits(0n, f('0.5'))).toBe(0n);
  });
});

describe('collateral value', () => {
  const btc: HaircutSpec = { kind: 'inverseSqrt', weight: f('0.9'), base: f('1.1'), penalty: f('0.007'), basis: 'quantity' };

  it('weights a holding by identity, by inverseSqrt (floored) and gives 0 without parameters', () => {
    expect(haircutWeight({ kind: 'identity', weight: f('0.85') }, 10n ** 30n, 6, 0n, 6)).toBe(f('0.85'));
    expect(haircutWeight(undefined, 1n, 8, 1n, 6)).toBe(0n);
    // 10 000 BTC: 1.1 / (1 + 0.007 × 100) = 11/17 = 0.647058823529411..., floored.
    expect(haircutWeight(btc, 10_000n * 10n ** 8n, 8, 0n, 6)).toBe(647_058_823_529n);
    expect(inverseSqrtWeight(btc.base, btc.penalty, 1_000n * 10n ** 8n, 8)).toBe(900_635_773_046n);
    // 1000 BTC: the curve (0.9006...) is still above the weight, so the weight applies.
    expect(haircutWeight(btc, 1_000n * 10n ** 8n, 8, 0n, 6)).toBe(f('0.9'));
    expect(inverseSqrtWeight(f('1.1'), 0n, 10n ** 20n, 8)).toBe(f('1.1'));
    expect(inverseSqrtWeight(f('1.1'), f('0.0003'), 10n ** 6n * 10n ** 9n, 9)).toBe(846_153_846_153n);
  });

  it('measures x in USDC when the basis is notional', () => {
    const byNotional: HaircutSpec = { ...btc, basis: 'notional', penalty: f('0.001') };
    // 2 BTC at 60 000: x = 120 000 USDC; 1.1 / (1 + 0.001 × √120000) = 0.81698...
    const line = collateralLine(byNotional, 2n * 10n ** 8n, 8, perToken('60000', 8), 6);
    expect(line.notionalUnits).toBe(120_000n * USDC);
    expect(line.weight).toBe(inverseSqrtWeight(f('1.1'), f('0.001'), 120_000n * USDC, 6));
    expect(line.weight).toBe(816_987_298_107n);
  });

  it('values a holding with one rounding, down, and a liability up', () => {
    const line = collateralLine(btc, 2n * 10n ** 8n, 8, perToken('60000.5', 8), 6);
    expect(line).toEqual({ notionalUnits: 120_001n * USDC, weight: f('0.9'), collateralUnits: 108_000_900_000n });
    // 1 unit of SOL (10^-9) at 0.01 USDC is worth 10^-5 units of USDC: nothing, and a liability of 1.
    expect(collateralLine({ kind: 'identity', weight: FRACTION_ONE }, 1n, 9, perToken('0.01', 9), 6).collateralUnits).toBe(0n);
    expect(notionalFloor(1n, perToken('0.01', 9))).toBe(0n);
    expect(notionalCeil(1n, perToken('0.01', 9))).toBe(1n);
    // 3 × 0.333333 = 0.999999: weight 1/3 floors both the weight and the value.
    const third: HaircutSpec = { kind: 'identity', weight: 333_333_333_333n };
    expect(collateralLine(third, 3n * USDC, 6, perToken('1', 6), 6).collateralUnits).toBe(999_999n);
  });
});

describe('account figures', () => {
  it('values an asset from what is held, lent and borrowed', () => {
    const btc: HaircutSpec = { kind: 'inverseSqrt', weight: f('0.9'), base: f('1.1'), penalty: f('0.007'), basis: 'quantity' };
    // 6000 held + 4000 lent = 10 000 BTC: one holding for the haircut (11/17), not two of 0.9.
    const value = assetValue(btc, { heldUnits: 6_000n * 10n ** 8n, lentUnits: 4_000n * 10n ** 8n, borrowedUnits: 0n }, 8, perToken('1', 8), 6);
    expect(value).toEqual({ collateralUnits: 6_470_588_235n, liabilityUnits: 0n });
    const debt = assetValue(undefined, { heldUnits: 5n, lentUnits: 0n, borrowedUnits: 3n }, 9, perToken('0.01', 9), 6);
    expect(debt).toEqual({ collateralUnits: 0n, liabilityUnits: 1n });
  });

  it('adds collateral, PnL and unsettled equity and subtracts liabilities', () => {
    const equity = netEquity(
      [{ collateralUnits: 108_000_900_000n, liabilityUnits: 0n }, { collateralUnits: 500n * USDC, liabilityUnits: 1_000n * USDC }],
      -250n * USDC, 10n * USDC,
    );
    expect(equity).toEqual({ assetsUnits: 108_500_900_000n, liabilitiesUnits: 1_000n * USDC, netEquityUnits: 107_260_900_000n });
  });

  it('takes the worse side of position and open orders as the exposure', () => {
    expect(exposureQuantity(10n, 5n, 0n)).toBe(15n);
    expect(exposureQuantity(10n, 0n, 30n)).toBe(20n);
    expect(exposureQuantity(-10n, 4n, 3n)).toBe(13n);
    expect(exposureQuantity(0n, 0n, 0n)).toBe(0n);
    expect(exposureQuantity(10n, 0n, 10n)).toBe(10n); // selling the position does not add risk
  });

  it('computes account IMF/MMF, margin fraction and leverage, and decides admission and liquidation', () => {
    // Two exposures: 100 000 USDC at IMF 5 % / MMF 3 %, 50 000 at 10 % / 6 %; net equity 12 000.
    const exposures = [
      { notionalUnits: 100_000n * USDC, imf: f('0.05'), mmf: f('0.03') },
      { notionalUnits: 50_000n * USDC, imf: f('0.1'), mmf: f('0.06') },
    ];
    const margin = accountMargin(exposures, 12_000n * USDC, 1000n);
    expect(margin).toEqual({
      tenUnits: 150_000n * USDC, imfUnits: 10_000n * USDC, mmfUnits: 6_000n * USDC,
      accountImf: f('0.1'), // max(1/10, 10 000 / 150 000 = 0.0666...)
      accountMmf: f('0.04'),
      marginFraction: f('0.08'),
      leverage: 12_500_000_000_000n, // 150 000 / 12 000 = 12.5
    });
    expect(netEquityAvailable(12_000n * USDC, margin)).toBe(2_000n * USDC);
    expect(admits(10_000n * USDC, margin)).toBe(true);
    expect(admits(10_000n * USDC - 1n, margin)).toBe(false);
    expect(liquidatable(6_000n * USDC, margin)).toBe(true);
    expect(liquidatable(6_000n * USDC + 1n, margin)).toBe(false);
    // 1/3 rounds the IMF up and the MF down; negative equity floors toward −∞.
    const thirds = accountMargin([{ notionalUnits: 3n, imf: f('0.5'), mmf: f('0.25') }], -1n, 10_000n);
    expect(thirds.imfUnits).toBe(2n);
    expect(thirds.accountImf).toBe(666_666_666_667n);
    expect(thirds.marginFraction).toBe(-333_333_333_334n);
    expect(thirds.leverage).toBe(null);
  });

  it('has no margin fraction without exposure and never liquidates it', () => {
    const margin = accountMargin([], 500n, 200n);
    expect(margin).toEqual({ tenUnits: 0n, imfUnits: 0n, mmfUnits: 0n, accountImf: f('0.5'), accountMmf: 0n, marginFraction: null, leverage: null });
    expect(liquidatable(0n, margin)).toBe(false);
    expect(admits(0n, margin)).toBe(true);
  });
});

describe('borrow/lend pools', () => {
  const L = 1_000_000n;

  it('follows the two-slope curve, rounding the borrow rate up', () => {
    expect(utilization(350_000n, L)).toBe(f('0.35'));
    expect(utilization(0n, 0n)).toBe(0n);
    expect(utilization(1n, 3n)).toBe(333_333_333_333n);
    expect(borrowRate(POOL, 0n, L)).toBe(0n);
    expect(borrowRate(POOL, 350_000n, L)).toBe(f('0.05'));
    expect(borrowRate(POOL, 700_000n, L)).toBe(f('0.1'));
    expect(borrowRate(POOL, 850_000n, L)).toBe(f('0.55'));
    expect(borrowRate(POOL, L, L)).toBe(f('1'));
    expect(borrowRate(POOL, L + 5n, L)).toBe(f('1')); // interest can push borrows past lends
    expect(borrowRate(POOL, 1n, 3n)).toBe(47_619_047_620n); // 0.1 × (1/3) / 0.7, up
    expect(borrowRate(POOL, 0n, 0n)).toBe(0n);
    expect(borrowRate({ ...POOL, optimalUtilization: FRACTION_ONE }, 500_000n, L)).toBe(f('0.05'));
  });

  it("gives lenders borrowRate × u × (1 − fee), rounded down", () => {
    expect(lendRate(f('0.05'), 0n, 350_000n, L)).toBe(f('0.0175'));
    expect(lendRate(f('0.05'), f('0.1'), 350_000n, L)).toBe(f('0.01575'));
    expect(lendRate(47_619_047_620n, 0n, 1n, 3n)).toBe(15_873_015_873n);
    expect(lendRate(f('0.5'), 0n, 0n, 0n)).toBe(0n);
  });

  it('rounds interest owed up and earned down, returning the residue', () => {
    // 1000 USDC at 10 % for one hour: 10^9 × 0.1 / 8760 = 11 415.525114... units.
    const owed = hourlyInterest(1_000n * USDC, f('0.1'), 'owed');
    const earned = hourlyInterest(1_000n * USDC, f('0.1'), 'earned');
    expect(owed).toEqual({ units: 11_416n, residue: 14_976_000_000_000_000_000_000n });
    expect(earned).toEqual({ units: 11_415n, residue: 16_560_000_000_000_000_000_000n });
    // Each residue is the exact distance to the true value: owed − exact = exact − earned's complement.
    expect(owed.residue + earned.residue).toBe(INTEREST_RESIDUE_DENOMINATOR);
    expect(interest(8_760n, FRACTION_ONE, MS_PER_HOUR, 'owed')).toEqual({ units: 1n, residue: 0n });
    expect(interest(0n, f('0.5'), MS_PER_HOUR, 'owed')).toEqual({ units: 0n, residue: 0n });
    // An entry fee half an hour before the hour is half an hour's interest, rounded up.
    expect(entryFee(1_000n * USDC, f('0.1'), 1_700_000_000_000n + 1_800_000n - (1_700_000_000_000n % MS_PER_HOUR))).toEqual({
      units: 5_708n, residue: 7_488_000_000_000_000_000_000n,
    });
    expect(entryFee(1_000n * USDC, f('0.1'), 7_200_000n)).toEqual(owed);
  });

  it('throttles utilization per the proposed rule', () => {
    expect(throttleCeiling(POOL, f('0.5'))).toBe(f('0.9'));
    // At 0.85 (≥ threshold): 0.85 + 0.1 × (0.9 − 0.85) = 0.855.
    expect(throttleCeiling(POOL, f('0.85'))).toBe(f('0.855'));
    expect(throttleCeiling({ ...POOL, maxUtilization: f('0.852') }, f('0.85'))).toBe(f('0.852'));
    // Above the bound the step is negative and floors toward −∞.
    expect(throttleCeiling({ ...POOL, throttleUpdateFraction: 3n }, f('0.93'))).toBe(f('0.93') - 1n);
    expect(withinCeiling(855n, 1000n, f('0.855'))).toBe(true);
    expect(withinCeiling(856n, 1000n, f('0.855'))).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// The naive reference: rationals as [numerator, denominator] and roots by binary search on squares.

type Q = [bigint, bigint];
const qFloor = ([n, d]: Q): bigint => (n >= 0n ? n / d : -((-n + d - 1n) / d));
const qCeil = ([n, d]: Q): bigint => -qFloor([-n, d]);
const qAdd = (a: Q, b: Q): Q => [a[0] * b[1] + b[0] * a[1], a[1] * b[1]];
const qMul = (a: Q, b: Q): Q => [a[0] * b[0], a[1] * b[1]];
const qDiv = (a: Q, b: Q): Q => (b[0] < 0n ? [-a[0] * b[1], a[1] * -b[0]] : [a[0] * b[1], a[1] * b[0]]);
const frac = (scaled: bigint): Q => [scaled, FRACTION_ONE];

/** Smallest m ≥ 0 with pred(m) true, pred monotone. */
function smallest(pred: (m: bigint) => boolean): bigint {
  let high = 1n;
  while (!pred(high)) high *= 2n;
  let low = 0n;
  while (low < high) {
    const mid = (low + high) / 2n;
    if (pred(mid)) high = mid;
    else low = mid + 1n;
  }
  return low;
}

/** ceil(10^12 · fraction · √(N / 10^d)): the smallest m with (m / 10^12)² ≥ fraction² · N / 10^d. */
function refSqrtTerm(factor: bigint, notionalUnits: bigint, d: number): bigint {
  const scale = 10n ** BigInt(d);
  return smallest((m) => m * m * scale >= factor * factor * notionalUnits);
}

/** floor(10^12 · base / (1 + penalty·√x)): one less than the smallest m that no longer fits. */
function refInverseSqrt(base: bigint, penalty: bigint, xUnits: bigint, d: number): bigint {
  const scale = 10n ** BigInt(d);
  // m / 10^12 ≤ (base/10^12) / (1 + (penalty/10^12)·√(x/10^d))  ⇔  m·penalty·√(x/10^d) ≤ 10^12·(base − m)
  // ⇔ base ≥ m and m²·penalty²·x ≤ 10^24·(base − m)²·10^d.
  const fits = (m: bigint) => base >= m && m * m * penalty * penalty * xUnits <= FRACTION_ONE * FRACTION_ONE * (base - m) ** 2n * scale;
  return smallest((m) => !fits(m)) - 1n;
}

function refBorrowRate(pool: LendPoolSpec, b: bigint, l: bigint): bigint {
  if (l === 0n) return pool.borrowRateMin;
  const u: Q = b >= l ? [1n, 1n] : [b, l];
  const uOpt = frac(pool.optimalUtilization);
  const [r0, rOpt, rMax] = [frac(pool.borrowRateMin), frac(pool.borrowRateOptimal), frac(pool.borrowRateMax)];
  const below = u[0] * uOpt[1] <= uOpt[0] * u[1];
  const rate = below
    ? qAdd(r0, qDiv(qMul(qAdd(rOpt, qMul([-1n, 1n], r0)), u), uOpt))
    : qAdd(rOpt, qDiv(qMul(qAdd(rMax, qMul([-1n, 1n], rOpt)), qAdd(u, qMul([-1n, 1n], uOpt))), qAdd([1n, 1n], qMul([-1n, 1n], uOpt))));
  return qCeil(qMul(rate, [FRACTION_ONE, 1n]));
}

describe('against the naive reference on random inputs', () => {
  for (const run of seedsForRun([1, 2, 3])) {
    it(seedLabel(run, 'test/engine/margin/margin-math.test.ts'), () => {
      const random = prng(run.seed);
      /** A random bigint in [0, 10^digits) with a random number of digits up to `digits`. */
      const draw = (digits: number): bigint => {
        const length = 1 + Math.floor(random() * digits);
        let text = '';
        for (let i = 0; i < length; i++) text += Math.floor(random() * 10).toString();
        return BigInt(text);
      };
      for (let i = 0; i < 400; i++) {
        const d = Math.floor(random() * 13);
        const factor = draw(12);
        const notional = draw(18);
        expect(sqrtTerm(factor, notional, d)).toBe(refSqrtTerm(factor, notional, d));
        const base = draw(13);
        const penalty = draw(12);
        expect(inverseSqrtWeight(base, penalty, notional, d)).toBe(refInverseSqrt(base, penalty, notional, d));
        const qty = draw(16);
        const price = { quoteUnits: draw(12) + 1n, baseUnits: 10n ** BigInt(d) };
        const weight = draw(12);
        // Also a full weight and a price of one unit for one unit, which take a shorter way to the same floor.
        for (const w of [weight, FRACTION_ONE]) {
          for (const p of [price, { quoteUnits: price.baseUnits, baseUnits: price.baseUnits }]) {
            const line = collateralLine({ kind: 'identity', weight: w }, qty, d, p, 6);
            expect(line.collateralUnits).toBe(qFloor(qMul(qMul([qty, 1n], [p.quoteUnits, p.baseUnits]), frac(w))));
          }
        }
        // The liquidation re-checks' collateral value is the line's, for every kind of haircut.
        const curve = (basis: 'quantity' | 'notional'): HaircutSpec => ({ kind: 'inverseSqrt', weight, base, penalty, basis });
        for (const haircut of [undefined, { kind: 'identity', weight } as const, curve('quantity'), curve('notional')]) {
          expect(collateralValue(haircut, qty, d, price, 6)).toBe(collateralLine(haircut, qty, d, price, 6).collateralUnits);
        }
        expect(notionalCeil(qty, price)).toBe(qCeil([qty * price.quoteUnits, price.baseUnits]));
        const lent = draw(15) + 1n;
        const borrowed = (lent * draw(4)) / 9000n;
        const pool: LendPoolSpec = {
          ...POOL, optimalUtilization: draw(12) + 1n, borrowRateMin: draw(11),
          fee: draw(12),
        };
        pool.borrowRateOptimal = pool.borrowRateMin + draw(12);
        pool.borrowRateMax = pool.borrowRateOptimal + draw(13);
        const rate = borrowRate(pool, borrowed, lent);
        expect(rate).toBe(refBorrowRate(pool, borrowed, lent));
        const lend = lendRate(rate, pool.fee, borrowed, lent);
        expect(lend).toBe(qFloor(qMul(qMul([rate, 1n], [borrowed, lent]), [FRACTION_ONE - pool.fee, FRACTION_ONE])));
        const ms = draw(8);
        const exact: Q = [qty * rate * ms, INTEREST_RESIDUE_DENOMINATOR];
        const owed = interest(qty, rate, ms, 'owed');
        const earned = interest(qty, lend, ms, 'earned');
        expect(owed.units).toBe(qCeil(exact));
        expect(owed.units * INTEREST_RESIDUE_DENOMINATOR - owed.residue).toBe(qty * rate * ms);
        expect(earned.units).toBe(qFloor([qty * lend * ms, INTEREST_RESIDUE_DENOMINATOR]));
        expect(earned.units * INTEREST_RESIDUE_DENOMINATOR + earned.residue).toBe(qty * lend * ms);
        // The pool never pays lenders more than borrowers pay: lent at the lend rate ≤ borrowed at the borrow rate.
        expect(interest(lent, lend, ms, 'earned').units).toBeLessThanOrEqual(interest(borrowed, rate, ms, 'owed').units);
        // The hour's pass computes the same units from the rate's hour, made once (hourlyUnits).
        if (qty <= BigInt(Number.MAX_SAFE_INTEGER)) {
          expect(hourlyUnits(Number(qty), rate * MS_PER_HOUR, 'owed')).toBe(Number(hourlyInterest(qty, rate, 'owed').units));
          expect(hourlyUnits(Number(qty), lend * MS_PER_HOUR, 'earned')).toBe(Number(hourlyInterest(qty, lend, 'earned').units));
        }
      }
    });
  }
});

describe('the largest values a configuration allows', () => {
  const MAX_UNITS = BigInt(Number.MAX_SAFE_INTEGER);

  it('stay exact at the extremes', () => {
    // A notional of 2^53 − 1 units at factor 1, at 12 decimals of quote asset.
    expect(sqrtTerm(FRACTION_ONE, MAX_UNITS, 12)).toBe(refSqrtTerm(FRACTION_ONE, MAX_UNITS, 12));
    expect(sqrtTerm(FRACTION_ONE, MAX_UNITS, 0)).toBe(refSqrtTerm(FRACTION_ONE, MAX_UNITS, 0));
    // The widest haircut curve: base 10, penalty 1, on the largest holding.
    expect(inverseSqrtWeight(10n * FRACTION_ONE, FRACTION_ONE, MAX_UNITS, 0)).toBe(refInverseSqrt(10n * FRACTION_ONE, FRACTION_ONE, MAX_UNITS, 0));
    expect(inverseSqrtWeight(10n * FRACTION_ONE, FRACTION_ONE, MAX_UNITS, 12)).toBe(refInverseSqrt(10n * FRACTION_ONE, FRACTION_ONE, MAX_UNITS, 12));
    // Interest on the largest quantity at the largest rate (100, i.e. 10 000 % a year) for an hour.
    const owed = hourlyInterest(MAX_UNITS, 100n * FRACTION_ONE, 'owed');
    expect(owed.units).toBe(qCeil([MAX_UNITS * 100n, 8760n]));
    expect(owed.units * INTEREST_RESIDUE_DENOMINATOR - owed.residue).toBe(MAX_UNITS * 100n * FRACTION_ONE * MS_PER_HOUR);
    // The largest holding at the largest price at weight 1.
    const price = { quoteUnits: MAX_UNITS, baseUnits: 1n };
    expect(collateralLine({ kind: 'identity', weight: FRACTION_ONE }, MAX_UNITS, 0, price, 6).collateralUnits).toBe(MAX_UNITS * MAX_UNITS);
    const rate = borrowRate({ ...POOL, borrowRateMax: 100n * FRACTION_ONE, optimalUtilization: 1n }, MAX_UNITS - 1n, MAX_UNITS);
    expect(rate).toBe(refBorrowRate({ ...POOL, borrowRateMax: 100n * FRACTION_ONE, optimalUtilization: 1n }, MAX_UNITS - 1n, MAX_UNITS));
  });
});
