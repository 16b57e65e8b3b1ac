// Server configuration: embedded defaults, overridden by a JSON markets file, environment variables
// and command-line flags (flags win over environment, environment over the file and defaults).
//
// Markets and assets are given as the public venue writes them (decimal strings for tick and step
// sizes and filters) and turned here, once, into the integers the engine works in. A market is
// refused at start-up, with a message naming it, when one lot is not a whole number of base units,
// when one tick × one lot is not a whole number of quote units, or when its largest order's
// notional could leave the JavaScript safe-integer range: the engine never has to check again.
// Price-band multipliers ("1.25") become basis points the same exact way, and the default fee
// rates are given in basis points.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { buildIndexUpdateBounds, buildMarginParams, type BorrowLendConfig, type CollateralConfig, type MarginParams } from './margin-config.js';
import { buildPerpSpec, DEFAULT_FUNDING_INTERVAL_MS, DEFAULT_FUTURES_FEES, isPerpMarket, type PerpMarketConfig } from './perp-config.js';
import { parseDecimal } from './decimal.js';
import {
  DEFAULT_AUTO_CLOSE_DIVISOR, DEFAULT_AUTO_CLOSE_OFFSET_E12, DEFAULT_LIQUIDATION, LEVERAGE_HUNDREDTHS_PER_UNIT, MarketKind, MAX_CONFIGURABLE_LEVERAGE_HUNDREDTHS,
  type AssetSpec, type EngineConfig, type EngineLimits, type MarketSpec,
} from '../engine/bus/types.js';

export interface AssetConfig {
  symbol: string;
  displayName: string;
  /** Decimals of the asset's smallest unit as the engine counts it. */
  decimals: number;
  /** Blockchain name of its token (wire enum), for the assets listing. */
  blockchain: string;
  /** Collateral parameters (GET /api/v1/collateral); absent: collateral weight 0, not borrowable. */
  collateral?: CollateralConfig;
  /** Borrow/lend pool parameters; absent: no pool for this asset. */
  borrowLend?: BorrowLendConfig;
  /** Cap and floor of each index price update as multipliers of the previous price (decimal strings); absent: none. */
  maxPriceUpdateMultiplier?: string;
  minPriceUpdateMultiplier?: string;
}

/** A market as the venue writes it; a perpetual adds marketType "PERP" and its fields (src/perp-config.ts). */
export interface MarketConfig extends PerpMarketConfig {
  symbol: string;
  baseSymbol: string;
  quoteSymbol: string;
  tickSize: string;
  stepSize: string;
  minPrice: string;
  maxPrice: string;
  minQuantity: string;
  maxQuantity: string;
  createdAt: string;
  /**
   * Price band around the last trade price, as multipliers (decimal strings, at most 4 decimals;
   * DEFAULT_PRICE_BAND when absent): limit prices above last × maxMultiplier or below
   * last × minMultiplier are refused.
   */
  maxMultiplier?: string;
  minMultiplier?: string;
  /**
   * Most one dust conversion in this market pays, in the quote asset (decimal string). Absent: the
   * engine's default, 10 whole units of the quote asset.
   */
  dustMaxPayout?: string;
}

export interface MarketsFile {
  assets: AssetConfig[];
  markets: MarketConfig[];
  limits?: Partial<EngineLimits>;
  /** Default fee rates of new accounts in basis points (DEFAULT_FEES when absent). */
  makerFeeBps?: number;
  takerFeeBps?: number;
  /**
   * Guarded reference price of each banded market: it moves toward trade prices by at most
   * referenceStepBps basis points once per referenceIntervalMs (absent: 100 bps per 60000 ms).
   */
  referenceStepBps?: number;
  referenceIntervalMs?: number;
  /**
   * The platform's maximum leverage, the highest leverageLimit an account may set (a decimal
   * string from 1 to 1000, at most 2 decimals). Absent: 100.
   */
  maxLeverage?: string;
  /** Futures fee rates of every account on perpetual fills, in basis points (DEFAULT_FUTURES_FEES when absent). */
  futuresMakerFeeBps?: number;
  futuresTakerFeeBps?: number;
  /**
   * The liquidation's Auto-Close margin fraction, max(AccountMMF / divisor, AccountMMF − offset)
   * (engine/core/liquidation/backstop.ts): the divisor a whole number from 1 to 1000, the offset a
   * decimal string from 0 to 1 with at most 12 decimals. Absent: 2 and "0.006"; the flags and
   * environment variables (--auto-close-mf-divisor, AUTO_CLOSE_MF_DIVISOR and the offset's) win.
   */
  autoCloseMfDivisor?: number;
  autoCloseMfOffset?: string;
  /**
   * Every account's position limit on perpetuals, in USDC notional (a decimal string; engine/core/
   * perp/position-limit.ts). Absent: DEFAULT_POSITION_LIMIT; --position-limit / POSITION_LIMIT win.
   */
  positionLimit?: string;
}

/** A market with both its wire form and its integer form. */
export interface MarketInfo extends MarketConfig {
  /** The band multipliers in force (the configured ones or the defaults). */
  maxMultiplier: string;
  minMultiplier: string;
  spec: MarketSpec;
  /** Decimals of a price: prices are parsed at this scale, then divided by tickUnits. */
  priceDecimals: number;
  /** One tick in 10^-priceDecimals units (e.g. tick 0.05 at 2 decimals → 5). */
  tickUnits: number;
  quantityDecimals: number;
  stepUnits: number;
  baseDecimals: number;
  quoteDecimals: number;
}

