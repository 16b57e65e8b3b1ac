// A price that trades cannot move cheaply, and what it protects.
//
// Dust conversion: two colluding accounts walk an illiquid market's last price up 100× with
// minimum-size wash trades (each inside the ±25 % limit band of the trade before), then a third
// account converts its dust. The exchange pays from its fee ledger, so it must value the dust by
// the guarded reference price (which moves by bounded steps per interval of engine time) and never
// pay more than the market's cap: the ledger loses no more than the dust's fair value.
//
// Market orders: on a book that never traded, a market order meets whatever rests, however far
// from the best price; its sweep must stop at the band around the best opposite price it meets
// (and on a traded market, around the guarded reference), the rest expiring with PriceBand.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { engineConfigFingerprint } from '../../engine/shell/journal.js';
import { ConfigError, DEFAULT_MARKETS, loadConfig } from '../../src/config.js';
import { CommandKind, ExpiryReason, OrderEvent, OrderStatus, RecordType, ResultCode, type EngineConfig } from '../../engine/bus/types.js';
import { BASE, EngineHarness, M0, QUOTE, cmd, ordersOf, replay, responseOf, resultOf, testConfig, tradesOf } from '../helpers/engine-harness.js';

const SECOND_US = 1_000_000;
const MINUTE_US = 60 * SECOND_US;
/** testConfig's grid: 10 base units a lot, 3 quote units a tick × lot. */
const valueOf = (baseUnits: number, priceTicks: number) => (baseUnits * priceTicks * 3) / 10;

/** Both markets banded like the server's default (×1.25 / ×0.75), 5-lot minimum, 1 % taker fee. */
function bandedConfig(extra: Partial<EngineConfig['markets'][number]> = {}): EngineConfig {
  const config = testConfig({ takerFeeBps: 100 });
  config.markets = config.markets.map((m) => ({
    ...m, minQtyLots: 5, maxQtyLots: 100_000, maxPriceTicks: 1_000_000, maxMultiplierBps: 12_500, minMultiplierBps: 7_500, ...extra,
  }));
  return config;
}

const withdraw = (accountId: number, assetId: number, amountUnits: number) => ({ kind: CommandKind.Withdraw, accountId, assetId, amountUnits });
const dust = (accountId: number, amountUnits: number) => ({ kind: CommandKind.ConvertDust, accountId, marketId: M0, amountUnits });

/** Quote fees the exchange holds: everything deposited minus what the accounts hold. */
function feeLedger(h: EngineHarness, accounts: number[]): number {
  const held = accounts.reduce((sum, id) => sum + h.balance(id, QUOTE)[0] + h.balance(id, QUOTE)[1], 0);
  return h.exchange.totalUnits(QUOTE) - held;
}

/** Colluders walk the last price up band step by band step; returns the last price reached. */
function washUp(h: EngineHarness, seller: number, buyer: number, fromTicks: number, factor: number): number {
  let price = fromTicks;
  while (price < fromTicks * factor) {
    price = Math.floor((price * 125) / 100);
    h.apply(cmd.place(seller, 'ask', price, 5, { postOnly: true }), h.timeUs + SECOND_US);
    const trades = tradesOf(h.apply(cmd.place(buyer, 'bid', price, 5)));
    expect(trades.map((t) => t.priceTicks)).toEqual([price]);
  }
  return price;
}

