// Scenario tables for market orders, fees and price bands in the engine core (engine/core/exchange.ts and
// matching.ts headers give the rules). Same units as test/engine/engine.test.ts: one lot = 10 base
// units, one tick × one lot = 3 quote units. Every line also runs the invariant checker and the
// conservation check, which counts collected fees (test/helpers/engine-harness.ts).
import { describe, expect, it } from 'vitest';
import { Exchange } from '../../../engine/core/exchange.js';
import { feeUnits, floorDiv } from '../../../engine/core/units.js';
import { ExpiryReason, OrderEvent, OrderFlag, OrderStatus, OrderType, ResultCode, SelfTradePrevention, type AmountUnits } from '../../../engine/bus/types.js';
import { BASE, M1, QUOTE, cmd, ordersOf, testConfig, type EngineHarness } from '../../helpers/engine-harness.js';
import { A, B, C, D, START_BASE, START_QUOTE, fourAccounts, runScenario } from '../../helpers/engine-scenario.js';

const { New, Filled, Expired } = OrderStatus;
const E = 5;

/** The order response addressed to the last request. */
function response(records: Parameters<typeof ordersOf>[0]) {
  return ordersOf(records).at(-1)!;
}

describe('engine: market orders', () => {
  it('walk the book by quantity or by quote quantity, and always expire their remainder', () => {
    runScenario(testConfig(), [
      { note: 'A asks 100 × 2', do: cmd.place(A, 'ask', 100, 2), status: New },
      { note: 'B asks 101 × 3', do: cmd.place(B, 'ask', 101, 3), status: New, book: { bids: [], asks: [[100, 2], [101, 3]] } },
      { note: 'C market-buys 4 lots: two levels, leftover budget released', do: cmd.market(C, 'bid', { qtyLots: 4 }), status: Filled,
        executed: 4, trades: [[100, 2], [101, 2]], balances: [[C, QUOTE, START_QUOTE - 1206, 0], [C, BASE, START_BASE + 40, 0]],
        book: { bids: [], asks: [[101, 1]] },
        check: (records) => {
          const r = response(records);
          expect([r.orderType, r.priceTicks, r.qtyLots, r.quoteQtyUnits, r.executedQuoteUnits]).toEqual([OrderType.Market, 0, 4, 0, 1206]);
        } },
      { note: 'C market-buys for 700 quote: takes the last lot (303), then the book is empty',
        do: cmd.market(C, 'bid', { quoteQtyUnits: 700 }), status: Expired, reason: ExpiryReason.InsufficientLiquidity, executed: 1,
        trades: [[101, 1]], balances: [[C, QUOTE, START_QUOTE - 1509, 0]], book: { bids: [], asks: [] },
        check: (records) => {
          const r = response(records);
          expect([r.qtyLots, r.quoteQtyUnits, r.executedQuoteUnits]).toEqual([0, 700, 303]);
        } },
      { note: 'D bids 99 × 5', do: cmd.place(D, 'bid', 99, 5) },
      { note: 'D bids 98 × 5', do: cmd.place(D, 'bid', 98, 5), book: { bids: [[99, 5], [98, 5]], asks: [] } },
      { note: 'A market-sells for 2000 quote: 5 at 99 (1485), 1 at 98 (294); 221 left buys no whole lot: Filled',
        do: cmd.market(A, 'ask', { quoteQtyUnits: 2000 }), status: Filled, executed: 6, trades: [[99, 5], [98, 1]],
        balances: [[A, BASE, START_BASE - 80, 0], [A, QUOTE, START_QUOTE + 600 + 1779, 0]], book: { bids: [[98, 4]], asks: [] },
        check: (records) => expect(response(records).executedQuoteUnits).toBe(1779) },
      { note: 'D market-sells 1 lot, RejectTaker: meets its own bid, expires', do: cmd.market(D, 'ask', { qtyLots: 1 }),
        status: Expired, reason: ExpiryReason.SelfTradePrevention, executed: 0, balances: [[D, BASE, START_BASE + 60, 0]],
        book: { bids: [[98, 4]], asks: [] } },
      { note: 'D market-sells 1 lot, RejectMaker: own bid cancelled, then no liquidity',
        do: cmd.market(D, 'ask', { qtyLots: 1 }, { stp: SelfTradePrevention.RejectMaker }), status: Expired,
        reason: ExpiryReason.InsufficientLiquidity, executed: 0, balances: [[D, QUOTE, START_QUOTE - 1485 - 294, 0], [D, BASE, START_BASE + 60, 0]],
        book: { bids: [], asks: [] },
        check: (records) => expect(ordersOf(records).filter((o) => o.event === OrderEvent.Cancelled).map((o) => o.accountId)).toEqual([D]) },
      { note: 'C market-buys into an empty book', do: cmd.market(C, 'bid', { qtyLots: 1 }), status: Expired,
        reason: ExpiryReason.InsufficientLiquidity, executed: 0, balances: [[C, QUOTE, START_QUOTE - 1509, 0]] },
    ]);
  });

  it('a bid by quantity locks at most its available quote and fills only what that covers', () => {
    const setup = (h: EngineHarness): void => {
      fourAccounts(h);
      h.createAccount(5);
      h.apply(cmd.deposit(E, QUOTE, 700));
    };
    runScenario(testConfig(), [
      { note: 'A asks 100 × 5', do: cmd.place(A, 'ask', 100, 5) },
      { note: 'E market-buys 5 lots with 700 quote: 2 lots (600), then 100 left buys none',
        do: cmd.market(E, 'bid', { qtyLots: 5 }), status: Expired, reason: ExpiryReason.InsufficientFunds, executed: 2,
        trades: [[100, 2]], balances: [[E, QUOTE, 100, 0], [E, BASE, 20, 0]], book: { bids: [], asks: [[100, 3]] } },
      { note: 'E market-buys 1 lot with 100 quote: nothing affordable', do: cmd.market(E, 'bid', { qtyLots: 1 }), status: Expired,
        reason: ExpiryReason.InsufficientFunds, executed: 0, balances: [[E, QUOTE, 100, 0]], book: { bids: [], asks: [[100, 3]] } },
    ], setup);
  });

  it('are speed-bumped: they lock at sequencing time and match the book found at activation', () => {
    const BUMP = 100_000;
    runScenario(testConfig({ speedBumpUs: BUMP }), [
      { note: 'A post-only asks 100 × 2', at: 0, do: cmd.place(A, 'ask', 100, 2, { postOnly: true }), status: New },
      { note: 'C market-buys 3 lots: pending, locks 3 × maxPrice 1000 × 3', at: 0, do: cmd.market(C, 'bid', { qtyLots: 3 }), as: 'c',
        status: null, balances: [[C, QUOTE, START_QUOTE - 9000, 9000]] },
      { note: 'B post-only asks 99 × 1 during the delay', at: 10, do: cmd.place(B, 'ask', 99, 1, { postOnly: true }), status: New,
        book: { bids: [], asks: [[99, 1], [100, 2]] } },
      { note: 'the bump ends: fills 99 then 100, the rest of the lock released', at: BUMP, do: cmd.tick(), responses: { c: Filled },
        trades: [[99, 1], [100, 2]], balances: [[C, QUOTE, START_QUOTE - 897, 0], [C, BASE, START_BASE + 30, 0]], book: { bids: [], asks: [] } },
      { note: 'C market-sells for 300 quote: pending, locks the 100 lots 300 could sell at the minimum price',
        at: BUMP, do: cmd.market(C, 'ask', { quoteQtyUnits: 300 }), as: 'c2', status: null, balances: [[C, BASE, START_BASE + 30 - 1000, 1000]] },
      { note: 'it activates into an empty book', at: 2 * BUMP, do: cmd.tick(), responses: { c2: Expired },
        balances: [[C, BASE, START_BASE + 30, 0]] },
    ]);
  });
});

