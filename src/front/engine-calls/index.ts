// The one table of engine calls: every command a front thread sends the engine is built here,
// from typed parameters, and answered here, as a typed value or a mapped error. A route parses
// and validates its input, calls one method, and formats the answer; it never fills a command
// slot, names a command kind or a record type, or decodes a record.
//
// Each call takes a Reply first. `replyTo(ctx, ok)` makes the usual one: errors (the engine's
// result codes, and a full inbound ring or too many requests in flight, both 503) are sent to the
// client in one place, and `ok` formats the success. A caller that must collect errors instead
// (the batch route, the withdrawal's undo) gives its own Reply. Every method returns whether the
// command was submitted; when it was not, the Reply has already been told why.

import { AccountSettingFlag, CommandFlag, CommandKind, RecordType, ResultCode, type BorrowLendSide, type Command, type IndexPriceSource, type OrderBookState, type Side, type SystemState } from '../../../engine/bus/types.js';
import { readResult } from '../../../engine/bus/codec.js';
import { Errors, apiError } from '../../errors.js';
import { sendError, type RequestContext } from '../http.js';
import { scratch, submitError, type FrontContext } from '../context.js';
import type { EngineLink, PendingRequest, SubmitResult } from '../engine-link.js';
import type { OrderTarget, ParsedOrder } from '../../wire/parse-order.js';
import {
  accountSettingsAnswer, balancesAnswer, borrowLendPositionsAnswer, collateralAnswer, feeRatesAnswer, indexPricesAnswer, lendPoolsAnswer, orderAnswer, orderListAnswer, resultAnswer,
  type Accepted, type AccountSettingsView, type Balances, type BorrowLendView, type Collateral, type FeeRates, type IndexPrices, type LendPoolView, type OrderView, type Reply,
} from './answers.js';
import type { MarketInfo } from '../../config.js';

export type {
  Accepted, AccountSettingsView, AssetCollateral, Balances, BorrowLendView, Collateral, FeeRates, IndexPriceRow, IndexPrices, LendPoolView, OrderView, Reply,
} from './answers.js';

/** Dust converts to USDC (the spec's rule) and collateral is valued in it: through <ASSET>_USDC. */
export const DUST_PAYOUT_SYMBOL = 'USDC';

/** The <ASSET>_USDC market of an asset, the one dust converts through. */
export function usdcMarketOf(front: FrontContext, assetId: number): MarketInfo | undefined {
  return front.config.markets.find((m) => m.spec.baseAssetId === assetId && m.quoteSymbol === DUST_PAYOUT_SYMBOL);
}

/** The asset id of USDC, the valuation and dust payout asset (-1 when not configured). */
function usdcAssetId(front: FrontContext): number {
  return front.config.assets.findIndex((a) => a.symbol === DUST_PAYOUT_SYMBOL);
}

/** A Reply that sends errors to the client and hands the value to `ok`. */
export function replyTo<T>(ctx: RequestContext, ok: (value: T) => void): Reply<T> {
  return { ok, fail: (error) => sendError(ctx, error), submitted: () => { ctx.engineBound = true; } };
}

/** Cancelling an order that is not open: the public venue answers 400, not 404. */
const CANCEL_NOT_FOUND = apiError(400, 'INVALID_CLIENT_REQUEST', 'Order not found');

type Fill = (cmd: Command) => void;

/** The settings PATCH /api/v1/account may change; absent ones stay as they are. */
export interface AccountSettingsUpdate {
  autoBorrowSettlements?: boolean;
  autoLend?: boolean;
  autoRepayBorrows?: boolean;
  leverageLimitHundredths?: number;
}

const SETTING_BITS = [
  ['autoBorrowSettlements', AccountSettingFlag.AutoBorrowSettlements],
  ['autoLend', AccountSettingFlag.AutoLend],
  ['autoRepayBorrows', AccountSettingFlag.AutoRepayBorrows],
] as const;

