// A deterministic market-crash simulation of the unified margin account and its liquidation
// waterfall, on the default configuration's assets and markets (USDC, SOL, BTC, ETH; their spot
// books and perpetuals), driven through the engine harness (test/helpers/engine-harness.ts):
//
//   - accounts: market makers (no borrowing) that keep post-only quotes around each asset's true
//     price on every book, within the books' price bands; lenders that lend into the pools; and
//     traders with random collateral mixes and leverage limits that borrow (BorrowLend, orders and
//     withdrawals with autoBorrow), withdraw what they borrowed, trade spot and take perpetual
//     positions (margined by the same account);
//   - backstop liquidity providers (even seeds): one with deep pockets, one whose margin runs out;
//   - prices: a random walk of each asset's true price with gaps (−30 % and +50 % in one
//     SetIndexPrice), frozen feeds (no update for a while, engine time moving: the index goes
//     stale) and stale feeds (updates that repeat an old value while the books move on), quiet
//     spells of more than an hour (interest ticks), and engine-time ticks that run the waterfall's
//     steps against the makers' quotes;
//   - perpetual debts: a trader left owing USDC on a position (a fee, a loss or a funding payment
//     larger than its USDC) sells collateral at the end of that command (collateral conversion),
//     each conversion order an IOC ask of a spot book paying the taker fee and no liquidation fee;
//   - checks after every command: the engine's invariants and exact conservation of every asset
//     (the harness); after every command that re-checks margin (SetIndexPrice for the accounts
//     exposed to its asset, a BorrowLend, deposit or withdrawal for its account): every re-checked
//     borrower is liquidating exactly when its margin summary says netEquity ≤ Σ N·MMF; each
//     bankrupt borrow closed is the fund's cover plus the losses recorded to lenders, and the
//     socialized losses recorded add up to the fund's socialized line; periodically, over every
//     account: no negative balance, borrows only as recorded positions that add up to the pools'
//     totals, and each perpetual's positions summing to 0.
//
// Everything is a function of the seed (mulberry32): a failure names it, and CRASH_SEED replays it.

import { loadConfig } from '../../src/config.js';
import {
  BorrowLendEvent, BorrowLendSide, BorrowLendSource, CommandFlag, CommandKind, HeaderFlag, OrderEvent, OrderFlag, RecordType, ResultCode, Side, SystemOrderType, TimeInForce,
  type BorrowLendRec, type OrderRec, type CommandSlot, type EngineConfig, type InsuranceRec, type MarginSummaryRec, type PositionRec,
} from '../../engine/bus/types.js';
import { EngineHarness, cmd, prng, randomInt, resultOf, type Rec } from './engine-harness.js';

export const USDC = 0;
const TRADED = [1, 2, 3] as const; // SOL, BTC, ETH
const SPOT_OF = [-1, 0, 1, 2];
const PERP_OF = [-1, 3, 4, 5];
/** Index price (10^-9 USDC per whole unit) of one price tick of the asset's books. */
const TICK_E9 = [0, 10_000_000, 100_000_000, 10_000_000];
/** Starting prices in ticks: 150 USDC, 60 000 USDC, 3 000 USDC. */
const START_TICKS = [0, 15_000, 600_000, 300_000];
/** USDC units one tick × one lot is worth, per traded asset's markets. */
const QUOTE_PER_TICK_LOT = [0, 100, 1, 1];
/** Units of the asset in one whole token. */
const WHOLE = [1_000_000, 1_000_000_000, 100_000_000, 100_000_000];
const SECOND_US = 1_000_000;
const HOUR_US = 3_600 * SECOND_US;

export interface CrashSimOptions {
  seed: number;
  accounts: number;
  rounds: number;
  /** Trader actions per round. */
  actionsPerRound?: number;
  /** Called with the harness before the first command (a test plants a fault through it). */
  prepare?: (h: EngineHarness) => void;
}

export interface CrashSimReport {
  seed: number;
  commands: number;
  liquidations: number;
  liquidatedAccounts: number;
  liquidationFills: number;
  /** Collateral conversion orders of accounts left owing USDC on a position, and their fills. */
  conversions: number;
  conversionFills: number;
  /** Fills of a backstop provider (its half of each backstop fill). */
  backstopFills: number;
  bankruptcies: number;
  bankruptAccounts: number;
  socializedLosses: number;
  socializedUnits: number;
  coveredUnits: number;
  /** Liquidation fees the fund took, summed over assets in their own units (at the end). */
  feeUnits: number;
  gaps: number;
  frozenSpells: number;
  staleSpells: number;
  interestHours: number;
  marginChecks: number;
  perpTrades: number;
  /** Rounds run after the last one until no account was liquidating, and the accounts still liquidating then. */
  drainRounds: number;
  liquidatingAtEnd: number;
}

