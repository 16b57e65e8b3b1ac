// Perpetual market parameters of the configuration, written as the venue publishes a PERP market
// (GET /api/v1/markets: imfFunction, mmfFunction, fundingInterval, fundingRateUpperBound,
// fundingRateLowerBound, openInterestLimit, positionLimitWeight) and turned here, once, into the
// engine's PerpSpec.
//
// Exactness as everywhere in the configuration: margin fractions at 10^-12 (src/margin-config.ts),
// funding bounds whole basis points, the open interest limit exact in base units of the
// underlying, the position limit weight at 10^-12 (1 when absent). A perpetual is settled in USDC, the margin valuation asset, so its quote must be
// USDC; its base is the underlying, an asset of the file that nobody holds through the perp
// (engine/core/catalog.ts). The futures fee rates are the markets file's futuresMakerFeeBps /
// futuresTakerFeeBps (DEFAULT_FUTURES_FEES, the venue's tier 1: 0.02 % / 0.05 %).

import type { PerpSpec } from '../engine/bus/types.js';
import { MARGIN_FRACTION_DECIMALS } from '../engine/bus/margin-params.js';
import { marginFunction, type MarginFunctionConfig, type Refuse } from './margin-config.js';

/** The venue's tier-1 futures fee rates in basis points (maker / taker). */
export const DEFAULT_FUTURES_FEES = { makerFeeBps: 2, takerFeeBps: 5 } as const;

/** The funding interval every market of the venue uses since 2025-08-20: one hour, in ms. */
export const DEFAULT_FUNDING_INTERVAL_MS = 3_600_000;

/** The perpetual fields of a markets-file market (all required when marketType is "PERP"). */
export interface PerpMarketConfig {
  marketType?: 'SPOT' | 'PERP';
  imfFunction?: MarginFunctionConfig;
  mmfFunction?: MarginFunctionConfig;
  /** Milliseconds (an integer; the venue's wire has shown it as a string too, accepted). */
  fundingInterval?: number | string;
  /** Basis points per interval, signed integers as decimal strings ("100", "-100"). */
  fundingRateUpperBound?: string;
  fundingRateLowerBound?: string;
  /** In whole units of the underlying (a decimal string). */
  openInterestLimit?: string;
  /**
   * Optional: the band around the index the mark price is clamped to, basis points as a string
   * (engine/core/perp/mark-price.ts); absent: "500" (5 %), and the fingerprint is unchanged.
   */
  markPriceBand?: string;
  /**
   * Optional: the weight of a position's notional in its account's position limit, a decimal
   * string from 0 to 1000 (engine/core/perp/position-limit.ts); absent: "1", and the fingerprint
   * is unchanged.
   */
  positionLimitWeight?: string;
}

/** A position limit weight of 1 at 10^-12, which the engine's spec leaves out. */
const WEIGHT_ONE = 10n ** BigInt(MARGIN_FRACTION_DECIMALS);

const PERP_KEYS = ['imfFunction', 'mmfFunction', 'fundingInterval', 'fundingRateUpperBound', 'fundingRateLowerBound', 'openInterestLimit'] as const;

function bps(text: unknown, what: string, refuse: Refuse): number {
  if (typeof text !== 'string' || !/^-?\d{1,5}$/.test(text)) throw refuse(`${what} must be a whole number of basis points as a string, got ${JSON.stringify(text)}`);
  const value = Number(text);
  if (Math.abs(value) > 10_000) throw refuse(`${what} must be within ±10000 basis points`);
  return value;
}

function baseUnits(text: unknown, decimals: number, what: string, refuse: Refuse): number {
  const match = typeof text === 'string' ? /^(\d+)(?:\.(\d+))?$/.exec(text) : null;
  if (match === null) throw refuse(`${what} must be a plain non-negative decimal string`);
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  if (fraction.length > decimals) throw refuse(`${what}: "${String(text)}" has more than ${decimals} decimals`);
  const units = BigInt(match[1] + fraction.padEnd(decimals, '0'));
  if (units > BigInt(Number.MAX_SAFE_INTEGER)) throw refuse(`${what} exceeds the safe-integer range`);
  return Number(units);
}

