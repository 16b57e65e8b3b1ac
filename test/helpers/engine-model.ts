// A deliberately naive reference model of the engine core, for differential tests.
//
// Same rules as engine/core, written the obvious way: open orders in one array in placement
// order, books found by filtering and sorting that array on every step, balances in a Map keyed
// by "account:asset". No pools, no indices, no incremental counters to get wrong. Fed the same
// stamped stream as the real engine, it must write exactly the same records. Order ids reuse the
// engine's permutation (tested on its own in engine-structures.test.ts). Market orders and fees
// follow the rules written in the headers of engine/core/book/place.ts, spot/hold.ts, spot/settle.ts and book/matching.ts, computed
// here with bigint arithmetic instead of the engine's checked integer helpers; order book states
// and fee rates follow engine/core/operator.ts; the guarded reference price and the market-order
// band follow engine/core/book/reference.ts, dust conversion and withdrawals engine/core/funds/capital.ts,
// collateral, the largest order and converting all dust engine/core/funds/risk.ts, index prices
// engine/core/margin/index-prices.ts (a Map by asset id; USDC fixed at 1), borrow/lend
// engine/core/margin/borrow-lend.ts and spot margin engine/core/margin/auto-funding.ts
// (engine-model-margin.ts), perpetuals engine/core/perp/ (engine-model-perp.ts), their mark
// prices and funding perp/mark-price.ts and perp/funding.ts (engine-model-funding.ts), the
// liquidation waterfall liquidation/ (engine-model-liquidation.ts) and collateral conversion
// liquidation/conversion.ts (engine-model-conversion.ts).

import { withEventsInAnswers } from './events-in-answers.js';
import { permuteOrderNumber } from '../../engine/core/ids.js';
import {
  AccountSettingFlag,
  SystemOrderType,
  CommandFlag,
  CommandKind,
  ExpiryReason,
  FRONT_ID_NONE,
  HeaderFlag,
  OrderEvent,
  OrderFlag,
  OrderStatus,
  OrderType,
  RecordType,
  ResultCode,
  SelfTradePrevention,
  Side,
  TimeInForce,
  OrderBookState,
  type CommandSlot as Command,
  type EngineConfig,
  type MarketSpec,
} from '../../engine/bus/types.js';
import type { Rec } from './engine-harness.js';
import { ModelLending, type Funding, type ModelLendingState } from './engine-model-margin.js';
import { ModelPerp } from './engine-model-perp.js';
import { ModelLiquidation } from './engine-model-liquidation.js';
import { CONVERSION_FLAGS, ModelConversion } from './engine-model-conversion.js';

/** The spot margin flags an order may carry (engine/core/margin/auto-funding.ts). */
const MARGIN_FLAGS = CommandFlag.AutoLend | CommandFlag.AutoLendRedeem | CommandFlag.AutoBorrow | CommandFlag.AutoBorrowRepay;
/** The flags that fund a shortfall beyond the available balance. */
const FUNDING_FLAGS = CommandFlag.AutoLendRedeem | CommandFlag.AutoBorrow;

interface ModelOrder {
  orderId: number;
  accountId: number;
  market: MarketSpec;
  side: Side;
  orderType: OrderType;
  priceTicks: number;
  /** A market order's lot cap. */
  qtyLots: number;
  quoteQtyUnits: number;
  /** A market order's quote limit (its budget, for a bid). */
  quoteLimitUnits: number;
  remainingLots: number;
  executedLots: number;
  executedQuoteUnits: number;
  createdAtUs: number;
  clientId: number;
  flags: number;
  timeInForce: TimeInForce;
  stp: SelfTradePrevention;
  frontId: number;
  requestId: number;
  state: 'pending' | 'active' | 'resting';
  restNumber: number;
}

/** One open order as exportState() gives it: its market named by id. */
export type ModelOrderState = Omit<ModelOrder, 'market'> & { marketId: number };

/**
 * The model's whole state as copies, for comparisons made outside the model (the engine
 * benchmark's state hash, bench/engine-model-hash.ts). Changing it changes nothing in the model.
 */
export interface ModelState {
  config: EngineConfig;
  /** Account keys: account id i has keys[i - 1]. */
  keys: Uint8Array[];
  /** Balances by account id, then asset id; a pair never touched is absent (zero). */
  balances: Map<number, Map<number, { available: number; locked: number }>>;
  /** Deposits minus withdrawals, by asset id. */
  supply: Map<number, number>;
  /** Fees collected, by asset id. */
  feeUnits: Map<number, number>;
  /** Every open order (pending, active, resting), in placement order. */
  orders: ModelOrderState[];
  /** Per market id: counters, prices and the order book state. */
  markets: Map<number, MarketState>;
  /** Fee rates set by SetFeeRates, by account id; absent: the configured defaults. */
  feeRates: Map<number, { maker: number; taker: number }>;
  /** Orders numbered so far (ids are this number permuted). */
  orderNumber: number;
  /** Orders that came to rest so far, over all markets (time priority). */
  restCounter: number;
  maintenance: boolean;
  /** Borrow/lend positions, the exchange's interest lines and the next hour of interest. */
  lending: ModelLendingState;
  /** SetIndexPrice: the last price, its engine time and source by asset id. */
  indexPrices: Map<number, { priceE9: number; timeUs: number; source: number }>;
  /** Account settings by account id (automation flags with Liquidating, leverage limit in hundredths); absent: none and 1×. */
  accountSettings: Map<number, { flags: number; leverage: number }>;
}

export interface MarketState {
  updateId: number;
  updateSeq: number;
  lastTradeId: number;
  /** Price of the last trade (0: none yet). */
  lastPriceTicks: number;
  /** Guarded reference price (0: none yet) and the engine time it last moved. */
  guardTicks: number;
  guardTimeUs: number;
  orderBookState: OrderBookState;
}

export class ModelExchange {
  private readonly keys: Uint8Array[] = [];
  private readonly balances = new Map<string, { available: number; locked: number }>();
  private readonly supply = new Map<number, number>();
  /** Fees collected per asset id. */
  private readonly feeUnits = new Map<number, number>();
  /** Every open order, in placement order. */
  private orders: ModelOrder[] = [];
  private readonly marketState = new Map<number, MarketState>();
  private orderNumber = 0;
  private restCounter = 0;
  private seq = 0;
  private timeUs = 0;
  private out: Rec[] = [];
  /** Fee rates set by SetFeeRates, by account id; absent: the configured defaults. */
  private readonly feeRates = new Map<number, { maker: number; taker: number }>();
  /** SetSystemState: while in maintenance, places, cancels, withdrawals and dust conversions are refused. */
  private maintenance = false;
  /** SetIndexPrice: the last price, its engine time and source by asset id. */
  private readonly indexPrices = new Map<number, { priceE9: number; timeUs: number; source: number }>();
  /** UpdateAccountSettings, by account id: the automation flag bits and the leverage limit in hundredths; absent: none and 1×. */
  private readonly accountSettings = new Map<number, { flags: number; leverage: number }>();

  /** Borrow/lend (engine-model-margin.ts). */
  private readonly lending: ModelLending;
  /** Perpetuals (engine-model-perp.ts). */
  private readonly perp: ModelPerp;
  /** The liquidation waterfall and the insurance fund (engine-model-liquidation.ts). */
  private readonly liquidation: ModelLiquidation<ModelOrder>;
  /** Collateral conversion of accounts left owing USDC (engine-model-conversion.ts). */
  private readonly conversion: ModelConversion;
  /** SetBackstopProvider / RemoveBackstopProvider: the backstop liquidity providers, ascending. */
  private providers: number[] = [];

  constructor(private readonly config: EngineConfig) {
    this.lending = new ModelLending(config, {
      header: (type, frontId, requestId, flags) => this.header(type, frontId, requestId, flags),
      push: (rec) => this.out.push(rec),
      result: (cmd, code, value) => this.result(cmd, code, value),
      bal: (accountId, assetId) => this.bal(accountId, assetId),
      balanceRec: (accountId, assetId) => this.balanceRec(accountId, assetId),
      accountExists: (accountId) => this.accountExists(accountId),
      accountCount: () => this.keys.length,
      guardTicks: (market) => this.marketState.get(market.marketId)!.guardTicks,
      seq: () => this.seq,
      timeUs: () => this.timeUs,
      index: (assetId) => this.indexPrices.get(assetId),
      settings: (accountId) => this.accountSettings.get(accountId) ?? { flags: 0, leverage: 100 },
      setFlags: (accountId, flags) => this.accountSettings.set(accountId, { ...(this.accountSettings.get(accountId) ?? { flags: 0, leverage: 100 }), flags }),
      settingsEvent: (accountId) => this.accountSettingsRec(accountId, FRONT_ID_NONE, 0, 0),
      perpTerms: (accountId, change) => this.perp.terms(accountId, change),
      hasPerp: (accountId) => this.perp.hasPosition(accountId),
      holdsPosition: (accountId) => this.perp.holdsPosition(accountId),
      followsUnderlying: (accountId, assetId) => this.perp.followsUnderlying(accountId, assetId),
      enterLiquidation: (accountId) => this.liquidation.enter(accountId),
      keepLiquidating: () => this.liquidation.keep(),
    });
    this.perp = new ModelPerp(config, {
      header: (type, frontId, requestId, flags) => this.header(type, frontId, requestId, flags),
      push: (rec) => this.out.push(rec),
      result: (cmd, code, value) => this.result(cmd, code, value),
      bal: (accountId, assetId) => this.bal(accountId, assetId),
      balanceRec: (accountId, assetId) => this.balanceRec(accountId, assetId),
      collectFee: (assetId, units) => this.feeUnits.set(assetId, (this.feeUnits.get(assetId) ?? 0) + units),
      accountExists: (accountId) => this.accountExists(accountId),
      openLots: (accountId, marketId) => {
        const lots: [number, number] = [0, 0];
        for (const o of this.orders) if (o.accountId === accountId && o.market.marketId === marketId) lots[o.side] += o.remainingLots;
        return lots;
      },
      guardTicks: (market) => this.marketState.get(market.marketId)!.guardTicks,
      timeUs: () => this.timeUs,
      index: (assetId) => this.indexPrices.get(assetId),
      leverage: (accountId) => this.accountSettings.get(accountId)?.leverage ?? 100,
      summary: (accountId, change) => {
        const s = this.lending.summary(accountId, -1, 0n, 0n, change);
        return { equity: s.equity, imfUnits: s.imfUnits, mmfUnits: s.mmfUnits, unpriced: s.unpriced };
      },
      fundSettlement: (accountId, assetId, owed) => {
        if (((this.accountSettings.get(accountId)?.flags ?? 0) & AccountSettingFlag.AutoBorrowSettlements) === 0) return false;
        const plan = this.lending.planFunding(accountId, assetId, owed, 0, CommandFlag.AutoLendRedeem | CommandFlag.AutoBorrow);
        if (plan.code !== ResultCode.Ok) return false;
        this.lending.applyFunding(accountId, assetId, plan);
        return true;
      },
      owes: (accountId) => this.conversion.owes(accountId),
      accountCount: () => this.keys.length,
      review: (accountId) => this.lending.review(accountId),
      liquidationFee: (accountId, assetId, notional) => this.liquidation.perpFee(accountId, assetId, notional),
      book: (market) => {
        const state = this.marketState.get(market.marketId)!;
        const [bid, ask] = [Side.Bid, Side.Ask].map((side) => this.sideOrders(market, side)[0]?.priceTicks ?? 0);
        return { bid, ask, last: market.maxMultiplierBps === undefined ? 0 : state.lastPriceTicks, state: state.orderBookState };
      },
    });
    this.liquidation = new ModelLiquidation<ModelOrder>(config, {
      lending: () => this.lending,
      orders: () => this.orders,
      cancelOpen: (o, reason) => this.cancelOpen(o, reason),
      orderRec: (o, event, status, reason, frontId, requestId, flags) => this.orderRec(o, event, status, reason, frontId, requestId, flags),
      bal: (accountId, assetId) => this.bal(accountId, assetId),
      balanceRec: (accountId, assetId) => this.balanceRec(accountId, assetId),
      push: (rec) => this.out.push(rec),
      header: (type, frontId, requestId, flags) => this.header(type, frontId, requestId, flags),
      accountCount: () => this.keys.length,
      flags: (accountId) => this.accountSettings.get(accountId)?.flags ?? 0,
      timeUs: () => this.timeUs,
      bookState: (market) => this.marketState.get(market.marketId)!.orderBookState,
      placeSystem: (accountId, market, side, lots, quoteLimit) => this.placeSystem(accountId, market, side, lots, quoteLimit),
      positions: (accountId) => this.perp.positionsOf(accountId),
      perpMark: (market) => this.perp.unitMark(market),
      summary: (accountId) => this.lending.summary(accountId),
      perpLine: (accountId, market) => this.perp.lineFigures(accountId, market),
      holders: (market) => this.perp.holders(market.marketId),
      adlClose: (accountId, market, ticks, ranked) => this.adlClose(accountId, market, ticks, ranked),
      trimReduceOnly: (accountId, market) => this.trimReduceOnly(accountId, market),
      providers: () => this.providers,
      backstopClose: (accountId, market, ticks, takes) => this.backstopClose(accountId, market, ticks, takes),
    });
    this.conversion = new ModelConversion(config, {
      lending: () => this.lending,
      perp: () => this.perp,
      bal: (accountId, assetId) => this.bal(accountId, assetId),
      balanceRec: (accountId, assetId) => this.balanceRec(accountId, assetId),
      bids: (market) => this.sideOrders(market, Side.Bid),
      lastPriceTicks: (market) => this.marketState.get(market.marketId)!.lastPriceTicks,
      bookState: (market) => this.marketState.get(market.marketId)!.orderBookState,
      bookOrders: (market) => this.orders.filter((o) => o.market === market && o.state !== 'active').length,
      openOrders: () => this.orders.length,
      takerFeeBps: (accountId) => this.rates(accountId).taker,
      placeSystem: (accountId, market, side, lots, quoteLimit, flags) => this.placeSystem(accountId, market, side, lots, quoteLimit, flags),
    });
    for (const market of config.markets) this.marketState.set(market.marketId, { updateId: 0, updateSeq: -1, lastTradeId: 0, lastPriceTicks: 0, guardTicks: 0, guardTimeUs: 0, orderBookState: OrderBookState.Open });
  }

