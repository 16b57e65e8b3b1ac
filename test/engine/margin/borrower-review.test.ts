// The hour's re-check of the borrowers in steps (engine/core/margin/borrower-review.ts): the hour's
// first command accrues the interest into every borrow and re-checks at most
// interestReviewStepBorrowers borrowers, ascending; the commands after it (a Tick 1 µs on when the
// stream is quiet) re-check the rest; a borrower the interest took over the line enters
// liquidation at its step, as it does in the one-command review; the review survives a snapshot
// between its steps and is in the state hash while it runs; the next hour starts it over.
import { describe, expect, it } from 'vitest';
import { commandFromSlot } from '../../../engine/bus/codec.js';
import { newCommandSlot } from '../../../engine/bus/generated/records.js';
import { AccountSettingFlag, CommandKind, FRONT_ID_NONE, RecordType, type AccountSettingsRec, type EngineConfig } from '../../../engine/bus/types.js';
import { Exchange } from '../../../engine/core/exchange.js';
import { SnapshotFormatError, exportSnapshot, importSnapshot } from '../../../engine/core/snapshot.js';
import type { EngineState } from '../../../engine/core/state.js';
import { TimerKind } from '../../../engine/core/timers.js';
import { TRIGGER_SWITCH } from '../../../engine/core/margin/trigger-index.js';
import { BASE, CollectingSink, EngineHarness, QUOTE, cmd, type Rec } from '../../helpers/engine-harness.js';
import { ONE, borrow, lend, marginConfig } from '../../helpers/margin-harness.js';
import { formatFifteenSnapshot } from '../../helpers/snapshot-formats.js';

const HOUR_US = 3_600_000_000;
/** SOL at 60 USDC units per SOL unit, then at 6.0002: 10,000 SOL units weigh 30,001 (weight 0.5). */
const SOL_AT_60 = 60_000_000_000_000;
const SOL_AT_6_0002 = 6_000_200_000_000;

function stateOf(exchange: Exchange): EngineState {
  return (exchange as unknown as { s: EngineState }).s;
}

/** The accounts whose liquidating flag the events of `records` set, in order. */
function entered(records: Rec[]): number[] {
  return records.filter((r): r is AccountSettingsRec & { type: RecordType.AccountSettings } => r.type === RecordType.AccountSettings && r.frontId === FRONT_ID_NONE)
    .filter((r) => (r.settings & AccountSettingFlag.Liquidating) !== 0).map((r) => r.accountId);
}

const withdraw = (accountId: number, assetId: number, amountUnits: number) => ({ kind: CommandKind.Withdraw, accountId, assetId, amountUnits, key: new Uint8Array(32) });

/**
 * A lender (account 1) and `borrowers` borrowers after it (2, 3, …), each with 10,000 SOL units at
 * 10× leverage: every one keeps its USDC and borrows 100,000 of it, except the one at index
 * `edge`, which withdraws its USDC and borrows 600,000, one unit of equity above the line at
 * SOL 6.0002. S borrowers a step (null: no steps). The last command is an hour before the next.
 */
function borrowersAtTheLine(step: number | null, borrowers: number, edge: number) {
  const config: EngineConfig = { ...marginConfig({ maxUtilization: ONE, fee: 0n }, { maxUtilization: ONE, fee: 0n }), ...(step === null ? {} : { interestReviewStepBorrowers: step }) };
  const h = new EngineHarness(config);
  const [lender, ...accounts] = h.fundedAccounts(1 + borrowers, { [QUOTE]: 1_000_000 });
  h.apply(cmd.deposit(lender, QUOTE, 1_000_000));
  h.apply(lend(lender, QUOTE, 2_000_000));
  h.apply(cmd.setIndexPrice(BASE, SOL_AT_60));
  accounts.forEach((a, i) => {
    h.apply(cmd.deposit(a, BASE, 10_000));
    h.apply(cmd.updateAccountSettings(a, { leverageLimitHundredths: 1_000 }));
    if (i === edge) h.apply(withdraw(a, QUOTE, 1_000_000));
    expect(h.apply(borrow(a, QUOTE, i === edge ? 600_000 : 100_000)).at(-1)).toMatchObject({ type: RecordType.Result, code: 0 });
  });
  // Equity 30,001 against an MMF of 30,000: not yet over the line.
  expect(entered(h.apply(cmd.setIndexPrice(BASE, SOL_AT_6_0002)))).toEqual([]);
  const s = stateOf(h.exchange);
  const hourUs = HOUR_US * (Math.floor(h.timeUs / HOUR_US) + 1);
  return { h, s, accounts, hourUs };
}

