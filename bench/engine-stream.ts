// The command stream of the engine benchmark: a seeded copy of exchange-core's published mix, and
// the same mix with a third of the accounts trading on margin.
//
//   generateStream(seed, ops, config, mix)
//     │  drives a private Exchange (untimed) and watches its records, so every cancel and move
//     │  names an order that is really open and every place knows the id the engine will give it
//     ▼
//   EngineStream  setup: Command objects (accounts, deposits, ~1,000 resting orders; margin: an
//                        index price and lends first)
//                 main:  typed arrays, one row per command ──decodeCommand──► one reused Command
//
// Mix, in operations (exchange-core's "~9 % GTC, 3 % IOC, 6 % cancel, 82 % move"):
//   GTC 9 %     a limit order; usually passive, sometimes priced through the touch (it trades, the
//               rest rests). How often it crosses follows the open-order count, which holds the
//               book near ~1,000 resting orders without changing the mix.
//   IOC 3 %     priced through the touch by 1–10 ticks: trades, never rests.
//   cancel 6 %  a random open order.
//   move 82 %   a random open order moved to a new price: our engine has no move command, so a
//               move is TWO commands (CancelOrder + PlaceOrder of the remaining lots at the new
//               price, same account and side). Operations and commands are counted separately.
// One market, 1,000 funded accounts, no speed bump (the config below), self-trade RejectTaker.
// Passive prices are uniform over ~800 ticks behind a reference price (the last trade), which
// puts ~1,000 orders on ~750 price levels. What is measured is done by bench/engine.bench.ts and
// bench/engine-margin.bench.ts; this file only builds and checks the stream
// (test/bench/engine-bench-stream.test.ts checks the mix).
//
// The margin mix ('margin', on benchMarginConfig: pools for USDC and SOL, SOL's index set first so
// every mark is a fresh index): the same operations, draws and book, but every third account
// (isMarginAccount) holds little of one asset (its short asset, alternating SOL and USDC) and
// places every order with autoBorrow, so an order beyond its balance borrows the rest; three in
// four of its new orders spend that asset (asks when short SOL), and half of its orders also carry
// autoBorrowRepay (a fill's proceeds repay the borrow). A borrow's units stay with the account
// until repaid, so only orders beyond what it already holds borrow (about 2 % of the commands). Half of the margin
// accounts lent their short asset at setup: their orders carry autoLendRedeem (the lend is
// redeemed before anything is borrowed; without it the engine refuses a borrow beside a lend) and a
// quarter of them autoLend. Accounts 1, 4, 7, … lend both assets to the pools, which is the
// supply the borrows draw on. Every other account trades as in the spot mix. The flags are chosen
// so that no command is refused: an account that may hold a lend of an asset always redeems first.

import { Exchange } from '../engine/core/exchange.js';
import {
  BorrowLendEvent,
  BorrowLendSide,
  CommandFlag,
  CommandKind,
  HeaderFlag,
  IndexPriceSource,
  OrderEvent,
  OrderStatus,
  OrderType,
  RecordType,
  ResultCode,
  SelfTradePrevention,
  Side,
  TimeInForce,
  newCommandSlot,
  type BorrowLendRec,
  type Command,
  type CommandSlot,
  type EngineConfig,
  type OrderRec,
  type RecordSink,
  type ResultRec,
  type TradeRec,
} from '../engine/bus/types.js';
import type { CollateralSpec, LendPoolSpec } from '../engine/bus/margin-params.js';
import { SLOT_BYTES, commandFromSlot, decodeRecord } from '../engine/bus/codec.js';

export const BENCH_ACCOUNTS = 1000;
export const BENCH_MARKET_ID = 0;
export const QUOTE_ASSET = 0;
export const BASE_ASSET = 1;
/** Where the book starts; prices random-walk with the trades from here. */
export const START_PRICE = 100_000;
/** Passive orders sit 1 … PASSIVE_WIDTH ticks behind the reference price. */
export const PASSIVE_WIDTH = 900;
export const TARGET_OPEN = 1000;
const QUOTE_DEPOSIT = 1e12;
const BASE_DEPOSIT = 1e12;