  /**
   * Applies one command and returns its records: as the engine writes them with the orders' events
   * in their answers (events-in-answers.ts), or with `eventsInAnswers` off, every event on its own.
   */
  apply(cmd: Command, seq: number, timeUs: number): Rec[] {
    const out = this.applyCommand(cmd, seq, timeUs);
    return this.eventsInAnswers ? withEventsInAnswers(out, this.takerSummary ? this.spotMarketIds : null) : out;
  }

  /** The spot markets' ids, where a taker's last fill may ride in its answer (built on first use). */
  private get spotMarketIds(): ReadonlySet<number> {
    this.spotIds ??= new Set(this.config.markets.filter((m) => !this.perp.isPerp(m)).map((m) => m.marketId));
    return this.spotIds;
  }
  private spotIds: ReadonlySet<number> | null = null;

  /** Whether apply returns the records with events in answers (the engine's default). */
  eventsInAnswers = true;

  /**
   * Whether a taker's match ends in one summary (the engine's default, journal format 6): its
   * balance records once, as the match ends, and its last fill in its answer where that answer
   * would repeat it; off, its balances after each of its fills and every fill a record of its own.
   */
  takerSummary = true;

  private applyCommand(cmd: Command, seq: number, timeUs: number): Rec[] {
    this.out = [];
    this.seq = seq;
    this.timeUs = timeUs;
    if (cmd.kind >= 64) {
      this.query(cmd);
      return this.out;
    }
    this.perp.marks.arm(timeUs);
    this.perp.armRealize(timeUs);
    for (;;) {
      // Placement order is sequence order, and every order waits the same bump. An hour of
      // interest due before the next activation runs first; at the same time, activations first,
      // then interest, then the perpetuals' mark sample, then their interval ends (timers.ts kinds).
      const next = this.orders.find((o) => o.state === 'pending');
      const activationUs = next ? next.createdAtUs + this.config.speedBumpUs : Infinity;
      const interestUs = this.lending.interestDue < 0 ? Infinity : this.lending.interestDue;
      const perpTimer = this.perp.marks.next();
      const perpUs = perpTimer === null ? Infinity : perpTimer.dueUs;
      // A liquidation step (kind 8) runs after activations, interest and the perpetuals' timers due at the same time.
      const stepUs = this.liquidation.due < 0 ? Infinity : this.liquidation.due;
      // The realization at mark (kind 10) runs after everything else due at the same time.
      const realizeUs = this.perp.realizeDue < 0 ? Infinity : this.perp.realizeDue;
      if (Math.min(activationUs, interestUs, perpUs, stepUs, realizeUs) > timeUs) break;
      if (realizeUs < Math.min(activationUs, interestUs, perpUs, stepUs)) {
        this.perp.runRealize(timeUs);
        continue;
      }
      if (perpUs < Math.min(activationUs, interestUs) && perpUs <= stepUs) {
        this.perp.marks.run(perpTimer!);
        continue;
      }
      if (stepUs < Math.min(activationUs, interestUs)) {
        this.liquidation.step();
        continue;
      }
      if (interestUs < activationUs) {
        this.lending.accrue();
        continue;
      }
      next!.state = 'active';
      this.activate(next!);
    }
    this.mutate(cmd);
    // Accounts the command (or a timer it ran) left owing USDC convert collateral at its end.
    this.conversion.run();
    return this.out;
  }

  /** A state-changing command's own rule, after the timers due. */
  private mutate(cmd: Command): void {
    const refusedKinds: number[] = [CommandKind.PlaceOrder, CommandKind.CancelOrder, CommandKind.CancelAll, CommandKind.Withdraw, CommandKind.ConvertDust, CommandKind.ConvertAllDust, CommandKind.BorrowLend];
    if (this.maintenance && refusedKinds.includes(cmd.kind)) {
      this.result(cmd, ResultCode.SystemMaintenance, 0);
      return;
    }
    switch (cmd.kind) {
      case CommandKind.CreateAccount: this.createAccount(cmd); break;
      case CommandKind.Deposit: this.deposit(cmd); break;
      case CommandKind.PlaceOrder: this.place(cmd); break;
      case CommandKind.CancelOrder: this.cancel(cmd); break;
      case CommandKind.CancelAll: this.cancelAll(cmd); break;
      case CommandKind.Tick: break;
      case CommandKind.SetMarketState: this.setMarketState(cmd); break;
      case CommandKind.SetFeeRates: this.setFeeRates(cmd); break;
      case CommandKind.Withdraw: this.withdraw(cmd); break;
      case CommandKind.ConfirmWithdrawal: this.confirmWithdrawal(cmd); break;
      case CommandKind.ConvertDust: this.convertDust(cmd); break;
      case CommandKind.ConvertAllDust: this.convertAllDust(cmd); break;
      case CommandKind.BorrowLend: this.lending.borrowLend(cmd); break;
      case CommandKind.SetSystemState: this.setSystemState(cmd); break;
      case CommandKind.SetIndexPrice: this.setIndexPrice(cmd); this.perp.marks.wake(this.timeUs); break;
      case CommandKind.UpdateAccountSettings: this.updateAccountSettings(cmd); break;
      case CommandKind.SetBackstopProvider: this.setBackstopProvider(cmd); break;
      case CommandKind.RemoveBackstopProvider: this.removeBackstopProvider(cmd); break;
      // The state is written out beside the engine; the answer names the sequence it stands at.
      case CommandKind.Snapshot: this.result(cmd, ResultCode.Ok, this.seq); break;
      default: this.result(cmd, ResultCode.InvalidCommand, 0);
    }
  }

  /** Σ position sizes per perpetual market id (each must be 0). */
  perpSizes(): Map<number, number> {
    return this.perp.sums();
  }

  /** A copy of the whole state (see ModelState). */
  exportState(): ModelState {
    const balances = new Map<number, Map<number, { available: number; locked: number }>>();
    for (const [key, b] of this.balances) {
      const [accountId, assetId] = key.split(':').map(Number);
      if (!balances.has(accountId)) balances.set(accountId, new Map());
      balances.get(accountId)!.set(assetId, { ...b });
    }
    const copyValues = <K, V extends object>(m: Map<K, V>): Map<K, V> => new Map([...m].map(([k, v]) => [k, { ...v }]));
    return {
      config: this.config,
      keys: this.keys.map((k) => k.slice()),
      balances,
      supply: new Map(this.supply),
      feeUnits: new Map(this.feeUnits),
      orders: this.orders.map(({ market, ...o }) => ({ ...o, marketId: market.marketId })),
      markets: copyValues(this.marketState),
      feeRates: copyValues(this.feeRates),
      orderNumber: this.orderNumber,
      restCounter: this.restCounter,
      maintenance: this.maintenance,
      lending: this.lending.exportState(),
      indexPrices: copyValues(this.indexPrices),
      accountSettings: copyValues(this.accountSettings),
    };
  }

  // ---- records ----

  private header(type: RecordType, frontId: number, requestId: number, flags: number) {
    return { seq: this.seq, timeUs: this.timeUs, requestId, frontId, type, flags };
  }

  private result(cmd: Command, code: ResultCode, value: number): void {
    this.out.push({ ...this.header(RecordType.Result, cmd.frontId, cmd.requestId, HeaderFlag.Last), value, code } as Rec);
  }

  private orderRec(o: ModelOrder, event: OrderEvent, status: OrderStatus, reason: ExpiryReason, frontId: number, requestId: number, flags: number, fill?: { qty: number; price: number; tradeId: number; maker: boolean; fee: number }): void {
    this.out.push({
      ...this.header(RecordType.Order, frontId, requestId, flags),
      orderId: o.orderId, priceTicks: o.priceTicks, qtyLots: o.quoteQtyUnits > 0 ? 0 : o.qtyLots, quoteQtyUnits: o.quoteQtyUnits, executedQtyLots: o.executedLots,
      executedQuoteUnits: o.executedQuoteUnits, lastFillQtyLots: fill?.qty ?? 0, lastFillPriceTicks: fill?.price ?? 0,
      tradeId: fill?.tradeId ?? 0, feeUnits: fill?.fee ?? 0, createdAtUs: o.createdAtUs, accountId: o.accountId, clientId: o.clientId,
      marketId: o.market.marketId, feeAssetId: o.side === Side.Bid && !this.perp.isPerp(o.market) ? o.market.baseAssetId : o.market.quoteAssetId, event,
      side: o.side, orderType: o.orderType, timeInForce: o.timeInForce, selfTradePrevention: o.stp, status, expiryReason: reason,
      orderFlags: o.flags | (fill?.maker ? OrderFlag.IsMaker : 0),
      systemOrderType: (o.flags & (OrderFlag.Liquidation | OrderFlag.Adl)) === 0 ? SystemOrderType.None
        : (o.flags & OrderFlag.Liquidation) === 0 ? SystemOrderType.LiquidatePositionOnBackstop
        : this.isConversion(o) ? SystemOrderType.CollateralConversion
          : (o.flags & OrderFlag.Adl) !== 0 ? SystemOrderType.LiquidatePositionOnAdl : SystemOrderType.LiquidatePositionOnBook,
    } as Rec);
  }

  private balanceRec(accountId: number, assetId: number, frontId = FRONT_ID_NONE, requestId = 0): void {
    const b = this.bal(accountId, assetId);
    this.out.push({ ...this.header(RecordType.Balance, frontId, requestId, 0), availableUnits: b.available, lockedUnits: b.locked, accountId, assetId } as Rec);
  }

  private depthRec(market: MarketSpec, side: Side, priceTicks: number): void {
    const state = this.marketState.get(market.marketId)!;
    if (state.updateSeq !== this.seq) {
      state.updateId++;
      state.updateSeq = this.seq;
    }
    this.out.push({ ...this.header(RecordType.Depth, FRONT_ID_NONE, 0, 0), priceTicks, qtyLots: this.levelQty(market, side, priceTicks), updateId: state.updateId, marketId: market.marketId, side } as Rec);
  }

  // ---- state helpers ----

  private bal(accountId: number, assetId: number): { available: number; locked: number } {
    const key = `${accountId}:${assetId}`;
    let b = this.balances.get(key);
    if (!b) this.balances.set(key, (b = { available: 0, locked: 0 }));
    return b;
  }

  private market(marketId: number): MarketSpec | undefined {
    return this.config.markets.find((m) => m.marketId === marketId);
  }

  private accountExists(accountId: number): boolean {
    return Number.isInteger(accountId) && accountId >= 1 && accountId <= this.keys.length;
  }

  private lockAsset(o: ModelOrder): number {
    return o.side === Side.Bid || this.perp.isPerp(o.market) ? o.market.quoteAssetId : o.market.baseAssetId;
  }

  private lockOf(o: ModelOrder): number {
    if (this.perp.isPerp(o.market)) return 0;
    if (o.side === Side.Bid && o.orderType === OrderType.Market) return o.quoteLimitUnits - o.executedQuoteUnits;
    return o.side === Side.Bid ? o.priceTicks * o.remainingLots * o.market.quoteUnitsPerTickLot : o.remainingLots * o.market.baseUnitsPerLot;
  }

