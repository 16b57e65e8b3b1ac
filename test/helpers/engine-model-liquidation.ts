// The reference model's liquidation waterfall (engine/core/liquidation/), written the obvious way:
// when an account enters the liquidating state its open orders are cancelled and a step waits one
// interval of engine time; each step walks the liquidating accounts in id order: cancel, redeem
// lends (a lend the pool refuses is closed against the other borrowers of its asset, paid in USDC
// at mark) and repay from holdings, unwind the largest N·MMF borrow with one or two system IOC market
// orders, repay again, and, with nothing left to sell, cover the borrows from the insurance fund
// and socialize the rest. Perpetual positions: a bankrupt account's go to the fund and ADL; with
// backstop providers set, a solvent account below the Auto-Close MF (and a position the book could
// not take) goes to the providers first, each taking what its initial margin allows. The fund's
// lines are plain Maps; its records mirror the engine's.

import {
  BorrowLendEvent, DEFAULT_LIQUIDATION, ExpiryReason, FRONT_ID_NONE, HeaderFlag, OrderBookState, OrderEvent, OrderFlag, OrderStatus, RecordType, Side,
  type EngineConfig, type MarketSpec,
} from '../../engine/bus/types.js';
import type { Rec } from './engine-harness.js';
import type { ModelLending } from './engine-model-margin.js';

const ONE = 10n ** 12n;
const SLACK_BPS = 500n;
const LIQUIDATING = 16;

/** An open order as the waterfall needs to see it. */
export interface LiquidationOrder {
  accountId: number;
  market: MarketSpec;
  state: 'pending' | 'active' | 'resting';
}

/** What the waterfall reads and writes of the rest of the model. */
export interface LiquidationHost<O extends LiquidationOrder> {
  lending(): ModelLending;
  orders(): O[];
  cancelOpen(o: O, reason: ExpiryReason): void;
  orderRec(o: O, event: OrderEvent, status: OrderStatus, reason: ExpiryReason, frontId: number, requestId: number, flags: number): void;
  bal(accountId: number, assetId: number): { available: number; locked: number };
  balanceRec(accountId: number, assetId: number): void;
  push(rec: Rec): void;
  header(type: RecordType, frontId: number, requestId: number, flags: number): Record<string, number>;
  accountCount(): number;
  flags(accountId: number): number;
  timeUs(): number;
  bookState(market: MarketSpec): OrderBookState;
  /** Places and runs the account's system market order (quote limit for a spot bid, MAX_SAFE_INTEGER otherwise; a perpetual's reduce-only). */
  placeSystem(accountId: number, market: MarketSpec, side: Side, lots: number, quoteLimit: number): void;
  /** The account's perpetual positions (size ≠ 0), in market order. */
  positions(accountId: number): { market: MarketSpec; lots: number }[];
  /** A perpetual's mark as a unit price, or null. */
  perpMark(market: MarketSpec): { quoteUnits: bigint; baseUnits: bigint } | null;
  summary(accountId: number): { equity: bigint; ten: bigint; unpriced: boolean };
  perpLine(accountId: number, market: MarketSpec): { pnl: bigint; cost: bigint };
  /** The perpetual's holders, ascending. */
  holders(market: MarketSpec): number[];
  /** Closes the account's position at `ticks` against the ranked holders (engine adl.ts closeAgainst); the holders closed against. */
  adlClose(accountId: number, market: MarketSpec, ticks: number, ranked: { accountId: number; lots: number }[]): number[];
  trimReduceOnly(accountId: number, market: MarketSpec): void;
  /** The backstop liquidity providers, ascending. */
  providers(): readonly number[];
  /** The backstop's fills (engine backstop.ts fillProviders): each take closed against the account's position at `ticks`. */
  backstopClose(accountId: number, market: MarketSpec, ticks: number, takes: { accountId: number; lots: number }[]): void;
}

interface FundLines { fund: number; fees: number; covered: number; socialized: number; deposited: number }

