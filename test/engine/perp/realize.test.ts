// Realization of perpetual PnL at mark (engine/core/perp/realize.ts): every realizePnlIntervalUs
// of engine time each position moves its unrealized PnL at mark into USDC without changing its
// size; the entry cost (entry price, netCost) stays; nothing is created; a quiet spell realizes
// once; the state survives a snapshot; without the setting PnL is realized only on reductions. A
// pass in steps (realizeStepPositions) visits at most a step's positions a command, each once,
// lets orders in between, survives a snapshot between steps, and ends where the pass in one
// command ends.
import { describe, expect, it } from 'vitest';
import { BorrowLendSide, CommandKind, PositionEvent, RecordType, type EngineConfig, type PositionRec } from '../../../engine/bus/types.js';
import { Exchange } from '../../../engine/core/exchange.js';
import { exportSnapshot, importSnapshot } from '../../../engine/core/snapshot.js';
import { TimerKind } from '../../../engine/core/timers.js';
import { BASE, CollectingSink, EngineHarness, QUOTE, cmd, type Rec, stateOf } from '../../helpers/engine-harness.js';
import { commandFromSlot } from '../../../engine/bus/codec.js';
import { newCommandSlot } from '../../../engine/bus/generated/records.js';
import { formatElevenSnapshot, formatThirteenSnapshot, restoredCopy } from '../../helpers/snapshot-formats.js';
import { TRIGGER_SWITCH } from '../../../engine/core/margin/trigger-index.js';
import { ONE } from '../../helpers/margin-harness.js';
import { PERP, perpConfig } from '../../helpers/perp-harness.js';

const SECOND_US = 1_000_000;
const HOUR_US = 3_600 * SECOND_US;
const START_US = 20 * 3_600 * SECOND_US + 3 * SECOND_US;
const SOL = (usdc: number): number => usdc * 1_000_000_000;
const FUNDS = 10_000_000;


function config(intervalUs: number | null = 10 * SECOND_US) {
  return { ...perpConfig(), ...(intervalUs === null ? {} : { realizePnlIntervalUs: intervalUs }) };
}

const wide = (high: number, low: number): number => high * 2 ** 53 + low;

/** The account's one position as GET /api/v1/position reads it: size, entry cost, realized and unrealized PnL. */
function positionOf(h: EngineHarness, accountId: number): { netLots: number; costUnits: number; realizedUnits: number; unrealizedUnits: number } {
  const rows = h.apply({ kind: CommandKind.QueryPositions, accountId, marketId: 0xffff })
    .filter((r): r is PositionRec & { type: RecordType.Position } => r.type === RecordType.Position);
  expect(rows).toHaveLength(1);
  const [p] = rows;
  return {
    netLots: p.netLots, costUnits: wide(p.costHigh, p.costLow),
    realizedUnits: wide(p.realizedHigh, p.realizedLow), unrealizedUnits: wide(p.unrealizedHigh, p.unrealizedLow),
  };
}

/** A long and a short of 1000 lots at 500 ticks (SOL at 150 000 USDC per whole SOL: 1.5 USDC), the book left empty. */
function opened(intervalUs: number | null = 10 * SECOND_US) {
  const h = new EngineHarness(config(intervalUs));
  const [long, short] = h.fundedAccounts(2, { [QUOTE]: FUNDS });
  h.apply(cmd.setIndexPrice(BASE, SOL(150_000)), START_US);
  h.apply(cmd.place(short, 'ask', 500, 1000, { market: PERP, postOnly: true }));
  h.apply(cmd.place(long, 'bid', 500, 1000, { market: PERP }));
  return { h, long, short, s: stateOf(h.exchange) };
}

const balances = (records: Rec[], accountId: number) => records.filter((r) => r.type === RecordType.Balance && r.accountId === accountId);

