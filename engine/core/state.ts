// The whole state of the engine core, and the small rules every command shares.
//
// Exchange (commands), matching (activation), queries, the invariant checker and the state hash
// all work on this one object. It owns every structure, each sized once from config.limits:
//   accounts   maxAccounts keys;                        ledger  (maxAccounts + 1) × assets balances
//   accountSettings  (maxAccounts + 1) flags and leverage limits
//   pool       min(markets × maxOrdersPerBook, maxAccounts × maxOpenOrdersPerAccount) orders
//   index      2 × pool cells;                          books   2 × maxPriceLevelsPerSide levels each
// the index prices of every asset (margin/index-prices.ts), (maxAccounts + 1) × perpetuals
// positions (perp/positions.ts), and the counters that replay must reproduce (the order number behind ids, per-market trade and
// depth update ids, the rest counters inside each book).

import { OrderFlag, SystemState, type EngineConfig, type EngineLimits } from '../bus/types.js';
import { Accounts } from './funds/accounts.js';
import { AccountSettings } from './margin/account-settings.js';
import { assert } from './assert.js';
import { Book } from './book/book.js';
import { Catalog } from './catalog.js';
import { ORDER_ID_SPAN, permuteOrderNumber } from './ids.js';
import { Ledger } from './funds/ledger.js';
import { LendPools } from './margin/pools.js';
import { OrderIndex } from './book/orderIndex.js';
import { MAX_ORDER_SLOTS, NO_SLOT, OrderPool, OrderState, Of } from './book/orders.js';
import { Output } from './output.js';
import type { SnapshotReader, SnapshotWriter, StateDigest } from './parts.js';
import { PendingQueue } from './book/pending.js';
import { DEFAULT_INDEX_MAX_AGE_US, INDEX_FIXED_SYMBOL, IndexPrices } from './margin/index-prices.js';
import { Timers } from './timers.js';
import { PerpMarks } from './perp/mark-price.js';
import { Positions } from './perp/positions.js';
import { FundingPasses } from './perp/funding-passes.js';
import { Realization } from './perp/realize.js';
import { InterestPass, payLenderAhead } from './margin/interest-pass.js';
import { InsuranceFund } from './liquidation/fund.js';
import { ConversionMarks } from './liquidation/conversion.js';
import { BackstopProviders } from './liquidation/backstop-providers.js';
import { TriggerIndex } from './margin/trigger-index.js';

export class EngineState {
  readonly catalog: Catalog;
  readonly limits: EngineLimits;
  readonly speedBumpUs: number;
  readonly orderIdKey: number;
  readonly accounts: Accounts;
  readonly ledger: Ledger;
  /** Each account's margin settings (margin/account-settings.ts). */
  readonly accountSettings: AccountSettings;
  readonly pool: OrderPool;
  readonly index: OrderIndex;
  readonly books: Book[];
  readonly pending: PendingQueue;
  /** Every engine-time rule's timers (timers.ts): one per pending order, and the interest timer. */
  readonly timers: Timers;
  /** Borrow/lend pools and positions (margin/pools.ts). */
  readonly pools: LendPools;
  readonly out: Output;
  /** Each asset's index price, its engine time and source (margin/index-prices.ts). */
  readonly indexPrices: IndexPrices;
  /** Each perpetual's mark price EWMA and its open funding interval's premiums (perp/mark-price.ts). */
  /** Realization of perpetual PnL at mark (perp/realize.ts): its interval and timer. */
  readonly realization: Realization;
  /** The perpetuals' funding passes in steps (perp/funding-passes.ts). */
  readonly fundingPasses: FundingPasses;
  /** The hour's pass over the lenders and borrowers in steps (margin/interest-pass.ts). */
  readonly interestPass: InterestPass;
  readonly perpMarks: PerpMarks;
  /** Perpetual positions and the settlement lines (perp/positions.ts). */
  readonly positions: Positions;
  /** The insurance fund and the liquidation waterfall's step timer (liquidation/fund.ts). */
  readonly insurance: InsuranceFund;
  /** Scratch of one command, not state: the accounts left owing USDC, whose collateral converts at its end (liquidation/conversion.ts). */
  readonly conversion: ConversionMarks;
  /** Not state: the size of the last snapshot written of this state, the next one's first buffer (snapshot.ts encodeState). */
  snapshotBytesHint = 1 << 16;
  /** The backstop liquidity providers (liquidation/backstop-providers.ts). */
  readonly backstop = new BackstopProviders();
  /** Derived, not state: which accounts a price move can push over the liquidation line (margin/trigger-index.ts). */
  readonly trigger: TriggerIndex;
  /** The last order number turned into an id. */
  orderNumber = 0;
  /** seq and engine time of the last state-changing command (-1: none yet, so seq may start at 0). */
  lastSeq = -1;
  lastTimeUs = 0;
  /** The whole exchange's state (system.ts): Ok, or Maintenance. */
  systemState: SystemState = SystemState.Ok;
  /**
   * Scratch of one activation, not state: the reference price whose band stops the market order
   * being matched (0: unbounded). Set by activateOrder before matching, read by matching only.
   */
  sweepReferenceTicks = 0;
  /**
   * Scratch of one activation, not state: a taker's last fill kept for its answer to carry
   * (book/matching.ts carriesLastFill); taker NO_SLOT when none is kept. Per engine, so that a
   * failed command of one engine can never leave a kept fill for another's.
   */
  readonly lastFill = { taker: NO_SLOT, qtyLots: 0, priceTicks: 0, tradeId: 0, feeUnits: 0 };