describe('dust conversion after wash trades', () => {
  it('pays no more than the fair value although the last price moved 100×', () => {
    const h = new EngineHarness(bandedConfig());
    const [maker, taker, x, y, z] = h.fundedAccounts(5, { [QUOTE]: 50_000_000, [BASE]: 2_000_000 });
    h.apply(withdraw(z, BASE, 2_000_000 - 7)); // z keeps 7 base units: dust (a lot is 10, the minimum 5 lots)
    // Honest trading at 100 fills the fee ledger: the taker sells 100 000 lots and pays 1 % in quote.
    h.apply(cmd.place(maker, 'bid', 100, 100_000, { postOnly: true }));
    h.apply(cmd.place(taker, 'ask', 100, 100_000));
    const everyone = [maker, taker, x, y, z];
    const fair = valueOf(7, 100);

    // Five quiet minutes later x and y wash-trade the minimum size, one trade a second.
    h.apply(cmd.tick(), h.timeUs + 5 * MINUTE_US);
    const last = washUp(h, x, y, 100, 100);
    expect(last).toBeGreaterThanOrEqual(100 * 100);

    const ledgerBefore = feeLedger(h, everyone);
    const quoteBefore = h.balance(z, QUOTE)[0];
    const result = resultOf(h.apply(dust(z, 7)));
    expect(result.code).toBe(ResultCode.Ok);
    expect(h.balance(z, BASE)).toEqual([0, 0]);
    expect(h.balance(z, QUOTE)[0] - quoteBefore).toBe(result.value);
    expect(ledgerBefore - feeLedger(h, everyone)).toBeLessThanOrEqual(fair);
    expect(result.value).toBeGreaterThan(0);
    expect(replay(h.config, h.stream).exchange.stateHash()).toBe(h.exchange.stateHash());
  });

  it('caps one conversion at the market\'s dust payout cap, even on a price set by the first trade', () => {
    const h = new EngineHarness(bandedConfig({ dustMaxPayoutUnits: 500 }));
    const [maker, taker, x, y, z] = h.fundedAccounts(5, { [QUOTE]: 50_000_000, [BASE]: 2_000_000 });
    h.apply(withdraw(z, BASE, 2_000_000 - 7));
    // Fees in quote, from the other market (market 1 shares the quote asset).
    h.apply(cmd.deposit(maker, 2, 2_000_000));
    h.apply(cmd.deposit(taker, 2, 2_000_000));
    h.apply(cmd.place(maker, 'bid', 100, 100_000, { market: 1, postOnly: true }));
    h.apply(cmd.place(taker, 'ask', 100, 100_000, { market: 1 }));
    // Market 0 never traded: x and y make its first trade at 100 times the price elsewhere.
    h.apply(cmd.place(x, 'ask', 10_000, 5, { postOnly: true }));
    h.apply(cmd.place(y, 'bid', 10_000, 5));
    const ledgerBefore = feeLedger(h, [maker, taker, x, y, z]);
    const result = resultOf(h.apply(dust(z, 7)));
    expect(result.code).toBe(ResultCode.Ok);
    expect(result.value).toBe(500);
    expect(ledgerBefore - feeLedger(h, [maker, taker, x, y, z])).toBe(500);
  });
});