/** Which stream: exchange-core's mix, or the same with a third of the accounts on margin (header). */
export type StreamMix = 'spot' | 'margin';
/** A margin account's holding of its short asset: about a fifth of a typical order (1–100 lots at ~START_PRICE). */
const SHORT_BASE_UNITS = 20;
const SHORT_QUOTE_UNITS = 20 * START_PRICE;
/** The share of a margin account's new orders on the side that spends its short asset (asks when short SOL). */
const SHORT_SIDE_SHARE = 0.75;
/** What each pool supplier (accounts 1, 4, 7, …) lends of each asset at setup. */
const POOL_LEND_UNITS = 1e11;
/**
 * An idle account's deposit of each asset and an idle lender's lend (idleAccountCommands): small
 * enough that 100,000 idle accounts' deposits and the stream's own stay within the ledger's exact
 * range of an asset's total (2^53 units; a deposit past it is refused with AmountOutOfRange), so
 * every idle account is funded.
 */
const IDLE_DEPOSIT = 5e10;
const IDLE_LEND_UNITS = 1e10;
/**
 * SOL's decimals in the margin configuration: with 3, one SOL is 1,000 base units, so the index of
 * 100 USDC (INDEX_PRICE_E9) values a base unit at START_PRICE quote units, the book's own price
 * (at 9 decimals that index would pass the safe-integer range). Decimals change nothing else here.
 */
export const MARGIN_BASE_DECIMALS = 3;
export const INDEX_PRICE_E9 = 100_000_000_000;
/** 1 in the margin parameters' fixed point (10^-12). */
const FRACTION_ONE = 10n ** 12n;

/** What each main-stream row is, for counting operations. */
export const Op = { Gtc: 0, Ioc: 1, Cancel: 2, MoveCancel: 3, MovePlace: 4 } as const;

export function benchConfig(limits?: Partial<EngineConfig['limits']>): EngineConfig {
  return {
    assets: [
      { assetId: QUOTE_ASSET, symbol: 'USDC', decimals: 6 },
      { assetId: BASE_ASSET, symbol: 'SOL', decimals: 9 },
    ],
    markets: [{
      marketId: BENCH_MARKET_ID, symbol: 'SOL_USDC', baseAssetId: BASE_ASSET, quoteAssetId: QUOTE_ASSET,
      baseUnitsPerLot: 1, quoteUnitsPerTickLot: 1, minPriceTicks: 1, maxPriceTicks: 10_000_000, minQtyLots: 1, maxQtyLots: 1_000_000,
    }],
    limits: { maxAccounts: BENCH_ACCOUNTS, maxOpenOrdersPerAccount: 64, maxOrdersPerBook: 8192, maxPriceLevelsPerSide: 4096, ...limits },
    speedBumpUs: 0,
    orderIdKey: 0x2f7d397d,
  };
}

/** An open pool with step 1 and room far beyond the benchmark's borrows: rates 0 → 0.1 at 50 % → 1, max utilization 0.8. */
function benchPool(assetId: number): LendPoolSpec {
  return {
    assetId, state: 'Open',
    borrowRateMin: 0n, borrowRateOptimal: FRACTION_ONE / 10n, borrowRateMax: FRACTION_ONE, optimalUtilization: FRACTION_ONE / 2n,
    maxUtilization: (FRACTION_ONE * 8n) / 10n, throttleUtilizationThreshold: FRACTION_ONE, throttleUtilizationBound: FRACTION_ONE,
    throttleUpdateFraction: FRACTION_ONE, fee: FRACTION_ONE / 5n, openBorrowLendLimitUnits: 10n ** 15n, stepUnits: 1n,
  };
}