/** Whether the market is a perpetual ("PERP"); anything but "SPOT", "PERP" or absent is refused. */
export function isPerpMarket(market: PerpMarketConfig, name: string, refuse: Refuse): boolean {
  const type = market.marketType;
  if (type !== undefined && type !== 'SPOT' && type !== 'PERP') throw refuse(`${name}: marketType must be "SPOT" or "PERP"`);
  if (type !== 'PERP') {
    for (const key of [...PERP_KEYS, 'markPriceBand', 'positionLimitWeight'] as const) if (market[key] !== undefined) throw refuse(`${name}: ${key} is a perpetual's field (marketType "PERP")`);
  }
  return type === 'PERP';
}

/** The engine's PerpSpec of a perpetual market of the file. */
export function buildPerpSpec(
  market: PerpMarketConfig & { quoteSymbol: string }, name: string, baseDecimals: number,
  fees: { makerFeeBps: number; takerFeeBps: number }, refuse: Refuse,
): PerpSpec {
  if (market.quoteSymbol !== 'USDC') throw refuse(`${name}: a perpetual is settled in USDC, its quote must be USDC`);
  for (const key of PERP_KEYS) if (market[key] === undefined) throw refuse(`${name}: a perpetual needs ${key}`);
  const interval = typeof market.fundingInterval === 'string' && /^\d+$/.test(market.fundingInterval) ? Number(market.fundingInterval) : market.fundingInterval;
  if (!(Number.isSafeInteger(interval) && (interval as number) > 0)) throw refuse(`${name}: fundingInterval must be a positive whole number of milliseconds`);
  const spec: PerpSpec = {
    imf: marginFunction(market.imfFunction, `${name} imfFunction`, refuse),
    mmf: marginFunction(market.mmfFunction, `${name} mmfFunction`, refuse),
    fundingIntervalMs: interval as number,
    fundingRateUpperBoundBps: bps(market.fundingRateUpperBound, `${name} fundingRateUpperBound`, refuse),
    fundingRateLowerBoundBps: bps(market.fundingRateLowerBound, `${name} fundingRateLowerBound`, refuse),
    openInterestLimitUnits: baseUnits(market.openInterestLimit, baseDecimals, `${name} openInterestLimit`, refuse),
    makerFeeBps: fees.makerFeeBps,
    takerFeeBps: fees.takerFeeBps,
  };
  if (spec.fundingIntervalMs % 1000 !== 0) throw refuse(`${name}: fundingInterval must be a whole number of seconds (the mark is sampled each second)`);
  if (market.markPriceBand !== undefined) {
    const band = bps(market.markPriceBand, `${name} markPriceBand`, refuse);
    if (band < 1) throw refuse(`${name}: markPriceBand must be from 1 to 10000 basis points`);
    spec.markPriceBandBps = band;
  }
  if (market.positionLimitWeight !== undefined) {
    const weight = baseUnits(market.positionLimitWeight, MARGIN_FRACTION_DECIMALS, `${name} positionLimitWeight`, refuse);
    if (BigInt(weight) > 1000n * WEIGHT_ONE) throw refuse(`${name}: positionLimitWeight must be from 0 to 1000`);
    if (BigInt(weight) !== WEIGHT_ONE) spec.positionLimitWeight = BigInt(weight);
  }
  if ((spec.fundingIntervalMs / 1000) * (spec.markPriceBandBps ?? 500) * 1e8 > Number.MAX_SAFE_INTEGER) {
    throw refuse(`${name}: fundingInterval × markPriceBand is too large to sum an interval's premiums exactly`);
  }
  if (spec.fundingRateLowerBoundBps > spec.fundingRateUpperBoundBps) throw refuse(`${name}: fundingRateLowerBound is above fundingRateUpperBound`);
  if (spec.mmf.base > spec.imf.base) throw refuse(`${name}: mmfFunction.base is above imfFunction.base`);
  return spec;
}
