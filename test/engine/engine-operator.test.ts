// Scenario tables for the operator commands of the engine core (engine/core/operator.ts): order
// book states and what each refuses, what closing does to resting and speed-bumped orders, fee
// rates per account; and the quote-quantity market order whose last fill event must agree with
// its final status. Same units as test/engine/engine.test.ts: one lot = 10 base units, one tick × one lot
// = 3 quote units. Every line also runs the invariant checker and the conservation check.
import { describe, expect, it } from 'vitest';
import { ExpiryReason, FRONT_ID_NONE, HeaderFlag, OrderBookState, OrderEvent, OrderStatus, OrderType, RecordType, ResultCode } from '../../engine/bus/types.js';
import { BASE, EngineHarness, FRONT, M1, QUOTE, cmd, ordersOf, testConfig, type Rec } from '../helpers/engine-harness.js';
import { A, B, C, D, START_BASE, START_QUOTE, fourAccounts, runScenario } from '../helpers/engine-scenario.js';

const { New, PartiallyFilled, Filled, Cancelled, Expired } = OrderStatus;
const { Open, Closed, CancelOnly, LimitOnly, PostOnly } = OrderBookState;

function stateEvents(records: Rec[]): Array<[number, OrderBookState]> {
  return records.filter((r) => r.type === RecordType.MarketState && r.frontId === FRONT_ID_NONE).map((r) => [(r as { marketId: number }).marketId, (r as { state: OrderBookState }).state]);
}

function resultValue(records: Rec[]): number {
  const result = records.find((r) => r.type === RecordType.Result && r.frontId === FRONT);
  return (result as { value: number }).value;
}

