// Test harness for the engine core: builds commands, applies them with increasing seq and engine
// time, collects copies of every output record, and after EVERY command runs the engine's
// invariant checker and the conservation check (for each asset, the sum of all balances equals
// what was deposited, counted independently here from the Ok results of Deposit commands).

import { Exchange } from '../../engine/core/exchange.js';
import type { EngineState } from '../../engine/core/state.js';
import { exportSnapshot, importSnapshot } from '../../engine/core/snapshot.js';
import {
  CommandFlag,
  CommandKind,
  OrderType,
  RecordType,
  ResultCode,
  SelfTradePrevention,
  Side,
  TimeInForce,
  newCommandSlot,
  type CommandSlot,
  type EngineConfig,
  type DepthRec,
  type OrderRec,
  type OutputRec,
  type ResultRec,
  type TradeRec,
  type RecordSink,
} from '../../engine/bus/types.js';
import { SLOT_BYTES, commandFromSlot, decodeRecord } from '../../engine/bus/codec.js';

/** Commands are built here by slot position (CommandSlot) and applied as the codec reads them. */
type Command = CommandSlot;

export type Rec = OutputRec;

export const QUOTE = 0; // asset id of the quote asset (USDC-like)
export const BASE = 1; // base asset of market 0
export const OTHER = 2; // base asset of market 1
export const M0 = 0;
export const M1 = 1;
export const ALL_MARKETS = 0xffff;
/** Default grid: one lot is 10 base units, one tick × one lot is 3 quote units. */
export const BASE_PER_LOT = 10;
export const QUOTE_PER_TICK_LOT = 3;

/** A small two-market configuration; odd unit sizes so that mixing units shows. */
export function testConfig(overrides: Omit<Partial<EngineConfig>, 'limits'> & { limits?: Partial<EngineConfig['limits']> } = {}): EngineConfig {
  const market = (marketId: number, baseAssetId: number, symbol: string) => ({
    marketId,
    symbol,
    baseAssetId,
    quoteAssetId: QUOTE,
    baseUnitsPerLot: BASE_PER_LOT,
    quoteUnitsPerTickLot: QUOTE_PER_TICK_LOT,
    minPriceTicks: 1,
    maxPriceTicks: 1000,
    minQtyLots: 1,
    maxQtyLots: 1000,
  });
  return {
    assets: [
      { assetId: QUOTE, symbol: 'USDC', decimals: 6 },
      { assetId: BASE, symbol: 'SOL', decimals: 9 },
      { assetId: OTHER, symbol: 'BTC', decimals: 8 },
    ],
    markets: [market(M0, BASE, 'SOL_USDC'), market(M1, OTHER, 'BTC_USDC')],
    speedBumpUs: 0,
    orderIdKey: 0x2f7d397d,
    ...overrides,
    limits: {
      maxAccounts: 16,
      maxOpenOrdersPerAccount: 32,
      maxOrdersPerBook: 64,
      maxPriceLevelsPerSide: 32,
      ...(overrides.limits ?? {}),
    },
  };
}

/** A 32-byte key derived from a small seed (never all zeros). */
export function keyOf(seed: number): Uint8Array {
  const key = new Uint8Array(32);
  for (let i = 0; i < 32; i++) key[i] = (seed * 131 + i * 7 + 1) & 0xff;
  key[0] = seed & 0xff;
  key[1] = (seed >>> 8) & 0xff;
  key[31] = 0xa5;
  return key;
}

export interface PlaceOptions {
  market?: number;
  tif?: TimeInForce;
  postOnly?: boolean;
  clientId?: number;
  stp?: SelfTradePrevention;
  orderType?: OrderType;
  flags?: number;
}