describe('perpetual PnL realized at mark', () => {
  it('moves each position’s unrealized PnL into USDC on the interval, keeps the entry price, and creates nothing', () => {
    const { h, long, short, s } = opened();
    const usdc = h.exchange.totalUnits(QUOTE);
    const before = [long, short].map((a) => h.balance(a, QUOTE)[0]);
    const entry = [long, short].map((a) => positionOf(h, a));
    // SOL to 160 000: the long gains 1000 lots × 10 units × 0.16 − 1.5 USDC = 0.1 USDC, the short loses it.
    h.apply(cmd.setIndexPrice(BASE, SOL(160_000)), START_US + 2 * SECOND_US);
    expect(positionOf(h, long).unrealizedUnits).toBe(100_000);
    const records = h.apply(cmd.tick(), START_US + 8 * SECOND_US); // past 20:00:10
    expect(s.timers.dueOf(s.realization.timer)).toBe(START_US + 17 * SECOND_US);
    expect(balances(records, short)).toHaveLength(1);
    expect(h.balance(short, QUOTE)[0] - before[1]).toBe(-100_000);
    expect(h.balance(long, QUOTE)[0] - before[0]).toBe(100_000);
    for (const [i, accountId] of [long, short].entries()) {
      const p = positionOf(h, accountId);
      expect(p.unrealizedUnits).toBe(0);
      expect(p.realizedUnits).toBe(i === 0 ? 100_000 : -100_000);
      expect(p.netLots).toBe(entry[i].netLots);
      expect(p.costUnits).toBe(entry[i].costUnits);
    }
    expect(h.exchange.totalUnits(QUOTE)).toBe(usdc);
    h.exchange.validateInvariants();
    // The next interval at the same mark moves nothing.
    const quiet = h.apply(cmd.tick(), START_US + 18 * SECOND_US);
    expect(quiet.filter((r) => r.type === RecordType.Balance)).toEqual([]);
  });

  it('a reduction after a realization realizes from the mark it was realized at, the entry price staying', () => {
    const { h, long, short } = opened();
    h.apply(cmd.setIndexPrice(BASE, SOL(160_000)), START_US + 2 * SECOND_US);
    h.apply(cmd.tick(), START_US + 8 * SECOND_US);
    const before = positionOf(h, long);
    // The long sells 500 lots back at 540 ticks (0.162 USDC a lot): 500 × (0.162 − 0.16) = 0.001 USDC more.
    h.apply(cmd.place(short, 'bid', 540, 500, { market: PERP, postOnly: true }), START_US + 9 * SECOND_US);
    h.apply(cmd.place(long, 'ask', 540, 500, { market: PERP }));
    const after = positionOf(h, long);
    expect(after.netLots).toBe(500);
    expect(after.realizedUnits - before.realizedUnits).toBe(500 * 1620 - 500 * 1600);
    // Entry price stays 1.5 USDC a lot: the entry cost of the half left.
    expect(after.costUnits).toBe(before.costUnits / 2);
    h.exchange.validateInvariants();
  });

  it('a quiet spell of many intervals realizes once, and the timer waits for the multiple after the command', () => {
    const { h, short, s } = opened();
    h.apply(cmd.setIndexPrice(BASE, SOL(140_000)), START_US + 2 * SECOND_US);
    // 50 minutes later (before the hour's funding): one realization, one Balance for the loser.
    const at = START_US + 3_000 * SECOND_US + 5;
    const records = h.apply(cmd.tick(), at);
    expect(balances(records, short)).toHaveLength(1);
    expect(positionOf(h, short).realizedUnits).toBe(100_000);
    expect(s.timers.inOrder(TimerKind.RealizePnl)).toHaveLength(1);
    expect(s.timers.dueOf(s.realization.timer)).toBe(Math.floor(at / 10_000_000) * 10_000_000 + 10_000_000);
    h.exchange.validateInvariants();
  });

  it('keeps realized entry costs and the timer through a snapshot; a format-11 snapshot reads with entry = cost', () => {
    const { h, long } = opened();
    const formatEleven = formatElevenSnapshot(h.exchange);
    const hashAtEleven = h.exchange.stateHash();
    h.apply(cmd.setIndexPrice(BASE, SOL(155_000)), START_US + 2 * SECOND_US);
    h.apply(cmd.tick(), START_US + 8 * SECOND_US);
    const bytes = exportSnapshot(h.exchange);
    const restored = new Exchange(config());
    importSnapshot(restored, bytes);
    restored.validateInvariants();
    expect(restored.stateHash()).toBe(h.exchange.stateHash());
    expect(Buffer.from(exportSnapshot(restored)).equals(Buffer.from(bytes))).toBe(true);
    expect(stateOf(h.exchange).positions.entryCost[stateOf(h.exchange).positions.cell(long, PERP)]).not.toBe(stateOf(h.exchange).positions.cost[stateOf(h.exchange).positions.cell(long, PERP)]);
    const eleven = new Exchange(config());
    importSnapshot(eleven, formatEleven);
    eleven.validateInvariants();
    expect(eleven.stateHash()).toBe(hashAtEleven);
  });

  it('without the setting, nothing is realized until a position reduces (no timer waits)', () => {
    const { h, long, s } = opened(null);
    h.apply(cmd.setIndexPrice(BASE, SOL(160_000)), START_US + 2 * SECOND_US);
    h.apply(cmd.tick(), START_US + 60 * SECOND_US);
    expect(s.timers.inOrder(TimerKind.RealizePnl)).toEqual([]);
    expect(positionOf(h, long).realizedUnits).toBe(0);
    h.exchange.validateInvariants();
  });
});

