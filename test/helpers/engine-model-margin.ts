// The reference model's borrow/lend (engine/core/margin/pools.ts and borrow-lend.ts), written the
// obvious way: positions in Maps keyed by "account:asset", every rate and interest an exact
// rational rounded once with bigint division, the margin test summed asset by asset. It supports
// what the random streams configure: identity haircuts and margin functions without a square-root
// term (factor 0), which it checks. Spot margin (engine/core/margin/auto-funding.ts): orders and
// withdrawals that redeem and borrow their shortfall, fills whose proceeds repay or are lent, and
// the largest borrow, withdrawal and order fund, found by bisection over the same check.

import {
  BorrowLendEvent, BorrowLendSide, BorrowLendSource, CommandFlag, FRONT_ID_NONE, LendPoolStateCode, RecordType, ResultCode, type CommandSlot as Command, type EngineConfig, type MarketSpec,
} from '../../engine/bus/types.js';
import type { CollateralSpec, LendPoolSpec } from '../../engine/bus/margin-params.js';
import type { Rec } from './engine-harness.js';
import type { PerpExposure, PerpOrderChange } from './engine-model-perp.js';

const ONE = 10n ** 12n;
const HOUR_MS = 3_600_000n;
const YEAR_MS = 31_536_000_000n;
export const MODEL_HOUR_US = 3_600_000_000;
/** The Liquidating bit of an account's settings. */
const LIQUIDATING = 16;

/** What the margin model reads and writes of the rest of the model. */
export interface ModelHost {
  header(type: RecordType, frontId: number, requestId: number, flags: number): Record<string, number>;
  push(rec: Rec): void;
  result(cmd: Command, code: ResultCode, value: number): void;
  bal(accountId: number, assetId: number): { available: number; locked: number };
  balanceRec(accountId: number, assetId: number): void;
  accountExists(accountId: number): boolean;
  accountCount(): number;
  guardTicks(market: MarketSpec): number;
  seq(): number;
  timeUs(): number;
  /** The asset's last index price and its engine time, if it ever had one (USDC: none; it is fixed). */
  index(assetId: number): { priceE9: number; timeUs: number } | undefined;
  /** The account's settings flags and leverage limit (hundredths). */
  settings(accountId: number): { flags: number; leverage: number };
  setFlags(accountId: number, flags: number): void;
  /** Writes the account's AccountSettings record as an event. */
  settingsEvent(accountId: number): void;
  /** What the account's perpetuals add to its summary, with an order not yet placed (engine-model-perp.ts). */
  perpTerms(accountId: number, change: PerpOrderChange | null): { pnl: bigint; unsettled: bigint; exposures: PerpExposure[]; unpriced: boolean };
  /** Whether the account has a perpetual position or an unsettled amount. */
  hasPerp(accountId: number): boolean;
  /** Whether the account holds a perpetual position (size ≠ 0). */
  holdsPosition(accountId: number): boolean;
  /** Whether the account has a position or an open order in a perpetual on the asset (its figures follow that index). */
  followsUnderlying(accountId: number, assetId: number): boolean;
  /** The account entered the liquidating state (engine/core/liquidation/waterfall.ts enterLiquidation). */
  enterLiquidation(accountId: number): void;
  /** A re-check found the account still liquidating (waterfall.ts keepLiquidating). */
  keepLiquidating(): void;
}

/** One asset of an account's margin summary (engine/core/margin/valuation.ts). */
export interface ModelLine {
  assetId: number;
  available: bigint;
  locked: bigint;
  lent: bigint;
  borrowed: bigint;
  mark: ValuationMark | null;
  notional: bigint;
  weight: bigint;
  collateral: bigint;
  liability: bigint;
}

export interface ModelSummary {
  lines: ModelLine[];
  assets: bigint;
  liabilities: bigint;
  equity: bigint;
  ten: bigint;
  imfUnits: bigint;
  mmfUnits: bigint;
  accountImf: bigint;
  accountMmf: bigint;
  marginFraction: bigint | null;
  unpriced: boolean;
  stale: boolean;
}

/** The lending state as ModelLending.exportState gives it: copies, positions with anything lent or borrowed. */
export interface ModelLendingState {
  positions: { accountId: number; assetId: number; lent: number; borrowed: number; interest: number; positionId: number }[];
  /** The exchange's interest lines by asset id: its share, and what rounding kept. */
  fees: Map<number, bigint>;
  rounding: Map<number, bigint>;
  /** Engine time of the next hour of interest (-1: none waits). */
  interestDueUs: number;
}

/** A valuation mark: source 1 USDC, 2 fresh index, 3 book, 4 stale index. */
interface ValuationMark {
  quoteUnits: bigint;
  baseUnits: bigint;
  source: number;
  priceE9: number;
  ticks: number;
  marketId: number;
}

interface Mark {
  quoteUnits: bigint;
  baseUnits: bigint;
  ticks: number;
  marketId: number;
}

const ceil = (a: bigint, b: bigint): bigint => (a + b - 1n) / b;
const floorSigned = (a: bigint, b: bigint): bigint => (a >= 0n ? a / b : -((-a + b - 1n) / b));
const max = (a: bigint, b: bigint): bigint => (a > b ? a : b);

/** A spot margin funding: its code, and what it redeems and borrows when Ok. */
export interface Funding {
  code: ResultCode;
  redeem: number;
  borrow: number;
}

/** The largest k in [0, bound] that passes, for a check true at 0 that only fails from some k on. */
function largestPassing(bound: number, passes: (k: number) => boolean): number {
  let low = 0;
  let high = bound;
  while (low < high) {
    const mid = low + Math.ceil((high - low) / 2);
    if (passes(mid)) low = mid;
    else high = mid - 1;
  }
  return low;
}

