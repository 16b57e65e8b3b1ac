// A perpetual's funding pass in steps (engine/core/perp/funding-passes.ts): a step pays at most
// fundingStepPositions holders a command, in ascending account order, each once; orders go on
// between the steps, and a fill pays a party the pass has not reached on its size at the
// interval's end first, so every position pays what the pass in one command makes it pay; a
// position opened after the end pays nothing for it; the pass survives a snapshot between its
// steps; the next interval's end finishes a pass still running first.
import { describe, expect, it } from 'vitest';
import { commandFromSlot } from '../../../engine/bus/codec.js';
import { newCommandSlot } from '../../../engine/bus/generated/records.js';
import { RecordType, type EngineConfig, type FundingPaymentRec } from '../../../engine/bus/types.js';
import { Exchange } from '../../../engine/core/exchange.js';
import { exportSnapshot, importSnapshot } from '../../../engine/core/snapshot.js';
import { TimerKind } from '../../../engine/core/timers.js';
import { BASE, CollectingSink, EngineHarness, QUOTE, cmd, stateOf, type Rec } from '../../helpers/engine-harness.js';
import { PERP, perpConfig } from '../../helpers/perp-harness.js';
import { formatFourteenSnapshot, restoredCopy } from '../../helpers/snapshot-formats.js';

const HOUR_US = 3_600_000_000;
const SECOND_US = 1_000_000;
const SOL_150 = 150_000 * 1_000_000_000; // as mark-funding.test.ts: 1000 lots pay whole units
/** The interval's end the tests settle, and the first command after it. */
const END_US = 11 * HOUR_US;
const FUNDS = 10_000_000;

function payments(records: Rec[]): FundingPaymentRec[] {
  return records.filter((r): r is FundingPaymentRec & { type: RecordType.FundingPayment } => r.type === RecordType.FundingPayment);
}

/** [account, quantity, lots, interval end] of each payment, sorted by account. */
const paid = (records: Rec[]): number[][] => payments(records).map((p) => [p.accountId, p.quantityUnits, p.positionLots, p.intervalEndUs]).sort((a, b) => a[0] - b[0]);

/** Pair i's size: large enough that a receiver's share, rounded down, is not 0. */
const lotsOf = (i: number): number => 1000 - 10 * i; // the market takes at most 1000 lots an order

/**
 * `pairs` longs and shorts of lotsOf(i) lots at 500 ticks on the accounts after the first `idle`
 * ones, the hour's samples taken up to a second before END_US; S holders a step (null: no steps).
 */
function holders(step: number | null, pairs: number, idle = 0) {
  const config: EngineConfig = { ...perpConfig(), ...(step === null ? {} : { fundingStepPositions: step }) };
  const h = new EngineHarness(config);
  const accounts = h.fundedAccounts(idle + 2 * pairs, { [QUOTE]: FUNDS });
  h.apply(cmd.setIndexPrice(BASE, SOL_150), END_US - 20 * SECOND_US);
  for (let i = 0; i < pairs; i++) {
    h.apply(cmd.place(accounts[idle + 2 * i + 1], 'ask', 500, lotsOf(i), { market: PERP, postOnly: true }));
    h.apply(cmd.place(accounts[idle + 2 * i], 'bid', 500, lotsOf(i), { market: PERP }));
  }
  for (let t = END_US - 19 * SECOND_US; t < END_US; t += SECOND_US) h.apply(t % (10 * SECOND_US) === 0 ? cmd.setIndexPrice(BASE, SOL_150) : cmd.tick(), t);
  const s = stateOf(h.exchange);
  return { h, accounts, s, ordinal: s.positions.ordinalOf[PERP] };
}