/** `pairs` longs and shorts of 10·(i + 1) lots at 500 ticks on accounts after the first `idle` ones, the book left empty; S positions a step (null: no steps). */
function holders(step: number | null, pairs: number, idle = 0) {
  const h = new EngineHarness({ ...config(), ...(step === null ? {} : { realizeStepPositions: step }) });
  const accounts = h.fundedAccounts(idle + 2 * pairs, { [QUOTE]: FUNDS });
  h.apply(cmd.setIndexPrice(BASE, SOL(150_000)), START_US);
  for (let i = 0; i < pairs; i++) {
    h.apply(cmd.place(accounts[idle + 2 * i + 1], 'ask', 500, 10 * (i + 1), { market: PERP, postOnly: true }));
    h.apply(cmd.place(accounts[idle + 2 * i], 'bid', 500, 10 * (i + 1), { market: PERP }));
  }
  return { h, accounts, s: stateOf(h.exchange) };
}

/** The accounts whose position an Adjusted event reports in `records`. */
const adjusted = (records: Rec[]): number[] => records
  .filter((r): r is PositionRec & { type: RecordType.Position } => r.type === RecordType.Position && r.event === PositionEvent.Adjusted)
  .map((r) => r.accountId);

/** The first realization's due time after START_US (20:00:10), and the Tick just after it. */
const DUE_US = START_US + 7 * SECOND_US;