/** Identity haircut `weight`, IMF `imf`, MMF half of it (fractions of FRACTION_ONE). */
function benchCollateral(assetId: number, weight: bigint, imf: bigint): CollateralSpec {
  return { assetId, haircut: { kind: 'identity', weight }, imf: { base: imf, factor: 0n }, mmf: { base: imf / 2n, factor: 0n } };
}

/**
 * benchConfig with the margin family on: USDC (weight 1, IMF 0.1) and SOL (weight 0.5, IMF 0.2)
 * as collateral, a pool for each, SOL at MARGIN_BASE_DECIMALS. The market is the spot one, unbanded.
 */
export function benchMarginConfig(limits?: Partial<EngineConfig['limits']>): EngineConfig {
  const config = benchConfig(limits);
  config.assets = config.assets.map((a) => (a.assetId === BASE_ASSET ? { ...a, decimals: MARGIN_BASE_DECIMALS } : a));
  config.margin = {
    valuationAssetId: QUOTE_ASSET,
    collateral: [benchCollateral(QUOTE_ASSET, FRACTION_ONE, FRACTION_ONE / 10n), benchCollateral(BASE_ASSET, FRACTION_ONE / 2n, FRACTION_ONE / 5n)],
    lendPools: [benchPool(QUOTE_ASSET), benchPool(BASE_ASSET)],
  };
  return config;
}

/** Every third account trades on margin in the margin mix. */
export function isMarginAccount(accountId: number): boolean {
  return accountId % 3 === 0;
}

/** A margin account's short asset (SOL and USDC alternate) and whether it lent it at setup. */
export function marginProfile(accountId: number): { shortAsset: number; lends: boolean } {
  const k = accountId / 3;
  return { shortAsset: k % 2 === 0 ? BASE_ASSET : QUOTE_ASSET, lends: (k >> 1) % 2 === 1 };
}

/** Accounts 1, 4, 7, … supply the pools in the margin mix. */
function isPoolSupplier(accountId: number): boolean {
  return accountId % 3 === 1;
}

export interface EngineStream {
  mix: StreamMix;
  /** Untimed prefix: accounts, deposits, the initial resting orders (margin: index price and lends first). */
  setup: Command[];
  /** Main stream, one row per command. */
  count: number;
  kind: Uint8Array;
  side: Uint8Array;
  tif: Uint8Array;
  /** Place: the command flags (margin mix: autoBorrow and the others; spot: 0). */
  flags: Uint8Array;
  op: Uint8Array;
  accountId: Uint32Array;
  priceTicks: Float64Array;
  qtyLots: Float64Array;
  /** Cancel: the order to cancel. Place: the id the engine gives the new order. */
  orderId: Float64Array;
  /** 1 when the command produced at least one trade (as seen while generating). */
  traded: Uint8Array;
  /** 1 when the command borrowed (a place whose hold went beyond the balance). */
  borrowed: Uint8Array;
  ops: number;
  opCounts: number[];
  tradingCommands: number;
  trades: number;
  rejected: number;
  /** Places by margin accounts, and those of them that borrowed. */
  marginPlaces: number;
  borrowingCommands: number;
  /** BorrowLend records of the main stream, by BorrowLendEvent (Borrow, BorrowRepay, Lend, LendRedeem, …). */
  marginMoves: number[];
  /** Open orders and price levels (both sides) sampled every 1,000 ops. */
  meanOpen: number;
  meanLevels: number;
}

/** mulberry32: small, fast, seeded. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function accountKey(accountId: number): Uint8Array {
  const key = new Uint8Array(32);
  key[0] = 0xb5;
  key[1] = accountId & 0xff;
  key[2] = (accountId >>> 8) & 0xff;
  key[3] = (accountId >>> 16) & 0xff;
  return key;
}

/** The generator's commands, built field by field at their slot positions. */
export function baseCommand(): CommandSlot {
  const c = newCommandSlot();
  c.marketId = BENCH_MARKET_ID;
  c.orderType = OrderType.Limit;
  c.selfTradePrevention = SelfTradePrevention.RejectTaker;
  return c;
}

