// The hour's interest pass in steps (engine/core/margin/interest-pass.ts): the hour's first command
// accrues the interest into every borrow; then at most interestStepAccounts accounts a command,
// ascending, have their lends paid and, borrowing, their margin re-checked (their trigger bands
// drawn); the commands after it (a Tick 1 µs on when the stream is quiet) do the rest. Every lend
// earns what the hour in one command pays it, a change of a lend ahead of the pass paying it first;
// a borrower the interest took over the line enters liquidation at its step; the pass survives a
// snapshot between its steps and is in the state hash while it runs; the next hour finishes it
// first.
import { describe, expect, it } from 'vitest';
import { commandFromSlot } from '../../../engine/bus/codec.js';
import { newCommandSlot } from '../../../engine/bus/generated/records.js';
import {
  AccountSettingFlag, BorrowLendEvent, BorrowLendSource, CommandKind, FRONT_ID_NONE, RecordType,
  type AccountSettingsRec, type BorrowLendRec, type EngineConfig,
} from '../../../engine/bus/types.js';
import { Exchange } from '../../../engine/core/exchange.js';
import { SnapshotFormatError, exportSnapshot, importSnapshot } from '../../../engine/core/snapshot.js';
import type { EngineState } from '../../../engine/core/state.js';
import { TimerKind } from '../../../engine/core/timers.js';
import { TRIGGER_SWITCH } from '../../../engine/core/margin/trigger-index.js';
import { BASE, CollectingSink, EngineHarness, QUOTE, cmd, stateOf, type Rec } from '../../helpers/engine-harness.js';
import { ONE, borrow, lend, marginConfig } from '../../helpers/margin-harness.js';
import { formatFifteenSnapshot, restoredCopy } from '../../helpers/snapshot-formats.js';

const HOUR_US = 3_600_000_000;
/** SOL at 60 USDC units per SOL unit, then at 6.0002: 10,000 SOL units weigh 30,001 (weight 0.5). */
const SOL_AT_60 = 60_000_000_000_000;
const SOL_AT_6_0002 = 6_000_200_000_000;

/** The accounts whose liquidating flag the events of `records` set, in order. */
function entered(records: Rec[]): number[] {
  return records.filter((r): r is AccountSettingsRec & { type: RecordType.AccountSettings } => r.type === RecordType.AccountSettings && r.frontId === FRONT_ID_NONE)
    .filter((r) => (r.settings & AccountSettingFlag.Liquidating) !== 0).map((r) => r.accountId);
}

const withdraw = (accountId: number, assetId: number, amountUnits: number) => ({ kind: CommandKind.Withdraw, accountId, assetId, amountUnits, key: new Uint8Array(32) });
/** A borrow of an asset the account lends redeems the lend first (BorrowLend). */
const redeem = borrow;

/**
 * A lender (account 1) and `borrowers` borrowers after it (2, 3, …), each with 10,000 SOL units at
 * 10× leverage: every one keeps its USDC and borrows 100,000 of it, except the one at index
 * `edge` (-1: none), which withdraws its USDC and borrows 600,000, one unit of equity above the
 * line at SOL 6.0002 (the others borrow `borrowEach`); then `lenders` more lenders of 300,000 USDC
 * each. S accounts a step (null:
 * no steps). The last command is an hour before the next.
 */
function borrowersAtTheLine(step: number | null, borrowers: number, edge: number, lenders = 0, borrowEach = 100_000) {
  const config: EngineConfig = { ...marginConfig({ maxUtilization: ONE, fee: 0n }, { maxUtilization: ONE, fee: 0n }), ...(step === null ? {} : { interestStepAccounts: step }) };
  const h = new EngineHarness(config);
  const [lender, ...others] = h.fundedAccounts(1 + borrowers + lenders, { [QUOTE]: 1_000_000 });
  const accounts = others.slice(0, borrowers);
  h.apply(cmd.deposit(lender, QUOTE, 1_000_000));
  h.apply(lend(lender, QUOTE, 2_000_000));
  for (const a of others.slice(borrowers)) h.apply(lend(a, QUOTE, 300_000));
  h.apply(cmd.setIndexPrice(BASE, SOL_AT_60));
  accounts.forEach((a, i) => {
    h.apply(cmd.deposit(a, BASE, 10_000));
    h.apply(cmd.updateAccountSettings(a, { leverageLimitHundredths: 1_000 }));
    if (i === edge) h.apply(withdraw(a, QUOTE, 1_000_000));
    expect(h.apply(borrow(a, QUOTE, i === edge ? 600_000 : borrowEach)).at(-1)).toMatchObject({ type: RecordType.Result, code: 0 });
  });
  // Equity 30,001 against an MMF of 30,000: not yet over the line.
  expect(entered(h.apply(cmd.setIndexPrice(BASE, SOL_AT_6_0002)))).toEqual([]);
  const s = stateOf(h.exchange);
  const hourUs = HOUR_US * (Math.floor(h.timeUs / HOUR_US) + 1);
  return { h, s, accounts, hourUs };
}

