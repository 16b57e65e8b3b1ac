// Margin parameters of the configuration: each asset's collateral parameters (haircut, and the
// IMF/MMF of a borrow of it) and its borrow/lend pool, written the way the venue publishes them
// (GET /api/v1/collateral, GET /api/v1/borrowLend/markets: decimal strings) and turned here, once,
// into the integer form the margin arithmetic reads (engine/bus/margin-params.ts).
//
// Every fraction and annual rate must be exact at 10^-12 and every quantity exact in the asset's
// smallest units: a value that would need rounding is refused at start-up with a line naming the
// asset and the field, so what GET /api/v1/collateral publishes is exactly what the engine uses.
// Values whose shape the venue does not publish (the rate curve, the haircut's measure) are this
// exchange's proposed defaults; all of them can be set per asset in the markets file.

import type { IndexUpdateBounds } from '../engine/bus/types.js';
import {
  MARGIN_FRACTION_DECIMALS,
  type CollateralSpec, type HaircutBasis, type HaircutSpec, type LendPoolSpec, type LendPoolState, type MarginFunctionSpec,
} from '../engine/bus/margin-params.js';

/** IMF or MMF as the venue writes it: {type: "sqrt", base, factor}. */
export interface MarginFunctionConfig {
  type: 'sqrt';
  base: string;
  factor: string;
}

export type HaircutKindConfig = { type: 'identity' } | { type: 'inverseSqrt'; base: string; positiveCurvePenalty: string };

/** One asset's collateral parameters: the venue's /collateral item without its symbol. */
export interface CollateralConfig {
  imfFunction: MarginFunctionConfig;
  mmfFunction: MarginFunctionConfig;
  haircutFunction: { weight: string; kind: HaircutKindConfig };
  /** What inverseSqrt's x measures (not published by the venue): "quantity" (default) or "notional". */
  haircutBasis?: HaircutBasis;
}

/** One asset's borrow/lend pool; rates are annual, utilizations and the fee fractions of 1. */
export interface BorrowLendConfig {
  /** "Open" when absent. */
  state?: LendPoolState;
  borrowRateMin: string;
  borrowRateOptimal: string;
  borrowRateMax: string;
  optimalUtilization: string;
  maxUtilization: string;
  throttleUtilizationThreshold: string;
  throttleUtilizationBound: string;
  throttleUpdateFraction: string;
  fee: string;
  /** Cap on the pool's lent and borrowed totals, in whole tokens. */
  openBorrowLendLimit: string;
  stepSize: string;
}

export interface CollateralParams {
  symbol: string;
  spec: CollateralSpec;
}

export interface LendPoolParams {
  symbol: string;
  spec: LendPoolSpec;
}

export interface MarginParams {
  collateral: CollateralParams[];
  lendPools: LendPoolParams[];
}

/** What an asset of the markets file may carry for margin (src/config.ts AssetConfig). */
interface MarginAsset {
  symbol: string;
  decimals: number;
  collateral?: CollateralConfig;
  borrowLend?: BorrowLendConfig;
  /** Bounds on each index price update (decimal strings); absent: none. */
  maxPriceUpdateMultiplier?: string;
  minPriceUpdateMultiplier?: string;
}

/** Index update multipliers are refused above this (a cap at 1000× the previous price binds nothing real). */
const MAX_PRICE_UPDATE_MULTIPLIER = 1000n * 10n ** BigInt(MARGIN_FRACTION_DECIMALS);

/**
 * The assets' index price update bounds (venue mechanics §3.2) in the engine's form: only assets
 * that set one, so a configuration without them keeps its fingerprint. The maximum is from 1 to
 * 1000, the minimum above 0 and at most 1; USDC's index is fixed and takes none.
 */
export function buildIndexUpdateBounds(assets: readonly MarginAsset[], refuse: Refuse): IndexUpdateBounds[] {
  const bounds: IndexUpdateBounds[] = [];
  assets.forEach((asset, assetId) => {
    const { maxPriceUpdateMultiplier: maxText, minPriceUpdateMultiplier: minText } = asset;
    if (maxText === undefined && minText === undefined) return;
    if (asset.symbol === 'USDC') throw refuse('asset USDC: its index is fixed at 1 and takes no price update multipliers');
    const bound: IndexUpdateBounds = { assetId };
    if (maxText !== undefined) bound.maxPriceUpdateMultiplier = fraction(maxText, `asset ${asset.symbol} maxPriceUpdateMultiplier`, refuse, ONE, MAX_PRICE_UPDATE_MULTIPLIER);
    if (minText !== undefined) {
      bound.minPriceUpdateMultiplier = fraction(minText, `asset ${asset.symbol} minPriceUpdateMultiplier`, refuse, 0n, ONE);
      if (bound.minPriceUpdateMultiplier === 0n) throw refuse(`asset ${asset.symbol} minPriceUpdateMultiplier must be above 0`);
    }
    bounds.push(bound);
  });
  return bounds;
}

