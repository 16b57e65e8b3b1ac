// Scenario tables for the engine core (engine/core/exchange.ts): one line per command and what it
// must produce. Every line also runs the invariant checker and the conservation check (see
// test/helpers/engine-harness.ts). Units: one lot = 10 base units, one tick × one lot = 3 quote
// units, so a bid of 100 ticks × 5 lots locks 1500 quote units and an ask of 3 lots locks 30.
import { describe, expect, it } from 'vitest';
import {
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
} from '../../engine/bus/types.js';
import {
  ALL_MARKETS,
  BASE,
  EngineHarness,
  FRONT,
  M0,
  M1,
  OTHER,
  QUOTE,
  cmd,
  depthsOf,
  keyOf,
  ordersOf,
  resultOf,
  testConfig,
  tradesOf,
  type Rec,
} from '../helpers/engine-harness.js';
import { A, B, C, D, START_BASE, START_QUOTE, fourAccounts, runScenario } from '../helpers/engine-scenario.js';

const { New, PartiallyFilled, Filled, Cancelled, Expired } = OrderStatus;
const { GTC, IOC, FOK } = TimeInForce;
const { RejectTaker, RejectMaker, RejectBoth } = SelfTradePrevention;

describe('engine: resting and crossing', () => {
  it('fills at the maker price, partially and fully, and refunds price improvement', () => {
    runScenario(testConfig(), [
      { note: 'A bids 100 × 5: rests, locks 1500', do: cmd.place(A, 'bid', 100, 5), status: New,
        balances: [[A, QUOTE, START_QUOTE - 1500, 1500]], book: { bids: [[100, 5]], asks: [] } },
      { note: 'B asks 98 × 3: fills 3 at the maker price 100', do: cmd.place(B, 'ask', 98, 3), status: Filled, executed: 3,
        trades: [[100, 3]],
        balances: [[B, BASE, START_BASE - 30, 0], [B, QUOTE, START_QUOTE + 900, 0], [A, BASE, START_BASE + 30, 0], [A, QUOTE, START_QUOTE - 1500, 600]],
        book: { bids: [[100, 2]], asks: [] } },
      { note: 'B asks 100 × 4: takes the last 2, rests 2', do: cmd.place(B, 'ask', 100, 4), status: PartiallyFilled, executed: 2,
        trades: [[100, 2]],
        balances: [[B, BASE, START_BASE - 70, 20], [B, QUOTE, START_QUOTE + 1500, 0], [A, BASE, START_BASE + 50, 0], [A, QUOTE, START_QUOTE - 1500, 0]],
        book: { bids: [], asks: [[100, 2]] } },
      { note: 'A bids 105 × 3: fills 2 at 100, 30 of improvement released, 1 rests at 105', do: cmd.place(A, 'bid', 105, 3),
        status: PartiallyFilled, executed: 2, trades: [[100, 2]],
        balances: [[A, QUOTE, START_QUOTE - 1500 - 945 + 30, 315], [A, BASE, START_BASE + 70, 0], [B, BASE, START_BASE - 70, 0]],
        book: { bids: [[105, 1]], asks: [] },
        check: (records) => {
          const response = ordersOf(records).at(-1)!;
          expect(response.executedQuoteUnits).toBe(600);
          expect(response.priceTicks).toBe(105);
        } },
      { note: 'C asks 104 × 1: fills the resting bid at its own price 105', do: cmd.place(C, 'ask', 104, 1), status: Filled,
        trades: [[105, 1]],
        balances: [[A, QUOTE, START_QUOTE - 1500 - 945 + 30, 0], [C, QUOTE, START_QUOTE + 315, 0], [C, BASE, START_BASE - 10, 0]],
        book: { bids: [], asks: [] } },
    ]);
  });

  it('walks several levels in price-time priority', () => {
    runScenario(testConfig(), [
      { note: 'A asks 101 × 2', do: cmd.place(A, 'ask', 101, 2), status: New },
      { note: 'B asks 100 × 1', do: cmd.place(B, 'ask', 100, 1), status: New },
      { note: 'C asks 100 × 2, behind B', do: cmd.place(C, 'ask', 100, 2), status: New },
      { note: 'A asks 102 × 5', do: cmd.place(A, 'ask', 102, 5), status: New, book: { bids: [], asks: [[100, 3], [101, 2], [102, 5]] } },
      { note: 'D bids 101 × 4: B, then C, then A at 101', do: cmd.place(D, 'bid', 101, 4), status: Filled,
        trades: [[100, 1], [100, 2], [101, 1]],
        // Locked 101 × 4 × 3 = 1212, paid (100 × 3 + 101) × 3 = 1203: 9 released.
        balances: [[D, QUOTE, START_QUOTE - 1203, 0], [D, BASE, START_BASE + 40, 0]],
        book: { bids: [], asks: [[101, 1], [102, 5]] },
        check: (records) => {
          const makers = ordersOf(records).filter((o) => o.event === OrderEvent.Fill && (o.orderFlags & OrderFlag.IsMaker) !== 0);
          expect(makers.map((o) => o.accountId)).toEqual([B, C, A]);
          expect(makers.map((o) => OrderStatus[o.status])).toEqual(['Filled', 'Filled', 'PartiallyFilled']);
        } },
      { note: 'D bids 102 × 3: the rest of 101, then 102', do: cmd.place(D, 'bid', 102, 3), status: Filled,
        trades: [[101, 1], [102, 2]], book: { bids: [], asks: [[102, 3]] } },
    ]);
  });
});

