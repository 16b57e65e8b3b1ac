// Open interest of a perpetual (engine/core/perp/open-interest.ts): Σ long lots, kept as positions
// change, and the market's openInterestLimitUnits checked at each fill: a fill that would raise the
// open interest past it does not happen (the taker's remainder expires PositionLimit), a fill that
// keeps or lowers it passes; a fill-or-kill order's check counts the limit.
//
// Grid (perp-harness): one lot is 10 units of SOL; a limit of 100 units is 10 lots.

import { describe, expect, it } from 'vitest';
import { CommandKind, ExpiryReason, OrderEvent, RecordType, ResultCode, TimeInForce, type PositionRec } from '../../../engine/bus/types.js';
import { BASE, cmd, EngineHarness, QUOTE, ordersOf, resultOf, type Rec } from '../../helpers/engine-harness.js';
import { PERP, perpConfig } from '../../helpers/perp-harness.js';

const FUNDS = 10_000_000;

function setup(): { h: EngineHarness; accounts: number[]; oi: () => number } {
  const h = new EngineHarness(perpConfig({ openInterestLimitUnits: 100 }));
  const accounts = h.fundedAccounts(3, { [QUOTE]: FUNDS });
  h.apply(cmd.setIndexPrice(BASE, 150_000 * 1e9));
  // Σ long positions in base units, from each account's position query.
  const oi = () => accounts.flatMap((accountId) => h.apply({ kind: CommandKind.QueryPositions, accountId, marketId: PERP }))
    .filter((r): r is PositionRec & { type: RecordType.Position } => r.type === RecordType.Position)
    .reduce((sum, r) => sum + Math.max(r.netLots, 0) * 10, 0);
  return { h, accounts, oi };
}

const filled = (records: Rec[], accountId: number): number =>
  ordersOf(records).filter((r) => r.event === OrderEvent.Fill && r.accountId === accountId).reduce((sum, r) => sum + r.lastFillQtyLots, 0);
const expiries = (records: Rec[]): ExpiryReason[] => ordersOf(records).filter((r) => r.event === OrderEvent.Expired).map((r) => r.expiryReason);

describe('perpetual open interest', () => {
  it('is the sum of long positions, and a fill raising it past the limit expires the taker PositionLimit while closing fills pass', () => {
    const { h, accounts: [a, b, c], oi } = setup();
    h.apply(cmd.place(b, 'ask', 500, 6, { market: PERP, postOnly: true }));
    h.apply(cmd.place(a, 'bid', 500, 6, { market: PERP })); // a long 6, b short 6
    expect(oi()).toBe(60);
    h.apply(cmd.place(c, 'ask', 500, 3, { market: PERP, postOnly: true }));
    h.apply(cmd.place(b, 'ask', 501, 5, { market: PERP, postOnly: true }));
    // a buys 8: 3 from c (OI 90), then b's 5 would take it to 140 > 100: refused, the rest expires
    const capped = h.apply(cmd.place(a, 'bid', 501, 8, { market: PERP }));
    expect([filled(capped, a), expiries(capped), oi()]).toEqual([3, [ExpiryReason.PositionLimit], 90]);
    // c (short 3) buys 3 from b's ask: c flat, b shorter, the longs unchanged
    const closing = h.apply(cmd.place(c, 'bid', 501, 3, { market: PERP }));
    expect([filled(closing, c), expiries(closing), oi()]).toEqual([3, [], 90]);
    // a (long 9) sells 4 to b (short 9): both reduce, the open interest falls
    h.apply(cmd.place(b, 'bid', 500, 4, { market: PERP, postOnly: true }));
    const reducing = h.apply(cmd.place(a, 'ask', 500, 4, { market: PERP }));
    expect([filled(reducing, a), expiries(reducing), oi()]).toEqual([4, [], 50]);
    h.restartFromSnapshot();
    expect(oi()).toBe(50);
  });

  it('QueryOpenInterest answers every perpetual or the one asked, in base units, and refuses a spot market', () => {
    const { h, accounts: [a, b] } = setup();
    h.apply(cmd.place(b, 'ask', 500, 4, { market: PERP, postOnly: true }));
    h.apply(cmd.place(a, 'bid', 500, 4, { market: PERP }));
    const records = h.apply({ kind: CommandKind.QueryOpenInterest, marketId: 0xffff });
    expect(records.filter((r) => r.type === RecordType.OpenInterest).map((r) => [r.marketId, r.openInterestUnits])).toEqual([[PERP, 40]]);
    expect(resultOf(records)).toMatchObject({ code: ResultCode.Ok, value: 1 });
    expect(resultOf(h.apply({ kind: CommandKind.QueryOpenInterest, marketId: 0 })).code).toBe(ResultCode.UnknownMarket);
  });

  it('a fill-or-kill order whose fills would pass the limit expires FillOrKill without trading', () => {
    const { h, accounts: [a, b], oi } = setup();
    h.apply(cmd.place(b, 'ask', 500, 11, { market: PERP, postOnly: true }));
    const fok = h.apply(cmd.place(a, 'bid', 500, 11, { market: PERP, tif: TimeInForce.FOK }));
    expect([filled(fok, a), expiries(fok), oi()]).toEqual([0, [ExpiryReason.FillOrKill], 0]);
    const fits = h.apply(cmd.place(a, 'bid', 500, 10, { market: PERP, tif: TimeInForce.FOK }));
    expect([filled(fits, a), oi()]).toEqual([10, 100]);
  });
});