/** The market id a query uses for "every market" (the engine's MARKET_ID_ALL). */
const ALL_MARKETS = 0xffff;

export class EngineCalls {
  constructor(private readonly front: FrontContext) {}

  // --- Orders

  placeOrder(reply: Reply<OrderView>, accountId: number, order: ParsedOrder): boolean {
    if (this.refusedInMaintenance(reply)) return false;
    return this.call(reply, (cmd) => {
      cmd.kind = CommandKind.PlaceOrder;
      cmd.accountId = accountId;
      cmd.marketId = order.market.spec.marketId;
      cmd.side = order.side;
      cmd.orderType = order.orderType;
      cmd.timeInForce = order.timeInForce;
      cmd.selfTradePrevention = order.selfTradePrevention;
      cmd.flags = order.flags;
      cmd.priceTicks = order.priceTicks;
      cmd.qtyLots = order.qtyLots;
      cmd.quoteQtyUnits = order.quoteQtyUnits;
      cmd.clientId = order.clientId;
    }, orderAnswer(reply));
  }

  cancelOrder(reply: Reply<OrderView>, accountId: number, target: OrderTarget): boolean {
    if (this.refusedInMaintenance(reply)) return false;
    return this.call(reply, targetFill(CommandKind.CancelOrder, accountId, target), orderAnswer(reply, CANCEL_NOT_FOUND));
  }

  queryOrder(reply: Reply<OrderView>, accountId: number, target: OrderTarget): boolean {
    return this.call(reply, targetFill(CommandKind.QueryOrder, accountId, target), orderAnswer(reply));
  }

  /** The account's open orders, oldest first, in one market or (marketId null) all; ok with the count. */
  openOrders(reply: Reply<number>, accountId: number, marketId: number | null, onOrder: (order: OrderView) => void): boolean {
    return this.call(reply, (cmd) => {
      cmd.kind = CommandKind.QueryOpenOrders;
      cmd.accountId = accountId;
      cmd.marketId = marketId ?? ALL_MARKETS;
    }, orderListAnswer(reply, onOrder));
  }

  /** Cancels every open order of the account in one market; each cancelled order reaches `onOrder`. */
  cancelAll(reply: Reply<number>, accountId: number, marketId: number, onOrder: (order: OrderView) => void): boolean {
    if (this.refusedInMaintenance(reply)) return false;
    return this.call(reply, (cmd) => {
      cmd.kind = CommandKind.CancelAll;
      cmd.accountId = accountId;
      cmd.marketId = marketId;
    }, orderListAnswer(reply, onOrder));
  }

  // --- Funds

  balances(reply: Reply<Balances>, accountId: number): boolean {
    return this.call(reply, (cmd) => {
      cmd.kind = CommandKind.QueryBalances;
      cmd.accountId = accountId;
    }, balancesAnswer(reply, this.front.config.assets.length));
  }

  /**
   * Takes `amountUnits` out of the account; ok with the withdrawal's id. `intentDigest` names its
   * destination; `flags` (CommandFlag.AutoBorrow, AutoLendRedeem) fund a shortfall.
   */
  withdraw(reply: Reply<Accepted>, accountId: number, assetId: number, amountUnits: number, intentDigest: Uint8Array, flags = 0): boolean {
    if (this.refusedInMaintenance(reply)) return false;
    return this.call(reply, (cmd) => {
      cmd.kind = CommandKind.Withdraw;
      cmd.flags = flags;
      cmd.accountId = accountId;
      cmd.assetId = assetId;
      cmd.amountUnits = amountUnits;
      cmd.key.set(intentDigest);
    }, resultAnswer(reply));
  }

  // --- Spot risk, answered by the engine (engine/core/funds/risk.ts)