  /** Resting orders of one side, best price first, then time priority. */
  private sideOrders(market: MarketSpec, side: Side): ModelOrder[] {
    return this.orders
      .filter((o) => o.state === 'resting' && o.market === market && o.side === side)
      .sort((a, b) => (side === Side.Bid ? b.priceTicks - a.priceTicks : a.priceTicks - b.priceTicks) || a.restNumber - b.restNumber);
  }

  private levelQty(market: MarketSpec, side: Side, priceTicks: number): number {
    return this.sideOrders(market, side).filter((o) => o.priceTicks === priceTicks).reduce((sum, o) => sum + o.remainingLots, 0);
  }

  private levels(market: MarketSpec, side: Side): number[] {
    return [...new Set(this.sideOrders(market, side).map((o) => o.priceTicks))];
  }

  private crosses(taker: ModelOrder, priceTicks: number): boolean {
    if (taker.orderType === OrderType.Market) return true;
    return taker.side === Side.Bid ? priceTicks <= taker.priceTicks : priceTicks >= taker.priceTicks;
  }

  private remove(o: ModelOrder): void {
    this.orders = this.orders.filter((x) => x !== o);
  }

  private status(o: ModelOrder): OrderStatus {
    if (o.remainingLots === 0) return OrderStatus.Filled;
    return o.executedLots > 0 ? OrderStatus.PartiallyFilled : OrderStatus.New;
  }

  // ---- commands ----

  private createAccount(cmd: Command): void {
    if (cmd.key.length !== 32 || cmd.key.every((b) => b === 0)) return this.result(cmd, ResultCode.InvalidCommand, 0);
    if (this.keys.some((k) => k.every((b, i) => b === cmd.key[i]))) return this.result(cmd, ResultCode.DuplicateKey, 0);
    if (this.keys.length >= this.config.limits.maxAccounts) return this.result(cmd, ResultCode.AccountLimitReached, 0);
    this.keys.push(cmd.key.slice());
    const accountId = this.keys.length;
    this.out.push({ ...this.header(RecordType.Account, FRONT_ID_NONE, 0, 0), key: cmd.key.slice(), accountId } as Rec);
    this.result(cmd, ResultCode.Ok, accountId);
  }

  private deposit(cmd: Command): void {
    if (!this.accountExists(cmd.accountId)) return this.result(cmd, ResultCode.UnknownAccount, 0);
    if (!this.config.assets.some((a) => a.assetId === cmd.assetId)) return this.result(cmd, ResultCode.UnknownAsset, 0);
    const supply = this.supply.get(cmd.assetId) ?? 0;
    const amount = cmd.amountUnits;
    if (!Number.isSafeInteger(amount) || amount <= 0 || !Number.isSafeInteger(supply + amount)) return this.result(cmd, ResultCode.AmountOutOfRange, 0);
    this.supply.set(cmd.assetId, supply + amount);
    this.bal(cmd.accountId, cmd.assetId).available += amount;
    const beforeDebts = this.bal(cmd.accountId, cmd.assetId).available;
    this.perp.deposited(cmd.accountId, cmd.assetId);
    this.balanceRec(cmd.accountId, cmd.assetId);
    const credited = Math.min(amount, Math.max(0, amount - (beforeDebts - this.bal(cmd.accountId, cmd.assetId).available)));
    const settings = this.accountSettings.get(cmd.accountId)?.flags ?? 0;
    const [repay, lend] = [(settings & AccountSettingFlag.AutoRepayBorrows) !== 0, (settings & AccountSettingFlag.AutoLend) !== 0];
    if ((repay || lend) && credited > 0) this.lending.applyProceeds(cmd.accountId, cmd.assetId, credited, repay, lend);
    this.lending.review(cmd.accountId);
    this.result(cmd, ResultCode.Ok, this.bal(cmd.accountId, cmd.assetId).available);
  }

  /** What the place being checked redeems and borrows (null: nothing). */
  private placeFunding: { assetId: number; plan: Funding } | null = null;

  /** A hold beyond the available balance: InsufficientFunds, unless the spot margin flags fund it. */
  private fundHold(cmd: Command, assetId: number, units: number): ResultCode {
    if ((cmd.flags & FUNDING_FLAGS) === 0) return ResultCode.InsufficientFunds;
    const plan = this.lending.planFunding(cmd.accountId, assetId, units, 0, cmd.flags);
    if (plan.code === ResultCode.Ok) this.placeFunding = { assetId, plan };
    return plan.code;
  }

  private placeCode(cmd: Command): ResultCode {
    this.placeFunding = null;
    if (!this.accountExists(cmd.accountId)) return ResultCode.UnknownAccount;
    const market = this.market(cmd.marketId);
    if (!market) return ResultCode.UnknownMarket;
    const postOnly = (cmd.flags & CommandFlag.PostOnly) !== 0;
    if (cmd.orderType === OrderType.Market) return this.marketPlaceCode(cmd, market);
    const shapeOk =
      cmd.orderType === OrderType.Limit && [Side.Bid, Side.Ask].includes(cmd.side) &&
      [TimeInForce.GTC, TimeInForce.IOC, TimeInForce.FOK].includes(cmd.timeInForce) &&
      [SelfTradePrevention.RejectTaker, SelfTradePrevention.RejectMaker, SelfTradePrevention.RejectBoth].includes(cmd.selfTradePrevention) &&
      (cmd.flags & ~(CommandFlag.PostOnly | CommandFlag.HasClientId | CommandFlag.ReduceOnly | MARGIN_FLAGS)) === 0 && (!postOnly || cmd.timeInForce === TimeInForce.GTC) &&
      Number.isSafeInteger(cmd.priceTicks) && Number.isSafeInteger(cmd.qtyLots) &&
      [cmd.quoteQtyUnits, cmd.triggerPriceTicks, cmd.triggerQtyLots, cmd.takeProfitTriggerTicks, cmd.takeProfitLimitTicks,
        cmd.stopLossTriggerTicks, cmd.stopLossLimitTicks, cmd.slippageTolerance, cmd.triggerBy, cmd.takeProfitTriggerBy,
        cmd.stopLossTriggerBy, cmd.slippageToleranceType].every((v) => v === 0);
    if (!shapeOk || this.spotReduceOnly(cmd, market)) return ResultCode.InvalidCommand;
    const stateCode = this.stateRefusal(market, false, postOnly);
    if (stateCode !== ResultCode.Ok) return stateCode;
    if (cmd.qtyLots < market.minQtyLots) return ResultCode.QuantityBelowMinimum;
    if (cmd.qtyLots > market.maxQtyLots) return ResultCode.QuantityAboveMaximum;
    if (cmd.priceTicks < market.minPriceTicks) return ResultCode.PriceBelowMinimum;
    if (cmd.priceTicks > market.maxPriceTicks) return ResultCode.PriceAboveMaximum;
    if (this.outsideBand(market, cmd.priceTicks)) return ResultCode.PriceOutOfBand;
    const limits = this.config.limits;
    if (this.orders.filter((o) => o.accountId === cmd.accountId).length >= limits.maxOpenOrdersPerAccount) return ResultCode.OrderLimitReached;
    if (this.orders.filter((o) => o.market === market).length >= limits.maxOrdersPerBook) return ResultCode.BookFull;
    if (cmd.timeInForce === TimeInForce.GTC) {
      const delayed = !postOnly && this.config.speedBumpUs > 0;
      const levels = this.levels(market, cmd.side);
      const reserved = this.orders.filter((o) => o.state === 'pending' && o.market === market && o.side === cmd.side && o.orderType === OrderType.Limit && o.timeInForce === TimeInForce.GTC).length;
      const needsLevel = delayed || !levels.includes(cmd.priceTicks);
      if (needsLevel && levels.length + reserved >= limits.maxPriceLevelsPerSide) return ResultCode.BookFull;
    }
    if (this.liquidatingRefusal(cmd, market)) return ResultCode.AccountLiquidating;
    if (this.perp.isPerp(market)) return this.perpHoldCode(cmd, market, cmd.qtyLots);
    const lock = cmd.side === Side.Bid ? cmd.priceTicks * cmd.qtyLots * market.quoteUnitsPerTickLot : cmd.qtyLots * market.baseUnitsPerLot;
    const asset = cmd.side === Side.Bid ? market.quoteAssetId : market.baseAssetId;
    if (this.bal(cmd.accountId, asset).available < lock) return this.fundHold(cmd, asset, lock);
    return ResultCode.Ok;
  }

  /** Reduce-only is for perpetuals (book/place.ts). */
  private spotReduceOnly(cmd: Command, market: MarketSpec): boolean {
    return (cmd.flags & CommandFlag.ReduceOnly) !== 0 && !this.perp.isPerp(market);
  }

  /** A perpetual order holds nothing: spot margin flags refused, then margin admission (perp/hold.ts); reduce-only passes. */
  private perpHoldCode(cmd: Command, market: MarketSpec, lots: number): ResultCode {
    if ((cmd.flags & MARGIN_FLAGS) !== 0) return ResultCode.InvalidCommand;
    if ((cmd.flags & CommandFlag.ReduceOnly) !== 0) return ResultCode.Ok;
    return this.perp.admission(cmd.accountId, market, cmd.side, lots);
  }

  /** Lot cap and quote limit of the last market place that passed marketPlaceCode. */
  private marketCap = { lots: 0, quoteLimit: 0 };

  private marketPlaceCode(cmd: Command, market: MarketSpec): ResultCode {
    const byQuote = cmd.quoteQtyUnits > 0;
    const shapeOk =
      [Side.Bid, Side.Ask].includes(cmd.side) && [TimeInForce.GTC, TimeInForce.IOC].includes(cmd.timeInForce) &&
      [SelfTradePrevention.RejectTaker, SelfTradePrevention.RejectMaker, SelfTradePrevention.RejectBoth].includes(cmd.selfTradePrevention) &&
      (cmd.flags & ~(CommandFlag.HasClientId | CommandFlag.ReduceOnly | MARGIN_FLAGS)) === 0 && cmd.priceTicks === 0 &&
      Number.isSafeInteger(cmd.qtyLots) && Number.isSafeInteger(cmd.quoteQtyUnits) &&
      ((cmd.qtyLots > 0 && cmd.quoteQtyUnits === 0) || (cmd.qtyLots === 0 && cmd.quoteQtyUnits > 0)) &&
      [cmd.triggerPriceTicks, cmd.triggerQtyLots, cmd.takeProfitTriggerTicks, cmd.takeProfitLimitTicks,
        cmd.stopLossTriggerTicks, cmd.stopLossLimitTicks, cmd.slippageTolerance, cmd.triggerBy, cmd.takeProfitTriggerBy,
        cmd.stopLossTriggerBy, cmd.slippageToleranceType].every((v) => v === 0);
    if (!shapeOk || this.spotReduceOnly(cmd, market)) return ResultCode.InvalidCommand;
    const stateCode = this.stateRefusal(market, true, false);
    if (stateCode !== ResultCode.Ok) return stateCode;
    if (!byQuote && cmd.qtyLots < market.minQtyLots) return ResultCode.QuantityBelowMinimum;
    if (!byQuote && cmd.qtyLots > market.maxQtyLots) return ResultCode.QuantityAboveMaximum;
    const limits = this.config.limits;
    if (this.orders.filter((o) => o.accountId === cmd.accountId).length >= limits.maxOpenOrdersPerAccount) return ResultCode.OrderLimitReached;
    if (this.orders.filter((o) => o.market === market).length >= limits.maxOrdersPerBook) return ResultCode.BookFull;
    if (this.liquidatingRefusal(cmd, market)) return ResultCode.AccountLiquidating;
    const bid = cmd.side === Side.Bid;
    const cheapestLot = market.minPriceTicks * market.quoteUnitsPerTickLot;
    if (this.perp.isPerp(market)) {
      if ((cmd.flags & MARGIN_FLAGS) !== 0) return ResultCode.InvalidCommand;
      const lots = byQuote ? Math.min(market.maxQtyLots, Number(BigInt(cmd.quoteQtyUnits) / BigInt(cheapestLot))) : cmd.qtyLots;
      if (lots < market.minQtyLots) return ResultCode.QuantityBelowMinimum;
      this.marketCap = { lots, quoteLimit: byQuote ? cmd.quoteQtyUnits : Number.MAX_SAFE_INTEGER };
      return this.perpHoldCode(cmd, market, lots);
    }
    const available = this.bal(cmd.accountId, bid ? market.quoteAssetId : market.baseAssetId).available;
    let lock: number;
    if (byQuote) {
      const quoteLots = Math.min(market.maxQtyLots, Number(BigInt(cmd.quoteQtyUnits) / BigInt(cheapestLot)));
      if (quoteLots < market.minQtyLots) return ResultCode.QuantityBelowMinimum;
      const lots = bid ? quoteLots : Math.min(quoteLots, Math.floor(available / market.baseUnitsPerLot));
      if (lots < market.minQtyLots) return ResultCode.InsufficientFunds;
      this.marketCap = { lots, quoteLimit: cmd.quoteQtyUnits };
      lock = bid ? cmd.quoteQtyUnits : lots * market.baseUnitsPerLot;
    } else {
      const budget = Math.min(available, cmd.qtyLots * market.maxPriceTicks * market.quoteUnitsPerTickLot);
      if (bid && budget < cheapestLot) return ResultCode.InsufficientFunds;
      this.marketCap = { lots: cmd.qtyLots, quoteLimit: bid ? budget : Number.MAX_SAFE_INTEGER };
      lock = bid ? budget : cmd.qtyLots * market.baseUnitsPerLot;
    }
    if (available >= lock) return ResultCode.Ok;
    // Only a hold that does not follow the balance is funded: an ask by quantity, a bid by quote.
    return bid === byQuote ? this.fundHold(cmd, bid ? market.quoteAssetId : market.baseAssetId, lock) : ResultCode.InsufficientFunds;
  }