describe('engine: market sells by quote quantity and the minimum quantity', () => {
  it('refuse an ask whose available base caps it below minQtyLots, as by quantity', () => {
    const config = testConfig();
    config.markets[0] = { ...config.markets[0], minQtyLots: 3 };
    const setup = (h: EngineHarness): void => {
      fourAccounts(h);
      h.createAccount(5);
      h.apply(cmd.deposit(E, BASE, 25)); // 2.5 lots of base
    };
    runScenario(config, [
      { note: 'A bids 10 × 5', do: cmd.place(A, 'bid', 10, 5), status: New },
      { note: 'E market-sells 1 lot: below the minimum', do: cmd.market(E, 'ask', { qtyLots: 1 }), code: ResultCode.QuantityBelowMinimum },
      { note: 'E market-sells for 1000 quote: its 2 whole lots of base are below the minimum of 3',
        do: cmd.market(E, 'ask', { quoteQtyUnits: 1000 }), code: ResultCode.InsufficientFunds, balances: [[E, BASE, 25, 0]],
        book: { bids: [[10, 5]], asks: [] } },
      { note: 'E gets a third lot and may sell for 1000 quote: 3 lots at 10 (90)', do: cmd.deposit(E, BASE, 5), code: ResultCode.Ok },
      { note: 'E market-sells for 1000 quote', do: cmd.market(E, 'ask', { quoteQtyUnits: 1000 }), status: Filled, trades: [[10, 3]],
        book: { bids: [[10, 2]], asks: [] } },
    ], setup);
  });
});

