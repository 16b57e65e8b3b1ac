// The price band of one asset of a healthy account (the liquidation trigger index, trigger-index.ts):
// a range [lo, hi] of the asset's mark, in index units (USDC per whole unit × 10^9), inside which
// the asset's part of the account's margin cannot fall by more than the slack it was given.
//
// An account's distance from the liquidation line, netEquity − Σ N·MMF, is a sum over its assets
// (valuation.ts, account.ts): for each asset with holding h and borrow b at mark p,
//   f(p) = collateral(h, p) − liability(b, p) − requirement(b, p)
// with collateral(h, p) = floor(h·p·w) (collateral.ts; w the haircut weight), liability(b, p) =
// ceil(b·p) and requirement = ceil(L·MMF(L)), L the liability (fractions.ts). Nothing couples two
// assets; a perpetual's part (its uPnL and the requirement of its exposure) moves with its own
// mark alone and gets a band of that mark (below).
//
// The lower bound. Over every mark x with lo ≤ x ≤ hi,
//   f(x) ≥ F(lo, hi) = floor(h·lo·w(hi)) − ceil(b·hi) − ceil(L(hi)·MMF(L(hi)))
// exactly, in integers: liability and requirement never decrease with the price (L is a ceiling
// of a product, MMF = max(base, factor·√L) rounded up); the notional floor(h·x) never decreases,
// the haircut weight never increases with the notional (identity and quantity-based weights do
// not depend on the price at all; the inverse-square-root weight is the largest fraction m with
// m·(1 + penalty·√x) ≤ base, which can only shrink as x grows), and the collateral is one floor
// of a product of non-negative factors. So a band [lo, hi] holds the asset's part above
// f(p₀) − slack whenever F(lo, hi) ≥ f(p₀) − slack, which bandOf checks by evaluating F once.
//
// Finding the band. A first guess divides the slack by the asset's sensitivity at p₀ (the
// holding's weighted value per index unit downward; the borrow's value times 1 + 2·MMF per index
// unit upward, MMF growing with √N adds at most half of itself); the guess is then checked with
// F and halved until it holds, ending at the point band [⌊p₀⌋, ⌈p₀⌉] (where F equals f(p₀) for
// an index mark), or no band at all. The guess only decides how wide the band is, never whether
// it is safe: F does. A side that cannot lower f is open: no holding weighted above 0 → lo = 0;
// no borrow and a weight that does not depend on the price → hi = BAND_TOP.

import type { HaircutSpec, MarginFunctionSpec } from '../../bus/margin-params.js';
import { collateralLine, haircutWeight, notionalCeil, notionalFloor, type UnitPrice } from './collateral.js';
import { FRACTION_ONE, floorDiv, pow10 } from './fixed.js';
import { positionMmf, requirementUnits } from './fractions.js';
import { INDEX_PRICE_DECIMALS } from './index-prices.js';

/** The open top of a band: the largest index price an asset can have. */
export const BAND_TOP = Number.MAX_SAFE_INTEGER;

/** What one asset of an account holds and owes, and the parameters that value it. */
export interface AssetRisk {
  /** Available + locked + lent units. */
  heldUnits: bigint;
  borrowedUnits: bigint;
  assetDecimals: number;
  quoteDecimals: number;
  haircut: HaircutSpec | undefined;
  /** The borrow's maintenance function (undefined: the asset cannot be borrowed). */
  mmf: MarginFunctionSpec | undefined;
}

export interface PriceBand {
  /** Index units (USDC per whole unit × 10^9), lo ≤ the mark ≤ hi. */
  lo: number;
  hi: number;
}

/** The mark of an index price `priceE9` as a unit price (mark.ts indexMark). */
export function indexUnitPrice(priceE9: bigint, assetDecimals: number, quoteDecimals: number): UnitPrice {
  return { quoteUnits: priceE9 * pow10(quoteDecimals), baseUnits: pow10(INDEX_PRICE_DECIMALS) * pow10(assetDecimals) };
}

/** A mark in index units, rounded down and up: [floor, ceil]. */
export function indexUnitsOf(price: UnitPrice, assetDecimals: number, quoteDecimals: number): [number, number] {
  const num = price.quoteUnits * pow10(INDEX_PRICE_DECIMALS) * pow10(assetDecimals);
  const den = price.baseUnits * pow10(quoteDecimals);
  const floor = num / den;
  const ceil = num % den === 0n ? floor : floor + 1n;
  const top = BigInt(BAND_TOP);
  return [Number(floor > top ? top : floor), Number(ceil > top ? top : ceil)];
}

/** ceil(N·MMF(N)) of a notional N under the maintenance function `mmf` (none: 0). */
function requirementOf(mmf: MarginFunctionSpec | undefined, notionalUnits: bigint, quoteDecimals: number): bigint {
  if (notionalUnits === 0n || mmf === undefined) return 0n;
  return requirementUnits(notionalUnits, positionMmf(mmf, notionalUnits, quoteDecimals));
}

