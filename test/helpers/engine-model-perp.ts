// The reference model's perpetuals (engine/core/perp/), written the obvious way: positions in a
// Map keyed by "account:market", every amount a bigint, the claim queue an array of keys, the
// settlement line a Map by asset id. Same rules as the engine's headers: cost C per position (a
// fill adds −notional to the buyer's, +notional to the seller's), a reduction realizes
// floor(C·r/|L|) plus the fill's cost of the r lots, fees (the market's maker/taker bps of the
// notional, rounded down) from available USDC or owed, losses into the line or owed, profits out
// of the line or queued as claims, debts paid at the account's next fill and quote deposit, claims
// paid oldest first whenever the line holds units; admission by the worst-side exposure's IMF;
// positions valued at the perpetual's mark (engine-model-funding.ts: index + EWMA, the book, the
// stale index); funding payments rounded up for payers and down for receivers, moved as realized
// PnL, each open position summing its own. It supports factor-0 margin functions only, as the
// margin model does.

import { FRONT_ID_NONE, MarkPriceSource, RecordType, ResultCode, Side, type CommandSlot as Command, type EngineConfig, type MarketSpec } from '../../engine/bus/types.js';
import type { Rec } from './engine-harness.js';
import { ModelMarks, type MarksHost } from './engine-model-funding.js';

const ONE = 10n ** 12n;
const WIDE = 2n ** 53n;
const ceil = (a: bigint, b: bigint): bigint => (a > 0n ? (a + b - 1n) / b : a / b);
const floor = (a: bigint, b: bigint): bigint => (a >= 0n ? a / b : -((-a + b - 1n) / b));
const max = (a: bigint, b: bigint): bigint => (a > b ? a : b);

interface Position {
  lots: number;
  cost: bigint;
  /** The entry cost (perp/positions.ts entryCost): cost as the fills made it, not moved by realization at mark. */
  entry: bigint;
  realized: bigint;
  fees: bigint;
  unsettled: bigint;
  feeDebt: bigint;
  positionId: number;
  /** Funding paid (< 0) or received since it opened. */
  funding: bigint;
}

/** What the perpetuals model reads and writes of the rest of the model. */
export interface PerpHost {
  header(type: RecordType, frontId: number, requestId: number, flags: number): Record<string, number>;
  push(rec: Rec): void;
  result(cmd: Command, code: ResultCode, value: number): void;
  bal(accountId: number, assetId: number): { available: number; locked: number };
  balanceRec(accountId: number, assetId: number): void;
  collectFee(assetId: number, units: number): void;
  accountExists(accountId: number): boolean;
  /** Remaining lots of the account's open orders in the market, by side. */
  openLots(accountId: number, marketId: number): [number, number];
  guardTicks(market: MarketSpec): number;
  timeUs(): number;
  index(assetId: number): { priceE9: number; timeUs: number } | undefined;
  leverage(accountId: number): number;
  /** The account's margin summary with an order not yet placed (engine-model-margin.ts). */
  summary(accountId: number, change: PerpOrderChange | null): { equity: bigint; imfUnits: bigint; mmfUnits: bigint; unpriced: boolean };
  /** With autoBorrowSettlements: `owed` units of the asset redeemed and borrowed into available, all or nothing; whether it was. */
  fundSettlement(accountId: number, assetId: number, owed: number): boolean;
  /** The account is left owing: its collateral converts at the end of the command (engine-model.ts convert). */
  owes(accountId: number): void;
  accountCount(): number;
  book: MarksHost['book'];
  /** Re-checks one account's liquidating state (engine-model-margin.ts review). */
  review(accountId: number): void;
  /** A liquidation order's perpetual fill: its liquidation fee of `notional` from available USDC, as far as it goes; the units taken. */
  liquidationFee(accountId: number, assetId: number, notional: bigint): number;
}

export interface PerpOrderChange {
  marketId: number;
  side: Side;
  lots: number;
  /** A fill not yet made, counted as made (a backstop provider's check): lots more (signed) in the position, and its cost's change. */
  fillLots?: number;
  fillCost?: bigint;
}

export interface PerpExposure {
  notional: bigint;
  imf: bigint;
  mmf: bigint;
}

interface PerpMark {
  quoteUnits: bigint;
  baseUnits: bigint;
  source: number;
}

interface PerpLine {
  market: MarketSpec;
  position: Position;
  lots: number;
  mark: PerpMark | null;
  pnl: bigint;
  unsettled: bigint;
  exposureLots: number;
  exposure: PerpExposure;
}

