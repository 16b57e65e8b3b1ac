// Plain, reusable in-memory forms of the schema's structs (schemas/exchange.fbs).
//
// Each interface mirrors one FlatBuffers struct field for field (camelCase names, 64-bit fields as
// JavaScript numbers inside the safe-integer range). engine/bus/codec.ts moves them to and from ring
// and journal bytes; the engine core reads a Command and encodes each record it writes straight
// into a RecordSink's bytes (a byte destination that names no record kind), reusing one object
// of each kind, so the hot path allocates nothing.
//
// Units are in the names: *Ticks are price ticks, *Lots quantity lots, *Units smallest units of an
// asset, *Us engine microseconds.
//
// These shapes are part of the thread contract (engine/bus), not of the engine core: the front
// threads fill commands and read records, the engine core and its shell apply and write them, the
// journal stores them, and src/main.ts hands the EngineConfig to the engine worker at start.

import type { EngineMarginConfig, MarginFunctionSpec } from './margin-params.js';
import { SystemOrderType } from '../../schemas/generated/exchange/schema.js';

export {
  CommandKind,
  Side,
  OrderType,
  TimeInForce,
  SelfTradePrevention,
  TriggerBy,
  SlippageToleranceType,
  OrderStatus,
  ExpiryReason,
  OrderEvent,
  ResultCode,
  RecordType,
  // Order book states
  OrderBookState,
  // The whole exchange's state (maintenance)
  SystemState,
  // Margin: where an index price came from
  IndexPriceSource,
  // Margin: borrow/lend
  BorrowLendSide,
  BorrowLendEvent,
  BorrowLendSource,
  LendPoolState as LendPoolStateCode,
  // Perpetuals: where a mark price came from
  MarkPriceSource,
  // Liquidation: who placed a system order
  SystemOrderType,
  // Perpetuals: what changed a position
  PositionEvent,
} from '../../schemas/generated/exchange/schema.js';

// The record interfaces, the RecordSink, the command header and payloads with newCommand,
// resetCommand and the typed constructors fillX are generated from the schema (schemas/gen.mjs),
// as is the kind table (which commands mutate, what answers them, the size tables, the enum name
// tables).
export type * from './generated/records.js';
export * from './generated/records.js';
export * from './generated/kinds.js';

/** CommandSlot.flags bits. */
export const CommandFlag = {
  PostOnly: 1,
  ReduceOnly: 2,
  HasClientId: 4,
  AutoLend: 8,
  AutoLendRedeem: 16,
  AutoBorrow: 32,
  AutoBorrowRepay: 64,
} as const;

/** OrderRecord.flags bits. */
export const OrderFlag = {
  PostOnly: 1,
  ReduceOnly: 2,
  HasClientId: 4,
  IsMaker: 8,
  /** Spot margin: a fill's proceeds are lent (engine/core/margin/auto-funding.ts). */
  AutoLend: 16,
  /** Spot margin: a fill's proceeds repay the account's borrow of the received asset. */
  AutoBorrowRepay: 32,
  /** A system order of the liquidation waterfall (SystemOrderType LiquidatePositionOnBook; engine/core/liquidation/unwind.ts). */
  Liquidation: 64,
  /**
   * With Liquidation: an auto-deleveraging order (SystemOrderType LiquidatePositionOnAdl;
   * engine/core/liquidation/adl.ts), of the bankrupt account or of a counterparty it closes against.
   * Without Liquidation: a backstop order (SystemOrderType LiquidatePositionOnBackstop;
   * engine/core/liquidation/backstop.ts), of the liquidated account or of a provider. The flags are
   * a full byte that journals and stored histories already hold, so the backstop takes the one
   * combination no earlier version wrote rather than a wider field or another record kind: every
   * old record keeps its bytes and its meaning, and both off-book kinds share the bit that makes
   * a fill fee-free at the trading rate (perp/settle.ts).
   */
  Adl: 128,
} as const;

/** The system order type an order's flags mark (OrderFlag.Liquidation and Adl; a client's order: None). */
export function systemOrderTypeOf(flags: number): SystemOrderType {
  const liquidation = (flags & OrderFlag.Liquidation) !== 0;
  if ((flags & OrderFlag.Adl) !== 0) return liquidation ? SystemOrderType.LiquidatePositionOnAdl : SystemOrderType.LiquidatePositionOnBackstop;
  return liquidation ? SystemOrderType.LiquidatePositionOnBook : SystemOrderType.None;
}