/** The flag that makes each automatic move (engine/core/margin/auto-funding.ts). */
const AUTO_SOURCES: Record<number, BorrowLendSource> = {
  [BorrowLendEvent.Borrow]: BorrowLendSource.AutoBorrow,
  [BorrowLendEvent.LendRedeem]: BorrowLendSource.AutoLendRedeem,
  [BorrowLendEvent.BorrowRepay]: BorrowLendSource.AutoBorrowRepay,
  [BorrowLendEvent.Lend]: BorrowLendSource.AutoLend,
};

export class ModelLending {
  private readonly lent = new Map<string, number>();
  private readonly borrowed = new Map<string, number>();
  private readonly interest = new Map<string, number>();
  private readonly positionId = new Map<string, number>();
  /** The throttle's u0 by asset id: the pool's utilization at the last hour (engine/core/margin/throttle.ts). */
  private readonly stepStart = new Map<number, bigint>();

  /** The utilization a voluntary borrow or redemption may reach this hour. */
  private ceiling(p: LendPoolSpec): bigint {
    const u0 = this.stepStart.get(p.assetId) ?? 0n;
    const min = (a: bigint, b: bigint): bigint => (a < b ? a : b);
    if (u0 < p.throttleUtilizationThreshold) return min(p.maxUtilization, p.throttleUtilizationBound);
    const step = p.throttleUpdateFraction * (p.throttleUtilizationBound - u0);
    return min(p.maxUtilization, u0 + (step >= 0n ? step / ONE : -((-step + ONE - 1n) / ONE)));
  }

  /** Engine time of the next hour of interest (-1: none waits). */
  interestDue = -1;

  constructor(private readonly config: EngineConfig, private readonly host: ModelHost) {
    for (const c of config.margin?.collateral ?? []) {
      if (c.haircut.kind !== 'identity' || c.imf.factor !== 0n || c.mmf.factor !== 0n) throw new Error('the margin model supports identity haircuts and factor-0 margin functions only');
    }
  }

  private pool(assetId: number): LendPoolSpec | undefined {
    return this.config.margin?.lendPools.find((p) => p.assetId === assetId);
  }

  private collateral(assetId: number): CollateralSpec | undefined {
    return this.config.margin?.collateral.find((c) => c.assetId === assetId);
  }

  private get(map: Map<string, number>, accountId: number, assetId: number): number {
    return map.get(`${accountId}:${assetId}`) ?? 0;
  }

  private total(map: Map<string, number>, assetId: number): bigint {
    let sum = 0n;
    for (const [key, value] of map) if (key.endsWith(`:${assetId}`)) sum += BigInt(value);
    return sum;
  }

  private bookMark(assetId: number): Mark | null {
    const valuation = this.config.margin?.valuationAssetId;
    if (valuation === undefined) return null;
    if (assetId === valuation) return { quoteUnits: 1n, baseUnits: 1n, ticks: 0, marketId: 0xffff };
    const market = this.config.markets.find((m) => m.baseAssetId === assetId && m.quoteAssetId === valuation);
    if (!market) return null;
    const ticks = market.maxMultiplierBps === undefined ? 0 : this.host.guardTicks(market);
    return ticks > 0 ? { quoteUnits: BigInt(ticks) * BigInt(market.quoteUnitsPerTickLot), baseUnits: BigInt(market.baseUnitsPerLot), ticks, marketId: market.marketId } : null;
  }

  /** The annual borrow rate at utilization B/L, the exact rational rounded up. */
  private borrowRate(p: LendPoolSpec, b: bigint, l: bigint): bigint {
    if (l === 0n) return p.borrowRateMin;
    if (b >= l) return p.borrowRateMax;
    if (b * ONE <= p.optimalUtilization * l) {
      return ceil(p.borrowRateMin * l * p.optimalUtilization + (p.borrowRateOptimal - p.borrowRateMin) * b * ONE, l * p.optimalUtilization);
    }
    const den = l * (ONE - p.optimalUtilization);
    return ceil(p.borrowRateOptimal * den + (p.borrowRateMax - p.borrowRateOptimal) * (b * ONE - p.optimalUtilization * l), den);
  }

  private lendRate(p: LendPoolSpec, rate: bigint, b: bigint, l: bigint): bigint {
    return l === 0n ? 0n : (rate * b * (ONE - p.fee)) / (l * ONE);
  }

  /**
   * A BorrowLend record: `extra.source` made it (Manual by default); a move that closed its
   * position carries the position's id and interest from before it (`extra.closed`).
   */
  private moveRec(
    cmd: Command | null, accountId: number, assetId: number, event: BorrowLendEvent, quantity: number, rate: bigint,
    extra: { imf?: bigint; mmf?: bigint; source?: BorrowLendSource; closed?: { id: number; interest: number } } = {},
  ): void {
    const mark = this.bookMark(assetId);
    const open = this.get(this.positionId, accountId, assetId) !== 0;
    this.host.push({
      ...this.host.header(RecordType.BorrowLend, cmd?.frontId ?? FRONT_ID_NONE, cmd?.requestId ?? 0, 0),
      quantityUnits: quantity, lentUnits: this.get(this.lent, accountId, assetId), borrowedUnits: this.get(this.borrowed, accountId, assetId),
      interestUnits: open ? this.get(this.interest, accountId, assetId) : extra.closed?.interest ?? 0,
      positionId: open ? this.get(this.positionId, accountId, assetId) : extra.closed?.id ?? 0, rate: Number(rate),
      markTicks: mark?.ticks ?? 0, imf: Number(extra.imf ?? 0n), mmf: Number(extra.mmf ?? 0n), accountId, assetId, marketId: mark?.marketId ?? 0xffff, event,
      source: extra.source ?? BorrowLendSource.Manual,
    } as unknown as Rec);
  }