  /** A liquidating account may only place an order that receives an asset it borrows (engine/core/margin/liquidating.ts). */
  private liquidatingRefusal(cmd: Command, market: MarketSpec): boolean {
    const received = cmd.side === Side.Bid ? market.baseAssetId : market.quoteAssetId;
    return this.lending.isLiquidating(cmd.accountId) && this.lending.borrowedOf(cmd.accountId, received) === 0;
  }

  private place(cmd: Command): void {
    const code = this.placeCode(cmd);
    if (code !== ResultCode.Ok) return this.result(cmd, code, 0);
    const market = this.market(cmd.marketId)!;
    const isMarket = cmd.orderType === OrderType.Market;
    const postOnly = (cmd.flags & CommandFlag.PostOnly) !== 0;
    const hasClientId = (cmd.flags & CommandFlag.HasClientId) !== 0;
    let orderId = 0;
    while (orderId === 0) orderId = permuteOrderNumber(++this.orderNumber, this.config.orderIdKey);
    const o: ModelOrder = {
      orderId, accountId: cmd.accountId, market, side: cmd.side, orderType: cmd.orderType, priceTicks: cmd.priceTicks,
      qtyLots: isMarket ? this.marketCap.lots : cmd.qtyLots, quoteQtyUnits: isMarket ? cmd.quoteQtyUnits : 0,
      quoteLimitUnits: isMarket ? this.marketCap.quoteLimit : 0, remainingLots: isMarket ? this.marketCap.lots : cmd.qtyLots, executedLots: 0, executedQuoteUnits: 0, createdAtUs: this.timeUs,
      clientId: hasClientId ? cmd.clientId : 0,
      flags: (postOnly ? OrderFlag.PostOnly : 0) | (hasClientId ? OrderFlag.HasClientId : 0)
        | ((cmd.flags & CommandFlag.AutoLend) !== 0 ? OrderFlag.AutoLend : 0) | ((cmd.flags & CommandFlag.AutoBorrowRepay) !== 0 ? OrderFlag.AutoBorrowRepay : 0)
        | ((cmd.flags & CommandFlag.ReduceOnly) !== 0 ? OrderFlag.ReduceOnly : 0),
      timeInForce: cmd.timeInForce, stp: cmd.selfTradePrevention, frontId: cmd.frontId, requestId: cmd.requestId,
      state: 'active', restNumber: 0,
    };
    this.orders.push(o);
    if (this.placeFunding) this.lending.applyFunding(o.accountId, this.placeFunding.assetId, this.placeFunding.plan);
    const b = this.bal(o.accountId, this.lockAsset(o));
    const lock = this.lockOf(o);
    b.available -= lock;
    b.locked += lock;
    this.balanceRec(o.accountId, this.lockAsset(o));
    if (postOnly || this.config.speedBumpUs === 0) this.activate(o);
    else o.state = 'pending';
  }

  /** A system order of the liquidation waterfall (engine-model-liquidation.ts) or a collateral conversion (engine-model-conversion.ts): a market IOC order by quantity, run at once. */
  private placeSystem(accountId: number, market: MarketSpec, side: Side, lots: number, quoteLimit: number, flags?: number): void {
    let orderId = 0;
    while (orderId === 0) orderId = permuteOrderNumber(++this.orderNumber, this.config.orderIdKey);
    const o: ModelOrder = {
      orderId, accountId, market, side, orderType: OrderType.Market, priceTicks: 0, qtyLots: lots, quoteQtyUnits: 0, quoteLimitUnits: quoteLimit,
      remainingLots: lots, executedLots: 0, executedQuoteUnits: 0, createdAtUs: this.timeUs, clientId: 0,
      flags: flags ?? (this.perp.isPerp(market) ? OrderFlag.Liquidation | OrderFlag.ReduceOnly : OrderFlag.Liquidation),
      timeInForce: TimeInForce.IOC, stp: SelfTradePrevention.RejectTaker, frontId: FRONT_ID_NONE, requestId: 0, state: 'active', restNumber: 0,
    };
    this.orders.push(o);
    if (!this.perp.isPerp(market)) {
      const b = this.bal(accountId, this.lockAsset(o));
      const lock = this.lockOf(o);
      b.available -= lock;
      b.locked += lock;
      this.balanceRec(accountId, this.lockAsset(o));
    }
    this.activate(o);
  }

  /** SetBackstopProvider (engine liquidation/backstop-admin.ts): an existing account, not one already, at most 64. */
  private setBackstopProvider(cmd: Command): void {
    const code = !this.accountExists(cmd.accountId) ? ResultCode.UnknownAccount
      : this.providers.includes(cmd.accountId) ? ResultCode.BackstopProviderAlreadySet
        : this.providers.length >= 64 ? ResultCode.BackstopProvidersFull : ResultCode.Ok;
    if (code !== ResultCode.Ok) return this.result(cmd, code, 0);
    this.providers = [...this.providers, cmd.accountId].sort((a, b) => a - b);
    this.providersAnswer(cmd);
  }

  private removeBackstopProvider(cmd: Command): void {
    if (!this.providers.includes(cmd.accountId)) return this.result(cmd, ResultCode.BackstopProviderNotSet, 0);
    this.providers = this.providers.filter((id) => id !== cmd.accountId);
    this.providersAnswer(cmd);
  }

  /** One BackstopProvider record per provider (rank from 1), then the Result. */
  private providersAnswer(cmd: Command): void {
    this.providers.forEach((accountId, i) => this.out.push({ ...this.header(RecordType.BackstopProvider, cmd.frontId, cmd.requestId, 0), accountId, rank: i + 1 } as Rec));
    this.result(cmd, ResultCode.Ok, this.providers.length);
  }

  /**
   * Auto-deleveraging (engine/core/liquidation/adl.ts closeAgainst): the account's whole position
   * closed at `ticks` against the ranked holders in turn, fee-free, off the book (no last price,
   * no depth); returns the holders it closed against.
   */
  private adlClose(accountId: number, market: MarketSpec, ticks: number, ranked: { accountId: number; lots: number }[]): number[] {
    let remaining = Math.abs(this.perp.size(accountId, market.marketId));
    const takes: { accountId: number; lots: number }[] = [];
    for (const counterparty of ranked) {
      if (remaining === 0) break;
      const qty = Math.min(remaining, Math.abs(counterparty.lots));
      takes.push({ accountId: counterparty.accountId, lots: qty });
      remaining -= qty;
    }
    if (remaining !== 0) throw new Error('model: auto-deleveraging found too few opposite positions');
    this.offBookClose(accountId, market, ticks, takes, OrderFlag.Liquidation | OrderFlag.Adl, 0);
    return takes.map((take) => take.accountId);
  }

  /**
   * The backstop (engine/core/liquidation/backstop.ts fillProviders): what each provider takes of
   * the account's position at `ticks`, off the book (flags Adl alone, trades flagged OffBook), the
   * account's half paying the liquidation fee.
   */
  private backstopClose(accountId: number, market: MarketSpec, ticks: number, takes: { accountId: number; lots: number }[]): void {
    this.offBookClose(accountId, market, ticks, takes, OrderFlag.Adl, HeaderFlag.OffBook);
  }

  /** Off-book fills (engine liquidation/adl.ts offBookFill): the account's order against one order per take, in turn. */
  private offBookClose(accountId: number, market: MarketSpec, ticks: number, takes: { accountId: number; lots: number }[], flags: number, tradeFlags: number): void {
    const side = this.perp.size(accountId, market.marketId) > 0 ? Side.Ask : Side.Bid;
    const own = this.adlOrder(accountId, market, side, takes.reduce((sum, take) => sum + take.lots, 0), ticks, flags);
    const backstop = (flags & OrderFlag.Liquidation) === 0;
    for (const take of takes) {
      const qty = take.lots;
      const theirs = this.adlOrder(take.accountId, market, side === Side.Bid ? Side.Ask : Side.Bid, qty, ticks, flags);
      const [buyer, seller] = side === Side.Bid ? [own, theirs] : [theirs, own];
      const quote = ticks * qty * market.quoteUnitsPerTickLot;
      const fees = this.perp.settle(market, buyer.accountId, seller.accountId, buyer === own, qty, quote, [backstop && buyer === own, backstop && seller === own], true);
      for (const o of [own, theirs]) {
        o.remainingLots -= qty;
        o.executedLots += qty;
        o.executedQuoteUnits += quote;
      }
      const tradeId = ++this.marketState.get(market.marketId)!.lastTradeId;
      this.out.push({
        ...this.header(RecordType.Trade, FRONT_ID_NONE, 0, tradeFlags), tradeId, priceTicks: ticks, qtyLots: qty, buyerOrderId: buyer.orderId,
        sellerOrderId: seller.orderId, marketId: market.marketId, buyerIsMaker: buyer === theirs,
      } as Rec);
      const feeOf = (o: ModelOrder) => (o === buyer ? fees[0] : fees[1]);
      this.orderRec(theirs, OrderEvent.Fill, OrderStatus.Filled, ExpiryReason.None, FRONT_ID_NONE, 0, 0, { qty, price: ticks, tradeId, maker: true, fee: feeOf(theirs) });
      this.orderRec(own, OrderEvent.Fill, this.status(own), ExpiryReason.None, FRONT_ID_NONE, 0, 0, { qty, price: ticks, tradeId, maker: false, fee: feeOf(own) });
      this.balanceRec(theirs.accountId, market.quoteAssetId);
      this.balanceRec(own.accountId, market.quoteAssetId);
      // The position events of the maker's and the taker's side (perp/settle.ts reportPerpSettlement).
      for (const o of [theirs, own]) this.perp.report(o.accountId, market, this.perp.fillEvent(o.accountId, market, o === buyer ? qty : -qty));
      this.orderRec(theirs, OrderEvent.None, OrderStatus.Filled, ExpiryReason.None, FRONT_ID_NONE, 0, HeaderFlag.Last);
      this.remove(theirs);
    }
    this.orderRec(own, OrderEvent.None, OrderStatus.Filled, ExpiryReason.None, FRONT_ID_NONE, 0, HeaderFlag.Last);
    this.remove(own);
  }

  /** An off-book order (ADL's: Liquidation | Adl; the backstop's: Adl), limit IOC at `ticks`, open and Accepted. */
  private adlOrder(accountId: number, market: MarketSpec, side: Side, lots: number, ticks: number, flags: number): ModelOrder {
    let orderId = 0;
    while (orderId === 0) orderId = permuteOrderNumber(++this.orderNumber, this.config.orderIdKey);
    const o: ModelOrder = {
      orderId, accountId, market, side, orderType: OrderType.Limit, priceTicks: ticks, qtyLots: lots, quoteQtyUnits: 0, quoteLimitUnits: Number.MAX_SAFE_INTEGER,
      remainingLots: lots, executedLots: 0, executedQuoteUnits: 0, createdAtUs: this.timeUs, clientId: 0, flags,
      timeInForce: TimeInForce.IOC, stp: SelfTradePrevention.RejectTaker, frontId: FRONT_ID_NONE, requestId: 0, state: 'active', restNumber: 0,
    };
    this.orders.push(o);
    this.orderRec(o, OrderEvent.Accepted, OrderStatus.New, ExpiryReason.None, FRONT_ID_NONE, 0, 0);
    return o;
  }

