// Perpetual positions, one line per fill: open, add, reduce, flip and close, with the entry price
// (weighted average of increasing fills, kept by reductions, reset by a flip), the realized PnL
// (the reduced share of the cost, rounded against the account), the futures fees (maker 2 bps,
// taker 5 bps of the notional, in USDC) and every USDC move: losses paid into the settlement
// line, profits paid out of it, a profit the line cannot pay yet waiting as a claim until a loss
// arrives. The harness checks invariants (positions sum to 0, the claim queue) and USDC
// conservation (accounts + fees + settlement line = deposits) after every command.
//
// Grid (perp-harness): one lot is 10 units of SOL, one tick × one lot 3 USDC units, so a fill of q
// lots at p ticks has notional 3·p·q USDC units.

import { describe, expect, it } from 'vitest';
import { CommandFlag, CommandKind, RecordType, ResultCode, type PositionRec } from '../../../engine/bus/types.js';
import { MARKET_ID_ALL } from '../../../engine/core/catalog.js';
import { BASE, cmd, EngineHarness, QUOTE, resultOf, type Rec } from '../../helpers/engine-harness.js';
import { lend } from '../../helpers/margin-harness.js';
import { PERP, perpConfig } from '../../helpers/perp-harness.js';

const FUNDS = 10_000_000;
const WIDE = 2 ** 53;
const wide = (high: number, low: number): number => high * WIDE + low;

/** Each account's view of its SOL_USDC_PERP position: lots, entry (USDC units per lot), realized, unsettled, fees, id. */
interface PositionState {
  lots: number;
  entryPerLot: number;
  realized: number;
  unsettled: number;
  fees: number;
}

function positionsOf(h: EngineHarness, accountId: number): PositionRec[] {
  const records: Rec[] = h.apply({ kind: CommandKind.QueryPositions, accountId, marketId: MARKET_ID_ALL });
  expect(resultOf(records).code).toBe(ResultCode.Ok);
  return records.filter((r): r is PositionRec & { type: RecordType.Position } => r.type === RecordType.Position);
}

function stateOf(h: EngineHarness, accountId: number): PositionState | null {
  const [position] = positionsOf(h, accountId);
  if (position === undefined) return null;
  const cost = wide(position.costHigh, position.costLow);
  return {
    lots: position.netLots,
    entryPerLot: position.netLots === 0 ? 0 : -cost / position.netLots,
    realized: wide(position.realizedHigh, position.realizedLow),
    unsettled: wide(position.unsettledHigh, position.unsettledLow),
    fees: wide(position.feesHigh, position.feesLow),
  };
}

interface Step {
  what: string;
  /** maker [account, side, price, lots] rests post-only; taker [account, side, price, lots] crosses it. */
  maker: [number, 'bid' | 'ask', number, number];
  taker: [number, 'bid' | 'ask', number, number];
  /** Expected after the step, by account index 0 (A), 1 (B), 2 (C). */
  positions: (PositionState | null)[];
  usdc: [number, number, number];
  fees: number;
  line: number;
}

const A = 0;
const B = 1;
const C = 2;