export interface ServerConfig {
  host: string;
  port: number;
  adminPort: number;
  dataDir: string;
  frontThreads: number;
  /**
   * Threads per front thread that serve the history routes (a piscina pool), so that a long
   * history read does not hold up the front thread's other requests; 0 serves them on the front
   * thread itself.
   */
  historyThreads?: number;
  speedBumpMs: number;
  /** Seed two funded demo accounts when the journal is empty. */
  demoAccounts: boolean;
  inboundSlotCount: number;
  outboundSlotCount: number;
  assets: AssetConfig[];
  markets: MarketInfo[];
  engine: EngineConfig;
  /**
   * Collateral and borrow/lend pool parameters in integer form (src/margin-config.ts), with the
   * symbols the routes publish them under. The engine applies the same specs through
   * `engine.margin`, present when some asset has a pool: a configuration without pools keeps the
   * fingerprint it had before the engine had pools (journals written then keep replaying).
   */
  margin: MarginParams;
  // Durability
  /** Snapshot after this many commands since the last snapshot (0: only on the operator's request). */
  snapshotEvery?: number;
  /** Snapshot files kept; the journal keeps the records after the oldest of them. */
  snapshotKeep?: number;
  /** Remove journal records older than the oldest kept snapshot. */
  compactJournal?: boolean;
  // Streams
  /** Seconds of WebSocket silence before a protocol ping; a peer that does not answer is closed. */
  wsIdleTimeoutS?: number;
  /** Wrong withdrawal two-factor codes that lock an account's two-factor withdrawals. */
  twoFactorMaxFailures?: number;
  /** How long such a lockout lasts, in seconds. */
  twoFactorLockoutS?: number;
  /** No progress for this long while work waits ends the process (the supervisor restarts it). */
  stallTimeoutMs?: number;
  /** A stop (SIGTERM, SIGINT) that has not finished after this long ends the process anyway. */
  shutdownTimeoutMs?: number;
  /** Request rate limits of the public port (DEFAULT_RATE_LIMITS when absent). */
  rateLimits?: RateLimitConfig;
  /** Count operating metrics (GET /metrics on the admin port); off: the counters stay at zero. */
  metrics?: boolean;
  // Index prices (engine/core/margin/index-prices.ts, src/front/index-default.ts)
  /** An index older than this is stale (engine.indexMaxAgeUs carries it when not the default). */
  indexMaxAgeMs?: number;
  /** Front thread 0 derives each asset's index from its USDC book's mid (off: only the operator and feeds set them). */
  indexDefault?: boolean;
  /** How often it does. */
  indexDefaultIntervalMs?: number;
  /** Perpetual PnL is realized at mark this often (engine/core/perp/realize.ts); 0: only when a position reduces. */
  realizePnlIntervalMs?: number;
  /** A realization pass visits at most this many positions per engine command (engine/core/perp/realize.ts); 0: the whole pass in one. */
  realizeStepPositions?: number;
  /** A funding pass pays at most this many holders per engine command (engine/core/perp/funding-passes.ts); 0: the whole pass in one. */
  fundingStepPositions?: number;
  /** After the borrowers' hour of interest, at most this many accounts a command are paid their lend interest and re-checked (engine/core/margin/interest-pass.ts); 0: all in one. */
  interestStepAccounts?: number;
  /**
   * The Auto-Close margin fraction's divisor and offset from a flag or the environment (MarketsFile
   * has the rules), read by buildConfig only: a built configuration leaves them out (engine.liquidation
   * carries what they resolve to).
   */
  autoCloseMfDivisor?: number;
  autoCloseMfOffset?: string;
  /** Every account's position limit in USDC (a decimal string): the flag's or environment's, over the markets file's positionLimit, over the default. */
  positionLimit?: string;
}

/** Request rate limits; a rate or count of 0 turns that limit off. */
export interface RateLimitConfig {
  /** Every request and WebSocket upgrade from one client address, counted before anything else. */
  addressRequestsPerS: number;
  addressRequestBurst: number;
  /** Signed requests of one API key, counted once their signature verified. */
  keyRequestsPerS: number;
  keyRequestBurst: number;
  /** Open WebSocket connections of one client address. */
  wsConnectionsPerAddress: number;
  /** Messages a client sends on one WebSocket connection (bursts of four seconds' worth). */
  wsMessagesPerS: number;
}

/** Far above a co-located market maker's steady rate, far below what one flooding host sends. */
export const DEFAULT_RATE_LIMITS: RateLimitConfig = {
  addressRequestsPerS: 2000,
  addressRequestBurst: 4000,
  keyRequestsPerS: 1000,
  keyRequestBurst: 2000,
  wsConnectionsPerAddress: 100,
  wsMessagesPerS: 50,
};

// Snapshot and compaction defaults.
export const DEFAULT_SNAPSHOT_EVERY = 1_000_000;
export const DEFAULT_SNAPSHOT_KEEP = 2;
// Streams
export const DEFAULT_WS_IDLE_TIMEOUT_S = 60;
export const DEFAULT_HISTORY_THREADS = 1;
// Withdrawal two-factor lockout: as exchanges commonly do, 5 wrong codes lock for 15 minutes.
export const DEFAULT_TWO_FACTOR_MAX_FAILURES = 5;
export const DEFAULT_TWO_FACTOR_LOCKOUT_S = 900;
// Liveness: far above a healthy flush (under a millisecond) or a long snapshot export, well below
// what an operator would accept as an outage.
export const DEFAULT_STALL_TIMEOUT_MS = 15_000;
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;
// Index prices: the engine's default maximum age (30 s), and a default index every 5 s.
export const DEFAULT_INDEX_MAX_AGE_MS = 30_000;
export const DEFAULT_INDEX_DEFAULT_INTERVAL_MS = 5_000;
// Perpetuals realize PnL at mark every 10 s, as the venue does.
export const DEFAULT_REALIZE_PNL_INTERVAL_MS = 10_000;
// A realization pass visits at most this many positions per engine command (a proposed default:
// about a millisecond of engine time on the machines measured), so orders interleave with it.
export const DEFAULT_REALIZE_STEP_POSITIONS = 128;
// A funding pass pays at most this many holders per engine command (a proposed default, likewise).
export const DEFAULT_FUNDING_STEP_POSITIONS = 128;
// After the borrowers' hour of interest, at most this many accounts a command are paid their lend
// interest and re-checked (a proposed default, likewise).
export const DEFAULT_INTEREST_STEP_ACCOUNTS = 128;
// Every account's position limit on perpetuals (USDC notional): a proposed default far above what
// demo accounts and benches hold, so they are not bound by it.
export const DEFAULT_POSITION_LIMIT = '100000000';

export const DEFAULT_LIMITS: EngineLimits = {
  maxAccounts: 100_000,
  maxOpenOrdersPerAccount: 500,
  maxOrdersPerBook: 200_000,
  maxPriceLevelsPerSide: 20_000,
};

/** Price band of a market that names none (engine MarketSpec multipliers; also needed unchanged by replay). */
export const DEFAULT_PRICE_BAND = { maxMultiplier: '1.25', minMultiplier: '0.75' } as const;

/**
 * Fee rates every new account starts with, in basis points of what it receives. Like orderIdKey
 * they are part of what a journal replay must be given unchanged: accounts take them at creation.
 */
export const DEFAULT_FEES = { makerFeeBps: 2, takerFeeBps: 5 } as const;

/** Borrow IMF/MMF of a volatile asset: about 5× on a borrow, as the venue's support pages put it. */
const VOLATILE_BORROW_MARGIN = {
  imfFunction: { type: 'sqrt', base: '0.2', factor: '0.0001275' },
  mmfFunction: { type: 'sqrt', base: '0.125', factor: '0.0000765' },
} as const;

/** The rest of a pool's parameters, shared by the default pools (proposed defaults, see README). */
const POOL_DEFAULTS = {
  borrowRateMin: '0', borrowRateMax: '1', optimalUtilization: '0.7', maxUtilization: '0.95',
  throttleUtilizationThreshold: '0.8', throttleUtilizationBound: '0.9', throttleUpdateFraction: '0.1', fee: '0',
} as const;