/** [account, event, units] of each interest record, in order. */
function interestRecords(records: Rec[]): number[][] {
  return records.filter((r): r is BorrowLendRec & { type: RecordType.BorrowLend } => r.type === RecordType.BorrowLend && r.source === BorrowLendSource.Interest)
    .map((r) => [r.accountId, r.event, r.quantityUnits]);
}

/** What an account holds and lends or borrows of USDC, and its liquidating flag. */
function holdings(s: EngineState, h: EngineHarness, accountId: number): number[] {
  const cell = s.pools.cell(accountId, QUOTE);
  return [...h.balance(accountId, QUOTE), s.pools.lent[cell], s.pools.borrowed[cell], s.pools.interest[cell], s.accountSettings.flags[accountId]];
}

/** Runs Ticks 1 µs apart from `fromUs` while the pass has steps left; the records of each command. */
function runPass(h: EngineHarness, s: EngineState, fromUs: number): Rec[][] {
  const commands: Rec[][] = [];
  for (let timeUs = fromUs; s.interestPass.passing(); timeUs++) {
    commands.push(h.apply(cmd.tick(), timeUs));
    h.exchange.validateInvariants();
  }
  return commands;
}

describe("the hour's interest pass in steps", () => {
  it('accrues the borrowers at the hour, then pays the lenders and re-checks the borrowers a step of accounts a command, ascending, to the one-command hour\'s state', () => {
    const stepped = borrowersAtTheLine(2, 5, 2);
    const whole = borrowersAtTheLine(null, 5, 2);
    expect(stepped.accounts).toEqual([2, 3, 4, 5, 6]);
    const wholeHour = whole.h.apply(cmd.tick(), whole.hourUs + 1);
    expect(entered(wholeHour)).toEqual([4]);
    // The hour's first command: every borrow grows by its interest; then accounts 1 (the lender, paid) and 2 (re-checked).
    const first = stepped.h.apply(cmd.tick(), stepped.hourUs + 1);
    expect(entered(first)).toEqual([]);
    expect(interestRecords(first).map(([a, event]) => [a, event])).toEqual([
      ...[2, 3, 4, 5, 6].map((a) => [a, BorrowLendEvent.BorrowInterest]), [1, BorrowLendEvent.LendInterest],
    ]);
    expect(interestRecords(first).find(([a]) => a === 1)).toEqual(interestRecords(wholeHour).find(([a]) => a === 1));
    expect(stepped.s.interestPass.account).toBe(3);
    expect(stepped.s.timers.dueOf(stepped.s.interestPass.timer)).toBe(stepped.hourUs + 2);
    stepped.h.exchange.validateInvariants();
    // The next commands re-check 3 and 4 (4 enters liquidation here), then 5 and 6; the pools are sampled at the end.
    const rest = runPass(stepped.h, stepped.s, stepped.hourUs + 2);
    expect(rest.map(entered)).toEqual([[4], []]);
    // One sample per pool (USDC, SOL), at the end of the pass.
    expect(rest[1].filter((r) => r.type === RecordType.LendPoolSample)).toHaveLength(2);
    expect(first.filter((r) => r.type === RecordType.LendPoolSample)).toHaveLength(0);
    expect(stepped.s.timers.inOrder(TimerKind.InterestStep)).toEqual([]);
    // The same interest, lines, throttle and liquidation as the hour in one command.
    for (const accountId of [1, 2, 3, 4, 5, 6]) expect(holdings(stepped.s, stepped.h, accountId)).toEqual(holdings(whole.s, whole.h, accountId));
    for (const line of ['interestFeeUnits', 'interestRoundingUnits', 'stepStartUtilization', 'lentTotal', 'borrowedTotal'] as const) {
      expect([...stepped.s.pools[line]]).toEqual([...whole.s.pools[line]]);
    }
  });

  it('lets orders in between its steps: a lend ahead of the cursor earns its hour on its size at the hour before it changes, a lend opened after the hour earns nothing', () => {
    // Three borrowers of 600,000 against 2,600,000 lent: every lend earns whole units in the hour.
    const both = [borrowersAtTheLine(1, 3, -1, 2, 600_000), borrowersAtTheLine(null, 3, -1, 2, 600_000)];
    const [stepped, whole] = both;
    const records = both.map(() => [] as Rec[]);
    const apply = (fields: Parameters<EngineHarness['apply']>[0], timeUs: number): void => both.forEach((x, i) => records[i].push(...x.h.apply(fields, timeUs)));
    apply(cmd.tick(), stepped.hourUs + 1);
    expect(stepped.s.interestPass.account).toBe(2);
    // 5 and 6 lend (ahead of the cursor): 5 redeems half its lend, 6 adds to it; 7, new, lends after the hour.
    const late = stepped.h.createAccount(77);
    expect(whole.h.createAccount(77)).toBe(late);
    apply(cmd.deposit(late, QUOTE, 500_000), stepped.hourUs + 1);
    const before = records[0].length;
    apply(redeem(5, QUOTE, 150_000), stepped.hourUs + 1);
    apply(lend(6, QUOTE, 1_000), stepped.hourUs + 1);
    apply(lend(late, QUOTE, 100_000), stepped.hourUs + 1);
    // 5 and 6 were paid first, each before its own change; 7 earned nothing.
    expect(interestRecords(records[0].slice(before)).map(([a]) => a)).toEqual([5, 6]);
    expect(stepped.s.interestPass.paidHourUs[stepped.s.pools.cell(late, QUOTE)]).toBe(stepped.hourUs);
    records[0].push(...runPass(stepped.h, stepped.s, stepped.hourUs + 2).flat());
    // Every lend earned what it earned in the hour in one command, once; the lines and lends are the same.
    const earned = (x: Rec[]) => interestRecords(x).filter(([, event]) => event === BorrowLendEvent.LendInterest).sort((a, b) => a[0] - b[0]);
    expect(earned(records[0])).toEqual(earned(records[1]));
    expect(earned(records[0]).map(([a]) => a)).toEqual([1, 5, 6]);
    for (const accountId of [1, 2, 3, 4, 5, 6, late]) expect(holdings(stepped.s, stepped.h, accountId)).toEqual(holdings(whole.s, whole.h, accountId));
    expect([...stepped.s.pools.interestRoundingUnits]).toEqual([...whole.s.pools.interestRoundingUnits]);
  });

  it('survives a snapshot between its steps, with a lend paid ahead of it; is in the state hash while it runs; reads format-15 snapshots as none running', () => {
    const { h, s, hourUs } = borrowersAtTheLine(2, 5, 4, 1);
    const beforeHour = formatFifteenSnapshot(h.exchange);
    const hashBeforeHour = h.exchange.stateHash();
    h.apply(cmd.tick(), hourUs + 1);
    expect(s.interestPass.account).toBe(3);
    // 7 lends (ahead of the cursor) and redeems a part: paid first.
    h.apply(redeem(7, QUOTE, 1_000), hourUs + 1);
    const { bytes, restored } = restoredCopy(h.exchange, h.config);
    expect(stateOf(restored).interestPass.paidHourUs[s.pools.cell(7, QUOTE)]).toBe(hourUs);
    // The part, last before the end marker: account 3, the hour, one pool (USDC and its rate), one lend paid ahead.
    const part = 8 * (2 + 1 + 2 + 1 + 1);
    const at = bytes.length - 4 - part;
    const numbers = Array.from({ length: part / 8 }, (_, i) => Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(at + 8 * i, true)));
    expect([numbers[0], numbers[1], numbers[2], numbers[3], numbers[5], numbers[6]]).toEqual([3, hourUs, 1, QUOTE, 1, s.pools.cell(7, QUOTE)]);
    // The cursor one account on hashes apart; so does the lend paid ahead forgotten (it would be paid again).
    const further = bytes.slice();
    new DataView(further.buffer).setUint32(at, 4, true);
    const skipped = new Exchange(h.config);
    importSnapshot(skipped, further);
    expect(skipped.stateHash()).not.toBe(h.exchange.stateHash());
    const unpaid = new Uint8Array(bytes.length - 8);
    unpaid.set(bytes.subarray(0, bytes.length - 4 - 16));
    unpaid.set(bytes.subarray(bytes.length - 4), unpaid.length - 4);
    const forgotten = new Exchange(h.config);
    importSnapshot(forgotten, unpaid);
    expect(stateOf(forgotten).interestPass.passing()).toBe(true);
    expect(forgotten.stateHash()).not.toBe(h.exchange.stateHash());
    // Both go on to the same state: 6, the borrower at the line, enters in each.
    const flips: number[][] = [[], []];
    for (let timeUs = hourUs + 2; s.interestPass.passing(); timeUs++) {
      flips[0].push(...entered(h.apply(cmd.tick(), timeUs)));
      const sink = new CollectingSink();
      restored.apply(commandFromSlot({ ...newCommandSlot(), ...cmd.tick() }), s.lastSeq, timeUs, sink);
      flips[1].push(...entered(sink.records));
    }
    expect(flips).toEqual([[6], [6]]);
    expect(restored.stateHash()).toBe(h.exchange.stateHash());
    // A snapshot written before the pass's part reads as a state with none running.
    const fifteen = new Exchange(h.config);
    importSnapshot(fifteen, beforeHour);
    fifteen.validateInvariants();
    expect(fifteen.stateHash()).toBe(hashBeforeHour);
    // A pass in steps does not load under a configuration without them.
    const { interestStepAccounts: _step, ...unstepped } = h.config;
    expect(() => importSnapshot(new Exchange(unstepped), bytes)).toThrow(SnapshotFormatError);
  });

  it("an hour's interest while the pass still runs finishes it first, then starts the next", () => {
    const { h, s, hourUs } = borrowersAtTheLine(1, 4, 3);
    const first = h.apply(cmd.tick(), hourUs + 1);
    expect(interestRecords(first).filter(([a]) => a === 1)).toHaveLength(1);
    expect(s.interestPass.account).toBe(2);
    // Nothing for an hour: the next command runs the waiting step (2), the rest of the pass (3–5), then the next hour from 1.
    const next = h.apply(cmd.tick(), hourUs + HOUR_US + 1);
    expect(next.filter((r) => r.type === RecordType.LendPoolSample)).toHaveLength(2);
    expect(interestRecords(next).filter(([a]) => a === 1)).toHaveLength(1);
    expect(s.interestPass.account).toBe(2);
    expect(s.interestPass.hourUs).toBe(hourUs + HOUR_US);
    expect(s.timers.inOrder(TimerKind.InterestStep)).toHaveLength(1);
    h.exchange.validateInvariants();
  });

  it('draws the trigger bands of the borrowers it finds healthy: the next price move re-checks only those it takes out of them', () => {
    for (const step of [2, null]) {
      const { h, s, hourUs } = borrowersAtTheLine(step, 5, 2);
      for (let timeUs = hourUs + 1; timeUs === hourUs + 1 || s.interestPass.passing(); timeUs++) h.apply(cmd.tick(), timeUs);
      // 4 entered liquidation at its re-check; the four healthy borrowers hold bands again.
      expect([2, 3, 4, 5, 6].map((a) => s.trigger.isBanded(a))).toEqual([true, true, false, true, true]);
      const before = TRIGGER_SWITCH.rechecks;
      h.apply(cmd.setIndexPrice(BASE, SOL_AT_6_0002 + 1_000_000), hourUs + 1_000_000);
      // Only the liquidating one is re-checked (it holds no band); the others stay inside theirs.
      expect(TRIGGER_SWITCH.rechecks - before).toBe(1);
      h.exchange.validateInvariants();
    }
  });

  it('is refused without margin parameters, or with a step that is not a whole number from 1', () => {
    for (const interestStepAccounts of [0, 2.5, -1, 1_000_001]) expect(() => new Exchange({ ...marginConfig(), interestStepAccounts })).toThrow(/interestStepAccounts must be/);
    const { margin: _margin, ...spot } = marginConfig();
    expect(() => new Exchange({ ...spot, interestStepAccounts: 8 })).toThrow(/interestStepAccounts needs margin parameters/);
  });
});