export class ModelPerp {
  private readonly positions = new Map<string, Position>();
  private readonly claims: string[] = [];
  private readonly line = new Map<number, number>();
  private lastPositionId = 0;
  /** Mark prices and funding (engine-model-funding.ts). */
  readonly marks: ModelMarks;

  constructor(private readonly config: EngineConfig, private readonly host: PerpHost) {
    this.marks = new ModelMarks(config, {
      header: (type, frontId, requestId, flags) => host.header(type, frontId, requestId, flags),
      push: (rec) => host.push(rec),
      result: (cmd, code, value) => host.result(cmd, code, value),
      timeUs: () => host.timeUs(),
      index: (assetId) => host.index(assetId),
      book: (market) => host.book(market),
      payFunding: (market, rateE12, markE9, endUs) => this.payFunding(market, rateE12, markE9, endUs),
      openInterestUnits: (market) => this.openInterestLots(market.marketId) * market.baseUnitsPerLot,
      reviewHolders: (market) => this.reviewHolders(market),
    });
    for (const m of this.perpMarkets()) {
      if (m.perp!.imf.factor !== 0n || m.perp!.mmf.factor !== 0n) throw new Error('the perpetuals model supports factor-0 margin functions only');
    }
  }

  isPerp(market: MarketSpec): boolean {
    return market.perp !== undefined;
  }

  private perpMarkets(): MarketSpec[] {
    return this.config.markets.filter((m) => m.perp !== undefined);
  }

  private pos(accountId: number, marketId: number): Position {
    const key = `${accountId}:${marketId}`;
    let p = this.positions.get(key);
    if (!p) this.positions.set(key, (p = { lots: 0, cost: 0n, entry: 0n, realized: 0n, fees: 0n, unsettled: 0n, feeDebt: 0n, positionId: 0, funding: 0n }));
    return p;
  }

  private isOpen(p: Position): boolean {
    return p.lots !== 0 || p.unsettled !== 0n || p.feeDebt !== 0n;
  }

  /** Whether the account has a perpetual position or an unsettled amount (a withdrawal then needs the margin test). */
  hasPosition(accountId: number): boolean {
    return this.perpMarkets().some((m) => this.isOpen(this.pos(accountId, m.marketId)));
  }

  /** Whether the account has a position or open orders in a perpetual on the asset (engine/core/perp/exposure.ts followsUnderlying). */
  followsUnderlying(accountId: number, assetId: number): boolean {
    return this.perpMarkets().some((m) => {
      if (m.baseAssetId !== assetId) return false;
      const [bids, asks] = this.host.openLots(accountId, m.marketId);
      return (this.positions.get(`${accountId}:${m.marketId}`)?.lots ?? 0) !== 0 || bids + asks > 0;
    });
  }

  /** The accounts with a position in the perpetual, ascending. */
  holders(marketId: number): number[] {
    const out: number[] = [];
    for (const [key, p] of this.positions) if (p.lots !== 0 && Number(key.split(':')[1]) === marketId) out.push(Number(key.split(':')[0]));
    return out.sort((a, b) => a - b);
  }

  /** Whether the account holds a perpetual position (size ≠ 0). */
  holdsPosition(accountId: number): boolean {
    return this.perpMarkets().some((m) => this.size(accountId, m.marketId) !== 0);
  }

  /** The perpetual's mark can have moved: its holders' liquidating state re-checked (margin/liquidating.ts reviewPositionHoldersOf). */
  reviewHolders(market: MarketSpec): void {
    for (const accountId of this.holders(market.marketId)) this.host.review(accountId);
  }

  /** SetIndexPrice of an asset: the holders of every perpetual on it, in market order. */
  reviewUnderlying(assetId: number): void {
    for (const m of this.perpMarkets()) if (m.baseAssetId === assetId) this.reviewHolders(m);
  }

  /** A position's uPnL at mark and its cost (ADL ranking). */
  lineFigures(accountId: number, market: MarketSpec): { pnl: bigint; cost: bigint } {
    const line = this.terms(accountId, null).lines.find((l) => l.market === market);
    return { pnl: line?.pnl ?? 0n, cost: this.pos(accountId, market.marketId).cost };
  }

  /** The account's positions (size ≠ 0), in market order. */
  positionsOf(accountId: number): { market: MarketSpec; lots: number }[] {
    return this.perpMarkets().map((market) => ({ market, lots: this.size(accountId, market.marketId) })).filter((x) => x.lots !== 0);
  }