/** Funding parameters of the default perpetuals: hourly, ±1 % per interval (the venue's live values are ±100 or ±150 bps). */
const PERP_DEFAULTS = { fundingInterval: DEFAULT_FUNDING_INTERVAL_MS, fundingRateUpperBound: '100', fundingRateLowerBound: '-100' } as const;

/**
 * Asset decimals and market grids as the public venue uses them for these spot books, with each
 * asset's collateral parameters and borrow/lend pool. Weights, IMF/MMF bases and the wire's
 * example factors (0.0001275, 0.0000765) follow the venue's published shapes; the haircut curve,
 * the rate curve and the throttle are proposed defaults (README, "Margin parameters").
 */
export const DEFAULT_MARKETS: MarketsFile = {
  assets: [
    {
      symbol: 'USDC', displayName: 'USD Coin', decimals: 6, blockchain: 'Solana',
      collateral: {
        imfFunction: { type: 'sqrt', base: '0.1', factor: '0.0001275' },
        mmfFunction: { type: 'sqrt', base: '0.0625', factor: '0.0000765' },
        haircutFunction: { weight: '1', kind: { type: 'identity' } },
      },
      borrowLend: { ...POOL_DEFAULTS, borrowRateOptimal: '0.1', openBorrowLendLimit: '100000000', stepSize: '0.01' },
    },
    {
      symbol: 'SOL', displayName: 'Solana', decimals: 9, blockchain: 'Solana',
      collateral: {
        ...VOLATILE_BORROW_MARGIN,
        haircutFunction: { weight: '0.85', kind: { type: 'inverseSqrt', base: '1.1', positiveCurvePenalty: '0.0003' } },
      },
      borrowLend: { ...POOL_DEFAULTS, borrowRateOptimal: '0.08', openBorrowLendLimit: '1000000', stepSize: '0.01' },
    },
    {
      symbol: 'BTC', displayName: 'Bitcoin', decimals: 8, blockchain: 'Bitcoin',
      collateral: {
        ...VOLATILE_BORROW_MARGIN,
        haircutFunction: { weight: '0.9', kind: { type: 'inverseSqrt', base: '1.1', positiveCurvePenalty: '0.007' } },
      },
      borrowLend: { ...POOL_DEFAULTS, borrowRateOptimal: '0.05', openBorrowLendLimit: '1000', stepSize: '0.00001' },
    },
    {
      symbol: 'ETH', displayName: 'Ethereum', decimals: 8, blockchain: 'Ethereum',
      collateral: {
        ...VOLATILE_BORROW_MARGIN,
        haircutFunction: { weight: '0.9', kind: { type: 'inverseSqrt', base: '1.1', positiveCurvePenalty: '0.0015' } },
      },
      borrowLend: { ...POOL_DEFAULTS, borrowRateOptimal: '0.05', openBorrowLendLimit: '20000', stepSize: '0.0001' },
    },
  ],
  markets: [
    {
      symbol: 'SOL_USDC', baseSymbol: 'SOL', quoteSymbol: 'USDC',
      tickSize: '0.01', stepSize: '0.01', minPrice: '0.01', maxPrice: '10000',
      minQuantity: '0.01', maxQuantity: '100000', createdAt: '2024-01-01T00:00:00.000000',
    },
    {
      symbol: 'BTC_USDC', baseSymbol: 'BTC', quoteSymbol: 'USDC',
      tickSize: '0.1', stepSize: '0.00001', minPrice: '0.1', maxPrice: '1000000',
      minQuantity: '0.00001', maxQuantity: '1000', createdAt: '2024-01-01T00:00:00.000000',
    },
    {
      symbol: 'ETH_USDC', baseSymbol: 'ETH', quoteSymbol: 'USDC',
      tickSize: '0.01', stepSize: '0.0001', minPrice: '0.01', maxPrice: '100000',
      minQuantity: '0.0001', maxQuantity: '10000', createdAt: '2024-01-01T00:00:00.000000',
    },
    // Perpetuals, after the spot books (a journal written before them keeps its market ids).
    {
      symbol: 'SOL_USDC_PERP', baseSymbol: 'SOL', quoteSymbol: 'USDC', marketType: 'PERP',
      tickSize: '0.01', stepSize: '0.01', minPrice: '0.01', maxPrice: '10000',
      minQuantity: '0.01', maxQuantity: '100000', createdAt: '2024-01-01T00:00:00.000000',
      ...PERP_DEFAULTS, imfFunction: { type: 'sqrt', base: '0.02', factor: '0.0001275' }, mmfFunction: { type: 'sqrt', base: '0.0125', factor: '0.0000765' },
      openInterestLimit: '4000000', positionLimitWeight: '1',
    },
    {
      symbol: 'BTC_USDC_PERP', baseSymbol: 'BTC', quoteSymbol: 'USDC', marketType: 'PERP',
      tickSize: '0.1', stepSize: '0.00001', minPrice: '0.1', maxPrice: '1000000',
      minQuantity: '0.00001', maxQuantity: '1000', createdAt: '2024-01-01T00:00:00.000000',
      ...PERP_DEFAULTS, imfFunction: { type: 'sqrt', base: '0.02', factor: '0.0000935' }, mmfFunction: { type: 'sqrt', base: '0.0125', factor: '0.0000561' },
      openInterestLimit: '4000', positionLimitWeight: '1',
    },
    {
      symbol: 'ETH_USDC_PERP', baseSymbol: 'ETH', quoteSymbol: 'USDC', marketType: 'PERP',
      tickSize: '0.01', stepSize: '0.0001', minPrice: '0.01', maxPrice: '100000',
      minQuantity: '0.0001', maxQuantity: '10000', createdAt: '2024-01-01T00:00:00.000000',
      ...PERP_DEFAULTS, imfFunction: { type: 'sqrt', base: '0.02', factor: '0.0000935' }, mmfFunction: { type: 'sqrt', base: '0.0125', factor: '0.0000561' },
      openInterestLimit: '80000', positionLimitWeight: '1',
    },
  ],
};

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/** Exact decimal string → [integer mantissa as bigint, decimals]. Trailing zeros are dropped. */
function parseExact(text: string, what: string): [bigint, number] {
  const match = DECIMAL.exec(text);
  if (!match) throw new ConfigError(`${what}: "${text}" is not a plain non-negative decimal`);
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  return [BigInt(match[1] + fraction), fraction.length];
}

/** value × 10^decimals as an exact integer, or a ConfigError. */
function toUnits(text: string, decimals: number, what: string): bigint {
  const [mantissa, places] = parseExact(text, what);
  if (places > decimals) {
    throw new ConfigError(`${what}: "${text}" has more than ${decimals} decimals`);
  }
  return mantissa * 10n ** BigInt(decimals - places);
}

function safe(value: bigint, what: string): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new ConfigError(`${what} exceeds the safe-integer range (${value})`);
  }
  return Number(value);
}