  /** The account's position in an asset before a move: its id and interest (what a closing move reports). */
  private positionBefore(accountId: number, assetId: number): { id: number; interest: number } {
    return { id: this.get(this.positionId, accountId, assetId), interest: this.get(this.interest, accountId, assetId) };
  }

  private change(map: Map<string, number>, accountId: number, assetId: number, delta: number): void {
    const key = `${accountId}:${assetId}`;
    const before = map.get(key) ?? 0;
    const after = before + delta;
    if (before === 0 && after > 0) {
      this.positionId.set(key, this.host.seq());
      this.interest.set(key, 0);
    }
    map.set(key, after);
    if (after === 0) {
      this.positionId.delete(key);
      this.interest.delete(key);
    }
  }

  private anyPosition(): boolean {
    return [...this.lent.values(), ...this.borrowed.values()].some((v) => v > 0);
  }

  /** The account's borrow of an asset. */
  borrowedOf(accountId: number, assetId: number): number {
    return this.get(this.borrowed, accountId, assetId);
  }

  /** Whether the account borrows anything. */
  borrowsAnything(accountId: number): boolean {
    return [...this.borrowed].some(([key, value]) => key.startsWith(`${accountId}:`) && value > 0);
  }

  /** The valuation mark at the model's time: USDC 1, a fresh index, the book, a stale index, or none. */
  private valuationMark(assetId: number): ValuationMark | null {
    const valuation = this.config.margin?.valuationAssetId;
    if (valuation === undefined) return null;
    if (assetId === valuation) return { quoteUnits: 1n, baseUnits: 1n, source: 1, priceE9: 1_000_000_000, ticks: 0, marketId: 0xffff };
    const index = this.host.index(assetId);
    const fromIndex = (source: number): ValuationMark => ({
      quoteUnits: BigInt(index!.priceE9) * 10n ** BigInt(this.decimals(valuation)), baseUnits: 10n ** 9n * 10n ** BigInt(this.decimals(assetId)),
      source, priceE9: index!.priceE9, ticks: 0, marketId: 0xffff,
    });
    const maxAge = this.config.indexMaxAgeUs ?? 30_000_000;
    if (index && this.host.timeUs() - index.timeUs <= maxAge) return fromIndex(2);
    const book = this.bookMark(assetId);
    if (book) return { quoteUnits: book.quoteUnits, baseUnits: book.baseUnits, source: 3, priceE9: 0, ticks: book.ticks, marketId: book.marketId };
    return index ? fromIndex(4) : null;
  }

  private decimals(assetId: number): number {
    return this.config.assets.find((a) => a.assetId === assetId)!.decimals;
  }

  /** The account's margin summary with `heldDelta` more of `assetId` available and `owedDelta` more borrowed. */
  summary(accountId: number, assetId = -1, heldDelta = 0n, owedDelta = 0n, perpChange: PerpOrderChange | null = null): ModelSummary {
    const s: ModelSummary = {
      lines: [], assets: 0n, liabilities: 0n, equity: 0n, ten: 0n, imfUnits: 0n, mmfUnits: 0n, accountImf: 0n, accountMmf: 0n, marginFraction: null, unpriced: false, stale: false,
    };
    const leverageFloor = ceil(ONE * 100n, BigInt(this.host.settings(accountId).leverage));
    for (const asset of this.config.assets) {
      const changed = asset.assetId === assetId;
      const b = this.host.bal(accountId, asset.assetId);
      const available = BigInt(b.available) + (changed ? heldDelta : 0n);
      const lent = BigInt(this.get(this.lent, accountId, asset.assetId));
      const borrowed = BigInt(this.get(this.borrowed, accountId, asset.assetId)) + (changed ? owedDelta : 0n);
      const held = available + BigInt(b.locked) + lent;
      if (held === 0n && borrowed === 0n) continue;
      const mark = this.valuationMark(asset.assetId);
      const c = this.collateral(asset.assetId);
      if ((borrowed > 0n || c) && (!mark || mark.source > 2)) s.stale = true;
      const line: ModelLine = { assetId: asset.assetId, available, locked: BigInt(b.locked), lent, borrowed, mark, notional: 0n, weight: 0n, collateral: 0n, liability: 0n };
      s.lines.push(line);
      if (!mark) {
        if (borrowed > 0n) s.unpriced = true;
        continue;
      }
      line.weight = c?.haircut.weight ?? 0n;
      line.notional = (held * mark.quoteUnits) / mark.baseUnits;
      line.collateral = (held * mark.quoteUnits * line.weight) / (mark.baseUnits * ONE);
      line.liability = ceil(borrowed * mark.quoteUnits, mark.baseUnits);
      s.assets += line.collateral;
      s.liabilities += line.liability;
      if (borrowed === 0n) continue;
      s.ten += line.liability;
      s.imfUnits += ceil(line.liability * max(c!.imf.base, leverageFloor), ONE);
      s.mmfUnits += ceil(line.liability * c!.mmf.base, ONE);
    }
    const perp = this.host.perpTerms(accountId, perpChange);
    for (const e of perp.exposures) {
      s.ten += e.notional;
      s.imfUnits += ceil(e.notional * e.imf, ONE);
      s.mmfUnits += ceil(e.notional * e.mmf, ONE);
    }
    if (perp.unpriced) s.unpriced = true;
    s.equity = s.assets - s.liabilities + perp.pnl + perp.unsettled;
    s.accountImf = s.ten === 0n ? leverageFloor : max(leverageFloor, ceil(s.imfUnits * ONE, s.ten));
    s.accountMmf = s.ten === 0n ? 0n : ceil(s.mmfUnits * ONE, s.ten);
    s.marginFraction = s.ten === 0n ? null : floorSigned(s.equity * ONE, s.ten);
    return s;
  }