describe('a funding pass in steps', () => {
  it('pays at most a step of holders a command, ascending, each once, and ends in the state the pass in one command reaches', () => {
    const stepped = holders(3, 4);
    const whole = holders(null, 4);
    const steps: number[][] = [];
    const all: Rec[] = [];
    const wholeRecords: Rec[] = [];
    let timeUs = END_US + 1;
    do {
      const records = stepped.h.apply(cmd.tick(), timeUs);
      all.push(...records);
      steps.push(payments(records).map((p) => p.accountId));
      wholeRecords.push(...whole.h.apply(cmd.tick(), timeUs));
      stepped.h.exchange.validateInvariants();
      if (stepped.s.fundingPasses.passing(stepped.ordinal)) expect(stepped.s.timers.dueOf(stepped.s.fundingPasses.timer[stepped.ordinal])).toBe(timeUs + 1);
      timeUs++;
    } while (stepped.s.fundingPasses.passing(stepped.ordinal));
    expect(steps.map((accounts) => accounts.length)).toEqual([3, 3, 2]);
    expect(steps.flat()).toEqual([...stepped.accounts].sort((a, b) => a - b));
    expect(paid(all)).toEqual(paid(wholeRecords));
    expect(paid(all).every(([, , , end]) => end === END_US)).toBe(true);
    expect(stepped.s.timers.inOrder(TimerKind.FundingStep)).toEqual([]);
    expect(stepped.h.exchange.stateHash()).toBe(whole.h.exchange.stateHash());
  });

  it('lets orders in between its steps: a fill pays a party ahead of the pass on its size at the end first, and a position opened after the end pays nothing', () => {
    // Accounts 1 and 2 idle, 3–6 holding (3 long 1000, 4 short 1000, 5 long 990, 6 short 990); 7 and 8 created after the end.
    const stepped = holders(2, 2, 2);
    const whole = holders(null, 2, 2);
    const records = new Map<EngineHarness, Rec[]>([[stepped.h, []], [whole.h, []]]);
    const both = (fields: Parameters<EngineHarness['apply']>[0], timeUs: number): void => {
      for (const h of [stepped.h, whole.h]) records.get(h)!.push(...h.apply(fields, timeUs));
    };
    both(cmd.tick(), END_US + 1);
    expect(payments(records.get(stepped.h)!).map((p) => p.accountId)).toEqual([3, 4]);
    expect(stepped.s.fundingPasses.account[stepped.ordinal]).toBe(5);
    for (const { h } of [stepped, whole]) for (const seed of [101, 102]) h.apply(cmd.deposit(h.createAccount(seed), QUOTE, FUNDS), END_US + 1);
    // In the same engine microsecond (no step is due): 5 sells its 990 lots to 1 (behind the pass), 7 and 8 open positions (ahead of it).
    const before = payments(records.get(stepped.h)!).length;
    both(cmd.place(1, 'bid', 510, 990, { market: PERP, postOnly: true }), END_US + 1);
    both(cmd.place(5, 'ask', 510, 990, { market: PERP }), END_US + 1);
    both(cmd.place(7, 'bid', 505, 7, { market: PERP, postOnly: true }), END_US + 1);
    both(cmd.place(8, 'ask', 505, 7, { market: PERP }), END_US + 1);
    const between = payments(records.get(stepped.h)!).slice(before);
    // Only 5 paid, on the 990 lots it held at the end, before its fill.
    expect(between.map((p) => [p.accountId, p.positionLots])).toEqual([[5, 990]]);
    expect([7, 8].map((a) => stepped.s.fundingPasses.paidEndUs[stepped.s.positions.cell(a, PERP)])).toEqual([END_US, END_US]);
    for (let timeUs = END_US + 2; stepped.s.fundingPasses.passing(stepped.ordinal); timeUs++) both(cmd.tick(), timeUs);
    // The rest of the pass paid 6 alone; every payment is the one-command pass's, 1, 7 and 8 none.
    expect(paid(records.get(stepped.h)!)).toEqual(paid(records.get(whole.h)!));
    expect(paid(records.get(stepped.h)!).map(([a]) => a)).toEqual([3, 4, 5, 6]);
    // Each account holds and is owed what it is after the pass in one command: its USDC plus its
    // claim, its position and its funding. Which claims the line has paid may differ: 5's profit
    // joined the queue before 6's receipt here, after it there.
    const holdings = (x: typeof stepped): string[] => [1, 2, 3, 4, 5, 6, 7, 8].map((a) => {
      const p = x.s.positions;
      const cell = p.cell(a, PERP);
      return [BigInt(x.s.ledger.availableUnits(a, QUOTE)) + p.unsettled[cell], p.lots[cell], p.cost[cell], p.realized[cell], x.s.perpMarks.cumulative.of(cell, p)].join(' ');
    });
    expect(holdings(stepped)).toEqual(holdings(whole));
    expect(stepped.s.positions.settlementUnits[QUOTE]).toBe(whole.s.positions.settlementUnits[QUOTE]);
    stepped.h.exchange.validateInvariants();
  });

  it('survives a snapshot between its steps, with the parties a fill paid ahead of it', () => {
    const { h, s, ordinal } = holders(2, 3);
    const beforeEnd = formatFourteenSnapshot(h.exchange);
    const hashBeforeEnd = h.exchange.stateHash();
    h.apply(cmd.tick(), END_US + 1);
    // 6 (short 980, ahead of the pass) buys back 10 lots from 5: both pay first.
    h.apply(cmd.place(5, 'ask', 500, 10, { market: PERP, postOnly: true }), END_US + 1);
    h.apply(cmd.place(6, 'bid', 500, 10, { market: PERP }), END_US + 1);
    expect(s.fundingPasses.passing(ordinal)).toBe(true);
    const { bytes, restored } = restoredCopy(h.exchange, h.config);
    // The pass is state: the same bytes with no pass running (its part, 7 numbers and the 2 paid ahead, a count of 0) hash apart.
    const part = 8 * (7 + 2);
    // After it come the interest pass part (8 bytes, none running) and the end marker: 12 bytes kept as they are.
    const tail = 12;
    const noPass = new Uint8Array(bytes.length - part + 8);
    noPass.set(bytes.subarray(0, bytes.length - tail - part));
    noPass.set(bytes.subarray(bytes.length - tail), noPass.length - tail);
    const stopped = new Exchange(h.config);
    importSnapshot(stopped, noPass);
    expect(stateOf(stopped).fundingPasses.passing(ordinal)).toBe(false);
    expect(stopped.stateHash()).not.toBe(h.exchange.stateHash());
    // So are the parties a fill paid ahead of it: without them (a count of 0) the pass would pay them again.
    const unpaid = new Uint8Array(bytes.length - 16);
    unpaid.set(bytes.subarray(0, bytes.length - tail - 24));
    unpaid.set(bytes.subarray(bytes.length - tail), unpaid.length - tail);
    expect(new DataView(bytes.buffer, bytes.byteOffset).getUint32(bytes.length - tail - 24, true)).toBe(2);
    const forgotten = new Exchange(h.config);
    importSnapshot(forgotten, unpaid);
    expect(stateOf(forgotten).fundingPasses.passing(ordinal)).toBe(true);
    expect(forgotten.stateHash()).not.toBe(h.exchange.stateHash());
    for (let timeUs = END_US + 2; s.fundingPasses.passing(ordinal); timeUs++) {
      h.apply(cmd.tick(), timeUs);
      restored.apply(commandFromSlot({ ...newCommandSlot(), ...cmd.tick() }), s.lastSeq, timeUs, new CollectingSink());
    }
    expect(restored.stateHash()).toBe(h.exchange.stateHash());
    // A format-14 snapshot (before the steps) reads as a state with no pass running.
    const fourteen = new Exchange(h.config);
    importSnapshot(fourteen, beforeEnd);
    fourteen.validateInvariants();
    expect(fourteen.stateHash()).toBe(hashBeforeEnd);
  });

  it('the next interval’s end finishes a pass still running before it starts the next', () => {
    const { h, s, ordinal, accounts } = holders(1, 4);
    const records = h.apply(cmd.tick(), END_US + 1);
    expect(payments(records)).toHaveLength(1);
    // Half an hour on: a fresh index and its sample (two more steps).
    records.push(...h.apply(cmd.setIndexPrice(BASE, SOL_150), END_US + HOUR_US / 2));
    records.push(...h.apply(cmd.tick(), END_US + HOUR_US / 2 + SECOND_US));
    records.push(...h.apply(cmd.setIndexPrice(BASE, SOL_150), END_US + HOUR_US - SECOND_US));
    expect(s.fundingPasses.passing(ordinal)).toBe(true);
    records.push(...h.apply(cmd.tick(), END_US + HOUR_US + 1));
    const ends = payments(records);
    expect(ends.filter((p) => p.intervalEndUs === END_US).map((p) => p.accountId)).toEqual([...accounts].sort((a, b) => a - b));
    expect(ends.filter((p) => p.intervalEndUs === END_US + HOUR_US).map((p) => p.accountId)).toEqual([accounts[0]]);
    expect(s.fundingPasses.endUs[ordinal]).toBe(END_US + HOUR_US);
    h.exchange.validateInvariants();
  });

  it('is refused without a perpetual market, or with a step that is not a whole number from 1', () => {
    for (const fundingStepPositions of [0, 2.5, -1]) expect(() => new Exchange({ ...perpConfig(), fundingStepPositions })).toThrow(/fundingStepPositions must be/);
    const spot = perpConfig();
    spot.markets = spot.markets.filter((m) => m.perp === undefined);
    expect(() => new Exchange({ ...spot, fundingStepPositions: 8 })).toThrow(/fundingStepPositions needs a perpetual market/);
  });
});