  /** The price band around the market's last trade price (bigint: no overflow to think about). */
  private outsideBand(market: MarketSpec, priceTicks: number): boolean {
    const last = this.marketState.get(market.marketId)!.lastPriceTicks;
    if (market.maxMultiplierBps === undefined || last === 0) return false;
    const price = BigInt(priceTicks) * 10000n;
    return price > BigInt(last) * BigInt(market.maxMultiplierBps) || price < BigInt(last) * BigInt(market.minMultiplierBps!);
  }

  /** Reference of the market order being matched (0: unbounded), fixed when it takes effect. */
  private sweepReference = 0;

  /** A market order stops at the band around the last trade price, or the first best price it meets. */
  private beyondSweepBand(o: ModelOrder, priceTicks: number): boolean {
    const m = o.market;
    if (o.orderType !== OrderType.Market || m.maxMultiplierBps === undefined || this.sweepReference === 0) return false;
    const price = BigInt(priceTicks) * 10000n;
    return o.side === Side.Bid ? price > BigInt(this.sweepReference) * BigInt(m.maxMultiplierBps) : price < BigInt(this.sweepReference) * BigInt(m.minMultiplierBps!);
  }

  /** The guarded reference follows a trade: seeded by the first, then one bounded step per interval. */
  private followTrade(state: MarketState, price: number): void {
    if (state.guardTicks === 0) {
      state.guardTicks = price;
      state.guardTimeUs = this.timeUs;
      return;
    }
    if (this.timeUs - state.guardTimeUs < (this.config.referenceIntervalUs ?? 60_000_000)) return;
    const step = Math.max(1, Number((BigInt(state.guardTicks) * BigInt(this.config.referenceStepBps ?? 100)) / 10000n));
    state.guardTicks = price > state.guardTicks ? Math.min(price, state.guardTicks + step) : Math.max(price, state.guardTicks - step);
    state.guardTimeUs = this.timeUs;
  }

  private activate(o: ModelOrder): void {
    this.orderRec(o, OrderEvent.Accepted, OrderStatus.New, ExpiryReason.None, FRONT_ID_NONE, 0, 0);
    const opposite = o.side === Side.Bid ? Side.Ask : Side.Bid;
    let reason = ExpiryReason.None;
    const best = this.sideOrders(o.market, opposite)[0];
    const last = this.marketState.get(o.market.marketId)!.lastPriceTicks;
    this.sweepReference = o.orderType !== OrderType.Market || o.market.maxMultiplierBps === undefined ? 0 : last || (best?.priceTicks ?? 0);
    if ((o.flags & OrderFlag.ReduceOnly) !== 0 && !this.admitReduceOnly(o)) {
      reason = ExpiryReason.ReduceOnlyNotReduced;
    } else if (o.orderType === OrderType.Limit && this.outsideBand(o.market, o.priceTicks)) {
      reason = ExpiryReason.PriceBand;
    } else if ((o.flags & OrderFlag.PostOnly) !== 0 && best && this.crosses(o, best.priceTicks)) {
      reason = ExpiryReason.PostOnlyTaker;
    } else if (o.timeInForce === TimeInForce.FOK && !this.fillable(o)) {
      reason = ExpiryReason.FillOrKill;
    } else {
      reason = this.match(o);
      const touched = this.touched;
      this.touched = [];
      for (const accountId of touched) this.trimReduceOnly(accountId, o.market);
      for (const accountId of touched) this.lending.review(accountId);
    }
    this.finish(o, reason);
  }

  /** The buyer's and seller's accounts of a fill between a taker and a maker. */
  private parties(o: ModelOrder, m: ModelOrder): [number, number] {
    return o.side === Side.Bid ? [o.accountId, m.accountId] : [m.accountId, o.accountId];
  }

  /** The fill-or-kill check (book/matching.ts canFillCompletely), with the perpetual's reduce-only makers, open interest and position limits on the sizes its earlier fills leave. */
  private fillable(o: ModelOrder): boolean {
    let need = o.remainingLots;
    const moved = new Map<number, number>();
    for (const m of this.sideOrders(o.market, o.side === Side.Bid ? Side.Ask : Side.Bid)) {
      if (!this.crosses(o, m.priceTicks)) return false;
      if (m.accountId === o.accountId) {
        if (o.stp === SelfTradePrevention.RejectMaker) continue;
        return false;
      }
      let lots = Math.min(need, m.remainingLots);
      if ((m.flags & OrderFlag.ReduceOnly) !== 0) {
        const size = this.perp.size(m.accountId, o.market.marketId) + (moved.get(m.accountId) ?? 0);
        lots = this.reduces(m.side, size) ? Math.min(lots, Math.abs(size)) : 0;
        if (lots === 0) continue;
      }
      const [buyer, seller] = this.parties(o, m);
      if (this.perp.isPerp(o.market) && this.perp.beyondLimit(o.market, buyer, seller, lots, moved, m.priceTicks)) return false;
      moved.set(buyer, (moved.get(buyer) ?? 0) + lots);
      moved.set(seller, (moved.get(seller) ?? 0) - lots);
      need -= lots;
      if (need <= 0) return true;
    }
    return false;
  }

  private match(o: ModelOrder): ExpiryReason {
    while (o.remainingLots > 0) {
      const m = this.sideOrders(o.market, o.side === Side.Bid ? Side.Ask : Side.Bid)[0];
      if (!m && o.orderType === OrderType.Market) return ExpiryReason.InsufficientLiquidity;
      if (!m || !this.crosses(o, m.priceTicks)) break;
      if (this.beyondSweepBand(o, m.priceTicks)) return ExpiryReason.PriceBand;
      if (m.accountId !== o.accountId) {
        if (this.makerLots(m) === 0) {
          this.expireResting(m);
          continue;
        }
        let qty = Math.min(o.remainingLots, this.makerLots(m));
        if (o.orderType === OrderType.Market) {
          const lotCost = m.priceTicks * o.market.quoteUnitsPerTickLot;
          qty = Math.min(qty, Number(BigInt(o.quoteLimitUnits - o.executedQuoteUnits) / BigInt(lotCost)));
          if (qty === 0) return o.quoteQtyUnits > 0 ? ExpiryReason.None : ExpiryReason.InsufficientFunds;
        }
        if (this.perp.isPerp(o.market) && this.perp.beyondLimit(o.market, ...this.parties(o, m), qty, new Map(), m.priceTicks)) return ExpiryReason.PositionLimit;
        this.fill(o, m, qty);
        continue;
      }
      if (o.stp === SelfTradePrevention.RejectTaker) return ExpiryReason.SelfTradePrevention;
      this.cancelOpen(m, ExpiryReason.SelfTradePrevention);
      if (o.stp === SelfTradePrevention.RejectBoth) return ExpiryReason.SelfTradePrevention;
    }
    return ExpiryReason.None;
  }

  private rates(accountId: number): { maker: number; taker: number } {
    return this.feeRates.get(accountId) ?? { maker: this.config.makerFeeBps ?? 0, taker: this.config.takerFeeBps ?? 0 };
  }

  /** The fee of `accountId` on `received` units, at its rates of the moment. */
  private fee(accountId: number, received: number, isTaker: boolean): number {
    const rates = this.rates(accountId);
    return Number((BigInt(received) * BigInt(isTaker ? rates.taker : rates.maker)) / 10000n);
  }

  /** The taker's status in its fill event: Filled also when its next step would end it Filled. */
  private takerStatus(taker: ModelOrder): OrderStatus {
    if (taker.remainingLots === 0) return OrderStatus.Filled;
    if (taker.orderType !== OrderType.Market || taker.quoteQtyUnits === 0) return OrderStatus.PartiallyFilled;
    for (const m of this.sideOrders(taker.market, taker.side === Side.Bid ? Side.Ask : Side.Bid)) {
      if (this.beyondSweepBand(taker, m.priceTicks)) return OrderStatus.PartiallyFilled;
      if (m.remainingLots === 0 || (m.accountId !== taker.accountId && this.makerLots(m) === 0)) continue;
      if (m.accountId === taker.accountId) {
        if (taker.stp === SelfTradePrevention.RejectMaker) continue;
        return OrderStatus.PartiallyFilled;
      }
      const lotCost = m.priceTicks * taker.market.quoteUnitsPerTickLot;
      const affordable = Number(BigInt(taker.quoteLimitUnits - taker.executedQuoteUnits) / BigInt(lotCost));
      return Math.min(taker.remainingLots, this.makerLots(m), affordable) === 0 ? OrderStatus.Filled : OrderStatus.PartiallyFilled;
    }
    return OrderStatus.PartiallyFilled;
  }

  // ---- operator commands ----

  private stateRefusal(market: MarketSpec, isMarket: boolean, postOnly: boolean): ResultCode {
    switch (this.marketState.get(market.marketId)!.orderBookState) {
      case OrderBookState.Closed: return ResultCode.MarketClosed;
      case OrderBookState.CancelOnly: return ResultCode.MarketCancelOnly;
      case OrderBookState.LimitOnly: return isMarket ? ResultCode.MarketLimitOnly : ResultCode.Ok;
      case OrderBookState.PostOnly: return postOnly ? ResultCode.Ok : ResultCode.MarketPostOnly;
      default: return ResultCode.Ok;
    }
  }

  private setMarketState(cmd: Command): void {
    const market = this.market(cmd.marketId);
    if (!market) return this.result(cmd, ResultCode.UnknownMarket, 0);
    if (![0, 1, 2, 3, 4].includes(cmd.amountUnits)) return this.result(cmd, ResultCode.InvalidOrderBookState, 0);
    const state = this.marketState.get(market.marketId)!;
    state.orderBookState = cmd.amountUnits;
    const pending = this.orders.filter((o) => o.state === 'pending' && o.market === market &&
      this.stateRefusal(market, o.orderType === OrderType.Market, (o.flags & OrderFlag.PostOnly) !== 0) !== ResultCode.Ok);
    const resting = state.orderBookState === OrderBookState.Closed ? [...this.sideOrders(market, Side.Bid), ...this.sideOrders(market, Side.Ask)] : [];
    for (const o of [...pending, ...resting]) this.cancelOpen(o, ExpiryReason.OrderBookClosed);
    this.out.push({ ...this.header(RecordType.MarketState, FRONT_ID_NONE, 0, 0), marketId: market.marketId, state: state.orderBookState } as Rec);
    this.result(cmd, ResultCode.Ok, pending.length + resting.length);
  }

  private setIndexPrice(cmd: Command): void {
    const asset = this.config.assets.find((a) => a.assetId === cmd.assetId);
    if (!asset) return this.result(cmd, ResultCode.UnknownAsset, 0);
    if (asset.symbol === 'USDC') return this.result(cmd, ResultCode.IndexPriceFixed, 0);
    if (!Number.isSafeInteger(cmd.priceTicks) || cmd.priceTicks <= 0) return this.result(cmd, ResultCode.IndexPriceNotPositive, 0);
    if (![1, 2, 3].includes(cmd.amountUnits)) return this.result(cmd, ResultCode.InvalidIndexPriceSource, 0);
    // Capped at prev × max (down) and floored at prev × min (up) where the asset has bounds and a price.
    const previous = this.indexPrices.get(asset.assetId);
    const bounds = this.config.indexUpdateBounds?.find((b) => b.assetId === asset.assetId);
    let price = BigInt(cmd.priceTicks);
    if (previous && bounds?.maxPriceUpdateMultiplier !== undefined) {
      const cap = (BigInt(previous.priceE9) * bounds.maxPriceUpdateMultiplier) / 10n ** 12n;
      if (price > cap) price = cap;
    }
    if (previous && bounds?.minPriceUpdateMultiplier !== undefined) {
      const floor = (BigInt(previous.priceE9) * bounds.minPriceUpdateMultiplier + 10n ** 12n - 1n) / 10n ** 12n;
      if (price < floor) price = floor;
    }
    const priceE9 = Number(price);
    this.indexPrices.set(asset.assetId, { priceE9, timeUs: this.timeUs, source: cmd.amountUnits });
    this.out.push({ ...this.header(RecordType.IndexPrice, FRONT_ID_NONE, 0, 0), priceE9, updatedUs: this.timeUs, assetId: asset.assetId, source: cmd.amountUnits, stale: false } as Rec);
    this.lending.reviewBorrowers(asset.assetId);
    this.perp.reviewUnderlying(asset.assetId);
    this.result(cmd, ResultCode.Ok, priceE9);
  }

