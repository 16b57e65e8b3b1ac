// The one table of engine calls: every command a front thread sends the engine is built here
// (most of them by the methods generated from the schema's kind table, ./generated/calls.ts), from
// typed payloads, and answered here, as a typed value or a mapped error. A route parses and
// validates its input, calls one method, and formats the answer; it never fills a command slot,
// names a command kind or a record type, or decodes a record.
//
// Each call takes a Reply first. `replyTo(ctx, ok)` makes the usual one: errors (the engine's
// result codes, and a full inbound ring or too many requests in flight, both 503) are sent to the
// client in one place, and `ok` formats the success. A caller that must collect errors instead
// (the batch route, the withdrawal's undo) gives its own Reply. Every method returns whether the
// command was submitted; when it was not, the Reply has already been told why.

import {
  AccountSettingFlag, CommandFlag, REFUSED_IN_MAINTENANCE, RecordType, ResultCode, SlippageToleranceType, TriggerBy, fillConfirmWithdrawal,
  fillQuerySnapshot, type Command, type CommandKind, type OrderTargetPayload, type PlaceOrderPayload, type Side,
} from '../../../engine/bus/types.js';
import { readResult } from '../../../engine/bus/codec.js';
import { Errors, apiError, resultError } from '../../errors.js';
import { sendError, type RequestContext } from '../http.js';
import { scratch, submitError, type FrontContext } from '../context.js';
import type { EngineLink, PendingRequest, SubmitResult } from '../engine-link.js';
import type { OrderTarget, ParsedOrder } from '../../wire/parse-order.js';
import type { Accepted, AccountSettingsView, Balances, Collateral, OrderView, Reply } from './answers.js';
import { KindCalls } from './generated/calls.js';
import type { MarketInfo } from '../../config.js';

