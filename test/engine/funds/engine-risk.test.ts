// Spot risk answered by the engine (engine/core/funds/risk.ts), asserted by value (the collateral
// query is engine-margin-valuation.test.ts): the largest order an account could place (a market bid walks the asks and stops at the sweep
// band; a market bid for that many lots fills them all), and converting every dust balance in one
// command, all or none.

import { describe, expect, it } from 'vitest';
import { CommandKind, RecordType, ResultCode, Side, type DustRec, type EngineConfig } from '../../../engine/bus/types.js';
import { BASE, EngineHarness, FRONT, M0, M1, OTHER, QUOTE, cmd, replay, resultOf, testConfig, tradesOf, type Rec } from '../../helpers/engine-harness.js';

/** Both markets banded (×1.25 / ×0.75), a 5-lot minimum (50 base units), 1 % taker fee. */
function bandedConfig(takerFeeBps = 100): EngineConfig {
  const config = testConfig({ takerFeeBps });
  config.markets = config.markets.map((m) => ({ ...m, minQtyLots: 5, maxQtyLots: 100_000, maxPriceTicks: 1_000_000, maxMultiplierBps: 12_500, minMultiplierBps: 7_500 }));
  return config;
}

const maxQty = (accountId: number, side: Side, priceTicks = 0, marketId = M0) => ({ kind: CommandKind.QueryMaxOrderQty, accountId, marketId, side, priceTicks });
const convertAll = (accountId: number, marketId = 0xffff, assetId = QUOTE) => ({ kind: CommandKind.ConvertAllDust, accountId, assetId, marketId });

function dustOf(records: Rec[]): Array<Pick<DustRec, 'accountId' | 'marketId' | 'amountUnits' | 'payoutUnits' | 'frontId'>> {
  return records.filter((r): r is DustRec & { type: RecordType.Dust } => r.type === RecordType.Dust)
    .map(({ accountId, marketId, amountUnits, payoutUnits, frontId }) => ({ accountId, marketId, amountUnits, payoutUnits, frontId }));
}

/** One trade of 5 lots at `priceTicks` between two funded accounts. */
function trade(h: EngineHarness, seller: number, buyer: number, priceTicks: number, market = M0): void {
  h.apply(cmd.place(seller, 'ask', priceTicks, 5, { market, postOnly: true }));
  expect(tradesOf(h.apply(cmd.place(buyer, 'bid', priceTicks, 5, { market }))).map((t) => t.priceTicks)).toEqual([priceTicks]);
}

describe('QueryMaxOrderQty', () => {
  function book(): { h: EngineHarness; seller: number; buyer: number } {
    const h = new EngineHarness(bandedConfig());
    const [seller] = h.fundedAccounts(1, { [BASE]: 1000 });
    const buyer = h.createAccount(9);
    h.apply(cmd.deposit(buyer, QUOTE, 2000));
    // Never traded: the sweep band is around the best ask (100), so 200 lies beyond it.
    for (const price of [100, 110, 200]) h.apply(cmd.place(seller, 'ask', price, 5, { postOnly: true }));
    return { h, seller, buyer };
  }
  const lotsOf = (records: Rec[]) => {
    const result = resultOf(records);
    expect(result.code).toBe(ResultCode.Ok);
    return result.value;
  };

  it('answers an ask by available base, a limit bid by available quote at its price, a market bid by walking the asks', () => {
    const { h, seller, buyer } = book();
    expect(lotsOf(h.apply(maxQty(seller, Side.Ask)))).toBe(85); // 1000 − 150 locked, 10 units a lot
    expect(lotsOf(h.apply(maxQty(buyer, Side.Bid, 100)))).toBe(6); // 2000 / (100 × 3)
    // 5 lots at 100 (1500), then 500 buys 1 lot at 110 (330).
    expect(lotsOf(h.apply(maxQty(buyer, Side.Bid)))).toBe(6);
    const rich = h.createAccount(10);
    h.apply(cmd.deposit(rich, QUOTE, 1_000_000_000));
    expect(lotsOf(h.apply(maxQty(rich, Side.Bid)))).toBe(10); // the level at 200 is beyond the band
    expect(lotsOf(h.apply(maxQty(rich, Side.Bid, 1)))).toBe(100_000); // capped at maxQtyLots
    // What it answers is what a market bid of that size fills.
    const fills = tradesOf(h.apply(cmd.market(buyer, 'bid', { qtyLots: 6 })));
    expect(fills.reduce((sum, t) => sum + t.qtyLots, 0)).toBe(6);
    expect(lotsOf(h.apply(maxQty(buyer, Side.Bid)))).toBe(0);
  });

  it('refuses what it cannot answer', () => {
    const { h, seller } = book();
    expect(resultOf(h.apply(maxQty(seller, Side.Bid, 1_000_001))).code).toBe(ResultCode.PriceAboveMaximum);
    expect(resultOf(h.apply(maxQty(seller, 7 as Side))).code).toBe(ResultCode.InvalidCommand);
    expect(resultOf(h.apply(maxQty(seller, Side.Ask, 0, 42))).code).toBe(ResultCode.UnknownMarket);
    expect(resultOf(h.apply(maxQty(99, Side.Ask))).code).toBe(ResultCode.UnknownAccount);
  });
});