/** The market's price band multipliers (the configured ones or the defaults) and their basis points, exactly: "1.25" → 12500. */
function priceBand(market: MarketConfig, name: string, maxPriceTicks: bigint) {
  const maxMultiplier = market.maxMultiplier ?? DEFAULT_PRICE_BAND.maxMultiplier;
  const minMultiplier = market.minMultiplier ?? DEFAULT_PRICE_BAND.minMultiplier;
  const maxMultiplierBps = toUnits(maxMultiplier, 4, `${name} maxMultiplier`);
  const minMultiplierBps = toUnits(minMultiplier, 4, `${name} minMultiplier`);
  if (maxMultiplierBps < 10_000n) throw new ConfigError(`${name}: maxMultiplier must be at least 1`);
  if (minMultiplierBps > 10_000n) throw new ConfigError(`${name}: minMultiplier must be at most 1`);
  safe(maxPriceTicks * maxMultiplierBps, `${name}: maxPrice × maxMultiplier`);
  return { maxMultiplier, minMultiplier, maxMultiplierBps, minMultiplierBps };
}

/** Turns one wire-form market into its integer form, refusing what the engine cannot hold exactly. */
export function buildMarket(
  market: MarketConfig,
  marketId: number,
  assets: AssetConfig[],
  futuresFees: { makerFeeBps: number; takerFeeBps: number } = DEFAULT_FUTURES_FEES,
): MarketInfo {
  const name = `market ${market.symbol}`;
  const refuse = (message: string) => new ConfigError(message);
  const perp = isPerpMarket(market, name, refuse);
  if (perp && market.quoteSymbol !== 'USDC') throw refuse(`${name}: a perpetual is settled in USDC, its quote must be USDC`);
  const baseAssetId = assets.findIndex((a) => a.symbol === market.baseSymbol);
  const quoteAssetId = assets.findIndex((a) => a.symbol === market.quoteSymbol);
  if (baseAssetId < 0) throw new ConfigError(`${name}: unknown base asset ${market.baseSymbol}`);
  if (quoteAssetId < 0) throw new ConfigError(`${name}: unknown quote asset ${market.quoteSymbol}`);
  const baseDecimals = assets[baseAssetId].decimals;
  const quoteDecimals = assets[quoteAssetId].decimals;

  const [tickMantissa, priceDecimals] = parseExact(market.tickSize, `${name} tickSize`);
  const [stepMantissa, quantityDecimals] = parseExact(market.stepSize, `${name} stepSize`);
  if (tickMantissa === 0n) throw new ConfigError(`${name}: tickSize must be positive`);
  if (stepMantissa === 0n) throw new ConfigError(`${name}: stepSize must be positive`);

  // One lot in base units: stepSize × 10^baseDecimals must be a whole number.
  if (quantityDecimals > baseDecimals) {
    throw new ConfigError(
      `${name}: stepSize ${market.stepSize} is finer than ${market.baseSymbol}'s ${baseDecimals} decimals`,
    );
  }
  const baseUnitsPerLot = stepMantissa * 10n ** BigInt(baseDecimals - quantityDecimals);

  // One tick × one lot in quote units: tick × step × 10^quoteDecimals must be a whole number.
  const tickLotPlaces = priceDecimals + quantityDecimals;
  const tickLotMantissa = tickMantissa * stepMantissa;
  const scaled = tickLotMantissa * 10n ** BigInt(quoteDecimals);
  const divisor = 10n ** BigInt(tickLotPlaces);
  if (scaled % divisor !== 0n) {
    throw new ConfigError(
      `${name}: tickSize ${market.tickSize} × stepSize ${market.stepSize} is not a whole number of ` +
        `${market.quoteSymbol} units (${quoteDecimals} decimals); choose a coarser tick or step`,
    );
  }
  const quoteUnitsPerTickLot = scaled / divisor;

  const onGrid = (text: string, decimals: number, unit: bigint, what: string): bigint => {
    const units = toUnits(text, decimals, `${name} ${what}`);
    if (units % unit !== 0n) throw new ConfigError(`${name}: ${what} ${text} is off the grid`);
    return units / unit;
  };
  const minPriceTicks = onGrid(market.minPrice, priceDecimals, tickMantissa, 'minPrice');
  const maxPriceTicks = onGrid(market.maxPrice, priceDecimals, tickMantissa, 'maxPrice');
  const minQtyLots = onGrid(market.minQuantity, quantityDecimals, stepMantissa, 'minQuantity');
  const maxQtyLots = onGrid(market.maxQuantity, quantityDecimals, stepMantissa, 'maxQuantity');
  if (minPriceTicks < 1n || minPriceTicks > maxPriceTicks) {
    throw new ConfigError(`${name}: need 0 < minPrice <= maxPrice`);
  }
  if (minQtyLots < 1n || minQtyLots > maxQtyLots) {
    throw new ConfigError(`${name}: need 0 < minQuantity <= maxQuantity`);
  }
  // The largest order's notional and base amount must stay exact in a JavaScript number.
  safe(maxPriceTicks * maxQtyLots * quoteUnitsPerTickLot, `${name}: maxPrice × maxQuantity notional`);
  safe(maxQtyLots * baseUnitsPerLot, `${name}: maxQuantity in base units`);

  const { maxMultiplier, minMultiplier, maxMultiplierBps, minMultiplierBps } = priceBand(market, name, maxPriceTicks);
  // Given only when configured, so that a configuration without it keeps its fingerprint.
  const dustCap = market.dustMaxPayout === undefined ? undefined : safe(toUnits(market.dustMaxPayout, quoteDecimals, `${name} dustMaxPayout`), `${name} dustMaxPayout`);
  if (dustCap !== undefined && dustCap < 1) throw new ConfigError(`${name}: dustMaxPayout must be positive`);

  return {
    ...market,
    maxMultiplier,
    minMultiplier,
    priceDecimals,
    tickUnits: Number(tickMantissa),
    quantityDecimals,
    stepUnits: Number(stepMantissa),
    baseDecimals,
    quoteDecimals,
    spec: {
      marketId,
      ...(perp ? { kind: MarketKind.Perp, perp: buildPerpSpec(market, name, baseDecimals, futuresFees, refuse) } : {}),
      symbol: market.symbol,
      baseAssetId,
      quoteAssetId,
      baseUnitsPerLot: safe(baseUnitsPerLot, `${name} lot size`),
      quoteUnitsPerTickLot: safe(quoteUnitsPerTickLot, `${name} tick × lot`),
      minPriceTicks: Number(minPriceTicks),
      maxPriceTicks: Number(maxPriceTicks),
      minQtyLots: Number(minQtyLots),
      maxQtyLots: Number(maxQtyLots),
      maxMultiplierBps: Number(maxMultiplierBps),
      minMultiplierBps: Number(minMultiplierBps),
      ...(dustCap === undefined ? {} : { dustMaxPayoutUnits: dustCap }),
    },
  };
}