/** A command with the fields every main-stream row shares; decodeCommand fills the rest. */
export function newStreamCommand(): Command {
  return commandFromSlot(baseCommand());
}

/** Copies row `i` into the reused `cmd` (the kind and its payload's row fields: the cost of reading a ring slot). */
export function decodeCommand(s: EngineStream, i: number, cmd: Command): void {
  cmd.kind = s.kind[i];
  if (cmd.kind === CommandKind.PlaceOrder) {
    const p = cmd.placeOrder;
    p.side = s.side[i];
    p.timeInForce = s.tif[i];
    p.flags = s.flags[i];
    p.accountId = s.accountId[i];
    p.priceTicks = s.priceTicks[i];
    p.qtyLots = s.qtyLots[i];
  } else {
    const c = cmd.cancelOrder;
    c.accountId = s.accountId[i];
    c.orderId = s.orderId[i];
  }
}

function slotOf(kind: CommandKind, accountId: number, assetId: number, amountUnits: number): CommandSlot {
  const c = baseCommand();
  c.kind = kind;
  c.accountId = accountId;
  c.assetId = assetId;
  c.amountUnits = amountUnits;
  return c;
}

/** What `accountId` deposits of `assetId`: everything, except a margin account's short asset in the margin mix. */
function depositUnits(accountId: number, assetId: number, mix: StreamMix): number {
  const full = assetId === QUOTE_ASSET ? QUOTE_DEPOSIT : BASE_DEPOSIT;
  if (mix !== 'margin' || !isMarginAccount(accountId) || marginProfile(accountId).shortAsset !== assetId) return full;
  return assetId === QUOTE_ASSET ? SHORT_QUOTE_UNITS : SHORT_BASE_UNITS;
}

/** The lends accounts first..last make at setup in the margin mix (header): suppliers both assets, lending margin accounts their short asset. */
function lendCommands(first: number, last: number): CommandSlot[] {
  const out: CommandSlot[] = [];
  const lend = (accountId: number, assetId: number, units: number) => {
    const c = slotOf(CommandKind.BorrowLend, accountId, assetId, units);
    c.side = BorrowLendSide.Lend as number;
    out.push(c);
  };
  for (let a = first; a <= last; a++) {
    if (isPoolSupplier(a)) for (const assetId of [QUOTE_ASSET, BASE_ASSET]) lend(a, assetId, POOL_LEND_UNITS);
    if (isMarginAccount(a) && marginProfile(a).lends) {
      const asset = marginProfile(a).shortAsset;
      lend(a, asset, depositUnits(a, asset, 'margin'));
    }
  }
  return out;
}

/**
 * Accounts first..last created and funded (the mix's deposits); in the margin mix SOL's index is
 * set first (when first is 1) and the lends follow the deposits.
 */
export function setupCommands(accounts: number, mix: StreamMix = 'spot', first = 1): Command[] {
  const out: CommandSlot[] = [];
  if (mix === 'margin' && first === 1) {
    const index = slotOf(CommandKind.SetIndexPrice, 0, BASE_ASSET, IndexPriceSource.Operator);
    index.priceTicks = INDEX_PRICE_E9;
    out.push(index);
  }
  for (let a = first; a <= accounts; a++) {
    const c = slotOf(CommandKind.CreateAccount, 0, 0, 0);
    c.key = accountKey(a);
    out.push(c);
  }
  for (let a = first; a <= accounts; a++) {
    for (const assetId of [QUOTE_ASSET, BASE_ASSET]) out.push(slotOf(CommandKind.Deposit, a, assetId, depositUnits(a, assetId, mix)));
  }
  if (mix === 'margin') out.push(...lendCommands(first, accounts));
  return out.map((c) => commandFromSlot(c));
}

/**
 * Idle accounts first..last for the margin check's scale test: created, funded with both assets,
 * every tenth lending both and every tenth (offset 5) borrowing a little SOL, so the pools hold
 * positions of many accounts that never trade.
 */