// Entry per lot is 3 × entry ticks: 1500 is 500 ticks, 1650 is 550.
const STEPS: Step[] = [
  {
    what: 'A opens long 10 @500 from B (B opens short)',
    maker: [B, 'ask', 500, 10], taker: [A, 'bid', 500, 10],
    positions: [
      { lots: 10, entryPerLot: 1500, realized: 0, unsettled: 0, fees: 7 },
      { lots: -10, entryPerLot: 1500, realized: 0, unsettled: 0, fees: 3 },
      null,
    ],
    usdc: [FUNDS - 7, FUNDS - 3, FUNDS], fees: 10, line: 0,
  },
  {
    what: 'A adds 10 @600: entry is the weighted average 550',
    maker: [B, 'ask', 600, 10], taker: [A, 'bid', 600, 10],
    positions: [
      { lots: 20, entryPerLot: 1650, realized: 0, unsettled: 0, fees: 16 },
      { lots: -20, entryPerLot: 1650, realized: 0, unsettled: 0, fees: 6 },
      null,
    ],
    usdc: [FUNDS - 16, FUNDS - 6, FUNDS], fees: 22, line: 0,
  },
  {
    what: 'A reduces 5 @700 to C: realizes 5 × (2100 − 1650) = 2250, keeps entry 550; the empty line owes it as a claim',
    maker: [C, 'bid', 700, 5], taker: [A, 'ask', 700, 5],
    positions: [
      { lots: 15, entryPerLot: 1650, realized: 2250, unsettled: 2250, fees: 21 },
      { lots: -20, entryPerLot: 1650, realized: 0, unsettled: 0, fees: 6 },
      { lots: 5, entryPerLot: 2100, realized: 0, unsettled: 0, fees: 2 },
    ],
    usdc: [FUNDS - 21, FUNDS - 6, FUNDS - 2], fees: 29, line: 0,
  },
  {
    what: 'B buys back 10 @700 from C: B pays its 4500 loss into the line, which pays A\'s claim; C flips short at entry 700',
    maker: [C, 'ask', 700, 10], taker: [B, 'bid', 700, 10],
    positions: [
      { lots: 15, entryPerLot: 1650, realized: 2250, unsettled: 0, fees: 21 },
      { lots: -10, entryPerLot: 1650, realized: -4500, unsettled: 0, fees: 16 },
      { lots: -5, entryPerLot: 2100, realized: 0, unsettled: 0, fees: 6 },
    ],
    usdc: [FUNDS - 21 + 2250, FUNDS - 16 - 4500, FUNDS - 6], fees: 43, line: 2250,
  },
  {
    what: 'A closes 15 @700 to B, who flips long 5 at 700: A realizes 6750, paid from the line once B\'s 4500 loss arrives',
    maker: [A, 'ask', 700, 15], taker: [B, 'bid', 700, 15],
    positions: [
      null, // closed and settled: no longer listed (A's 9000 realized shows in its USDC)
      { lots: 5, entryPerLot: 2100, realized: -9000, unsettled: 0, fees: 31 },
      { lots: -5, entryPerLot: 2100, realized: 0, unsettled: 0, fees: 6 },
    ],
    usdc: [FUNDS - 27 + 9000, FUNDS - 31 - 9000, FUNDS - 6], fees: 64, line: 0,
  },
];