const ceil = (a: bigint, b: bigint): bigint => (a + b - 1n) / b;

export class ModelLiquidation<O extends LiquidationOrder> {
  /** Engine time of the next step (-1: none waits). */
  due = -1;
  private stepping = false;
  private readonly lines = new Map<number, FundLines>();
  private readonly settings: typeof DEFAULT_LIQUIDATION;

  constructor(private readonly config: EngineConfig, private readonly host: LiquidationHost<O>) {
    this.settings = config.liquidation ?? DEFAULT_LIQUIDATION;
  }

  private line(assetId: number): FundLines {
    let line = this.lines.get(assetId);
    if (!line) this.lines.set(assetId, (line = { fund: 0, fees: 0, covered: 0, socialized: 0, deposited: 0 }));
    return line;
  }

  private insuranceRec(assetId: number): void {
    const l = this.line(assetId);
    this.host.push({
      ...this.host.header(RecordType.Insurance, FRONT_ID_NONE, 0, 0), fundUnits: l.fund, feesUnits: l.fees, coveredUnits: l.covered,
      socializedUnits: l.socialized, depositedUnits: l.deposited, assetId,
    } as unknown as Rec);
  }

  /** The liquidation fee of a system order's fill that paid `received` units; taken from the account. */
  fee(o: { accountId: number; flags: number }, assetId: number, received: number): number {
    // A spot order with Liquidation | Adl is a collateral conversion: no liquidation fee.
    if ((o.flags & (OrderFlag.Liquidation | OrderFlag.Adl)) !== OrderFlag.Liquidation) return 0;
    const fee = Number((BigInt(received) * BigInt(this.settings.feeBps)) / 10_000n);
    this.host.bal(o.accountId, assetId).available -= fee;
    this.line(assetId).fund += fee;
    this.line(assetId).fees += fee;
    return fee;
  }

  /** A liquidation order's perpetual fill (engine liquidation/fee.ts takePerpLiquidationFee): feeBps of the notional, as far as available USDC goes. */
  perpFee(accountId: number, assetId: number, notional: bigint): number {
    const due = Number((notional * BigInt(this.settings.feeBps)) / 10_000n);
    const fee = Math.min(due, this.host.bal(accountId, assetId).available);
    if (fee <= 0) return 0;
    this.host.bal(accountId, assetId).available -= fee;
    this.line(assetId).fund += fee;
    this.line(assetId).fees += fee;
    return fee;
  }

  enter(accountId: number): void {
    this.cancelAccountOrders(accountId);
    this.arm();
  }

  keep(): void {
    if (!this.stepping) this.arm();
  }

  private arm(): void {
    if (this.due < 0) this.due = this.host.timeUs() + this.settings.stepIntervalUs;
  }

  private liquidating(accountId: number): boolean {
    return (this.host.flags(accountId) & LIQUIDATING) !== 0;
  }

  private cancelAccountOrders(accountId: number): void {
    for (const o of this.host.orders().filter((x) => x.accountId === accountId && x.state !== 'active')) {
      const resting = o.state === 'resting';
      this.host.cancelOpen(o, ExpiryReason.Liquidation);
      if (resting) this.host.orderRec(o, OrderEvent.None, OrderStatus.Cancelled, ExpiryReason.Liquidation, FRONT_ID_NONE, 0, HeaderFlag.Last);
    }
  }

  /** The step is due. */
  step(): void {
    this.due = -1;
    this.stepping = true;
    let left = false;
    for (let accountId = 1; accountId <= this.host.accountCount(); accountId++) {
      if (!this.liquidating(accountId)) continue;
      this.stepAccount(accountId);
      if (this.liquidating(accountId)) left = true;
    }
    this.stepping = false;
    if (left) this.arm();
  }

  private still(accountId: number): boolean {
    this.host.lending().review(accountId);
    return this.liquidating(accountId);
  }