  /** The perpetual's mark as a unit price (quote units per base unit), or null. */
  unitMark(market: MarketSpec): { quoteUnits: bigint; baseUnits: bigint } | null {
    return this.mark(market);
  }

  /** The account's signed position in lots. */
  size(accountId: number, marketId: number): number {
    return this.pos(accountId, marketId).lots;
  }

  /** Σ long lots of the perpetual (its open interest). */
  openInterestLots(marketId: number): number {
    let lots = 0;
    for (const [key, p] of this.positions) if (Number(key.split(':')[1]) === marketId && p.lots > 0) lots += p.lots;
    return lots;
  }

  /**
   * Whether a fill of `lots` would raise the perpetual's open interest past its limit
   * (perp/open-interest.ts), the sizes moved by `moved` (a fill-or-kill walk's earlier fills).
   */
  beyondLimit(market: MarketSpec, buyer: number, seller: number, lots: number, moved: Map<number, number>, priceTicks: number): boolean {
    const size = (accountId: number) => this.size(accountId, market.marketId) + (moved.get(accountId) ?? 0);
    const change = Math.max(size(buyer) + lots, 0) - Math.max(size(buyer), 0) + Math.max(size(seller) - lots, 0) - Math.max(size(seller), 0);
    if (change > 0) {
      let open = this.openInterestLots(market.marketId);
      for (const [accountId, delta] of moved) open += Math.max(this.size(accountId, market.marketId) + delta, 0) - Math.max(this.size(accountId, market.marketId), 0);
      if ((open + change) * market.baseUnitsPerLot > market.perp!.openInterestLimitUnits) return true;
    }
    return this.beyondPositionLimit(market, buyer, size(buyer), lots, priceTicks) || this.beyondPositionLimit(market, seller, size(seller), -lots, priceTicks);
  }

  /**
   * Whether the account, of size `before` in `market`, moving `delta` lots at `priceTicks`, raises
   * |size| and ends above its position limit (perp/position-limit.ts): Σ |size|·price·weight, each
   * term rounded up, the fill's market at the fill price and the others at their mark (none: 0).
   */
  private beyondPositionLimit(market: MarketSpec, accountId: number, before: number, delta: number, priceTicks: number): boolean {
    const limit = this.config.positionLimitUnits;
    const after = before + delta;
    if (limit === undefined || Math.abs(after) <= Math.abs(before)) return false;
    const own = ceil(BigInt(Math.abs(after)) * BigInt(priceTicks) * BigInt(market.quoteUnitsPerTickLot) * this.limitWeight(market), ONE);
    return this.othersAtMark(accountId, market) + own > BigInt(limit);
  }

  /** The admission's position limit (perp/position-limit.ts admitPositionLimit): the position after the whole order at the mark (none: passes). */
  private admissionBeyondLimit(accountId: number, market: MarketSpec, side: Side, lots: number): boolean {
    const limit = this.config.positionLimitUnits;
    const before = this.size(accountId, market.marketId);
    const after = side === Side.Bid ? before + lots : before - lots;
    if (limit === undefined || Math.abs(after) <= Math.abs(before)) return false;
    const mark = this.mark(market);
    if (mark === null) return false;
    const own = ceil(BigInt(Math.abs(after)) * BigInt(market.baseUnitsPerLot) * mark.quoteUnits * this.limitWeight(market), mark.baseUnits * ONE);
    return this.othersAtMark(accountId, market) + own > BigInt(limit);
  }

  private limitWeight(market: MarketSpec): bigint {
    return market.perp!.positionLimitWeight ?? ONE;
  }

  /** Σ over the account's other perpetuals of |size|·mark·weight, each rounded up (no mark: 0). */
  private othersAtMark(accountId: number, market: MarketSpec): bigint {
    let total = 0n;
    for (const m of this.perpMarkets()) {
      const lots = this.size(accountId, m.marketId);
      const mark = m === market || lots === 0 ? null : this.mark(m);
      if (mark !== null) total += ceil(BigInt(Math.abs(lots)) * BigInt(m.baseUnitsPerLot) * mark.quoteUnits * this.limitWeight(m), mark.baseUnits * ONE);
    }
    return total;
  }

  lineUnits(assetId: number): number {
    return this.line.get(assetId) ?? 0;
  }

  private decimals(assetId: number): number {
    return this.config.assets.find((a) => a.assetId === assetId)!.decimals;
  }