/**
 * Bits of an account's settings (margin, engine/core/margin/account-settings.ts): the low byte of
 * UpdateAccountSettings' settings word names what changes (the three automation flags and
 * LeverageLimit), its next byte carries the new flags; AccountSettingsRecord.settings holds the
 * account's flags, Liquidating among them.
 */
export const AccountSettingFlag = {
  AutoBorrowSettlements: 1,
  AutoLend: 2,
  AutoRepayBorrows: 4,
  LeverageLimit: 8,
  Liquidating: 16,
} as const;

/** Hundredths of one unit of leverage: a leverage limit of 1× is 100 (UpdateAccountSettings). */
export const LEVERAGE_HUNDREDTHS_PER_UNIT = 100;
/** The platform's maximum leverage when the configuration names none (maxLeverageHundredths): 100×. */
export const DEFAULT_MAX_LEVERAGE_HUNDREDTHS = 100 * LEVERAGE_HUNDREDTHS_PER_UNIT;
/** The highest platform maximum a configuration may name: 1000×. */
export const MAX_CONFIGURABLE_LEVERAGE_HUNDREDTHS = 1000 * LEVERAGE_HUNDREDTHS_PER_UNIT;

/** RecordHeader.flags bits. */
export const HeaderFlag = {
  /** The last record of the response to one request. */
  Last: 1,
  // Durability
  /**
   * The last outbound record the engine wrote while applying one state-changing command (the
   * Stamped record itself when the command had no outputs): the journal worker closes that
   * command's output digest here. Excluded from the digest, set only by the engine shell.
   */
  CommandEnd: 2,
  /**
   * On a Trade: a fill off the book (a backstop fill, engine/core/liquidation/backstop.ts). Stored
   * and streamed as any trade, but left out of the market's candles (the venue's backstop fills
   * are not in K-lines).
   */
  OffBook: 4,
  /**
   * On an Order record addressed to a request: it is also a stream event (its `event` field), the
   * event its answer would otherwise repeat in a record of its own (engine/core/output.ts
   * eventsInAnswers). Every front thread delivers it as an event; the addressed one also answers.
   */
  Event: 8,
} as const;

/** RecordHeader.frontId of a record addressed to no request (a stream event). */
export const FRONT_ID_NONE = 0xffff;

/** The engine's view of one market: integers only, fixed at configuration time. */
/** What a market trades; it selects the market's hold and settle rules (engine/core/kinds.ts). */
export const MarketKind = { Spot: 0, Perp: 1 } as const;
export type MarketKind = (typeof MarketKind)[keyof typeof MarketKind];

/**
 * The parameters of a USDC-settled perpetual market (MarketKind.Perp), as the venue publishes them
 * (GET /api/v1/markets): the margin fractions of a position of notional N (max(base, factor·√N),
 * N in whole USDC), the funding interval and the bounds of one interval's rate in basis points,
 * the open interest limit in base units of the underlying, and the futures fee rates every
 * account pays on a fill, in basis points of its notional.
 */
/** A position's weight in its account's position limit when the market names none: 1 at 10^-12 (PerpSpec.positionLimitWeight). */
export const POSITION_LIMIT_WEIGHT_ONE = 10n ** 12n;

export interface PerpSpec {
  imf: MarginFunctionSpec;
  mmf: MarginFunctionSpec;
  fundingIntervalMs: number;
  fundingRateUpperBoundBps: number;
  fundingRateLowerBoundBps: number;
  openInterestLimitUnits: number;
  makerFeeBps: number;
  takerFeeBps: number;
  /**
   * The band around the index a mark price is clamped to, in basis points (engine/core/perp/
   * mark-price.ts); absent: 500 (5 %, the venue's example), and the configuration fingerprint
   * keeps its earlier form.
   */
  markPriceBandBps?: number;
  /**
   * The weight of a position's notional in its account's position limit (engine/core/perp/
   * position-limit.ts; the venue's positionLimitWeight), at 10^-12. Absent: 1 (10^12), and the
   * configuration fingerprint keeps its earlier form.
   */
  positionLimitWeight?: bigint;
}