describe('engine: order book states', () => {
  it('each state refuses exactly the places it does not take; cancels always work', () => {
    runScenario(testConfig(), [
      { note: 'A bids 100 × 2 (rests)', do: cmd.place(A, 'bid', 100, 2), as: 'a', status: New },
      { note: 'operator: CancelOnly', do: cmd.setMarketState(0, CancelOnly), book: { bids: [[100, 2]], asks: [] },
        check: (records) => expect(stateEvents(records)).toEqual([[0, CancelOnly]]) },
      { note: 'CancelOnly: a post-only limit is refused', do: cmd.place(B, 'ask', 110, 1, { postOnly: true }), code: ResultCode.MarketCancelOnly },
      { note: 'CancelOnly: a market order is refused', do: cmd.market(B, 'ask', { qtyLots: 1 }), code: ResultCode.MarketCancelOnly },
      { note: 'CancelOnly: the other market still trades', do: cmd.place(B, 'ask', 110, 1, { market: M1 }), status: New },
      { note: 'CancelOnly: a malformed place is still InvalidCommand (shape first)', do: cmd.place(B, 'ask', 110, 1, { postOnly: true, tif: 1 }), code: ResultCode.InvalidCommand },
      { note: 'CancelOnly: A cancels its resting bid', do: (ids) => cmd.cancel(A, ids.a), status: Cancelled, book: { bids: [], asks: [] },
        balances: [[A, QUOTE, START_QUOTE, 0]] },
      { note: 'operator: LimitOnly', do: cmd.setMarketState(0, LimitOnly) },
      { note: 'LimitOnly: a market order is refused', do: cmd.market(B, 'bid', { quoteQtyUnits: 300 }), code: ResultCode.MarketLimitOnly },
      { note: 'LimitOnly: a GTC limit rests', do: cmd.place(B, 'ask', 105, 2), status: New, book: { bids: [], asks: [[105, 2]] } },
      { note: 'LimitOnly: an IOC limit takes', do: cmd.place(C, 'bid', 105, 1, { tif: 1 }), status: Filled, trades: [[105, 1]] },
      { note: 'operator: PostOnly', do: cmd.setMarketState(0, PostOnly) },
      { note: 'PostOnly: a limit without postOnly is refused', do: cmd.place(C, 'bid', 105, 1), code: ResultCode.MarketPostOnly },
      { note: 'PostOnly: a market order is refused', do: cmd.market(C, 'bid', { qtyLots: 1 }), code: ResultCode.MarketPostOnly },
      { note: 'PostOnly: a post-only bid rests', do: cmd.place(C, 'bid', 104, 1, { postOnly: true }), status: New,
        book: { bids: [[104, 1]], asks: [[105, 1]] } },
      { note: 'PostOnly: a crossing post-only bid expires as usual', do: cmd.place(C, 'bid', 105, 1, { postOnly: true }), status: Expired,
        reason: ExpiryReason.PostOnlyTaker },
      { note: 'operator: Open again', do: cmd.setMarketState(0, Open) },
      { note: 'Open: a market order trades', do: cmd.market(D, 'bid', { qtyLots: 1 }), status: Filled, trades: [[105, 1]] },
      { note: 'operator: an unknown state value', do: cmd.setMarketState(0, 5), code: ResultCode.InvalidOrderBookState },
      { note: 'operator: a fractional state value', do: cmd.setMarketState(0, 1.5), code: ResultCode.InvalidOrderBookState },
      { note: 'operator: an unknown market', do: cmd.setMarketState(9, Closed), code: ResultCode.UnknownMarket },
      { note: 'nothing changed: a limit still rests', do: cmd.place(D, 'ask', 120, 1), status: New },
    ]);
  });

  it('closing cancels every open order of the market, pending first, then bids best first, then asks', () => {
    const BUMP = 100_000;
    runScenario(testConfig({ speedBumpUs: BUMP }), [
      { note: 'A post-only bids 99 × 1', at: 0, do: cmd.place(A, 'bid', 99, 1, { postOnly: true }), as: 'a99', status: New },
      { note: 'B post-only bids 100 × 2', at: 0, do: cmd.place(B, 'bid', 100, 2, { postOnly: true }), as: 'b100', status: New },
      { note: 'C post-only asks 110 × 3', at: 0, do: cmd.place(C, 'ask', 110, 3, { postOnly: true }), as: 'c110', status: New },
      { note: 'D post-only bids 100 × 1 on the other market', at: 0, do: cmd.place(D, 'bid', 100, 1, { postOnly: true, market: M1 }), status: New },
      { note: 'D bids 101 × 1 (pending behind the bump)', at: 10, do: cmd.place(D, 'bid', 101, 1), as: 'd101', status: null,
        balances: [[D, QUOTE, START_QUOTE - 300 - 303, 300 + 303]] },
      { note: 'operator: Closed at 20 µs', at: 20, do: cmd.setMarketState(0, Closed), responses: { d101: Cancelled },
        book: { bids: [], asks: [] },
        balances: [[A, QUOTE, START_QUOTE, 0], [B, QUOTE, START_QUOTE, 0], [C, BASE, START_BASE, 0], [D, QUOTE, START_QUOTE - 300, 300]],
        check: (records, _h, ids) => {
          const cancelled = ordersOf(records).filter((o) => o.event === OrderEvent.Cancelled);
          expect(cancelled.map((o) => o.orderId)).toEqual([ids.d101, ids.b100, ids.a99, ids.c110]);
          expect(cancelled.every((o) => o.status === Cancelled && o.expiryReason === ExpiryReason.OrderBookClosed)).toBe(true);
          expect(resultValue(records)).toBe(4);
          expect(stateEvents(records)).toEqual([[0, Closed]]);
          // The state event comes after the cancels, the result last.
          expect(records.at(-2)!.type).toBe(RecordType.MarketState);
          expect(records.at(-1)!.type).toBe(RecordType.Result);
        } },
      { note: 'Closed: a post-only place is refused', at: 30, do: cmd.place(A, 'bid', 99, 1, { postOnly: true }), code: ResultCode.MarketClosed },
      { note: 'Closed: cancel of a gone order: UnknownOrder', at: 30, do: (ids) => cmd.cancel(A, ids.a99), code: ResultCode.UnknownOrder },
      { note: 'Closed: cancel-all answers zero', at: 30, do: cmd.cancelAll(A), check: (records) => expect(resultValue(records)).toBe(0) },
      { note: 'the bump ends: nothing was pending any more', at: BUMP + 20, do: cmd.tick(), trades: [] },
      { note: 'operator: Open again; the other market kept its order', at: BUMP + 30, do: cmd.setMarketState(0, Open),
        book: { bids: [[100, 1]], asks: [], market: M1 } },
    ]);
  });

  it('a new state cancels exactly the pending orders it would refuse; those due first activate under the old one', () => {
    const BUMP = 100_000;
    runScenario(testConfig({ speedBumpUs: BUMP }), [
      { note: 'A post-only asks 100 × 5', at: 0, do: cmd.place(A, 'ask', 100, 5, { postOnly: true }), status: New },
      { note: 'B bids 100 × 1 at 0 (pending)', at: 0, do: cmd.place(B, 'bid', 100, 1), as: 'early', status: null },
      { note: 'C market-buys 1 lot at 50 µs (pending)', at: 50, do: cmd.market(C, 'bid', { qtyLots: 1 }), as: 'market', status: null },
      { note: 'D bids 99 × 1 at 60 µs (pending)', at: 60, do: cmd.place(D, 'bid', 99, 1), as: 'limit', status: null },
      { note: 'operator: LimitOnly at the end of the first bump: B activates first, then C is cancelled, D stays',
        at: BUMP, do: cmd.setMarketState(0, LimitOnly), responses: { early: Filled, market: Cancelled }, trades: [[100, 1]],
        balances: [[C, QUOTE, START_QUOTE, 0]],
        check: (records) => expect(resultValue(records)).toBe(1) },
      { note: 'D activates under LimitOnly and rests', at: BUMP + 60, do: cmd.tick(), responses: { limit: New },
        book: { bids: [[99, 1]], asks: [[100, 4]] } },
      { note: 'operator: PostOnly cancels nothing resting', at: BUMP + 70, do: cmd.setMarketState(0, PostOnly),
        book: { bids: [[99, 1]], asks: [[100, 4]] }, check: (records) => expect(resultValue(records)).toBe(0) },
      { note: 'B bids 100 × 1 under PostOnly: refused', at: BUMP + 80, do: cmd.place(B, 'bid', 100, 1), code: ResultCode.MarketPostOnly },
      { note: 'operator: Open', at: BUMP + 90, do: cmd.setMarketState(0, Open) },
      { note: 'B bids 100 × 2 (pending)', at: BUMP + 100, do: cmd.place(B, 'bid', 100, 2), as: 'cancelOnly', status: null },
      { note: 'operator: CancelOnly cancels the pending bid, keeps the resting orders', at: BUMP + 110, do: cmd.setMarketState(0, CancelOnly),
        responses: { cancelOnly: Cancelled }, book: { bids: [[99, 1]], asks: [[100, 4]] } },
    ]);
  });

  it('a snapshot reports every market state, and the state is part of the state hash', () => {
    const h = new EngineHarness(testConfig());
    fourAccounts(h);
    const before = h.exchange.stateHash();
    h.apply(cmd.setMarketState(M1, PostOnly));
    expect(h.exchange.stateHash()).not.toBe(before);
    const rows = h.apply(cmd.querySnapshot()).filter((r) => r.type === RecordType.MarketState);
    expect(rows.map((r) => [(r as { marketId: number }).marketId, (r as { state: number }).state, r.frontId])).toEqual([[0, Open, FRONT], [M1, PostOnly, FRONT]]);
    h.apply(cmd.setMarketState(M1, Open));
    expect(h.exchange.stateHash()).toBe(before);
  });
});

