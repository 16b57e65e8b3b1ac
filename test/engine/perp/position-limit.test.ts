// Every account's position limit on perpetuals (engine/core/perp/position-limit.ts): a fill that
// raises a party's |size| does not happen when Σ |size|·price·weight of that party's perpetuals
// (the fill's market at the fill price, the others at their mark, each term rounded up) would pass
// the limit; the taker stops there and its remainder expires PositionLimit, whether the party
// beyond is the taker or the maker (whose order stays). A fill that keeps or lowers |size|
// passes, even above the limit; a fill-or-kill order counts the limit; the weights count. At
// admission an order whose whole quantity, added to the position and valued at the mark, would
// pass the limit is refused PositionLimit.
//
// Grid (perp-harness): one lot at 500 ticks is 1500 USDC units. The limit here is 9000 units: six
// lots at 500 with weight 1. The underlying's index (the mark, while engine time stands still) is
// set to 300 ticks (900 a lot), so orders are admitted at the mark and the fills at 500 meet the
// limit; a second perpetual, on BTC, has its mark at 500 ticks.

import { describe, expect, it } from 'vitest';
import { CommandKind, CommandFlag, ExpiryReason, OrderEvent, ResultCode, RecordType, TimeInForce, type EngineConfig, type PositionRec } from '../../../engine/bus/types.js';
import { MARKET_ID_ALL } from '../../../engine/core/catalog.js';
import { BASE, cmd, EngineHarness, OTHER, QUOTE, ordersOf, resultOf, type Rec } from '../../helpers/engine-harness.js';
import { ONE } from '../../helpers/margin-harness.js';
import { PERP, perpConfig, perpMarket } from '../../helpers/perp-harness.js';

const FUNDS = 10_000_000;
const LIMIT = 9_000;
/** A second perpetual on the same underlying. */
const PERP2 = 3;

/** SOL's index at 300 ticks of the perpetual, BTC's at 500 ticks of the second one (a BTC unit has 8 decimals, a SOL unit 9). */
const SOL_AT_300 = 90_000 * 1e9;
const BTC_AT_500 = 15_000 * 1e9;

function setup(config: EngineConfig = { ...perpConfig(), positionLimitUnits: LIMIT }, btcIndex = BTC_AT_500): { h: EngineHarness; accounts: number[] } {
  const h = new EngineHarness(config);
  const accounts = h.fundedAccounts(5, { [QUOTE]: FUNDS });
  h.apply(cmd.setIndexPrice(BASE, SOL_AT_300));
  h.apply(cmd.setIndexPrice(OTHER, btcIndex));
  return { h, accounts };
}

/** perpConfig with a second perpetual, on BTC, weighted `weight` (at 10^-12), and the limit. */
function twoPerps(weight: bigint): EngineConfig {
  const config = perpConfig();
  const second = perpMarket({ positionLimitWeight: weight }, PERP2);
  config.markets.push({ ...second, baseAssetId: OTHER, symbol: 'BTC_USDC_PERP' });
  return { ...config, positionLimitUnits: LIMIT };
}

/** A place's result: its Result record's code when refused, Ok when it was accepted (answered by its order). */
const placeCode = (records: Rec[]): ResultCode => (records.some((r) => r.type === RecordType.Result) ? resultOf(records).code : ResultCode.Ok);
const filled = (records: Rec[], accountId: number): number =>
  ordersOf(records).filter((r) => r.event === OrderEvent.Fill && r.accountId === accountId).reduce((sum, r) => sum + r.lastFillQtyLots, 0);
const expiries = (records: Rec[]): ExpiryReason[] => ordersOf(records).filter((r) => r.event === OrderEvent.Expired).map((r) => r.expiryReason);

function size(h: EngineHarness, accountId: number, marketId = PERP): number {
  return h.apply({ kind: CommandKind.QueryPositions, accountId, marketId: MARKET_ID_ALL })
    .filter((r): r is PositionRec & { type: RecordType.Position } => r.type === RecordType.Position && r.marketId === marketId)
    .reduce((sum, r) => sum + r.netLots, 0);
}