  private stepAccount(accountId: number): void {
    this.cancelAccountOrders(accountId);
    this.repay(accountId);
    if (!this.still(accountId)) return;
    if (this.positionsBankrupt(accountId)) {
      for (const { market } of this.host.positions(accountId)) this.deleverage(accountId, market);
      this.host.lending().review(accountId);
      return;
    }
    if (this.belowAutoClose(accountId)) {
      for (const { market } of this.host.positions(accountId)) this.backstop(accountId, market);
      this.host.lending().review(accountId);
      return;
    }
    const outcome = this.unwind(accountId);
    this.repay(accountId);
    if (!this.still(accountId)) return;
    if (outcome === 'unfilled') {
      this.backstop(accountId, this.largestPosition(accountId)!.market);
      this.host.lending().review(accountId);
    } else if (outcome === 'nothing') {
      this.bankrupt(accountId);
      this.host.lending().review(accountId);
    }
  }

  private positionsBankrupt(accountId: number): boolean {
    if (this.host.positions(accountId).length === 0) return false;
    const s = this.host.summary(accountId);
    return !s.unpriced && s.equity <= 0n;
  }

  /** Providers set and the account below the Auto-Close MF: equity × divisor < Σ N·MMF or equity < Σ N·MMF − offset × TEN (engine backstop.ts). */
  private belowAutoClose(accountId: number): boolean {
    if (this.host.providers().length === 0 || this.host.positions(accountId).length === 0) return false;
    const s = this.host.lending().summary(accountId);
    if (s.unpriced || s.ten <= 0n) return false;
    const divisor = BigInt(this.settings.autoCloseDivisor ?? 2);
    const offset = BigInt(this.settings.autoCloseOffsetE12 ?? 6_000_000_000);
    return s.equity * divisor < s.mmfUnits || s.equity * ONE < s.mmfUnits * ONE - offset * s.ten;
  }

  /** The position to the providers at mark, each as far as its initial margin allows, the rest to the fund and ADL (engine backstop.ts). */
  private backstop(accountId: number, market: MarketSpec): void {
    const mark = this.host.perpMark(market);
    const lots = this.size(accountId, market);
    if (mark && this.host.providers().length > 0) {
      const ticks = this.ticksAt(market, lots, mark, 0n);
      const takes: { accountId: number; lots: number }[] = [];
      let rest = Math.abs(lots);
      for (const provider of this.host.providers()) {
        if (rest === 0) break;
        if (provider === accountId || this.liquidating(provider)) continue;
        const taken = this.capacity(provider, market, lots > 0 ? 1 : -1, ticks, rest);
        if (taken === 0) continue;
        takes.push({ accountId: provider, lots: taken });
        rest -= taken;
      }
      if (takes.length > 0) {
        this.host.backstopClose(accountId, market, ticks, takes);
        for (const take of takes) this.host.trimReduceOnly(take.accountId, market);
        for (const take of takes) this.host.lending().review(take.accountId);
      }
    }
    if (this.size(accountId, market) !== 0) this.deleverage(accountId, market);
  }

  private size(accountId: number, market: MarketSpec): number {
    return this.host.positions(accountId).find((x) => x.market === market)?.lots ?? 0;
  }

  /** All of `most` when the provider passes with it, else the largest passing quantity a bisection over [0, most − 1] finds. */
  private capacity(provider: number, market: MarketSpec, sign: number, ticks: number, most: number): number {
    const passes = (lots: number): boolean => {
      const quote = BigInt(ticks) * BigInt(lots) * BigInt(market.quoteUnitsPerTickLot);
      const s = this.host.lending().summary(provider, -1, 0n, 0n, { marketId: market.marketId, side: Side.Bid, lots: 0, fillLots: sign * lots, fillCost: -BigInt(sign) * quote });
      return !s.unpriced && s.equity >= s.imfUnits;
    };
    if (passes(most)) return most;
    let [low, high] = [0, most - 1];
    while (low < high) {
      const mid = low + Math.ceil((high - low) / 2);
      if (passes(mid)) low = mid;
      else high = mid - 1;
    }
    return low;
  }

