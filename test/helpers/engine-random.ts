// A seeded random command stream for the engine core: places (every time in force, post-only,
// client ids, all self-trade modes, prices around a moving mid so books cross often), market
// orders by quantity and by quote quantity (some malformed), under random maker/taker fee rates
// and a narrow price band on market 1 (its prices follow its last trade, so most fall inside the
// band and the banded book trades too, while some fall outside it; market orders stop at it), cancels by
// id (own, others', unknown), by client id, cancel-all, deposits (some invalid), invalid orders,
// ticks, queries, operator commands (order book states, fee rates, some invalid), batches of
// places at one engine time, and engine time that advances by random steps across the speed bump.
// Optional kinds (on unless the caller leaves them out, as the differential test would for kinds
// its reference model lacked): withdrawals (some to a dust remainder, some of more than is
// available, some invalid), withdrawal confirmations, dust conversions (in rounds: withdraw to a
// dust remainder, convert it, possibly of a stale amount, deposit again; one right after market
// 1's first trade, when the exchange has few fees to pay with), and the operator's Snapshot
// command, the operator's maintenance (SetSystemState, a few steps at a time), index prices
// (SetIndexPrice, some refused, and their query, under a maximum age of a few steps; a price of
// the perpetual's underlying lands a millisecond before a whole second of engine time, so that the
// perpetual's mark is sampled and the hour's funding paid, and the mark prices are queried), accounts'
// margin settings (UpdateAccountSettings, some invalid, and their query), and borrow/lend (lends,
// borrows against collateral, repayments and redemptions, some refused, the pool and position
// queries, and now and then an hour of engine time, which pays interest) with spot margin: orders
// with autoLendRedeem, autoBorrow, autoBorrowRepay and autoLend, mostly of more than the account
// has available, withdrawals with autoBorrow and autoLendRedeem, and the largest borrow, withdrawal
// and order queries with those flags. Market 1's dust payout cap and its guarded reference's interval vary by seed, so that
// conversions reach the cap and find the reference below, at and above the last trade price. Snapshot round trips
// (export, import into a fresh engine, continue there) happen at random steps and once mid-stream.
// The perpetual's open interest is limited on odd seeds, every account's position limit on seeds
// 6 mod 8 (randomConfig).
// A stream ends with every optional kind it sends accepted at least once (closingRound scripts a
// valid one for a kind its random steps left without an Ok).
// The generator reads the engine's outputs (order ids, balances, trade prices) to aim cancels at
// real orders and dust conversions at real balances, so it drives a harness; the harness records
// the stamped stream for replay.

import { CommandFlag, CommandKind, MarketKind, OrderBookState, OrderEvent, RecordType, SelfTradePrevention, TimeInForce } from '../../engine/bus/types.js';
import {
  ALL_MARKETS, BASE, BASE_PER_LOT, EngineHarness, M0, M1, OTHER, QUOTE, QUOTE_PER_TICK_LOT, cmd, prng, randomInt, testConfig, type Rec,
} from './engine-harness.js';
import { ResultCode, newCommandSlot, type CommandSlot as Command, type EngineConfig } from '../../engine/bus/types.js';
import { ModelExchange } from './engine-model.js';

export const RANDOM_ACCOUNTS = 6;

const ONE = 10n ** 12n;

export function randomConfig(seed: number): EngineConfig {
  const random = prng(seed ^ 0x5eed);
  const config = testConfig({
    speedBumpUs: [0, 1000, 5000][randomInt(random, 0, 2)],
    // High rates so that fees on these small amounts are not all rounded to zero.
    makerFeeBps: [0, 150, 2000][randomInt(random, 0, 2)],
    takerFeeBps: [0, 300, 2500][randomInt(random, 0, 2)],
    // Accounts: the six that trade, two of the liquidating round, two of the closing round, two of
    // the perpetual liquidation round and room for one more.
    limits: { maxAccounts: 14, maxOpenOrdersPerAccount: 7, maxOrdersPerBook: 40, maxPriceLevelsPerSide: 8 },
  });
  // Market 1 gets a narrow price band (±1 % around its last trade, about ±3 ticks) so that
  // PriceOutOfBand happens often; market 0 stays unbanded.
  config.markets[1] = { ...config.markets[1], maxMultiplierBps: 10_100, minMultiplierBps: 9_900 };
  // Its guarded reference moves 1 % (3 ticks near 300) per 3 ms, so within a stream it both lags
  // the last price (market orders stop at its band) and catches up.
  config.referenceStepBps = 100;
  config.referenceIntervalUs = 3_000;
  // Its dust payout cap: the default (ten whole quote units, never reached by these small
  // balances) or one that the larger conversions reach.
  const dustCap = [undefined, 300, 500][randomInt(random, 0, 2)];
  if (dustCap !== undefined) config.markets[1].dustMaxPayoutUnits = dustCap;
  // Some streams keep the reference ten times slower, so that it is often well below or above
  // the last price when dust is converted (valued at the lower of the two).
  if (random() < 0.5) config.referenceIntervalUs = 30_000;
  // Index prices go stale within some tens of steps of engine time, so queries show both flags
  // and borrows are refused for a stale price now and then.
  config.indexMaxAgeUs = 400_000;
  config.margin = randomMargin(random);
  // The liquidation waterfall steps every few milliseconds of engine time (the streams' pace), so
  // that accounts the index prices push over the line are cancelled, repaid, unwound on the book
  // and, now and then, found bankrupt within a stream.
  config.liquidation = { stepIntervalUs: [2_000, 20_000][randomInt(random, 0, 1)], chunkBps: [1_000, 5_000][randomInt(random, 0, 1)], feeBps: [100, 0][randomInt(random, 0, 1)] };
  // Half the streams bound market 0's base index updates to ×1.25 up and ×0.8 down.
  if (random() < 0.5) config.indexUpdateBounds = [{ assetId: BASE, maxPriceUpdateMultiplier: (ONE * 5n) / 4n, minPriceUpdateMultiplier: (ONE * 4n) / 5n }];
  // A perpetual on market 0's base (its underlying, never held through it), banded like the
  // margin harness's, with futures fees drawn per seed: low ones that round to 0 on these small
  // notionals, and high ones that often exceed what an account has available (fee debts).
  // Odd seeds limit its open interest to a level the streams reach (perp/open-interest.ts).
  const perpFees = [[2, 5], [150, 300], [2000, 2500]][randomInt(random, 0, 2)];
  config.markets.push({
    marketId: M2, kind: MarketKind.Perp, symbol: 'SOL_USDC_PERP', baseAssetId: BASE, quoteAssetId: QUOTE,
    baseUnitsPerLot: BASE_PER_LOT, quoteUnitsPerTickLot: QUOTE_PER_TICK_LOT, minPriceTicks: 1, maxPriceTicks: 1000, minQtyLots: 1, maxQtyLots: 1000,
    maxMultiplierBps: 12_500, minMultiplierBps: 7_500,
    perp: {
      imf: { base: ONE / 10n, factor: 0n }, mmf: { base: ONE / 20n, factor: 0n }, fundingIntervalMs: 3_600_000,
      fundingRateUpperBoundBps: 100, fundingRateLowerBoundBps: -100, openInterestLimitUnits: seed % 2 === 1 ? OPEN_INTEREST_LIMIT_UNITS : 1_000_000, makerFeeBps: perpFees[0], takerFeeBps: perpFees[1],
    },
  });
  // Every third seed realizes perpetual PnL at mark every 5 ms of engine time (perp/realize.ts),
  // the others only when positions reduce (chosen by seed, so the draws of every stream stay).
  if (seed % 3 === 1) config.realizePnlIntervalUs = 5_000;
  // Seeds 6 mod 8 (even: the open interest is not limited) limit every account's weighted
  // perpetual exposure to a level the streams reach (perp/position-limit.ts), half of them with
  // the perpetual weighted 1.5 (chosen by seed, so the draws of every stream stay).
  if (seed % 8 === 6) {
    config.positionLimitUnits = POSITION_LIMIT_UNITS;
    if (seed % 16 === 6) config.markets[config.markets.length - 1].perp!.positionLimitWeight = (ONE * 3n) / 2n;
  }
  return config;
}