describe('market orders on a book that never traded', () => {
  function thinBook(): { h: EngineHarness; buyer: number; seller: number } {
    const h = new EngineHarness(bandedConfig());
    const [maker, buyer, seller] = h.fundedAccounts(3, { [QUOTE]: 10_000_000, [BASE]: 100_000 });
    h.apply(cmd.place(maker, 'ask', 100, 5, { postOnly: true }));
    h.apply(cmd.place(maker, 'ask', 1_000, 50, { postOnly: true }));
    h.apply(cmd.place(maker, 'bid', 90, 5, { postOnly: true }));
    h.apply(cmd.place(maker, 'bid', 9, 50, { postOnly: true }));
    return { h, buyer, seller };
  }

  it('a market buy stops at the band around the best ask it meets; the rest expires PriceBand', () => {
    const { h, buyer } = thinBook();
    const records = h.apply(cmd.market(buyer, 'bid', { qtyLots: 40 }));
    expect(tradesOf(records).map((t) => [t.priceTicks, t.qtyLots])).toEqual([[100, 5]]);
    const response = responseOf(records, h.lastRequestId())!;
    expect(response.status).toBe(OrderStatus.Expired);
    expect(response.expiryReason).toBe(ExpiryReason.PriceBand);
    expect(response.executedQtyLots).toBe(5);
    expect(h.balance(buyer, QUOTE)).toEqual([10_000_000 - valueOf(50, 100), 0]); // nothing stays locked
    expect(h.book().asks).toEqual([[1_000, 50]]);
  });

  it('a market sell stops at the band around the best bid it meets', () => {
    const { h, seller } = thinBook();
    const records = h.apply(cmd.market(seller, 'ask', { qtyLots: 40 }));
    expect(tradesOf(records).map((t) => [t.priceTicks, t.qtyLots])).toEqual([[90, 5]]);
    const response = responseOf(records, h.lastRequestId())!;
    expect([response.status, response.expiryReason]).toEqual([OrderStatus.Expired, ExpiryReason.PriceBand]);
    expect(h.balance(seller, BASE)).toEqual([100_000 - 50, 0]);
  });

  it('a quote-quantity market buy stops there too, and its last fill does not claim Filled', () => {
    const { h, buyer } = thinBook();
    const records = h.apply(cmd.market(buyer, 'bid', { quoteQtyUnits: 100_000 }));
    expect(tradesOf(records).map((t) => [t.priceTicks, t.qtyLots])).toEqual([[100, 5]]);
    const fills = ordersOf(records).filter((r) => r.event === OrderEvent.Fill && (r.orderFlags & 8) === 0);
    expect(fills.map((f) => f.status)).toEqual([OrderStatus.PartiallyFilled]);
    const response = responseOf(records, h.lastRequestId())!;
    expect([response.status, response.expiryReason]).toEqual([OrderStatus.Expired, ExpiryReason.PriceBand]);
  });

  it('on a traded market the band is around the guarded reference price', () => {
    const { h, buyer, seller } = thinBook();
    expect(tradesOf(h.apply(cmd.place(seller, 'ask', 90, 5))).length).toBe(1); // the first trade, at 90: reference 90
    h.apply(cmd.place(seller, 'ask', 110, 5, { postOnly: true }));
    // Asks now: 100 × 5, 110 × 5, 1000 × 50. Band: 90 × 1.25 = 112.5.
    const records = h.apply(cmd.market(buyer, 'bid', { qtyLots: 20 }));
    expect(tradesOf(records).map((t) => [t.priceTicks, t.qtyLots])).toEqual([[100, 5], [110, 5]]);
    expect(responseOf(records, h.lastRequestId())!.expiryReason).toBe(ExpiryReason.PriceBand);
    expect(records.some((r) => r.type === RecordType.Trade && r.priceTicks === 1_000)).toBe(false);
  });
});

describe('configuration of the guarded reference and the dust cap', () => {
  const dir = mkdtempSync(join(tmpdir(), 'markets-file-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const withFile = (file: object) => {
    const path = join(dir, 'markets.json');
    writeFileSync(path, JSON.stringify({ ...DEFAULT_MARKETS, ...file }));
    return loadConfig(['--config', path], {});
  };

  it('left out, adds nothing to the engine configuration a journal remembers', () => {
    const engine = loadConfig([], {}).engine;
    expect(Object.keys(engine)).not.toContain('referenceStepBps');
    expect(Object.keys(engine)).not.toContain('referenceIntervalUs');
    expect(engine.markets.some((m) => 'dustMaxPayoutUnits' in m)).toBe(false);
    expect(engineConfigFingerprint(withFile({}).engine)).toBe(engineConfigFingerprint(engine));
  });

  it('given, reaches the engine in its units and changes the fingerprint; bad values are refused', () => {
    const markets = DEFAULT_MARKETS.markets.map((m, i) => (i === 0 ? { ...m, dustMaxPayout: '2.5' } : m));
    const config = withFile({ referenceStepBps: 50, referenceIntervalMs: 30_000, markets });
    expect(config.engine.referenceStepBps).toBe(50);
    expect(config.engine.referenceIntervalUs).toBe(30_000_000);
    expect(config.engine.markets[0].dustMaxPayoutUnits).toBe(2_500_000); // USDC has 6 decimals
    expect(engineConfigFingerprint(config.engine)).not.toBe(engineConfigFingerprint(loadConfig([], {}).engine));
    expect(() => withFile({ referenceStepBps: 0 })).toThrow(ConfigError);
    expect(() => withFile({ referenceIntervalMs: 1.5 })).toThrow(ConfigError);
    expect(() => withFile({ markets: DEFAULT_MARKETS.markets.map((m) => ({ ...m, dustMaxPayout: '0' })) })).toThrow(ConfigError);
  });
});