/** A failed check, naming the seed, the round and the command it followed. */
export class CrashCheckError extends Error {
  override name = 'CrashCheckError';
}

/** The default configuration (src/config.ts) without the speed bump, with limits sized to the run. */
export function crashConfig(accounts: number): EngineConfig {
  const engine = loadConfig([], {}).engine;
  return { ...engine, speedBumpUs: 0, limits: { maxAccounts: accounts + 16, maxOpenOrdersPerAccount: 24, maxOrdersPerBook: 500, maxPriceLevelsPerSide: 500 } };
}

type FeedMode = 'live' | 'frozen' | 'stale';

interface Feed {
  truth: number;
  index: number;
  mode: FeedMode;
  until: number;
}

interface BandMirror {
  last: number;
  reference: number;
  referenceUs: number;
}

const bigOf = (high: number, low: number) => BigInt(high) * 2n ** 53n + BigInt(low);

export class CrashSim {
  readonly h: EngineHarness;
  readonly random: () => number;
  readonly report: CrashSimReport;
  readonly feeds: Feed[] = [];
  readonly bands: BandMirror[] = [];
  makers: number[] = [];
  lenders: number[] = [];
  traders: number[] = [];
  /** Accounts that ever borrowed and that ever held a perpetual position. */
  readonly borrowers = new Set<number>();
  readonly perpTraders = new Set<number>();
  readonly liquidated = new Set<number>();
  private readonly liquidating = new Set<number>();
  readonly bankrupt = new Set<number>();
  round = 0;
  accountCount = 0;
  /** The fund's lines as the last InsuranceRecord of each asset showed them. */
  private readonly fundSeen = new Map<number, InsuranceRec>();
  private readonly socializedByAsset = new Map<number, number>();

  constructor(readonly options: CrashSimOptions) {
    this.h = new EngineHarness(crashConfig(options.accounts));
    this.random = prng(options.seed);
    this.report = {
      seed: options.seed, commands: 0, liquidations: 0, liquidatedAccounts: 0, liquidationFills: 0, conversions: 0, conversionFills: 0, backstopFills: 0, bankruptcies: 0, bankruptAccounts: 0,
      socializedLosses: 0, socializedUnits: 0, coveredUnits: 0, feeUnits: 0, gaps: 0, frozenSpells: 0, staleSpells: 0, interestHours: 0, marginChecks: 0, perpTrades: 0, drainRounds: 0, liquidatingAtEnd: 0,
    };
    for (let asset = 0; asset < 4; asset++) {
      this.feeds.push({ truth: START_TICKS[asset], index: START_TICKS[asset], mode: 'live', until: 0 });
    }
    for (let market = 0; market < 6; market++) this.bands.push({ last: 0, reference: 0, referenceUs: 0 });
  }

  fail(message: string): never {
    throw new CrashCheckError(`crash simulation seed ${this.options.seed} (CRASH_SEED=${this.options.seed}), round ${this.round}, seq ${this.h.seq}: ${message}`);
  }

  /** Applies a state-changing command (the harness checks invariants and conservation) and reads its records. */
  apply(fields: Partial<CommandSlot>, timeUs = this.h.timeUs): Rec[] {
    let records: Rec[];
    try {
      records = this.h.apply(fields, timeUs);
    } catch (error) {
      this.fail(`after command kind ${CommandKind[fields.kind ?? 0]}: ${(error as Error).message}`);
    }
    this.report.commands++;
    this.observe(records);
    return records;
  }

  /** A query, without the harness's per-command checks (a query changes nothing). */
  query(fields: Partial<CommandSlot>): Rec[] {
    this.h.checks = false;
    try {
      return this.h.apply(fields);
    } finally {
      this.h.checks = true;
    }
  }

  queryValue(fields: Partial<CommandSlot>): number {
    const result = resultOf(this.query(fields));
    return result.code === ResultCode.Ok ? result.value : 0;
  }