/** Every account's position limit on seeds 6 mod 8: about 13 lots of the perpetual at 100 ticks. */
const POSITION_LIMIT_UNITS = 4_000;

/** The perpetual's open interest limit on odd seeds: 15 lots. */
const OPEN_INTEREST_LIMIT_UNITS = 150;

/** The perpetual market of the random streams (SOL_USDC_PERP on market 0's base). */
export const M2 = 2;

/** Throttles a pool may have: none that binds, the README's proposed one, and a tight one. */
const THROTTLES = [
  { throttleUtilizationThreshold: ONE, throttleUtilizationBound: ONE, throttleUpdateFraction: ONE },
  { throttleUtilizationThreshold: (ONE * 8n) / 10n, throttleUtilizationBound: (ONE * 9n) / 10n, throttleUpdateFraction: ONE / 10n },
  { throttleUtilizationThreshold: ONE / 5n, throttleUtilizationBound: ONE / 2n, throttleUpdateFraction: ONE / 4n },
];

/**
 * Borrow/lend pools for the quote asset and for market 1's base asset (banded, so it has a mark
 * price once it trades; market 0's base has no collateral parameters and counts for nothing), with
 * high rates so that an hour's interest on these small amounts is not all rounded away, and a
 * fee, a utilization cap, a throttle, a lend/borrow limit and a state drawn per seed.
 */
function randomMargin(random: () => number): NonNullable<EngineConfig['margin']> {
  const pick = <T>(items: readonly T[]): T => items[randomInt(random, 0, items.length - 1)];
  const pool = (assetId: number, stepUnits: bigint, limit: bigint, state: 'Open' | 'RepayOnly' | 'Closed') => ({
    assetId, state, borrowRateMin: pick([0n, ONE]), borrowRateOptimal: 20n * ONE, borrowRateMax: 60n * ONE, optimalUtilization: ONE / 2n,
    maxUtilization: pick([(ONE * 8n) / 10n, (ONE * 95n) / 100n, ONE]), ...pick(THROTTLES),
    fee: pick([0n, ONE / 5n]), openBorrowLendLimitUnits: limit, stepUnits,
  });
  return {
    valuationAssetId: QUOTE,
    collateral: [
      { assetId: QUOTE, haircut: { kind: 'identity', weight: ONE }, imf: { base: ONE / 10n, factor: 0n }, mmf: { base: ONE / 20n, factor: 0n } },
      { assetId: OTHER, haircut: { kind: 'identity', weight: ONE / 2n }, imf: { base: ONE / 5n, factor: 0n }, mmf: { base: ONE / 10n, factor: 0n } },
    ],
    lendPools: [pool(QUOTE, 1n, pick([1_000_000n, 60_000n]), 'Open'), pool(OTHER, 5n, pick([1_000_000n, 400n]), pick(['Open', 'Open', 'Open', 'RepayOnly', 'Closed'] as const))],
  };
}

/** Command kinds the stream can leave out (all of them are in it by default). */
export const OPTIONAL_KINDS: readonly CommandKind[] = [
  CommandKind.Withdraw, CommandKind.ConfirmWithdrawal, CommandKind.ConvertDust, CommandKind.ConvertAllDust, CommandKind.Snapshot, CommandKind.SetSystemState, CommandKind.SetIndexPrice,
  CommandKind.UpdateAccountSettings, CommandKind.BorrowLend, CommandKind.SetBackstopProvider, CommandKind.RemoveBackstopProvider,
];

export interface StreamOptions {
  /** Which of OPTIONAL_KINDS to send (default: all). */
  kinds?: readonly CommandKind[];
  /** Export → import → continue round trips of the engine's state (default: on). */
  snapshots?: boolean;
}

/**
 * The optional kinds the reference model answers: each is sent, valid, to a fresh model, and
 * counts as handled unless the model refuses it as an unknown command.
 */
export function modelKinds(config: EngineConfig): CommandKind[] {
  const model = new ModelExchange(config);
  let seq = 0;
  const send = (fields: Partial<Command>): ResultCode | undefined => {
    const records = model.apply({ ...newCommandSlot(), frontId: 3, requestId: ++seq, ...fields }, seq, 1_000_000);
    const result = records.find((r) => r.type === RecordType.Result);
    return result?.type === RecordType.Result ? result.code : undefined;
  };
  send(cmd.createAccount(1));
  send(cmd.deposit(1, BASE, 15));
  const probes: Record<number, Partial<Command>> = {
    [CommandKind.Withdraw]: { kind: CommandKind.Withdraw, accountId: 1, assetId: BASE, amountUnits: 10 },
    [CommandKind.ConfirmWithdrawal]: { kind: CommandKind.ConfirmWithdrawal, accountId: 1, orderId: 1 },
    [CommandKind.ConvertDust]: { kind: CommandKind.ConvertDust, accountId: 1, marketId: M1, amountUnits: 5 },
    [CommandKind.ConvertAllDust]: { kind: CommandKind.ConvertAllDust, accountId: 1, assetId: QUOTE, marketId: ALL_MARKETS },
    [CommandKind.Snapshot]: { kind: CommandKind.Snapshot },
    [CommandKind.SetSystemState]: cmd.setSystemState(0),
    [CommandKind.SetIndexPrice]: cmd.setIndexPrice(BASE, 150_000_000_000),
    [CommandKind.UpdateAccountSettings]: cmd.updateAccountSettings(1, { autoLend: true }),
    [CommandKind.BorrowLend]: { kind: CommandKind.BorrowLend, accountId: 1, assetId: QUOTE, side: 1, amountUnits: 1 },
    [CommandKind.SetBackstopProvider]: cmd.setBackstopProvider(1),
    [CommandKind.RemoveBackstopProvider]: cmd.removeBackstopProvider(1),
  };
  return OPTIONAL_KINDS.filter((kind) => {
    const code = send(probes[kind]);
    return code !== undefined && code !== ResultCode.InvalidCommand;
  });
}

/**
 * Index prices: a price of a priced asset (some zero or negative), of USDC (fixed) or of an unknown
 * asset, from any source (some invalid), or a query of them all.
 */
function indexPriceCommand(random: () => number): Partial<Command> {
  const pick = <T>(items: readonly T[]): T => items[randomInt(random, 0, items.length - 1)];
  if (random() < 0.3) return cmd.queryIndexPrices();
  const roll = random();
  const asset = roll < 0.1 ? pick([QUOTE, 77]) : pick([BASE, OTHER]);
  // Market 1's base near its book (one tick there is 3·10^10 of priceE9), so that borrows against it
  // are valued sensibly, and sometimes far off it, so that borrowers cross into and out of the
  // liquidating state.
  // Market 0's base (the perpetual's underlying) near the perpetual's book, one tick there being
  // 3·10^11 of priceE9, so that its positions are valued sensibly and sometimes far off.
  const nearBook = random() < 0.7;
  const tickE9 = asset === OTHER ? 30_000_000_000 : 300_000_000_000;
  const [low, high] = asset === OTHER ? [100, 600] : [60, 160];
  const price = roll >= 0.1 && roll < 0.2 ? pick([0, -3])
    : nearBook ? randomInt(random, low, high) * tickE9 : pick([1, randomInt(random, 1, 2 ** 40), Number.MAX_SAFE_INTEGER]);
  const source = roll >= 0.2 && roll < 0.3 ? pick([0, 4, 9]) : pick([1, 2, 3]);
  return cmd.setIndexPrice(asset, price, source);
}

