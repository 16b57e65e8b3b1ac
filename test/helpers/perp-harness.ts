// The perpetuals' test configuration: the margin family's (USDC and SOL with collateral and pools,
// marginConfig) plus SOL_USDC_PERP as market 2 after the spot books, on the default grid (one lot
// 10 units of SOL, one tick × one lot 3 USDC units).

import { MarketKind, type EngineConfig, type MarketSpec, type PerpSpec } from '../../engine/bus/types.js';
import { BASE, BASE_PER_LOT, QUOTE, QUOTE_PER_TICK_LOT } from './engine-harness.js';
import { marginConfig, ONE } from './margin-harness.js';

export const PERP = 2;

/** IMF 0.1 and MMF 0.05 flat (no √N term), futures fees 2 / 5 bps. */
export function perpSpec(overrides: Partial<PerpSpec> = {}): PerpSpec {
  return {
    imf: { base: ONE / 10n, factor: 0n }, mmf: { base: ONE / 20n, factor: 0n },
    fundingIntervalMs: 3_600_000, fundingRateUpperBoundBps: 100, fundingRateLowerBoundBps: -100,
    openInterestLimitUnits: 1_000_000, makerFeeBps: 2, takerFeeBps: 5,
    ...overrides,
  };
}

export function perpMarket(overrides: Partial<PerpSpec> = {}, marketId = PERP): MarketSpec {
  return {
    marketId, kind: MarketKind.Perp, perp: perpSpec(overrides), symbol: 'SOL_USDC_PERP', baseAssetId: BASE, quoteAssetId: QUOTE,
    baseUnitsPerLot: BASE_PER_LOT, quoteUnitsPerTickLot: QUOTE_PER_TICK_LOT, minPriceTicks: 1, maxPriceTicks: 1000, minQtyLots: 1, maxQtyLots: 1000,
    maxMultiplierBps: 12_500, minMultiplierBps: 7_500,
  };
}

/** marginConfig with the perpetual appended as market 2. */
export function perpConfig(overrides: Partial<PerpSpec> = {}): EngineConfig {
  const config = marginConfig();
  config.markets = [...config.markets, perpMarket(overrides)];
  return config;
}