describe('engine: time in force and post-only', () => {
  it('IOC fills what it can and expires the rest', () => {
    runScenario(testConfig(), [
      { note: 'A asks 100 × 2', do: cmd.place(A, 'ask', 100, 2), status: New },
      { note: 'B bids IOC 101 × 5: 2 fill, 3 expire', do: cmd.place(B, 'bid', 101, 5, { tif: IOC }), status: Expired,
        reason: ExpiryReason.ImmediateOrCancel, executed: 2, trades: [[100, 2]],
        balances: [[B, QUOTE, START_QUOTE - 600, 0], [B, BASE, START_BASE + 20, 0]], book: { bids: [], asks: [] } },
      { note: 'B bids IOC into an empty book', do: cmd.place(B, 'bid', 99, 1, { tif: IOC }), status: Expired,
        reason: ExpiryReason.ImmediateOrCancel, executed: 0, balances: [[B, QUOTE, START_QUOTE - 600, 0]] },
      { note: 'A asks IOC into an empty book', do: cmd.place(A, 'ask', 100, 1, { tif: IOC }), status: Expired,
        reason: ExpiryReason.ImmediateOrCancel, balances: [[A, BASE, START_BASE - 20, 0]], book: { bids: [], asks: [] } },
    ]);
  });

  it('FOK fills completely or not at all, counting only liquidity it could take', () => {
    runScenario(testConfig(), [
      { note: 'A asks 100 × 2', do: cmd.place(A, 'ask', 100, 2) },
      { note: 'C asks 101 × 2', do: cmd.place(C, 'ask', 101, 2) },
      { note: 'B bids FOK 101 × 5: only 4 available, killed', do: cmd.place(B, 'bid', 101, 5, { tif: FOK }), status: Expired,
        reason: ExpiryReason.FillOrKill, executed: 0, balances: [[B, QUOTE, START_QUOTE, 0]], book: { bids: [], asks: [[100, 2], [101, 2]] } },
      { note: 'B bids FOK 100 × 3: only 2 at or below 100, killed', do: cmd.place(B, 'bid', 100, 3, { tif: FOK }), status: Expired,
        reason: ExpiryReason.FillOrKill },
      { note: 'B bids FOK 101 × 4: fills across two levels', do: cmd.place(B, 'bid', 101, 4, { tif: FOK }), status: Filled,
        trades: [[100, 2], [101, 2]], balances: [[B, QUOTE, START_QUOTE - 1206, 0]], book: { bids: [], asks: [] } },
      { note: 'A asks 100 × 3', do: cmd.place(A, 'ask', 100, 3) },
      { note: 'B asks 100 × 1', do: cmd.place(B, 'ask', 100, 1), book: { bids: [], asks: [[100, 4]] } },
      { note: 'A bids FOK 100 × 4, RejectTaker: its own 3 lots block, killed', do: cmd.place(A, 'bid', 100, 4, { tif: FOK, stp: RejectTaker }),
        status: Expired, reason: ExpiryReason.FillOrKill, book: { bids: [], asks: [[100, 4]] } },
      { note: 'A bids FOK 100 × 2, RejectMaker: own lots skipped, only 1 other, killed, own ask kept',
        do: cmd.place(A, 'bid', 100, 2, { tif: FOK, stp: RejectMaker }), status: Expired, reason: ExpiryReason.FillOrKill,
        book: { bids: [], asks: [[100, 4]] } },
      { note: 'A bids FOK 100 × 1, RejectMaker: own ask cancelled, fills B', do: cmd.place(A, 'bid', 100, 1, { tif: FOK, stp: RejectMaker }),
        status: Filled, trades: [[100, 1]], book: { bids: [], asks: [] },
        check: (records) => {
          const cancelled = ordersOf(records).filter((o) => o.event === OrderEvent.Cancelled);
          expect(cancelled.map((o) => [o.accountId, OrderStatus[o.status], ExpiryReason[o.expiryReason]])).toEqual([[A, 'Cancelled', 'SelfTradePrevention']]);
        } },
    ]);
  });

  it('post-only never takes: a crossing one expires, a passive one rests', () => {
    runScenario(testConfig(), [
      { note: 'A asks 100 × 2', do: cmd.place(A, 'ask', 100, 2) },
      { note: 'B bids post-only 100 × 1: would take, expires', do: cmd.place(B, 'bid', 100, 1, { postOnly: true }), status: Expired,
        reason: ExpiryReason.PostOnlyTaker, executed: 0, balances: [[B, QUOTE, START_QUOTE, 0]], book: { bids: [], asks: [[100, 2]] } },
      { note: 'B bids post-only 99 × 1: rests', do: cmd.place(B, 'bid', 99, 1, { postOnly: true }), status: New,
        book: { bids: [[99, 1]], asks: [[100, 2]] },
        check: (records) => expect(ordersOf(records).at(-1)!.orderFlags & OrderFlag.PostOnly).toBe(OrderFlag.PostOnly) },
      { note: 'C asks post-only 99 × 1: would take, expires', do: cmd.place(C, 'ask', 99, 1, { postOnly: true }), status: Expired,
        reason: ExpiryReason.PostOnlyTaker, balances: [[C, BASE, START_BASE, 0]] },
    ]);
  });
});

describe('engine: self-trade prevention', () => {
  it('RejectTaker, RejectMaker and RejectBoth', () => {
    runScenario(testConfig(), [
      { note: 'A asks 100 × 1', do: cmd.place(A, 'ask', 100, 1) },
      { note: 'B asks 100 × 1', do: cmd.place(B, 'ask', 100, 1) },
      { note: 'A bids 100 × 2 RejectTaker: meets its own ask first, expires, ask untouched',
        do: cmd.place(A, 'bid', 100, 2, { stp: RejectTaker }), status: Expired, reason: ExpiryReason.SelfTradePrevention, executed: 0,
        balances: [[A, QUOTE, START_QUOTE, 0]], book: { bids: [], asks: [[100, 2]] } },
      { note: 'B bids 100 × 3 RejectTaker: fills A, then meets its own ask, remainder expires',
        do: cmd.place(B, 'bid', 100, 3, { stp: RejectTaker }), status: Expired, reason: ExpiryReason.SelfTradePrevention, executed: 1,
        trades: [[100, 1]], balances: [[B, BASE, START_BASE, 10], [B, QUOTE, START_QUOTE - 300, 0]], book: { bids: [], asks: [[100, 1]] } },
      { note: 'C asks 100 × 1, behind B', do: cmd.place(C, 'ask', 100, 1), book: { bids: [], asks: [[100, 2]] } },
      { note: 'B bids 100 × 2 RejectMaker: own ask cancelled, fills C, rests 1',
        do: cmd.place(B, 'bid', 100, 2, { stp: RejectMaker }), status: PartiallyFilled, executed: 1, trades: [[100, 1]],
        balances: [[B, BASE, START_BASE + 20, 0], [B, QUOTE, START_QUOTE - 900, 300]], book: { bids: [[100, 1]], asks: [] },
        check: (records) => {
          const cancelled = ordersOf(records).filter((o) => o.event === OrderEvent.Cancelled);
          expect(cancelled.map((o) => [o.accountId, o.side, ExpiryReason[o.expiryReason]])).toEqual([[B, Side.Ask, 'SelfTradePrevention']]);
        } },
      { note: 'D asks 101 × 1', do: cmd.place(D, 'ask', 101, 1) },
      { note: 'C asks 101 × 1', do: cmd.place(C, 'ask', 101, 1) },
      { note: 'D bids 101 × 1 RejectBoth: own ask cancelled and the bid expires',
        do: cmd.place(D, 'bid', 101, 1, { stp: RejectBoth }), status: Expired, reason: ExpiryReason.SelfTradePrevention, executed: 0,
        balances: [[D, BASE, START_BASE, 0], [D, QUOTE, START_QUOTE, 0]], book: { bids: [[100, 1]], asks: [[101, 1]] } },
    ]);
  });
});