  /** QueryIndexPrices: every asset in configuration order; stale when unset or older than the maximum age. */
  private queryIndexPrices(cmd: Command): void {
    const maxAgeUs = this.config.indexMaxAgeUs ?? 30_000_000;
    for (const asset of this.config.assets) {
      const row = asset.symbol === 'USDC' ? { priceE9: 1_000_000_000, timeUs: 0, source: 4 } : this.indexPrices.get(asset.assetId) ?? { priceE9: 0, timeUs: 0, source: 0 };
      const stale = row.source !== 4 && (row.source === 0 || this.timeUs - row.timeUs > maxAgeUs);
      this.out.push({ ...this.header(RecordType.IndexPrice, cmd.frontId, cmd.requestId, 0), priceE9: row.priceE9, updatedUs: row.timeUs, assetId: asset.assetId, source: row.source, stale } as Rec);
    }
    this.result(cmd, ResultCode.Ok, this.config.assets.length);
  }

  private setSystemState(cmd: Command): void {
    if (cmd.amountUnits !== 0 && cmd.amountUnits !== 1) return this.result(cmd, ResultCode.InvalidSystemState, 0);
    this.maintenance = cmd.amountUnits === 1;
    this.out.push({ ...this.header(RecordType.SystemState, FRONT_ID_NONE, 0, 0), state: cmd.amountUnits } as Rec);
    this.result(cmd, ResultCode.Ok, 0);
  }

  private feeRatesRec(accountId: number, frontId: number, requestId: number, flags: number): void {
    const rates = this.rates(accountId);
    this.out.push({ ...this.header(RecordType.FeeRates, frontId, requestId, flags), accountId, makerFeeBps: rates.maker, takerFeeBps: rates.taker } as Rec);
  }

  /**
   * UpdateAccountSettings (engine/core/margin/account-settings.ts): the word's low byte names the
   * settings that change (flags 1, 2, 4; leverage 8), its next byte the new flags; the leverage
   * limit runs from 100 to the configured maximum; a lower limit is refused (MaxLeverageReached)
   * when the account's exposure (TEN) would need more: TEN × 100 > limit × net equity.
   */
  private updateAccountSettings(cmd: Command): void {
    if (!this.accountExists(cmd.accountId)) return this.result(cmd, ResultCode.UnknownAccount, 0);
    const word = cmd.quoteQtyUnits;
    const change = word & 0xff;
    const values = Math.floor(word / 256);
    const wellFormed = Number.isInteger(word) && word >= 0 && word <= 0xffff && (change & ~15) === 0 && (values & ~(change & 7)) === 0;
    const setsLeverage = (change & 8) !== 0;
    if (!wellFormed || (!setsLeverage && cmd.amountUnits !== 0)) return this.result(cmd, ResultCode.InvalidCommand, 0);
    const max = this.config.maxLeverageHundredths ?? 10_000;
    if (setsLeverage && !(Number.isInteger(cmd.amountUnits) && cmd.amountUnits >= 100 && cmd.amountUnits <= max)) return this.result(cmd, ResultCode.LeverageLimitOutOfRange, 0);
    const now = this.accountSettings.get(cmd.accountId) ?? { flags: 0, leverage: 100 };
    if (setsLeverage && cmd.amountUnits < now.leverage && this.config.margin !== undefined) {
      const usage = this.lending.summary(cmd.accountId);
      if (usage.ten > 0n && usage.ten * 100n > BigInt(cmd.amountUnits) * usage.equity) return this.result(cmd, ResultCode.MaxLeverageReached, 0);
    }
    const next = { flags: (now.flags & ~(change & 7)) | values, leverage: setsLeverage ? cmd.amountUnits : now.leverage };
    this.accountSettings.set(cmd.accountId, next);
    this.accountSettingsRec(cmd.accountId, cmd.frontId, cmd.requestId, 0);
    this.result(cmd, ResultCode.Ok, 0);
  }

  private accountSettingsRec(accountId: number, frontId: number, requestId: number, flags: number): void {
    const settings = this.accountSettings.get(accountId) ?? { flags: 0, leverage: 100 };
    this.out.push({ ...this.header(RecordType.AccountSettings, frontId, requestId, flags), accountId, leverageLimitHundredths: settings.leverage, settings: settings.flags } as Rec);
  }

  private setFeeRates(cmd: Command): void {
    if (!this.accountExists(cmd.accountId)) return this.result(cmd, ResultCode.UnknownAccount, 0);
    const ok = (v: number) => Number.isInteger(v) && v >= 0 && v <= 10000;
    if (!ok(cmd.amountUnits) || !ok(cmd.quoteQtyUnits)) return this.result(cmd, ResultCode.FeeRateOutOfRange, 0);
    this.feeRates.set(cmd.accountId, { maker: cmd.amountUnits, taker: cmd.quoteQtyUnits });
    this.feeRatesRec(cmd.accountId, cmd.frontId, cmd.requestId, 0);
    this.result(cmd, ResultCode.Ok, 0);
  }

  private fill(taker: ModelOrder, maker: ModelOrder, qty: number): void {
    const market = taker.market;
    const price = maker.priceTicks;
    const buyer = taker.side === Side.Bid ? taker : maker;
    const seller = buyer === taker ? maker : taker;
    const quote = price * qty * market.quoteUnitsPerTickLot;
    const perp = this.perp.isPerp(market);
    const liquidation: [boolean, boolean] = [(buyer.flags & OrderFlag.Liquidation) !== 0, (seller.flags & OrderFlag.Liquidation) !== 0];
    const [buyerFee, sellerFee] = perp ? this.perp.settle(market, buyer.accountId, seller.accountId, taker === buyer, qty, quote, liquidation) : this.spotMoves(buyer, seller, taker, qty, price);
    const makerFee = maker === buyer ? buyerFee : sellerFee;
    const takerFee = taker === buyer ? buyerFee : sellerFee;
    for (const o of [maker, taker]) {
      o.remainingLots -= qty;
      o.executedLots += qty;
      o.executedQuoteUnits += quote;
    }
    const state = this.marketState.get(market.marketId)!;
    const tradeId = ++state.lastTradeId;
    state.lastPriceTicks = price;
    if (market.maxMultiplierBps !== undefined) this.followTrade(state, price);
    this.out.push({
      ...this.header(RecordType.Trade, FRONT_ID_NONE, 0, 0), tradeId, priceTicks: price, qtyLots: qty, buyerOrderId: buyer.orderId,
      sellerOrderId: seller.orderId, marketId: market.marketId, buyerIsMaker: buyer === maker,
    } as Rec);
    this.orderRec(maker, OrderEvent.Fill, this.status(maker), ExpiryReason.None, FRONT_ID_NONE, 0, 0, { qty, price, tradeId, maker: true, fee: makerFee });
    this.orderRec(taker, OrderEvent.Fill, this.takerStatus(taker), ExpiryReason.None, FRONT_ID_NONE, 0, 0, { qty, price, tradeId, maker: false, fee: takerFee });
    // The taker's balances wait until its match ends (takerBalances) unless takerSummary is off.
    for (const o of this.takerSummary ? [maker] : [maker, taker]) this.fillBalances(o.accountId, market);
    if (perp) for (const o of [maker, taker]) this.perp.report(o.accountId, market, this.perp.fillEvent(o.accountId, market, o === buyer ? qty : -qty));
    if (maker.remainingLots === 0) this.remove(maker);
    this.depthRec(market, maker.side, price);
    if (perp) for (const accountId of [buyer.accountId, seller.accountId]) if (!this.touched.includes(accountId)) this.touched.push(accountId);
  }

  /** The balances of the assets a fill in `market` moves: base and quote on a spot market, the quote on a perpetual. */
  private fillBalances(accountId: number, market: MarketSpec): void {
    if (!this.perp.isPerp(market)) this.balanceRec(accountId, market.baseAssetId);
    this.balanceRec(accountId, market.quoteAssetId);
  }

  /** A taker's balances, once, as its match ends (the engine's takerBalances); false when it did not fill or they went with each fill. */
  private takerBalances(o: ModelOrder): boolean {
    if (!this.takerSummary || o.executedLots === 0) return false;
    this.fillBalances(o.accountId, o.market);
    return true;
  }

  /** After a taker's remaining lock is released: its balances, or the lock's asset alone when it did not fill. */
  private releasedBalances(o: ModelOrder): void {
    if (!this.takerBalances(o)) this.balanceRec(o.accountId, this.lockAsset(o));
  }

  /** Accounts whose perpetual position the current activation's fills changed, first touched first. */
  private touched: number[] = [];

  /** What a resting order may fill now: a reduce-only one only what reduces its position (perp/reduce-only.ts). */
  private makerLots(m: ModelOrder): number {
    if ((m.flags & OrderFlag.ReduceOnly) === 0) return m.remainingLots;
    const size = this.perp.size(m.accountId, m.market.marketId);
    return this.reduces(m.side, size) ? Math.min(m.remainingLots, Math.abs(size)) : 0;
  }

  /** Whether a reduce-only order shrinks the position `lots`. */
  private reduces(side: Side, lots: number): boolean {
    return side === Side.Bid ? lots < 0 : lots > 0;
  }

  /** A reduce-only order taking effect (perp/reduce-only.ts): false if it cannot reduce; clipped to the position. */
  private admitReduceOnly(o: ModelOrder): boolean {
    const lots = this.perp.size(o.accountId, o.market.marketId);
    if (!this.reduces(o.side, lots)) return false;
    if (o.remainingLots > Math.abs(lots)) o.qtyLots = o.remainingLots = Math.abs(lots);
    return true;
  }

  /** After a perpetual fill: the account's resting reduce-only orders within its position, newest first. */
  private trimReduceOnly(accountId: number, market: MarketSpec): void {
    const lots = this.perp.size(accountId, market.marketId);
    const mine = this.orders.filter((o) => o.accountId === accountId && o.market === market && o.state === 'resting' && (o.flags & OrderFlag.ReduceOnly) !== 0);
    const kept: ModelOrder[] = [];
    for (const o of mine) {
      if (this.reduces(o.side, lots)) kept.push(o);
      else this.expireResting(o);
    }
    let excess = kept.reduce((sum, o) => sum + o.remainingLots, 0) - Math.abs(lots);
    for (const o of kept.reverse()) {
      if (excess <= 0) return;
      const cut = Math.min(excess, o.remainingLots);
      excess -= cut;
      if (cut === o.remainingLots) {
        this.expireResting(o);
        continue;
      }
      o.qtyLots -= cut;
      o.remainingLots -= cut;
      this.orderRec(o, OrderEvent.Modified, this.status(o), ExpiryReason.None, FRONT_ID_NONE, 0, 0);
      this.depthRec(o.market, o.side, o.priceTicks);
    }
  }

  private expireResting(o: ModelOrder): void {
    this.remove(o);
    this.orderRec(o, OrderEvent.Expired, OrderStatus.Expired, ExpiryReason.ReduceOnlyNotReduced, FRONT_ID_NONE, 0, 0);
    this.depthRec(o.market, o.side, o.priceTicks);
  }

  /** A collateral conversion's order: Liquidation | Adl on a spot market (engine/core/liquidation/conversion.ts). */
  private isConversion(o: ModelOrder): boolean {
    return !this.perp.isPerp(o.market) && (o.flags & CONVERSION_FLAGS) === CONVERSION_FLAGS;
  }

  /** A spot fill's moves (spot/settle.ts): base to the buyer, quote to the seller, fees in what each receives; returns the fees. */
  private spotMoves(buyer: ModelOrder, seller: ModelOrder, taker: ModelOrder, qty: number, price: number): [number, number] {
    const market = buyer.market;
    const base = qty * market.baseUnitsPerLot;
    const quote = price * qty * market.quoteUnitsPerTickLot;
    const buyerQuote = this.bal(buyer.accountId, market.quoteAssetId);
    let buyerFee = this.fee(buyer.accountId, base, buyer === taker);
    let sellerFee = this.fee(seller.accountId, quote, seller === taker);
    if (buyer.orderType === OrderType.Market) {
      buyerQuote.locked -= quote;
    } else {
      buyerQuote.locked -= buyer.priceTicks * qty * market.quoteUnitsPerTickLot;
      buyerQuote.available += (buyer.priceTicks - price) * qty * market.quoteUnitsPerTickLot;
    }
    this.bal(buyer.accountId, market.baseAssetId).available += base - buyerFee;
    this.bal(seller.accountId, market.baseAssetId).locked -= base;
    this.bal(seller.accountId, market.quoteAssetId).available += quote - sellerFee;
    this.feeUnits.set(market.baseAssetId, (this.feeUnits.get(market.baseAssetId) ?? 0) + buyerFee);
    this.feeUnits.set(market.quoteAssetId, (this.feeUnits.get(market.quoteAssetId) ?? 0) + sellerFee);
    // A liquidation order also pays the liquidation fee, reported with its trading fee.
    buyerFee += this.liquidation.fee(buyer, market.baseAssetId, base - buyerFee);
    sellerFee += this.liquidation.fee(seller, market.quoteAssetId, quote - sellerFee);
    this.proceeds(buyer, market.baseAssetId, base - buyerFee);
    this.proceeds(seller, market.quoteAssetId, quote - sellerFee);
    return [buyerFee, sellerFee];
  }