export function idleAccountCommands(first: number, last: number): Command[] {
  const out: CommandSlot[] = [];
  for (let a = first; a <= last; a++) {
    const c = slotOf(CommandKind.CreateAccount, 0, 0, 0);
    c.key = accountKey(a);
    out.push(c);
  }
  for (let a = first; a <= last; a++) {
    out.push(slotOf(CommandKind.Deposit, a, QUOTE_ASSET, IDLE_DEPOSIT), slotOf(CommandKind.Deposit, a, BASE_ASSET, IDLE_DEPOSIT));
    if (a % 10 === 0) for (const assetId of [QUOTE_ASSET, BASE_ASSET]) {
      const lend = slotOf(CommandKind.BorrowLend, a, assetId, IDLE_LEND_UNITS);
      lend.side = BorrowLendSide.Lend as number;
      out.push(lend);
    }
    if (a % 10 === 5) {
      const borrow = slotOf(CommandKind.BorrowLend, a, BASE_ASSET, 1000);
      borrow.side = BorrowLendSide.Borrow as number;
      out.push(borrow);
    }
  }
  return out.map((c) => commandFromSlot(c));
}

/**
 * The margin check's probe (bench/engine-margin.bench.ts): an account holding USDC and no SOL, and
 * the three commands of one cycle: an ask of PROBE_LOTS far above the book with autoBorrow (its
 * hold borrows every lot, after the margin check), its cancel by client id, and the repayment of
 * the borrow (BorrowLend, which re-checks the account's liquidating state: a second margin summary).
 */
export const PROBE_LOTS = 100;

export function probeSetupCommands(accountId: number): Command[] {
  const create = slotOf(CommandKind.CreateAccount, 0, 0, 0);
  create.key = accountKey(accountId);
  return [create, slotOf(CommandKind.Deposit, accountId, QUOTE_ASSET, QUOTE_DEPOSIT)].map((c) => commandFromSlot(c));
}

export function probeCycleCommands(accountId: number): Command[] {
  const place = baseCommand();
  place.kind = CommandKind.PlaceOrder;
  place.accountId = accountId;
  place.side = Side.Ask;
  place.timeInForce = TimeInForce.GTC;
  place.priceTicks = 10 * START_PRICE;
  place.qtyLots = PROBE_LOTS;
  place.clientId = 1;
  place.flags = CommandFlag.AutoBorrow | CommandFlag.HasClientId;
  const cancel = baseCommand();
  cancel.kind = CommandKind.CancelOrder;
  cancel.accountId = accountId;
  cancel.clientId = 1;
  cancel.flags = CommandFlag.HasClientId;
  const repay = slotOf(CommandKind.BorrowLend, accountId, BASE_ASSET, PROBE_LOTS);
  repay.side = BorrowLendSide.Lend as number;
  return [place, cancel, repay].map((c) => commandFromSlot(c));
}

interface Live {
  side: number;
  accountId: number;
  remaining: number;
  priceTicks: number;
}

/** Watches the generating engine's records, decoded as written: open orders, trades, rejections, borrows. */
class TrackingSink implements RecordSink {
  readonly view = new DataView(new ArrayBuffer(SLOT_BYTES));
  readonly live = new Map<number, Live>();
  /** Dense list of open ids for uniform random picks (swap-remove). */
  readonly ids: number[] = [];
  private readonly pos = new Map<number, number>();
  lastTradePrice = START_PRICE;
  tradesThisCommand = 0;
  trades = 0;
  rejected = 0;
  borrowsThisCommand = 0;
  /** BorrowLend records by event. */
  readonly moves = [0, 0, 0, 0, 0, 0, 0];
  /** The id of the latest Accepted order record. */
  lastAccepted = 0;

  claim(): number {
    return 0;
  }
  written(at: number): void {
    const rec = decodeRecord(this.view, at);
    if (rec.type === RecordType.Result) this.result(rec);
    else if (rec.type === RecordType.Order) this.order(rec);
    else if (rec.type === RecordType.Trade) this.trade(rec);
    else if (rec.type === RecordType.BorrowLend) this.move(rec);
  }