describe('engine: an order\'s event carried in its answer', () => {
  const shape = (records: Rec[]): string[] => records.map((r) => r.type !== RecordType.Order
    ? RecordType[r.type]
    : `${OrderEvent[r.event]}${r.frontId === FRONT_ID_NONE ? '' : ' answer'}${(r.flags & HeaderFlag.Event) !== 0 ? ' (event)' : ''}`);

  it('writes one record where the event and the answer would repeat each other, and both where they differ', () => {
    const h = new EngineHarness(testConfig());
    fourAccounts(h);
    const rest = h.apply(cmd.place(A, 'bid', 100, 2));
    expect(shape(rest)).toEqual(['Balance', 'Depth', 'Accepted answer (event)']);
    const restId = ordersOf(rest)[0].orderId;
    // Nothing to meet: an IOC's orderAccepted and its orderExpired differ, and the answer carries the latter.
    expect(shape(h.apply(cmd.place(B, 'bid', 99, 1, { tif: IOC })))).toEqual(['Balance', 'Accepted', 'Balance', 'Expired answer (event)']);
    // A taker that fills: orderAccepted comes before its fills; the fill that ends it Filled rides in
    // its answer, after its balances.
    const taker = h.apply(cmd.place(B, 'ask', 100, 1));
    expect(shape(taker)).toEqual(['Balance', 'Accepted', 'Trade', 'Fill', 'Balance', 'Balance', 'Depth', 'Balance', 'Balance', 'Fill answer (event)']);
    const carried = ordersOf(taker).at(-1)!;
    const trade = taker.find((r) => r.type === RecordType.Trade)!;
    expect(carried).toMatchObject({ accountId: B, status: OrderStatus.Filled, executedQtyLots: 1, lastFillQtyLots: 1, lastFillPriceTicks: 100, flags: HeaderFlag.Last | HeaderFlag.Event });
    expect(carried.tradeId).toBe(trade.type === RecordType.Trade && trade.tradeId);
    expect(shape(h.apply(cmd.cancel(A, restId)))).toEqual(['Balance', 'Depth', 'Cancelled answer (event)']);
    // A taker that fills but does not end Filled writes its fill apart: a partial fill that rests.
    h.apply(cmd.place(A, 'bid', 100, 1));
    const partial = h.apply(cmd.place(B, 'ask', 100, 2));
    expect(shape(partial).filter((k) => !['Balance', 'Depth', 'Trade'].includes(k))).toEqual(['Accepted', 'Fill', 'Fill', 'None answer']);
    const resting = h.openOrders(B, M0);
    expect(resting).toHaveLength(1);
    h.apply(cmd.cancel(B, resting[0].orderId));
    // With the events apart (journals of format 4 and before), each is a record of its own.
    h.eventsInAnswers = false;
    expect(shape(h.apply(cmd.place(A, 'bid', 100, 2)))).toEqual(['Balance', 'Accepted', 'Depth', 'None answer']);
  });

  it('answers a place waiting out its speed bump with its orderCancelled when it is cancelled', () => {
    const h = new EngineHarness(testConfig({ speedBumpUs: 1_000 }));
    fourAccounts(h);
    const placed = h.apply(cmd.place(A, 'bid', 100, 2));
    expect(shape(placed)).toEqual(['Balance']);
    const pending = h.openOrders(A, M0)[0];
    // The place's answer carries the event; the cancel's own answer is the state alone.
    expect(shape(h.apply(cmd.cancel(A, pending.orderId)))).toEqual(['Balance', 'Cancelled answer (event)', 'None answer']);
  });
});

describe('engine: cancels', () => {
  it('cancels by order id or client id, only the owner, only in its market', () => {
    runScenario(testConfig(), [
      { note: 'A bids 100 × 2 with client id 7', do: cmd.place(A, 'bid', 100, 2, { clientId: 7 }), as: 'a', status: New },
      { note: 'A bids 99 × 1', do: cmd.place(A, 'bid', 99, 1), as: 'b', status: New, book: { bids: [[100, 2], [99, 1]], asks: [] } },
      { note: 'A cancels a by id', do: (ids) => cmd.cancel(A, ids.a), status: Cancelled, executed: 0,
        balances: [[A, QUOTE, START_QUOTE - 297, 297]], book: { bids: [[99, 1]], asks: [] } },
      { note: 'client id 7 is gone', do: cmd.cancelByClientId(A, 7), code: ResultCode.UnknownOrder },
      { note: "B cannot cancel A's order", do: (ids) => cmd.cancel(B, ids.b), code: ResultCode.UnknownOrder, book: { bids: [[99, 1]], asks: [] } },
      { note: 'wrong market', do: (ids) => cmd.cancel(A, ids.b, M1), code: ResultCode.UnknownOrder },
      { note: 'unknown id', do: cmd.cancel(A, 123456789), code: ResultCode.UnknownOrder },
      { note: 'unknown account', do: (ids) => cmd.cancel(99, ids.b), code: ResultCode.UnknownAccount },
      { note: 'unknown market', do: (ids) => cmd.cancel(A, ids.b, 77), code: ResultCode.UnknownMarket },
      { note: 'A bids 98 × 1 with client id 9', do: cmd.place(A, 'bid', 98, 1, { clientId: 9 }), status: New },
      { note: 'A cancels by client id 9', do: cmd.cancelByClientId(A, 9), status: Cancelled, book: { bids: [[99, 1]], asks: [] },
        check: (records) => {
          const response = ordersOf(records).at(-1)!;
          expect([response.clientId, response.orderFlags & OrderFlag.HasClientId]).toEqual([9, OrderFlag.HasClientId]);
        } },
      { note: 'A bids 97 × 3', do: cmd.place(A, 'bid', 97, 3), as: 'c' },
      { note: 'B asks 97 × 2: fills b at 99 and 1 of c at 97', do: cmd.place(B, 'ask', 97, 2), status: Filled, trades: [[99, 1], [97, 1]] },
      { note: 'A cancels the partly filled c', do: (ids) => cmd.cancel(A, ids.c), status: Cancelled, executed: 1,
        balances: [[A, QUOTE, START_QUOTE - 297 - 291, 0], [A, BASE, START_BASE + 20, 0]], book: { bids: [], asks: [] } },
    ]);
  });

  it('cancel-all cancels every open order of the account in one market', () => {
    runScenario(testConfig(), [
      { note: 'A bids 100 × 1', do: cmd.place(A, 'bid', 100, 1) },
      { note: 'A bids 99 × 1', do: cmd.place(A, 'bid', 99, 1) },
      { note: 'A asks 105 × 1', do: cmd.place(A, 'ask', 105, 1) },
      { note: 'A bids 50 × 1 in market 1', do: cmd.place(A, 'bid', 50, 1, { market: M1 }) },
      { note: 'B bids 98 × 1', do: cmd.place(B, 'bid', 98, 1), book: { bids: [[100, 1], [99, 1], [98, 1]], asks: [[105, 1]] } },
      { note: 'A cancels all in market 0', do: cmd.cancelAll(A, M0), code: ResultCode.Ok,
        balances: [[A, QUOTE, START_QUOTE - 150, 150], [A, BASE, START_BASE, 0]], book: { bids: [[98, 1]], asks: [] },
        check: (records, h) => {
          const addressed = records.filter((r) => r.frontId === FRONT);
          // Each order's answer carries its orderCancelled: no record of its own.
          expect(addressed.map((r) => [RecordType[r.type], r.flags])).toEqual([['Order', HeaderFlag.Event], ['Order', HeaderFlag.Event], ['Order', HeaderFlag.Event], ['Result', HeaderFlag.Last]]);
          expect(ordersOf(addressed).map((o) => o.event)).toEqual([OrderEvent.Cancelled, OrderEvent.Cancelled, OrderEvent.Cancelled]);
          expect(ordersOf(records).filter((o) => o.frontId === FRONT_ID_NONE)).toEqual([]);
          expect(ordersOf(addressed).map((o) => [o.priceTicks, OrderStatus[o.status]])).toEqual([[100, 'Cancelled'], [99, 'Cancelled'], [105, 'Cancelled']]);
          expect(resultOf(records).value).toBe(3);
          expect(h.openOrders(A, M1).map((o) => o.priceTicks)).toEqual([50]);
        } },
      { note: 'again: nothing left', do: cmd.cancelAll(A, M0), code: ResultCode.Ok, check: (records) => expect(resultOf(records).value).toBe(0) },
      { note: 'unknown market', do: cmd.cancelAll(A, 77), code: ResultCode.UnknownMarket },
      { note: 'unknown account', do: cmd.cancelAll(99, M0), code: ResultCode.UnknownAccount },
    ]);
  });
});