function validateAssets(assets: AssetConfig[]): void {
  const seen = new Set<string>();
  assets.forEach((asset, index) => {
    if (!isObject(asset)) throw new ConfigError(`asset #${index + 1} is not a JSON object`);
    if (typeof asset.symbol !== 'string' || !/^[A-Z0-9]{1,16}$/.test(asset.symbol)) throw new ConfigError(`asset "${String(asset.symbol)}": bad symbol`);
    if (seen.has(asset.symbol)) throw new ConfigError(`asset ${asset.symbol} is listed twice`);
    seen.add(asset.symbol);
    if (!Number.isInteger(asset.decimals) || asset.decimals < 0 || asset.decimals > 12) {
      throw new ConfigError(`asset ${asset.symbol}: decimals must be an integer from 0 to 12`);
    }
    for (const field of ['displayName', 'blockchain'] as const) {
      if (typeof asset[field] !== 'string' || asset[field] === '') throw new ConfigError(`asset ${asset.symbol}: ${field} must be a non-empty string`);
    }
  });
  if (assets.length > 0xfffe) throw new ConfigError('too many assets');
}

/** Market fields the wire shows as strings; the decimal ones are parsed exactly by buildMarket. */
const MARKET_STRING_FIELDS = [
  'symbol', 'baseSymbol', 'quoteSymbol', 'tickSize', 'stepSize', 'minPrice', 'maxPrice', 'minQuantity', 'maxQuantity', 'createdAt',
] as const;

/**
 * Market symbols appear in stream names ("depth.SOL_USDC") and query strings, so they are upper-case
 * letters and digits joined by underscores: a dot would split a stream name.
 */
const MARKET_SYMBOL = /^[A-Z0-9]+(?:_[A-Z0-9]+)*$/;

function validateMarketShape(market: MarketConfig, index: number): void {
  if (!isObject(market)) throw new ConfigError(`market #${index + 1} is not a JSON object`);
  if (typeof market.symbol !== 'string' || market.symbol.length > 32 || !MARKET_SYMBOL.test(market.symbol)) {
    throw new ConfigError(`market #${index + 1}: bad symbol "${String(market.symbol)}" (upper-case letters and digits joined by "_", at most 32)`);
  }
  for (const field of MARKET_STRING_FIELDS) {
    if (typeof market[field] !== 'string') throw new ConfigError(`market ${market.symbol}: ${field} must be a string`);
  }
  for (const field of ['maxMultiplier', 'minMultiplier'] as const) {
    if (market[field] !== undefined && typeof market[field] !== 'string') throw new ConfigError(`market ${market.symbol}: ${field} must be a string`);
  }
  if (market.baseSymbol === market.quoteSymbol) throw new ConfigError(`market ${market.symbol}: base and quote asset are both ${market.baseSymbol}`);
}

/** Each engine limit, when given, must be a positive whole number; an unknown name is a typo. */
function validateLimits(limits: unknown): void {
  if (limits === undefined) return;
  if (!isObject(limits)) throw new ConfigError('"limits" must be a JSON object');
  for (const [name, value] of Object.entries(limits)) {
    if (!(name in DEFAULT_LIMITS)) throw new ConfigError(`limits: unknown limit "${name}" (known: ${Object.keys(DEFAULT_LIMITS).join(', ')})`);
    if (!Number.isSafeInteger(value) || (value as number) < 1) throw new ConfigError(`limits: ${name} must be a positive whole number, got ${JSON.stringify(value)}`);
  }
  const accounts = (limits as Partial<EngineLimits>).maxAccounts;
  if (accounts !== undefined && accounts >= 0x7fffffff) throw new ConfigError('limits: maxAccounts must be below 2147483647 (a 31-bit account id)');
}

const MARKETS_FILE_KEYS = new Set([
  'assets', 'markets', 'limits', 'makerFeeBps', 'takerFeeBps', 'referenceStepBps', 'referenceIntervalMs', 'maxLeverage', 'futuresMakerFeeBps', 'futuresTakerFeeBps',
  'autoCloseMfDivisor', 'autoCloseMfOffset',
  'positionLimit',
]);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The markets file parsed, or a one-line ConfigError naming the file. */
function readMarketsFile(file: string): MarketsFile {
  const path = resolve(file);
  const oneLine = (error: unknown) => (error as Error).message.replace(/\s+/g, ' ');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`markets file ${path}: ${oneLine(error)}`);
  }
  try {
    return JSON.parse(text) as MarketsFile;
  } catch (error) {
    throw new ConfigError(`markets file ${path} is not valid JSON: ${oneLine(error)}`);
  }
}

type Flags = Record<string, string | true>;

/** Flags that take no value: present or absent. */
const SWITCHES = new Set(['no-demo', 'no-compact', 'no-index-default']);

function parseFlags(argv: string[]): Flags {
  const flags: Flags = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) throw new ConfigError(`unexpected argument "${arg}"`);
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
    if (name in flags) throw new ConfigError(`--${name} is given twice`);
    if (SWITCHES.has(name)) {
      if (eq > 0) throw new ConfigError(`--${name} takes no value`);
      flags[name] = true;
    } else if (eq > 0) {
      flags[name] = arg.slice(eq + 1);
    } else if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) {
      flags[name] = argv[++i];
    } else {
      flags[name] = true;
    }
  }
  return flags;
}

function integerSetting(text: string | undefined, fallback: number, what: string, min: number, max: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text)) throw new ConfigError(`${what} must be a whole number, got "${text}"`);
  const value = Number(text);
  if (value < min || value > max) throw new ConfigError(`${what} must be from ${min} to ${max}`);
  return value;
}

/** An on/off environment variable: unset or "1" is on, "0" is off; anything else ("false") is refused. */
function envSwitch(env: NodeJS.ProcessEnv, name: string): boolean {
  const value = env[name];
  if (value === undefined || value === '1') return true;
  if (value === '0') return false;
  throw new ConfigError(`${name} must be 0 or 1, got "${value}"`);
}

const KNOWN_FLAGS = new Set([
  'host', 'port', 'admin-port', 'data-dir', 'front-threads', 'history-threads', 'speed-bump-ms', 'config', 'no-demo',
  'inbound-slots', 'outbound-slots',
  // Durability
  'snapshot-every', 'snapshot-keep', 'no-compact',
  // Streams
  'ws-idle-timeout-s',
  'two-factor-max-failures', 'two-factor-lockout-s',
  'stall-timeout-ms', 'shutdown-timeout-ms',
  'address-requests-per-s', 'address-request-burst', 'key-requests-per-s', 'key-request-burst',
  'ws-connections-per-address', 'ws-messages-per-s',
  'no-metrics',
  'index-max-age-ms', 'index-default-interval-ms', 'no-index-default',
  'realize-pnl-interval-ms', 'realize-step-positions', 'funding-step-positions', 'interest-step-accounts', 'position-limit',
  'auto-close-mf-divisor', 'auto-close-mf-offset',
]);