  /** The perpetual's mark as a unit price (perp/mark.ts): the venue's mark, its source as margin's (Index 2, Book 3, Stale 4), or none. */
  private mark(market: MarketSpec, nowUs = this.host.timeUs()): PerpMark | null {
    if (this.config.margin === undefined) return null;
    const mark = this.marks.markAt(market, nowUs);
    if (mark.source === MarkPriceSource.None || mark.markE9 <= 0n) return null;
    const source = mark.source === MarkPriceSource.Ewma || mark.source === MarkPriceSource.Index ? 2 : mark.source === MarkPriceSource.StaleIndex ? 4 : 3;
    return { quoteUnits: mark.markE9 * 10n ** BigInt(this.decimals(market.quoteAssetId)), baseUnits: 10n ** 9n * 10n ** BigInt(this.decimals(market.baseAssetId)), source };
  }

  /**
   * Realization at mark (perp/realize.ts): per perpetual in market order, each open position in
   * account order moves floor(size·mark) + C into USDC as a fill's realized PnL settles; a loser
   * then covers a debt by autoBorrowSettlements and gets a Balance; then the claims are paid.
   */
  /** The realization timer's due time (perp/realize.ts), -1 while off or before the first command. */
  realizeDue = -1;

  /** Every command: realization on and not waiting yet, the first multiple of its interval after `nowUs`. */
  armRealize(nowUs: number): void {
    const interval = this.config.realizePnlIntervalUs ?? 0;
    if (interval === 0 || this.realizeDue >= 0 || this.perpMarkets().length === 0) return;
    this.realizeDue = Math.floor(nowUs / interval) * interval + interval;
  }

  /** The realization timer ran within the command at `nowUs`: realize, then wait for the multiple after `nowUs`. */
  runRealize(nowUs: number): void {
    const interval = this.config.realizePnlIntervalUs!;
    this.realize(this.realizeDue);
    this.realizeDue = Math.floor(nowUs / interval) * interval + interval;
  }

  private realize(dueUs: number): void {
    for (const market of this.perpMarkets()) {
      const mark = this.mark(market, dueUs);
      if (!mark) continue;
      const quote = market.quoteAssetId;
      for (let accountId = 1; accountId <= this.host.accountCount(); accountId++) {
        const p = this.positions.get(`${accountId}:${market.marketId}`);
        if (!p || p.lots === 0) continue;
        const realized = floor(BigInt(p.lots) * BigInt(market.baseUnitsPerLot) * mark.quoteUnits, mark.baseUnits) + p.cost;
        if (realized === 0n) continue;
        p.cost -= realized;
        p.realized += realized;
        if (realized > 0n) {
          p.unsettled += realized;
          this.sync(`${accountId}:${market.marketId}`, p);
        } else {
          const paid = this.take(accountId, quote, -realized);
          this.toLine(accountId, quote, paid);
          p.unsettled += realized + BigInt(paid);
          this.sync(`${accountId}:${market.marketId}`, p);
          const owed = p.feeDebt + (p.unsettled < 0n ? -p.unsettled : 0n);
          if (owed > 0n) this.fundDebts(accountId, market, owed);
          this.host.balanceRec(accountId, quote);
        }
        this.report(accountId, market, 2);
      }
      this.payClaims(quote);
    }
  }

  /** Funding at an interval end (perp/funding-payments.ts): each open position, in account order, pays or receives rate × size × mark. */
  private payFunding(market: MarketSpec, rateE12: bigint, markE9: bigint, endUs: number): void {
    if (rateE12 === 0n || markE9 <= 0n) return;
    const quote = market.quoteAssetId;
    const perLot = rateE12 * BigInt(market.baseUnitsPerLot) * markE9 * 10n ** BigInt(this.decimals(quote));
    const denominator = ONE * 10n ** 9n * 10n ** BigInt(this.decimals(market.baseAssetId));
    for (let accountId = 1; accountId <= this.host.accountCount(); accountId++) {
      const p = this.positions.get(`${accountId}:${market.marketId}`);
      if (!p || p.lots === 0) continue;
      const exact = perLot * BigInt(p.lots);
      const payment = exact >= 0n ? (exact + denominator - 1n) / denominator : -(-exact / denominator);
      if (payment === 0n) continue;
      if (payment > 0n) {
        const paid = this.take(accountId, quote, payment);
        this.toLine(accountId, quote, paid);
        p.unsettled += BigInt(paid) - payment;
        const owed = p.feeDebt + (p.unsettled < 0n ? -p.unsettled : 0n);
        if (owed > 0n) this.fundDebts(accountId, market, owed);
      } else {
        p.unsettled -= payment;
      }
      this.sync(`${accountId}:${market.marketId}`, p);
      p.funding -= payment;
      this.host.push({
        ...this.host.header(RecordType.FundingPayment, FRONT_ID_NONE, 0, 0), quantityUnits: Number(-payment), intervalEndUs: endUs, fundingRateE12: Number(rateE12),
        positionLots: p.lots, accountId, marketId: market.marketId,
      } as Rec);
      if (payment > 0n) this.host.balanceRec(accountId, quote);
      this.report(accountId, market, 2);
    }
    this.payClaims(quote);
  }