describe('engine: rejections change nothing', () => {
  const E = 5;
  const setup = (h: EngineHarness): void => {
    fourAccounts(h);
    h.createAccount(5);
    h.apply(cmd.deposit(E, QUOTE, 1000));
  };
  const rejections: [string, Parameters<EngineHarness['apply']>[0], ResultCode][] = [
    ['bid beyond available quote', cmd.place(E, 'bid', 100, 4), ResultCode.InsufficientFunds],
    ['ask without base', cmd.place(E, 'ask', 100, 1), ResultCode.InsufficientFunds],
    ['quantity 0', cmd.place(A, 'bid', 100, 0), ResultCode.QuantityBelowMinimum],
    ['negative quantity', cmd.place(A, 'bid', 100, -1), ResultCode.QuantityBelowMinimum],
    ['quantity above maximum', cmd.place(A, 'bid', 100, 1001), ResultCode.QuantityAboveMaximum],
    ['price 0', cmd.place(A, 'bid', 0, 1), ResultCode.PriceBelowMinimum],
    ['price above maximum', cmd.place(A, 'ask', 1001, 1), ResultCode.PriceAboveMaximum],
    ['fractional quantity', cmd.place(A, 'bid', 100, 1.5), ResultCode.InvalidCommand],
    ['market order with a price', cmd.place(A, 'bid', 100, 1, { orderType: OrderType.Market }), ResultCode.InvalidCommand],
    ['post-only market order', cmd.market(A, 'bid', { qtyLots: 1 }, { postOnly: true }), ResultCode.InvalidCommand],
    ['fill-or-kill market order', cmd.market(A, 'bid', { qtyLots: 1 }, { tif: FOK }), ResultCode.InvalidCommand],
    ['market order with quantity and quote quantity', cmd.market(A, 'bid', { qtyLots: 1, quoteQtyUnits: 300 }), ResultCode.InvalidCommand],
    ['market order with neither', cmd.market(A, 'bid', {}), ResultCode.InvalidCommand],
    ['market order with a negative quote quantity', cmd.market(A, 'bid', { quoteQtyUnits: -300 }), ResultCode.InvalidCommand],
    ['market order with a fractional quote quantity', cmd.market(A, 'bid', { quoteQtyUnits: 300.5 }), ResultCode.InvalidCommand],
    ['limit order with a quote quantity', { ...cmd.place(A, 'bid', 100, 1), quoteQtyUnits: 300 }, ResultCode.InvalidCommand],
    ['market quantity above maximum', cmd.market(A, 'ask', { qtyLots: 1001 }), ResultCode.QuantityAboveMaximum],
    ['market quote quantity below one lot at the minimum price', cmd.market(A, 'bid', { quoteQtyUnits: 2 }), ResultCode.QuantityBelowMinimum],
    ['market bid by quote beyond available quote', cmd.market(E, 'bid', { quoteQtyUnits: 1001 }), ResultCode.InsufficientFunds],
    ['market ask by quote without base', cmd.market(E, 'ask', { quoteQtyUnits: 300 }), ResultCode.InsufficientFunds],
    ['market ask by quantity beyond available base', cmd.market(A, 'ask', { qtyLots: 101 }), ResultCode.InsufficientFunds],
    ['unknown order type', cmd.place(A, 'bid', 100, 1, { orderType: 7 as OrderType }), ResultCode.InvalidCommand],
    ['post-only IOC', cmd.place(A, 'bid', 100, 1, { postOnly: true, tif: IOC }), ResultCode.InvalidCommand],
    ['reduce-only on spot', cmd.place(A, 'bid', 100, 1, { flags: CommandFlag.ReduceOnly }), ResultCode.InvalidCommand],
    ['trigger price (not in this version)', { ...cmd.place(A, 'bid', 100, 1), triggerPriceTicks: 2 ** 40 }, ResultCode.InvalidCommand],
    ['unknown side', { ...cmd.place(A, 'bid', 100, 1), side: 7 as Side }, ResultCode.InvalidCommand],
    ['unknown time in force', { ...cmd.place(A, 'bid', 100, 1), timeInForce: 9 as TimeInForce }, ResultCode.InvalidCommand],
    ['unknown self-trade mode', { ...cmd.place(A, 'bid', 100, 1), selfTradePrevention: 5 as SelfTradePrevention }, ResultCode.InvalidCommand],
    ['unknown market', cmd.place(A, 'bid', 100, 1, { market: 9 }), ResultCode.UnknownMarket],
    ['unknown account', cmd.place(99, 'bid', 100, 1), ResultCode.UnknownAccount],
    ['account 0', cmd.place(0, 'bid', 100, 1), ResultCode.UnknownAccount],
    ['deposit 0', cmd.deposit(A, QUOTE, 0), ResultCode.AmountOutOfRange],
    ['negative deposit', cmd.deposit(A, QUOTE, -5), ResultCode.AmountOutOfRange],
    ['fractional deposit', cmd.deposit(A, QUOTE, 1.5), ResultCode.AmountOutOfRange],
    ['deposit past the safe-integer range', cmd.deposit(A, QUOTE, Number.MAX_SAFE_INTEGER), ResultCode.AmountOutOfRange],
    ['deposit of an unknown asset', cmd.deposit(A, 9, 5), ResultCode.UnknownAsset],
    ['deposit to an unknown account', cmd.deposit(99, QUOTE, 5), ResultCode.UnknownAccount],
    ['duplicate key', cmd.createAccount(1), ResultCode.DuplicateKey],
    ['all-zero key', { kind: CommandKind.CreateAccount, key: new Uint8Array(32) }, ResultCode.InvalidCommand],
    ['31-byte key', { kind: CommandKind.CreateAccount, key: keyOf(77).subarray(1) }, ResultCode.InvalidCommand],
    ['unknown command kind', { kind: 63 as CommandKind }, ResultCode.InvalidCommand],
    ['unknown query kind', { kind: 119 as CommandKind }, ResultCode.InvalidCommand],
  ];

  const titled = rejections.map(([note, command, code]) => [`${note} → ${ResultCode[code]}`, command, code] as const);
  it.each(titled)('%s', (_title, command, code) => {
    const h = new EngineHarness(testConfig());
    setup(h);
    h.apply(cmd.place(A, 'bid', 90, 2));
    const before = h.exchange.stateHash();
    const records = h.apply(command);
    expect(records.map((r) => RecordType[r.type])).toEqual(['Result']);
    expect(ResultCode[resultOf(records).code]).toBe(ResultCode[code]);
    expect(records[0].flags).toBe(HeaderFlag.Last);
    expect([records[0].frontId, records[0].requestId]).toEqual([FRONT, h.lastRequestId()]);
    expect(h.exchange.stateHash()).toBe(before);
  });

  it('accepts deposits up to the safe-integer supply and refuses one unit more', () => {
    const h = new EngineHarness(testConfig());
    const a = h.createAccount(1);
    const b = h.createAccount(2);
    expect(resultOf(h.apply(cmd.deposit(a, BASE, Number.MAX_SAFE_INTEGER - 10))).code).toBe(ResultCode.Ok);
    expect(resultOf(h.apply(cmd.deposit(b, BASE, 10))).value).toBe(10);
    expect(resultOf(h.apply(cmd.deposit(b, BASE, 1))).code).toBe(ResultCode.AmountOutOfRange);
    expect(h.exchange.totalUnits(BASE)).toBe(Number.MAX_SAFE_INTEGER);
  });
});