  /** A fill paid an order's account: repaid or lent as the order's spot margin flags or the account's settings ask. */
  private proceeds(o: ModelOrder, assetId: number, units: number): void {
    if (this.isConversion(o)) return; // they pay the account's debts
    const settings = this.accountSettings.get(o.accountId)?.flags ?? 0;
    const repay = (o.flags & OrderFlag.AutoBorrowRepay) !== 0 || (settings & AccountSettingFlag.AutoRepayBorrows) !== 0;
    const lend = (o.flags & OrderFlag.AutoLend) !== 0 || (settings & AccountSettingFlag.AutoLend) !== 0;
    if (repay || lend) this.lending.applyProceeds(o.accountId, assetId, units, repay, lend);
  }

  private finish(o: ModelOrder, stopReason: ExpiryReason): void {
    if (o.orderType === OrderType.Market) {
      const done = o.remainingLots === 0 || (stopReason === ExpiryReason.None && o.executedLots > 0);
      if (!done) return this.expire(o, stopReason === ExpiryReason.None ? ExpiryReason.InsufficientLiquidity : stopReason);
      const b = this.bal(o.accountId, this.lockAsset(o));
      const lock = this.lockOf(o);
      b.locked -= lock;
      b.available += lock;
      this.remove(o);
      this.releasedBalances(o);
      return this.orderRec(o, OrderEvent.None, OrderStatus.Filled, ExpiryReason.None, o.frontId, o.requestId, HeaderFlag.Last);
    }
    if (o.remainingLots === 0) {
      this.remove(o);
      this.takerBalances(o);
      return this.orderRec(o, OrderEvent.None, OrderStatus.Filled, ExpiryReason.None, o.frontId, o.requestId, HeaderFlag.Last);
    }
    let reason = stopReason;
    if (reason === ExpiryReason.None && o.timeInForce === TimeInForce.IOC) reason = ExpiryReason.ImmediateOrCancel;
    if (reason !== ExpiryReason.None) return this.expire(o, reason);
    o.state = 'resting';
    o.restNumber = ++this.restCounter;
    this.depthRec(o.market, o.side, o.priceTicks);
    this.takerBalances(o);
    this.orderRec(o, OrderEvent.None, this.status(o), ExpiryReason.None, o.frontId, o.requestId, HeaderFlag.Last);
  }

  private expire(o: ModelOrder, reason: ExpiryReason): void {
    const b = this.bal(o.accountId, this.lockAsset(o));
    const lock = this.lockOf(o);
    b.locked -= lock;
    b.available += lock;
    this.remove(o);
    this.orderRec(o, OrderEvent.Expired, OrderStatus.Expired, reason, FRONT_ID_NONE, 0, 0);
    this.releasedBalances(o);
    this.orderRec(o, OrderEvent.None, OrderStatus.Expired, reason, o.frontId, o.requestId, HeaderFlag.Last);
  }

  /** Cancels a pending or resting order (events, balance, depth or the delayed place's answer). */
  private cancelOpen(o: ModelOrder, reason: ExpiryReason): void {
    const wasPending = o.state === 'pending';
    const b = this.bal(o.accountId, this.lockAsset(o));
    const lock = this.lockOf(o);
    b.locked -= lock;
    b.available += lock;
    this.remove(o);
    this.orderRec(o, OrderEvent.Cancelled, OrderStatus.Cancelled, reason, FRONT_ID_NONE, 0, 0);
    this.balanceRec(o.accountId, this.lockAsset(o));
    if (wasPending) this.orderRec(o, OrderEvent.None, OrderStatus.Cancelled, reason, o.frontId, o.requestId, HeaderFlag.Last);
    else this.depthRec(o.market, o.side, o.priceTicks);
  }

  private findOpen(cmd: Command, market: MarketSpec): ModelOrder | undefined {
    const mine = this.orders.filter((o) => o.accountId === cmd.accountId && o.market === market);
    if ((cmd.flags & CommandFlag.HasClientId) !== 0) return mine.find((o) => (o.flags & OrderFlag.HasClientId) !== 0 && o.clientId === cmd.clientId);
    return mine.find((o) => o.orderId === cmd.orderId);
  }

  private cancel(cmd: Command): void {
    if (!this.accountExists(cmd.accountId)) return this.result(cmd, ResultCode.UnknownAccount, 0);
    const market = this.market(cmd.marketId);
    if (!market) return this.result(cmd, ResultCode.UnknownMarket, 0);
    const o = this.findOpen(cmd, market);
    if (!o) return this.result(cmd, ResultCode.UnknownOrder, 0);
    this.cancelOpen(o, ExpiryReason.None);
    this.orderRec(o, OrderEvent.None, OrderStatus.Cancelled, ExpiryReason.None, cmd.frontId, cmd.requestId, HeaderFlag.Last);
  }

  private cancelAll(cmd: Command): void {
    if (!this.accountExists(cmd.accountId)) return this.result(cmd, ResultCode.UnknownAccount, 0);
    const market = this.market(cmd.marketId);
    if (!market) return this.result(cmd, ResultCode.UnknownMarket, 0);
    const mine = this.orders.filter((o) => o.accountId === cmd.accountId && o.market === market);
    for (const o of mine) {
      this.cancelOpen(o, ExpiryReason.None);
      this.orderRec(o, OrderEvent.None, OrderStatus.Cancelled, ExpiryReason.None, cmd.frontId, cmd.requestId, 0);
    }
    this.result(cmd, ResultCode.Ok, mine.length);
  }

  // ---- capital commands ----

  private assetExists(assetId: number): boolean {
    return this.config.assets.some((a) => a.assetId === assetId);
  }

  /** Available units leave the exchange; the withdrawal's id is the command's own sequence number. */
  private withdraw(cmd: Command): void {
    if (!this.accountExists(cmd.accountId)) return this.result(cmd, ResultCode.UnknownAccount, 0);
    if (!this.assetExists(cmd.assetId)) return this.result(cmd, ResultCode.UnknownAsset, 0);
    const amount = cmd.amountUnits;
    if ((cmd.flags & ~FUNDING_FLAGS) !== 0) return this.result(cmd, ResultCode.InvalidCommand, 0);
    if (!Number.isSafeInteger(amount) || amount <= 0) return this.result(cmd, ResultCode.AmountOutOfRange, 0);
    if (this.lending.isLiquidating(cmd.accountId)) return this.result(cmd, ResultCode.AccountLiquidating, 0);
    const plan = this.lending.planFunding(cmd.accountId, cmd.assetId, amount, amount, cmd.flags);
    if (plan.code !== ResultCode.Ok) return this.result(cmd, plan.code, 0);
    this.lending.applyFunding(cmd.accountId, cmd.assetId, plan);
    const b = this.bal(cmd.accountId, cmd.assetId);
    b.available = Number(BigInt(b.available) - BigInt(amount));
    this.supply.set(cmd.assetId, Number(BigInt(this.supply.get(cmd.assetId) ?? 0) - BigInt(amount)));
    this.balanceRec(cmd.accountId, cmd.assetId);
    this.lending.review(cmd.accountId);
    this.result(cmd, ResultCode.Ok, this.seq);
  }

  /** Changes nothing: the id must name an earlier command, and the account must exist. */
  private confirmWithdrawal(cmd: Command): void {
    if (!this.accountExists(cmd.accountId)) return this.result(cmd, ResultCode.UnknownAccount, 0);
    const id = cmd.orderId;
    const earlier = Number.isSafeInteger(id) && id >= 1 && id < this.seq;
    this.result(cmd, earlier ? ResultCode.Ok : ResultCode.InvalidCommand, 0);
  }

  /** Dust is valued at the lower of the guarded reference and the last trade (0n: no such price). */
  private dustMarkTicks(market: MarketSpec): bigint {
    if (market.maxMultiplierBps === undefined) return 0n;
    const state = this.marketState.get(market.marketId)!;
    const guard = BigInt(state.guardTicks);
    const last = BigInt(state.lastPriceTicks);
    return guard < last ? guard : last;
  }

  /** The most one conversion pays: the market's own cap, else ten whole quote units. */
  private dustCap(market: MarketSpec): bigint {
    if (market.dustMaxPayoutUnits !== undefined) return BigInt(market.dustMaxPayoutUnits);
    const decimals = this.config.assets.find((a) => a.assetId === market.quoteAssetId)!.decimals;
    const tenWhole = 10n * 10n ** BigInt(decimals);
    const maxSafe = BigInt(Number.MAX_SAFE_INTEGER);
    return tenWhole < maxSafe ? tenWhole : maxSafe;
  }

  /** 95 % of the dust's value at the mark price, rounded down, then capped. */
  private dustPayout(market: MarketSpec, dustUnits: number, markTicks: bigint): bigint {
    const value = (BigInt(dustUnits) * markTicks * BigInt(market.quoteUnitsPerTickLot) * 95n) / (BigInt(market.baseUnitsPerLot) * 100n);
    const cap = this.dustCap(market);
    return value < cap ? value : cap;
  }

  private dustCode(cmd: Command, market: MarketSpec): ResultCode {
    const dust = this.bal(cmd.accountId, market.baseAssetId);
    if (dust.locked > 0 || dust.available === 0) return ResultCode.DustNotEligible;
    if (BigInt(dust.available) >= BigInt(market.minQtyLots) * BigInt(market.baseUnitsPerLot)) return ResultCode.DustNotEligible;
    if (dust.available !== cmd.amountUnits) return ResultCode.DustBalanceChanged;
    const mark = this.dustMarkTicks(market);
    if (mark === 0n) return ResultCode.DustNoMarkPrice;
    const treasury = BigInt(this.feeUnits.get(market.quoteAssetId) ?? 0);
    return treasury < this.dustPayout(market, dust.available, mark) ? ResultCode.DustTreasuryShort : ResultCode.Ok;
  }

  /** The exchange takes the whole dust balance into its fee column and pays from its quote fees. */
  private convertDust(cmd: Command): void {
    if (!this.accountExists(cmd.accountId)) return this.result(cmd, ResultCode.UnknownAccount, 0);
    const market = this.market(cmd.marketId);
    if (!market) return this.result(cmd, ResultCode.UnknownMarket, 0);
    const code = this.dustCode(cmd, market);
    if (code !== ResultCode.Ok) return this.result(cmd, code, 0);
    const dust = this.bal(cmd.accountId, market.baseAssetId);
    const payout = this.dustPayout(market, dust.available, this.dustMarkTicks(market));
    const addFee = (assetId: number, units: bigint) => this.feeUnits.set(assetId, Number(BigInt(this.feeUnits.get(assetId) ?? 0) + units));
    addFee(market.baseAssetId, BigInt(dust.available));
    dust.available = 0;
    addFee(market.quoteAssetId, -payout);
    const paid = this.bal(cmd.accountId, market.quoteAssetId);
    paid.available = Number(BigInt(paid.available) + payout);
    this.balanceRec(cmd.accountId, market.baseAssetId);
    this.balanceRec(cmd.accountId, market.quoteAssetId);
    this.result(cmd, ResultCode.Ok, Number(payout));
  }

  // ---- queries ----

