// The command stream of the engine benchmark: a seeded copy of exchange-core's published mix.
//
//   generateStream(seed, ops)
//     │  drives a private Exchange (untimed) and watches its records, so every cancel and move
//     │  names an order that is really open and every place knows the id the engine will give it
//     ▼
//   EngineStream  setup: Command objects (accounts, deposits, ~1,000 resting orders)
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
// puts ~1,000 orders on ~750 price levels. What is measured is done by bench/engine.bench.ts;
// this file only builds and checks the stream (test/bench/engine-bench-stream.test.ts checks the mix).

import { Exchange } from '../engine/core/exchange.js';
import {
  CommandKind,
  HeaderFlag,
  OrderEvent,
  OrderStatus,
  OrderType,
  RecordType,
  ResultCode,
  SelfTradePrevention,
  Side,
  TimeInForce,
  newCommandSlot,
  type Command,
  type CommandSlot,
  type EngineConfig,
  type OrderRec,
  type RecordSink,
  type ResultRec,
  type TradeRec,
} from '../engine/bus/types.js';
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

export interface EngineStream {
  /** Untimed prefix: accounts, deposits, the initial resting orders. */
  setup: Command[];
  /** Main stream, one row per command. */
  count: number;
  kind: Uint8Array;
  side: Uint8Array;
  tif: Uint8Array;
  op: Uint8Array;
  accountId: Uint32Array;
  priceTicks: Float64Array;
  qtyLots: Float64Array;
  /** Cancel: the order to cancel. Place: the id the engine gives the new order. */
  orderId: Float64Array;
  /** 1 when the command produced at least one trade (as seen while generating). */
  traded: Uint8Array;
  ops: number;
  opCounts: number[];
  tradingCommands: number;
  trades: number;
  rejected: number;
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
    p.accountId = s.accountId[i];
    p.priceTicks = s.priceTicks[i];
    p.qtyLots = s.qtyLots[i];
  } else {
    const c = cmd.cancelOrder;
    c.accountId = s.accountId[i];
    c.orderId = s.orderId[i];
  }
}

export function setupCommands(accounts: number): Command[] {
  const out: CommandSlot[] = [];
  for (let a = 1; a <= accounts; a++) {
    const c = baseCommand();
    c.kind = CommandKind.CreateAccount;
    c.key = accountKey(a);
    out.push(c);
  }
  for (let a = 1; a <= accounts; a++) {
    for (const [assetId, amount] of [[QUOTE_ASSET, QUOTE_DEPOSIT], [BASE_ASSET, BASE_DEPOSIT]]) {
      const c = baseCommand();
      c.kind = CommandKind.Deposit;
      c.accountId = a;
      c.assetId = assetId;
      c.amountUnits = amount;
      out.push(c);
    }
  }
  return out.map((c) => commandFromSlot(c));
}

interface Live {
  side: number;
  accountId: number;
  remaining: number;
  priceTicks: number;
}

/** Watches the generating engine's records, decoded as written: open orders, trades, rejections. */
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

/**
 * Generates the setup and `ops` operations (≈ 1.82 × ops commands). Deterministic in `seed`.
 * `config` must be the one the stream will be replayed on (ids and outcomes depend on it).
 */