describe('engine: limits', () => {
  it('open orders per account count resting and in-flight orders', () => {
    runScenario(testConfig({ limits: { maxOpenOrdersPerAccount: 3 } }), [
      { note: 'A bids 100', do: cmd.place(A, 'bid', 100, 1), as: 'a1' },
      { note: 'A bids 99', do: cmd.place(A, 'bid', 99, 1) },
      { note: 'A bids 98', do: cmd.place(A, 'bid', 98, 1) },
      { note: 'a fourth is refused', do: cmd.place(A, 'bid', 97, 1), code: ResultCode.OrderLimitReached, book: { bids: [[100, 1], [99, 1], [98, 1]], asks: [] } },
      { note: 'so is an IOC that would never rest', do: cmd.place(A, 'ask', 200, 1, { tif: IOC }), code: ResultCode.OrderLimitReached },
      { note: 'another account is not limited', do: cmd.place(B, 'bid', 97, 1), status: New },
      { note: 'A cancels one', do: (ids) => cmd.cancel(A, ids.a1), status: Cancelled },
      { note: 'and may place again', do: cmd.place(A, 'bid', 97, 1), status: New, book: { bids: [[99, 1], [98, 1], [97, 2]], asks: [] } },
    ]);
  });

  it('orders per book and price levels per side are bounded', () => {
    runScenario(testConfig({ limits: { maxOrdersPerBook: 5, maxPriceLevelsPerSide: 2 } }), [
      { note: 'A bids 100', do: cmd.place(A, 'bid', 100, 1) },
      { note: 'A bids 99', do: cmd.place(A, 'bid', 99, 1) },
      { note: 'a third bid level is refused', do: cmd.place(B, 'bid', 98, 1), code: ResultCode.BookFull },
      { note: 'an existing level is fine', do: cmd.place(B, 'bid', 99, 1) },
      { note: 'asks have their own levels', do: cmd.place(B, 'ask', 105, 1) },
      { note: 'an IOC bid below the book needs no level', do: cmd.place(C, 'bid', 50, 1, { tif: IOC }), status: Expired, reason: ExpiryReason.ImmediateOrCancel },
      { note: 'fifth order in the book', do: cmd.place(C, 'ask', 106, 1), book: { bids: [[100, 1], [99, 2]], asks: [[105, 1], [106, 1]] } },
      { note: 'sixth is refused', do: cmd.place(D, 'ask', 106, 1), code: ResultCode.BookFull },
      { note: 'another book is separate', do: cmd.place(D, 'ask', 106, 1, { market: M1 }), status: New },
    ]);
  });

  it('accounts are bounded and keys unique', () => {
    const h = new EngineHarness(testConfig({ limits: { maxAccounts: 2 } }));
    expect(h.createAccount(1)).toBe(1);
    expect(resultOf(h.apply(cmd.createAccount(1))).code).toBe(ResultCode.DuplicateKey);
    expect(h.createAccount(2)).toBe(2);
    expect(resultOf(h.apply(cmd.createAccount(3))).code).toBe(ResultCode.AccountLimitReached);
  });

  it('a pending GTC order reserves a price level; pending orders count as open', () => {
    const config = testConfig({ speedBumpUs: 1000, limits: { maxPriceLevelsPerSide: 2, maxOpenOrdersPerAccount: 2 } });
    runScenario(config, [
      { note: 'A post-only bids 100', do: cmd.place(A, 'bid', 100, 1, { postOnly: true }), status: New },
      { note: 'B bids 90, delayed: reserves a level', do: cmd.place(B, 'bid', 90, 1), status: null },
      { note: 'C post-only bid at a new price is refused', do: cmd.place(C, 'bid', 80, 1, { postOnly: true }), code: ResultCode.BookFull },
      { note: 'C post-only at an existing price is fine', do: cmd.place(C, 'bid', 100, 1, { postOnly: true }), status: New },
      { note: 'B bids 90 again, delayed', do: cmd.place(B, 'bid', 90, 1), status: null,
        code: ResultCode.BookFull },
      { note: 'B asks IOC, delayed (IOC reserves no level)', do: cmd.place(B, 'ask', 500, 1, { tif: IOC }), status: null },
      { note: 'B has two pending orders: a third is refused', do: cmd.place(B, 'ask', 500, 1, { postOnly: true }), code: ResultCode.OrderLimitReached },
      { note: 'both activate', at: 1000, do: cmd.tick(), responses: {}, book: { bids: [[100, 2], [90, 1]], asks: [] },
        check: (records) => expect(ordersOf(records).filter((o) => o.frontId === FRONT).map((o) => OrderStatus[o.status])).toEqual(['New', 'Expired']) },
    ]);
  });
});

