// The assets and markets the engine trades, checked once at construction.
//
// Commands name assets and markets by their 16-bit ids; the core works on dense indices so that
// balances and books live in flat typed arrays. This file owns that mapping and refuses, before
// any command runs, a configuration the engine could not handle exactly: a market whose largest
// order's notional (maxPriceTicks × maxQtyLots × quoteUnitsPerTickLot) or base amount
// (maxQtyLots × baseUnitsPerLot) could leave the safe-integer range, non-integer or non-positive
// grid constants, a price band that is half given, below 1× above or above 1× below, or whose
// maxPriceTicks × maxMultiplierBps could leave the safe-integer range, a dust payout cap that is
// not a positive safe integer, a market kind the engine does not trade, duplicate ids, fee rates outside 0–10000 basis points, a guarded
// reference step outside 1–10000 basis points or an interval that is not positive, an index maximum age
// that is not positive, or limits
// that are not positive integers. Configuration errors
// throw: they are operator mistakes found at start-up, not client input.
//
// Perpetual markets (MarketKind.Perp) need margin parameters whose valuation asset is the
// market's quote (USDC) and a PerpSpec with sane margin functions, funding bounds and fees. A
// perp's base asset is its underlying: it names the asset whose index price prices the perp and
// whose decimals measure a lot (baseUnitsPerLot), but a perp market never holds it: nobody
// deposits "SOL_USDC_PERP", its fills move only USDC and positions (perp/), and baseIndexOf of
// a perp market is never a ledger cell any rule moves. The rooms that walk markets to find an
// asset's USDC book (margin/mark.ts, funds/risk.ts, dust conversion) ask isSpot first.

import { MarketKind, POSITION_LIMIT_WEIGHT_ONE, type AssetSpec, type EngineConfig, type MarketSpec } from '../bus/types.js';
import { DEFAULT_REFERENCE_INTERVAL_US, DEFAULT_REFERENCE_STEP_BPS } from './book/reference.js';
import { expectSnapshot, type SnapshotReader, type SnapshotWriter, type StateDigest } from './parts.js';

/** The QueryOpenOrders market id meaning "every market". */
export const MARKET_ID_ALL = 0xffff;

const ID_SPACE = 0x10000;

/** Dust payout cap of a market that names none: this many whole units of its quote asset. */
export const DEFAULT_DUST_MAX_PAYOUT_WHOLE = 10n;

/** Refuses a configuration the engine cannot run exactly (an operator error, found at start-up). */
function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(`engine configuration: ${message}`);
}

function positiveInteger(value: number, what: string): void {
  check(Number.isSafeInteger(value) && value > 0, `${what} must be a positive safe integer`);
}

function checkMarket(market: MarketSpec, indexOfAsset: Int32Array): void {
  const name = `market ${market.symbol}`;
  check(Number.isInteger(market.marketId) && market.marketId >= 0 && market.marketId < MARKET_ID_ALL, `${name}: id out of range`);
  check(indexOfAsset[market.baseAssetId] >= 0 && indexOfAsset[market.quoteAssetId] >= 0, `${name}: unknown asset`);
  check(market.baseAssetId !== market.quoteAssetId, `${name}: base and quote are the same asset`);
  positiveInteger(market.baseUnitsPerLot, `${name} baseUnitsPerLot`);
  positiveInteger(market.quoteUnitsPerTickLot, `${name} quoteUnitsPerTickLot`);
  positiveInteger(market.minPriceTicks, `${name} minPriceTicks`);
  positiveInteger(market.maxPriceTicks, `${name} maxPriceTicks`);
  positiveInteger(market.minQtyLots, `${name} minQtyLots`);
  positiveInteger(market.maxQtyLots, `${name} maxQtyLots`);
  check(market.minPriceTicks <= market.maxPriceTicks, `${name}: minPriceTicks > maxPriceTicks`);
  check(market.minQtyLots <= market.maxQtyLots, `${name}: minQtyLots > maxQtyLots`);
  const maxSafe = BigInt(Number.MAX_SAFE_INTEGER);
  const notional = BigInt(market.maxPriceTicks) * BigInt(market.maxQtyLots) * BigInt(market.quoteUnitsPerTickLot);
  check(notional <= maxSafe, `${name}: largest notional leaves the safe-integer range`);
  check(BigInt(market.maxQtyLots) * BigInt(market.baseUnitsPerLot) <= maxSafe, `${name}: largest base amount leaves the safe-integer range`);
  const { maxMultiplierBps, minMultiplierBps } = market;
  check((maxMultiplierBps === undefined) === (minMultiplierBps === undefined), `${name}: give both price band multipliers or neither`);
  if (maxMultiplierBps !== undefined && minMultiplierBps !== undefined) {
    check(Number.isSafeInteger(maxMultiplierBps) && maxMultiplierBps >= 10_000, `${name}: maxMultiplierBps must be an integer ≥ 10000`);
    check(Number.isSafeInteger(minMultiplierBps) && minMultiplierBps >= 0 && minMultiplierBps <= 10_000, `${name}: minMultiplierBps must be an integer from 0 to 10000`);
    check(BigInt(market.maxPriceTicks) * BigInt(maxMultiplierBps) <= maxSafe, `${name}: maxPriceTicks × maxMultiplierBps leaves the safe-integer range`);
  }
  if (market.dustMaxPayoutUnits !== undefined) positiveInteger(market.dustMaxPayoutUnits, `${name} dustMaxPayoutUnits`);
  check(market.kind === undefined || market.kind === MarketKind.Spot || market.kind === MarketKind.Perp, `${name}: unknown market kind`);
  check((market.kind === MarketKind.Perp) === (market.perp !== undefined), `${name}: a perpetual market needs its perp parameters, and only it`);
}

