// Every engine enum the wire names, both ways, in one table: parsing reads a client's name into
// the engine's value, formatting writes a value's name. Each enum is listed once as (value, name)
// pairs, in the order error messages list the names.
//
// Names are looked up in Maps, not object literals, so client text such as "constructor" or
// "__proto__" finds nothing. A value with no wire name (ExpiryReason.None, TriggerBy.None) is
// simply not listed: `name` answers undefined for it, and each shape decides what to show.

import {
  ExpiryReason, OrderBookState, OrderEvent, OrderStatus, OrderType, SelfTradePrevention, Side, SlippageToleranceType,
  SystemOrderType, TimeInForce, TriggerBy,
} from '../../engine/bus/types.js';

export class WireEnum<V extends number> {
  private readonly byName = new Map<string, V>();
  private readonly byValue: Array<string | undefined> = [];
  /** The wire names, in table order (for error messages). */
  readonly names: readonly string[];

  /** `aliases` are further names a client may send for a value; formatting never writes them. */
  constructor(entries: ReadonlyArray<readonly [V, string]>, aliases: ReadonlyArray<readonly [string, V]> = []) {
    for (const [value, name] of entries) {
      this.byName.set(name, value);
      this.byValue[value] = name;
    }
    for (const [name, value] of aliases) this.byName.set(name, value);
    this.names = entries.map(([, name]) => name);
  }

  /** The value a client's name stands for; undefined for anything else (non-strings included). */
  value(name: unknown): V | undefined {
    return typeof name === 'string' ? this.byName.get(name) : undefined;
  }

  /** The wire name of a value; undefined for a value the wire does not name. */
  name(value: number): string | undefined {
    return this.byValue[value];
  }

  /** "A, B or C": the names as an error message lists them. */
  choices(): string {
    return this.names.length < 2 ? this.names.join('') : `${this.names.slice(0, -1).join(', ')} or ${this.names[this.names.length - 1]}`;
  }
}

export const SIDE = new WireEnum<Side>([[Side.Bid, 'Bid'], [Side.Ask, 'Ask']]);

/** REST order types; the upper-case names are accepted too (clients send both). */
export const ORDER_TYPE = new WireEnum<OrderType>(
  [[OrderType.Limit, 'Limit'], [OrderType.Market, 'Market']],
  [['LIMIT', OrderType.Limit], ['MARKET', OrderType.Market]],
);

/** The order type as the account stream writes it. */
export const ORDER_TYPE_STREAM = new WireEnum<OrderType>([[OrderType.Limit, 'LIMIT'], [OrderType.Market, 'MARKET']]);

export const TIME_IN_FORCE = new WireEnum<TimeInForce>([[TimeInForce.GTC, 'GTC'], [TimeInForce.IOC, 'IOC'], [TimeInForce.FOK, 'FOK']]);

export const SELF_TRADE_PREVENTION = new WireEnum<SelfTradePrevention>([
  [SelfTradePrevention.RejectTaker, 'RejectTaker'],
  [SelfTradePrevention.RejectMaker, 'RejectMaker'],
  [SelfTradePrevention.RejectBoth, 'RejectBoth'],
]);

export const ORDER_STATUS = new WireEnum<OrderStatus>([
  [OrderStatus.New, 'New'],
  [OrderStatus.PartiallyFilled, 'PartiallyFilled'],
  [OrderStatus.Filled, 'Filled'],
  [OrderStatus.Cancelled, 'Cancelled'],
  [OrderStatus.Expired, 'Expired'],
  [OrderStatus.TriggerPending, 'TriggerPending'],
  [OrderStatus.TriggerFailed, 'TriggerFailed'],
]);

/** Who placed an order when not its owner (REST systemOrderType; None, a client's order, is null on the wire). */
export const SYSTEM_ORDER_TYPE = new WireEnum<SystemOrderType>([
  [SystemOrderType.CollateralConversion, 'CollateralConversion'],
  [SystemOrderType.FutureExpiry, 'FutureExpiry'],
  [SystemOrderType.LiquidatePositionOnAdl, 'LiquidatePositionOnAdl'],
  [SystemOrderType.LiquidatePositionOnBook, 'LiquidatePositionOnBook'],
  [SystemOrderType.LiquidatePositionOnBackstop, 'LiquidatePositionOnBackstop'],
  [SystemOrderType.OrderBookClosed, 'OrderBookClosed'],
]);