  /** Every asset valued in USDC at its market's mark price (the engine's guarded reference). */
  collateral(reply: Reply<Collateral>, accountId: number): boolean {
    return this.call(reply, (cmd) => {
      cmd.kind = CommandKind.QueryCollateral;
      cmd.accountId = accountId;
      cmd.assetId = usdcAssetId(this.front);
    }, collateralAnswer(reply));
  }

  /**
   * Whole lots the account could order now in `market` (priceTicks 0: a market order); `flags`
   * (CommandFlag.AutoLendRedeem, AutoBorrow, AutoBorrowRepay) as the order would carry them.
   */
  maxOrderLots(reply: Reply<number>, accountId: number, market: MarketInfo, side: Side, priceTicks: number, flags = 0): boolean {
    return this.call(reply, (cmd) => {
      cmd.kind = CommandKind.QueryMaxOrderQty;
      cmd.accountId = accountId;
      cmd.marketId = market.spec.marketId;
      cmd.side = side;
      cmd.priceTicks = priceTicks;
      cmd.flags = flags;
    }, resultAnswer({ ...reply, ok: (accepted) => reply.ok(accepted.value) }));
  }

  /** The largest borrow of `assetId` (units) that passes the pool's limits and the margin test now. */
  maxBorrowUnits(reply: Reply<number>, accountId: number, assetId: number): boolean {
    return this.call(reply, (cmd) => {
      cmd.kind = CommandKind.QueryMaxBorrowQty;
      cmd.accountId = accountId;
      cmd.assetId = assetId;
    }, resultAnswer({ ...reply, ok: (accepted) => reply.ok(accepted.value) }));
  }

  /** The largest withdrawal of `assetId` (units) the engine would make now with `flags` (CommandFlag.AutoBorrow, AutoLendRedeem). */
  maxWithdrawalUnits(reply: Reply<number>, accountId: number, assetId: number, flags: number): boolean {
    return this.call(reply, (cmd) => {
      cmd.kind = CommandKind.QueryMaxWithdrawalQty;
      cmd.accountId = accountId;
      cmd.assetId = assetId;
      cmd.flags = flags;
    }, resultAnswer({ ...reply, ok: (accepted) => reply.ok(accepted.value) }));
  }

  /**
   * Converts every dust balance of the account to USDC in one engine command, all or none
   * (`market`: only that <ASSET>_USDC market's); ok with the total payout in USDC units.
   */
  convertAllDust(reply: Reply<Accepted>, accountId: number, market: MarketInfo | undefined): boolean {
    if (this.refusedInMaintenance(reply)) return false;
    return this.call(reply, (cmd) => {
      cmd.kind = CommandKind.ConvertAllDust;
      cmd.accountId = accountId;
      cmd.assetId = usdcAssetId(this.front);
      cmd.marketId = market?.spec.marketId ?? ALL_MARKETS;
    }, resultAnswer(reply));
  }

  // --- Borrow/lend, answered by the engine (engine/core/margin/borrow-lend.ts)

  /** Lends, repays, redeems or borrows `amountUnits` of an asset; ok with the signed position after it. */
  borrowLend(reply: Reply<Accepted>, accountId: number, assetId: number, side: BorrowLendSide, amountUnits: number): boolean {
    if (this.refusedInMaintenance(reply)) return false;
    return this.call(reply, (cmd) => {
      cmd.kind = CommandKind.BorrowLend;
      cmd.accountId = accountId;
      cmd.assetId = assetId;
      cmd.side = side as number as Side; // the command slot carries the BorrowLendSide in side
      cmd.amountUnits = amountUnits;
    }, resultAnswer(reply));
  }

  /** Every borrow/lend pool: totals, rates and utilization. */
  lendPools(reply: Reply<LendPoolView[]>): boolean {
    return this.call(reply, (cmd) => {
      cmd.kind = CommandKind.QueryLendPools;
    }, lendPoolsAnswer(reply));
  }