type PickSetting = (flag: string, envName: string) => string | undefined;

function rateLimitSettings(pick: PickSetting): RateLimitConfig {
  const d = DEFAULT_RATE_LIMITS;
  const setting = (flag: string, envName: string, fallback: number, what: string, min: number): number =>
    integerSetting(pick(flag, envName), fallback, what, min, 1_000_000);
  return {
    addressRequestsPerS: setting('address-requests-per-s', 'ADDRESS_REQUESTS_PER_S', d.addressRequestsPerS, 'requests per second per address', 0),
    addressRequestBurst: setting('address-request-burst', 'ADDRESS_REQUEST_BURST', d.addressRequestBurst, 'request burst per address', 1),
    keyRequestsPerS: setting('key-requests-per-s', 'KEY_REQUESTS_PER_S', d.keyRequestsPerS, 'requests per second per API key', 0),
    keyRequestBurst: setting('key-request-burst', 'KEY_REQUEST_BURST', d.keyRequestBurst, 'request burst per API key', 1),
    wsConnectionsPerAddress: setting('ws-connections-per-address', 'WS_CONNECTIONS_PER_ADDRESS', d.wsConnectionsPerAddress, 'WebSocket connections per address', 0),
    wsMessagesPerS: setting('ws-messages-per-s', 'WS_MESSAGES_PER_S', d.wsMessagesPerS, 'WebSocket messages per second per connection', 0),
  };
}

/** Builds the whole configuration from flags, environment and the markets file or defaults. */
export function loadConfig(argv: string[], env: NodeJS.ProcessEnv): ServerConfig {
  const flags = parseFlags(argv);
  for (const name of Object.keys(flags)) {
    if (!KNOWN_FLAGS.has(name)) throw new ConfigError(`unknown flag --${name}`);
  }
  // An empty value is refused rather than read as "unset": an empty --data-dir would otherwise
  // put the journal in the working directory.
  const pick = (flag: string, envName: string): string | undefined => {
    const value = flags[flag];
    if (value === true || value === '') throw new ConfigError(`--${flag} needs a value`);
    if (value === undefined && env[envName] === '') throw new ConfigError(`${envName} is set but empty`);
    return value ?? env[envName];
  };
  const file = pick('config', 'CONFIG_FILE');
  const markets: MarketsFile = file ? readMarketsFile(file) : DEFAULT_MARKETS;
  return buildConfig(markets, {
    host: pick('host', 'HOST') ?? '0.0.0.0',
    port: integerSetting(pick('port', 'PORT'), 8080, 'port', 0, 65535),
    adminPort: integerSetting(pick('admin-port', 'ADMIN_PORT'), 8081, 'admin port', 0, 65535),
    dataDir: resolve(pick('data-dir', 'DATA_DIR') ?? './data'),
    frontThreads: integerSetting(pick('front-threads', 'FRONT_THREADS'), 2, 'front threads', 1, 64),
    historyThreads: integerSetting(pick('history-threads', 'HISTORY_THREADS'), DEFAULT_HISTORY_THREADS, 'history threads per front thread', 0, 16),
    speedBumpMs: integerSetting(pick('speed-bump-ms', 'SPEED_BUMP_MS'), 100, 'speed bump (ms)', 0, 60_000),
    demoAccounts: flags['no-demo'] !== true && envSwitch(env, 'DEMO_ACCOUNTS'),
    inboundSlotCount: integerSetting(pick('inbound-slots', 'INBOUND_SLOTS'), 4096, 'inbound slots', 2, 1 << 20),
    outboundSlotCount: integerSetting(pick('outbound-slots', 'OUTBOUND_SLOTS'), 65536, 'outbound slots', 2, 1 << 22),
    // Durability
    snapshotEvery: integerSetting(pick('snapshot-every', 'SNAPSHOT_EVERY'), DEFAULT_SNAPSHOT_EVERY, 'snapshot interval (commands)', 0, Number.MAX_SAFE_INTEGER),
    snapshotKeep: integerSetting(pick('snapshot-keep', 'SNAPSHOT_KEEP'), DEFAULT_SNAPSHOT_KEEP, 'snapshots kept', 1, 1000),
    compactJournal: flags['no-compact'] !== true && envSwitch(env, 'COMPACT_JOURNAL'),
    // uWS counts idle time in 4-second steps; under 8 s it would not ping first.
    wsIdleTimeoutS: integerSetting(pick('ws-idle-timeout-s', 'WS_IDLE_TIMEOUT_S'), DEFAULT_WS_IDLE_TIMEOUT_S, 'WebSocket idle timeout (s)', 8, 900),
    stallTimeoutMs: integerSetting(pick('stall-timeout-ms', 'STALL_TIMEOUT_MS'), DEFAULT_STALL_TIMEOUT_MS, 'stall timeout (ms)', 1000, 600_000),
    shutdownTimeoutMs: integerSetting(pick('shutdown-timeout-ms', 'SHUTDOWN_TIMEOUT_MS'), DEFAULT_SHUTDOWN_TIMEOUT_MS, 'shutdown timeout (ms)', 1000, 600_000),
    twoFactorMaxFailures: integerSetting(pick('two-factor-max-failures', 'TWO_FACTOR_MAX_FAILURES'), DEFAULT_TWO_FACTOR_MAX_FAILURES, 'two-factor wrong codes before a lockout', 1, 1000),
    twoFactorLockoutS: integerSetting(pick('two-factor-lockout-s', 'TWO_FACTOR_LOCKOUT_S'), DEFAULT_TWO_FACTOR_LOCKOUT_S, 'two-factor lockout (s)', 1, 7 * 86_400),
    rateLimits: rateLimitSettings(pick),
    metrics: flags['no-metrics'] !== true && envSwitch(env, 'METRICS'),
    indexMaxAgeMs: integerSetting(pick('index-max-age-ms', 'INDEX_MAX_AGE_MS'), DEFAULT_INDEX_MAX_AGE_MS, 'index maximum age (ms)', 1000, 86_400_000),
    indexDefault: flags['no-index-default'] !== true && envSwitch(env, 'INDEX_DEFAULT'),
    indexDefaultIntervalMs: integerSetting(pick('index-default-interval-ms', 'INDEX_DEFAULT_INTERVAL_MS'), DEFAULT_INDEX_DEFAULT_INTERVAL_MS, 'index default interval (ms)', 100, 3_600_000),
    realizePnlIntervalMs: integerSetting(pick('realize-pnl-interval-ms', 'REALIZE_PNL_INTERVAL_MS'), DEFAULT_REALIZE_PNL_INTERVAL_MS, 'PnL realization interval (ms)', 0, 86_400_000),
    realizeStepPositions: integerSetting(pick('realize-step-positions', 'REALIZE_STEP_POSITIONS'), DEFAULT_REALIZE_STEP_POSITIONS, 'positions per realization step', 0, 1_000_000),
    fundingStepPositions: integerSetting(pick('funding-step-positions', 'FUNDING_STEP_POSITIONS'), DEFAULT_FUNDING_STEP_POSITIONS, 'holders per funding step', 0, 1_000_000),
    interestStepAccounts: integerSetting(pick('interest-step-accounts', 'INTEREST_STEP_ACCOUNTS'), DEFAULT_INTEREST_STEP_ACCOUNTS, 'accounts per interest step', 0, 1_000_000),
    ...autoCloseFlags(pick),
    positionLimit: pick('position-limit', 'POSITION_LIMIT'),
  });
}

