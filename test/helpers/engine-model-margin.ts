// The reference model's borrow/lend (engine/core/margin/pools.ts and borrow-lend.ts), written the
// obvious way: positions in Maps keyed by "account:asset", every rate and interest an exact
// rational rounded once with bigint division, the margin test summed asset by asset. It supports
// what the random streams configure: identity haircuts and margin functions without a square-root
// term (factor 0), which it checks.

import {
  BorrowLendEvent, BorrowLendSide, FRONT_ID_NONE, LendPoolStateCode, RecordType, ResultCode, type CommandSlot as Command, type EngineConfig, type MarketSpec,
} from '../../engine/bus/types.js';
import type { CollateralSpec, LendPoolSpec } from '../../engine/bus/margin-params.js';
import type { Rec } from './engine-harness.js';

const ONE = 10n ** 12n;
const HOUR_MS = 3_600_000n;
const YEAR_MS = 31_536_000_000n;
export const MODEL_HOUR_US = 3_600_000_000;
/** The engine's leverage limit for a borrow's IMF until accounts carry one: 100×. */
const LEVERAGE_FLOOR = (ONE * 100n + 9_999n) / 10_000n;

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
}

interface Mark {
  quoteUnits: bigint;
  baseUnits: bigint;
  ticks: number;
  marketId: number;
}

const ceil = (a: bigint, b: bigint): bigint => (a + b - 1n) / b;

export class ModelLending {
  private readonly lent = new Map<string, number>();
  private readonly borrowed = new Map<string, number>();
  private readonly interest = new Map<string, number>();
  private readonly positionId = new Map<string, number>();
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