describe('engine: fees', () => {
  it('take floor(received × bps / 10000) from each side, in the asset it receives', () => {
    runScenario(testConfig({ makerFeeBps: 100, takerFeeBps: 250 }), [
      { note: 'A asks 100 × 40', do: cmd.place(A, 'ask', 100, 40) },
      { note: 'B bids 100 × 40: B (taker) pays 10 of 400 base, A (maker) 120 of 12000 quote', do: cmd.place(B, 'bid', 100, 40), status: Filled,
        trades: [[100, 40]],
        balances: [[B, BASE, START_BASE + 390, 0], [B, QUOTE, START_QUOTE - 12000, 0], [A, BASE, START_BASE - 400, 0], [A, QUOTE, START_QUOTE + 11880, 0]],
        check: (records, h) => {
          const fills = ordersOf(records).filter((o) => o.event === OrderEvent.Fill);
          expect(fills.map((o) => [o.accountId, (o.orderFlags & OrderFlag.IsMaker) !== 0, o.feeUnits, o.feeAssetId])).toEqual([
            [A, true, 120, QUOTE], [B, false, 10, BASE],
          ]);
          const held = (asset: number) => [A, B, C, D].reduce((sum, id) => sum + h.balance(id, asset)[0] + h.balance(id, asset)[1], 0);
          expect([held(BASE), held(QUOTE)]).toEqual([4 * START_BASE - 10, 4 * START_QUOTE - 120]);
          expect([h.exchange.totalUnits(BASE), h.exchange.totalUnits(QUOTE)]).toEqual([4 * START_BASE, 4 * START_QUOTE]);
        } },
      { note: 'C asks 100 × 3', do: cmd.place(C, 'ask', 100, 3) },
      { note: 'D bids 100 × 3: 30 × 2.5% = 0.75 rounds down to 0; 900 × 1% = 9', do: cmd.place(D, 'bid', 100, 3), status: Filled,
        trades: [[100, 3]], balances: [[D, BASE, START_BASE + 30, 0], [C, QUOTE, START_QUOTE + 891, 0]] },
      { note: 'A bids 50 × 10', do: cmd.place(A, 'bid', 50, 10) },
      { note: 'D market-sells for 1000 quote: 6 lots at 50 (900); D pays 22 (22.5 rounded down), A pays 0 of 60 base',
        do: cmd.market(D, 'ask', { quoteQtyUnits: 1000 }), status: Filled, executed: 6, trades: [[50, 6]],
        balances: [[D, QUOTE, START_QUOTE - 900 + 878, 0], [D, BASE, START_BASE + 30 - 60, 0], [A, BASE, START_BASE - 400 + 60, 0],
          [A, QUOTE, START_QUOTE + 11880 - 1500, 600]],
        check: (records) => expect(ordersOf(records).filter((o) => o.event === OrderEvent.Fill).map((o) => o.feeUnits)).toEqual([0, 22]) },
    ]);
  });

  it('computes fees exactly where the product passes 2^53', () => {
    const max = Number.MAX_SAFE_INTEGER as AmountUnits;
    for (const [received, bps] of [[max, 9999], [max, 1], [max - 12345, 10_000], [9999, 1], [123_456_789_012_345, 37]] as const) {
      expect(feeUnits(received as AmountUnits, bps)).toBe(Number((BigInt(received) * BigInt(bps)) / 10_000n));
    }
    expect(floorDiv(max, 3)).toBe(Number(BigInt(max) / 3n));
    expect(floorDiv(2 ** 53 - 2, 2 ** 20 + 1)).toBe(Number(BigInt(2 ** 53 - 2) / BigInt(2 ** 20 + 1)));
  });

  it('refuses fee rates outside 0–10000 basis points at construction', () => {
    expect(() => new Exchange(testConfig({ makerFeeBps: 10_001 }))).toThrow(/makerFeeBps/);
    expect(() => new Exchange(testConfig({ takerFeeBps: 2.5 }))).toThrow(/takerFeeBps/);
  });
});