/** A perpetual market's parameters, and the margin valuation in its quote asset they rest on. */
function checkPerp(market: MarketSpec, config: EngineConfig): void {
  const perp = market.perp;
  if (perp === undefined) return;
  const name = `market ${market.symbol}`;
  check(config.margin !== undefined && config.margin.valuationAssetId === market.quoteAssetId, `${name}: a perpetual is settled in the margin valuation asset, which must be its quote`);
  for (const f of [perp.imf, perp.mmf]) {
    check(typeof f.base === 'bigint' && typeof f.factor === 'bigint' && f.base > 0n && f.factor >= 0n && f.base <= 10n ** 12n, `${name}: margin function out of range`);
  }
  check(perp.mmf.base <= perp.imf.base, `${name}: mmf base above imf base`);
  positiveInteger(perp.fundingIntervalMs, `${name} fundingIntervalMs`);
  check(Number.isInteger(perp.fundingRateLowerBoundBps) && Number.isInteger(perp.fundingRateUpperBoundBps)
    && perp.fundingRateLowerBoundBps <= perp.fundingRateUpperBoundBps && Math.abs(perp.fundingRateLowerBoundBps) <= 10_000
    && Math.abs(perp.fundingRateUpperBoundBps) <= 10_000, `${name}: funding rate bounds must be integers within ±10000 bps, lower ≤ upper`);
  check(Number.isSafeInteger(perp.openInterestLimitUnits) && perp.openInterestLimitUnits >= 0, `${name}: openInterestLimitUnits must be a non-negative safe integer`);
  for (const bps of [perp.makerFeeBps, perp.takerFeeBps]) {
    check(Number.isInteger(bps) && bps >= 0 && bps <= 10_000, `${name}: futures fee rates must be integers from 0 to 10000 bps`);
  }
  const weight = perp.positionLimitWeight;
  check(weight === undefined || (typeof weight === 'bigint' && weight >= 0n && weight <= MAX_POSITION_LIMIT_WEIGHT), `${name}: positionLimitWeight must be from 0 to 1000 (at 10^-12)`);
}

/** The largest weight a market may name: 1000. */
const MAX_POSITION_LIMIT_WEIGHT = 1000n * POSITION_LIMIT_WEIGHT_ONE;

/** The configured dust cap, or DEFAULT_DUST_MAX_PAYOUT_WHOLE whole quote units (at most 2^53 − 1). */
function dustCapOf(market: MarketSpec, quote: AssetSpec): number {
  if (market.dustMaxPayoutUnits !== undefined) return market.dustMaxPayoutUnits;
  const decimals = Number.isInteger(quote.decimals) && quote.decimals >= 0 ? Math.min(quote.decimals, 30) : 0;
  const units = DEFAULT_DUST_MAX_PAYOUT_WHOLE * 10n ** BigInt(decimals);
  return Number(units < BigInt(Number.MAX_SAFE_INTEGER) ? units : BigInt(Number.MAX_SAFE_INTEGER));
}