  /** Follows trades (the band mirror), liquidation entries, fills and the fund's lines; checks each bankrupt borrow. */
  private observe(records: Rec[]): void {
    for (let i = 0; i < records.length; i++) {
      const r = records[i];
      // A backstop fill's trade is off the book: it moves neither the last price nor the band reference.
      if (r.type === RecordType.Trade) {
        if ((r.flags & HeaderFlag.OffBook) === 0) this.followTrade(r.marketId, r.priceTicks, r.timeUs);
      } else if (r.type === RecordType.AccountSettings) this.followLiquidating(r.accountId, (r.settings & 16) !== 0);
      else if (r.type === RecordType.BorrowLend && r.event === BorrowLendEvent.Borrow) this.borrowers.add(r.accountId);
      else if (r.type === RecordType.Order && r.systemOrderType === SystemOrderType.CollateralConversion) this.observeConversion(r);
      else if (r.type === RecordType.Order && r.systemOrderType !== 0 && r.lastFillQtyLots > 0) {
        this.report.liquidationFills++;
        if (r.systemOrderType === SystemOrderType.LiquidatePositionOnBackstop && (r.orderFlags & OrderFlag.IsMaker) !== 0) this.report.backstopFills++;
      }
      else if (r.type === RecordType.SocializedLoss) {
        this.report.socializedLosses++;
        this.report.socializedUnits += r.units;
        this.socializedByAsset.set(r.assetId, (this.socializedByAsset.get(r.assetId) ?? 0) + r.units);
      } else if (r.type === RecordType.Insurance) this.observeFund(r, records[i - 1], records);
    }
  }

  /**
   * A collateral conversion's order (engine/core/liquidation/conversion.ts): an IOC market ask of a
   * spot book against USDC whose fills pay the account's taker fee and no liquidation fee.
   */
  private observeConversion(r: OrderRec): void {
    const asset = SPOT_OF.indexOf(r.marketId);
    if (asset < 1 || r.side !== Side.Ask || r.timeInForce !== TimeInForce.IOC) this.fail(`a collateral conversion order ${r.orderId} is not an IOC ask of a spot book`);
    if (r.event === OrderEvent.Accepted) this.report.conversions++;
    if (r.event !== OrderEvent.Fill) return;
    this.report.conversionFills++;
    const quote = BigInt(r.lastFillPriceTicks) * BigInt(r.lastFillQtyLots) * BigInt(QUOTE_PER_TICK_LOT[asset]);
    const fee = Number((quote * BigInt(this.h.config.takerFeeBps ?? 0)) / 10_000n);
    if (r.feeUnits !== fee) this.fail(`collateral conversion fill of order ${r.orderId} paid ${r.feeUnits} in fees, its taker fee is ${fee}`);
  }

  private followLiquidating(accountId: number, now: boolean): void {
    if (now === this.liquidating.has(accountId)) return;
    if (!now) {
      this.liquidating.delete(accountId);
      return;
    }
    this.liquidating.add(accountId);
    this.report.liquidations++;
    this.liquidated.add(accountId);
    this.report.liquidatedAccounts = this.liquidated.size;
  }

  /** Drops the harness's record log and command stream (the run neither replays nor reads them back). */
  forget(): void {
    this.h.log.length = 0;
    this.h.stream.length = 0;
  }

  /** The accounts liquidating now. */
  liquidatingAccounts(): number[] {
    return [...this.liquidating];
  }

  /** How many accounts are liquidating now. */
  liquidatingNow(): number {
    return this.liquidating.size;
  }

  /**
   * An InsuranceRecord: when it follows the Liquidation BorrowRepay that closed a bankrupt borrow
   * (liquidation/bankruptcy.ts), the fund's cover plus the socialized part must be that borrow; when
   * it follows a balance record of its asset, it is a perpetual deficit's cover (liquidation/adl.ts).
   */
  private observeFund(r: InsuranceRec, before: Rec | undefined, records: Rec[]): void {
    const seen = this.fundSeen.get(r.assetId);
    const covered = r.coveredUnits - (seen?.coveredUnits ?? 0);
    const socialized = r.socializedUnits - (seen?.socializedUnits ?? 0);
    this.fundSeen.set(r.assetId, { ...r });
    if (covered < 0 || socialized < 0) this.fail(`a fund counter of asset ${r.assetId} went down`);
    if (r.socializedUnits !== (this.socializedByAsset.get(r.assetId) ?? 0)) {
      this.fail(`asset ${r.assetId}: the fund counts ${r.socializedUnits} socialized units, the loss records ${this.socializedByAsset.get(r.assetId) ?? 0}`);
    }
    const closing = before?.type === RecordType.BorrowLend && before.source === BorrowLendSource.Liquidation && before.event === BorrowLendEvent.BorrowRepay
      && before.assetId === r.assetId && before.borrowedUnits === 0 && (covered > 0 || socialized > 0);
    // A bankrupt perpetual account's deficit (liquidation/adl.ts): the fund pays into its USDC, the
    // account's balance record just before: never socialized, and at most what the account now holds.
    const deficit = before?.type === RecordType.Balance && before.assetId === r.assetId && covered > 0 && socialized === 0;
    if (deficit) {
      if (before.availableUnits < covered) this.fail(`account ${before.accountId}: the fund covered ${covered} units of asset ${r.assetId}, it holds ${before.availableUnits}`);
      this.report.coveredUnits += covered;
      return;
    }
    if (!closing) {
      if (covered > 0 || socialized > 0) this.fail(`asset ${r.assetId}: the fund covered ${covered} and socialized ${socialized} units outside a bankrupt borrow's close`);
      return;
    }
    const move = before as BorrowLendRec;
    if (covered + socialized !== move.quantityUnits) {
      this.fail(`account ${move.accountId}: a bankrupt borrow of ${move.quantityUnits} units of asset ${r.assetId} closed with ${covered} covered and ${socialized} socialized`);
    }
    const recorded = records.filter((x) => x.type === RecordType.SocializedLoss && x.bankruptAccountId === move.accountId && x.assetId === r.assetId)
      .reduce((sum, x) => sum + (x.type === RecordType.SocializedLoss ? x.units : 0), 0);
    if (recorded !== socialized) this.fail(`account ${move.accountId}: ${socialized} units socialized, ${recorded} in loss records`);
    this.report.bankruptcies++;
    this.report.coveredUnits += covered;
    this.bankrupt.add(move.accountId);
    this.report.bankruptAccounts = this.bankrupt.size;
  }