export function generateStream(seed: number, ops: number, config: EngineConfig = benchConfig()): EngineStream {
  const random = prng(seed);
  const int = (lo: number, hi: number): number => lo + Math.floor(random() * (hi - lo + 1));
  const ex = new Exchange(config);
  const sink = new TrackingSink();
  let seq = 0;
  const setup = setupCommands(BENCH_ACCOUNTS);
  // Initial book: TARGET_OPEN passive orders, alternating sides.
  for (let i = 0; i < TARGET_OPEN; i++) {
    const c = baseCommand();
    c.kind = CommandKind.PlaceOrder;
    c.accountId = int(1, BENCH_ACCOUNTS);
    c.side = i % 2 === 0 ? Side.Bid : Side.Ask;
    c.timeInForce = TimeInForce.GTC;
    c.qtyLots = int(1, 100);
    const d = int(1, PASSIVE_WIDTH);
    c.priceTicks = c.side === Side.Bid ? START_PRICE - d : START_PRICE + d;
    setup.push(commandFromSlot(c));
  }
  for (const c of setup) ex.apply(c, ++seq, seq, sink);
  if (sink.rejected !== 0) throw new Error(`stream setup: ${sink.rejected} commands rejected`);

  const capacity = Math.ceil(ops * 2) + 16;
  const s: EngineStream = {
    setup, count: 0,
    kind: new Uint8Array(capacity), side: new Uint8Array(capacity), tif: new Uint8Array(capacity), op: new Uint8Array(capacity),
    accountId: new Uint32Array(capacity), priceTicks: new Float64Array(capacity), qtyLots: new Float64Array(capacity),
    orderId: new Float64Array(capacity), traded: new Uint8Array(capacity),
    ops, opCounts: [0, 0, 0, 0], tradingCommands: 0, trades: 0, rejected: 0, meanOpen: 0, meanLevels: 0,
  };
  // The id of each place is read from the generating engine's Accepted record, which keeps this
  // file independent of how ids are made.
  const cmd = baseCommand();
  const applied = commandFromSlot(cmd);
  const emit = (op: number): void => {
    const i = s.count++;
    s.op[i] = op;
    s.kind[i] = cmd.kind;
    s.side[i] = cmd.side;
    s.tif[i] = cmd.timeInForce;
    s.accountId[i] = cmd.accountId;
    s.priceTicks[i] = cmd.priceTicks;
    s.qtyLots[i] = cmd.qtyLots;
    sink.tradesThisCommand = 0;
    const rejectedBefore = sink.rejected;
    sink.lastAccepted = 0;
    ex.apply(commandFromSlot(cmd, applied), ++seq, seq, sink);
    s.orderId[i] = cmd.kind === CommandKind.PlaceOrder ? sink.lastAccepted : cmd.orderId;
    if (sink.rejected !== rejectedBefore) s.rejected++;
    if (sink.tradesThisCommand > 0) {
      s.traded[i] = 1;
      s.tradingCommands++;
    }
  };
  const passivePrice = (side: number): number => {
    const d = int(1, PASSIVE_WIDTH);
    return side === Side.Bid ? Math.max(1, sink.lastTradePrice - d) : sink.lastTradePrice + d;
  };
  const aggressivePrice = (side: number): number => {
    const d = int(1, 20);
    return side === Side.Bid ? sink.lastTradePrice + d : Math.max(1, sink.lastTradePrice - d);
  };
  let openSum = 0;
  let levelSum = 0;
  let samples = 0;
  for (let n = 0; n < ops; n++) {
    if (n % 1000 === 0) {
      openSum += sink.ids.length;
      const prices = new Set<number>();
      for (const v of sink.live.values()) prices.add(v.side * 1e9 + v.priceTicks);
      levelSum += prices.size;
      samples++;
    }
    const roll = random();
    cmd.orderId = 0;
    if (roll < 0.12 || sink.ids.length === 0) {
      // GTC (9 %) or IOC (3 %).
      const ioc = roll >= 0.09 && sink.ids.length !== 0;
      cmd.kind = CommandKind.PlaceOrder;
      cmd.accountId = int(1, BENCH_ACCOUNTS);
      cmd.side = random() < 0.5 ? Side.Bid : Side.Ask;
      cmd.timeInForce = ioc ? TimeInForce.IOC : TimeInForce.GTC;
      // Cross more often when the book is over its target size, less when under. Takers are
      // smaller than makers (1–30 lots against 1–100), so most fills leave the maker resting.
      const crossChance = Math.min(0.9, Math.max(0.02, 0.5 + (sink.ids.length - TARGET_OPEN) / 200));
      const cross = ioc || random() < crossChance;
      cmd.qtyLots = cross ? int(1, 30) : int(1, 100);
      cmd.priceTicks = cross ? aggressivePrice(cmd.side) : passivePrice(cmd.side);
      emit(ioc ? Op.Ioc : Op.Gtc);
      s.opCounts[ioc ? Op.Ioc : Op.Gtc]++;
    } else if (roll < 0.18) {
      const id = sink.ids[int(0, sink.ids.length - 1)];
      const o = sink.live.get(id)!;
      cmd.kind = CommandKind.CancelOrder;
      cmd.accountId = o.accountId;
      cmd.orderId = id;
      emit(Op.Cancel);
      s.opCounts[Op.Cancel]++;
    } else {
      const id = sink.ids[int(0, sink.ids.length - 1)];
      const o = sink.live.get(id)!;
      const { side, accountId, remaining } = o;
      cmd.kind = CommandKind.CancelOrder;
      cmd.accountId = accountId;
      cmd.orderId = id;
      emit(Op.MoveCancel);
      cmd.kind = CommandKind.PlaceOrder;
      cmd.orderId = 0;
      cmd.side = side;
      cmd.timeInForce = TimeInForce.GTC;
      cmd.qtyLots = remaining;
      cmd.priceTicks = random() < 0.02 ? aggressivePrice(side) : passivePrice(side);
      emit(Op.MovePlace);
      s.opCounts[3]++;
    }
  }
  s.trades = sink.trades;
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