/**
 * An account's settings, or their query: partial updates of the automation flags and the leverage
 * limit (back to the defaults often, so states on and off the defaults both occur), and some
 * invalid ones (out-of-range limits, words naming bits no command sets, an unknown account).
 */
function accountSettingsCommand(random: () => number, account: number): Partial<Command> {
  const pick = <T>(items: readonly T[]): T => items[randomInt(random, 0, items.length - 1)];
  const target = random() < 0.95 ? account : 42;
  const roll = random();
  if (roll < 0.3) return cmd.queryAccountSettings(target);
  if (roll < 0.4) return cmd.updateAccountSettings(target, {}, pick([0x10, 0x1010, 0x200, 0x10000, -1]));
  const flag = () => (random() < 0.5 ? undefined : random() < 0.5);
  return cmd.updateAccountSettings(target, {
    autoBorrowSettlements: flag(), autoLend: flag(), autoRepayBorrows: flag(),
    leverageLimitHundredths: random() < 0.5 ? undefined : pick([100, 100, 250, 1_000, 10_000, 99, 10_001, 0]),
  });
}

/**
 * One command of the margin family the stream sends: an index price (30 %), an account's settings
 * (35 %) or borrow/lend (35 %; now and then engine time jumps to just past the next hour instead,
 * which pays interest); null when the stream sends none of them.
 */
function marginCommand(
  h: EngineHarness, random: () => number, seen: Observed, account: number, kinds: readonly CommandKind[],
): { command: Partial<Command>; time?: number } | null {
  const roll = random();
  if (roll < 0.3 && kinds.includes(CommandKind.SetIndexPrice)) return { command: indexPriceCommand(random) };
  if (roll < 0.65 && kinds.includes(CommandKind.UpdateAccountSettings)) return { command: accountSettingsCommand(random, account) };
  if (roll >= 0.65 && kinds.includes(CommandKind.BorrowLend)) {
    if (random() < 0.2) return { command: cmd.tick(), time: (Math.floor(h.timeUs / 3_600_000_000) + 1) * 3_600_000_000 + [0, 0, 1, 2500][randomInt(random, 0, 3)] };
    return { command: borrowLendCommand(random, seen, account) };
  }
  return null;
}

/** What the generator has learned from the engine's outputs so far. */
class Observed {
  /** Recently accepted order ids (at most 200). */
  readonly orders: number[] = [];
  /** Last trade price per market (0: none yet). */
  readonly lastTrade = [0, 0, 0];
  /** Latest [available, locked] per "account:asset", from balance records. */
  readonly balances = new Map<string, [number, number]>();
  /** Sequence numbers of accepted withdrawals (their ids). */
  readonly withdrawals: number[] = [];
  /** Latest [lent, borrowed] per "account:asset", from borrow/lend records. */
  readonly lending = new Map<string, [number, number]>();

  remember(records: Rec[], command?: Partial<Command>): void {
    for (const r of records) {
      if (r.type === RecordType.Order && r.event === OrderEvent.Accepted) this.orders.push(r.orderId);
      else if (r.type === RecordType.Trade) this.lastTrade[r.marketId] = r.priceTicks;
      else if (r.type === RecordType.Balance) this.balances.set(`${r.accountId}:${r.assetId}`, [r.availableUnits, r.lockedUnits]);
      else if (r.type === RecordType.BorrowLend) this.lending.set(`${r.accountId}:${r.assetId}`, [r.lentUnits, r.borrowedUnits]);
      else if (r.type === RecordType.Result && command?.kind === CommandKind.Withdraw && r.code === ResultCode.Ok) this.withdrawals.push(r.value);
    }
    if (this.orders.length > 200) this.orders.splice(0, this.orders.length - 200);
  }

  available(accountId: number, assetId: number): number {
    return this.balances.get(`${accountId}:${assetId}`)?.[0] ?? 0;
  }

  locked(accountId: number, assetId: number): number {
    return this.balances.get(`${accountId}:${assetId}`)?.[1] ?? 0;
  }
}

/**
 * A withdrawal, confirmation or dust conversion. Dust is made on purpose: a withdrawal leaves a
 * base balance below one lot, and a conversion of that balance (sometimes of a stale amount) may
 * follow; most go to banded market 1, which has a mark price once it has traded.
 */
function capitalCommand(random: () => number, seen: Observed, account: number, kinds: readonly CommandKind[], seq: number): Partial<Command> | undefined {
  // Withdrawals twice as often as the others: they have the most ways to be refused.
  const capital: readonly CommandKind[] = [CommandKind.Withdraw, CommandKind.ConfirmWithdrawal, CommandKind.ConvertDust];
  const choices = kinds.filter((k) => capital.includes(k)).flatMap((k) => (k === CommandKind.Withdraw ? [k, k] : [k]));
  if (choices.length === 0) return undefined;
  const kind = choices[randomInt(random, 0, choices.length - 1)];
  const market = random() < 0.8 ? M1 : M0;
  const base = market === M1 ? OTHER : BASE;
  if (kind === CommandKind.Withdraw) {
    const asset = [BASE, OTHER, OTHER, QUOTE, 7][randomInt(random, 0, 4)];
    const available = seen.available(account, asset);
    const locked = seen.locked(account, asset);
    const roll = random();
    let amountUnits: number;
    if (roll < 0.5 && available > 9) amountUnits = available - randomInt(random, 1, 9); // leaves dust
    else if (roll < 0.8) amountUnits = Math.max(1, Math.floor(available * random() * 0.3));
    else if (roll < 0.88 && locked > 0) amountUnits = available + randomInt(random, 1, locked); // the rest is in open orders
    else amountUnits = [0, -5, available + 1, Number.MAX_SAFE_INTEGER][randomInt(random, 0, 3)];
    // Spot margin (with borrow/lend): the shortfall redeemed or borrowed; now and then a flag a withdrawal does not take.
    const flags = kinds.includes(CommandKind.BorrowLend) && random() < 0.3 ? WITHDRAW_FLAG_SETS[randomInt(random, 0, WITHDRAW_FLAG_SETS.length - 1)] : 0;
    return { kind, accountId: random() < 0.95 ? account : 42, assetId: asset, amountUnits, key: digestOf(seq), flags };
  }
  if (kind === CommandKind.ConfirmWithdrawal) {
    const known = seen.withdrawals;
    // Invalid ids include the confirmation's own sequence number: not an earlier command.
    const orderId = known.length > 0 && random() < 0.85 ? known[randomInt(random, 0, known.length - 1)] : [0, seq, seq, seq + 5, 2 ** 40][randomInt(random, 0, 4)];
    return { kind, accountId: random() < 0.95 ? account : 42, orderId };
  }
  const available = seen.available(account, base);
  const roll = random();
  const target = roll < 0.9 ? { accountId: account, marketId: market } : roll < 0.95 ? { accountId: 42, marketId: market } : { accountId: account, marketId: 9 };
  return { kind, ...target, amountUnits: random() < 0.85 ? available : available + 1 };
}