  /** netEquity ≥ Σ N·IMF with `held` more of `assetId` available and `owed` more borrowed; a borrow also needs fresh index prices. */
  marginCode(accountId: number, assetId: number, heldDelta: bigint, owedDelta: bigint): ResultCode {
    const s = this.summary(accountId, assetId, heldDelta, owedDelta);
    if (s.unpriced || (owedDelta > 0n && s.stale)) return ResultCode.BorrowNoMarkPrice;
    return s.equity >= s.imfUnits ? ResultCode.Ok : ResultCode.InsufficientMargin;
  }

  isLiquidating(accountId: number): boolean {
    return (this.host.settings(accountId).flags & LIQUIDATING) !== 0;
  }

  /** Re-checks the account: liquidating iff it borrows or holds a position and netEquity ≤ Σ N·MMF; unpriced leaves it; an event on a flip. */
  review(accountId: number): void {
    const was = this.isLiquidating(accountId);
    let now = false;
    if (this.borrowsAnything(accountId) || this.host.holdsPosition(accountId)) {
      const s = this.summary(accountId);
      if (s.unpriced) return;
      now = s.equity <= s.mmfUnits;
    }
    if (now && was) return this.host.keepLiquidating();
    if (now === was) return;
    this.host.setFlags(accountId, this.host.settings(accountId).flags ^ LIQUIDATING);
    this.host.settingsEvent(accountId);
    if (now) this.host.enterLiquidation(accountId);
  }

  // ---- the liquidation waterfall (engine/core/liquidation/) ----

  lentOf(accountId: number, assetId: number): number {
    return this.get(this.lent, accountId, assetId);
  }

  /** The valuation mark (engine markOf), or null. */
  markOf(assetId: number): ValuationMark | null {
    return this.valuationMark(assetId);
  }

  collateralOf(assetId: number): CollateralSpec | undefined {
    return this.collateral(assetId);
  }

  /** Whether the pool lets `qty` of its lends go (engine redeemRefusal). */
  redeemFits(assetId: number, qty: number): boolean {
    const p = this.pool(assetId)!;
    const B = this.total(this.borrowed, assetId);
    const rest = this.total(this.lent, assetId) - BigInt(qty);
    return B === 0n || (rest > 0n && B * ONE <= this.ceiling(p) * rest);
  }

  /** A move of the waterfall: an event for everyone (source Liquidation), then the balance. */
  liquidationMove(accountId: number, assetId: number, event: BorrowLendEvent, qty: number): void {
    const closed = this.positionBefore(accountId, assetId);
    this.move(accountId, assetId, event, qty);
    this.moveRec(null, accountId, assetId, event, qty, 0n, { closed, source: BorrowLendSource.Liquidation });
    this.host.balanceRec(accountId, assetId);
  }

  /**
   * Borrow/lend ADL of a lend its pool refused (engine/core/liquidation/lend-adl.ts): the other
   * borrowers of the asset, largest borrow first then by id, each close what they can pay for at
   * mark in USDC (their available USDC plus the USDC pool's room), then are re-checked.
   */
  deleverageLend(accountId: number, assetId: number): void {
    const usdc = this.config.margin!.valuationAssetId;
    const mark = assetId === usdc ? null : this.valuationMark(assetId);
    if (!mark) return;
    const providers: number[] = [];
    for (let id = 1; id <= this.host.accountCount(); id++) if (id !== accountId && this.get(this.borrowed, id, assetId) > 0) providers.push(id);
    providers.sort((a, b) => this.get(this.borrowed, b, assetId) - this.get(this.borrowed, a, assetId) || a - b);
    for (const provider of providers) {
      const left = this.get(this.lent, accountId, assetId);
      if (left === 0) break;
      const available = BigInt(this.host.bal(provider, usdc).available);
      const payable = available + this.usdcRoom(provider, usdc);
      const bound = Math.min(left, this.get(this.borrowed, provider, assetId));
      const q = mark.quoteUnits === 0n ? bound : Math.min(bound, Number((payable * mark.baseUnits) / mark.quoteUnits));
      if (q === 0) continue;
      const value = ceil(BigInt(q) * mark.quoteUnits, mark.baseUnits);
      if (value > available) this.adlMove(provider, usdc, BorrowLendEvent.Borrow, Number(value - available), BorrowLendSource.AdlProvider);
      this.adlMove(provider, assetId, BorrowLendEvent.BorrowRepay, q, BorrowLendSource.AdlProvider);
      this.adlMove(accountId, assetId, BorrowLendEvent.LendRedeem, q, BorrowLendSource.LiquidationAdl);
      if (value === 0n) continue;
      this.host.bal(provider, usdc).available -= Number(value);
      this.host.bal(accountId, usdc).available += Number(value);
      this.host.balanceRec(provider, usdc);
      this.host.balanceRec(accountId, usdc);
    }
    for (const provider of providers) this.review(provider);
  }

  /** The USDC an ADL provider may borrow: none while it lends USDC; else the pool's room under its limit and ceiling. */
  private usdcRoom(accountId: number, usdc: number): bigint {
    const p = this.pool(usdc);
    if (!p || this.get(this.lent, accountId, usdc) > 0) return 0n;
    const L = this.total(this.lent, usdc);
    const B = this.total(this.borrowed, usdc);
    if (L === 0n) return 0n;
    const byLimit = p.openBorrowLendLimitUnits - B;
    const byCeiling = (this.ceiling(p) * L) / ONE - B;
    const room = byLimit < byCeiling ? byLimit : byCeiling;
    return room > 0n ? room : 0n;
  }