describe("the hour's re-check of the borrowers in steps", () => {
  it('re-checks at most a step of borrowers a command, ascending, and enters the one the interest took over the line at its step', () => {
    const stepped = borrowersAtTheLine(2, 5, 2);
    const whole = borrowersAtTheLine(null, 5, 2);
    expect(stepped.accounts).toEqual([2, 3, 4, 5, 6]);
    // The hour's first command: every borrow grows by its interest; borrowers 2 and 3 re-checked.
    const first = stepped.h.apply(cmd.tick(), stepped.hourUs + 1);
    expect(entered(whole.h.apply(cmd.tick(), whole.hourUs + 1))).toEqual([4]);
    expect(entered(first)).toEqual([]);
    expect(first.filter((r) => r.type === RecordType.BorrowLend).map((r) => (r as { accountId: number }).accountId)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(stepped.s.borrowerReview.account).toBe(4);
    expect(stepped.s.timers.dueOf(stepped.s.borrowerReview.timer)).toBe(stepped.hourUs + 2);
    stepped.h.exchange.validateInvariants();
    // The next command (a Tick 1 µs on) re-checks 4 and 5: 4 enters liquidation here.
    expect(entered(stepped.h.apply(cmd.tick(), stepped.hourUs + 2))).toEqual([4]);
    expect(stepped.s.borrowerReview.account).toBe(6);
    expect(entered(stepped.h.apply(cmd.tick(), stepped.hourUs + 3))).toEqual([]);
    expect(stepped.s.borrowerReview.passing()).toBe(false);
    expect(stepped.s.timers.inOrder(TimerKind.BorrowerReview)).toEqual([]);
    stepped.h.exchange.validateInvariants();
    // The same interest and the same account liquidating as the review in one command.
    for (const accountId of [1, 2, 3, 4, 5, 6]) {
      expect(stepped.h.balance(accountId, QUOTE)).toEqual(whole.h.balance(accountId, QUOTE));
      const cell = stepped.s.pools.cell(accountId, QUOTE);
      expect([stepped.s.pools.borrowed[cell], stepped.s.pools.lent[cell]]).toEqual([whole.s.pools.borrowed[cell], whole.s.pools.lent[cell]]);
      expect(stepped.s.accountSettings.flags[accountId]).toBe(whole.s.accountSettings.flags[accountId]);
    }
  });

  it('lets orders and borrows in between its steps: a borrower ahead of the cursor that starts to borrow is re-checked at its step', () => {
    const { h, s, hourUs } = borrowersAtTheLine(1, 3, 2);
    h.apply(cmd.tick(), hourUs + 1);
    expect(s.borrowerReview.account).toBe(3);
    // Between the steps: a new account (7) borrows; 2 repays part of its borrow.
    const late = h.createAccount(77);
    h.apply(cmd.deposit(late, QUOTE, 500_000));
    expect(h.apply(borrow(late, QUOTE, 10_000)).at(-1)).toMatchObject({ type: RecordType.Result, code: 0 });
    expect(h.apply(lend(2, QUOTE, 1_000)).at(-1)).toMatchObject({ type: RecordType.Result, code: 0 });
    const visited: number[] = [];
    for (let timeUs = hourUs + 2; s.borrowerReview.passing(); timeUs++) {
      visited.push(s.borrowerReview.account);
      h.apply(cmd.tick(), timeUs);
      h.exchange.validateInvariants();
    }
    // One borrower a step: 3, then 4 (entering liquidation), then the late borrower (5).
    expect(visited).toEqual([3, 4, 5]);
    expect(s.accountSettings.flags[4] & AccountSettingFlag.Liquidating).not.toBe(0);
  });

  it('survives a snapshot between its steps, is in the state hash while it runs, and reads format-15 snapshots as none running', () => {
    const { h, s, hourUs } = borrowersAtTheLine(2, 5, 4);
    const beforeHour = formatFifteenSnapshot(h.exchange);
    const hashBeforeHour = h.exchange.stateHash();
    h.apply(cmd.tick(), hourUs + 1);
    expect(s.borrowerReview.account).toBe(4);
    const bytes = exportSnapshot(h.exchange);
    const restored = new Exchange(h.config);
    importSnapshot(restored, bytes);
    restored.validateInvariants();
    expect(restored.stateHash()).toBe(h.exchange.stateHash());
    expect(Buffer.from(exportSnapshot(restored)).equals(Buffer.from(bytes))).toBe(true);
    // The cursor is the last part: the same bytes with 0 there read as no review and hash apart.
    const cursorAt = bytes.length - 4 - 8;
    expect(new DataView(bytes.buffer, bytes.byteOffset).getUint32(cursorAt, true)).toBe(4);
    const stopped = new Exchange(h.config);
    const noReview = bytes.slice();
    noReview.fill(0, cursorAt, cursorAt + 8);
    importSnapshot(stopped, noReview);
    expect(stateOf(stopped).borrowerReview.passing()).toBe(false);
    expect(stopped.stateHash()).not.toBe(h.exchange.stateHash());
    // And where it stands: the cursor one account on hashes apart too.
    const further = bytes.slice();
    new DataView(further.buffer).setUint32(cursorAt, 5, true);
    const skipped = new Exchange(h.config);
    importSnapshot(skipped, further);
    expect(stateOf(skipped).borrowerReview.account).toBe(5);
    expect(skipped.stateHash()).not.toBe(h.exchange.stateHash());
    // Both go on to the same state: 6, the borrower at the line, enters at the last step in each.
    const flips: number[][] = [[], []];
    for (let timeUs = hourUs + 2; s.borrowerReview.passing(); timeUs++) {
      flips[0].push(...entered(h.apply(cmd.tick(), timeUs)));
      const sink = new CollectingSink();
      restored.apply(commandFromSlot({ ...newCommandSlot(), ...cmd.tick() }), s.lastSeq, timeUs, sink);
      flips[1].push(...entered(sink.records));
    }
    expect(flips).toEqual([[6], [6]]);
    expect(restored.stateHash()).toBe(h.exchange.stateHash());
    // A snapshot written before the review's part reads as a state with none running.
    const fifteen = new Exchange(h.config);
    importSnapshot(fifteen, beforeHour);
    fifteen.validateInvariants();
    expect(fifteen.stateHash()).toBe(hashBeforeHour);
    // A review in steps does not load under a configuration without them.
    const { interestReviewStepBorrowers: _step, ...unstepped } = h.config;
    expect(() => importSnapshot(new Exchange(unstepped), bytes)).toThrow(SnapshotFormatError);
  });

  it("an hour's interest while the review still runs starts it over from the first account", () => {
    const { h, s, hourUs } = borrowersAtTheLine(1, 4, 3);
    h.apply(cmd.tick(), hourUs + 1);
    expect(s.borrowerReview.account).toBe(3);
    // Nothing for an hour: the next command runs the waiting step (3), then the hour restarts at 2.
    h.apply(cmd.tick(), hourUs + HOUR_US + 1);
    expect(s.borrowerReview.account).toBe(3);
    expect(s.timers.inOrder(TimerKind.BorrowerReview)).toHaveLength(1);
    h.exchange.validateInvariants();
  });

  it('draws the trigger bands of the borrowers it finds healthy: the next price move re-checks only those it takes out of them', () => {
    for (const step of [2, null]) {
      const { h, s, hourUs } = borrowersAtTheLine(step, 5, 2);
      for (let timeUs = hourUs + 1; timeUs === hourUs + 1 || s.borrowerReview.passing(); timeUs++) h.apply(cmd.tick(), timeUs);
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
    for (const interestReviewStepBorrowers of [0, 2.5, -1, 1_000_001]) expect(() => new Exchange({ ...marginConfig(), interestReviewStepBorrowers })).toThrow(/interestReviewStepBorrowers must be/);
    const { margin: _margin, ...spot } = marginConfig();
    expect(() => new Exchange({ ...spot, interestReviewStepBorrowers: 8 })).toThrow(/interestReviewStepBorrowers needs margin parameters/);
  });
});