describe('engine: fee rates per account', () => {
  it('SetFeeRates changes the rates of later fills, resting orders included; QueryFeeRates reads them', () => {
    // Defaults: maker 2 bps, taker 5 bps would round to 0 on these small amounts; use large rates.
    runScenario(testConfig({ makerFeeBps: 100, takerFeeBps: 200 }), [
      { note: 'A asks 100 × 10 (rests; 10 lots = 100 base units)', do: cmd.place(A, 'ask', 100, 10), status: New },
      { note: 'B buys 5 at 100: A maker 1% of 1500 quote = 15, B taker 2% of 50 base = 1', do: cmd.place(B, 'bid', 100, 5), status: Filled,
        trades: [[100, 5]], balances: [[A, QUOTE, START_QUOTE + 1485, 0], [B, BASE, START_BASE + 49, 0]] },
      { note: 'operator: A maker 0, taker 0', do: cmd.setFeeRates(A, 0, 0),
        check: (records) => {
          const rates = records.find((r) => r.type === RecordType.FeeRates)!;
          expect(rates).toMatchObject({ accountId: A, makerFeeBps: 0, takerFeeBps: 0, frontId: FRONT, flags: 0 });
        } },
      { note: 'operator: B maker 10000 (all), taker 1000', do: cmd.setFeeRates(B, 10_000, 1_000) },
      { note: 'B buys 5 more from A\'s resting ask: A pays nothing now, B pays 10% of 50 = 5', do: cmd.place(B, 'bid', 100, 5), status: Filled,
        trades: [[100, 5]], balances: [[A, QUOTE, START_QUOTE + 1485 + 1500, 0], [B, BASE, START_BASE + 49 + 45, 0]] },
      { note: 'query B', do: cmd.queryFeeRates(B),
        check: (records) => expect(records).toMatchObject([{ type: RecordType.FeeRates, accountId: B, makerFeeBps: 10_000, takerFeeBps: 1_000, flags: HeaderFlag.Last }]) },
      { note: 'query C: still the defaults', do: cmd.queryFeeRates(C),
        check: (records) => expect(records).toMatchObject([{ accountId: C, makerFeeBps: 100, takerFeeBps: 200 }]) },
      { note: 'query an unknown account', do: cmd.queryFeeRates(42), code: ResultCode.UnknownAccount },
      { note: 'operator: unknown account', do: cmd.setFeeRates(42, 1, 1), code: ResultCode.UnknownAccount },
      { note: 'operator: a rate above 10000', do: cmd.setFeeRates(C, 10_001, 1), code: ResultCode.FeeRateOutOfRange },
      { note: 'operator: a negative rate', do: cmd.setFeeRates(C, 1, -1), code: ResultCode.FeeRateOutOfRange },
      { note: 'operator: a fractional rate', do: cmd.setFeeRates(C, 1, 0.5), code: ResultCode.FeeRateOutOfRange },
      { note: 'C unchanged', do: cmd.queryFeeRates(C), check: (records) => expect(records).toMatchObject([{ makerFeeBps: 100, takerFeeBps: 200 }]) },
    ]);
  });
});