const { AutoLend, AutoLendRedeem, AutoBorrow, AutoBorrowRepay } = CommandFlag;
/** Withdrawal flags: the two that fund a shortfall, and PostOnly, which a withdrawal refuses. */
const WITHDRAW_FLAG_SETS = [AutoBorrow, AutoLendRedeem, AutoBorrow | AutoLendRedeem, AutoBorrow | AutoLendRedeem, CommandFlag.PostOnly];
/** Order flags: funding the hold, using the proceeds, and both. */
const ORDER_FLAG_SETS = [
  AutoBorrow, AutoBorrow, AutoBorrow | AutoBorrowRepay, AutoLendRedeem, AutoLendRedeem | AutoBorrow, AutoLend, AutoBorrowRepay, AutoBorrow | AutoLend,
  AutoLendRedeem | AutoBorrow | AutoBorrowRepay | AutoLend,
];

/**
 * A spot order with the margin flags: with autoLendRedeem or autoBorrow mostly of more than the
 * account has available in the asset it spends, so that the shortfall is redeemed or borrowed (or
 * refused), without them of what it has; sometimes a market order
 * (an ask by quantity or a bid by quote quantity, the ones whose hold is funded).
 */
function spotMarginOrder(random: () => number, seen: Observed, account: number, market: number, centre: number): Partial<Command> {
  const pick = <T>(items: readonly T[]): T => items[randomInt(random, 0, items.length - 1)];
  const flags = pick(ORDER_FLAG_SETS);
  const side = random() < 0.5 ? 'bid' : 'ask';
  const priceTicks = Math.max(1, centre + randomInt(random, -3, 3));
  const lotUnits = side === 'bid' ? priceTicks * QUOTE_PER_TICK_LOT : BASE_PER_LOT;
  const spent = seen.available(account, side === 'bid' ? QUOTE : market === M1 ? OTHER : BASE);
  const affordable = Math.floor(spent / lotUnits);
  // Beyond the balance when the flags fund the shortfall; otherwise within it, so that it trades and its proceeds are used.
  const funds = (flags & (AutoLendRedeem | AutoBorrow)) !== 0;
  const qtyLots = Math.max(1, funds ? affordable + randomInt(random, random() < 0.8 ? 1 : -2, 6) : randomInt(random, 1, Math.min(9, Math.max(1, affordable))));
  if (random() < 0.2) return cmd.market(account, side, side === 'bid' ? { quoteQtyUnits: qtyLots * lotUnits } : { qtyLots }, { market, flags });
  return cmd.place(account, side, priceTicks, qtyLots, { market, flags, tif: pick([TimeInForce.GTC, TimeInForce.GTC, TimeInForce.IOC]) });
}

/** A spot margin limit query: the largest borrow, withdrawal (with its flags) or order (with the order's flags). */
function spotMarginQuery(random: () => number, account: number): Partial<Command> {
  const pick = <T>(items: readonly T[]): T => items[randomInt(random, 0, items.length - 1)];
  const accountId = random() < 0.95 ? account : 42;
  const roll = random();
  if (roll < 0.3) return { kind: CommandKind.QueryMaxBorrowQty, accountId, assetId: pick([QUOTE, QUOTE, OTHER, OTHER, BASE, 7]) };
  if (roll < 0.6) return { kind: CommandKind.QueryMaxWithdrawalQty, accountId, assetId: pick([QUOTE, OTHER, BASE, 7]), flags: pick([0, ...WITHDRAW_FLAG_SETS]) };
  const priceTicks = pick([0, randomInt(random, 1, 300), randomInt(random, 1, 300)]);
  return { kind: CommandKind.QueryMaxOrderQty, accountId, marketId: pick([M0, M1]), side: pick([0, 1]), priceTicks, flags: pick([0, ...ORDER_FLAG_SETS]) };
}

/**
 * A borrow/lend command: mostly repaying or redeeming part or all of a position the account has,
 * lending part of its balance or borrowing against it; sometimes of an asset without a pool, an
 * unknown account or side, a quantity off the step or not positive; or one of the two queries.
 */
function borrowLendCommand(random: () => number, seen: Observed, account: number): Partial<Command> {
  const pick = <T>(items: readonly T[]): T => items[randomInt(random, 0, items.length - 1)];
  if (random() < 0.12) return random() < 0.5 ? { kind: CommandKind.QueryLendPools } : { kind: CommandKind.QueryBorrowLendPositions, accountId: random() < 0.9 ? account : 42 };
  if (random() < 0.15) return spotMarginQuery(random, account);
  const assetId = pick([QUOTE, QUOTE, QUOTE, OTHER, OTHER, OTHER, BASE, 7]);
  const [lent, borrowed] = seen.lending.get(`${account}:${assetId}`) ?? [0, 0];
  const available = seen.available(account, assetId);
  const roll = random();
  let side = random() < 0.55 ? 1 : 0;
  let amountUnits: number;
  if (roll < 0.35 && (lent > 0 || borrowed > 0)) {
    side = lent > 0 ? 0 : 1; // redeem, or repay
    const position = lent > 0 ? lent : borrowed;
    amountUnits = random() < 0.4 ? position : random() < 0.9 ? Math.max(1, Math.floor(position * random())) : position + 1;
  } else if (roll < 0.9) {
    const step = assetId === OTHER ? 5 : 1;
    // Borrows reach past what the collateral covers now and then (INSUFFICIENT_MARGIN): a quote
    // borrow of about twelve times the account's quote balance passes the IMF of 0.1 only when
    // its other holdings make up the difference.
    const scale = side === 1 ? available * 0.6 : assetId === OTHER ? pick([80, 400]) : pick([6_000, 60_000, Math.max(12 * available, 1_000)]);
    amountUnits = Math.max(1, Math.floor((scale * random()) / step)) * step + (random() < 0.08 ? 1 : 0);
  } else {
    amountUnits = pick([0, -1, Number.MAX_SAFE_INTEGER, 2 ** 40]);
    if (random() < 0.3) side = 3;
  }
  return { kind: CommandKind.BorrowLend, accountId: random() < 0.96 ? account : 42, assetId, side, amountUnits };
}

/**
 * A borrower pushed into the liquidating state and out of it, once per stream: a seventh account
 * holding only market 1's base borrows quote (an eighth lends it) at an index near the book and
 * may not withdraw it (InsufficientMargin), market 1's index then falls to a tenth, the borrower asks to borrow and to withdraw again
 * (AccountLiquidating), places a bid (AccountLiquidating) and an ask of market 1 and cancels them, repays everything (the state clears), and the index returns.
 */