describe('engine: speed bump', () => {
  const BUMP = 100_000;
  it('delays non-post-only orders until a command at or after their activation time', () => {
    const h = runScenario(testConfig({ speedBumpUs: BUMP }), [
      { note: 'A post-only asks 100 × 2 at t0: not delayed', at: 0, do: cmd.place(A, 'ask', 100, 2, { postOnly: true }), status: New },
      { note: 'B bids 100 × 1 at t0: pending, funds locked, no response yet', at: 0, do: cmd.place(B, 'bid', 100, 1), as: 'b1', status: null,
        balances: [[B, QUOTE, START_QUOTE - 300, 300]], book: { bids: [], asks: [[100, 2]] },
        check: (records, h) => {
          expect(records.map((r) => RecordType[r.type])).toEqual(['Balance']);
          expect(h.exchange.nextWakeUs()).toBe(h.timeUs + BUMP);
          expect(h.openOrders(B).map((o) => OrderStatus[o.status])).toEqual(['New']);
        } },
      { note: 'A post-only asks 100 × 1 at t0+50ms', at: 50_000, do: cmd.place(A, 'ask', 100, 1, { postOnly: true }), status: New,
        book: { bids: [], asks: [[100, 3]] } },
      { note: 'a tick 1 µs early activates nothing', at: BUMP - 1, do: cmd.tick(), check: (records) => expect(records).toEqual([]) },
      { note: 'any command at t0+100ms activates b1 first', at: BUMP, do: cmd.deposit(C, QUOTE, 5), code: ResultCode.Ok,
        responses: { b1: Filled }, trades: [[100, 1]], book: { bids: [], asks: [[100, 2]] },
        check: (records, h) => {
          expect(records.every((r) => r.seq === h.seq && r.timeUs === h.timeUs)).toBe(true);
          expect(RecordType[records.at(-1)!.type]).toBe('Result');
          expect(ordersOf(records)[0].event).toBe(OrderEvent.Accepted);
          expect(ordersOf(records)[0].createdAtUs).toBe(h.timeUs - BUMP);
        } },
      { note: 'C bids with client id 5: pending', at: BUMP, do: cmd.place(C, 'bid', 100, 1, { clientId: 5 }), as: 'c1', status: null },
      { note: 'C cancels it during the delay', at: BUMP + 10, do: cmd.cancelByClientId(C, 5), status: Cancelled,
        responses: { c1: Cancelled }, balances: [[C, QUOTE, START_QUOTE + 5, 0]],
        check: (records) => expect(depthsOf(records)).toEqual([]) },
      { note: 'its activation time passes: nothing happens', at: 3 * BUMP, do: cmd.tick(),
        check: (records, h) => {
          expect(records).toEqual([]);
          expect(h.exchange.nextWakeUs()).toBe(-1);
        } },
      { note: 'D bids at t3', at: 3 * BUMP, do: cmd.place(D, 'bid', 100, 1), as: 'd1', status: null },
      { note: 'B bids 1 µs later', at: 3 * BUMP + 1, do: cmd.place(B, 'bid', 100, 1), as: 'd2', status: null },
      { note: 'one tick activates both, in sequence order', at: 4 * BUMP + 1, do: cmd.tick(), responses: { d1: Filled, d2: Filled },
        trades: [[100, 1], [100, 1]], book: { bids: [], asks: [] },
        check: (records) => expect(tradesOf(records).map((t) => t.buyerOrderId)).toEqual(ordersOf(records).filter((o) => o.frontId === FRONT).map((o) => o.orderId)) },
      { note: 'D bids IOC: delayed too', at: 4 * BUMP + 1, do: cmd.place(D, 'bid', 100, 1, { tif: IOC }), as: 'd3', status: null },
      { note: 'D reads the pending order id from its open orders', do: cmd.queryOpenOrders(D, M0),
        check: (records, _h, ids) => {
          const rows = ordersOf(records);
          expect(rows.length).toBe(1);
          ids.pending = rows[0].orderId;
        } },
      { note: 'and cancels it by id', do: (ids) => cmd.cancel(D, ids.pending), status: Cancelled, responses: { d3: Cancelled } },
      { note: 'D bids IOC again, delayed', at: 5 * BUMP, do: cmd.place(D, 'bid', 100, 1, { tif: IOC }), as: 'd4', status: null },
      { note: 'it activates into an empty book and expires', at: 6 * BUMP, do: cmd.tick(), responses: { d4: Expired } },
    ]);
    expect(h.exchange.nextWakeUs()).toBe(-1);
  });

  it('queries do not activate pending orders', () => {
    const h = new EngineHarness(testConfig({ speedBumpUs: BUMP }));
    fourAccounts(h);
    h.apply(cmd.place(A, 'bid', 100, 1));
    const wake = h.exchange.nextWakeUs();
    h.timeUs = wake + 5;
    const records = h.apply(cmd.queryOpenOrders(A, M0));
    expect(ordersOf(records).map((o) => o.event)).toEqual([OrderEvent.None]);
    expect(h.exchange.nextWakeUs()).toBe(wake);
  });
});