  private mark(assetId: number): Mark | null {
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

  private moveRec(cmd: Command | null, accountId: number, assetId: number, event: BorrowLendEvent, quantity: number, rate: bigint, extra: { imf?: bigint; mmf?: bigint } = {}): void {
    const mark = this.mark(assetId);
    this.host.push({
      ...this.host.header(RecordType.BorrowLend, cmd?.frontId ?? FRONT_ID_NONE, cmd?.requestId ?? 0, 0),
      quantityUnits: quantity, lentUnits: this.get(this.lent, accountId, assetId), borrowedUnits: this.get(this.borrowed, accountId, assetId),
      interestUnits: this.get(this.interest, accountId, assetId), positionId: this.get(this.positionId, accountId, assetId), rate: Number(rate),
      markTicks: mark?.ticks ?? 0, imf: Number(extra.imf ?? 0n), mmf: Number(extra.mmf ?? 0n), accountId, assetId, marketId: mark?.marketId ?? 0xffff, event,
    } as unknown as Rec);
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

  /** Whether the account borrows anything. */
  borrowsAnything(accountId: number): boolean {
    return [...this.borrowed].some(([key, value]) => key.startsWith(`${accountId}:`) && value > 0);
  }

  /** netEquity ≥ Σ N·IMF with `held` more of `assetId` held and `owed` more borrowed. */
  marginCode(accountId: number, assetId: number, heldDelta: bigint, owedDelta: bigint): ResultCode {
    let equity = 0n;
    let required = 0n;
    for (const asset of this.config.assets) {
      const changed = asset.assetId === assetId;
      const b = this.host.bal(accountId, asset.assetId);
      const held = BigInt(b.available) + BigInt(b.locked) + (changed ? heldDelta : 0n) + BigInt(this.get(this.lent, accountId, asset.assetId));
      const owed = BigInt(this.get(this.borrowed, accountId, asset.assetId)) + (changed ? owedDelta : 0n);
      if (held + owed === 0n) continue;
      const mark = this.mark(asset.assetId);
      if (!mark) {
        if (owed > 0n) return ResultCode.BorrowNoMarkPrice;
        continue;
      }
      const c = this.collateral(asset.assetId);
      const weight = c?.haircut.weight ?? 0n;
      const liability = ceil(owed * mark.quoteUnits, mark.baseUnits);
      equity += (held * mark.quoteUnits * weight) / (mark.baseUnits * ONE) - liability;
      if (owed > 0n) required += ceil(liability * (c!.imf.base > LEVERAGE_FLOOR ? c!.imf.base : LEVERAGE_FLOOR), ONE);
    }
    return equity >= required ? ResultCode.Ok : ResultCode.InsufficientMargin;
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
      const code = !onStep ? ResultCode.BorrowLendQuantityInvalid : !open ? ResultCode.LendPoolNotOpen : available < qty ? ResultCode.InsufficientFunds
        : L + q > p.openBorrowLendLimitUnits ? ResultCode.LendLimit : ResultCode.Ok;
      return { event: BorrowLendEvent.Lend, code };
    }
    if (lent > 0) {
      if (qty > lent) return { event: BorrowLendEvent.LendRedeem, code: ResultCode.BorrowRequiresLendRedeem };
      const fits = B === 0n || (L - q > 0n && B * ONE <= p.maxUtilization * (L - q));
      return { event: BorrowLendEvent.LendRedeem, code: fits ? ResultCode.Ok : ResultCode.InsufficientSupply };
    }
    if (!onStep) return { event: BorrowLendEvent.Borrow, code: ResultCode.BorrowLendQuantityInvalid };
    if (!open) return { event: BorrowLendEvent.Borrow, code: ResultCode.LendPoolNotOpen };
    if (B + q > p.openBorrowLendLimitUnits) return { event: BorrowLendEvent.Borrow, code: ResultCode.BorrowLimit };
    if (L === 0n || (B + q) * ONE > p.maxUtilization * L) return { event: BorrowLendEvent.Borrow, code: ResultCode.InsufficientSupply };
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
    const b = this.host.bal(accountId, assetId);
    if (event === BorrowLendEvent.Lend || event === BorrowLendEvent.BorrowRepay) b.available -= qty;
    else b.available += qty;
    if (event === BorrowLendEvent.Lend) this.change(this.lent, accountId, assetId, qty);
    if (event === BorrowLendEvent.LendRedeem) this.change(this.lent, accountId, assetId, -qty);
    if (event === BorrowLendEvent.Borrow) this.change(this.borrowed, accountId, assetId, qty);
    if (event === BorrowLendEvent.BorrowRepay) this.change(this.borrowed, accountId, assetId, -qty);
    if (this.interestDue < 0 && this.anyPosition()) this.interestDue = Math.floor(this.host.timeUs() / MODEL_HOUR_US) * MODEL_HOUR_US + MODEL_HOUR_US;
    this.moveRec(cmd, accountId, assetId, event, qty, 0n);
    this.host.balanceRec(accountId, assetId);
    this.host.result(cmd, ResultCode.Ok, this.get(this.lent, accountId, assetId) - this.get(this.borrowed, accountId, assetId));
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
        this.moveRec(null, accountId, p.assetId, owed > 0n ? BorrowLendEvent.BorrowInterest : BorrowLendEvent.LendInterest, Number(units), owed > 0n ? rate : earnRate);
      }
      const share = (p.fee * B * rate * HOUR_MS) / (ONE * ONE * YEAR_MS);
      this.fees.set(p.assetId, this.feeLine(p.assetId) + share);
      this.rounding.set(p.assetId, this.roundingLine(p.assetId) + paid - share);
    }
    if (this.anyPosition()) this.interestDue = due + MODEL_HOUR_US;
  }

  queryPools(cmd: Command): void {
    const pools = this.config.margin?.lendPools ?? [];
    const ordered = this.config.assets.map((a) => pools.find((p) => p.assetId === a.assetId)).filter((p): p is LendPoolSpec => p !== undefined);
    for (const p of ordered) {
      const B = this.total(this.borrowed, p.assetId);
      const L = this.total(this.lent, p.assetId);
      const rate = this.borrowRate(p, B, L);
      const mark = this.mark(p.assetId);
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
      const mark = this.mark(asset.assetId);
      const c = this.collateral(asset.assetId);
      const margin = borrowed > 0 && mark && c ? { imf: c.imf.base > LEVERAGE_FLOOR ? c.imf.base : LEVERAGE_FLOOR, mmf: c.mmf.base } : {};
      this.moveRec(cmd, cmd.accountId, asset.assetId, BorrowLendEvent.Position, 0, 0n, margin);
      count++;
    }
    this.host.result(cmd, ResultCode.Ok, count);
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