  private result(rec: ResultRec): void {
    if (rec.code !== ResultCode.Ok) this.rejected++;
  }
  private order(rec: OrderRec): void {
    if (rec.event === OrderEvent.Accepted) this.lastAccepted = rec.orderId;
    const id = rec.orderId;
    const status = rec.status;
    if (status === OrderStatus.Filled || status === OrderStatus.Cancelled || status === OrderStatus.Expired) {
      this.remove(id);
      return;
    }
    const open = this.live.get(id);
    if (open !== undefined) {
      open.remaining = rec.qtyLots - rec.executedQtyLots;
    } else if ((rec.flags & HeaderFlag.Last) !== 0) {
      // The place's own answer while still open: it rests.
      this.live.set(id, { side: rec.side, accountId: rec.accountId, remaining: rec.qtyLots - rec.executedQtyLots, priceTicks: rec.priceTicks });
      this.pos.set(id, this.ids.length);
      this.ids.push(id);
    }
  }
  private trade(rec: TradeRec): void {
    this.tradesThisCommand++;
    this.trades++;
    this.lastTradePrice = rec.priceTicks;
  }
  private move(rec: BorrowLendRec): void {
    this.moves[rec.event]++;
    if (rec.event === BorrowLendEvent.Borrow) this.borrowsThisCommand++;
  }

  private remove(id: number): void {
    const p = this.pos.get(id);
    if (p === undefined) return;
    const last = this.ids.pop()!;
    if (last !== id) {
      this.ids[p] = last;
      this.pos.set(last, p);
    }
    this.pos.delete(id);
    this.live.delete(id);
  }
}

function emptyStream(mix: StreamMix, setup: Command[], ops: number): EngineStream {
  const capacity = Math.ceil(ops * 2) + 16;
  return {
    mix, setup, count: 0,
    kind: new Uint8Array(capacity), side: new Uint8Array(capacity), tif: new Uint8Array(capacity), flags: new Uint8Array(capacity),
    op: new Uint8Array(capacity), accountId: new Uint32Array(capacity), priceTicks: new Float64Array(capacity),
    qtyLots: new Float64Array(capacity), orderId: new Float64Array(capacity), traded: new Uint8Array(capacity), borrowed: new Uint8Array(capacity),
    ops, opCounts: [0, 0, 0, 0], tradingCommands: 0, trades: 0, rejected: 0, marginPlaces: 0, borrowingCommands: 0,
    marginMoves: [0, 0, 0, 0, 0, 0, 0], meanOpen: 0, meanLevels: 0,
  };
}

/** The generator's state: the private engine, what it saw, and the stream being written. */
class StreamGenerator {
  readonly random: () => number;
  readonly ex: Exchange;
  readonly sink = new TrackingSink();
  readonly s: EngineStream;
  private seq = 0;
  /** The command being built (slot fields) and the reused Command it is applied as. */
  readonly cmd = baseCommand();
  private readonly applied = commandFromSlot(this.cmd);

  constructor(seed: number, ops: number, config: EngineConfig, readonly mix: StreamMix) {
    this.random = prng(seed);
    this.ex = new Exchange(config);
    this.s = emptyStream(mix, setupCommands(BENCH_ACCOUNTS, mix), ops);
  }

  int(lo: number, hi: number): number {
    return lo + Math.floor(this.random() * (hi - lo + 1));
  }

  /** The flags of a place by `accountId` (header): 0 in the spot mix and for spot accounts. */
  orderFlags(accountId: number): number {
    if (this.mix !== 'margin' || !isMarginAccount(accountId)) return 0;
    let flags: number = CommandFlag.AutoBorrow;
    if (this.random() < 0.5) flags |= CommandFlag.AutoBorrowRepay;
    if (marginProfile(accountId).lends) {
      flags |= CommandFlag.AutoLendRedeem;
      if (this.random() < 0.25) flags |= CommandFlag.AutoLend;
    }
    return flags;
  }