/** Command builders: each returns the fields that differ from an empty command. */
export const cmd = {
  createAccount(seed: number): Partial<Command> {
    return { kind: CommandKind.CreateAccount, key: keyOf(seed) };
  },
  deposit(accountId: number, assetId: number, amountUnits: number): Partial<Command> {
    return { kind: CommandKind.Deposit, accountId, assetId, amountUnits };
  },
  place(accountId: number, side: 'bid' | 'ask', priceTicks: number, qtyLots: number, o: PlaceOptions = {}): Partial<Command> {
    let flags = o.flags ?? 0;
    if (o.postOnly) flags |= CommandFlag.PostOnly;
    if (o.clientId !== undefined) flags |= CommandFlag.HasClientId;
    return {
      kind: CommandKind.PlaceOrder,
      accountId,
      marketId: o.market ?? M0,
      side: side === 'bid' ? Side.Bid : Side.Ask,
      priceTicks,
      qtyLots,
      orderType: o.orderType ?? OrderType.Limit,
      timeInForce: o.tif ?? TimeInForce.GTC,
      selfTradePrevention: o.stp ?? SelfTradePrevention.RejectTaker,
      clientId: o.clientId ?? 0,
      flags,
    };
  },
  /** A market order by quantity (`{ qtyLots }`) or by quote quantity (`{ quoteQtyUnits }`). */
  market(accountId: number, side: 'bid' | 'ask', size: { qtyLots?: number; quoteQtyUnits?: number }, o: PlaceOptions = {}): Partial<Command> {
    return {
      ...cmd.place(accountId, side, 0, size.qtyLots ?? 0, { ...o, orderType: OrderType.Market }),
      quoteQtyUnits: size.quoteQtyUnits ?? 0,
    };
  },
  cancel(accountId: number, orderId: number, market = M0): Partial<Command> {
    return { kind: CommandKind.CancelOrder, accountId, marketId: market, orderId };
  },
  cancelByClientId(accountId: number, clientId: number, market = M0): Partial<Command> {
    return { kind: CommandKind.CancelOrder, accountId, marketId: market, clientId, flags: CommandFlag.HasClientId };
  },
  cancelAll(accountId: number, market = M0): Partial<Command> {
    return { kind: CommandKind.CancelAll, accountId, marketId: market };
  },
  tick(): Partial<Command> {
    return { kind: CommandKind.Tick, frontId: 0xffff, requestId: 0 };
  },
  queryBalances(accountId: number): Partial<Command> {
    return { kind: CommandKind.QueryBalances, accountId };
  },
  queryOpenOrders(accountId: number, market = M0): Partial<Command> {
    return { kind: CommandKind.QueryOpenOrders, accountId, marketId: market };
  },
  queryOrder(accountId: number, orderId: number, market = M0): Partial<Command> {
    return { kind: CommandKind.QueryOrder, accountId, marketId: market, orderId };
  },
  queryOrderByClientId(accountId: number, clientId: number, market = M0): Partial<Command> {
    return { kind: CommandKind.QueryOrder, accountId, marketId: market, clientId, flags: CommandFlag.HasClientId };
  },
  querySnapshot(): Partial<Command> {
    return { kind: CommandKind.QuerySnapshot };
  },
  setMarketState(marketId: number, state: number): Partial<Command> {
    return { kind: CommandKind.SetMarketState, marketId, amountUnits: state };
  },
  setFeeRates(accountId: number, makerFeeBps: number, takerFeeBps: number): Partial<Command> {
    return { kind: CommandKind.SetFeeRates, accountId, amountUnits: makerFeeBps, quoteQtyUnits: takerFeeBps };
  },
  queryFeeRates(accountId: number): Partial<Command> {
    return { kind: CommandKind.QueryFeeRates, accountId };
  },
  /**
   * An account's settings (margin): the automation flags named in `set` change to their values,
   * and the leverage limit (hundredths) when given; `word` overrides the settings word.
   */
  updateAccountSettings(accountId: number, set: AccountSettingsChange, word?: number): Partial<Command> {
    let change = 0;
    let values = 0;
    for (const [name, bit] of [['autoBorrowSettlements', 1], ['autoLend', 2], ['autoRepayBorrows', 4]] as const) {
      if (set[name] === undefined) continue;
      change |= bit;
      if (set[name]) values |= bit;
    }
    if (set.leverageLimitHundredths !== undefined) change |= 8;
    return { kind: CommandKind.UpdateAccountSettings, accountId, quoteQtyUnits: word ?? change | (values << 8), amountUnits: set.leverageLimitHundredths ?? 0 };
  },
  queryAccountSettings(accountId: number): Partial<Command> {
    return { kind: CommandKind.QueryAccountSettings, accountId };
  },
  /** The whole exchange's state: 0 Ok, 1 Maintenance (other values are refused). */
  setSystemState(state: number): Partial<Command> {
    return { kind: CommandKind.SetSystemState, amountUnits: state };
  },
  /** An asset's index price in 10^-9 USDC per whole unit; source 1 Operator, 2 Feed, 3 Default. */
  setIndexPrice(assetId: number, priceE9: number, source = 1): Partial<Command> {
    return { kind: CommandKind.SetIndexPrice, assetId, priceTicks: priceE9, amountUnits: source };
  },
  queryIndexPrices(): Partial<Command> {
    return { kind: CommandKind.QueryIndexPrices };
  },
  /** Every perpetual's mark, index and running funding estimate. */
  queryMarkPrices(): Partial<Command> {
    return { kind: CommandKind.QueryMarkPrices };
  },
  /** Names the account a backstop liquidity provider. */
  setBackstopProvider(accountId: number): Partial<Command> {
    return { kind: CommandKind.SetBackstopProvider, accountId };
  },
  /** Takes the account off the backstop liquidity providers. */
  removeBackstopProvider(accountId: number): Partial<Command> {
    return { kind: CommandKind.RemoveBackstopProvider, accountId };
  },
  queryBackstop(): Partial<Command> {
    return { kind: CommandKind.QueryBackstop };
  },
};