describe('engine: quote-quantity market orders, stream and response agree', () => {
  /** The taker's fill events and its response, for the order placed by the last command. */
  function takerView(records: Rec[], accountId: number): { fills: OrderStatus[]; final: OrderStatus } {
    const mine = ordersOf(records).filter((o) => o.accountId === accountId && o.orderType === OrderType.Market);
    return {
      fills: mine.filter((o) => o.event === OrderEvent.Fill).map((o) => o.status),
      final: mine.find((o) => o.frontId === FRONT && (o.flags & HeaderFlag.Last) !== 0)!.status,
    };
  }

  it('the last fill says Filled when the rest of the quote buys no whole lot', () => {
    runScenario(testConfig(), [
      { note: 'A asks 100 × 2', do: cmd.place(A, 'ask', 100, 2) },
      { note: 'B asks 101 × 5', do: cmd.place(B, 'ask', 101, 5) },
      { note: 'C buys for 900 quote: 2 at 100 (600), then 300 buys no lot at 101 (303): Filled',
        do: cmd.market(C, 'bid', { quoteQtyUnits: 900 }), status: Filled, executed: 2, trades: [[100, 2]],
        check: (records) => expect(takerView(records, C)).toEqual({ fills: [Filled], final: Filled }) },
      { note: 'C buys for 1000 quote: 3 at 101 (909), 91 left: Filled; fills say Filled on the last only',
        do: cmd.market(C, 'bid', { quoteQtyUnits: 1000 }), status: Filled, executed: 3, trades: [[101, 3]],
        check: (records) => expect(takerView(records, C)).toEqual({ fills: [Filled], final: Filled }) },
      { note: 'D asks 101 × 1 (behind B\'s 2 left at 101)', do: cmd.place(D, 'ask', 101, 1) },
      { note: 'D asks 102 × 1', do: cmd.place(D, 'ask', 102, 1) },
      { note: 'C buys for 1000 quote: B\'s 2 at 101 (606), D\'s 1 at 101 (303), then 91 buys none at 102: PartiallyFilled, then Filled',
        do: cmd.market(C, 'bid', { quoteQtyUnits: 1000 }), status: Filled, executed: 3, trades: [[101, 2], [101, 1]],
        check: (records) => expect(takerView(records, C)).toEqual({ fills: [PartiallyFilled, Filled], final: Filled }) },
      { note: 'C buys for 10000 quote: 1 at 102, then the book is empty: Expired, the fill says PartiallyFilled',
        do: cmd.market(C, 'bid', { quoteQtyUnits: 10_000 }), status: Expired, reason: ExpiryReason.InsufficientLiquidity, trades: [[102, 1]],
        check: (records) => expect(takerView(records, C)).toEqual({ fills: [PartiallyFilled], final: Expired }) },
    ]);
  });

  it('own orders next in line: RejectMaker looks past them, RejectTaker ends the order', () => {
    runScenario(testConfig(), [
      { note: 'A asks 100 × 1', do: cmd.place(A, 'ask', 100, 1) },
      { note: 'C asks 101 × 1 (its own)', do: cmd.place(C, 'ask', 101, 1) },
      { note: 'B asks 150 × 1', do: cmd.place(B, 'ask', 150, 1) },
      { note: 'C buys for 400 quote, RejectMaker: 1 at 100, own ask cancelled, 100 buys none at 150: Filled',
        do: cmd.market(C, 'bid', { quoteQtyUnits: 400 }, { stp: 1 }), status: Filled, trades: [[100, 1]],
        check: (records) => expect(takerView(records, C)).toEqual({ fills: [Filled], final: Filled }) },
      { note: 'A asks 100 × 1 again', do: cmd.place(A, 'ask', 100, 1) },
      { note: 'C asks 101 × 1 again', do: cmd.place(C, 'ask', 101, 1) },
      { note: 'C buys for 400 quote, RejectTaker: 1 at 100, then its own ask: Expired', do: cmd.market(C, 'bid', { quoteQtyUnits: 400 }),
        status: Expired, reason: ExpiryReason.SelfTradePrevention, trades: [[100, 1]],
        check: (records) => expect(takerView(records, C)).toEqual({ fills: [PartiallyFilled], final: Expired }) },
    ]);
  });
});