  /** The tick price where the account's equity after closing `lots` is max(equity, 0), in its favour, clamped (engine adl.ts bankruptcyTicks). */
  private ticksAt(market: MarketSpec, lots: number, mark: { quoteUnits: bigint; baseUnits: bigint }, equity: bigint): number {
    const size = BigInt(Math.abs(lots));
    const deficit = equity < 0n ? -equity : 0n;
    const value = size * mark.quoteUnits * BigInt(market.baseUnitsPerLot);
    const den = size * BigInt(market.quoteUnitsPerTickLot) * mark.baseUnits;
    const floorDiv = (a: bigint, b: bigint) => (a >= 0n ? a / b : -((-a + b - 1n) / b));
    const raw = lots > 0 ? ceil(value + deficit * mark.baseUnits, den) : floorDiv(value - deficit * mark.baseUnits, den);
    return Number(raw > BigInt(market.maxPriceTicks) ? BigInt(market.maxPriceTicks) : raw < BigInt(market.minPriceTicks) ? BigInt(market.minPriceTicks) : raw);
  }

  /** The fund, then ADL at the bankruptcy price (engine liquidation/adl.ts deleveragePosition). */
  private deleverage(accountId: number, market: MarketSpec): void {
    const mark = this.host.perpMark(market);
    const s = this.host.summary(accountId);
    if (!mark || s.unpriced) return;
    let equity = s.equity;
    const quote = market.quoteAssetId;
    if (equity < 0n) {
      const line = this.line(quote);
      const units = Number(-equity < BigInt(line.fund) ? -equity : BigInt(line.fund));
      if (units > 0) {
        line.fund -= units;
        line.covered += units;
        this.host.bal(accountId, quote).available += units;
        this.host.balanceRec(accountId, quote);
        this.insuranceRec(quote);
        equity += BigInt(units);
      }
    }
    const lots = this.size(accountId, market);
    const ticks = this.ticksAt(market, lots, mark, equity);
    const closed = this.host.adlClose(accountId, market, ticks, this.rank(accountId, market, lots > 0 ? -1 : 1));
    for (const counterparty of closed) this.host.trimReduceOnly(counterparty, market);
    for (const counterparty of closed) this.host.lending().review(counterparty);
  }

  /** Opposite-side holders: profitable first, then by (uPnL / |cost|) × TEN / max(equity, 1), highest first, then account id. */
  private rank(accountId: number, market: MarketSpec, sign: number): { accountId: number; lots: number }[] {
    const ranked: { accountId: number; lots: number; profitable: boolean; num: bigint; den: bigint }[] = [];
    for (const holder of this.host.holders(market)) {
      const lots = this.host.positions(holder).find((x) => x.market === market)?.lots ?? 0;
      if (holder === accountId || Math.sign(lots) !== sign) continue;
      const s = this.host.summary(holder);
      const { pnl, cost } = this.host.perpLine(holder, market);
      const entry = cost < 0n ? -cost : cost;
      const equity = s.equity > 1n ? s.equity : 1n;
      ranked.push({ accountId: holder, lots, profitable: pnl > 0n, num: pnl * s.ten, den: (entry > 0n ? entry : 1n) * equity });
    }
    return ranked.sort((a, b) => {
      if (a.profitable !== b.profitable) return a.profitable ? -1 : 1;
      const left = b.num * a.den;
      const right = a.num * b.den;
      return left > right ? 1 : left < right ? -1 : a.accountId - b.accountId;
    });
  }