  /** The account's open borrow/lend positions. */
  borrowLendPositions(reply: Reply<BorrowLendView[]>, accountId: number): boolean {
    return this.call(reply, (cmd) => {
      cmd.kind = CommandKind.QueryBorrowLendPositions;
      cmd.accountId = accountId;
    }, borrowLendPositionsAnswer(reply));
  }

  feeRates(reply: Reply<FeeRates>, accountId: number): boolean {
    return this.call(reply, (cmd) => {
      cmd.kind = CommandKind.QueryFeeRates;
      cmd.accountId = accountId;
    }, feeRatesAnswer(reply));
  }

  // --- Margin: the account's settings

  accountSettings(reply: Reply<AccountSettingsView>, accountId: number): boolean {
    return this.call(reply, (cmd) => {
      cmd.kind = CommandKind.QueryAccountSettings;
      cmd.accountId = accountId;
    }, accountSettingsAnswer(reply));
  }

  /** Changes the settings `update` names (the rest stay); ok with all of them once durable. */
  updateAccountSettings(reply: Reply<AccountSettingsView>, accountId: number, update: AccountSettingsUpdate): boolean {
    let change = 0;
    let values = 0;
    for (const [name, bit] of SETTING_BITS) {
      const value = update[name];
      if (value === undefined) continue;
      change |= bit;
      if (value) values |= bit;
    }
    if (update.leverageLimitHundredths !== undefined) change |= AccountSettingFlag.LeverageLimit;
    return this.call(reply, (cmd) => {
      cmd.kind = CommandKind.UpdateAccountSettings;
      cmd.accountId = accountId;
      // The command slot carries the settings word in quoteQtyUnits and the limit in amountUnits.
      cmd.quoteQtyUnits = change | (values << 8);
      cmd.amountUnits = update.leverageLimitHundredths ?? 0;
    }, accountSettingsAnswer(reply));
  }

  // --- Operator commands (the admin endpoint)

  createAccount(reply: Reply<Accepted>, publicKey: Uint8Array): boolean {
    return this.call(reply, (cmd) => {
      cmd.kind = CommandKind.CreateAccount;
      cmd.key.set(publicKey);
    }, resultAnswer(reply));
  }

  deposit(reply: Reply<Accepted>, accountId: number, assetId: number, amountUnits: number): boolean {
    return this.call(reply, (cmd) => {
      cmd.kind = CommandKind.Deposit;
      cmd.accountId = accountId;
      cmd.assetId = assetId;
      cmd.amountUnits = amountUnits;
    }, resultAnswer(reply));
  }

  /** Ok with the number of orders the new state cancelled. */
  setMarketState(reply: Reply<Accepted>, marketId: number, state: OrderBookState): boolean {
    return this.call(reply, (cmd) => {
      cmd.kind = CommandKind.SetMarketState;
      cmd.marketId = marketId;
      cmd.amountUnits = state; // the command slot carries the state in amountUnits
    }, resultAnswer(reply));
  }

  setFeeRates(reply: Reply<FeeRates>, accountId: number, makerFeeBps: number, takerFeeBps: number): boolean {
    return this.call(reply, (cmd) => {
      cmd.kind = CommandKind.SetFeeRates;
      cmd.accountId = accountId;
      cmd.amountUnits = makerFeeBps; // the command slot carries the rates in amountUnits and quoteQtyUnits
      cmd.quoteQtyUnits = takerFeeBps;
    }, feeRatesAnswer(reply));
  }

  /** Ok with the sequence the snapshot is taken at (the journal worker writes it once durable). */
  snapshot(reply: Reply<Accepted>): boolean {
    return this.call(reply, (cmd) => {
      cmd.kind = CommandKind.Snapshot;
    }, resultAnswer(reply));
  }

  /** Sets the whole exchange's state (SystemState: Ok or Maintenance); ok once durable. */
  setSystemState(reply: Reply<Accepted>, state: SystemState): boolean {
    return this.call(reply, (cmd) => {
      cmd.kind = CommandKind.SetSystemState;
      cmd.amountUnits = state; // the command slot carries the state in amountUnits
    }, resultAnswer(reply));
  }