  /** One ADL move: a USDC borrow moves units; a repayment or redemption of the asset only shrinks the position. */
  private adlMove(accountId: number, assetId: number, event: BorrowLendEvent, qty: number, source: BorrowLendSource): void {
    const closed = this.positionBefore(accountId, assetId);
    if (event === BorrowLendEvent.Borrow) this.move(accountId, assetId, event, qty);
    else this.change(event === BorrowLendEvent.LendRedeem ? this.lent : this.borrowed, accountId, assetId, -qty);
    this.moveRec(null, accountId, assetId, event, qty, 0n, { closed, source });
    this.host.balanceRec(accountId, assetId);
  }

  /**
   * Closes a bankrupt borrow (engine/core/liquidation/bankruptcy.ts): `covered` units from the
   * fund, the rest written off the lenders pro rata, then off the interest lines.
   */
  closeBankruptBorrow(accountId: number, assetId: number, covered: number): void {
    const borrowed = this.get(this.borrowed, accountId, assetId);
    const closed = this.positionBefore(accountId, assetId);
    const loss = borrowed - covered;
    if (loss > 0) this.socialize(accountId, assetId, loss);
    this.change(this.borrowed, accountId, assetId, -borrowed);
    this.moveRec(null, accountId, assetId, BorrowLendEvent.BorrowRepay, borrowed, 0n, { closed, source: BorrowLendSource.Liquidation });
  }

  private socialize(bankruptId: number, assetId: number, loss: number): void {
    const lentTotal = Number(this.total(this.lent, assetId));
    const fromLenders = Math.min(loss, lentTotal);
    const shares: [number, number][] = [];
    let shared = 0;
    for (let accountId = 1; accountId <= this.host.accountCount() && fromLenders > 0; accountId++) {
      const lent = this.get(this.lent, accountId, assetId);
      if (lent === 0) continue;
      const share = Number((BigInt(fromLenders) * BigInt(lent)) / BigInt(lentTotal));
      shares.push([accountId, share]);
      shared += share;
    }
    for (const entry of shares) {
      if (shared >= fromLenders) break;
      if (entry[1] < this.get(this.lent, entry[0], assetId)) {
        entry[1]++;
        shared++;
      }
    }
    const lossRec = (lender: number, units: number, lentAfter: number) => this.host.push({
      ...this.host.header(RecordType.SocializedLoss, FRONT_ID_NONE, 0, 0), units, lentAfterUnits: lentAfter, accountId: lender, bankruptAccountId: bankruptId, assetId,
    } as unknown as Rec);
    for (const [lender, share] of shares) {
      if (share === 0) continue;
      this.change(this.lent, lender, assetId, -share);
      lossRec(lender, share, this.get(this.lent, lender, assetId));
    }
    const rest = loss - fromLenders;
    if (rest === 0) return;
    const fromRounding = rest < this.roundingLine(assetId) ? BigInt(rest) : this.roundingLine(assetId);
    this.rounding.set(assetId, this.roundingLine(assetId) - fromRounding);
    this.fees.set(assetId, this.feeLine(assetId) - (BigInt(rest) - fromRounding));
    lossRec(0, rest, 0);
  }

  /** The borrowers, ascending; with `assetId`, only those that borrow or hold it or trade a perpetual on it. */
  reviewBorrowers(assetId?: number): void {
    for (let accountId = 1; accountId <= this.host.accountCount(); accountId++) {
      if (!this.borrowsAnything(accountId)) continue;
      if (assetId !== undefined) {
        const b = this.host.bal(accountId, assetId);
        const held = b.available + b.locked + this.get(this.lent, accountId, assetId) + this.get(this.borrowed, accountId, assetId);
        if (held === 0 && !this.host.followsUnderlying(accountId, assetId)) continue;
      }
      this.review(accountId);
    }
  }

  private decide(cmd: Command, p: LendPoolSpec): { event: BorrowLendEvent; code: ResultCode } {
    const { accountId, assetId, amountUnits: qty } = cmd;
    const lent = this.get(this.lent, accountId, assetId);
    const borrowed = this.get(this.borrowed, accountId, assetId);
    const available = this.host.bal(accountId, assetId).available;
    const L = this.total(this.lent, assetId);
    const B = this.total(this.borrowed, assetId);
    const open = p.state === 'Open';
    const onStep = BigInt(qty) % p.stepUnits === 0n;
    const q = BigInt(qty);
    if ((cmd.side as number) === BorrowLendSide.Lend) {
      if (borrowed > 0) return { event: BorrowLendEvent.BorrowRepay, code: qty > borrowed ? ResultCode.LendRequiresBorrowRepay : available < qty ? ResultCode.InsufficientFunds : ResultCode.Ok };
      const code = this.isLiquidating(accountId) ? ResultCode.AccountLiquidating : !onStep ? ResultCode.BorrowLendQuantityInvalid : !open ? ResultCode.LendPoolNotOpen : available < qty ? ResultCode.InsufficientFunds
        : L + q > p.openBorrowLendLimitUnits ? ResultCode.LendLimit : ResultCode.Ok;
      return { event: BorrowLendEvent.Lend, code };
    }
    if (lent > 0) {
      if (qty > lent) return { event: BorrowLendEvent.LendRedeem, code: ResultCode.BorrowRequiresLendRedeem };
      const fits = B === 0n || (L - q > 0n && B * ONE <= this.ceiling(p) * (L - q));
      return { event: BorrowLendEvent.LendRedeem, code: fits ? ResultCode.Ok : ResultCode.InsufficientSupply };
    }
    if (this.isLiquidating(accountId)) return { event: BorrowLendEvent.Borrow, code: ResultCode.AccountLiquidating };
    if (!onStep) return { event: BorrowLendEvent.Borrow, code: ResultCode.BorrowLendQuantityInvalid };
    if (!open) return { event: BorrowLendEvent.Borrow, code: ResultCode.LendPoolNotOpen };
    if (B + q > p.openBorrowLendLimitUnits) return { event: BorrowLendEvent.Borrow, code: ResultCode.BorrowLimit };
    if (L === 0n || (B + q) * ONE > this.ceiling(p) * L) return { event: BorrowLendEvent.Borrow, code: ResultCode.InsufficientSupply };
    return { event: BorrowLendEvent.Borrow, code: this.marginCode(accountId, assetId, q, q) };
  }

