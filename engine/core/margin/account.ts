// The account figures of the unified margin account (venue mechanics §1.2–§1.5): net equity,
// exposure, total exposure notional (TEN), account IMF/MMF, margin fraction, leverage, and the two
// tests that act on them (order admission, liquidation).
//
//   netEquity  = Σ collateral values + Σ uPnL + unsettled equity − Σ liabilities
//   exposure   = max(|position + Σ bids|, |position − Σ asks|)   (the worst side, §1.3)
//   AccountIMF = max(1 / leverageLimit, Σ(N·IMF) / TEN),  AccountMMF = Σ(N·MMF) / TEN
//   MF         = netEquity / TEN,  leverage = TEN / netEquity
//   admitted   ⇔ netEquity ≥ Σ N·IMF(N)      liquidatable ⇔ TEN > 0 ∧ netEquity ≤ Σ N·MMF(N)
//
// Precision and rounding: amounts are quote units (bigint), fractions 10^-12 (fixed.ts). The
// inputs already round against the account (collateral down, liabilities and requirements up,
// collateral.ts and fractions.ts); here the account fractions round up (IMF, MMF, leverage) and
// the margin fraction rounds down (toward −∞ for negative equity). Admission and liquidation
// compare whole quote-unit sums, with no fraction in between, so neither test depends on the
// display rounding. With TEN = 0 the margin fraction and leverage are null, AccountMMF is 0 and
// AccountIMF is 1 / leverageLimit.

import { assert } from '../assert.js';
import { ceilDiv, floorDiv, FRACTION_ONE, maxBig, type Fraction } from './fixed.js';
import { leverageLimitFraction } from './fractions.js';

/** One asset of the account, already valued (collateral.ts): what it adds and what it owes. */
export interface AssetValue {
  collateralUnits: bigint;
  liabilityUnits: bigint;
}

export interface NetEquity {
  /** Σ collateral values after haircut (assetsValue). */
  assetsUnits: bigint;
  /** Σ borrowed quantity × mark (liabilitiesValue). */
  liabilitiesUnits: bigint;
  netEquityUnits: bigint;
}

/** Net equity from valued assets, the positions' unrealized PnL (signed) and unsettled equity (signed: claims less debts). */
export function netEquity(assets: readonly AssetValue[], pnlUnrealizedUnits: bigint, unsettledUnits: bigint): NetEquity {
  let assetsUnits = 0n;
  let liabilitiesUnits = 0n;
  for (const asset of assets) {
    assert(asset.collateralUnits >= 0n && asset.liabilityUnits >= 0n, 'collateral and liabilities are not negative');
    assetsUnits += asset.collateralUnits;
    liabilitiesUnits += asset.liabilityUnits;
  }
  return { assetsUnits, liabilitiesUnits, netEquityUnits: assetsUnits + pnlUnrealizedUnits + unsettledUnits - liabilitiesUnits };
}

function abs(value: bigint): bigint {
  return value < 0n ? -value : value;
}

/**
 * Net exposure quantity of one symbol: the position (signed) plus the open orders that increase
 * risk, on the worse side. Resting bids and asks are non-negative quantities; the result is ≥ 0.
 */
export function exposureQuantity(positionUnits: bigint, bidsUnits: bigint, asksUnits: bigint): bigint {
  assert(bidsUnits >= 0n && asksUnits >= 0n, 'open order quantities are not negative');
  return maxBig(abs(positionUnits + bidsUnits), abs(positionUnits - asksUnits));
}

/** One exposure (a position or a borrow) with the fractions its notional gives it (fractions.ts). */
export interface Exposure {
  notionalUnits: bigint;
  imf: Fraction;
  mmf: Fraction;
}

export interface AccountMargin {
  /** Total exposure notional. */
  tenUnits: bigint;
  /** Σ N·IMF: the equity locked by the exposures (netEquityLocked). */
  imfUnits: bigint;
  /** Σ N·MMF: at or below it the account is liquidated. */
  mmfUnits: bigint;
  accountImf: Fraction;
  accountMmf: Fraction;
  /** netEquity / TEN, rounded down; null when TEN is 0. */
  marginFraction: Fraction | null;
  /** TEN / netEquity as a fraction (10× → 10 × 10^12), rounded up; null when TEN or equity is not positive. */
  leverage: Fraction | null;
}

/** The account's margin figures from its exposures, net equity and leverage limit (hundredths). */
export function accountMargin(exposures: readonly Exposure[], netEquityUnits: bigint, leverageLimitHundredths: bigint): AccountMargin {
  let tenUnits = 0n;
  let imfUnits = 0n;
  let mmfUnits = 0n;
  for (const exposure of exposures) {
    assert(exposure.notionalUnits >= 0n && exposure.imf >= 0n && exposure.mmf >= 0n, 'an exposure is not negative');
    tenUnits += exposure.notionalUnits;
    imfUnits += ceilDiv(exposure.notionalUnits * exposure.imf, FRACTION_ONE);
    mmfUnits += ceilDiv(exposure.notionalUnits * exposure.mmf, FRACTION_ONE);
  }
  const floorImf = leverageLimitFraction(leverageLimitHundredths);
  if (tenUnits === 0n) {
    return { tenUnits, imfUnits, mmfUnits, accountImf: floorImf, accountMmf: 0n, marginFraction: null, leverage: null };
  }
  return {
    tenUnits,
    imfUnits,
    mmfUnits,
    accountImf: maxBig(floorImf, ceilDiv(imfUnits * FRACTION_ONE, tenUnits)),
    accountMmf: ceilDiv(mmfUnits * FRACTION_ONE, tenUnits),
    marginFraction: floorDiv(netEquityUnits * FRACTION_ONE, tenUnits),
    leverage: netEquityUnits > 0n ? ceilDiv(tenUnits * FRACTION_ONE, netEquityUnits) : null,
  };
}

/** Net equity left after the initial margin of every exposure (netEquityAvailable). */
export function netEquityAvailable(netEquityUnits: bigint, margin: AccountMargin): bigint {
  return netEquityUnits - margin.imfUnits;
}

/**
 * Order admission (§1.5): computed on the account as it would be with the order's full remaining
 * quantity added to its side, the account passes iff its net equity covers Σ N·IMF(N). A caller
 * lets an order that does not raise the worst-side exposure through without asking.
 */
export function admits(netEquityUnits: bigint, margin: Pick<AccountMargin, 'imfUnits'>): boolean {
  return netEquityUnits >= margin.imfUnits;
}

/** Liquidation (§1.4, MMR ≥ 100 %): some exposure and net equity at or below Σ N·MMF(N). */
export function liquidatable(netEquityUnits: bigint, margin: Pick<AccountMargin, 'tenUnits' | 'mmfUnits'>): boolean {
  return margin.tenUnits > 0n && netEquityUnits <= margin.mmfUnits;
}