  private lineOf(accountId: number, market: MarketSpec, change: PerpOrderChange | null): PerpLine | null {
    const p = this.pos(accountId, market.marketId);
    let [bids, asks] = this.host.openLots(accountId, market.marketId);
    const changed = change !== null && change.marketId === market.marketId;
    if (changed) {
      if (change.side === Side.Bid) bids += change.lots;
      else asks += change.lots;
    }
    const fillLots = changed ? change.fillLots ?? 0 : 0;
    if (!this.isOpen(p) && bids === 0 && asks === 0 && fillLots === 0) return null;
    const lots = p.lots + fillLots;
    const cost = p.cost + (changed ? change.fillCost ?? 0n : 0n);
    const mark = this.mark(market);
    const exposureLots = Math.max(Math.abs(lots + bids), Math.abs(lots - asks));
    const line: PerpLine = { market, position: p, lots, mark, pnl: 0n, unsettled: p.unsettled - p.feeDebt, exposureLots, exposure: { notional: 0n, imf: 0n, mmf: 0n } };
    if (!mark) return line;
    line.pnl = floor(BigInt(lots) * BigInt(market.baseUnitsPerLot) * mark.quoteUnits, mark.baseUnits) + cost;
    if (exposureLots === 0) return line;
    const notional = ceil(BigInt(exposureLots) * BigInt(market.baseUnitsPerLot) * mark.quoteUnits, mark.baseUnits);
    const leverageFloor = ceil(ONE * 100n, BigInt(this.host.leverage(accountId)));
    line.exposure = { notional, imf: max(market.perp!.imf.base, leverageFloor), mmf: market.perp!.mmf.base };
    return line;
  }

  /** What the account's perpetuals add to its margin summary. */
  terms(accountId: number, change: PerpOrderChange | null): { pnl: bigint; unsettled: bigint; exposures: PerpExposure[]; unpriced: boolean; lines: PerpLine[] } {
    const out = { pnl: 0n, unsettled: 0n, exposures: [] as PerpExposure[], unpriced: false, lines: [] as PerpLine[] };
    for (const market of this.perpMarkets()) {
      const line = this.lineOf(accountId, market, change);
      if (!line) continue;
      out.lines.push(line);
      out.pnl += line.pnl;
      out.unsettled += line.unsettled;
      if (!line.mark && (line.lots !== 0 || line.exposureLots !== 0)) out.unpriced = true;
      if (line.exposure.notional > 0n) out.exposures.push(line.exposure);
    }
    return out;
  }

  /** Admission of `lots` on `side` (perp/hold.ts): spot margin flags refused, then the worst-side exposure and the IMF test. */
  admission(accountId: number, market: MarketSpec, side: Side, lots: number): ResultCode {
    if (this.admissionBeyondLimit(accountId, market, side, lots)) return ResultCode.PositionLimit;
    const size = this.pos(accountId, market.marketId).lots;
    const [bids, asks] = this.host.openLots(accountId, market.marketId);
    const before = Math.max(Math.abs(size + bids), Math.abs(size - asks));
    const after = side === Side.Bid ? Math.max(Math.abs(size + bids + lots), Math.abs(size - asks)) : Math.max(Math.abs(size + bids), Math.abs(size - asks - lots));
    if (after <= before) return ResultCode.Ok;
    const s = this.host.summary(accountId, { marketId: market.marketId, side, lots });
    if (s.unpriced) return ResultCode.InsufficientMargin;
    return s.equity >= s.imfUnits ? ResultCode.Ok : ResultCode.InsufficientMargin;
  }

  private take(accountId: number, assetId: number, units: bigint): number {
    const available = this.host.bal(accountId, assetId).available;
    return Number(units < BigInt(available) ? units : BigInt(available));
  }