describe('realization and the liquidation trigger index', () => {
  /**
   * `opened`'s long and short under `cfg`, banded at SOL 160 000 (the mark then stays), then the
   * command that realizes them: its records, and the re-checks the price moves in it made.
   */
  function realizedRechecks(cfg: EngineConfig) {
    const h = new EngineHarness(cfg);
    const [long, short] = h.fundedAccounts(2, { [QUOTE]: FUNDS });
    h.apply(cmd.setIndexPrice(BASE, SOL(150_000)), START_US);
    h.apply(cmd.place(short, 'ask', 500, 1000, { market: PERP, postOnly: true }));
    h.apply(cmd.place(long, 'bid', 500, 1000, { market: PERP }));
    const s = stateOf(h.exchange);
    h.apply(cmd.setIndexPrice(BASE, SOL(160_000)), START_US + 2 * SECOND_US);
    expect([s.trigger.isBanded(long), s.trigger.isBanded(short)]).toEqual([true, true]);
    const before = TRIGGER_SWITCH.rechecks;
    // Past 20:00:10: the mark samples of each second and the realization at the multiple, in one command.
    const realized = h.apply(cmd.tick(), START_US + 8 * SECOND_US);
    return { rechecks: TRIGGER_SWITCH.rechecks - before, realized, s, long, short };
  }

  it('keeps the holders’ bands: USDC moved against the cost leaves their margin at every mark, so the next mark sample re-checks no one', () => {
    const { rechecks, realized, s, long, short } = realizedRechecks(config());
    expect(balances(realized, short)).toHaveLength(1);
    expect([s.positions.cost[s.positions.cell(long, PERP)], s.positions.cost[s.positions.cell(short, PERP)]]).toEqual([-1_600_000n, 1_600_000n]);
    expect(rechecks).toBe(0);
    expect([s.trigger.isBanded(long), s.trigger.isBanded(short)]).toEqual([true, true]);
  });

  it('an hour’s lend interest keeps a lender’s bands (its margin can only rise): the mark sample after it re-checks no one', () => {
    // Funding every 8 hours, so that the hour is only interest (funding pays and re-checks every holder).
    const cfg = config(null);
    cfg.markets = cfg.markets.map((m) => (m.perp === undefined ? m : { ...m, perp: { ...m.perp, fundingIntervalMs: 8 * 3_600_000 } }));
    const h = new EngineHarness(cfg);
    const [long, short] = h.fundedAccounts(2, { [QUOTE]: FUNDS });
    h.apply(cmd.setIndexPrice(BASE, SOL(150_000)), START_US);
    h.apply(cmd.place(short, 'ask', 500, 1000, { market: PERP, postOnly: true }));
    h.apply(cmd.place(long, 'bid', 500, 1000, { market: PERP }));
    // The long lends USDC, the short borrows half of it: both earn or owe interest each hour.
    h.apply({ kind: CommandKind.BorrowLend, accountId: long, assetId: QUOTE, side: BorrowLendSide.Lend, amountUnits: 9_000_000 });
    h.apply({ kind: CommandKind.BorrowLend, accountId: short, assetId: QUOTE, side: BorrowLendSide.Borrow, amountUnits: 4_500_000 });
    const s = stateOf(h.exchange);
    h.apply(cmd.setIndexPrice(BASE, SOL(150_000)), START_US + 2 * SECOND_US);
    expect([s.trigger.isBanded(long), s.trigger.isBanded(short)]).toEqual([true, true]);
    const lent = s.pools.lent[s.pools.cell(long, QUOTE)];
    const hourUs = Math.ceil(START_US / HOUR_US) * HOUR_US;
    h.apply(cmd.setIndexPrice(BASE, SOL(150_000)), hourUs - SECOND_US);
    const before = TRIGGER_SWITCH.rechecks;
    const hour = h.apply(cmd.tick(), hourUs + 1);
    expect(hour.filter((r) => r.type === RecordType.FundingPayment)).toEqual([]);
    // The long earned its interest; the short's borrow interest dropped its bands and the hour's
    // review of the borrowers drew them again; the mark sample of the same command re-checked no one.
    expect(s.pools.lent[s.pools.cell(long, QUOTE)]).toBeGreaterThan(lent);
    expect(TRIGGER_SWITCH.rechecks - before).toBe(0);
    expect([s.trigger.isBanded(long), s.trigger.isBanded(short)]).toEqual([true, true]);
  });

  it('drops them when USDC counts below full weight: the same realization moves their margin', () => {
    const cfg = config();
    cfg.margin = { ...cfg.margin!, collateral: cfg.margin!.collateral.map((c) => (c.assetId === QUOTE ? { ...c, haircut: { kind: 'identity' as const, weight: (ONE * 9n) / 10n } } : c)) };
    const { rechecks, realized, short } = realizedRechecks(cfg);
    expect(balances(realized, short)).toHaveLength(1);
    expect(rechecks).toBe(2);
  });
});