export interface AccountSettingsChange {
  autoBorrowSettlements?: boolean;
  autoLend?: boolean;
  autoRepayBorrows?: boolean;
  leverageLimitHundredths?: number;
}

/** A sink that decodes every record written into it back to an object, in order. */
export class CollectingSink implements RecordSink {
  records: Rec[] = [];
  readonly view = new DataView(new ArrayBuffer(SLOT_BYTES));
  claim(): number {
    return 0;
  }
  written(offset: number): void {
    this.records.push(decodeRecord(this.view, offset));
  }
}

export const FRONT = 3;

/** A command with the seq and engine time it was applied at. */
export interface Stamped {
  command: Command;
  seq: number;
  timeUs: number;
}

/** Applies a recorded stream to a fresh engine; returns it and every record it wrote. */
export function replay(config: EngineConfig, stream: Stamped[]): { exchange: Exchange; records: Rec[] } {
  const exchange = new Exchange(config);
  const sink = new CollectingSink();
  for (const { command, seq, timeUs } of stream) exchange.apply(commandFromSlot(command), seq, timeUs, sink);
  return { exchange, records: sink.records };
}

/** The engine's state behind an Exchange, for tests that read or plant it directly. */
export function stateOf(exchange: Exchange): EngineState {
  return (exchange as unknown as { s: EngineState }).s;
}