function liquidationRound(h: EngineHarness, random: () => number, seen: Observed, kinds: readonly CommandKind[]): void {
  if (!kinds.includes(CommandKind.BorrowLend) || !kinds.includes(CommandKind.SetIndexPrice) || !kinds.includes(CommandKind.UpdateAccountSettings)) return;
  const remember = (records: Rec[], command?: Partial<Command>): void => seen.remember(records, command);
  const [borrower, lender] = [RANDOM_ACCOUNTS + 1, RANDOM_ACCOUNTS + 2];
  const apply = (command: Partial<Command>, timeUs?: number) => remember(h.apply(command, timeUs), command);
  h.createAccount(borrower);
  h.createAccount(lender);
  apply(cmd.deposit(borrower, OTHER, 100));
  apply(cmd.updateAccountSettings(borrower, { leverageLimitHundredths: 1_000 }));
  apply(cmd.deposit(lender, QUOTE, 50_000));
  apply({ kind: CommandKind.BorrowLend, accountId: lender, assetId: QUOTE, side: 1, amountUnits: 50_000 });
  const priceE9 = randomInt(random, 250, 350) * 30_000_000_000;
  apply(cmd.setIndexPrice(OTHER, priceE9, 1));
  // 100 units at 90 quote units each, weight 0.5: collateral about 4 500, IMF 0.1 of 20 000.
  apply({ kind: CommandKind.BorrowLend, accountId: borrower, assetId: QUOTE, side: 0, amountUnits: 20_000 });
  // Taking the borrowed quote away would leave no equity (InsufficientMargin).
  apply({ kind: CommandKind.Withdraw, accountId: borrower, assetId: QUOTE, amountUnits: 20_000, key: digestOf(h.stream.length + 1) });
  apply(cmd.setIndexPrice(OTHER, priceE9 / 10, 1));
  apply({ kind: CommandKind.BorrowLend, accountId: borrower, assetId: QUOTE, side: 0, amountUnits: 1 });
  apply({ kind: CommandKind.Withdraw, accountId: borrower, assetId: QUOTE, amountUnits: 1, key: digestOf(h.stream.length + 1) });
  // Its spot orders: a bid of market 1's base adds risk (AccountLiquidating); an ask of it pays
  // the quote it owes (placed when the state held, then cancelled).
  const near = seen.lastTrade[1] > 0 ? seen.lastTrade[1] : 100; // inside market 1's price band
  apply(cmd.place(borrower, 'bid', near, 1, { market: M1, postOnly: true }));
  apply(cmd.place(borrower, 'ask', near, 1, { market: M1 }));
  // A step of the liquidation waterfall falls due now and then: it cancels the ask and repays
  // from the quote the account holds.
  if (random() < 0.5) apply({ ...cmd.tick(), frontId: 0xffff }, h.timeUs + 25_000);
  apply(cmd.cancelAll(borrower, M1));
  const [, borrowed] = seen.lending.get(`${borrower}:${QUOTE}`) ?? [0, 0];
  if (borrowed > 0) apply({ kind: CommandKind.BorrowLend, accountId: borrower, assetId: QUOTE, side: 1, amountUnits: borrowed });
  apply(cmd.setIndexPrice(OTHER, priceE9, 1));
}

/**
 * A perpetual position pushed over the line, once per stream: an eleventh account buys 5 lots of
 * the perpetual at its last price (from a twelfth's post-only ask, or whatever asks are better)
 * with USDC worth 22 % of the notional plus its taker fee, the underlying's index falls to 80 %
 * (the account is liquidating, not bankrupt), the twelfth bids there for 5 lots or not (then the
 * position is auto-deleveraged), and liquidation steps fall due; then the index returns. When the
 * stream sends the backstop kinds, a thirteenth account is named a backstop liquidity provider
 * (refused the second time, as is removing one that is not a provider): in the rounds without the
 * bid it stays one and the index falls only as far as leaves the trader's equity at 2 % of its
 * notional (below the Auto-Close MF, not bankrupt), so the position goes to it first: in the
 * streams whose chunk is half a position it takes all of it (deep pockets), in the others what 4 %
 * of the notional in USDC allows as margin (the rest is auto-deleveraged); in the rounds with the
 * bid it is removed before the fall.
 */
function perpLiquidationRound(h: EngineHarness, random: () => number, seen: Observed, kinds: readonly CommandKind[]): void {
  if (!kinds.includes(CommandKind.SetIndexPrice) || !kinds.includes(CommandKind.UpdateAccountSettings)) return;
  const apply = (command: Partial<Command>, timeUs?: number) => seen.remember(h.apply(command, timeUs), command);
  const [trader, maker] = [h.createAccount(RANDOM_ACCOUNTS + 5), h.createAccount(RANDOM_ACCOUNTS + 6)];
  const perp = h.config.markets.find((m) => m.marketId === M2)!;
  const price = seen.lastTrade[M2] > 0 ? seen.lastTrade[M2] : 100;
  const notional = price * 5 * perp.quoteUnitsPerTickLot;
  apply(cmd.deposit(maker, QUOTE, 1_000_000));
  apply(cmd.deposit(trader, QUOTE, Math.ceil((notional * (2_200 + perp.perp!.takerFeeBps)) / 10_000)));
  for (const accountId of [trader, maker]) apply(cmd.updateAccountSettings(accountId, { leverageLimitHundredths: 1_000 }));
  apply(cmd.setIndexPrice(BASE, price * 300_000_000_000, 1));
  apply(cmd.place(maker, 'ask', price, 5, { market: M2, postOnly: true }));
  apply(cmd.market(trader, 'bid', { qtyLots: 5 }, { market: M2 }));
  apply({ ...cmd.tick(), frontId: 0xffff }, h.timeUs + 10_000);
  const low = Math.ceil(price * 0.8);
  // Half the rounds bid there, so the book closes the position; the others leave it to the backstop
  // provider (when the stream has one) and auto-deleveraging.
  const bids = random() < 0.5;
  const provider = backstopProvider(h, seen, kinds, trader, h.config.liquidation!.chunkBps === 5_000 ? 1_000_000 : Math.ceil(notional / 25));
  if (bids && provider > 0) apply(cmd.removeBackstopProvider(provider));
  const backstopFall = provider > 0 && !bids ? backstopFallE9(h, seen, trader) : 0;
  apply(cmd.setIndexPrice(BASE, backstopFall > 0 ? backstopFall : low * 300_000_000_000, 1));
  if (bids) apply(cmd.place(maker, 'bid', low, 5, { market: M2, postOnly: true }));
  const stepUs = h.config.liquidation!.stepIntervalUs;
  for (let i = 0; i < 12; i++) apply({ ...cmd.tick(), frontId: 0xffff }, h.timeUs + stepUs);
  if (bids && random() < 0.5) apply(cmd.cancelAll(maker, M2));
  apply(cmd.setIndexPrice(BASE, price * 300_000_000_000, 1));
  if (!bids && provider > 0) apply(cmd.removeBackstopProvider(provider));
}

/**
 * The underlying's index (priceE9: one tick of the perpetual is 3·10^11) at which the trader's
 * equity is 2 % of its long's notional: liquidating, below the Auto-Close MF and not bankrupt (a
 * fall to 80 % often leaves it bankrupt, the fill having cost more than the last price); 0 without a long.
 */
function backstopFallE9(h: EngineHarness, seen: Observed, trader: number): number {
  const records = h.apply({ kind: CommandKind.QueryPositions, accountId: trader, marketId: M2 });
  const position = records.find((r) => r.type === RecordType.Position);
  if (position?.type !== RecordType.Position || position.netLots <= 0) return 0;
  const wide = (high: number, low: number) => high * 2 ** 53 + low;
  const held = seen.available(trader, QUOTE) + wide(position.unsettledHigh, position.unsettledLow) + wide(position.unrealizedHigh, position.unrealizedLow);
  const value = position.netLots * QUOTE_PER_TICK_LOT;
  return Math.round((position.markPriceE9 - (held * 300_000_000_000) / value) / 0.98);
}

/** The perpetual round's backstop provider (see perpLiquidationRound), named; 0 when the stream sends no backstop kinds. */
function backstopProvider(h: EngineHarness, seen: Observed, kinds: readonly CommandKind[], trader: number, deposit: number): number {
  if (!kinds.includes(CommandKind.SetBackstopProvider) || !kinds.includes(CommandKind.RemoveBackstopProvider)) return 0;
  const apply = (command: Partial<Command>) => seen.remember(h.apply(command), command);
  const provider = h.createAccount(RANDOM_ACCOUNTS + 7);
  apply(cmd.deposit(provider, QUOTE, deposit));
  apply(cmd.updateAccountSettings(provider, { leverageLimitHundredths: 1_000 }));
  apply(cmd.setBackstopProvider(provider));
  apply(cmd.setBackstopProvider(provider));
  apply(cmd.removeBackstopProvider(trader));
  return provider;
}

/**
 * A spot risk query: collateral valued in the quote asset (sometimes in another or an unknown
 * asset), or the largest order on either side at no price (a market order), a price on the grid
 * or an invalid one.
 */
