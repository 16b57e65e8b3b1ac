// The margin family's test configuration, shared by the engine's margin tests: USDC and SOL with
// collateral parameters and borrow/lend pools, and the BorrowLend commands.

import { BorrowLendSide, CommandKind, type EngineConfig } from '../../engine/bus/types.js';
import type { LendPoolSpec } from '../../engine/bus/margin-params.js';
import { BASE, QUOTE, testConfig } from './engine-harness.js';

/** 1 in the margin family's fixed point (fractions and annual rates in 10^-12). */
export const ONE = 10n ** 12n;

/** An open pool: the rate curve 0 → 0.1 at 50 % → 1, max utilization 0.8, the exchange's share 0.2, step 1 unit. */
export function lendPool(assetId: number, overrides: Partial<LendPoolSpec> = {}): LendPoolSpec {
  return {
    assetId, state: 'Open',
    borrowRateMin: 0n, borrowRateOptimal: ONE / 10n, borrowRateMax: ONE, optimalUtilization: ONE / 2n, maxUtilization: (ONE * 8n) / 10n,
    throttleUtilizationThreshold: ONE, throttleUtilizationBound: ONE, throttleUpdateFraction: ONE,
    fee: ONE / 5n, openBorrowLendLimitUnits: 10n ** 15n, stepUnits: 1n,
    ...overrides,
  };
}

/**
 * USDC (IMF 0.1, MMF 0.05, weight 1) and SOL (IMF 0.2, MMF 0.1, weight 0.5) with pools (each
 * pool's parameters overridable); M0 (SOL_USDC) banded so it has a guarded reference price.
 */
export function marginConfig(usdc: Partial<LendPoolSpec> = {}, sol: Partial<LendPoolSpec> = {}): EngineConfig {
  const config = testConfig();
  config.markets = config.markets.map((m) => ({ ...m, maxMultiplierBps: 12_500, minMultiplierBps: 7_500 }));
  config.margin = {
    valuationAssetId: QUOTE,
    collateral: [
      { assetId: QUOTE, haircut: { kind: 'identity', weight: ONE }, imf: { base: ONE / 10n, factor: 0n }, mmf: { base: ONE / 20n, factor: 0n } },
      { assetId: BASE, haircut: { kind: 'identity', weight: ONE / 2n }, imf: { base: ONE / 5n, factor: 0n }, mmf: { base: ONE / 10n, factor: 0n } },
    ],
    lendPools: [lendPool(QUOTE, usdc), lendPool(BASE, sol)],
  };
  return config;
}

export const borrow = (accountId: number, assetId: number, amountUnits: number) => ({ kind: CommandKind.BorrowLend, accountId, assetId, side: BorrowLendSide.Borrow as number, amountUnits });
export const lend = (accountId: number, assetId: number, amountUnits: number) => ({ kind: CommandKind.BorrowLend, accountId, assetId, side: BorrowLendSide.Lend as number, amountUnits });