export class Catalog {
  readonly assetCount: number;
  readonly marketCount: number;
  /** Asset id by asset index, in configuration order. */
  readonly assetIdOf: Uint16Array;
  /** Market spec by market index, in configuration order. */
  readonly markets: readonly MarketSpec[];
  /** Base and quote asset indices by market index. */
  readonly baseIndexOf: Int32Array;
  readonly quoteIndexOf: Int32Array;
  /** Most one dust conversion pays, in quote units, by market index. */
  readonly dustMaxPayoutUnitsOf: Float64Array;
  /** What each market trades (MarketKind, Spot when the spec names none), by market index. */
  readonly kindOf: Uint8Array;
  /** Each market's weight in the position limit at 10^-12 (1 when it names none; spot markets count nothing). */
  readonly positionLimitWeightOf: bigint[];
  /** Every account's position limit in quote units of the perpetuals (USDC); -1: none (perp/position-limit.ts). */
  readonly positionLimitUnits: number;
  /** Guarded reference: step in basis points and interval in engine µs (reference.ts). */
  readonly referenceStepBps: number;
  readonly referenceIntervalUs: number;
  private readonly assetIndexById = new Int32Array(ID_SPACE).fill(-1);
  private readonly marketIndexById = new Int32Array(ID_SPACE).fill(-1);

  constructor(config: EngineConfig) {
    const { limits } = config;
    positiveInteger(limits.maxAccounts, 'maxAccounts');
    positiveInteger(limits.maxOpenOrdersPerAccount, 'maxOpenOrdersPerAccount');
    positiveInteger(limits.maxOrdersPerBook, 'maxOrdersPerBook');
    positiveInteger(limits.maxPriceLevelsPerSide, 'maxPriceLevelsPerSide');
    check(limits.maxAccounts < 0x7fffffff, 'maxAccounts must fit a 31-bit account id');
    check(Number.isSafeInteger(config.speedBumpUs) && config.speedBumpUs >= 0, 'speedBumpUs must be a non-negative integer');
    check(Number.isSafeInteger(config.orderIdKey), 'orderIdKey must be an integer');
    for (const [name, bps] of [['makerFeeBps', config.makerFeeBps ?? 0], ['takerFeeBps', config.takerFeeBps ?? 0]] as const) {
      check(Number.isInteger(bps) && bps >= 0 && bps <= 10_000, `${name} must be an integer from 0 to 10000`);
    }
    this.referenceStepBps = config.referenceStepBps ?? DEFAULT_REFERENCE_STEP_BPS;
    this.referenceIntervalUs = config.referenceIntervalUs ?? DEFAULT_REFERENCE_INTERVAL_US;
    check(Number.isInteger(this.referenceStepBps) && this.referenceStepBps >= 1 && this.referenceStepBps <= 10_000, 'referenceStepBps must be an integer from 1 to 10000');
    positiveInteger(this.referenceIntervalUs, 'referenceIntervalUs');
    if (config.indexMaxAgeUs !== undefined) positiveInteger(config.indexMaxAgeUs, 'indexMaxAgeUs');
    if (config.realizePnlIntervalUs !== undefined) positiveInteger(config.realizePnlIntervalUs, 'realizePnlIntervalUs');
    if (config.fundingStepPositions !== undefined) {
      check(config.markets.some((m) => m.kind === MarketKind.Perp), 'fundingStepPositions needs a perpetual market');
      check(Number.isInteger(config.fundingStepPositions) && config.fundingStepPositions >= 1 && config.fundingStepPositions <= 1_000_000, 'fundingStepPositions must be an integer from 1 to 1000000');
    }
    if (config.interestStepAccounts !== undefined) {
      check(config.margin !== undefined, 'interestStepAccounts needs margin parameters');
      check(Number.isInteger(config.interestStepAccounts) && config.interestStepAccounts >= 1 && config.interestStepAccounts <= 1_000_000, 'interestStepAccounts must be an integer from 1 to 1000000');
    }
    if (config.realizeStepPositions !== undefined) {
      check(config.realizePnlIntervalUs !== undefined, 'realizeStepPositions needs realizePnlIntervalUs');
      check(Number.isInteger(config.realizeStepPositions) && config.realizeStepPositions >= 1 && config.realizeStepPositions <= 1_000_000, 'realizeStepPositions must be an integer from 1 to 1000000');
    }
    const limit = config.positionLimitUnits;
    check(limit === undefined || (Number.isSafeInteger(limit) && limit >= 0), 'positionLimitUnits must be a non-negative safe integer');
    this.positionLimitUnits = limit ?? -1;
    this.assetCount = config.assets.length;
    this.marketCount = config.markets.length;
    this.assetIdOf = new Uint16Array(this.assetCount);
    config.assets.forEach((asset, index) => {
      check(Number.isInteger(asset.assetId) && asset.assetId >= 0 && asset.assetId < ID_SPACE, `asset ${asset.symbol}: id out of range`);
      check(this.assetIndexById[asset.assetId] < 0, `asset id ${asset.assetId} listed twice`);
      this.assetIndexById[asset.assetId] = index;
      this.assetIdOf[index] = asset.assetId;
    });
    this.markets = config.markets.map((market) => ({ ...market }));
    this.baseIndexOf = new Int32Array(this.marketCount);
    this.quoteIndexOf = new Int32Array(this.marketCount);
    this.dustMaxPayoutUnitsOf = new Float64Array(this.marketCount);
    this.kindOf = new Uint8Array(this.marketCount);
    this.markets.forEach((market, index) => {
      checkMarket(market, this.assetIndexById);
      checkPerp(market, config);
      check(this.marketIndexById[market.marketId] < 0, `market id ${market.marketId} listed twice`);
      this.marketIndexById[market.marketId] = index;
      this.baseIndexOf[index] = this.assetIndexById[market.baseAssetId];
      this.quoteIndexOf[index] = this.assetIndexById[market.quoteAssetId];
      this.dustMaxPayoutUnitsOf[index] = dustCapOf(market, config.assets[this.quoteIndexOf[index]]);
      this.kindOf[index] = market.kind ?? MarketKind.Spot;
    });
    this.positionLimitWeightOf = this.markets.map((market) => (market.perp === undefined ? 0n : (market.perp.positionLimitWeight ?? POSITION_LIMIT_WEIGHT_ONE)));
  }