function riskQuery(random: () => number, account: number, market: number): Partial<Command> {
  const accountId = random() < 0.95 ? account : 42;
  if (random() < 0.4) return { kind: CommandKind.QueryCollateral, accountId, assetId: [QUOTE, QUOTE, QUOTE, BASE, 7][randomInt(random, 0, 4)] };
  const priceTicks = [0, 0, randomInt(random, 1, 300), -1, 10_000_000][randomInt(random, 0, 4)];
  return { kind: CommandKind.QueryMaxOrderQty, accountId, marketId: random() < 0.95 ? market : 9, side: [0, 1, 0, 1, 3][randomInt(random, 0, 4)], priceTicks };
}

/**
 * The account's perpetual positions (every perpetual, or one), sometimes of an unknown account or a
 * spot or unknown market; or the perpetuals' open interest (all, or one market, perpetual or not).
 */
function positionsQuery(random: () => number, account: number): Partial<Command> {
  const accountId = random() < 0.95 ? account : 42;
  const choice = randomInt(random, 0, 7);
  if (choice === 6) return { kind: CommandKind.QueryOpenInterest, marketId: ALL_MARKETS };
  if (choice === 7) return { kind: CommandKind.QueryOpenInterest, marketId: [M2, M0, 9][randomInt(random, 0, 2)] };
  return { kind: CommandKind.QueryPositions, accountId, marketId: [ALL_MARKETS, ALL_MARKETS, M2, M2, M0, 9][choice] };
}

/**
 * Converts what a withdrawal left of market `market`'s base asset, mostly after cancelling what
 * locks it (locked dust cannot be converted), sometimes of a stale amount (the balance changed
 * between reading it and converting it).
 */
function convertAfterWithdrawal(h: EngineHarness, random: () => number, seen: Observed, account: number, market: number, kinds: readonly CommandKind[]): void {
  const asset = market === M0 ? BASE : OTHER;
  if (random() < 0.8) seen.remember(h.apply(cmd.cancelAll(account, market)));
  const amountUnits = seen.available(account, asset) + (random() < 0.1 ? randomInt(random, -1, 1) : 0);
  // Or every dust balance at once (of this market, or of all), when the stream sends ConvertAllDust.
  const dust = kinds.includes(CommandKind.ConvertAllDust) && random() < 0.5
    ? { kind: CommandKind.ConvertAllDust, accountId: account, assetId: QUOTE, marketId: random() < 0.5 ? market : ALL_MARKETS }
    : { kind: CommandKind.ConvertDust, accountId: account, marketId: market, amountUnits };
  seen.remember(h.apply(dust), dust);
}

/**
 * An account withdraws all but a few units of market `market`'s base asset, converts that dust,
 * and deposits again (so that it keeps trading).
 */
function dustRound(h: EngineHarness, random: () => number, seen: Observed, account: number, market: number, kinds: readonly CommandKind[]): void {
  const asset = market === M0 ? BASE : OTHER;
  const available = seen.available(account, asset);
  if (available > 9) {
    const withdrawal = { kind: CommandKind.Withdraw, accountId: account, assetId: asset, amountUnits: available - randomInt(random, 1, 9), key: digestOf(h.seq + 1) };
    seen.remember(h.apply(withdrawal), withdrawal);
  }
  convertAfterWithdrawal(h, random, seen, account, market, kinds);
  seen.remember(h.apply(cmd.deposit(account, asset, randomInt(random, 50, 400))));
}

/** The 32-byte digest a withdrawal command carries (where the funds go); any bytes do here. */
function digestOf(seq: number): Uint8Array {
  const key = new Uint8Array(32);
  key[0] = seq & 0xff;
  key[1] = (seq >>> 8) & 0xff;
  key[31] = 0x5a;
  return key;
}

/** Where market `market`'s prices centre: markets 1 and 2 (banded) follow their last trade (their band's reference). */
function nextMid(random: () => number, mid: number[], seen: Observed, market: number): number {
  if (market !== M0 && seen.lastTrade[market] > 0) mid[market] = Math.max(10, seen.lastTrade[market] + randomInt(random, -1, 1));
  else mid[market] = Math.max(10, Math.min(990, mid[market] + randomInt(random, -2, 2)));
  return mid[market];
}