  /** How often `accountId` bids: half the time, except a margin account, which mostly spends its short asset (SHORT_SIDE_SHARE). */
  bidChance(accountId: number): number {
    if (this.mix !== 'margin' || !isMarginAccount(accountId)) return 0.5;
    return marginProfile(accountId).shortAsset === QUOTE_ASSET ? SHORT_SIDE_SHARE : 1 - SHORT_SIDE_SHARE;
  }

  /** The setup, then the initial book: TARGET_OPEN passive orders, alternating sides. */
  applySetup(): void {
    const setup = this.s.setup;
    for (let i = 0; i < TARGET_OPEN; i++) {
      const c = baseCommand();
      c.kind = CommandKind.PlaceOrder;
      c.accountId = this.int(1, BENCH_ACCOUNTS);
      c.side = i % 2 === 0 ? Side.Bid : Side.Ask;
      c.timeInForce = TimeInForce.GTC;
      c.qtyLots = this.int(1, 100);
      const d = this.int(1, PASSIVE_WIDTH);
      c.priceTicks = c.side === Side.Bid ? START_PRICE - d : START_PRICE + d;
      c.flags = this.orderFlags(c.accountId);
      setup.push(commandFromSlot(c));
    }
    for (const c of setup) { this.seq++; this.ex.apply(c, this.seq, this.seq, this.sink); }
    if (this.sink.rejected !== 0) throw new Error(`stream setup: ${this.sink.rejected} commands rejected`);
    this.sink.moves.fill(0);
  }

  /** Applies the command being built and writes it as the next row. */
  emit(op: number): void {
    const { s, sink, cmd } = this;
    const i = s.count++;
    s.op[i] = op;
    s.kind[i] = cmd.kind;
    s.side[i] = cmd.side;
    s.tif[i] = cmd.timeInForce;
    s.flags[i] = cmd.kind === CommandKind.PlaceOrder ? cmd.flags : 0;
    s.accountId[i] = cmd.accountId;
    s.priceTicks[i] = cmd.priceTicks;
    s.qtyLots[i] = cmd.qtyLots;
    sink.tradesThisCommand = 0;
    sink.borrowsThisCommand = 0;
    const rejectedBefore = sink.rejected;
    sink.lastAccepted = 0;
    this.seq++;
    this.ex.apply(commandFromSlot(cmd, this.applied), this.seq, this.seq, sink);
    s.orderId[i] = cmd.kind === CommandKind.PlaceOrder ? sink.lastAccepted : cmd.orderId;
    if (sink.rejected !== rejectedBefore) s.rejected++;
    if (sink.tradesThisCommand > 0) {
      s.traded[i] = 1;
      s.tradingCommands++;
    }
    if (cmd.kind === CommandKind.PlaceOrder && this.mix === 'margin' && isMarginAccount(cmd.accountId)) s.marginPlaces++;
    if (sink.borrowsThisCommand > 0) {
      s.borrowed[i] = 1;
      s.borrowingCommands++;
    }
  }

  passivePrice(side: number): number {
    const d = this.int(1, PASSIVE_WIDTH);
    return side === Side.Bid ? Math.max(1, this.sink.lastTradePrice - d) : this.sink.lastTradePrice + d;
  }

  aggressivePrice(side: number): number {
    const d = this.int(1, 20);
    return side === Side.Bid ? this.sink.lastTradePrice + d : Math.max(1, this.sink.lastTradePrice - d);
  }