  /** Whether the market at `marketIndex` is a spot book (its base asset is held and traded). */
  isSpot(marketIndex: number): boolean {
    return this.kindOf[marketIndex] === MarketKind.Spot;
  }

  /** Spot markets: their count is what the state hash has always covered (perp markets hash with positions). */
  get spotMarketCount(): number {
    let count = 0;
    for (let m = 0; m < this.marketCount; m++) if (this.isSpot(m)) count++;
    return count;
  }

  /** Index of an asset id, or -1 when the id is not configured (or not an integer id). */
  assetIndex(assetId: number): number {
    return Number.isInteger(assetId) && assetId >= 0 && assetId < ID_SPACE ? this.assetIndexById[assetId] : -1;
  }

  /** Index of a market id, or -1 when the id is not configured (or not an integer id). */
  marketIndex(marketId: number): number {
    return Number.isInteger(marketId) && marketId >= 0 && marketId < ID_SPACE ? this.marketIndexById[marketId] : -1;
  }

  /**
   * Markets the imported snapshot describes: all of them, or (a state moved from a configuration
   * before its perpetual markets, engine/shell/journal.ts) the spot markets before them; the books
   * past it start fresh.
   */
  snapshotMarketCount = 0;

  /** Snapshot: asset and market counts (an import checks them against this configuration). */
  exportTo(w: SnapshotWriter): void {
    w.number(this.assetCount);
    w.number(this.marketCount);
  }

  importFrom(r: SnapshotReader): void {
    expectSnapshot(r.number() === this.assetCount, 'asset count differs from the configuration');
    const markets = r.number();
    let onlyPerpsAfter = markets >= 0 && markets <= this.marketCount;
    for (let m = Math.max(0, markets); onlyPerpsAfter && m < this.marketCount; m++) onlyPerpsAfter = !this.isSpot(m);
    expectSnapshot(onlyPerpsAfter, 'market count differs from the configuration');
    this.snapshotMarketCount = markets;
  }

  /** Asset and spot market counts (perpetual markets hash with their books and positions, once used). */
  hashInto(d: StateDigest): void {
    d.number(this.assetCount);
    d.number(this.spotMarketCount);
  }
}