export class EngineHarness {
  /** The engine under test; a snapshot round trip replaces it with the restored copy. */
  exchange: Exchange;
  readonly config: EngineConfig;
  seq = 0;
  timeUs = 1_000_000_000;
  private requestId = 0;
  /** Deposited (and paid into the insurance fund) minus withdrawn units per asset id, counted from Ok results. */
  readonly deposited = new Map<number, number>();
  /** Every record of every apply, in order. */
  readonly log: Rec[] = [];
  /** Every command applied, as stamped (for replay into another engine). */
  readonly stream: Stamped[] = [];
  /** Run the checks after each command (the randomized test keeps them on; a benchmark would not). */
  checks = true;
  /**
   * Whether the engine writes orders' events in their answers (engine/core/output.ts; the
   * default); off, it writes them as engines of journal format 4 did. Kept across restarts.
   */
  get eventsInAnswers(): boolean {
    return this.eventsInAnswersOn;
  }
  set eventsInAnswers(on: boolean) {
    this.eventsInAnswersOn = on;
    this.exchange.setEventsInAnswers(on);
  }
  private eventsInAnswersOn = true;
  /**
   * Whether a taker's match ends in one summary (engine/core/output.ts takerSummary; the
   * default); off, its balances and fills are written after each of its fills, as engines of
   * journal format 5 and before did. Kept across restarts.
   */
  get takerSummary(): boolean {
    return this.takerSummaryOn;
  }
  set takerSummary(on: boolean) {
    this.takerSummaryOn = on;
    this.exchange.setTakerSummary(on);
  }
  private takerSummaryOn = true;
  /** How many snapshot round trips (restartFromSnapshot) this harness has made. */
  snapshotRestarts = 0;

  constructor(config: EngineConfig = testConfig()) {
    this.config = config;
    this.exchange = new Exchange(config);
  }

  /** Applies one command at `timeUs` (default: the current time) and returns its records. */
  apply(fields: Partial<Command>, timeUs = this.timeUs): Rec[] {
    const command = { ...newCommandSlot(), frontId: FRONT, requestId: ++this.requestId, ...fields };
    const isQuery = command.kind >= 64;
    if (!isQuery) this.seq++;
    this.timeUs = Math.max(this.timeUs, timeUs);
    const sink = new CollectingSink();
    this.stream.push({ command, seq: this.seq, timeUs: this.timeUs });
    this.exchange.apply(commandFromSlot(command), this.seq, this.timeUs, sink);
    this.log.push(...sink.records);
    // An operator's payment into the insurance fund enters the exchange as a deposit does.
    if (command.kind === CommandKind.Deposit || command.kind === CommandKind.DepositInsurance) {
      const result = sink.records.find((r) => r.type === RecordType.Result && r.requestId === command.requestId);
      if (result && (result as ResultRec).code === ResultCode.Ok) {
        this.deposited.set(command.assetId, (this.deposited.get(command.assetId) ?? 0) + command.amountUnits);
      }
    }
    // A withdrawal leaves the exchange, so conservation counts deposits minus withdrawals.
    if (command.kind === CommandKind.Withdraw) {
      const result = sink.records.find((r) => r.type === RecordType.Result && r.requestId === command.requestId);
      if (result && (result as ResultRec).code === ResultCode.Ok) {
        this.deposited.set(command.assetId, (this.deposited.get(command.assetId) ?? 0) - command.amountUnits);
      }
    }
    if (this.checks) this.check();
    return sink.records;
  }

  /**
   * A restart from a snapshot: exports the engine's state, imports it into a fresh engine, checks
   * that the copy holds its invariants, has the same state hash and exports the same bytes, draws
   * its trigger bands as the engine worker does, and continues on the copy from here on. The stamped stream is unchanged, so replaying it into one
   * engine must still give the same records and state.
   */
  restartFromSnapshot(): void {
    const bytes = exportSnapshot(this.exchange);
    const restored = new Exchange(this.config);
    importSnapshot(restored, bytes);
    restored.validateInvariants();
    if (restored.stateHash() !== this.exchange.stateHash()) throw new Error(`state hash differs after a snapshot round trip at seq ${this.seq}`);
    if (!Buffer.from(exportSnapshot(restored)).equals(Buffer.from(bytes))) throw new Error(`snapshot of the restored engine differs at seq ${this.seq}`);
    // As the engine worker does after its recovery: derived, no state and no record.
    restored.drawTriggerBands();
    if (restored.stateHash() !== this.exchange.stateHash()) throw new Error(`drawing the trigger bands changed the state hash at seq ${this.seq}`);
    restored.setEventsInAnswers(this.eventsInAnswers);
    restored.setTakerSummary(this.takerSummary);
    this.exchange = restored;
    this.snapshotRestarts++;
  }