/** Runs `steps` random commands through `h` (which checks invariants after each). */
export function runRandomStream(h: EngineHarness, seed: number, steps: number, options: StreamOptions = {}): void {
  const random = prng(seed);
  const kinds = options.kinds ?? OPTIONAL_KINDS;
  const snapshots = options.snapshots ?? true;
  const dustRounds = kinds.includes(CommandKind.Withdraw) && kinds.includes(CommandKind.ConvertDust);
  const pick = <T>(items: readonly T[]): T => items[randomInt(random, 0, items.length - 1)];
  const seen = new Observed();
  const known = seen.orders;
  const remember = (records: Rec[], command?: Partial<Command>): void => seen.remember(records, command);
  for (let i = 1; i <= RANDOM_ACCOUNTS; i++) {
    h.createAccount(i);
    remember(h.apply(cmd.deposit(i, QUOTE, randomInt(random, 2_000, 40_000))));
    remember(h.apply(cmd.deposit(i, BASE, randomInt(random, 50, 400))));
    remember(h.apply(cmd.deposit(i, OTHER, randomInt(random, 50, 400))));
    // 10× leverage, so that the borrow IMF is the pools' own (0.1 and 0.2), not the 1× default's 1.
    if (kinds.includes(CommandKind.UpdateAccountSettings)) remember(h.apply(cmd.updateAccountSettings(i, { leverageLimitHundredths: 1_000 })));
  }
  // The perpetual's underlying priced near its book from the start, so that perpetual orders are
  // admitted (a perpetual without a mark admits no new exposure) and its book builds a guarded reference.
  if (kinds.includes(CommandKind.SetIndexPrice)) remember(h.apply(cmd.setIndexPrice(BASE, 100 * 300_000_000_000, 1)));
  const mid = [100, 300, 100];
  // A market put in another state than Open is reopened a few steps later (at this step).
  const reopenAt = [Infinity, Infinity];
  // Maintenance, when the stream starts it, ends a few steps later (at this step).
  let maintenanceEndsAt = Infinity;
  for (let step = 0; step < steps; step++) {
    const account = randomInt(random, 1, RANDOM_ACCOUNTS);
    // Market orders, limit orders and cancels go to the perpetual a fifth of the time.
    const market = random() < 0.2 ? M2 : random() < 0.65 ? M0 : M1;
    const centre = nextMid(random, mid, seen, market);
    // Market 1's band is about ±3 ticks around its last trade: most of its prices fall inside.
    const spread = market === M0 ? 6 : 4;
    let time = h.timeUs + pick([0, 0, 1, 300, 1000, 4000]);
    if (step === Math.floor(steps / 3)) liquidationRound(h, random, seen, kinds);
    if (step === Math.floor((2 * steps) / 3)) perpLiquidationRound(h, random, seen, kinds);
    if (snapshots && (step === Math.floor(steps / 2) || random() < 0.004)) {
      if (kinds.includes(CommandKind.Snapshot)) remember(h.apply({ kind: CommandKind.Snapshot }, time));
      h.restartFromSnapshot();
    }
    const roll = random();
    let command!: Partial<Command>;
    let margin: { command: Partial<Command>; time?: number } | null;
    const reopen = reopenAt.findIndex((at) => at <= step);
    if (reopen >= 0) {
      reopenAt[reopen] = Infinity;
      command = cmd.setMarketState(reopen, OrderBookState.Open);
    } else if (maintenanceEndsAt <= step) {
      maintenanceEndsAt = Infinity;
      command = cmd.setSystemState(0);
    } else if (roll < 0.1) {
      const side = random() < 0.5 ? 'bid' : 'ask';
      const stp = pick([SelfTradePrevention.RejectTaker, SelfTradePrevention.RejectMaker, SelfTradePrevention.RejectBoth]);
      const size = random() < 0.5 ? { qtyLots: randomInt(random, 1, 12) } : { quoteQtyUnits: randomInt(random, 1, 12) * centre * 3 + randomInt(random, -40, 40) };
      command = cmd.market(account, side, size, { market, stp, tif: pick([TimeInForce.GTC, TimeInForce.IOC]) });
      const roll2 = random();
      if (roll2 < 0.04) command.priceTicks = centre;
      else if (roll2 < 0.08) command.flags! |= 1; // post-only: invalid for a market order
      else if (roll2 < 0.1) command.timeInForce = TimeInForce.FOK;
      else if (roll2 < 0.12) command = { ...command, qtyLots: 2, quoteQtyUnits: 300 };
      else if (roll2 < 0.3 && market !== M0) command.flags! |= CommandFlag.ReduceOnly; // the spot market 1 refuses it
    } else if (roll < 0.55 && kinds.includes(CommandKind.BorrowLend) && random() < 0.12) {
      command = spotMarginOrder(random, seen, account, market, centre);
    } else if (roll < 0.55) {
      command = cmd.place(account, random() < 0.5 ? 'bid' : 'ask', centre + randomInt(random, -spread, spread), randomInt(random, 1, 9), {
        market,
        tif: pick([TimeInForce.GTC, TimeInForce.GTC, TimeInForce.GTC, TimeInForce.IOC, TimeInForce.FOK]),
        stp: pick([SelfTradePrevention.RejectTaker, SelfTradePrevention.RejectMaker, SelfTradePrevention.RejectBoth]),
        clientId: random() < 0.3 ? randomInt(random, 1, 5) : undefined,
      });
      if (command.timeInForce === TimeInForce.GTC && random() < 0.3) command.flags! |= 1; // post-only
      // Reduce-only: on the perpetual two times in five (expired, clipped, or resting and trimmed by later fills).
      if (market === M2 && random() < 0.4) command.flags! |= CommandFlag.ReduceOnly;
    } else if (roll < 0.7) {
      const orderId = known.length > 0 && random() < 0.9 ? pick(known) : randomInt(random, 1, 2 ** 40);
      command = cmd.cancel(account, orderId, market);
    } else if (roll < 0.76) {
      command = cmd.cancelByClientId(account, randomInt(random, 1, 5), market);
    } else if (roll < 0.78) {
      command = cmd.cancelAll(account, market);
    } else if (roll < 0.83) {
      command = cmd.deposit(random() < 0.9 ? account : 42, pick([QUOTE, BASE, OTHER, 7]), pick([0, -3, 1, 500, 5_000]));
    } else if (roll < 0.87) {
      command = pick([
        cmd.place(account, 'bid', 0, 1, { market }),
        cmd.place(account, 'ask', 100, 5000, { market }),
        cmd.place(account, 'bid', 100, 1, { market: 9 }),
        cmd.place(42, 'bid', 100, 1, { market }),
        cmd.place(account, 'bid', 999, 999, { market }),
        { kind: 50 as CommandKind },
      ]);
    } else if (roll < 0.895) {
      command = cmd.tick();
      // Half the ticks price the perpetual's underlying near its book instead, just before a whole
      // second of engine time, so that the second's mark sample finds the index fresh.
      if (kinds.includes(CommandKind.SetIndexPrice) && random() < 0.5) {
        command = cmd.setIndexPrice(BASE, randomInt(random, 80, 120) * 300_000_000_000, 1);
        time = (Math.floor(time / 1_000_000) + 1) * 1_000_000 - 1_000;
      }
    } else if (roll < 0.905) {
      // Operator: a market's order book state. Mostly back to Open, so both books keep trading;
      // sometimes an invalid value or market.
      const state = random() < 0.2 ? OrderBookState.Open : pick([OrderBookState.Closed, OrderBookState.CancelOnly, OrderBookState.LimitOnly, OrderBookState.PostOnly, 5]);
      command = cmd.setMarketState(random() < 0.95 ? market : 9, state);
      if (state !== OrderBookState.Open) reopenAt[market] = step + randomInt(random, 3, 40);
    } else if (roll < 0.915) {
      // Operator: an account's fee rates (some out of range, some for an unknown account).
      command = cmd.setFeeRates(random() < 0.95 ? account : 42, pick([0, 1, 150, 2000, 10_000, 10_001]), pick([0, 5, 300, 2500, -1]));
    } else if (roll < 0.93) {
      // A batch: several places of one account at one engine time, as POST /api/v1/orders sends
      // them (each item its own command; malformed items are refused one by one).
      const count = randomInt(random, 2, 5);
      for (let item = 0; item < count; item++) {
        const place = random() < 0.15
          ? cmd.place(account, 'bid', 0, 1, { market })
          : cmd.place(account, random() < 0.5 ? 'bid' : 'ask', centre + randomInt(random, -4, 4), randomInt(random, 1, 5), {
            market, postOnly: random() < 0.4, clientId: random() < 0.3 ? randomInt(random, 1, 5) : undefined,
          });
        if (item < count - 1) remember(h.apply(place, time));
        else command = place;
      }
    } else if (roll < 0.935) {
      command = cmd.queryFeeRates(random() < 0.9 ? account : 42);
    } else if (roll < 0.975) {
      // Capital commands and borrow/lend, when the caller sends them; otherwise a query.
      // Borrow/lend takes half of this share when the stream sends it.
      const lending = kinds.includes(CommandKind.BorrowLend) && random() < 0.5;
      command = (lending ? borrowLendCommand(random, seen, account) : capitalCommand(random, seen, account, kinds, h.seq + 1)) ?? cmd.queryBalances(account);
    } else if (roll < 0.977 && kinds.includes(CommandKind.SetSystemState)) {
      // Operator: maintenance for a few steps (refusing places, cancels and capital), sometimes
      // an invalid state.
      command = cmd.setSystemState(pick([1, 1, 1, 2]));
      if (command.amountUnits === 1) maintenanceEndsAt = step + randomInt(random, 2, 8);
    } else if (roll < 0.999 && (margin = marginCommand(h, random, seen, account, kinds)) !== null) {
      command = margin.command;
      time = margin.time ?? time;
      // The perpetual's underlying priced just before a whole second: the second's mark sample finds it fresh.
      if (command.kind === CommandKind.SetIndexPrice && command.assetId === BASE) time = Math.max(time, (Math.floor(time / 1_000_000) + 1) * 1_000_000 - 1_000);
    } else {
      command = pick([
        cmd.queryOpenOrders(account, market), cmd.queryBalances(account), cmd.querySnapshot(), cmd.queryOrder(account, pick(known.length ? known : [1]), market),
        riskQuery(random, account, market === M2 ? M0 : market), riskQuery(random, account, market === M2 ? M1 : market), positionsQuery(random, account), positionsQuery(random, account),
        cmd.queryMarkPrices(),
      ]);
    }
    const untraded = seen.lastTrade[M1] === 0;
    remember(h.apply(command, time), command);
    // The perpetual's positions are read often, so every figure of a position is compared.
    if (command.marketId === M2 && random() < 0.3) remember(h.apply(positionsQuery(random, account)));
    // A withdrawal that left dust is often followed by its conversion.
    const left = command.kind === CommandKind.Withdraw ? seen.available(account, command.assetId ?? 0) : 0;
    if (left > 0 && left < 10 && command.assetId !== QUOTE && kinds.includes(CommandKind.ConvertDust) && random() < 0.8) {
      convertAfterWithdrawal(h, random, seen, account, command.assetId === BASE ? M0 : M1, kinds);
    }
    // Dust rounds: often, and right after market 1's first trade, when the exchange has
    // collected few fees (none at zero rates) and a conversion often finds too little to pay.
    if (dustRounds && ((untraded && seen.lastTrade[M1] > 0) || random() < 0.025)) dustRound(h, random, seen, account, random() < 0.9 ? M1 : M0, kinds);
  }
  // Reopen both markets, and let every pending order activate so every request has had its answer.
  for (const market of [M0, M1]) remember(h.apply(cmd.setMarketState(market, OrderBookState.Open)));
  if (kinds.includes(CommandKind.SetSystemState)) remember(h.apply(cmd.setSystemState(0)));
  // One valid settings update, so every stream compares at least one accepted.
  if (kinds.includes(CommandKind.UpdateAccountSettings)) remember(h.apply(cmd.updateAccountSettings(1, { autoLend: true, leverageLimitHundredths: 250 })));
  closingRound(h, seen, kinds);
  remember(h.apply(cmd.tick(), h.timeUs + 1_000_000));
}

