// The integer form of the margin parameters of each asset, as src/config.ts builds them from the
// configuration's decimal strings and as the margin arithmetic (engine/core/margin/) reads them.
//
// Every fraction and annual rate is an integer count of 10^-MARGIN_FRACTION_DECIMALS;
// quantities are smallest units of the asset. Config refuses any
// value that is not exact at that scale, so the published decimal string and the integer the
// arithmetic uses are the same number.

/** Decimals of every margin fraction and annual rate (0.0001275 → 127_500_000 at 10^-12). */
export const MARGIN_FRACTION_DECIMALS = 12;

/** IMF or MMF as a function of a position's notional N in whole quote-asset units: max(base, factor·√N). */
export interface MarginFunctionSpec {
  base: bigint;
  factor: bigint;
}

/** What the inverse-square-root haircut measures: the holding in whole tokens, or its notional in whole USDC. */
export type HaircutBasis = 'quantity' | 'notional';

/**
 * Collateral weight of a holding: `weight` (identity), or min(weight, base / (1 + penalty·√x))
 * (inverseSqrt), x being the holding measured by `basis`.
 */
export type HaircutSpec =
  | { kind: 'identity'; weight: bigint }
  | { kind: 'inverseSqrt'; weight: bigint; base: bigint; penalty: bigint; basis: HaircutBasis };

export interface CollateralSpec {
  assetId: number;
  haircut: HaircutSpec;
  /** Margin fractions of a borrow of this asset (a borrow is an exposure). */
  imf: MarginFunctionSpec;
  mmf: MarginFunctionSpec;
}

/** Pool state as the venue names it: RepayOnly refuses new borrows and lends. */
export type LendPoolState = 'Open' | 'Closed' | 'RepayOnly';

/** One borrow/lend pool. Utilizations and the fee are fractions, rates annual fractions. */
export interface LendPoolSpec {
  assetId: number;
  state: LendPoolState;
  /** Borrow rate at utilization 0, at optimalUtilization, and at utilization 1 (two slopes). */
  borrowRateMin: bigint;
  borrowRateOptimal: bigint;
  borrowRateMax: bigint;
  optimalUtilization: bigint;
  maxUtilization: bigint;
  throttleUtilizationThreshold: bigint;
  throttleUtilizationBound: bigint;
  throttleUpdateFraction: bigint;
  /** The exchange's share of borrow interest: lenders get borrowRate × utilization × (1 − fee). */
  fee: bigint;
  /** Cap on the pool's lent and borrowed totals, in the asset's units. */
  openBorrowLendLimitUnits: bigint;
  /** Quantity step of a borrow or lend, in the asset's units. */
  stepUnits: bigint;
}

/** The margin parameters the engine applies, in asset order (EngineConfig.margin). */
export interface EngineMarginConfig {
  /** The asset everything is valued in (USDC): mark prices come from each asset's market quoted in it. */
  valuationAssetId: number;
  collateral: CollateralSpec[];
  lendPools: LendPoolSpec[];
}