  borrowLend(cmd: Command): void {
    const p = this.pool(cmd.assetId);
    if (!this.host.accountExists(cmd.accountId)) return this.host.result(cmd, ResultCode.UnknownAccount, 0);
    if (!p || (cmd.side as number) > BorrowLendSide.Lend) return this.host.result(cmd, ResultCode.LendPoolUnknown, 0);
    if (!Number.isSafeInteger(cmd.amountUnits) || cmd.amountUnits <= 0) return this.host.result(cmd, ResultCode.BorrowLendQuantityInvalid, 0);
    if (p.state === 'Closed') return this.host.result(cmd, ResultCode.LendPoolNotOpen, 0);
    const { event, code } = this.decide(cmd, p);
    if (code !== ResultCode.Ok) return this.host.result(cmd, code, 0);
    const { accountId, assetId, amountUnits: qty } = cmd;
    const closed = this.positionBefore(accountId, assetId);
    this.move(accountId, assetId, event, qty);
    this.moveRec(cmd, accountId, assetId, event, qty, 0n, { closed });
    this.host.balanceRec(accountId, assetId);
    this.review(accountId);
    this.host.result(cmd, ResultCode.Ok, this.get(this.lent, accountId, assetId) - this.get(this.borrowed, accountId, assetId));
  }

  /** One move of units between the balance and a position; the hour of interest is set once a position opens. */
  private move(accountId: number, assetId: number, event: BorrowLendEvent, qty: number): void {
    const b = this.host.bal(accountId, assetId);
    if (event === BorrowLendEvent.Lend || event === BorrowLendEvent.BorrowRepay) b.available -= qty;
    else b.available += qty;
    if (event === BorrowLendEvent.Lend) this.change(this.lent, accountId, assetId, qty);
    if (event === BorrowLendEvent.LendRedeem) this.change(this.lent, accountId, assetId, -qty);
    if (event === BorrowLendEvent.Borrow) this.change(this.borrowed, accountId, assetId, qty);
    if (event === BorrowLendEvent.BorrowRepay) this.change(this.borrowed, accountId, assetId, -qty);
    if (this.interestDue < 0 && this.anyPosition()) this.interestDue = Math.floor(this.host.timeUs() / MODEL_HOUR_US) * MODEL_HOUR_US + MODEL_HOUR_US;
  }

  // ---- spot margin ----

  /** A move the spot margin flags make: an event for everyone, then the balance. */
  private autoMove(accountId: number, assetId: number, event: BorrowLendEvent, qty: number): void {
    const closed = this.positionBefore(accountId, assetId);
    this.move(accountId, assetId, event, qty);
    this.moveRec(null, accountId, assetId, event, qty, 0n, { closed, source: AUTO_SOURCES[event] });
    this.host.balanceRec(accountId, assetId);
  }

  /**
   * What covering `need` units of an asset takes: the lend redeemed (autoLendRedeem) first, then
   * the rest borrowed in whole steps (autoBorrow); `withdrawn` units leave the account.
   */
  planFunding(accountId: number, assetId: number, need: number, withdrawn: number, flags: number): Funding {
    const plan: Funding = { code: ResultCode.Ok, redeem: 0, borrow: 0 };
    const p = this.pool(assetId);
    const refuse = (code: ResultCode): Funding => ({ code, redeem: 0, borrow: 0 });
    let short = need - this.host.bal(accountId, assetId).available;
    const lent = this.get(this.lent, accountId, assetId);
    const L = this.total(this.lent, assetId);
    const B = this.total(this.borrowed, assetId);
    if (short > 0 && p && (flags & CommandFlag.AutoLendRedeem) !== 0 && p.state !== 'Closed') {
      plan.redeem = Math.min(short, lent);
      const rest = L - BigInt(plan.redeem);
      if (plan.redeem > 0 && B > 0n && (rest === 0n || B * ONE > this.ceiling(p) * rest)) return refuse(ResultCode.InsufficientSupply);
      short -= plan.redeem;
    }
    if (short > 0 && p && (flags & CommandFlag.AutoBorrow) !== 0) {
      if (this.isLiquidating(accountId)) return refuse(ResultCode.AccountLiquidating);
      if (lent > plan.redeem) return refuse(ResultCode.BorrowRequiresLendRedeem);
      if (p.state !== 'Open') return refuse(ResultCode.LendPoolNotOpen);
      const step = Number(p.stepUnits);
      plan.borrow = Math.ceil(short / step) * step;
      const rest = L - BigInt(plan.redeem);
      const after = B + BigInt(plan.borrow);
      if (after > p.openBorrowLendLimitUnits) return refuse(ResultCode.BorrowLimit);
      if (rest === 0n || after * ONE > this.ceiling(p) * rest) return refuse(ResultCode.InsufficientSupply);
      short -= plan.borrow;
    }
    if (short > 0) return refuse(ResultCode.InsufficientFunds);
    if (plan.borrow > 0 || (withdrawn > 0 && (this.borrowsAnything(accountId) || this.host.hasPerp(accountId)))) {
      plan.code = this.marginCode(accountId, assetId, BigInt(plan.borrow - withdrawn), BigInt(plan.borrow));
    }
    return plan;
  }