  /** The market's last trade price and guarded reference (book/reference.ts defaults: 1 % per minute). */
  private followTrade(marketId: number, priceTicks: number, timeUs: number): void {
    const band = this.bands[marketId];
    if (marketId >= 3) this.report.perpTrades++;
    band.last = priceTicks;
    if (band.reference === 0) {
      band.reference = priceTicks;
      band.referenceUs = timeUs;
      return;
    }
    if (timeUs - band.referenceUs < 60 * SECOND_US) return;
    const step = Math.max(1, Math.floor((band.reference * 100) / 10_000));
    band.reference = priceTicks > band.reference ? Math.min(priceTicks, band.reference + step) : Math.max(priceTicks, band.reference - step);
    band.referenceUs = timeUs;
  }

  /** The price range a post-only order of the market may take now: inside both bands, one tick in. */
  bandRange(marketId: number): [number, number] {
    const { last, reference } = this.bands[marketId];
    if (last === 0) return [1, Number.MAX_SAFE_INTEGER];
    const low = Math.max(Math.ceil((last * 7_500) / 10_000), Math.ceil((reference * 7_500) / 10_000)) + 1;
    const high = Math.min(Math.floor((last * 12_500) / 10_000), Math.floor((reference * 12_500) / 10_000)) - 1;
    return [low, high];
  }

  // ---- margin checks ----

  /** The account's margin summary: [liquidating flag, netEquity ≤ Σ N·MMF with exposure, borrows anything]. */
  marginState(accountId: number): { flagged: boolean; below: boolean; borrows: boolean; exposed: Set<number> } {
    const records = this.query({ kind: CommandKind.QueryCollateral, accountId, assetId: USDC });
    const exposed = new Set<number>();
    let borrows = false;
    let summary: MarginSummaryRec | undefined;
    for (const r of records) {
      if (r.type === RecordType.Collateral) {
        if (r.borrowedUnits > 0) borrows = true;
        if (r.borrowedUnits > 0 || r.lentUnits > 0 || r.availableUnits > 0 || r.lockedUnits > 0) exposed.add(r.assetId);
      } else if (r.type === RecordType.MarginSummary) summary = r;
    }
    if (summary === undefined) this.fail(`no margin summary for account ${accountId}`);
    const ten = bigOf(summary.tenHigh, summary.tenLow);
    const below = ten > 0n && bigOf(summary.netEquityHigh, summary.netEquityLow) <= bigOf(summary.mmfUnitsHigh, summary.mmfUnitsLow);
    return { flagged: (summary.summaryFlags & 2) !== 0, below, borrows, exposed };
  }

  /** The underlyings of the account's open perpetual positions. */
  perpUnderlyings(accountId: number): Set<number> {
    const out = new Set<number>();
    if (!this.perpTraders.has(accountId)) return out;
    for (const r of this.query({ kind: CommandKind.QueryPositions, accountId, marketId: 0xffff })) {
      if (r.type === RecordType.Position && (r as PositionRec).netLots !== 0) out.add(TRADED[r.marketId - 3]);
    }
    return out;
  }

  /**
   * After a command that re-checked `accountId`'s margin (or, with `priced`, after the index
   * prices of those assets, for an account exposed to one of them): it is liquidating exactly
   * when it is at or past maintenance. An account exposed through a perpetual position on the asset counts as exposed:
   * its valuation moves with that index as a holder's does.
   */
  checkRechecked(accountId: number, priced?: Set<number>): void {
    const state = this.marginState(accountId);
    if (!state.borrows) return;
    const asset = priced === undefined ? undefined : [...priced].find((a) => state.exposed.has(a)) ?? [...this.perpUnderlyings(accountId)].find((a) => priced.has(a));
    if (priced !== undefined && asset === undefined) return;
    const throughPerp = asset !== undefined && !state.exposed.has(asset);
    this.report.marginChecks++;
    if (state.flagged !== state.below) {
      const what = state.below ? 'at or past maintenance (netEquity ≤ Σ N·MMF) but not liquidating' : 'liquidating above maintenance';
      const after = asset === undefined ? 'its own margin re-check' : `asset ${asset}'s index price (exposed through ${throughPerp ? 'a perpetual position only' : 'a holding or borrow'})`;
      this.fail(`account ${accountId} is ${what} after ${after}`);
    }
  }