describe('perpetual positions', () => {
  it('open, add, reduce, flip and close move entry, realized PnL, fees and USDC as the table says', () => {
    const h = new EngineHarness(perpConfig());
    const accounts = h.fundedAccounts(3, { [QUOTE]: FUNDS });
    h.apply(cmd.setIndexPrice(BASE, 150_000 * 1e9)); // 500 ticks: every admission has a fresh mark
    for (const step of STEPS) {
      const [maker, makerSide, makerPrice, makerLots] = step.maker;
      const [taker, takerSide, takerPrice, takerLots] = step.taker;
      expect(h.apply(cmd.place(accounts[maker], makerSide, makerPrice, makerLots, { market: PERP, postOnly: true })).some((r) => r.type === RecordType.Result), step.what).toBe(false);
      h.apply(cmd.place(accounts[taker], takerSide, takerPrice, takerLots, { market: PERP }));
      expect(accounts.map((id) => stateOf(h, id)), step.what).toEqual(step.positions);
      expect(accounts.map((id) => h.balance(id, QUOTE)[0]), step.what).toEqual(step.usdc);
      expect(h.exchange.totalUnits(QUOTE), step.what).toBe(3 * FUNDS);
      // Accounts + fees + line = deposits, so the fees and the line follow from the balances.
      const held = step.usdc.reduce((a, b) => a + b, 0);
      expect(3 * FUNDS - held, step.what).toBe(step.fees + step.line);
      expect(h.balance(accounts[A], BASE)).toEqual([0, 0]); // the underlying is never held
      // Positions, the line and the claim queue survive a snapshot round trip (same hash, same bytes).
      h.restartFromSnapshot();
    }
  });

  it('admits an order by initial margin of the worst-side exposure; reductions always pass; no mark, no new exposure', () => {
    const h = new EngineHarness(perpConfig());
    const [maker] = h.fundedAccounts(1, { [QUOTE]: FUNDS });
    const poor = h.createAccount(9);
    h.apply(cmd.deposit(poor, QUOTE, 3000));
    const codeOf = (records: Rec[]) => (records.find((r) => r.type === RecordType.Result) as { code: number } | undefined)?.code ?? ResultCode.Ok;
    const rest = (accountId: number, side: 'bid' | 'ask', lots: number, price = 500) =>
      codeOf(h.apply(cmd.place(accountId, side, price, lots, { market: PERP, postOnly: true })));
    // No index price and a book that never traded: the perpetual has no mark.
    expect(rest(poor, 'bid', 1)).toBe(ResultCode.InsufficientMargin);
    h.apply(cmd.setIndexPrice(BASE, 150_000 * 1e9)); // 500 ticks: 1500 USDC units a lot
    // Leverage 1× (a new account's limit): IMF = 1, so 3000 units of equity carry 2 lots.
    const maxOrder = (side: number) => resultOf(h.apply({ kind: CommandKind.QueryMaxOrderQty, accountId: poor, marketId: PERP, side, priceTicks: 0 })).value;
    expect([maxOrder(0), maxOrder(1)]).toEqual([2, 2]);
    expect(rest(poor, 'bid', 3)).toBe(ResultCode.InsufficientMargin);
    expect(rest(poor, 'bid', 2)).toBe(ResultCode.Ok);
    expect(rest(poor, 'bid', 1)).toBe(ResultCode.InsufficientMargin); // resting bids count
    expect(h.balance(poor, QUOTE)).toEqual([3000, 0]); // a perpetual order locks nothing
    h.apply(cmd.place(maker, 'ask', 500, 2, { market: PERP })); // fills the bids: poor is long 2
    expect(stateOf(h, poor)).toMatchObject({ lots: 2, entryPerLot: 1500 });
    // Selling 4 flips to short 2: the worst side stays 2 lots, so it passes without the margin test.
    expect(rest(poor, 'ask', 4, 510)).toBe(ResultCode.Ok);
    expect(rest(poor, 'ask', 1, 510)).toBe(ResultCode.InsufficientMargin); // short 3 would need 4500
    // Long 2 with 4 lots offered: a bid raises the long side (2 + bids), an ask the short side (2 − asks).
    expect([maxOrder(0), maxOrder(1)]).toEqual([0, 0]);
    // Spot margin flags fund a held asset: a perpetual order carries none.
    expect(codeOf(h.apply(cmd.place(poor, 'ask', 510, 1, { market: PERP, postOnly: true, flags: CommandFlag.AutoBorrow })))).toBe(ResultCode.InvalidCommand);
  });

  it('a loss beyond available USDC stays a debt, the winner waits as a claim, and a deposit settles both', () => {
    const h = new EngineHarness(perpConfig());
    const [winner] = h.fundedAccounts(1, { [QUOTE]: FUNDS });
    const loser = h.createAccount(9);
    h.apply(cmd.deposit(loser, QUOTE, 100));
    h.apply(cmd.deposit(loser, BASE, 100_000)); // SOL collateral: 15 000 000 units at 500 ticks, weight 0.5
    h.apply(cmd.setIndexPrice(BASE, 150_000 * 1e9));
    h.apply(cmd.place(winner, 'bid', 500, 10, { market: PERP, postOnly: true }));
    h.apply(cmd.place(loser, 'ask', 500, 10, { market: PERP })); // loser short 10, taker fee 7
    h.apply(cmd.setIndexPrice(BASE, 180_000 * 1e9)); // 600 ticks
    h.apply(cmd.place(winner, 'ask', 600, 10, { market: PERP, postOnly: true }));
    h.apply(cmd.place(loser, 'bid', 600, 10, { market: PERP })); // loss 3000, taker fee 9
    // The loser paid its fee (9) and then what was left (84) of its 3000 loss; the line paid that to the winner.
    expect(h.balance(loser, QUOTE)).toEqual([0, 0]);
    expect(stateOf(h, loser)).toEqual({ lots: 0, entryPerLot: 0, realized: -3000, unsettled: -2916, fees: 16 });
    expect(stateOf(h, winner)).toEqual({ lots: 0, entryPerLot: 0, realized: 3000, unsettled: 2916, fees: 6 });
    expect(h.balance(winner, QUOTE)[0]).toBe(FUNDS - 6 + 84);
    h.apply(cmd.deposit(loser, QUOTE, 5000)); // pays the debt into the line, which pays the claim
    expect(h.balance(loser, QUOTE)).toEqual([5000 - 2916, 0]);
    expect(h.balance(winner, QUOTE)[0]).toBe(FUNDS - 6 + 3000);
    expect(positionsOf(h, loser)).toEqual([]);
    expect(positionsOf(h, winner)).toEqual([]);
    expect(h.exchange.totalUnits(QUOTE)).toBe(FUNDS + 5100);
  });

  it('with autoBorrowSettlements a loss beyond available USDC is borrowed from the pool and paid at once; without it, it stays a debt', () => {
    const run = (autoBorrowSettlements: boolean) => {
      const h = new EngineHarness(perpConfig());
      const [winner, lender] = h.fundedAccounts(2, { [QUOTE]: FUNDS });
      const loser = h.createAccount(9);
      h.apply(lend(lender, QUOTE, 1_000_000));
      h.apply(cmd.deposit(loser, QUOTE, 100));
      h.apply(cmd.deposit(loser, BASE, 100_000));
      h.apply(cmd.updateAccountSettings(loser, { autoBorrowSettlements }));
      h.apply(cmd.setIndexPrice(BASE, 150_000 * 1e9));
      h.apply(cmd.place(winner, 'bid', 500, 10, { market: PERP, postOnly: true }));
      h.apply(cmd.place(loser, 'ask', 500, 10, { market: PERP }));
      h.apply(cmd.setIndexPrice(BASE, 180_000 * 1e9));
      h.apply(cmd.place(winner, 'ask', 600, 10, { market: PERP, postOnly: true }));
      const records = h.apply(cmd.place(loser, 'bid', 600, 10, { market: PERP }));
      const borrows = records.filter((r) => r.type === RecordType.BorrowLend && r.accountId === loser);
      h.exchange.validateInvariants();
      return { h, loser, winner, borrows };
    };
    // Without the setting: the 2916 the loser could not pay stays on the position (the table above).
    const off = run(false);
    expect(off.borrows).toEqual([]);
    expect(stateOf(off.h, off.loser).unsettled).toBe(-2916);
    // With it: 2916 USDC borrowed (pool step 1) and paid into the line, which pays the winner in full.
    const on = run(true);
    expect(on.borrows.map((r) => [r.event, r.quantityUnits])).toEqual([[0, 2916]]);
    expect(on.h.balance(on.loser, QUOTE)).toEqual([0, 0]);
    expect(positionsOf(on.h, on.loser)).toEqual([]);
    expect(on.h.balance(on.winner, QUOTE)[0]).toBe(FUNDS - 6 + 3000);
    expect(on.h.exchange.totalUnits(QUOTE)).toBe(2 * FUNDS + 100);
  });

  it('a deposit that pays a perpetual debt lends (autoLend) only what it left available', () => {
    const h = new EngineHarness(perpConfig());
    const [winner] = h.fundedAccounts(1, { [QUOTE]: FUNDS });
    const loser = h.createAccount(9);
    h.apply(cmd.deposit(loser, QUOTE, 100));
    h.apply(cmd.deposit(loser, BASE, 100_000));
    h.apply(cmd.setIndexPrice(BASE, 150_000 * 1e9));
    h.apply(cmd.place(winner, 'bid', 500, 10, { market: PERP, postOnly: true }));
    h.apply(cmd.place(loser, 'ask', 500, 10, { market: PERP }));
    h.apply(cmd.setIndexPrice(BASE, 180_000 * 1e9));
    h.apply(cmd.place(winner, 'ask', 600, 10, { market: PERP, postOnly: true }));
    h.apply(cmd.place(loser, 'bid', 600, 10, { market: PERP })); // a debt of 2916
    expect(resultOf(h.apply(cmd.updateAccountSettings(loser, { autoLend: true }))).code).toBe(ResultCode.Ok);
    const records = h.apply(cmd.deposit(loser, QUOTE, 5000));
    expect(resultOf(records).code).toBe(ResultCode.Ok);
    const lent = records.filter((r) => r.type === RecordType.BorrowLend && r.accountId === loser).reduce((sum, r) => sum + (r as { quantityUnits: number }).quantityUnits, 0);
    expect(lent).toBeGreaterThan(0);
    expect(h.balance(loser, QUOTE)[0] + lent).toBe(5000 - 2916);
    h.check();
  });
});