  constructor(config: EngineConfig) {
    this.catalog = new Catalog(config);
    this.limits = { ...config.limits };
    this.speedBumpUs = config.speedBumpUs;
    this.orderIdKey = config.orderIdKey;
    const { maxAccounts, maxOpenOrdersPerAccount, maxOrdersPerBook, maxPriceLevelsPerSide } = this.limits;
    this.accounts = new Accounts(maxAccounts, config.makerFeeBps ?? 0, config.takerFeeBps ?? 0);
    this.ledger = new Ledger(maxAccounts, this.catalog.assetCount);
    this.accountSettings = new AccountSettings(maxAccounts, config.maxLeverageHundredths);
    const poolCapacity = Math.min(Math.max(1, this.catalog.marketCount) * maxOrdersPerBook, maxAccounts * maxOpenOrdersPerAccount);
    if (poolCapacity > MAX_ORDER_SLOTS) {
      throw new Error(`engine configuration: at most ${MAX_ORDER_SLOTS} open orders in all (markets × maxOrdersPerBook, or maxAccounts × maxOpenOrdersPerAccount, is ${poolCapacity})`);
    }
    this.pool = new OrderPool(poolCapacity, maxAccounts);
    this.index = new OrderIndex(poolCapacity);
    this.books = this.catalog.markets.map((market, marketIndex) => new Book(marketIndex, maxPriceLevelsPerSide, this.pool, market.minPriceTicks, market.maxPriceTicks));
    this.perpMarks = new PerpMarks(this.catalog, maxAccounts);
    // one per order, the interest timer, the interest pass's step, the liquidation step, the
    // perpetuals' sampler and funding timers, and their realization timer
    this.timers = new Timers(poolCapacity + 4 + PerpMarks.timerCount(this.catalog));
    this.pools = new LendPools(maxAccounts, config.assets, (assetId) => this.catalog.assetIndex(assetId), config.margin);
    this.pending = new PendingQueue(this.pool, this.books, this.timers, this.speedBumpUs);
    this.out = new Output(this.catalog, this.accounts, this.ledger, this.pool, this.accountSettings, this.pools);
    const fixedIndex = config.assets.findIndex((asset) => asset.symbol === INDEX_FIXED_SYMBOL);
    const perpMarkets = this.catalog.markets.map((_, m) => m).filter((m) => !this.catalog.isSpot(m));
    this.positions = new Positions(maxAccounts, this.catalog.assetCount, perpMarkets, this.catalog.marketCount);
    this.fundingPasses = new FundingPasses(config.fundingStepPositions ?? 0, this.positions.perpCount, this.positions.lots.length);
    this.trigger = new TriggerIndex(maxAccounts, this.catalog.assetCount + perpMarkets.length, this.pools, this.positions);
    this.ledger.touched = this.trigger.touch;
    this.pools.positionChanged = this.trigger.touch;
    this.pool.opened = this.trigger.touch;
    this.positions.changed = this.trigger.touch;
    this.indexPrices = new IndexPrices(this.catalog.assetCount, fixedIndex, config.indexMaxAgeUs ?? DEFAULT_INDEX_MAX_AGE_US);
    this.insurance = new InsuranceFund(this.catalog.assetCount, config.liquidation);
    this.conversion = new ConversionMarks(maxAccounts);
    this.realization = new Realization(config.realizePnlIntervalUs ?? 0, config.realizeStepPositions ?? 0);
    this.interestPass = new InterestPass(config.interestStepAccounts ?? 0, this.catalog.assetCount, this.pools.lent.length);
    this.pools.beforeLendMove = (accountId, assetIndex) => payLenderAhead(this, accountId, assetIndex);
    this.indexPrices.setUpdateBounds(config.indexUpdateBounds ?? [], (assetId) => this.catalog.assetIndex(assetId));
  }