/** Thrown as the configuration's own error type by the caller's factory. */
export type Refuse = (message: string) => Error;

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;
const ONE = 10n ** BigInt(MARGIN_FRACTION_DECIMALS);
/** Rates are capped at 100 (10 000 % a year); no other fraction here exceeds 10. */
const MAX_RATE = 100n * ONE;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An exact non-negative decimal string at `decimals` places, or a refusal naming it. */
function exact(text: unknown, decimals: number, what: string, refuse: Refuse): bigint {
  if (typeof text !== 'string') throw refuse(`${what} must be a decimal string`);
  const match = DECIMAL.exec(text);
  if (!match) throw refuse(`${what}: "${text}" is not a plain non-negative decimal`);
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  if (fraction.length > decimals) throw refuse(`${what}: "${text}" has more than ${decimals} decimals`);
  return BigInt(match[1] + fraction.padEnd(decimals, '0'));
}

/** A fraction at 10^-12 within [min, max], or a refusal naming it. */
function fraction(text: unknown, what: string, refuse: Refuse, min: bigint, max: bigint): bigint {
  const value = exact(text, MARGIN_FRACTION_DECIMALS, what, refuse);
  if (value < min || value > max) throw refuse(`${what} must be from ${formatFraction(min)} to ${formatFraction(max)}, got ${String(text)}`);
  return value;
}

/** A fraction at 10^-12 as the venue writes it: canonical decimal, no trailing zeros. */
export function formatFraction(value: bigint): string {
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(MARGIN_FRACTION_DECIMALS + 1, '0');
  const whole = digits.slice(0, -MARGIN_FRACTION_DECIMALS);
  const part = digits.slice(-MARGIN_FRACTION_DECIMALS).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${part === '' ? '' : `.${part}`}`;
}

/** Refuses keys outside `known`: a typo would otherwise silently fall back to a default. */
function onlyKeys(value: Record<string, unknown>, known: readonly string[], what: string, refuse: Refuse): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) throw refuse(`${what} has an unknown key "${key}" (known: ${known.join(', ')})`);
  }
}

export function marginFunction(value: unknown, what: string, refuse: Refuse): MarginFunctionSpec {
  if (!isObject(value) || value.type !== 'sqrt') throw refuse(`${what} must be {"type": "sqrt", "base", "factor"}`);
  onlyKeys(value, ['type', 'base', 'factor'], what, refuse);
  return {
    base: fraction(value.base, `${what}.base`, refuse, 1n, ONE),
    factor: fraction(value.factor, `${what}.factor`, refuse, 0n, ONE),
  };
}

function haircut(value: unknown, basis: unknown, what: string, refuse: Refuse): HaircutSpec {
  if (!isObject(value) || !isObject(value.kind)) throw refuse(`${what} must be {"weight", "kind": {"type": ...}}`);
  onlyKeys(value, ['weight', 'kind'], what, refuse);
  const weight = fraction(value.weight, `${what}.weight`, refuse, 0n, ONE);
  const kind = value.kind;
  if (kind.type === 'identity') {
    onlyKeys(kind, ['type'], `${what}.kind`, refuse);
    return { kind: 'identity', weight };
  }
  if (kind.type !== 'inverseSqrt') throw refuse(`${what}.kind.type must be "identity" or "inverseSqrt"`);
  onlyKeys(kind, ['type', 'base', 'positiveCurvePenalty'], `${what}.kind`, refuse);
  if (basis !== undefined && basis !== 'quantity' && basis !== 'notional') throw refuse(`${what}: haircutBasis must be "quantity" or "notional"`);
  return {
    kind: 'inverseSqrt',
    weight,
    base: fraction(kind.base, `${what}.kind.base`, refuse, 0n, 10n * ONE),
    penalty: fraction(kind.positiveCurvePenalty, `${what}.kind.positiveCurvePenalty`, refuse, 0n, ONE),
    basis: basis ?? 'quantity',
  };
}

function collateralSpec(asset: MarginAsset, assetId: number, refuse: Refuse): CollateralSpec {
  const what = `asset ${asset.symbol} collateral`;
  const value: unknown = asset.collateral;
  if (!isObject(value)) throw refuse(`${what} must be a JSON object`);
  onlyKeys(value, ['imfFunction', 'mmfFunction', 'haircutFunction', 'haircutBasis'], what, refuse);
  const imf = marginFunction(value.imfFunction, `${what} imfFunction`, refuse);
  const mmf = marginFunction(value.mmfFunction, `${what} mmfFunction`, refuse);
  // A maintenance fraction above the initial one would liquidate an account the moment it opened.
  if (mmf.base > imf.base || mmf.factor > imf.factor) throw refuse(`${what}: mmfFunction base and factor must not exceed imfFunction's`);
  if (value.haircutBasis !== undefined && (value.haircutFunction as { kind?: { type?: unknown } } | undefined)?.kind?.type !== 'inverseSqrt') {
    throw refuse(`${what}: haircutBasis applies only to an inverseSqrt haircut`);
  }
  return { assetId, haircut: haircut(value.haircutFunction, value.haircutBasis, `${what} haircutFunction`, refuse), imf, mmf };
}