  /** Over every account: no negative balance, borrows only as recorded positions adding up to the pools, perpetuals summing to 0. */
  checkLedgers(): void {
    const pools = new Map<number, [number, number]>();
    for (const r of this.query({ kind: CommandKind.QueryLendPools })) if (r.type === RecordType.LendPool) pools.set(r.assetId, [r.lentUnits, r.borrowedUnits]);
    const sums = new Map<number, [number, number]>();
    const perp = [0, 0, 0, 0, 0, 0];
    for (let accountId = 1; accountId <= this.accountCount; accountId++) {
      for (const r of this.query(cmd.queryBalances(accountId))) {
        if (r.type === RecordType.Balance && (!Number.isSafeInteger(r.availableUnits) || r.availableUnits < 0 || !Number.isSafeInteger(r.lockedUnits) || r.lockedUnits < 0)) {
          this.fail(`account ${accountId} has a negative or unsafe balance of asset ${r.assetId}`);
        }
      }
      for (const r of this.query({ kind: CommandKind.QueryBorrowLendPositions, accountId })) {
        if (r.type !== RecordType.BorrowLend) continue;
        if (r.lentUnits < 0 || r.borrowedUnits < 0 || (r.lentUnits > 0 && r.borrowedUnits > 0)) this.fail(`account ${accountId} lends and borrows asset ${r.assetId} or holds a negative position`);
        const sum = sums.get(r.assetId) ?? [0, 0];
        sums.set(r.assetId, [sum[0] + r.lentUnits, sum[1] + r.borrowedUnits]);
      }
      if (this.perpTraders.has(accountId)) {
        for (const r of this.query({ kind: CommandKind.QueryPositions, accountId, marketId: 0xffff })) if (r.type === RecordType.Position) perp[r.marketId] += r.netLots;
      }
    }
    for (const [assetId, [lent, borrowed]] of pools) {
      const [sumLent, sumBorrowed] = sums.get(assetId) ?? [0, 0];
      if (lent !== sumLent || borrowed !== sumBorrowed) this.fail(`pool ${assetId}: ${lent} lent / ${borrowed} borrowed, positions ${sumLent} / ${sumBorrowed}`);
    }
    for (let market = 3; market < 6; market++) if (perp[market] !== 0) this.fail(`perpetual market ${market}: positions sum to ${perp[market]} lots`);
  }
}

// ---- the run ----

const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)];
const roundDown = (units: number, step: number) => Math.floor(units / step) * step;
/** The pools' steps (the traded assets' lots). */
const STEP = [10_000, 10_000_000, 1_000, 10_000];
/** Starting prices in whole USDC. */
const START_USDC = [1, 150, 60_000, 3_000];
/** Units of the asset worth `usdc` whole USDC at its starting price, in whole pool steps. */
const unitsWorth = (asset: number, usdc: number) => roundDown(Math.floor((usdc * WHOLE[asset]) / START_USDC[asset]), STEP[asset]);

function createAccount(sim: CrashSim, leverageHundredths: number): number {
  const result = resultOf(sim.apply(cmd.createAccount(sim.accountCount + 1)));
  if (result.code !== ResultCode.Ok) sim.fail(`CreateAccount refused: ${ResultCode[result.code]}`);
  sim.accountCount++;
  sim.apply(cmd.updateAccountSettings(result.value, { leverageLimitHundredths: leverageHundredths, autoRepayBorrows: sim.random() < 0.3 }));
  return result.value;
}

function setIndex(sim: CrashSim, asset: number): void {
  sim.apply(cmd.setIndexPrice(asset, sim.feeds[asset].index * TICK_E9[asset], 2));
}