  private toLine(accountId: number, assetId: number, units: number): void {
    this.host.bal(accountId, assetId).available -= units;
    this.line.set(assetId, this.lineUnits(assetId) + units);
  }

  /** One party's share of a fill; returns its fee (with a liquidation order's liquidation fee; an ADL fill pays none). */
  private party(accountId: number, market: MarketSpec, buys: boolean, qty: number, notional: bigint, isTaker: boolean, liquidation = false, feeFree = false): number {
    const p = this.pos(accountId, market.marketId);
    const quote = market.quoteAssetId;
    const delta = buys ? qty : -qty;
    const deltaCost = buys ? -notional : notional;
    let realized = 0n;
    if (p.lots === 0) {
      p.positionId = ++this.lastPositionId;
      p.funding = 0n;
      p.realized = 0n;
      p.fees = 0n;
    }
    if (p.lots === 0 || Math.sign(delta) === Math.sign(p.lots)) {
      p.cost += deltaCost;
      p.entry += deltaCost;
    } else {
      const reduced = Math.min(qty, Math.abs(p.lots));
      const perLot = deltaCost / BigInt(qty);
      const share = floor(p.cost * BigInt(reduced), BigInt(Math.abs(p.lots)));
      realized = share + perLot * BigInt(reduced);
      p.cost = p.cost - share + perLot * BigInt(qty - reduced);
      p.entry = p.entry - floor(p.entry * BigInt(reduced), BigInt(Math.abs(p.lots))) + perLot * BigInt(qty - reduced);
      p.realized += realized;
    }
    p.lots += delta;
    const fee = feeFree ? 0 : Number((notional * BigInt(isTaker ? market.perp!.takerFeeBps : market.perp!.makerFeeBps)) / 10_000n);
    p.fees += BigInt(fee);
    const feePaid = this.take(accountId, quote, BigInt(fee));
    this.host.bal(accountId, quote).available -= feePaid;
    this.host.collectFee(quote, feePaid);
    p.feeDebt += BigInt(fee - feePaid);
    if (realized < 0n) {
      const paid = this.take(accountId, quote, -realized);
      this.toLine(accountId, quote, paid);
      p.unsettled += realized + BigInt(paid);
    } else if (realized > 0n) {
      p.unsettled += realized;
    }
    this.sync(`${accountId}:${market.marketId}`, p);
    this.payDebts(accountId, market);
    const liquidationFee = liquidation ? this.host.liquidationFee(accountId, quote, notional) : 0;
    const owed = p.feeDebt + (p.unsettled < 0n ? -p.unsettled : 0n);
    if (owed > 0n) this.fundDebts(accountId, market, owed);
    return fee + liquidationFee;
  }

  /** What a position still owes: redeemed and borrowed with autoBorrowSettlements and paid, or the account marked for collateral conversion (perp/settle.ts fundDebts). */
  private fundDebts(accountId: number, market: MarketSpec, owed: bigint): void {
    if (this.host.fundSettlement(accountId, market.quoteAssetId, Number(owed))) this.payDebts(accountId, market);
    else this.host.owes(accountId);
  }

  /** Σ fee debts and PnL debts of the account's perpetuals settled in the asset (liquidation/conversion.ts owedUnits). */
  owedUnits(accountId: number, assetId: number): bigint {
    let owed = 0n;
    for (const market of this.perpMarkets()) {
      if (market.quoteAssetId !== assetId) continue;
      const p = this.pos(accountId, market.marketId);
      owed += p.feeDebt + (p.unsettled < 0n ? -p.unsettled : 0n);
    }
    return owed;
  }

  /** The claim queue holds exactly the positions with a claim: a new one at the tail, a gone one removed. */
  private sync(key: string, p: Position): void {
    const at = this.claims.indexOf(key);
    if (p.unsettled > 0n && at < 0) this.claims.push(key);
    if (p.unsettled <= 0n && at >= 0) this.claims.splice(at, 1);
  }

  private payDebts(accountId: number, market: MarketSpec): void {
    const p = this.pos(accountId, market.marketId);
    const quote = market.quoteAssetId;
    if (p.feeDebt > 0n) {
      const paid = this.take(accountId, quote, p.feeDebt);
      this.host.bal(accountId, quote).available -= paid;
      this.host.collectFee(quote, paid);
      p.feeDebt -= BigInt(paid);
    }
    if (p.unsettled < 0n) {
      const paid = this.take(accountId, quote, -p.unsettled);
      if (paid > 0) {
        this.toLine(accountId, quote, paid);
        p.unsettled += BigInt(paid);
      }
    }
  }