  /** GTC (9 %) or IOC (3 %). */
  place(roll: number): void {
    const { cmd, sink, s } = this;
    const ioc = roll >= 0.09 && sink.ids.length !== 0;
    cmd.kind = CommandKind.PlaceOrder;
    cmd.accountId = this.int(1, BENCH_ACCOUNTS);
    cmd.side = this.random() < this.bidChance(cmd.accountId) ? Side.Bid : Side.Ask;
    cmd.timeInForce = ioc ? TimeInForce.IOC : TimeInForce.GTC;
    // Cross more often when the book is over its target size, less when under. Takers are
    // smaller than makers (1–30 lots against 1–100), so most fills leave the maker resting.
    const crossChance = Math.min(0.9, Math.max(0.02, 0.5 + (sink.ids.length - TARGET_OPEN) / 200));
    const cross = ioc || this.random() < crossChance;
    cmd.qtyLots = cross ? this.int(1, 30) : this.int(1, 100);
    cmd.priceTicks = cross ? this.aggressivePrice(cmd.side) : this.passivePrice(cmd.side);
    cmd.flags = this.orderFlags(cmd.accountId);
    this.emit(ioc ? Op.Ioc : Op.Gtc);
    s.opCounts[ioc ? Op.Ioc : Op.Gtc]++;
  }

  /** A random open order, cancelled (6 %) or moved (82 %: cancel, then the rest placed at a new price). */
  cancelOrMove(move: boolean): void {
    const { cmd, sink, s } = this;
    const id = sink.ids[this.int(0, sink.ids.length - 1)];
    const { side, accountId, remaining } = sink.live.get(id)!;
    cmd.kind = CommandKind.CancelOrder;
    cmd.accountId = accountId;
    cmd.orderId = id;
    // A cancel's flags name its target by client id: none here, whatever the last place carried.
    cmd.flags = 0;
    this.emit(move ? Op.MoveCancel : Op.Cancel);
    if (!move) {
      s.opCounts[Op.Cancel]++;
      return;
    }
    cmd.kind = CommandKind.PlaceOrder;
    cmd.orderId = 0;
    cmd.side = side;
    cmd.timeInForce = TimeInForce.GTC;
    cmd.qtyLots = remaining;
    cmd.priceTicks = this.random() < 0.02 ? this.aggressivePrice(side) : this.passivePrice(side);
    cmd.flags = this.orderFlags(accountId);
    this.emit(Op.MovePlace);
    s.opCounts[3]++;
  }
}

/** Open orders and their price levels (both sides) as the generator sees them. */
function bookSample(sink: TrackingSink): { open: number; levels: number } {
  const prices = new Set<number>();
  for (const v of sink.live.values()) prices.add(v.side * 1e9 + v.priceTicks);
  return { open: sink.ids.length, levels: prices.size };
}

/**
 * Generates the setup and `ops` operations (≈ 1.82 × ops commands). Deterministic in `seed`.
 * `config` must be the one the stream will be replayed on (ids and outcomes depend on it): for
 * the margin mix, benchMarginConfig() or one like it.
 */
export function generateStream(seed: number, ops: number, config: EngineConfig = benchConfig(), mix: StreamMix = 'spot'): EngineStream {
  const g = new StreamGenerator(seed, ops, config, mix);
  g.applySetup();
  let openSum = 0;
  let levelSum = 0;
  let samples = 0;
  for (let n = 0; n < ops; n++) {
    if (n % 1000 === 0) {
      const sample = bookSample(g.sink);
      openSum += sample.open;
      levelSum += sample.levels;
      samples++;
    }
    const roll = g.random();
    g.cmd.orderId = 0;
    if (roll < 0.12 || g.sink.ids.length === 0) g.place(roll);
    else g.cancelOrMove(roll >= 0.18);
  }
  const s = g.s;
  s.trades = g.sink.trades;
  s.marginMoves = [...g.sink.moves];
  s.meanOpen = openSum / samples;
  s.meanLevels = levelSum / samples;
  return s;
}

/** Commands a stream row range [0, rows) holds, as operations (a move's two rows are one op). */
export function opsInRows(s: EngineStream, rows: number): number {
  let ops = 0;
  for (let i = 0; i < rows; i++) if (s.op[i] !== Op.MovePlace) ops++;
  return ops;
}