  private repay(accountId: number): void {
    const lending = this.host.lending();
    for (const asset of this.config.assets) {
      const lent = lending.lentOf(accountId, asset.assetId);
      if (lent === 0) continue;
      if (lending.redeemFits(asset.assetId, lent)) lending.liquidationMove(accountId, asset.assetId, BorrowLendEvent.LendRedeem, lent);
      else lending.deleverageLend(accountId, asset.assetId);
    }
    for (const asset of this.config.assets) {
      const repaid = Math.min(lending.borrowedOf(accountId, asset.assetId), this.host.bal(accountId, asset.assetId).available);
      if (repaid > 0) lending.liquidationMove(accountId, asset.assetId, BorrowLendEvent.BorrowRepay, repaid);
    }
  }

  private usdcMarket(assetId: number): MarketSpec | undefined {
    return this.config.markets.find((m) => m.baseAssetId === assetId && m.quoteAssetId === this.config.margin!.valuationAssetId);
  }

  private takes(market: MarketSpec): boolean {
    const count = this.host.orders().filter((o) => o.market === market && o.state !== 'active').length;
    return this.host.bookState(market) === OrderBookState.Open && count < this.config.limits.maxOrdersPerBook;
  }

  /** The position with the largest N·MMF (factor-0 MMF), or none. */
  private largestPosition(accountId: number): { market: MarketSpec; lots: number; units: bigint } | null {
    let best: { market: MarketSpec; lots: number; units: bigint } | null = null;
    for (const { market, lots } of this.host.positions(accountId)) {
      const mark = this.host.perpMark(market);
      if (!mark) continue;
      const units = ceil(ceil(BigInt(Math.abs(lots)) * BigInt(market.baseUnitsPerLot) * mark.quoteUnits, mark.baseUnits) * market.perp!.mmf.base, ONE);
      if (!best || units > best.units) best = { market, lots, units };
    }
    return best;
  }

  /** A chunk of the position closed on the book (engine liquidation/perp-unwind.ts). */
  private closeChunk(accountId: number, target: { market: MarketSpec; lots: number }): 'placed' | 'blocked' | 'unfilled' {
    const market = target.market;
    const size = Math.abs(target.lots);
    const lots = Math.min(size, market.maxQtyLots, Math.max(market.minQtyLots, Number(ceil(BigInt(size) * BigInt(this.settings.chunkBps), 10_000n))));
    if (!this.takes(market)) return 'blocked';
    this.host.placeSystem(accountId, market, target.lots > 0 ? Side.Ask : Side.Bid, lots, Number.MAX_SAFE_INTEGER);
    const after = this.host.positions(accountId).find((x) => x.market === market)?.lots ?? 0;
    return after === target.lots ? 'unfilled' : 'placed';
  }

  private unwind(accountId: number): 'placed' | 'blocked' | 'nothing' | 'unfilled' {
    const position = this.largestPosition(accountId);
    const borrow = this.unwindTarget(accountId);
    if (position && position.units > borrow.units) return this.closeChunk(accountId, position);
    if (borrow.assetId < 0) return 'blocked';
    const outcome = this.unwindBorrow(accountId, borrow.assetId);
    if (outcome === 'nothing' && position) return this.closeChunk(accountId, position);
    return outcome;
  }

  /** The borrow with the largest N·MMF (asset -1 and units -1 when none has a mark). */
  private unwindTarget(accountId: number): { assetId: number; units: bigint } {
    const lending = this.host.lending();
    let target = -1;
    let best = -1n;
    for (const asset of this.config.assets) {
      const borrowed = lending.borrowedOf(accountId, asset.assetId);
      const mark = borrowed > 0 ? lending.markOf(asset.assetId) : null;
      const c = lending.collateralOf(asset.assetId);
      if (!mark || !c) continue;
      const units = ceil(ceil(BigInt(borrowed) * mark.quoteUnits, mark.baseUnits) * c.mmf.base, ONE);
      if (units > best) [target, best] = [asset.assetId, units];
    }
    return { assetId: target, units: best };
  }