  // --- Margin: index prices (engine/core/margin/index-prices.ts)

  /** Sets one asset's index price (USDC per whole unit × 10^9) from `source`; ok with the price, once durable. */
  setIndexPrice(reply: Reply<Accepted>, assetId: number, priceE9: number, source: IndexPriceSource): boolean {
    return this.call(reply, (cmd) => {
      cmd.kind = CommandKind.SetIndexPrice;
      cmd.assetId = assetId;
      cmd.priceTicks = priceE9; // the command slot carries the price in priceTicks, the source in amountUnits
      cmd.amountUnits = source;
    }, resultAnswer(reply));
  }

  /** Every asset's index price, age and staleness at the query's engine time. */
  indexPrices(reply: Reply<IndexPrices>): boolean {
    return this.call(reply, (cmd) => {
      cmd.kind = CommandKind.QueryIndexPrices;
    }, indexPricesAnswer(reply));
  }

  /**
   * In maintenance the engine refuses places, cancels, withdrawals and dust conversions; a front
   * that knows it (SystemState records) answers at once. The engine's check stays the authority,
   * for commands already on their way when maintenance starts.
   */
  private refusedInMaintenance(reply: Pick<Reply<unknown>, 'fail'>): boolean {
    if (!this.front.data.inMaintenance()) return false;
    reply.fail(Errors.maintenance);
    return true;
  }

  private call<T>(reply: Reply<T>, fill: Fill, answer: PendingRequest): boolean {
    const error = submitError(this.front.link.submit(fill, answer));
    if (error !== null) reply.fail(error);
    else reply.submitted?.();
    return error === null;
  }
}

function targetFill(kind: CommandKind, accountId: number, target: OrderTarget): Fill {
  return (cmd) => {
    cmd.kind = kind;
    cmd.accountId = accountId;
    cmd.marketId = target.market.spec.marketId;
    cmd.orderId = target.orderId;
    cmd.clientId = target.clientId;
    if (target.byClientId) cmd.flags |= CommandFlag.HasClientId;
  };
}

const CALLS = new WeakMap<FrontContext, EngineCalls>();

/** The engine calls of one front thread (one table per context, made on first use). */
export function engineCalls(front: FrontContext): EngineCalls {
  let calls = CALLS.get(front);
  if (calls === undefined) {
    calls = new EngineCalls(front);
    CALLS.set(front, calls);
  }
  return calls;
}

// --- Calls of the thread's own machinery, not of a request: they report the raw submit result,
// since their callers retry or skip rather than answer a client.

/**
 * Asks the engine for its state (accounts, books) to seed the read models: every record but the
 * closing Result goes to `onRecord`; `onDone` gets the Result's code name, or null when it is Ok.
 */
export function querySnapshot(
  link: EngineLink,
  onRecord: (type: RecordType, view: DataView, offset: number) => void,
  onDone: (failure: string | null) => void,
): SubmitResult {
  return link.submit((cmd) => {
    cmd.kind = CommandKind.QuerySnapshot;
  }, {
    onRecord(type, view, offset) {
      if (type !== RecordType.Result) return onRecord(type, view, offset);
      readResult(view, offset, scratch.result);
      onDone(scratch.result.code === ResultCode.Ok ? null : `code ${scratch.result.code}`);
    },
  });
}

/** Confirms a pending withdrawal (the simulated chain); `onDone` runs once the engine answered. */
export function confirmWithdrawal(link: EngineLink, accountId: number, withdrawalId: number, onDone: () => void): SubmitResult {
  return link.submit((cmd) => {
    cmd.kind = CommandKind.ConfirmWithdrawal;
    cmd.accountId = accountId;
    cmd.orderId = withdrawalId;
  }, {
    onRecord(type) {
      if (type === RecordType.Result) onDone();
    },
  });
}