  private query(cmd: Command): void {
    const market = this.market(cmd.marketId);
    switch (cmd.kind) {
      case CommandKind.QueryIndexPrices:
        return this.queryIndexPrices(cmd);
      case CommandKind.QueryMarkPrices:
        return this.perp.marks.query(cmd);
      case CommandKind.QueryBackstop:
        return this.providersAnswer(cmd);
      case CommandKind.QueryBalances:
        if (!this.accountExists(cmd.accountId)) return this.result(cmd, ResultCode.UnknownAccount, 0);
        for (const asset of this.config.assets) this.balanceRec(cmd.accountId, asset.assetId, cmd.frontId, cmd.requestId);
        return this.result(cmd, ResultCode.Ok, this.config.assets.length);
      case CommandKind.QueryOpenOrders: {
        const all = cmd.marketId === 0xffff;
        if (!this.accountExists(cmd.accountId)) return this.result(cmd, ResultCode.UnknownAccount, 0);
        if (!all && !market) return this.result(cmd, ResultCode.UnknownMarket, 0);
        const rows = this.orders.filter((o) => o.accountId === cmd.accountId && (all || o.market === market));
        for (const o of rows) this.orderRec(o, OrderEvent.None, this.status(o), ExpiryReason.None, cmd.frontId, cmd.requestId, 0);
        return this.result(cmd, ResultCode.Ok, rows.length);
      }
      case CommandKind.QueryOrder: {
        if (!this.accountExists(cmd.accountId)) return this.result(cmd, ResultCode.UnknownAccount, 0);
        if (!market) return this.result(cmd, ResultCode.UnknownMarket, 0);
        const o = this.findOpen(cmd, market);
        if (!o) return this.result(cmd, ResultCode.UnknownOrder, 0);
        return this.orderRec(o, OrderEvent.None, this.status(o), ExpiryReason.None, cmd.frontId, cmd.requestId, HeaderFlag.Last);
      }
      case CommandKind.QuerySnapshot: {
        const before = this.out.length;
        this.keys.forEach((key, i) => this.out.push({ ...this.header(RecordType.Account, cmd.frontId, cmd.requestId, 0), key: key.slice(), accountId: i + 1 } as Rec));
        for (const m of this.config.markets) {
          const state = this.marketState.get(m.marketId)!;
          this.out.push({ ...this.header(RecordType.Market, cmd.frontId, cmd.requestId, 0), updateId: state.updateId, lastTradeId: state.lastTradeId, marketId: m.marketId } as Rec);
        }
        for (const m of this.config.markets) {
          this.out.push({ ...this.header(RecordType.MarketState, cmd.frontId, cmd.requestId, 0), marketId: m.marketId, state: this.marketState.get(m.marketId)!.orderBookState } as Rec);
        }
        this.out.push({ ...this.header(RecordType.SystemState, cmd.frontId, cmd.requestId, 0), state: this.maintenance ? 1 : 0 } as Rec);
        for (const m of this.config.markets) {
          for (const side of [Side.Bid, Side.Ask]) {
            for (const price of this.levels(m, side)) {
              this.out.push({
                ...this.header(RecordType.Depth, cmd.frontId, cmd.requestId, 0), priceTicks: price, qtyLots: this.levelQty(m, side, price),
                updateId: this.marketState.get(m.marketId)!.updateId, marketId: m.marketId, side,
              } as Rec);
            }
          }
        }
        return this.result(cmd, ResultCode.Ok, this.out.length - before);
      }
      case CommandKind.QueryFeeRates:
        if (!this.accountExists(cmd.accountId)) return this.result(cmd, ResultCode.UnknownAccount, 0);
        return this.feeRatesRec(cmd.accountId, cmd.frontId, cmd.requestId, HeaderFlag.Last);
      case CommandKind.QueryCollateral:
        return this.collateral(cmd);
      case CommandKind.QueryMaxOrderQty:
        return this.maxOrderQty(cmd);
      case CommandKind.QueryAccountSettings:
        if (!this.accountExists(cmd.accountId)) return this.result(cmd, ResultCode.UnknownAccount, 0);
        return this.accountSettingsRec(cmd.accountId, cmd.frontId, cmd.requestId, HeaderFlag.Last);
      case CommandKind.QueryLendPools:
        return this.lending.queryPools(cmd);
      case CommandKind.QueryBorrowLendPositions:
        return this.lending.queryPositions(cmd);
      case CommandKind.QueryMaxBorrowQty:
        return this.lending.queryMaxBorrow(cmd);
      case CommandKind.QueryMaxWithdrawalQty:
        return this.lending.queryMaxWithdrawal(cmd);
      case CommandKind.QueryPositions:
        return this.perp.query(cmd);
      case CommandKind.QueryOpenInterest:
        return this.perp.queryOpenInterest(cmd);
      default:
        return this.result(cmd, ResultCode.InvalidCommand, 0);
    }
  }

  // ---- spot risk (engine/core/funds/risk.ts) ----

  /** The first market of base `assetId` quoted in `quoteId`. */
  private pairMarket(assetId: number, quoteId: number): MarketSpec | undefined {
    return this.config.markets.find((m) => m.baseAssetId === assetId && m.quoteAssetId === quoteId);
  }

  /** The account's margin summary (engine-model-margin.ts): a line per asset it holds, lends or borrows, the account figures, then the result. */
  private collateral(cmd: Command): void {
    if (!this.accountExists(cmd.accountId)) return this.result(cmd, ResultCode.UnknownAccount, 0);
    if (cmd.assetId !== this.config.margin?.valuationAssetId || !this.assetExists(cmd.assetId)) return this.result(cmd, ResultCode.UnknownAsset, 0);
    const wide = (v: bigint, name: string) => {
      const high = v >= 0n ? v / 2n ** 53n : -((-v + 2n ** 53n - 1n) / 2n ** 53n);
      return { [`${name}High`]: Number(high), [`${name}Low`]: Number(v - high * 2n ** 53n) };
    };
    const s = this.lending.summary(cmd.accountId);
    const perp = this.perp.terms(cmd.accountId, null);
    for (const l of s.lines) {
      this.out.push({
        ...this.header(RecordType.Collateral, cmd.frontId, cmd.requestId, 0), availableUnits: Number(l.available), lockedUnits: Number(l.locked), lentUnits: Number(l.lent),
        borrowedUnits: Number(l.borrowed), markTicks: l.mark?.ticks ?? 0, markPriceE9: l.mark?.priceE9 ?? 0, weight: Number(l.weight),
        ...wide(l.notional, 'notional'), ...wide(l.collateral, 'collateralValue'), ...wide(l.liability, 'liability'),
        assetId: l.assetId, marketId: l.mark?.marketId ?? 0xffff, markSource: l.mark?.source ?? 0,
      } as unknown as Rec);
    }
    this.out.push({
      ...this.header(RecordType.MarginSummary, cmd.frontId, cmd.requestId, 0), ...wide(s.assets, 'assetsValue'), ...wide(s.liabilities, 'liabilities'),
      ...wide(s.equity, 'netEquity'), ...wide(s.imfUnits, 'imfUnits'), ...wide(s.mmfUnits, 'mmfUnits'), ...wide(s.ten, 'ten'), ...wide(s.marginFraction ?? 0n, 'marginFraction'),
      accountImf: Number(s.accountImf), accountMmf: Number(s.accountMmf),
      ...wide(perp.pnl, 'pnlUnrealized'), ...wide(perp.unsettled, 'unsettled'), ...wide(perp.exposures.reduce((sum, e) => sum + e.notional, 0n), 'futuresExposure'),
      accountId: cmd.accountId,
      summaryFlags: (s.marginFraction === null ? 0 : 1) | (this.lending.isLiquidating(cmd.accountId) ? 2 : 0),
    } as unknown as Rec);
    this.result(cmd, ResultCode.Ok, s.lines.length);
  }

  /** Whole lots: an ask by available base, a limit bid by available quote, a market bid walking the asks within the band. */
  private maxOrderQty(cmd: Command): void {
    const market = this.market(cmd.marketId);
    if (!this.accountExists(cmd.accountId)) return this.result(cmd, ResultCode.UnknownAccount, 0);
    if (!market) return this.result(cmd, ResultCode.UnknownMarket, 0);
    const price = cmd.priceTicks;
    if ((cmd.side !== Side.Bid && cmd.side !== Side.Ask) || !Number.isSafeInteger(price) || price < 0) return this.result(cmd, ResultCode.InvalidCommand, 0);
    if (price > 0 && price < market.minPriceTicks) return this.result(cmd, ResultCode.PriceBelowMinimum, 0);
    if (price > market.maxPriceTicks) return this.result(cmd, ResultCode.PriceAboveMaximum, 0);
    if ((cmd.flags & ~(FUNDING_FLAGS | CommandFlag.AutoBorrowRepay)) !== 0) return this.result(cmd, ResultCode.InvalidCommand, 0);
    const received = cmd.side === Side.Ask ? market.quoteAssetId : market.baseAssetId;
    if (this.lending.isLiquidating(cmd.accountId) && this.lending.borrowedOf(cmd.accountId, received) === 0) return this.result(cmd, ResultCode.Ok, 0);
    if (this.perp.isPerp(market)) {
      if (cmd.flags !== 0) return this.result(cmd, ResultCode.InvalidCommand, 0);
      let most = 0;
      while (most < market.maxQtyLots && this.perp.admission(cmd.accountId, market, cmd.side, most + 1) === ResultCode.Ok) most++;
      return this.result(cmd, ResultCode.Ok, most);
    }
    // With autoLendRedeem or autoBorrow: the most the order could fund instead of the available balance.
    const spent = cmd.side === Side.Ask ? market.baseAssetId : market.quoteAssetId;
    const spendable = (cmd.flags & FUNDING_FLAGS) !== 0 ? this.lending.maxFundable(cmd.accountId, spent, cmd.flags, false) : this.bal(cmd.accountId, spent).available;
    let lots = 0n;
    if (cmd.side === Side.Ask) lots = BigInt(spendable) / BigInt(market.baseUnitsPerLot);
    else {
      let budget = BigInt(spendable);
      if (price > 0) lots = budget / (BigInt(price) * BigInt(market.quoteUnitsPerTickLot));
      const asks = price > 0 ? [] : this.levels(market, Side.Ask);
      const banded = market.maxMultiplierBps !== undefined;
      const reference = BigInt(banded ? this.marketState.get(market.marketId)!.lastPriceTicks || (asks[0] ?? 0) : 0);
      for (const ask of asks) {
        if (reference > 0n && BigInt(ask) * 10000n > reference * BigInt(market.maxMultiplierBps!)) break;
        const lotCost = BigInt(ask) * BigInt(market.quoteUnitsPerTickLot);
        const levelLots = BigInt(this.levelQty(market, Side.Ask, ask));
        const take = budget / lotCost < levelLots ? budget / lotCost : levelLots;
        lots += take;
        budget -= take * lotCost;
        if (take < levelLots) break;
      }
    }
    this.result(cmd, ResultCode.Ok, Number(lots < BigInt(market.maxQtyLots) ? lots : BigInt(market.maxQtyLots)));
  }

  /** Every dust balance with a mark price, through its first market quoted in cmd.assetId; all or none. */
  private convertAllDust(cmd: Command): void {
    if (!this.accountExists(cmd.accountId)) return this.result(cmd, ResultCode.UnknownAccount, 0);
    if (!this.config.assets.some((a) => a.assetId === cmd.assetId)) return this.result(cmd, ResultCode.UnknownAsset, 0);
    const all = cmd.marketId === 0xffff;
    if (!all && !this.market(cmd.marketId)) return this.result(cmd, ResultCode.UnknownMarket, 0);
    const plans: Array<{ market: MarketSpec; amount: number; payout: bigint }> = [];
    let found = false;
    for (const market of this.config.markets) {
      if (market.quoteAssetId !== cmd.assetId || (!all && market.marketId !== cmd.marketId) || this.pairMarket(market.baseAssetId, cmd.assetId) !== market) continue;
      const dust = this.bal(cmd.accountId, market.baseAssetId);
      if (dust.locked > 0 || dust.available === 0 || BigInt(dust.available) >= BigInt(market.minQtyLots) * BigInt(market.baseUnitsPerLot)) continue;
      found = true;
      const mark = this.dustMarkTicks(market);
      if (mark > 0n) plans.push({ market, amount: dust.available, payout: this.dustPayout(market, dust.available, mark) });
    }
    if (plans.length === 0) return this.result(cmd, found ? ResultCode.DustNoMarkPrice : ResultCode.DustNotEligible, 0);
    const total = plans.reduce((sum, p) => sum + p.payout, 0n);
    if (BigInt(this.feeUnits.get(cmd.assetId) ?? 0) < total) return this.result(cmd, ResultCode.DustTreasuryShort, 0);
    const addFee = (assetId: number, units: bigint) => this.feeUnits.set(assetId, Number(BigInt(this.feeUnits.get(assetId) ?? 0) + units));
    for (const { market, amount, payout } of plans) {
      addFee(market.baseAssetId, BigInt(amount));
      this.bal(cmd.accountId, market.baseAssetId).available = 0;
      addFee(cmd.assetId, -payout);
      const paid = this.bal(cmd.accountId, cmd.assetId);
      paid.available = Number(BigInt(paid.available) + payout);
      this.out.push({ ...this.header(RecordType.Dust, cmd.frontId, cmd.requestId, 0), amountUnits: amount, payoutUnits: Number(payout), accountId: cmd.accountId, marketId: market.marketId } as Rec);
    }
    for (const { market } of plans) this.balanceRec(cmd.accountId, market.baseAssetId);
    this.balanceRec(cmd.accountId, cmd.assetId);
    this.result(cmd, ResultCode.Ok, Number(total));
  }
}