describe('the accounts\' position limit', () => {
  it('stops a taker whose fill would take it beyond the limit; the limit itself is reached', () => {
    const { h, accounts: [a, b, c] } = setup();
    h.apply(cmd.place(b, 'ask', 500, 4, { market: PERP, postOnly: true }));
    h.apply(cmd.place(c, 'ask', 500, 4, { market: PERP, postOnly: true }));
    // a buys 8: 4 from b (6000), then c's 4 would take it to 12000 > 9000: the rest expires
    const capped = h.apply(cmd.place(a, 'bid', 500, 8, { market: PERP }));
    expect([filled(capped, a), expiries(capped), size(h, a)]).toEqual([4, [ExpiryReason.PositionLimit], 4]);
    // 2 more: 6 lots, 9000, exactly the limit
    const atLimit = h.apply(cmd.place(a, 'bid', 500, 2, { market: PERP }));
    expect([filled(atLimit, a), expiries(atLimit), size(h, a)]).toEqual([2, [], 6]);
    const beyond = h.apply(cmd.place(a, 'bid', 500, 1, { market: PERP }));
    expect([filled(beyond, a), expiries(beyond), size(h, a)]).toEqual([0, [ExpiryReason.PositionLimit], 6]);
    h.restartFromSnapshot();
    const again = h.apply(cmd.place(a, 'bid', 500, 1, { market: PERP }));
    expect([filled(again, a), expiries(again)]).toEqual([0, [ExpiryReason.PositionLimit]]);
  });

  it('passes a reducing fill even above the limit, and checks a flip by the size it leaves', () => {
    const { h, accounts: [a, b, c, d] } = setup();
    h.apply(cmd.place(b, 'ask', 500, 6, { market: PERP, postOnly: true }));
    h.apply(cmd.place(a, 'bid', 500, 6, { market: PERP })); // a long 6: 9000
    // At 600 a's six lots are worth 10800, above the limit: selling one reduces, and passes.
    h.apply(cmd.place(b, 'bid', 600, 1, { market: PERP, postOnly: true }));
    const reducing = h.apply(cmd.place(a, 'ask', 600, 1, { market: PERP }));
    expect([filled(reducing, a), expiries(reducing), size(h, a)]).toEqual([1, [], 5]);
    // a sells 12: 6 to c (long 5 → short 1, a reduction), then 6 to d would leave it short 7 (10500)
    h.apply(cmd.place(c, 'bid', 500, 6, { market: PERP, postOnly: true }));
    h.apply(cmd.place(d, 'bid', 500, 6, { market: PERP, postOnly: true }));
    const flip = h.apply(cmd.place(a, 'ask', 500, 12, { market: PERP }));
    expect([filled(flip, a), expiries(flip), size(h, a)]).toEqual([6, [ExpiryReason.PositionLimit], -1]);
    const within = h.apply(cmd.place(a, 'ask', 500, 5, { market: PERP }));
    expect([filled(within, a), expiries(within), size(h, a)]).toEqual([5, [], -6]);
  });

  it('stops the taker when the maker would go beyond its limit, and leaves the maker\'s order on the book', () => {
    const { h, accounts: [a, b, c] } = setup();
    h.apply(cmd.place(b, 'ask', 500, 6, { market: PERP, postOnly: true }));
    h.apply(cmd.place(a, 'bid', 500, 6, { market: PERP })); // a long 6: at its limit
    h.apply(cmd.place(a, 'bid', 499, 2, { market: PERP, postOnly: true }));
    const stopped = h.apply(cmd.place(c, 'ask', 499, 3, { market: PERP }));
    expect([filled(stopped, c), expiries(stopped), size(h, c)]).toEqual([0, [ExpiryReason.PositionLimit], 0]);
    expect(ordersOf(stopped).filter((r) => r.accountId === a)).toEqual([]);
    // Once a is short of its limit the same bid fills: a sells 2 to b (reducing), then c hits the bid.
    h.apply(cmd.place(b, 'bid', 500, 2, { market: PERP, postOnly: true }));
    h.apply(cmd.place(a, 'ask', 500, 2, { market: PERP }));
    const fills = h.apply(cmd.place(c, 'ask', 499, 2, { market: PERP }));
    expect([filled(fills, c), filled(fills, a), size(h, a)]).toEqual([2, 2, 6]);
  });

  it('expires a fill-or-kill order whose fills would pass the limit without trading', () => {
    const { h, accounts: [a, b] } = setup();
    h.apply(cmd.place(b, 'ask', 500, 7, { market: PERP, postOnly: true }));
    const fok = h.apply(cmd.place(a, 'bid', 500, 7, { market: PERP, tif: TimeInForce.FOK }));
    expect([filled(fok, a), expiries(fok), size(h, a)]).toEqual([0, [ExpiryReason.FillOrKill], 0]);
    const fits = h.apply(cmd.place(a, 'bid', 500, 6, { market: PERP, tif: TimeInForce.FOK }));
    expect([filled(fits, a), size(h, a)]).toEqual([6, 6]);
  });

  it('counts every perpetual of the account at its mark, by its weight', () => {
    const room = (weight: bigint, btcIndex = BTC_AT_500): number => {
      const { h, accounts: [a, b, c] } = setup(twoPerps(weight), btcIndex);
      h.apply(cmd.place(b, 'ask', 500, 2, { market: PERP2, postOnly: true }));
      h.apply(cmd.place(a, 'bid', 500, 2, { market: PERP2 })); // a long 2 of the second perpetual
      h.apply(cmd.setIndexPrice(OTHER, btcIndex));
      h.apply(cmd.place(c, 'ask', 500, 6, { market: PERP, postOnly: true }));
      // a buys one lot at a time: admitted at the mark (300), each fill at 500 checked.
      let lots = 0;
      for (let i = 0; i < 6; i++) {
        const records = h.apply(cmd.place(a, 'bid', 500, 1, { market: PERP }));
        expect(placeCode(records)).toBe(ResultCode.Ok);
        lots += filled(records, a);
        expect(expiries(records)).toEqual(filled(records, a) === 1 ? [] : [ExpiryReason.PositionLimit]);
      }
      return lots;
    };
    // Weight 1: the second perpetual's 2 lots count 3000, 4 lots (6000) fit beside them.
    expect(room(ONE)).toBe(4);
    // Weight 2: they count 6000, 2 lots fit; weight 0: they count nothing, 6 fit.
    expect(room(2n * ONE)).toBe(2);
    expect(room(0n)).toBe(6);
    // At a mark of 1.5 times the price weight 1 counts 4500: 3 lots fit.
    expect(room(ONE, BTC_AT_500 * 1.5)).toBe(3);
  });

  it('refuses an order whose whole quantity at the mark would take the position past the limit; reducing and reduce-only orders pass', () => {
    const { h, accounts: [a, b, c] } = setup();
    // At the mark (300 ticks, 900 a lot) the limit is 10 lots.
    const refused = h.apply(cmd.place(a, 'bid', 500, 11, { market: PERP }));
    expect([placeCode(refused), ordersOf(refused)]).toEqual([ResultCode.PositionLimit, []]);
    h.apply(cmd.place(b, 'ask', 500, 6, { market: PERP, postOnly: true }));
    h.apply(cmd.place(a, 'bid', 500, 6, { market: PERP })); // a long 6
    // Selling 12 leaves it short 6 (no larger): admitted; selling 17 (short 11) is refused.
    expect(placeCode(h.apply(cmd.place(a, 'ask', 510, 17, { market: PERP, postOnly: true })))).toBe(ResultCode.PositionLimit);
    expect(placeCode(h.apply(cmd.place(a, 'ask', 510, 12, { market: PERP, postOnly: true })))).toBe(ResultCode.Ok);
    expect(placeCode(h.apply(cmd.place(a, 'bid', 490, 5, { market: PERP, postOnly: true, flags: CommandFlag.ReduceOnly })))).toBe(ResultCode.Ok);
    // The other side: c, flat, may bid for 10 lots, not 11.
    expect(placeCode(h.apply(cmd.place(c, 'bid', 400, 11, { market: PERP, postOnly: true })))).toBe(ResultCode.PositionLimit);
    expect(placeCode(h.apply(cmd.place(c, 'bid', 400, 10, { market: PERP, postOnly: true })))).toBe(ResultCode.Ok);
  });

  it('without a configured limit, nothing is limited', () => {
    const { h, accounts: [a, b] } = setup(perpConfig());
    h.apply(cmd.place(b, 'ask', 500, 40, { market: PERP, postOnly: true }));
    const records = h.apply(cmd.place(a, 'bid', 500, 40, { market: PERP }));
    expect([filled(records, a), expiries(records)]).toEqual([40, []]);
  });
});