const POOL_FRACTIONS = [
  'optimalUtilization', 'maxUtilization', 'throttleUtilizationThreshold', 'throttleUtilizationBound', 'throttleUpdateFraction', 'fee',
] as const;
const POOL_RATES = ['borrowRateMin', 'borrowRateOptimal', 'borrowRateMax'] as const;
const POOL_STATES: readonly LendPoolState[] = ['Open', 'Closed', 'RepayOnly'];

/** Whole tokens → smallest units, positive and inside the engine's safe-integer amounts. */
function poolQuantity(text: unknown, asset: MarginAsset, what: string, refuse: Refuse): bigint {
  const units = exact(text, asset.decimals, what, refuse);
  if (units < 1n || units > BigInt(Number.MAX_SAFE_INTEGER)) throw refuse(`${what} must be positive and at most ${Number.MAX_SAFE_INTEGER} units of ${asset.symbol}`);
  return units;
}

function lendPoolSpec(asset: MarginAsset, assetId: number, refuse: Refuse): LendPoolSpec {
  const what = `asset ${asset.symbol} borrowLend`;
  const value: unknown = asset.borrowLend;
  if (!isObject(value)) throw refuse(`${what} must be a JSON object`);
  onlyKeys(value, ['state', ...POOL_RATES, ...POOL_FRACTIONS, 'openBorrowLendLimit', 'stepSize'], what, refuse);
  const state = value.state ?? 'Open';
  if (!POOL_STATES.includes(state as LendPoolState)) throw refuse(`${what}: state must be one of ${POOL_STATES.join(', ')}`);
  const f = Object.fromEntries(POOL_FRACTIONS.map((key) => [key, fraction(value[key], `${what} ${key}`, refuse, 0n, ONE)])) as Record<(typeof POOL_FRACTIONS)[number], bigint>;
  const r = Object.fromEntries(POOL_RATES.map((key) => [key, fraction(value[key], `${what} ${key}`, refuse, 0n, MAX_RATE)])) as Record<(typeof POOL_RATES)[number], bigint>;
  if (!(r.borrowRateMin <= r.borrowRateOptimal && r.borrowRateOptimal <= r.borrowRateMax)) throw refuse(`${what}: need borrowRateMin <= borrowRateOptimal <= borrowRateMax`);
  if (f.optimalUtilization === 0n || f.maxUtilization === 0n) throw refuse(`${what}: optimalUtilization and maxUtilization must be positive`);
  if (f.throttleUtilizationThreshold > f.throttleUtilizationBound) throw refuse(`${what}: need throttleUtilizationThreshold <= throttleUtilizationBound`);
  const openBorrowLendLimitUnits = poolQuantity(value.openBorrowLendLimit, asset, `${what} openBorrowLendLimit`, refuse);
  const stepUnits = poolQuantity(value.stepSize, asset, `${what} stepSize`, refuse);
  if (openBorrowLendLimitUnits % stepUnits !== 0n) throw refuse(`${what}: openBorrowLendLimit is not a whole number of stepSize`);
  return { assetId, state: state as LendPoolState, ...r, ...f, openBorrowLendLimitUnits, stepUnits };
}

/**
 * The margin parameters of the configured assets, in asset order. An asset without collateral
 * parameters has collateral weight 0 and cannot be borrowed, so a pool needs them.
 */
export function buildMarginParams(assets: readonly MarginAsset[], refuse: Refuse): MarginParams {
  const collateral: CollateralParams[] = [];
  const lendPools: LendPoolParams[] = [];
  assets.forEach((asset, assetId) => {
    if (asset.collateral !== undefined) collateral.push({ symbol: asset.symbol, spec: collateralSpec(asset, assetId, refuse) });
    if (asset.borrowLend === undefined) return;
    if (asset.collateral === undefined) throw refuse(`asset ${asset.symbol}: a borrowLend pool needs collateral parameters (a borrow's IMF and MMF)`);
    lendPools.push({ symbol: asset.symbol, spec: lendPoolSpec(asset, assetId, refuse) });
  });
  return { collateral, lendPools };
}