  /** Makes a planned funding: the redemption, then the borrow. */
  applyFunding(accountId: number, assetId: number, plan: Funding): void {
    if (plan.redeem > 0) this.autoMove(accountId, assetId, BorrowLendEvent.LendRedeem, plan.redeem);
    if (plan.borrow > 0) this.autoMove(accountId, assetId, BorrowLendEvent.Borrow, plan.borrow);
  }

  /** A fill or a deposit paid `units` of an asset: they repay the account's borrow, and what is left is lent (not while liquidating). */
  applyProceeds(accountId: number, assetId: number, units: number, repay: boolean, lend: boolean): void {
    const p = this.pool(assetId);
    if (!p || units <= 0) return;
    let left = units;
    const borrowed = this.get(this.borrowed, accountId, assetId);
    if (repay && borrowed > 0 && p.state !== 'Closed') {
      const repaid = Math.min(left, borrowed);
      this.autoMove(accountId, assetId, BorrowLendEvent.BorrowRepay, repaid);
      left -= repaid;
    }
    if (!lend || this.get(this.borrowed, accountId, assetId) > 0 || p.state !== 'Open' || this.isLiquidating(accountId)) return;
    const room = Number(p.openBorrowLendLimitUnits - this.total(this.lent, assetId));
    const step = Number(p.stepUnits);
    const lent = Math.floor(Math.min(left, Math.max(room, 0)) / step) * step;
    if (lent > 0) this.autoMove(accountId, assetId, BorrowLendEvent.Lend, lent);
  }

  /** QueryMaxBorrowQty: the largest borrow that passes BorrowLend's checks, in whole steps. */
  queryMaxBorrow(cmd: Command): void {
    const { accountId, assetId } = cmd;
    if (!this.host.accountExists(accountId)) return this.host.result(cmd, ResultCode.UnknownAccount, 0);
    if (!this.config.assets.some((a) => a.assetId === assetId)) return this.host.result(cmd, ResultCode.UnknownAsset, 0);
    const p = this.pool(assetId);
    if (!p || p.state !== 'Open' || this.get(this.lent, accountId, assetId) > 0 || this.isLiquidating(accountId)) return this.host.result(cmd, ResultCode.Ok, 0);
    const L = this.total(this.lent, assetId);
    const B = this.total(this.borrowed, assetId);
    const room = p.openBorrowLendLimitUnits - B;
    if (room <= 0n || L === 0n) return this.host.result(cmd, ResultCode.Ok, 0);
    const step = Number(p.stepUnits);
    const steps = largestPassing(Number((room < L ? room : L) / p.stepUnits), (k) => {
      const units = BigInt(k * step);
      return (B + units) * ONE <= this.ceiling(p) * L && this.marginCode(accountId, assetId, units, units) === ResultCode.Ok;
    });
    this.host.result(cmd, ResultCode.Ok, steps * step);
  }

  /** QueryMaxWithdrawalQty: the largest withdrawal that passes with the command's flags. */
  queryMaxWithdrawal(cmd: Command): void {
    const { accountId, assetId } = cmd;
    if (!this.host.accountExists(accountId)) return this.host.result(cmd, ResultCode.UnknownAccount, 0);
    if (!this.config.assets.some((a) => a.assetId === assetId)) return this.host.result(cmd, ResultCode.UnknownAsset, 0);
    if ((cmd.flags & ~(CommandFlag.AutoBorrow | CommandFlag.AutoLendRedeem)) !== 0) return this.host.result(cmd, ResultCode.InvalidCommand, 0);
    this.host.result(cmd, ResultCode.Ok, this.isLiquidating(accountId) ? 0 : this.maxFundable(accountId, assetId, cmd.flags, true));
  }

  /** The most units of an asset an order (or a withdrawal) could use now with `flags`. */
  maxFundable(accountId: number, assetId: number, flags: number, withdrawal: boolean): number {
    const p = this.pool(assetId);
    let bound = this.host.bal(accountId, assetId).available;
    if (p && (flags & CommandFlag.AutoLendRedeem) !== 0) bound += this.get(this.lent, accountId, assetId);
    if (p && (flags & CommandFlag.AutoBorrow) !== 0) {
      const room = Number(p.openBorrowLendLimitUnits - this.total(this.borrowed, assetId));
      bound += Math.max(0, Math.min(room, Number(this.total(this.lent, assetId))));
    }
    const passes = (need: number): boolean => this.planFunding(accountId, assetId, need, withdrawal ? need : 0, flags).code === ResultCode.Ok;
    return passes(0) ? largestPassing(bound, passes) : 0;
  }