/** The account stream's origin `O` of an order by its system order type (a client's own: USER). */
export const ORDER_ORIGIN = new WireEnum<SystemOrderType>([
  [SystemOrderType.None, 'USER'],
  [SystemOrderType.LiquidatePositionOnBook, 'LIQUIDATION_AUTOCLOSE'],
  [SystemOrderType.LiquidatePositionOnAdl, 'ADL_AUTOCLOSE'],
  [SystemOrderType.CollateralConversion, 'COLLATERAL_CONVERSION'],
  [SystemOrderType.FutureExpiry, 'SETTLEMENT_AUTOCLOSE'],
  [SystemOrderType.OrderBookClosed, 'SETTLEMENT_AUTOCLOSE'],
  [SystemOrderType.LiquidatePositionOnBackstop, 'BACKSTOP_LIQUIDITY_PROVIDER'],
]);

/** Why an order expired, by the REST expiryReason names (the stream's `R` uses the same). */
export const EXPIRY_REASON = new WireEnum<ExpiryReason>([
  [ExpiryReason.ImmediateOrCancel, 'ImmediateOrCancel'],
  [ExpiryReason.FillOrKill, 'FillOrKill'],
  [ExpiryReason.PostOnlyTaker, 'PostOnlyTaker'],
  [ExpiryReason.SelfTradePrevention, 'SelfTradePrevention'],
  [ExpiryReason.InsufficientLiquidity, 'InsufficientLiquidity'],
  [ExpiryReason.PriceBand, 'PriceOutOfBounds'],
  [ExpiryReason.InsufficientFunds, 'InsufficientFunds'],
  // Cancelled by the operator's SetMarketState
  [ExpiryReason.OrderBookClosed, 'OrderBookClosed'],
  // Cancelled when its account entered liquidation (engine/core/liquidation/)
  [ExpiryReason.Liquidation, 'Liquidation'],
  [ExpiryReason.ReduceOnlyNotReduced, 'ReduceOnlyNotReduced'],
  [ExpiryReason.PositionLimit, 'PositionLimit'],
]);

/** The account stream's event name (`e`) of each order event. */
export const ORDER_EVENT = new WireEnum<OrderEvent>([
  [OrderEvent.Accepted, 'orderAccepted'],
  [OrderEvent.Cancelled, 'orderCancelled'],
  [OrderEvent.Expired, 'orderExpired'],
  [OrderEvent.Fill, 'orderFill'],
  [OrderEvent.Modified, 'orderModified'],
  [OrderEvent.TriggerPlaced, 'triggerPlaced'],
  [OrderEvent.TriggerFailed, 'triggerFailed'],
]);

export const ORDER_BOOK_STATE = new WireEnum<OrderBookState>([
  [OrderBookState.Open, 'Open'],
  [OrderBookState.Closed, 'Closed'],
  [OrderBookState.CancelOnly, 'CancelOnly'],
  [OrderBookState.LimitOnly, 'LimitOnly'],
  [OrderBookState.PostOnly, 'PostOnly'],
]);

/** Which price a trigger watches (trigger orders are not built yet: parsed only to refuse bad names). */
export const TRIGGER_BY = new WireEnum<TriggerBy>([
  [TriggerBy.MarkPrice, 'MarkPrice'], [TriggerBy.LastPrice, 'LastPrice'], [TriggerBy.IndexPrice, 'IndexPrice'],
]);

/** How a slippage tolerance is measured (not built yet: parsed only to refuse bad names). */
export const SLIPPAGE_TOLERANCE_TYPE = new WireEnum<SlippageToleranceType>([
  [SlippageToleranceType.TickSize, 'TickSize'], [SlippageToleranceType.Percent, 'Percent'],
]);