type Settings = Omit<ServerConfig, 'assets' | 'markets' | 'engine' | 'margin'>;

/**
 * The guarded reference settings of the markets file, in engine units; only those given, so that
 * a configuration without them keeps its fingerprint (the engine applies the same defaults).
 */
function referenceSettings(file: MarketsFile): Pick<EngineConfig, 'referenceStepBps' | 'referenceIntervalUs'> {
  const out: Pick<EngineConfig, 'referenceStepBps' | 'referenceIntervalUs'> = {};
  const step = file.referenceStepBps;
  if (step !== undefined) {
    if (!(Number.isInteger(step) && step >= 1 && step <= 10_000)) throw new ConfigError('referenceStepBps must be an integer from 1 to 10000');
    out.referenceStepBps = step;
  }
  const interval = file.referenceIntervalMs;
  if (interval !== undefined) {
    if (!(Number.isInteger(interval) && interval >= 1 && interval <= 86_400_000)) throw new ConfigError('referenceIntervalMs must be an integer from 1 to 86400000');
    out.referenceIntervalUs = interval * 1000;
  }
  return out;
}

/**
 * The platform's maximum leverage in hundredths, only when the markets file names it, so that a
 * configuration without it keeps its fingerprint (the engine applies the same default).
 */
function leverageSettings(file: MarketsFile): Pick<EngineConfig, 'maxLeverageHundredths'> {
  if (file.maxLeverage === undefined) return {};
  const hundredths = typeof file.maxLeverage === 'string' ? parseDecimal(file.maxLeverage, 2) : -1;
  if (!(hundredths >= LEVERAGE_HUNDREDTHS_PER_UNIT && hundredths <= MAX_CONFIGURABLE_LEVERAGE_HUNDREDTHS)) {
    throw new ConfigError('maxLeverage must be a decimal string from 1 to 1000 with at most 2 decimals');
  }
  return { maxLeverageHundredths: hundredths };
}

/**
 * The margin parameters the engine applies, when some asset has a pool (valued in USDC, which must
 * then be configured), with the hour's pass over the lenders and borrowers in steps (a step of 0
 * runs the whole hour in one command: no interestStepAccounts); none otherwise, so a
 * configuration without pools keeps its fingerprint.
 */
function engineMargin(margin: MarginParams, assets: readonly AssetConfig[], settings: Settings): Pick<EngineConfig, 'margin' | 'interestStepAccounts'> {
  if (margin.lendPools.length === 0) return {};
  const valuationAssetId = assets.findIndex((a) => a.symbol === 'USDC');
  if (valuationAssetId < 0) throw new ConfigError('borrow/lend pools need a USDC asset to value collateral in');
  const step = settings.interestStepAccounts ?? DEFAULT_INTEREST_STEP_ACCOUNTS;
  return {
    margin: { valuationAssetId, collateral: margin.collateral.map((c) => c.spec), lendPools: margin.lendPools.map((p) => p.spec) },
    ...(step > 0 ? { interestStepAccounts: step } : {}),
  };
}

export function buildConfig(file: MarketsFile, settings: Settings): ServerConfig {
  if (!isObject(file) || !Array.isArray(file.assets) || !Array.isArray(file.markets)) {
    throw new ConfigError('the markets file needs "assets" and "markets" arrays');
  }
  for (const key of Object.keys(file)) {
    if (!MARKETS_FILE_KEYS.has(key)) throw new ConfigError(`the markets file has an unknown key "${key}" (known: ${[...MARKETS_FILE_KEYS].join(', ')})`);
  }
  // uWebSockets.js listens with SO_REUSEPORT, so the public and the admin app would both take one
  // port and the kernel would hand each connection to either: operator routes on the public side.
  if (settings.port !== 0 && settings.port === settings.adminPort) {
    throw new ConfigError(`the public port and the admin port must differ (both ${settings.port})`);
  }
  for (const count of [settings.inboundSlotCount, settings.outboundSlotCount]) {
    if ((count & (count - 1)) !== 0) throw new ConfigError(`ring slot counts must be powers of two (${count})`);
  }
  validateAssets(file.assets);
  const margin = buildMarginParams(file.assets, (message) => new ConfigError(message));
  const indexUpdateBounds = buildIndexUpdateBounds(file.assets, (message) => new ConfigError(message));
  validateLimits(file.limits);
  for (const name of ['makerFeeBps', 'takerFeeBps', 'futuresMakerFeeBps', 'futuresTakerFeeBps'] as const) {
    const bps = file[name];
    if (bps !== undefined && !(Number.isInteger(bps) && bps >= 0 && bps <= 10_000)) {
      throw new ConfigError(`${name} must be an integer number of basis points from 0 to 10000`);
    }
  }
  const symbols = new Set<string>();
  const markets = file.markets.map((m, index) => {
    validateMarketShape(m, index);
    if (symbols.has(m.symbol)) throw new ConfigError(`market ${m.symbol} is listed twice`);
    symbols.add(m.symbol);
    return buildMarket(m, index, file.assets, {
      makerFeeBps: file.futuresMakerFeeBps ?? DEFAULT_FUTURES_FEES.makerFeeBps,
      takerFeeBps: file.futuresTakerFeeBps ?? DEFAULT_FUTURES_FEES.takerFeeBps,
    });
  });
  const assets: AssetSpec[] = file.assets.map((a, assetId) => ({ assetId, symbol: a.symbol, decimals: a.decimals }));
  const engineMarginParams = engineMargin(margin, file.assets, settings);
  const perp = markets.find((m) => m.spec.perp !== undefined);
  if (perp !== undefined && engineMarginParams.margin === undefined) {
    throw new ConfigError(`market ${perp.symbol}: a perpetual needs margin parameters (an asset with a borrowLend pool, valued in USDC)`);
  }
  // The Auto-Close settings are inputs only: the engine's configuration carries what they resolve to.
  const { autoCloseMfDivisor: _divisor, autoCloseMfOffset: _offset, ...served } = settings;
  return {
    ...served,
    positionLimit: settings.positionLimit ?? file.positionLimit ?? DEFAULT_POSITION_LIMIT,
    assets: file.assets,
    markets,
    margin,
    engine: {
      assets,
      markets: markets.map((m) => m.spec),
      limits: { ...DEFAULT_LIMITS, ...(file.limits ?? {}) },
      speedBumpUs: settings.speedBumpMs * 1000,
      // Fixed so that replaying a journal reproduces the same order ids; it hides the order
      // sequence from clients, it is not a security boundary.
      orderIdKey: 0x2f7d397d,
      makerFeeBps: file.makerFeeBps ?? DEFAULT_FEES.makerFeeBps,
      takerFeeBps: file.takerFeeBps ?? DEFAULT_FEES.takerFeeBps,
      ...referenceSettings(file),
      ...indexSettings(settings),
      ...perpPassSettings(settings, markets),
      ...liquidationSettings(file, settings),
      ...positionLimitSettings(file, settings, markets),
      ...leverageSettings(file),
      ...engineMarginParams,
      ...(indexUpdateBounds.length > 0 ? { indexUpdateBounds } : {}),
    },
  };
}