  /** The next order id: a keyed permutation of the next order number (0 is skipped: it means none). */
  nextOrderId(): number {
    let orderId = 0;
    while (orderId === 0) {
      this.orderNumber++;
      assert(this.orderNumber < ORDER_ID_SPAN, 'order numbers exhausted');
      orderId = permuteOrderNumber(this.orderNumber, this.orderIdKey);
    }
    return orderId;
  }

  /**
   * The depth update id for a change of `book` in the apply of `lastSeq`: the first change of a
   * market within one apply advances its id by one, later changes in the same apply share it, so
   * ids stay contiguous per market.
   */
  touchUpdateId(book: Book): number {
    if (book.updateIdSeq !== this.lastSeq) {
      book.updateId++;
      book.updateIdSeq = this.lastSeq;
    }
    assert(book.updateId > 0, 'depth change without an update id');
    return book.updateId;
  }

  /**
   * The open (pending or resting) order of `accountId` in market `marketIndex` named by order id,
   * or by client id when `byClientId` (the oldest such order, if several share it); NO_SLOT when
   * none, including when the id names another account's order.
   */
  findOpenOrder(accountId: number, marketIndex: number, byClientId: boolean, orderId: number, clientId: number): number {
    const pool = this.pool;
    if (!byClientId) {
      const slot = this.index.find(orderId);
      if (slot === NO_SLOT || pool.u32[slot << Of.w32 | Of.accountId] !== accountId || pool.u16[slot << Of.w16 | Of.marketIndex] !== marketIndex) return NO_SLOT;
      assert(pool.u8[slot << Of.w8 | Of.state] === OrderState.Pending || pool.u8[slot << Of.w8 | Of.state] === OrderState.Resting, 'indexed order is not open');
      return slot;
    }
    for (let slot = pool.accountHead[accountId]; slot !== NO_SLOT; slot = pool.i32[slot << Of.w32 | Of.accountNext]) {
      const named = (pool.u8[slot << Of.w8 | Of.flags] & OrderFlag.HasClientId) !== 0 && pool.u32[slot << Of.w32 | Of.clientId] === clientId;
      if (named && pool.u16[slot << Of.w16 | Of.marketIndex] === marketIndex) return slot;
    }
    return NO_SLOT;
  }

  /** Units of an asset held outside the accounts, as conservation counts them: the pools' part, the perpetuals' settlement line and the insurance fund. */
  heldOutside(assetIndex: number): bigint {
    return this.pools.heldOutside(assetIndex) + BigInt(this.positions.settlementUnits[assetIndex]) + this.insurance.heldOutside(assetIndex);
  }

  /** Snapshot: the order number behind ids, and seq and engine time of the last command. */
  exportCountersTo(w: SnapshotWriter): void {
    w.number(this.orderNumber);
    w.number(this.lastSeq);
    w.number(this.lastTimeUs);
  }

  importCountersFrom(r: SnapshotReader): void {
    this.orderNumber = r.number();
    this.lastSeq = r.number();
    this.lastTimeUs = r.number();
  }

  /** State hash: the order number (seq and time are the journal's, not the state's). */
  hashCountersInto(d: StateDigest): void {
    d.number(this.orderNumber);
  }
}