  /** Invariants plus conservation of every configured asset. */
  check(): void {
    this.exchange.validateInvariants();
    for (const asset of this.config.assets) {
      const expected = this.deposited.get(asset.assetId) ?? 0;
      const total = this.exchange.totalUnits(asset.assetId);
      if (total !== expected) throw new Error(`asset ${asset.symbol} not conserved: ${total} held, ${expected} deposited`);
    }
  }

  /** The last request id used (the one of the latest apply). */
  lastRequestId(): number {
    return this.requestId;
  }

  createAccount(seed: number): number {
    const result = resultOf(this.apply(cmd.createAccount(seed)));
    if (result.code !== ResultCode.Ok) throw new Error(`createAccount failed with ${ResultCode[result.code]}`);
    return result.value;
  }

  /** Creates `count` accounts, funding each with the given amounts (asset id → units). */
  fundedAccounts(count: number, amounts: Record<number, number>): number[] {
    const ids: number[] = [];
    for (let i = 1; i <= count; i++) {
      const accountId = this.createAccount(i);
      for (const [assetId, amount] of Object.entries(amounts)) this.apply(cmd.deposit(accountId, Number(assetId), amount));
      ids.push(accountId);
    }
    return ids;
  }

  /** [available, locked] per asset id, read through QueryBalances. */
  balances(accountId: number): Map<number, [number, number]> {
    const map = new Map<number, [number, number]>();
    for (const r of this.apply(cmd.queryBalances(accountId))) {
      if (r.type === RecordType.Balance) map.set(r.assetId, [r.availableUnits, r.lockedUnits]);
    }
    return map;
  }

  balance(accountId: number, assetId: number): [number, number] {
    const value = this.balances(accountId).get(assetId);
    if (!value) throw new Error(`no balance for account ${accountId} asset ${assetId}`);
    return value;
  }

  /** The aggregated book of a market through QuerySnapshot: [price, qty] best first. */
  book(marketId = M0): { bids: [number, number][]; asks: [number, number][] } {
    const bids: [number, number][] = [];
    const asks: [number, number][] = [];
    for (const r of this.apply(cmd.querySnapshot())) {
      if (r.type === RecordType.Depth && r.marketId === marketId) (r.side === Side.Bid ? bids : asks).push([r.priceTicks, r.qtyLots]);
    }
    return { bids, asks };
  }

  openOrders(accountId: number, marketId = M0): OrderRec[] {
    return this.apply(cmd.queryOpenOrders(accountId, marketId)).filter((r): r is OrderRec & { type: RecordType.Order } => r.type === RecordType.Order);
  }
}

/** The single result record of a list (throws when there is not exactly one). */
export function resultOf(records: Rec[]): ResultRec {
  const results = records.filter((r) => r.type === RecordType.Result);
  if (results.length !== 1) throw new Error(`expected one result record, got ${results.length}`);
  return results[0] as ResultRec;
}

/** The addressed order record flagged Last (the response to a place or cancel), if any. */
export function responseOf(records: Rec[], requestId: number): OrderRec | undefined {
  return records.find((r): r is OrderRec & { type: RecordType.Order } => r.type === RecordType.Order && r.requestId === requestId && r.frontId !== 0xffff && (r.flags & 1) === 1);
}

export function tradesOf(records: Rec[]): TradeRec[] {
  return records.filter((r): r is TradeRec & { type: RecordType.Trade } => r.type === RecordType.Trade);
}

export function depthsOf(records: Rec[]): DepthRec[] {
  return records.filter((r): r is DepthRec & { type: RecordType.Depth } => r.type === RecordType.Depth);
}

export function ordersOf(records: Rec[]): OrderRec[] {
  return records.filter((r): r is OrderRec & { type: RecordType.Order } => r.type === RecordType.Order);
}

/** A small deterministic PRNG (mulberry32) for seeded randomized tests. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A random integer in [low, high]. */
export function randomInt(random: () => number, low: number, high: number): number {
  return low + Math.floor(random() * (high - low + 1));
}