describe('ConvertAllDust', () => {
  /** Fees in quote from a taker selling 1000 lots at 100 (3000 units); market 0 priced at 100. */
  function fundedExchange(takerFeeBps = 100): { h: EngineHarness; maker: number; taker: number } {
    const h = new EngineHarness(bandedConfig(takerFeeBps));
    const [maker, taker] = h.fundedAccounts(2, { [QUOTE]: 10_000_000, [BASE]: 20_000, [OTHER]: 20_000 });
    h.apply(cmd.place(maker, 'bid', 100, 1000, { postOnly: true }));
    h.apply(cmd.place(taker, 'ask', 100, 1000));
    return { h, maker, taker };
  }

  it('converts every dust balance in one command, one Dust record each, paying the sum', () => {
    const { h, maker, taker } = fundedExchange();
    const z = h.createAccount(20);
    expect(resultOf(h.apply(convertAll(z))).code).toBe(ResultCode.DustNotEligible);
    h.apply(cmd.deposit(z, OTHER, 9));
    expect(resultOf(h.apply(convertAll(z))).code).toBe(ResultCode.DustNoMarkPrice); // market 1 never traded
    h.apply(cmd.deposit(z, BASE, 7));
    trade(h, maker, taker, 50, M1);
    const fees = h.exchange.totalUnits(QUOTE) - [maker, taker, z].reduce((sum, id) => sum + h.balance(id, QUOTE)[0] + h.balance(id, QUOTE)[1], 0);
    const records = h.apply(convertAll(z));
    // 7 × 100 × 3 / 10 × 95 % = 199.5 → 199; 9 × 50 × 3 / 10 × 95 % = 128.25 → 128.
    expect(dustOf(records)).toEqual([
      { accountId: z, marketId: M0, amountUnits: 7, payoutUnits: 199, frontId: FRONT },
      { accountId: z, marketId: M1, amountUnits: 9, payoutUnits: 128, frontId: FRONT },
    ]);
    expect(resultOf(records)).toMatchObject({ code: ResultCode.Ok, value: 327 });
    expect([h.balance(z, QUOTE), h.balance(z, BASE), h.balance(z, OTHER)]).toEqual([[327, 0], [0, 0], [0, 0]]);
    const feesAfter = h.exchange.totalUnits(QUOTE) - [maker, taker, z].reduce((sum, id) => sum + h.balance(id, QUOTE)[0] + h.balance(id, QUOTE)[1], 0);
    expect(fees - feesAfter).toBe(327);
    expect(resultOf(h.apply(convertAll(z))).code).toBe(ResultCode.DustNotEligible);
    expect(replay(h.config, h.stream).exchange.stateHash()).toBe(h.exchange.stateHash());
  });

  it('converts only the market it names, leaves unpriced dust alone, and refuses bad ids', () => {
    const { h } = fundedExchange();
    const z = h.createAccount(20);
    h.apply(cmd.deposit(z, BASE, 7));
    h.apply(cmd.deposit(z, OTHER, 9));
    expect(resultOf(h.apply(convertAll(z, M1))).code).toBe(ResultCode.DustNoMarkPrice);
    const records = h.apply(convertAll(z));
    expect(dustOf(records).map((d) => d.marketId)).toEqual([M0]); // market 1 has no price: its dust stays
    expect(h.balance(z, OTHER)).toEqual([9, 0]);
    expect(resultOf(h.apply(convertAll(z, 42))).code).toBe(ResultCode.UnknownMarket);
    expect(resultOf(h.apply(convertAll(z, 0xffff, 77))).code).toBe(ResultCode.UnknownAsset);
    expect(resultOf(h.apply(convertAll(99))).code).toBe(ResultCode.UnknownAccount);
  });

  it('converts nothing when the exchange cannot pay the sum, or in maintenance', () => {
    const { h } = fundedExchange(0); // no taker fee: the exchange holds no quote to pay with
    const z = h.createAccount(20);
    h.apply(cmd.deposit(z, BASE, 7));
    const refused = h.apply(convertAll(z));
    expect(resultOf(refused).code).toBe(ResultCode.DustTreasuryShort);
    expect(refused.filter((r) => r.type !== RecordType.Result)).toEqual([]);
    expect(h.balance(z, BASE)).toEqual([7, 0]);
    h.apply(cmd.setSystemState(1));
    expect(resultOf(h.apply(convertAll(z))).code).toBe(ResultCode.SystemMaintenance);
    expect(h.balance(z, BASE)).toEqual([7, 0]);
  });
});