  /** Pays queued claims oldest first from the line; a balance record for each payment. */
  private payClaims(assetId: number): void {
    while (this.lineUnits(assetId) > 0) {
      const key = this.claims[0];
      if (key === undefined) return;
      const p = this.positions.get(key)!;
      const accountId = Number(key.split(':')[0]);
      const paid = Math.min(this.lineUnits(assetId), Number(p.unsettled));
      this.line.set(assetId, this.lineUnits(assetId) - paid);
      p.unsettled -= BigInt(paid);
      this.host.bal(accountId, assetId).available += paid;
      this.sync(key, p);
      this.host.balanceRec(accountId, assetId);
    }
  }

  /** A fill of a perpetual (perp/settle.ts): both parties, then waiting claims; returns the buyer's and seller's fees. */
  settle(market: MarketSpec, buyer: number, seller: number, takerIsBuyer: boolean, qty: number, notional: number, liquidation: [boolean, boolean] = [false, false], feeFree = false): [number, number] {
    const buyerFee = this.party(buyer, market, true, qty, BigInt(notional), takerIsBuyer, liquidation[0], feeFree);
    const sellerFee = this.party(seller, market, false, qty, BigInt(notional), !takerIsBuyer, liquidation[1], feeFree);
    this.payClaims(market.quoteAssetId);
    return [buyerFee, sellerFee];
  }

  /** A deposit of a perpetual's quote pays the account's debts, then waiting claims. */
  deposited(accountId: number, assetId: number): void {
    let paidAny = false;
    for (const market of this.perpMarkets()) {
      if (market.quoteAssetId !== assetId) continue;
      const p = this.pos(accountId, market.marketId);
      if (p.feeDebt === 0n && p.unsettled >= 0n) continue;
      this.payDebts(accountId, market);
      paidAny = true;
    }
    if (paidAny) this.payClaims(assetId);
  }

  private priceE9(quote: bigint, base: bigint, market: MarketSpec): number {
    if (base < 0n) return this.priceE9(-quote, -base, market);
    if (base === 0n || quote <= 0n) return 0;
    const value = (quote * 10n ** BigInt(this.decimals(market.baseAssetId)) * 10n ** 9n) / (base * 10n ** BigInt(this.decimals(market.quoteAssetId)));
    return Number(value < BigInt(Number.MAX_SAFE_INTEGER) ? value : BigInt(Number.MAX_SAFE_INTEGER));
  }

  private liquidationE9(line: PerpLine, s: { equity: bigint; mmfUnits: bigint }): number {
    if (line.lots === 0 || !line.mark) return 0;
    const size = BigInt(line.lots) * BigInt(line.market.baseUnitsPerLot);
    const exposure = BigInt(line.exposureLots) * BigInt(line.market.baseUnitsPerLot);
    const others = s.mmfUnits - ceil(line.exposure.notional * line.exposure.mmf, ONE);
    const numerator = ((others - s.equity) * line.mark.baseUnits + size * line.mark.quoteUnits) * ONE;
    const denominator = (size * ONE - exposure * line.exposure.mmf) * line.mark.baseUnits;
    return this.priceE9(numerator, denominator, line.market);
  }

  /** One position record: a query row (event 0) or an event (perp/query.ts positionView, perp/position-events.ts). */
  private positionRec(accountId: number, line: PerpLine, s: { equity: bigint; mmfUnits: bigint }, frontId: number, requestId: number, event: number): void {
    const p = line.position;
    const wide = (v: bigint, name: string) => {
      const high = floor(v, WIDE);
      return { [`${name}High`]: Number(high), [`${name}Low`]: Number(v - high * WIDE) };
    };
    this.host.push({
      ...this.host.header(RecordType.Position, frontId, requestId, 0),
      netLots: p.lots, exposureLots: line.exposureLots, ...wide(p.entry, 'cost'), ...wide(p.realized, 'realized'), ...wide(line.pnl, 'unrealized'),
      ...wide(line.unsettled, 'unsettled'), ...wide(p.fees, 'fees'), ...wide(line.exposure.notional, 'exposureNotional'),
      markPriceE9: line.mark ? this.priceE9(line.mark.quoteUnits, line.mark.baseUnits, line.market) : 0,
      estLiquidationPriceE9: this.liquidationE9(line, s), imf: Number(line.exposure.imf), mmf: Number(line.exposure.mmf),
      positionId: p.positionId, cumulativeFundingUnits: p.lots === 0 ? 0 : Number(p.funding), accountId, marketId: line.market.marketId, markSource: line.mark?.source ?? 0,
      event,
    } as unknown as Rec);
  }