function requirementAt(risk: AssetRisk, liabilityUnits: bigint): bigint {
  return requirementOf(risk.mmf, liabilityUnits, risk.quoteDecimals);
}

/** f(p): the asset's part of netEquity − Σ N·MMF at a mark, as the margin summary counts it. */
export function assetMargin(risk: AssetRisk, price: UnitPrice): bigint {
  const collateral = risk.heldUnits > 0n ? collateralLine(risk.haircut, risk.heldUnits, risk.assetDecimals, price, risk.quoteDecimals).collateralUnits : 0n;
  const liability = risk.borrowedUnits > 0n ? notionalCeil(risk.borrowedUnits, price) : 0n;
  return collateral - liability - requirementAt(risk, liability);
}

/** F(lo, hi): a lower bound of f over every mark in [lo, hi] (header), lo and hi in index units. */
export function assetMarginFloor(risk: AssetRisk, lo: number, hi: number): bigint {
  const low = indexUnitPrice(BigInt(lo), risk.assetDecimals, risk.quoteDecimals);
  const high = indexUnitPrice(BigInt(hi), risk.assetDecimals, risk.quoteDecimals);
  let collateral = 0n;
  if (risk.heldUnits > 0n && risk.haircut !== undefined) {
    const notionalHigh = notionalFloor(risk.heldUnits, high);
    const weight = haircutWeight(risk.haircut, risk.heldUnits, risk.assetDecimals, notionalHigh, risk.quoteDecimals);
    collateral = (risk.heldUnits * low.quoteUnits * weight) / (low.baseUnits * FRACTION_ONE);
  }
  const liability = risk.borrowedUnits > 0n ? notionalCeil(risk.borrowedUnits, high) : 0n;
  return collateral - liability - requirementAt(risk, liability);
}

/** Whether the weight of a holding falls as its price rises (a notional-based inverse-square-root haircut). */
function weightFollowsPrice(haircut: HaircutSpec | undefined): boolean {
  return haircut !== undefined && haircut.kind === 'inverseSqrt' && haircut.basis === 'notional';
}

/** Halvings of the guessed reach before the point band is tried. */
const BAND_ATTEMPTS = 12;

const clampUnits = (value: bigint): number => Number(value > BigInt(BAND_TOP) ? BigInt(BAND_TOP) : value);

/** The first guesses of the band's reach below and above p₀, in index units (header); -1: the side is open. */
function reachGuess(risk: AssetRisk, mark: UnitPrice, slackUnits: bigint): [bigint, bigint] {
  const perIndexUnit = pow10(INDEX_PRICE_DECIMALS + risk.assetDecimals);
  const quoteScale = pow10(risk.quoteDecimals);
  const line = risk.heldUnits > 0n ? collateralLine(risk.haircut, risk.heldUnits, risk.assetDecimals, mark, risk.quoteDecimals) : null;
  const weight = line === null ? 0n : line.weight;
  const downOpen = weight === 0n;
  const upOpen = risk.borrowedUnits === 0n && !weightFollowsPrice(risk.haircut);
  const downSlack = downOpen ? 0n : upOpen ? slackUnits : slackUnits / 2n;
  const upSlack = slackUnits - downSlack;
  const down = downOpen ? -1n : (downSlack * perIndexUnit * FRACTION_ONE) / (risk.heldUnits * quoteScale * weight);
  let up = -1n;
  if (!upOpen) {
    const liability = notionalCeil(risk.borrowedUnits, mark);
    const mmf = risk.mmf === undefined || liability === 0n ? 0n : positionMmf(risk.mmf, liability, risk.quoteDecimals);
    const rate = risk.borrowedUnits * quoteScale * (FRACTION_ONE + 2n * mmf) + (weightFollowsPrice(risk.haircut) ? risk.heldUnits * quoteScale * weight : 0n);
    up = rate === 0n ? 0n : (upSlack * perIndexUnit * FRACTION_ONE) / rate;
  }
  return [down, up];
}

/**
 * Halves the guessed reaches `down` and `up` (index units; -1: that side is open) around the mark
 * [markLo, markHi] until `floorOf(lo, hi)` ≥ `floorAllowed`; the last attempt is the point band.
 */
function searchBand(markLo: number, markHi: number, down: bigint, up: bigint, floorAllowed: bigint, floorOf: (lo: number, hi: number) => bigint): PriceBand | null {
  for (let attempt = 0; attempt <= BAND_ATTEMPTS; attempt++) {
    const shift = BigInt(attempt);
    const reachDown = attempt === BAND_ATTEMPTS ? 0n : down >> shift;
    const reachUp = attempt === BAND_ATTEMPTS ? 0n : up >> shift;
    const lo = down < 0n ? 0 : Math.max(0, markLo - clampUnits(reachDown));
    const hi = up < 0n ? BAND_TOP : Math.min(BAND_TOP, markHi + clampUnits(reachUp));
    if (floorOf(lo, hi) >= floorAllowed) return { lo, hi };
  }
  return null;
}