describe('engine: update and trade ids', () => {
  it('depth update ids advance once per market per command, trade ids count per market', () => {
    const h = new EngineHarness(testConfig({ speedBumpUs: 50 }));
    fourAccounts(h);
    const ids = (records: Rec[], marketId: number) => depthsOf(records).filter((d) => d.marketId === marketId).map((d) => d.updateId);
    const tradeIds = (records: Rec[]) => tradesOf(records).map((t) => [t.marketId, t.tradeId]);
    expect(ids(h.apply(cmd.place(A, 'ask', 100, 1, { postOnly: true })), M0)).toEqual([1]);
    expect(ids(h.apply(cmd.place(A, 'ask', 101, 1, { postOnly: true })), M0)).toEqual([2]);
    expect(ids(h.apply(cmd.place(A, 'ask', 50, 1, { market: M1, postOnly: true })), M1)).toEqual([1]);
    expect(ids(h.apply(cmd.place(B, 'ask', 101, 1, { postOnly: true })), M0)).toEqual([3]);
    // A rejected command and a query change no book: no depth records, no id used.
    expect(depthsOf(h.apply(cmd.place(B, 'ask', 0, 1)))).toEqual([]);
    // Two delayed takers in two markets activate in one apply: each market advances once, and a
    // taker sweeping two levels writes three depth records under one id.
    h.apply(cmd.place(C, 'bid', 101, 3));
    h.apply(cmd.place(C, 'bid', 50, 1, { market: M1 }));
    const activation = h.apply(cmd.tick(), h.timeUs + 50);
    expect(ids(activation, M0)).toEqual([4, 4, 4]);
    expect(ids(activation, M1)).toEqual([2]);
    expect(tradeIds(activation)).toEqual([[M0, 1], [M0, 2], [M0, 3], [M1, 1]]);
    expect(ids(h.apply(cmd.place(D, 'ask', 100, 1, { postOnly: true })), M0)).toEqual([5]);
    expect(ids(h.apply(cmd.place(C, 'bid', 100, 1)), M0)).toEqual([]); // delayed: no book change yet
    const later = h.apply(cmd.tick(), h.timeUs + 50);
    expect(ids(later, M0)).toEqual([6]);
    expect(tradeIds(later)).toEqual([[M0, 4]]);
    const snapshot = h.apply(cmd.querySnapshot());
    expect(snapshot.filter((r) => r.type === RecordType.Market).map((r) => r.type === RecordType.Market && [r.marketId, r.updateId, r.lastTradeId])).toEqual([[M0, 6, 4], [M1, 2, 1]]);
  });
});

describe('engine: output records', () => {
  it('emits the documented sequence for a crossing order', () => {
    const h = new EngineHarness(testConfig());
    fourAccounts(h);
    h.apply(cmd.place(A, 'ask', 100, 1));
    h.apply(cmd.place(B, 'ask', 100, 1));
    const seq = h.seq + 1;
    const records = h.apply(cmd.place(C, 'bid', 100, 3, { clientId: 11 }), h.timeUs + 7);
    const requestId = h.lastRequestId();
    const shape = (r: Rec): string => {
      if (r.type === RecordType.Order) return `order ${OrderEvent[r.event]} ${r.accountId}${(r.orderFlags & OrderFlag.IsMaker) !== 0 ? ' maker' : ''}`;
      if (r.type === RecordType.Balance) return `balance ${r.accountId}/${r.assetId}`;
      if (r.type === RecordType.Depth) return `depth ${Side[r.side]} ${r.priceTicks}=${r.qtyLots}`;
      return RecordType[r.type];
    };
    expect(records.map(shape)).toEqual([
      `balance ${C}/${QUOTE}`,
      `order Accepted ${C}`,
      'Trade', `order Fill ${A} maker`, `order Fill ${C}`,
      `balance ${A}/${BASE}`, `balance ${A}/${QUOTE}`,
      'depth Ask 100=1',
      'Trade', `order Fill ${B} maker`, `order Fill ${C}`,
      `balance ${B}/${BASE}`, `balance ${B}/${QUOTE}`,
      'depth Ask 100=0',
      'depth Bid 100=1',
      // The taker's balances once, as its match ended, with what it holds after both fills.
      `balance ${C}/${BASE}`, `balance ${C}/${QUOTE}`,
      `order None ${C}`,
    ]);
    const takerBalances = records.filter((r) => r.type === RecordType.Balance && r.accountId === C).slice(1);
    expect(takerBalances.map((r) => r.type === RecordType.Balance && [r.assetId, r.availableUnits, r.lockedUnits])).toEqual(
      [BASE, QUOTE].map((asset) => [asset, ...h.balance(C, asset)]),
    );
    for (const r of records) {
      expect([r.seq, r.timeUs]).toEqual([seq, h.timeUs]);
      const addressed = r === records.at(-1);
      expect([r.frontId, r.requestId, r.flags]).toEqual(addressed ? [FRONT, requestId, HeaderFlag.Last] : [FRONT_ID_NONE, 0, 0]);
    }
    const depthIds = new Set(depthsOf(records).map((d) => d.updateId));
    expect(depthIds.size).toBe(1);
    const trades = records.filter((r) => r.type === RecordType.Trade);
    expect(trades.map((t) => (t.type === RecordType.Trade ? [t.tradeId, t.buyerIsMaker, t.marketId] : []))).toEqual([[1, false, M0], [2, false, M0]]);
    const orders = ordersOf(records);
    const takerFills = orders.filter((o) => o.event === OrderEvent.Fill && o.accountId === C);
    expect(takerFills.map((o) => [o.lastFillQtyLots, o.lastFillPriceTicks, o.tradeId, o.executedQtyLots, o.executedQuoteUnits, OrderStatus[o.status]])).toEqual([
      [1, 100, 1, 1, 300, 'PartiallyFilled'],
      [1, 100, 2, 2, 600, 'PartiallyFilled'],
    ]);
    const makerFill = orders.find((o) => o.event === OrderEvent.Fill && o.accountId === A)!;
    expect([OrderStatus[makerFill.status], makerFill.feeAssetId, makerFill.feeUnits]).toEqual(['Filled', QUOTE, 0]);
    const response = orders.at(-1)!;
    expect(response).toMatchObject({
      accountId: C, clientId: 11, marketId: M0, side: Side.Bid, orderType: OrderType.Limit, priceTicks: 100, qtyLots: 3,
      executedQtyLots: 2, executedQuoteUnits: 600, quoteQtyUnits: 0, status: PartiallyFilled, feeAssetId: BASE,
      createdAtUs: h.timeUs, timeInForce: GTC, selfTradePrevention: RejectTaker, orderFlags: OrderFlag.HasClientId,
    });
    expect(orders.every((o) => o.orderId === response.orderId || o.accountId !== C)).toBe(true);
  });

  it('writes the taker\'s balances after each of its fills with the taker\'s summary off (journals of format 5 and before)', () => {
    const shapes = (once: boolean): string[] => {
      const h = new EngineHarness(testConfig());
      h.takerSummary = once;
      fourAccounts(h);
      h.apply(cmd.place(A, 'ask', 100, 1));
      h.apply(cmd.place(B, 'ask', 101, 1));
      // An IOC that fills twice, then expires its remainder: it releases its lock after the fills.
      const records = h.apply(cmd.place(C, 'bid', 101, 3, { tif: IOC }));
      expect(h.balance(C, QUOTE)[1]).toBe(0);
      return records.filter((r) => r.type === RecordType.Balance && r.accountId === C).map((r) => `${r.type === RecordType.Balance && r.assetId}`);
    };
    // The lock, each fill's base and quote, the release; or the lock, then base and quote once.
    expect(shapes(false)).toEqual([`${QUOTE}`, `${BASE}`, `${QUOTE}`, `${BASE}`, `${QUOTE}`, `${QUOTE}`]);
    expect(shapes(true)).toEqual([`${QUOTE}`, `${BASE}`, `${QUOTE}`]);
  });

  it('account and deposit events go to everyone, their results to the request', () => {
    const h = new EngineHarness(testConfig());
    const created = h.apply(cmd.createAccount(1));
    expect(created.map((r) => [RecordType[r.type], r.frontId, r.flags])).toEqual([['Account', FRONT_ID_NONE, 0], ['Result', FRONT, HeaderFlag.Last]]);
    expect(created[0].type === RecordType.Account && Array.from(created[0].key)).toEqual(Array.from(keyOf(1)));
    expect(resultOf(created).value).toBe(1);
    const deposited = h.apply(cmd.deposit(1, BASE, 25));
    expect(deposited.map((r) => [RecordType[r.type], r.frontId])).toEqual([['Balance', FRONT_ID_NONE], ['Result', FRONT]]);
    expect(deposited[0]).toMatchObject({ accountId: 1, assetId: BASE, availableUnits: 25, lockedUnits: 0 });
  });
});