  /** A position's event (perp/position-events.ts): its figures now, or a flat position's with no line. */
  report(accountId: number, market: MarketSpec, event: number): void {
    const line = this.terms(accountId, null).lines.find((l) => l.market === market);
    if (line) return this.positionRec(accountId, line, this.host.summary(accountId, null), FRONT_ID_NONE, 0, event);
    const p = this.pos(accountId, market.marketId);
    const mark = this.mark(market);
    const pair = (v: bigint, name: string) => ({ [`${name}High`]: Number(floor(v, WIDE)), [`${name}Low`]: Number(v - floor(v, WIDE) * WIDE) });
    this.host.push({
      ...this.host.header(RecordType.Position, FRONT_ID_NONE, 0, 0),
      netLots: 0, exposureLots: 0, costHigh: 0, costLow: 0, ...pair(p.realized, 'realized'), unrealizedHigh: 0, unrealizedLow: 0,
      unsettledHigh: 0, unsettledLow: 0, ...pair(p.fees, 'fees'), exposureNotionalHigh: 0, exposureNotionalLow: 0,
      markPriceE9: mark ? this.priceE9(mark.quoteUnits, mark.baseUnits, market) : 0, estLiquidationPriceE9: 0, imf: 0, mmf: 0,
      positionId: p.positionId, cumulativeFundingUnits: 0, accountId, marketId: market.marketId, markSource: mark?.source ?? 0, event,
    } as unknown as Rec);
  }

  /** The cause of a fill's change of a position (perp/position-events.ts fillEventOf): Opened 1, Adjusted 2, Closed 3. */
  fillEvent(accountId: number, market: MarketSpec, delta: number): number {
    const after = this.size(accountId, market.marketId);
    if (after === 0) return 3;
    return after - delta === 0 ? 1 : 2;
  }

  /** QueryPositions (perp/query.ts). */
  query(cmd: Command): void {
    if (!this.host.accountExists(cmd.accountId)) return this.host.result(cmd, ResultCode.UnknownAccount, 0);
    const all = cmd.marketId === 0xffff;
    const market = this.config.markets.find((m) => m.marketId === cmd.marketId);
    if (!all && (!market || !this.isPerp(market))) return this.host.result(cmd, ResultCode.UnknownMarket, 0);
    if (this.perpMarkets().length === 0) return this.host.result(cmd, ResultCode.Ok, 0);
    const s = this.host.summary(cmd.accountId, null);
    let count = 0;
    for (const line of this.terms(cmd.accountId, null).lines) {
      if (!this.isOpen(line.position) || (!all && line.market !== market)) continue;
      this.positionRec(cmd.accountId, line, s, cmd.frontId, cmd.requestId, 0);
      count++;
    }
    this.host.result(cmd, ResultCode.Ok, count);
  }

  /** QueryOpenInterest (perp/open-interest.ts): one record per perpetual (all, or the one asked), in configuration order. */
  queryOpenInterest(cmd: Command): void {
    const all = cmd.marketId === 0xffff;
    const market = this.config.markets.find((m) => m.marketId === cmd.marketId);
    if (!all && (!market || !this.isPerp(market))) return this.host.result(cmd, ResultCode.UnknownMarket, 0);
    let count = 0;
    for (const m of this.perpMarkets()) {
      if (!all && m !== market) continue;
      this.host.push({
        ...this.host.header(RecordType.OpenInterest, cmd.frontId, cmd.requestId, 0), openInterestUnits: this.openInterestLots(m.marketId) * m.baseUnitsPerLot, marketId: m.marketId,
      } as unknown as Rec);
      count++;
    }
    this.host.result(cmd, ResultCode.Ok, count);
  }

  /** Σ sizes per perpetual (each must be 0) and the line per asset, for the differential test. */
  sums(): Map<number, number> {
    const sums = new Map<number, number>();
    for (const [key, p] of this.positions) {
      const marketId = Number(key.split(':')[1]);
      sums.set(marketId, (sums.get(marketId) ?? 0) + p.lots);
    }
    return sums;
  }
}

export { FRONT_ID_NONE };