  /** The hour due at interestDue: every pool with something borrowed pays, then the next hour is set while positions remain. */
  accrue(): void {
    const due = this.interestDue;
    this.interestDue = -1;
    for (const p of this.config.margin?.lendPools ?? []) {
      const B = this.total(this.borrowed, p.assetId);
      const L = this.total(this.lent, p.assetId);
      if (B === 0n) continue;
      const rate = this.borrowRate(p, B, L);
      const earnRate = this.lendRate(p, rate, B, L);
      let paid = 0n;
      for (let accountId = 1; accountId <= this.host.accountCount(); accountId++) {
        const owed = BigInt(this.get(this.borrowed, accountId, p.assetId));
        const lent = BigInt(this.get(this.lent, accountId, p.assetId));
        const units = owed > 0n ? ceil(owed * rate * HOUR_MS, ONE * YEAR_MS) : (lent * earnRate * HOUR_MS) / (ONE * YEAR_MS);
        if (units === 0n) continue;
        paid += owed > 0n ? units : -units;
        const key = `${accountId}:${p.assetId}`;
        this.change(owed > 0n ? this.borrowed : this.lent, accountId, p.assetId, Number(units));
        this.interest.set(key, (this.interest.get(key) ?? 0) + Number(units));
        this.moveRec(null, accountId, p.assetId, owed > 0n ? BorrowLendEvent.BorrowInterest : BorrowLendEvent.LendInterest, Number(units), owed > 0n ? rate : earnRate, { source: BorrowLendSource.Interest });
      }
      const share = (p.fee * B * rate * HOUR_MS) / (ONE * ONE * YEAR_MS);
      this.fees.set(p.assetId, this.feeLine(p.assetId) + share);
      this.rounding.set(p.assetId, this.roundingLine(p.assetId) + paid - share);
    }
    this.samplePools(due);
    for (const p of this.config.margin?.lendPools ?? []) {
      const B = this.total(this.borrowed, p.assetId);
      const L = this.total(this.lent, p.assetId);
      const u = L === 0n ? 0n : (B * ONE) / L;
      this.stepStart.set(p.assetId, u > BigInt(Number.MAX_SAFE_INTEGER) ? BigInt(Number.MAX_SAFE_INTEGER) : u);
    }
    this.reviewBorrowers();
    if (this.anyPosition()) this.interestDue = due + MODEL_HOUR_US;
  }

  /** Every pool after the hour `hourUs` of interest, in asset order: the market history's samples. */
  private samplePools(hourUs: number): void {
    const pools = this.config.margin?.lendPools ?? [];
    for (const p of this.config.assets.map((a) => pools.find((pool) => pool.assetId === a.assetId))) {
      if (p === undefined) continue;
      const B = this.total(this.borrowed, p.assetId);
      const L = this.total(this.lent, p.assetId);
      const rate = this.borrowRate(p, B, L);
      this.host.push({
        ...this.host.header(RecordType.LendPoolSample, FRONT_ID_NONE, 0, 0), hourUs, lentUnits: Number(L), borrowedUnits: Number(B), borrowRate: Number(rate),
        lendRate: Number(this.lendRate(p, rate, B, L)), utilization: Number(L === 0n ? 0n : (B * ONE) / L), assetId: p.assetId,
      } as unknown as Rec);
    }
  }

  queryPools(cmd: Command): void {
    const pools = this.config.margin?.lendPools ?? [];
    const ordered = this.config.assets.map((a) => pools.find((p) => p.assetId === a.assetId)).filter((p): p is LendPoolSpec => p !== undefined);
    for (const p of ordered) {
      const B = this.total(this.borrowed, p.assetId);
      const L = this.total(this.lent, p.assetId);
      const rate = this.borrowRate(p, B, L);
      const mark = this.bookMark(p.assetId);
      this.host.push({
        ...this.host.header(RecordType.LendPool, cmd.frontId, cmd.requestId, 0), lentUnits: Number(L), borrowedUnits: Number(B), borrowRate: Number(rate),
        lendRate: Number(this.lendRate(p, rate, B, L)), utilization: Number(L === 0n ? 0n : (B * ONE) / L),
        interestFeeUnits: Number(this.feeLine(p.assetId)), interestRoundingUnits: Number(this.roundingLine(p.assetId)),
        markTicks: mark?.ticks ?? 0, assetId: p.assetId, marketId: mark?.marketId ?? 0xffff,
        state: { Open: LendPoolStateCode.Open, Closed: LendPoolStateCode.Closed, RepayOnly: LendPoolStateCode.RepayOnly }[p.state],
      } as unknown as Rec);
    }
    this.host.result(cmd, ResultCode.Ok, ordered.length);
  }

  queryPositions(cmd: Command): void {
    if (!this.host.accountExists(cmd.accountId)) return this.host.result(cmd, ResultCode.UnknownAccount, 0);
    let count = 0;
    for (const asset of this.config.assets) {
      const lent = this.get(this.lent, cmd.accountId, asset.assetId);
      const borrowed = this.get(this.borrowed, cmd.accountId, asset.assetId);
      if (lent === 0 && borrowed === 0) continue;
      const mark = this.valuationMark(asset.assetId);
      const c = this.collateral(asset.assetId);
      const floor = ceil(ONE * 100n, BigInt(this.host.settings(cmd.accountId).leverage));
      const margin = borrowed > 0 && mark && c ? { imf: max(c.imf.base, floor), mmf: c.mmf.base } : {};
      this.moveRec(cmd, cmd.accountId, asset.assetId, BorrowLendEvent.Position, 0, 0n, margin);
      count++;
    }
    this.host.result(cmd, ResultCode.Ok, count);
  }

  /** A copy of the positions, the interest lines and the next hour (ModelLendingState). */
  exportState(): ModelLendingState {
    const keys = new Set([...this.lent.keys(), ...this.borrowed.keys()]);
    const positions: ModelLendingState['positions'] = [];
    for (const key of keys) {
      const [accountId, assetId] = key.split(':').map(Number);
      const lent = this.get(this.lent, accountId, assetId);
      const borrowed = this.get(this.borrowed, accountId, assetId);
      if (lent === 0 && borrowed === 0) continue;
      positions.push({ accountId, assetId, lent, borrowed, interest: this.get(this.interest, accountId, assetId), positionId: this.get(this.positionId, accountId, assetId) });
    }
    return { positions, fees: new Map(this.fees), rounding: new Map(this.rounding), interestDueUs: this.interestDue };
  }

  // The exchange's interest lines, kept as running sums of each hour's share and rounding.
  private readonly fees = new Map<number, bigint>();
  private readonly rounding = new Map<number, bigint>();

  private feeLine(assetId: number): bigint {
    return this.fees.get(assetId) ?? 0n;
  }

  private roundingLine(assetId: number): bigint {
    return this.rounding.get(assetId) ?? 0n;
  }
}