/** Makers, lenders, traders, the first index prices and trades of every book, and a small insurance fund. */
export function setup(sim: CrashSim): void {
  const { random, options } = sim;
  for (const asset of TRADED) setIndex(sim, asset);
  for (let i = 0; i < 2; i++) {
    const maker = createAccount(sim, 1_000);
    for (const [asset, whole] of [[USDC, 100_000_000], [1, 400_000], [2, 1_000], [3, 20_000]]) sim.apply(cmd.deposit(maker, asset, whole * WHOLE[asset]));
    sim.makers.push(maker);
    sim.perpTraders.add(maker);
  }
  // The first trade of every book sets its last price and guarded reference at the start price.
  for (let market = 0; market < 6; market++) {
    const price = START_TICKS[TRADED[market % 3]];
    sim.apply(cmd.place(sim.makers[0], 'ask', price, 1, { market, postOnly: true }));
    sim.apply(cmd.place(sim.makers[1], 'bid', price, 1, { market, tif: TimeInForce.IOC }));
  }
  sim.apply({ kind: CommandKind.DepositInsurance, assetId: USDC, amountUnits: 2_000 * WHOLE[USDC] });
  sim.apply({ kind: CommandKind.DepositInsurance, assetId: 1, amountUnits: 5 * WHOLE[1] });
  const lenderCount = Math.max(4, Math.floor(options.accounts * 0.08));
  for (let i = 0; i < lenderCount; i++) {
    const lender = createAccount(sim, 100);
    for (const asset of [USDC, ...TRADED]) {
      if (asset !== USDC && random() < 0.4) continue;
      const units = unitsWorth(asset, randomInt(random, 100_000, 1_000_000));
      sim.apply(cmd.deposit(lender, asset, units));
      sim.apply({ kind: CommandKind.BorrowLend, accountId: lender, assetId: asset, side: BorrowLendSide.Lend as number, amountUnits: roundDown(units * 0.9, STEP[asset]) });
    }
    sim.lenders.push(lender);
  }
  for (let i = sim.makers.length + lenderCount; i < options.accounts; i++) {
    const trader = createAccount(sim, pick(random, [200, 300, 500, 1_000, 2_000]));
    const assets = [USDC, ...TRADED].filter(() => random() < 0.5);
    if (assets.length === 0) assets.push(pick(random, [USDC, ...TRADED]));
    for (const asset of assets) sim.apply(cmd.deposit(trader, asset, unitsWorth(asset, randomInt(random, 1_000, 50_000))));
    sim.traders.push(trader);
  }
  // Even seeds name two backstop liquidity providers: deep pockets, and one whose margin runs out.
  if (options.seed % 2 === 0) {
    for (const usdc of [20_000_000, 20_000]) {
      const provider = createAccount(sim, 1_000);
      sim.apply(cmd.deposit(provider, USDC, usdc * WHOLE[USDC]));
      sim.apply(cmd.setBackstopProvider(provider));
      sim.perpTraders.add(provider);
    }
  }
}

/** Engine time moves on a few seconds (now and then more than an hour: interest), with three ticks a second apart (the waterfall's steps). */
function advance(sim: CrashSim): void {
  const { h, random } = sim;
  const quiet = random() < 1 / 30;
  const dt = quiet ? randomInt(random, 61, 130) * 60 * SECOND_US : randomInt(random, 2, 10) * SECOND_US;
  const hoursBefore = Math.floor(h.timeUs / HOUR_US);
  for (let i = 0; i < 3; i++) sim.apply(cmd.tick(), h.timeUs + (i === 0 ? dt : SECOND_US));
  sim.report.interestHours += Math.floor(h.timeUs / HOUR_US) - hoursBefore;
}

/**
 * Each asset's true price moves (a walk, gaps of −30 % and +50 %, the two scheduled crashes and
 * rallies of every asset at once); its feed follows it, repeats an old value (stale feed) or stays
 * silent (frozen); after each index price every borrower exposed to the asset is checked.
 */
function movePrices(sim: CrashSim, calm = false): void {
  const { random, options } = sim;
  const crash = [0.3, 0.65].map((f) => Math.floor(options.rounds * f)).includes(sim.round);
  const rally = [0.45, 0.85].map((f) => Math.floor(options.rounds * f)).includes(sim.round);
  const updated = new Set<number>();
  for (const asset of TRADED) {
    const feed = sim.feeds[asset];
    if (feed.mode !== 'live' && (calm || sim.round >= feed.until)) feed.mode = 'live';
    else if (!calm && feed.mode === 'live' && random() < 1 / 40) {
      feed.mode = random() < 0.5 ? 'frozen' : 'stale';
      feed.until = sim.round + randomInt(random, 6, 14);
      if (feed.mode === 'frozen') sim.report.frozenSpells++;
      else sim.report.staleSpells++;
    }
    const shock = random();
    let factor = calm ? 1 : 1 + (random() - 0.5) * 0.03;
    if (calm) factor = 1;
    else if (crash || shock < 1 / 100) factor = 0.7;
    else if (rally || shock > 1 - 1 / 150) factor = 1.5;
    feed.truth = Math.max(10, Math.round(feed.truth * factor));
    if (feed.mode === 'frozen') continue;
    const before = feed.index;
    if (feed.mode === 'live') feed.index = feed.truth;
    if (Math.abs(feed.index - before) * 4 >= before) sim.report.gaps++;
    setIndex(sim, asset);
    updated.add(asset);
  }
  // Each borrower exposed to an updated asset was re-checked at the last such price, and nothing
  // moved its valuation since (the other prices are of assets it is not exposed to).
  for (const accountId of sim.borrowers) sim.checkRechecked(accountId, updated);
}