/** The command kinds of the stream so far with at least one Ok result. */
function acceptedKinds(h: EngineHarness): Set<CommandKind> {
  const kindOf = new Map(h.stream.map(({ command }) => [command.requestId, command.kind]));
  const accepted = new Set<CommandKind>();
  for (const r of h.log) {
    if (r.type === RecordType.Result && r.code === ResultCode.Ok && kindOf.has(r.requestId)) accepted.add(kindOf.get(r.requestId)!);
  }
  return accepted;
}

/**
 * Every optional kind the stream sends is accepted at least once: for a kind the random steps
 * happened to leave without an Ok (two confirmations, both of invalid ids, say), a valid one of a
 * fresh account now, with the exchange open. Streams that have them all are left as they are.
 */
function closingRound(h: EngineHarness, seen: Observed, kinds: readonly CommandKind[]): void {
  const accepted = acceptedKinds(h);
  const missing = kinds.filter((kind) => !accepted.has(kind));
  if (missing.length === 0) return;
  const apply = (command: Partial<Command>): ResultCode | undefined => {
    const records = h.apply(command);
    seen.remember(records, command);
    const result = records.find((r) => r.type === RecordType.Result && r.requestId === h.lastRequestId());
    return result?.type === RecordType.Result ? result.code : undefined;
  };
  const account = h.createAccount(RANDOM_ACCOUNTS + 3);
  apply(cmd.deposit(account, QUOTE, 1_000));
  if (missing.includes(CommandKind.Withdraw) || missing.includes(CommandKind.ConfirmWithdrawal)) {
    apply({ kind: CommandKind.Withdraw, accountId: account, assetId: QUOTE, amountUnits: 100, key: digestOf(h.seq + 1) });
    // Any earlier command's sequence number names a withdrawal the chain can confirm.
    apply({ kind: CommandKind.ConfirmWithdrawal, accountId: account, orderId: seen.withdrawals.at(-1) ?? h.seq });
  }
  if (missing.includes(CommandKind.Snapshot)) apply({ kind: CommandKind.Snapshot });
  if (missing.includes(CommandKind.SetIndexPrice)) apply(cmd.setIndexPrice(BASE, 100_000_000_000, 1));
  if (missing.includes(CommandKind.BorrowLend)) closingBorrowLend(apply, seen, account);
  if (missing.includes(CommandKind.ConvertDust) || missing.includes(CommandKind.ConvertAllDust)) closingDust(h, apply, seen, account, missing);
}

/**
 * Dust of market 1's base (one unit, below its lot) converted at its mark price, by one or both
 * kinds, with quote fees in the treasury to pay for it: the closing account sells one lot there
 * as taker at half its proceeds in fees, to a second fresh account's bid at the last trade price
 * (market 1's book emptied first, its guarded reference caught up with that price so it lies in
 * the band).
 */
function closingDust(h: EngineHarness, apply: (command: Partial<Command>) => ResultCode | undefined, seen: Observed, account: number, missing: readonly CommandKind[]): void {
  const buyer = h.createAccount(RANDOM_ACCOUNTS + 4);
  const step = (command: Partial<Command>): void => {
    h.apply(cmd.tick(), h.timeUs + 1_000_000);
    apply(command);
  };
  for (let accountId = 1; accountId < buyer; accountId++) apply(cmd.cancelAll(accountId, M1));
  apply(cmd.deposit(buyer, QUOTE, 5_000));
  apply(cmd.deposit(account, OTHER, BASE_PER_LOT));
  apply(cmd.setFeeRates(account, 5_000, 5_000));
  const price = seen.lastTrade[M1];
  step(cmd.place(buyer, 'bid', price, 1, { market: M1 }));
  step(cmd.place(account, 'ask', price, 1, { market: M1, tif: TimeInForce.IOC }));
  for (const kind of [CommandKind.ConvertDust, CommandKind.ConvertAllDust].filter((k) => missing.includes(k))) {
    step(cmd.deposit(account, OTHER, 1));
    apply(kind === CommandKind.ConvertDust
      ? { kind, accountId: account, marketId: M1, amountUnits: 1 }
      : { kind, accountId: account, assetId: QUOTE, marketId: M1 });
  }
}

/**
 * One accepted borrow/lend move: a lend of one quote unit (its pool is always open), else, when
 * the pool's lent total is at its limit, a redemption of one unit by a lender, else (borrowed to
 * its maximum utilization too) a repayment of one unit by a borrower.
 */
function closingBorrowLend(apply: (command: Partial<Command>) => ResultCode | undefined, seen: Observed, account: number): void {
  if (apply({ kind: CommandKind.BorrowLend, accountId: account, assetId: QUOTE, side: 1, amountUnits: 1 }) === ResultCode.Ok) return;
  const holders = (index: 0 | 1): number[] => [...seen.lending].filter(([key, units]) => key.endsWith(`:${QUOTE}`) && units[index] > 0).map(([key]) => Number(key.split(':')[0]));
  const [lender] = holders(0);
  if (lender !== undefined && apply({ kind: CommandKind.BorrowLend, accountId: lender, assetId: QUOTE, side: 0, amountUnits: 1 }) === ResultCode.Ok) return;
  for (const borrower of holders(1)) {
    if (seen.available(borrower, QUOTE) > 0 && apply({ kind: CommandKind.BorrowLend, accountId: borrower, assetId: QUOTE, side: 1, amountUnits: 1 }) === ResultCode.Ok) return;
  }
}

export interface RunSeed {
  seed: number;
  /**
   * Not one of the fixed seeds (drawn for this run, or named by ENGINE_SEED): its records are
   * checked like any seed's, but the suites' floors on how much a stream exercised hold only on
   * the fixed seeds, whose streams never change.
   */
  fresh: boolean;
}

/**
 * The seeds a randomized suite runs: ENGINE_SEED=<n> alone when set; otherwise the fixed seeds
 * plus one fresh seed drawn per run, so that every run also explores a stream no earlier run saw.
 */
export function seedsForRun(fixed: readonly number[]): RunSeed[] {
  const env = process.env.ENGINE_SEED;
  if (env !== undefined && env !== '') return [{ seed: Number(env), fresh: !fixed.includes(Number(env)) }];
  return [...fixed.map((seed) => ({ seed, fresh: false })), { seed: randomInt(Math.random, 1, 2 ** 31 - 1), fresh: true }];
}

/** A test name that says which seed ran and how to run it again. */
export function seedLabel({ seed, fresh }: RunSeed, file: string): string {
  return fresh ? `fresh seed ${seed} (rerun: ENGINE_SEED=${seed} npx vitest run ${file})` : `seed ${seed}`;
}