describe('engine: price bands', () => {
  const banded = () => {
    const config = testConfig();
    config.markets[0] = { ...config.markets[0], maxMultiplierBps: 12_500, minMultiplierBps: 7_500 };
    return config;
  };

  it('refuse limit prices beyond the multipliers of the last trade price, once there is one', () => {
    runScenario(banded(), [
      { note: 'before any trade every price in the limits is accepted: A bids 50', do: cmd.place(A, 'bid', 50, 1), status: New },
      { note: 'A asks 900', do: cmd.place(A, 'ask', 900, 1), status: New },
      { note: 'B asks 100', do: cmd.place(B, 'ask', 100, 1), status: New },
      { note: 'C bids 100: the first trade, at 100', do: cmd.place(C, 'bid', 100, 1), status: Filled, trades: [[100, 1]] },
      { note: 'D bids 126: above 125 % of 100', do: cmd.place(D, 'bid', 126, 1), code: ResultCode.PriceOutOfBand },
      { note: 'D bids 125: on the edge', do: cmd.place(D, 'bid', 125, 1), status: New },
      { note: 'D asks 74: below 75 % of 100', do: cmd.place(D, 'ask', 74, 1), code: ResultCode.PriceOutOfBand },
      { note: 'B asks 75: on the edge, fills D at 125', do: cmd.place(B, 'ask', 75, 1), status: Filled, trades: [[125, 1]] },
      { note: 'the band follows the last trade (125): D bids 157 is out', do: cmd.place(D, 'bid', 157, 1), code: ResultCode.PriceOutOfBand },
      { note: 'C asks 156 is in', do: cmd.place(C, 'ask', 156, 1), status: New, book: { bids: [[50, 1]], asks: [[156, 1], [900, 1]] } },
      { note: 'a market order stops at the band around the last trade (125, up to 156.25): D market-buys 2 lots, fills 156, 900 is beyond',
        do: cmd.market(D, 'bid', { qtyLots: 2 }), status: Expired, reason: ExpiryReason.PriceBand, executed: 1, trades: [[156, 1]] },
      { note: 'an unbanded market accepts any price in its limits', do: cmd.place(A, 'bid', 1, 1, { market: M1 }), status: New },
    ]);
  });

  it('check a speed-bumped limit order again when it takes effect, against the last price then', () => {
    const BUMP = 100_000;
    const config = banded();
    config.speedBumpUs = BUMP;
    runScenario(config, [
      { note: 'A post-only asks 100', at: 0, do: cmd.place(A, 'ask', 100, 1, { postOnly: true }), status: New },
      { note: 'B bids 100: delayed', at: 0, do: cmd.place(B, 'bid', 100, 1), as: 'b0', status: null },
      { note: 'it takes effect: the first trade, at 100 (band 75…125)', at: BUMP, do: cmd.tick(), responses: { b0: Filled }, trades: [[100, 1]] },
      { note: 'A post-only bids 80', at: BUMP, do: cmd.place(A, 'bid', 80, 1, { postOnly: true }), status: New },
      { note: 'A post-only asks 120', at: BUMP, do: cmd.place(A, 'ask', 120, 1, { postOnly: true }), status: New },
      { note: 'C market-sells 1 lot: delayed', at: BUMP, do: cmd.market(C, 'ask', { qtyLots: 1 }), as: 'c1', status: null },
      { note: 'B bids 125, in the band now: delayed, its quote locked', at: BUMP, do: cmd.place(B, 'bid', 125, 1), as: 'b1', status: null,
        balances: [[B, QUOTE, START_QUOTE - 300 - 375, 375]] },
      { note: 'both take effect in order: C sells at 80 (band 60…100), so B\'s 125 expires without trading',
        at: 2 * BUMP, do: cmd.tick(), responses: { c1: Filled, b1: Expired }, trades: [[80, 1]],
        balances: [[B, QUOTE, START_QUOTE - 300, 0]], book: { bids: [], asks: [[120, 1]] },
        check: (records) => {
          const expired = ordersOf(records).filter((o) => o.accountId === B && o.status === Expired);
          expect(expired.map((o) => o.expiryReason)).toContain(ExpiryReason.PriceBand);
        } },
      { note: 'a new bid at 125 is refused outright', at: 2 * BUMP, do: cmd.place(D, 'bid', 125, 1), code: ResultCode.PriceOutOfBand },
    ]);
  });

  it('are refused at construction when half given or inverted', () => {
    const config = testConfig();
    config.markets[0] = { ...config.markets[0], maxMultiplierBps: 12_500 };
    expect(() => new Exchange(config)).toThrow(/both price band multipliers/);
    config.markets[0] = { ...config.markets[0], maxMultiplierBps: 9_000, minMultiplierBps: 7_500 };
    expect(() => new Exchange(config)).toThrow(/maxMultiplierBps/);
    config.markets[0] = { ...config.markets[0], maxMultiplierBps: 12_500, minMultiplierBps: 10_001 };
    expect(() => new Exchange(config)).toThrow(/minMultiplierBps/);
  });
});