export interface MarketSpec {
  marketId: number;
  /** Absent: Spot (and a spot market's kind stays out of the configuration fingerprint). */
  kind?: MarketKind;
  /**
   * A perpetual's parameters (present exactly when kind is Perp). Its base asset is the
   * underlying, never held: no ledger move of a perp market touches it (engine/core/catalog.ts).
   */
  perp?: PerpSpec;
  symbol: string;
  baseAssetId: number;
  quoteAssetId: number;
  /** Base-asset smallest units in one quantity lot. */
  baseUnitsPerLot: number;
  /** Quote-asset smallest units in one price tick times one lot (exact, checked at config). */
  quoteUnitsPerTickLot: number;
  minPriceTicks: number;
  maxPriceTicks: number;
  minQtyLots: number;
  maxQtyLots: number;
  /**
   * Price band, in basis points of the last trade price: a limit price above
   * last × maxMultiplierBps / 10000 or below last × minMultiplierBps / 10000 is refused
   * (PriceOutOfBand) once the market has traded. Both absent: the market has no band.
   */
  maxMultiplierBps?: number;
  minMultiplierBps?: number;
  /**
   * Most one dust conversion in this market pays, in quote units (a positive safe integer).
   * Absent: DEFAULT_DUST_MAX_PAYOUT_WHOLE whole units of the quote asset (engine/core/catalog.ts).
   */
  dustMaxPayoutUnits?: number;
}

export interface AssetSpec {
  assetId: number;
  symbol: string;
  decimals: number;
}

/**
 * Bounds on an asset's index price updates (venue mechanics §3.2): each update is capped at
 * prev × maxPriceUpdateMultiplier and floored at prev × minPriceUpdateMultiplier, multipliers in
 * 10^-12 (engine/core/margin/index-prices.ts). An absent multiplier does not bound.
 */
export interface IndexUpdateBounds {
  assetId: number;
  /** At least 1 (10^12). */
  maxPriceUpdateMultiplier?: bigint;
  /** Above 0 and at most 1 (10^12). */
  minPriceUpdateMultiplier?: bigint;
}

export interface EngineLimits {
  maxAccounts: number;
  maxOpenOrdersPerAccount: number;
  maxOrdersPerBook: number;
  maxPriceLevelsPerSide: number;
}