/**
 * The band of one asset whose mark is `mark` and which may lose `slackUnits` (≥ 0) of its part
 * f(mark): F(lo, hi) ≥ f(mark) − slackUnits (header). Null when not even the point band holds
 * (a book mark between two index units, with no slack to cover the rounding).
 */
export function bandOf(risk: AssetRisk, mark: UnitPrice, slackUnits: bigint): PriceBand | null {
  const floorAllowed = assetMargin(risk, mark) - slackUnits;
  const [markLo, markHi] = indexUnitsOf(mark, risk.assetDecimals, risk.quoteDecimals);
  const [down, up] = reachGuess(risk, mark, slackUnits);
  return searchBand(markLo, markHi, down, up, floorAllowed, (lo, hi) => assetMarginFloor(risk, lo, hi));
}

// Perpetuals. A position of size z (signed base units) with cost C, unsettled equity U and a
// worst-side exposure E (base units, open orders included: perp/exposure.ts) adds to
// netEquity − Σ N·MMF, at the perpetual's mark p,
//   g(p) = floor(z·p) + C + U − ceil(N(p)·MMF(N(p))),   N(p) = ceil(E·p)
// (C and U do not move with the mark and are left out of the figures below). floor(z·p) is
// monotone in p (rising for a long, falling for a short) and the requirement never decreases,
// so over [lo, hi]
//   g(x) ≥ G(lo, hi) = min(floor(z·lo), floor(z·hi)) − ceil(N(hi)·MMF(N(hi)))
// exactly. A perpetual's mark is an index price (an integer ×10^9, perp/mark.ts), so its point
// band is exact. The reach guesses: a long loses z per index unit downward and gains upward while
// its requirement grows (rate E·2·MMF); a short loses |z| + E·2·MMF upward and nothing downward
// (lo = 0); the guess is capped at the mark itself above it (at most a doubling), then checked.

/** What one perpetual of an account holds, and the parameters that value it. */
export interface PerpRisk {
  /** Signed position size in base units of the underlying. */
  sizeUnits: bigint;
  /** Worst-side exposure in base units (≥ 0). */
  exposureUnits: bigint;
  baseDecimals: number;
  quoteDecimals: number;
  mmf: MarginFunctionSpec;
}

function perpRequirement(risk: PerpRisk, price: UnitPrice): bigint {
  return requirementOf(risk.mmf, risk.exposureUnits === 0n ? 0n : notionalCeil(risk.exposureUnits, price), risk.quoteDecimals);
}

/** floor(z·p), as perp/exposure.ts values the position's uPnL. */
function pnlPart(risk: PerpRisk, price: UnitPrice): bigint {
  return floorDiv(risk.sizeUnits * price.quoteUnits, price.baseUnits);
}

/** g(p) without C and U: the perpetual's part that moves with its mark (header). */
export function perpMargin(risk: PerpRisk, price: UnitPrice): bigint {
  return pnlPart(risk, price) - perpRequirement(risk, price);
}

/** G(lo, hi): a lower bound of the moving part over every mark in [lo, hi] (index units). */
export function perpMarginFloor(risk: PerpRisk, lo: number, hi: number): bigint {
  const low = indexUnitPrice(BigInt(lo), risk.baseDecimals, risk.quoteDecimals);
  const high = indexUnitPrice(BigInt(hi), risk.baseDecimals, risk.quoteDecimals);
  const pnlLow = pnlPart(risk, low);
  const pnlHigh = pnlPart(risk, high);
  return (pnlLow < pnlHigh ? pnlLow : pnlHigh) - perpRequirement(risk, high);
}

/** The band of one perpetual of an account at its mark `markE9` that may lose `slackUnits` of its part (header). */
export function perpBandOf(risk: PerpRisk, markE9: number, slackUnits: bigint): PriceBand | null {
  const mark = indexUnitPrice(BigInt(markE9), risk.baseDecimals, risk.quoteDecimals);
  const floorAllowed = perpMargin(risk, mark) - slackUnits;
  const perIndexUnit = pow10(INDEX_PRICE_DECIMALS + risk.baseDecimals);
  const quoteScale = pow10(risk.quoteDecimals);
  const notional = risk.exposureUnits === 0n ? 0n : notionalCeil(risk.exposureUnits, mark);
  const mmf = notional === 0n ? 0n : positionMmf(risk.mmf, notional, risk.quoteDecimals);
  const long = risk.sizeUnits > 0n;
  const upRate = (long ? 0n : -risk.sizeUnits * FRACTION_ONE) + risk.exposureUnits * 2n * mmf;
  const downSlack = long ? slackUnits / 2n : 0n;
  const down = long ? (downSlack * perIndexUnit) / (risk.sizeUnits * quoteScale) : -1n;
  const cap = BigInt(markE9);
  const up = upRate === 0n ? cap : (slackUnits - downSlack) * perIndexUnit * FRACTION_ONE / (upRate * quoteScale);
  return searchBand(markE9, markE9, down, up > cap ? cap : up, floorAllowed, (lo, hi) => perpMarginFloor(risk, lo, hi));
}