/** Each book: its maker cancels and quotes three levels a side around the true price, inside the bands. */
function quote(sim: CrashSim): void {
  const { random } = sim;
  for (let market = 0; market < 6; market++) {
    const asset = TRADED[market % 3];
    const maker = sim.makers[market % 2];
    const truth = sim.feeds[asset].truth;
    const [low, high] = sim.bandRange(market);
    sim.apply(cmd.cancelAll(maker, market));
    for (let level = 1; level <= 3; level++) {
      // Past a band's edge the quotes stay inside it on both sides (the waterfall needs both).
      const ask = Math.min(high, Math.max(low + level, Math.ceil(truth * (1 + 0.002 * level))));
      const bid = Math.max(low, Math.min(high - level, ask - level, Math.floor(truth * (1 - 0.002 * level))));
      for (const [side, price] of [['bid', bid], ['ask', ask]] as const) {
        if (price < low || price > high) continue;
        const lots = Math.max(1, Math.floor((randomInt(random, 5_000, 40_000) * WHOLE[USDC]) / (price * QUOTE_PER_TICK_LOT[asset])));
        sim.apply(cmd.place(maker, side, price, lots, { market, postOnly: true }));
      }
    }
  }
}

function fraction(random: () => number, units: number, step: number): number {
  return roundDown(units * (0.3 + 0.65 * random()), step);
}

function borrowLend(sim: CrashSim, accountId: number, assetId: number, side: BorrowLendSide, amountUnits: number): boolean {
  if (amountUnits <= 0) return false;
  const ok = resultOf(sim.apply({ kind: CommandKind.BorrowLend, accountId, assetId, side: side as number, amountUnits })).code === ResultCode.Ok;
  sim.checkRechecked(accountId);
  return ok;
}

function withdraw(sim: CrashSim, accountId: number, assetId: number, flags: number): void {
  const most = sim.queryValue({ kind: CommandKind.QueryMaxWithdrawalQty, accountId, assetId, flags });
  const amountUnits = Math.floor(most * (0.5 + 0.5 * sim.random()));
  if (amountUnits <= 0) return;
  sim.apply({ kind: CommandKind.Withdraw, accountId, assetId, amountUnits, flags, key: new Uint8Array(32) });
  sim.checkRechecked(accountId);
}

/** A spot or perpetual order of a fraction of the largest the engine would take. */
function order(sim: CrashSim, accountId: number, market: number, side: 'bid' | 'ask', priceTicks: number, flags: number, tif: TimeInForce): void {
  const most = sim.queryValue({ kind: CommandKind.QueryMaxOrderQty, accountId, marketId: market, side: side === 'bid' ? 0 : 1, priceTicks, flags });
  const lots = fraction(sim.random, most, 1);
  if (lots <= 0) return;
  const fields = priceTicks === 0 ? cmd.market(accountId, side, { qtyLots: lots }, { market, flags }) : cmd.place(accountId, side, priceTicks, lots, { market, flags, tif });
  sim.apply(fields);
  if (market >= 3) sim.perpTraders.add(accountId);
}

const { AutoBorrow, AutoBorrowRepay, PostOnly } = CommandFlag;