  private unwindBorrow(accountId: number, target: number): 'placed' | 'blocked' | 'nothing' {
    const lending = this.host.lending();
    const valuation = this.config.margin!.valuationAssetId;
    const chunk = ceil(BigInt(lending.borrowedOf(accountId, target)) * BigInt(this.settings.chunkBps), 10_000n);
    if (target === valuation) return this.sell(accountId, chunk);
    const market = this.usdcMarket(target);
    const mark = lending.markOf(target);
    if (!market || !mark) return 'blocked';
    const lot = BigInt(market.baseUnitsPerLot);
    const lots = Math.min(market.maxQtyLots, Math.max(market.minQtyLots, Number(ceil(chunk, lot))));
    const cost = ceil(ceil(BigInt(lots) * lot * mark.quoteUnits, mark.baseUnits) * (10_000n + SLACK_BPS), 10_000n);
    const usdc = BigInt(this.host.bal(accountId, valuation).available);
    let sold: 'placed' | 'blocked' | 'nothing' = 'nothing';
    if (usdc < cost) sold = this.sell(accountId, cost - usdc);
    const minimum = ceil(BigInt(market.minQtyLots) * lot * mark.quoteUnits, mark.baseUnits);
    const available = this.host.bal(accountId, valuation).available;
    if (BigInt(available) < minimum) return sold;
    if (!this.takes(market)) return 'blocked';
    this.host.placeSystem(accountId, market, Side.Bid, lots, Math.min(available, market.maxPriceTicks * lots * market.quoteUnitsPerTickLot));
    return 'placed';
  }

  private sell(accountId: number, quote: bigint): 'placed' | 'blocked' | 'nothing' {
    const lending = this.host.lending();
    const valuation = this.config.margin!.valuationAssetId;
    let choice: { market: MarketSpec; q: bigint; b: bigint } | undefined;
    let best = -1n;
    for (const asset of this.config.assets) {
      if (asset.assetId === valuation || lending.borrowedOf(accountId, asset.assetId) > 0) continue;
      const market = this.usdcMarket(asset.assetId);
      const available = this.host.bal(accountId, asset.assetId).available;
      if (!market || available < market.minQtyLots * market.baseUnitsPerLot) continue;
      const mark = lending.markOf(asset.assetId);
      if (!mark) continue;
      const notional = (BigInt(available) * mark.quoteUnits) / mark.baseUnits;
      if (notional > best) [choice, best] = [{ market, q: mark.quoteUnits, b: mark.baseUnits }, notional];
    }
    if (!choice) return 'nothing';
    const market = choice.market;
    const lotValue = (BigInt(market.baseUnitsPerLot) * choice.q) / choice.b;
    const wanted = lotValue === 0n ? BigInt(market.minQtyLots) : ceil(ceil(quote * (10_000n + SLACK_BPS), 10_000n), lotValue);
    const held = Math.floor(this.host.bal(accountId, market.baseAssetId).available / market.baseUnitsPerLot);
    const lots = Math.min(market.maxQtyLots, held, Math.max(market.minQtyLots, Number(wanted > BigInt(held) ? BigInt(held) : wanted)));
    if (!this.takes(market)) return 'blocked';
    this.host.placeSystem(accountId, market, Side.Ask, lots, Number.MAX_SAFE_INTEGER);
    return 'placed';
  }

  private bankrupt(accountId: number): void {
    const lending = this.host.lending();
    for (const asset of this.config.assets) {
      const id = asset.assetId;
      const available = this.host.bal(accountId, id).available;
      const borrowed = lending.borrowedOf(accountId, id);
      if (available === 0 && borrowed === 0) continue;
      const line = this.line(id);
      if (available > 0) {
        this.host.bal(accountId, id).available = 0;
        line.fund += available;
        this.host.balanceRec(accountId, id);
      }
      if (borrowed > 0) {
        const covered = Math.min(borrowed, line.fund);
        line.fund -= covered;
        line.covered += covered;
        line.socialized += borrowed - covered;
        lending.closeBankruptBorrow(accountId, id, covered);
      }
      this.insuranceRec(id);
    }
  }
}