describe('a realization pass in steps', () => {
  it('visits at most a step of positions a command, each once, and ends in the state the pass in one command reaches', () => {
    const stepped = holders(3, 4);
    const whole = holders(null, 4);
    for (const { h } of [stepped, whole]) h.apply(cmd.setIndexPrice(BASE, SOL(160_000)), START_US + 2 * SECOND_US);
    const visits: number[][] = [];
    let timeUs = DUE_US + 1;
    do {
      visits.push(adjusted(stepped.h.apply(cmd.tick(), timeUs)));
      whole.h.apply(cmd.tick(), timeUs);
      stepped.h.exchange.validateInvariants();
      // While the pass has steps left its timer waits 1 µs: the next command runs the next step.
      if (stepped.s.realization.passing()) expect(stepped.s.timers.dueOf(stepped.s.realization.timer)).toBe(timeUs + 1);
      timeUs++;
    } while (stepped.s.realization.passing());
    // 8 positions, 3 a step: 3 commands, in ascending account order, every position once.
    expect(visits.map((v) => v.length)).toEqual([3, 3, 2]);
    expect(visits.flat()).toEqual([...stepped.accounts].sort((a, b) => a - b));
    expect(stepped.s.timers.dueOf(stepped.s.realization.timer)).toBe(DUE_US + 10 * SECOND_US);
    expect(stepped.h.exchange.stateHash()).toBe(whole.h.exchange.stateHash());
    for (const accountId of stepped.accounts) expect(positionOf(stepped.h, accountId).unrealizedUnits).toBe(0);
  });

  it('lets orders in between its steps: a position opened behind the cursor waits for the next pass, one ahead of it realizes in this one', () => {
    // Accounts 1 and 2 idle, 3–6 holding; 7 and 8 created after the setup.
    const { h, accounts, s } = holders(2, 2, 2);
    const [behindBuyer, behindSeller] = accounts;
    const [aheadBuyer, aheadSeller] = [101, 102].map((seed) => h.createAccount(seed));
    for (const accountId of [aheadBuyer, aheadSeller]) h.apply(cmd.deposit(accountId, QUOTE, FUNDS));
    h.apply(cmd.setIndexPrice(BASE, SOL(160_000)), START_US + 2 * SECOND_US);
    const first = adjusted(h.apply(cmd.tick(), DUE_US + 1));
    expect(first).toEqual([accounts[2], accounts[3]]);
    expect(s.realization.passAccount).toBe(accounts[3] + 1);
    // In the same engine microsecond (no step is due): a trade behind the cursor and one ahead of it.
    const between = [
      cmd.place(behindSeller, 'ask', 520, 5, { market: PERP, postOnly: true }), cmd.place(behindBuyer, 'bid', 520, 5, { market: PERP }),
      cmd.place(aheadSeller, 'ask', 520, 7, { market: PERP, postOnly: true }), cmd.place(aheadBuyer, 'bid', 520, 7, { market: PERP }),
    ].flatMap((c) => adjusted(h.apply(c, DUE_US + 1)));
    expect(between).toEqual([]);
    const rest: number[] = [];
    for (let timeUs = DUE_US + 2; s.realization.passing(); timeUs++) rest.push(...adjusted(h.apply(cmd.tick(), timeUs)));
    expect(rest).toEqual([accounts[4], accounts[5], aheadBuyer, aheadSeller]);
    // Opened at 520 ticks (1.56 USDC a lot) and realized at 1.6: the ones ahead show nothing unrealized, the ones behind still do.
    expect(positionOf(h, aheadBuyer).unrealizedUnits).toBe(0);
    expect(positionOf(h, behindBuyer).unrealizedUnits).toBe(5 * 1600 - 5 * 1560);
    h.exchange.validateInvariants();
  });

  it('survives a snapshot between its steps: the restored engine finishes the pass as the one that goes on', () => {
    const { h, s } = holders(2, 3);
    const between = formatThirteenSnapshot(h.exchange);
    const hashBetween = h.exchange.stateHash();
    h.apply(cmd.setIndexPrice(BASE, SOL(155_000)), START_US + 2 * SECOND_US);
    h.apply(cmd.tick(), DUE_US + 1);
    expect(s.realization.passing()).toBe(true);
    const { bytes, restored } = restoredCopy(h.exchange, h.config as EngineConfig);
    // The cursor is state: the same bytes with no pass running (its part, before the funding passes' count and the interest pass, zeroed) hash apart.
    const noPass = bytes.slice();
    noPass.fill(0, noPass.length - 4 - 16 - 16, noPass.length - 4 - 16);
    const stopped = new Exchange(h.config as EngineConfig);
    importSnapshot(stopped, noPass);
    stopped.validateInvariants();
    expect(stateOf(stopped).realization.passing()).toBe(false);
    expect(stopped.stateHash()).not.toBe(h.exchange.stateHash());
    for (let timeUs = DUE_US + 2; s.realization.passing(); timeUs++) {
      h.apply(cmd.tick(), timeUs);
      restored.apply(commandFromSlot({ ...newCommandSlot(), ...cmd.tick() }), s.lastSeq, timeUs, new CollectingSink());
    }
    expect(restored.stateHash()).toBe(h.exchange.stateHash());
    // A format-13 snapshot (before the steps) reads as a state with no pass running.
    const thirteen = new Exchange(h.config as EngineConfig);
    importSnapshot(thirteen, between);
    thirteen.validateInvariants();
    expect(thirteen.stateHash()).toBe(hashBetween);
  });

  it('is refused without realization, or with a step that is not a whole number from 1', () => {
    for (const realizeStepPositions of [0, 1.5, -2]) expect(() => new Exchange({ ...config(), realizeStepPositions })).toThrow(/realizeStepPositions must be/);
    expect(() => new Exchange({ ...config(null), realizeStepPositions: 4 })).toThrow(/realizeStepPositions needs realizePnlIntervalUs/);
  });
});