/** One random trader (or lender) action. */
function act(sim: CrashSim): void {
  const { random } = sim;
  const accountId = pick(random, sim.traders);
  const asset = pick(random, TRADED);
  const truth = sim.feeds[asset].truth;
  const spot = SPOT_OF[asset];
  const [low, high] = sim.bandRange(spot);
  const roll = random() * 100;
  if (roll < 20) {
    // Borrow USDC against the collateral, and mostly take it out of the exchange.
    const most = sim.queryValue({ kind: CommandKind.QueryMaxBorrowQty, accountId, assetId: USDC });
    if (borrowLend(sim, accountId, USDC, BorrowLendSide.Borrow, fraction(random, most, STEP[USDC])) && random() < 0.7) withdraw(sim, accountId, USDC, 0);
  } else if (roll < 30) {
    // Borrow an asset and sell it on its book: a short.
    const most = sim.queryValue({ kind: CommandKind.QueryMaxBorrowQty, accountId, assetId: asset });
    const units = fraction(random, most, STEP[asset]);
    if (borrowLend(sim, accountId, asset, BorrowLendSide.Borrow, units)) sim.apply(cmd.market(accountId, 'ask', { qtyLots: units / STEP[asset] }, { market: spot }));
  } else if (roll < 45) {
    // Buy (or sell) on the spot book with autoBorrow, taking the makers' quotes.
    const bid = random() < 0.65;
    const price = bid ? Math.min(high, Math.ceil(truth * 1.004)) : Math.max(low, Math.floor(truth * 0.996));
    order(sim, accountId, spot, bid ? 'bid' : 'ask', price, AutoBorrow | (random() < 0.5 ? AutoBorrowRepay : 0), TimeInForce.IOC);
  } else if (roll < 53) {
    // A resting autoBorrow bid (or ask) some way from the price, for a gap to fill.
    const bid = random() < 0.6;
    const away = 0.02 + 0.1 * random();
    const price = bid ? Math.max(low, Math.floor(truth * (1 - away))) : Math.min(high, Math.ceil(truth * (1 + away)));
    order(sim, accountId, spot, bid ? 'bid' : 'ask', price, AutoBorrow | PostOnly, TimeInForce.GTC);
  } else if (roll < 73) {
    order(sim, accountId, PERP_OF[asset], random() < 0.5 ? 'bid' : 'ask', 0, 0, TimeInForce.IOC);
  } else if (roll < 80) {
    repay(sim, accountId);
  } else if (roll < 86) {
    const assetId = pick(random, [USDC, ...TRADED]);
    sim.apply(cmd.deposit(accountId, assetId, unitsWorth(assetId, randomInt(random, 100, 5_000))));
    sim.checkRechecked(accountId);
  } else if (roll < 91) {
    sim.apply(cmd.cancelAll(accountId, pick(random, [0, 1, 2, 3, 4, 5])));
  } else if (roll < 95) {
    withdraw(sim, accountId, USDC, AutoBorrow);
  } else {
    lenderMove(sim);
  }
}

/** Repays a borrow of the account from what it holds of that asset (a Lend on a borrowed asset). */
function repay(sim: CrashSim, accountId: number): void {
  for (const r of sim.query({ kind: CommandKind.QueryBorrowLendPositions, accountId })) {
    if (r.type !== RecordType.BorrowLend || r.borrowedUnits === 0) continue;
    const held = sim.h.balances(accountId).get(r.assetId)?.[0] ?? 0;
    borrowLend(sim, accountId, r.assetId, BorrowLendSide.Lend, Math.min(held, r.borrowedUnits));
    return;
  }
}

/** A lender redeems part of a lend or lends more of what it holds. */
function lenderMove(sim: CrashSim): void {
  const { random } = sim;
  const lender = pick(random, sim.lenders);
  const assetId = pick(random, [USDC, ...TRADED]);
  const position = sim.query({ kind: CommandKind.QueryBorrowLendPositions, accountId: lender }).find((r) => r.type === RecordType.BorrowLend && r.assetId === assetId);
  const lent = position?.type === RecordType.BorrowLend ? position.lentUnits : 0;
  if (random() < 0.5) borrowLend(sim, lender, assetId, BorrowLendSide.Borrow, roundDown(lent * 0.2 * random(), STEP[assetId]));
  else borrowLend(sim, lender, assetId, BorrowLendSide.Lend, roundDown((sim.h.balances(lender).get(assetId)?.[0] ?? 0) * random(), STEP[assetId]));
}

/** Runs the whole simulation (setup, then the rounds); returns what it reached, throws CrashCheckError on a failed check. */
export function runCrashSim(options: CrashSimOptions): CrashSimReport {
  const sim = new CrashSim(options);
  options.prepare?.(sim.h);
  setup(sim);
  const actions = options.actionsPerRound ?? 12;
  for (sim.round = 1; sim.round <= options.rounds; sim.round++) {
    advance(sim);
    movePrices(sim);
    quote(sim);
    for (let i = 0; i < actions; i++) act(sim);
    if (sim.round % 25 === 0) sim.checkLedgers();
    sim.forget();
  }
  // The liquidations in progress run to their end on a steady market.
  for (; sim.report.drainRounds < 400 && sim.liquidatingNow() > 0; sim.report.drainRounds++, sim.round++) {
    advance(sim);
    movePrices(sim, true);
    quote(sim);
    sim.forget();
  }
  sim.report.liquidatingAtEnd = sim.liquidatingNow();
  // The fund's fee lines (a fee alone writes no InsuranceRecord; the query reads them all).
  sim.report.feeUnits = sim.query({ kind: CommandKind.QueryInsurance }).reduce((sum, r) => sum + (r.type === RecordType.Insurance ? r.feesUnits : 0), 0);
  sim.checkLedgers();
  return sim.report;
}