describe('engine: queries', () => {
  it('answer from live state, addressed, and change nothing', () => {
    const h = new EngineHarness(testConfig({ speedBumpUs: 10 }));
    fourAccounts(h);
    h.apply(cmd.place(A, 'bid', 100, 1, { clientId: 3, postOnly: true }));
    h.apply(cmd.place(A, 'ask', 110, 2, { postOnly: true }));
    h.apply(cmd.place(A, 'bid', 50, 1, { market: M1, postOnly: true }));
    h.apply(cmd.place(A, 'bid', 90, 1)); // pending
    h.apply(cmd.place(B, 'ask', 120, 1, { postOnly: true }));
    const before = h.exchange.stateHash();
    const wake = h.exchange.nextWakeUs();

    const balances = h.apply(cmd.queryBalances(A));
    expect(balances.map((r) => [RecordType[r.type], r.flags, r.seq])).toEqual([
      ['Balance', 0, h.seq], ['Balance', 0, h.seq], ['Balance', 0, h.seq], ['Result', HeaderFlag.Last, h.seq],
    ]);
    expect(resultOf(balances).value).toBe(3);
    const fresh = h.createAccount(9);
    expect(h.balances(fresh)).toEqual(new Map([[QUOTE, [0, 0]], [BASE, [0, 0]], [OTHER, [0, 0]]]));
    const afterCreate = h.exchange.stateHash();
    expect(afterCreate).not.toBe(before);

    const open = h.apply(cmd.queryOpenOrders(A, M0));
    expect(ordersOf(open).map((o) => [o.priceTicks, OrderStatus[o.status], o.frontId])).toEqual([[100, 'New', FRONT], [110, 'New', FRONT], [90, 'New', FRONT]]);
    expect(resultOf(open).value).toBe(3);
    expect(resultOf(h.apply(cmd.queryOpenOrders(A, ALL_MARKETS))).value).toBe(4);
    expect(resultOf(h.apply(cmd.queryOpenOrders(A, 77))).code).toBe(ResultCode.UnknownMarket);
    expect(resultOf(h.apply(cmd.queryOpenOrders(99, M0))).code).toBe(ResultCode.UnknownAccount);

    const byClient = h.apply(cmd.queryOrderByClientId(A, 3));
    expect(byClient.map((r) => [RecordType[r.type], r.flags])).toEqual([['Order', HeaderFlag.Last]]);
    const orderId = ordersOf(byClient)[0].orderId;
    expect(ordersOf(h.apply(cmd.queryOrder(A, orderId)))[0].priceTicks).toBe(100);
    expect(resultOf(h.apply(cmd.queryOrder(B, orderId))).code).toBe(ResultCode.UnknownOrder);
    expect(resultOf(h.apply(cmd.queryOrder(A, orderId, M1))).code).toBe(ResultCode.UnknownOrder);
    expect(resultOf(h.apply(cmd.queryOrderByClientId(A, 4))).code).toBe(ResultCode.UnknownOrder);

    const snapshot = h.apply(cmd.querySnapshot());
    expect(snapshot.every((r) => r.frontId === FRONT)).toBe(true);
    expect(snapshot.filter((r) => (r.flags & HeaderFlag.Last) !== 0)).toEqual([snapshot.at(-1)]);
    expect(snapshot.filter((r) => r.type === RecordType.Account).map((r) => r.type === RecordType.Account && r.accountId)).toEqual([1, 2, 3, 4, 5]);
    const markets = snapshot.filter((r) => r.type === RecordType.Market);
    expect(markets.map((r) => r.type === RecordType.Market && [r.marketId, r.updateId, r.lastTradeId])).toEqual([[M0, 3, 0], [M1, 1, 0]]);
    const depth = depthsOf(snapshot);
    expect(depth.map((d) => [d.marketId, Side[d.side], d.priceTicks, d.qtyLots, d.updateId])).toEqual([
      [M0, 'Bid', 100, 1, 3], [M0, 'Ask', 110, 2, 3], [M0, 'Ask', 120, 1, 3], [M1, 'Bid', 50, 1, 1],
    ]);
    expect(resultOf(snapshot).value).toBe(snapshot.length - 1);
    expect(h.exchange.stateHash()).toBe(afterCreate);
    expect(h.exchange.nextWakeUs()).toBe(wake);
  });
});