/** The Auto-Close margin fraction's settings a flag or the environment gives (each absent when neither does). */
function autoCloseFlags(pick: PickSetting): Pick<Settings, 'autoCloseMfDivisor' | 'autoCloseMfOffset'> {
  const divisor = pick('auto-close-mf-divisor', 'AUTO_CLOSE_MF_DIVISOR');
  const offset = pick('auto-close-mf-offset', 'AUTO_CLOSE_MF_OFFSET');
  return {
    ...(divisor === undefined ? {} : { autoCloseMfDivisor: integerSetting(divisor, DEFAULT_AUTO_CLOSE_DIVISOR, 'Auto-Close MF divisor', 1, 1000) }),
    ...(offset === undefined ? {} : { autoCloseMfOffset: offset }),
  };
}

/**
 * The liquidation settings in engine units: the Auto-Close margin fraction's divisor and offset
 * (a flag or environment variable over the markets file over the defaults), only when one is off
 * its default, so that a configuration at the defaults keeps its fingerprint.
 */
function liquidationSettings(file: MarketsFile, settings: Settings): Pick<EngineConfig, 'liquidation'> {
  const divisor = settings.autoCloseMfDivisor ?? file.autoCloseMfDivisor ?? DEFAULT_AUTO_CLOSE_DIVISOR;
  if (!(Number.isInteger(divisor) && divisor >= 1 && divisor <= 1000)) throw new ConfigError('autoCloseMfDivisor must be a whole number from 1 to 1000');
  const offsetText = settings.autoCloseMfOffset ?? file.autoCloseMfOffset;
  const offsetE12 = offsetText === undefined ? DEFAULT_AUTO_CLOSE_OFFSET_E12 : typeof offsetText === 'string' ? parseDecimal(offsetText, 12) : -1;
  if (!(offsetE12 >= 0 && offsetE12 <= 1_000_000_000_000)) throw new ConfigError('autoCloseMfOffset must be a decimal string from 0 to 1 with at most 12 decimals');
  if (divisor === DEFAULT_AUTO_CLOSE_DIVISOR && offsetE12 === DEFAULT_AUTO_CLOSE_OFFSET_E12) return {};
  return { liquidation: { ...DEFAULT_LIQUIDATION, autoCloseDivisor: divisor, autoCloseOffsetE12: offsetE12 } };
}

/**
 * The perpetuals' passes over their positions, only with perpetuals (so that a configuration
 * without them keeps its fingerprint): the realization interval in engine units and its step, when
 * on (0 is off: PnL is realized when a position reduces), and the funding pass's step; a step of 0
 * runs each pass in one command (no realizeStepPositions or fundingStepPositions).
 */
function perpPassSettings(settings: Settings, markets: readonly MarketInfo[]): Pick<EngineConfig, 'realizePnlIntervalUs' | 'realizeStepPositions' | 'fundingStepPositions'> {
  if (!markets.some((m) => m.spec.perp !== undefined)) return {};
  const ms = settings.realizePnlIntervalMs ?? DEFAULT_REALIZE_PNL_INTERVAL_MS;
  const realizeStep = settings.realizeStepPositions ?? DEFAULT_REALIZE_STEP_POSITIONS;
  const fundingStep = settings.fundingStepPositions ?? DEFAULT_FUNDING_STEP_POSITIONS;
  return {
    ...(ms > 0 ? { realizePnlIntervalUs: ms * 1000 } : {}),
    ...(ms > 0 && realizeStep > 0 ? { realizeStepPositions: realizeStep } : {}),
    ...(fundingStep > 0 ? { fundingStepPositions: fundingStep } : {}),
  };
}

/**
 * Every account's position limit in USDC units, only with perpetuals (settled in USDC), so that a
 * configuration without perpetuals keeps its fingerprint: the flag or environment's, else the
 * markets file's, else DEFAULT_POSITION_LIMIT.
 */
function positionLimitSettings(file: MarketsFile, settings: Settings, markets: readonly MarketInfo[]): Pick<EngineConfig, 'positionLimitUnits'> {
  const text = settings.positionLimit ?? file.positionLimit ?? DEFAULT_POSITION_LIMIT;
  if (typeof text !== 'string') throw new ConfigError('positionLimit must be a decimal string of USDC');
  const usdc = file.assets.find((a) => a.symbol === 'USDC');
  if (usdc === undefined) return {}; // no perpetual without USDC (perp-config.ts)
  const units = toUnits(text, usdc.decimals, 'position limit (USDC)');
  if (units > BigInt(Number.MAX_SAFE_INTEGER)) throw new ConfigError('position limit (USDC) exceeds the safe-integer range of USDC units');
  return markets.some((m) => m.spec.perp !== undefined) ? { positionLimitUnits: Number(units) } : {};
}

/**
 * The index maximum age in engine units, only when it is not the engine's default, so that a
 * configuration at the default keeps the fingerprint journals written before it recorded. A
 * default index refreshed less often than that age would leave its prices stale between updates.
 */
function indexSettings(settings: Settings): Pick<EngineConfig, 'indexMaxAgeUs'> {
  const maxAgeMs = settings.indexMaxAgeMs ?? DEFAULT_INDEX_MAX_AGE_MS;
  const intervalMs = settings.indexDefaultIntervalMs ?? DEFAULT_INDEX_DEFAULT_INTERVAL_MS;
  if (settings.indexDefault !== false && intervalMs >= maxAgeMs) {
    throw new ConfigError(`the index default interval (${intervalMs} ms) must be shorter than the index maximum age (${maxAgeMs} ms)`);
  }
  return maxAgeMs === DEFAULT_INDEX_MAX_AGE_MS ? {} : { indexMaxAgeUs: maxAgeMs * 1000 };
}