export type {
  Accepted, AccountSettingsView, AssetCollateral, BackstopProviders, Balances, BorrowLendView, Collateral, FeeRates, IndexPriceRow, IndexPrices, InsuranceLine, InsuranceLines, LendPoolView, MarkPriceView, OrderView, PositionView, Reply,
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

/** The market id a query uses for "every market" (the engine's MARKET_ID_ALL). */
const ALL_MARKETS = 0xffff;

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

/**
 * The engine calls of one front thread. One typed method per command kind a route submits is
 * generated from the schema's kind table (./generated/calls.ts: `deposit(reply, { accountId,
 * assetId, amountUnits })`); this class submits them, and adds the calls that take a route's
 * parsed input or combine commands.
 */
export class EngineCalls extends KindCalls {
  /**
   * The payload of every place of this thread, refilled per request: the submission copies it into
   * the command before it returns (EngineLink.submit fills first), so no place keeps it.
   */
  private readonly placePayload: PlaceOrderPayload = {
    ...NO_CONDITIONS, accountId: 0, marketId: 0, side: 0, orderType: 0, timeInForce: 0, selfTradePrevention: 0,
    flags: 0, priceTicks: 0, qtyLots: 0, quoteQtyUnits: 0, clientId: 0,
  };

  constructor(private readonly front: FrontContext) {
    super();
  }

  // --- Orders

  /** Places a parsed order of the account. */
  place(reply: Reply<OrderView>, accountId: number, order: ParsedOrder): boolean {
    const p = this.placePayload;
    p.accountId = accountId;
    p.marketId = order.market.spec.marketId;
    p.side = order.side;
    p.orderType = order.orderType;
    p.timeInForce = order.timeInForce;
    p.selfTradePrevention = order.selfTradePrevention;
    p.flags = order.flags;
    p.priceTicks = order.priceTicks;
    p.qtyLots = order.qtyLots;
    p.quoteQtyUnits = order.quoteQtyUnits;
    p.clientId = order.clientId;
    return this.placeOrder(reply, p);
  }

  /** Cancels one order of the account; an order that is not open answers 400 (as the venue does). */
  cancel(reply: Reply<OrderView>, accountId: number, target: OrderTarget): boolean {
    const unknown = resultError(ResultCode.UnknownOrder);
    return this.cancelOrder({ ...reply, fail: (error) => reply.fail(error === unknown ? CANCEL_NOT_FOUND : error) }, targetOf(accountId, target));
  }

  find(reply: Reply<OrderView>, accountId: number, target: OrderTarget): boolean {
    return this.queryOrder(reply, targetOf(accountId, target));
  }

  /** The account's open orders, oldest first, in one market or (marketId null) all; ok with the count. */
  openOrders(reply: Reply<number>, accountId: number, marketId: number | null, onOrder: (order: OrderView) => void): boolean {
    return this.queryOpenOrders(reply, { accountId, marketId: marketId ?? ALL_MARKETS }, onOrder);
  }

  // --- Funds

  balances(reply: Reply<Balances>, accountId: number): boolean {
    return this.queryBalances(reply, { accountId });
  }

  // --- Spot risk, answered by the engine (engine/core/funds/risk.ts)

  /** Every asset valued in USDC at its market's mark price (the engine's guarded reference). */
  collateral(reply: Reply<Collateral>, accountId: number): boolean {
    return this.queryCollateral(reply, { accountId, assetId: usdcAssetId(this.front) });
  }

  /**
   * Whole lots the account could order now in `market` (priceTicks 0: a market order); `flags`
   * (CommandFlag.AutoLendRedeem, AutoBorrow, AutoBorrowRepay) as the order would carry them.
   */
  maxOrderLots(reply: Reply<number>, accountId: number, market: MarketInfo, side: Side, priceTicks: number, flags = 0): boolean {
    return this.queryMaxOrderQty({ ...reply, ok: (accepted) => reply.ok(accepted.value) }, {
      accountId, marketId: market.spec.marketId, side, priceTicks, flags,
    });
  }

  /**
   * Converts every dust balance of the account to USDC in one engine command, all or none
   * (`market`: only that <ASSET>_USDC market's); ok with the total payout in USDC units.
   */
  convertDustToUsdc(reply: Reply<Accepted>, accountId: number, market: MarketInfo | undefined): boolean {
    return this.convertAllDust(reply, { accountId, assetId: usdcAssetId(this.front), marketId: market?.spec.marketId ?? ALL_MARKETS });
  }

  // --- Margin: the account's settings

  /** Changes the settings `update` names (the rest stay); ok with all of them once durable. */
  updateSettings(reply: Reply<AccountSettingsView>, accountId: number, update: AccountSettingsUpdate): boolean {
    let change = 0;
    let values = 0;
    for (const [name, bit] of SETTING_BITS) {
      const value = update[name];
      if (value === undefined) continue;
      change |= bit;
      if (value) values |= bit;
    }
    if (update.leverageLimitHundredths !== undefined) change |= AccountSettingFlag.LeverageLimit;
    return this.updateAccountSettings(reply, {
      accountId, settingsWord: change | (values << 8), leverageLimitHundredths: update.leverageLimitHundredths ?? 0,
    });
  }

  /**
   * Submits one command. In maintenance the engine refuses the kinds the schema marks
   * refused_in_maintenance; a front that knows it (SystemState records) answers at once. The
   * engine's check stays the authority, for commands already on their way when maintenance starts.
   */
  protected submit<T>(reply: Reply<T>, kind: CommandKind, fill: (cmd: Command) => void, answer: PendingRequest): boolean {
    if (REFUSED_IN_MAINTENANCE[kind] === 1 && this.front.data.inMaintenance()) {
      reply.fail(Errors.maintenance);
      return false;
    }
    const error = submitError(this.front.link.submit(fill, answer));
    if (error !== null) reply.fail(error);
    else reply.submitted?.();
    return error === null;
  }

  protected assetCount(): number {
    return this.front.config.assets.length;
  }
}

/** The conditional parts of a place this version does not take (the engine refuses any). */
const NO_CONDITIONS = {
  triggerPriceTicks: 0, triggerQtyLots: 0, takeProfitTriggerTicks: 0, takeProfitLimitTicks: 0, stopLossTriggerTicks: 0,
  stopLossLimitTicks: 0, slippageTolerance: 0, triggerBy: TriggerBy.None, takeProfitTriggerBy: TriggerBy.None,
  stopLossTriggerBy: TriggerBy.None, slippageToleranceType: SlippageToleranceType.None,
} as const;

function targetOf(accountId: number, target: OrderTarget): OrderTargetPayload {
  return {
    accountId,
    marketId: target.market.spec.marketId,
    orderId: target.orderId,
    clientId: target.clientId,
    flags: target.byClientId ? CommandFlag.HasClientId : 0,
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
  return link.submit(fillQuerySnapshot, {
    onRecord(type, view, offset) {
      if (type !== RecordType.Result) return onRecord(type, view, offset);
      readResult(view, offset, scratch.result);
      onDone(scratch.result.code === ResultCode.Ok ? null : `code ${scratch.result.code}`);
    },
  });
}

/** Confirms a pending withdrawal (the simulated chain); `onDone` runs once the engine answered. */
export function confirmWithdrawal(link: EngineLink, accountId: number, withdrawalId: number, onDone: () => void): SubmitResult {
  return link.submit((cmd) => fillConfirmWithdrawal(cmd, { accountId, withdrawalId }), {
    onRecord(type) {
      if (type === RecordType.Result) onDone();
    },
  });
}