export interface EngineConfig {
  assets: AssetSpec[];
  markets: MarketSpec[];
  limits: EngineLimits;
  /** Delay of taker orders (every order without postOnly), in engine microseconds; 0 allowed. */
  speedBumpUs: number;
  /** Secret of the keyed permutation that turns order sequence numbers into opaque ids. */
  orderIdKey: number;
  /**
   * Default fee rates of a new account, in basis points of what the party receives (0 to 10000;
   * absent means 0). The maker rate applies to the resting order of a fill, the taker rate to the
   * incoming one.
   */
  makerFeeBps?: number;
  takerFeeBps?: number;
  /**
   * The guarded reference price of a banded market (engine/core/book/reference.ts) moves toward trade
   * prices by at most referenceStepBps basis points of itself (at least one tick) once per
   * referenceIntervalUs of engine time. Absent: DEFAULT_REFERENCE_STEP_BPS and
   * DEFAULT_REFERENCE_INTERVAL_US.
   */
  referenceStepBps?: number;
  referenceIntervalUs?: number;
  /**
   * An asset's index price older than this (engine microseconds) is stale: margin refuses new
   * borrowing against it (engine/core/margin/index-prices.ts). Absent: DEFAULT_INDEX_MAX_AGE_US.
   */
  indexMaxAgeUs?: number;
  /**
   * Per asset, bounds on each index price update (IndexUpdateBounds). Absent, or an asset not
   * listed: no bound (and the configuration keeps its fingerprint).
   */
  indexUpdateBounds?: IndexUpdateBounds[];
  /**
   * The platform's maximum leverage, in hundredths (100 = 1×): the highest leverage limit an
   * account may set (engine/core/margin/account-settings.ts). Absent:
   * DEFAULT_MAX_LEVERAGE_HUNDREDTHS (and the configuration keeps its fingerprint).
   */
  maxLeverageHundredths?: number;
  /**
   * Collateral parameters and borrow/lend pools the engine applies (engine/bus/margin-params.ts).
   * Absent: no pool, nothing to borrow or lend; a journal written before the engine had pools
   * carries a configuration without it, and keeps its fingerprint.
   */
  margin?: EngineMarginConfig;
  /**
   * The liquidation waterfall's parameters (engine/core/liquidation/). Absent: the defaults
   * (DEFAULT_LIQUIDATION), and the configuration keeps its fingerprint.
   */
  liquidation?: LiquidationConfig;
  /**
   * Every this many engine microseconds each perpetual position realizes its PnL at mark into
   * USDC (engine/core/perp/realize.ts; the venue: 10 s). Absent: never (PnL is realized only when
   * a position reduces), and the configuration keeps its fingerprint.
   */
  realizePnlIntervalUs?: number;
  /**
   * With realizePnlIntervalUs: a realization pass runs in steps of at most this many positions,
   * one step per command, so that orders interleave with it (engine/core/perp/realize.ts). Absent:
   * the whole pass in the one command that finds it due (the rule before the steps, under which
   * older journals replay), and the configuration keeps its fingerprint.
   */
  realizeStepPositions?: number;
  /**
   * With perpetual markets: a funding pass pays at most this many holders per command, one step
   * per command, so that orders interleave with it; each position still pays on its size at the
   * interval's end (engine/core/perp/funding-passes.ts). Absent: the whole pass in the one command
   * that finds the interval's end (the rule before the steps, under which older journals replay),
   * and the configuration keeps its fingerprint.
   */
  fundingStepPositions?: number;
  /**
   * With margin parameters: after the borrowers' hour of interest, the lenders' interest and the
   * re-check of every borrower's margin run in a pass of at most this many accounts per command,
   * one step per command, so that orders interleave with it; every lend still earns on its size at
   * the hour (engine/core/margin/interest-pass.ts). Absent: the whole hour in the one command that
   * finds it due (the rule before the steps, under which older journals replay), and the
   * configuration keeps its fingerprint.
   */
  interestStepAccounts?: number;
  /**
   * Every account's position limit, in units of the perpetuals' quote asset (USDC): a fill that
   * raises a position may not take Σ |size|·price·positionLimitWeight of the account's perpetuals
   * above it (engine/core/perp/position-limit.ts). Absent: no limit (a journal written before the
   * limit replays without one, and keeps its fingerprint).
   */
  positionLimitUnits?: number;
}

/** How the engine liquidates an account whose maintenance margin ratio reached 100 % (engine/core/liquidation/). */
export interface LiquidationConfig {
  /** Engine time between two steps of the waterfall (microseconds, > 0). */
  stepIntervalUs: number;
  /** The largest part of one borrow one step unwinds on the book, in basis points of it (1 to 10000). */
  chunkBps: number;
  /** The liquidation fee, in basis points of what each liquidation fill pays the liquidated account (0 to 10000). */
  feeBps: number;
  /**
   * The Auto-Close margin fraction's divisor (venue mechanics §4.2: ACMF = max(AccountMMF /
   * divisor, AccountMMF − offset); an integer from 1 to 1000). Absent: DEFAULT_AUTO_CLOSE_DIVISOR.
   */
  autoCloseDivisor?: number;
  /** The Auto-Close margin fraction's offset in 10^-12 (0 to 10^12). Absent: DEFAULT_AUTO_CLOSE_OFFSET_E12. */
  autoCloseOffsetE12?: number;
}

/** One step per second of engine time, 10 % of a borrow per step, a 1 % fee (venue mechanics §4.1, §4.5). */
export const DEFAULT_LIQUIDATION: LiquidationConfig = { stepIntervalUs: 1_000_000, chunkBps: 1_000, feeBps: 100 };
/** The Auto-Close margin fraction's divisor when the configuration names none: 2 (venue mechanics §4.2 [P], FTX's convention). */
export const DEFAULT_AUTO_CLOSE_DIVISOR = 2;
/** The Auto-Close margin fraction's offset when the configuration names none: 0.006. */
export const DEFAULT_AUTO_CLOSE_OFFSET_E12 = 6_000_000_000;
