// The hour's re-check of every borrower, in steps (EngineConfig.interestReviewStepBorrowers, S).
//
// After an hour of interest every borrower's margin is re-checked (liquidating.ts
// reviewLiquidating), because the interest grew its borrows. That re-check is most of the hour's
// work: one maintenance valuation per borrower. Without S (absent: the configuration of servers
// before the steps) every borrower is re-checked in the command that finds the hour due, exactly
// as those servers did it, so their journals replay.
//
// With S, the command that finds the hour due accrues the interest, samples the pools, steps the
// throttle and re-checks the first S borrowers, ascending by account id (scanning at most
// SCAN_PER_POSITION·S account ids for them). While borrowers are left, the BorrowerReview timer
// waits 1 µs of engine time after the last command, so the next command (or the shell's Tick,
// when the stream is quiet) runs the next step: orders interleave with the review and no single
// command carries all of it.
//
// Delaying a re-check changes no amount: the interest is already in every borrow, every command
// of a borrower checks its own margin against it, and an index or mark move re-checks the
// borrowers it can reach as before. What the steps change is only the moment a borrower that the
// hour's interest took over the line enters liquidation: at its step instead of at the hour's
// first command. A borrower that starts to borrow behind the cursor was checked by its borrow; one
// ahead of it is re-checked when the cursor reaches it.
//
// An hour's interest that arrives while the previous review still runs starts the review again
// from the first account: every borrower is re-checked after the newer interest.
//
// The interest drops every borrower's liquidation trigger bands (trigger-index.ts); each re-check
// draws a healthy borrower's again, so the next price move re-checks only those it takes out of
// them. A price move that arrives during the review re-checks the borrowers not yet reached, as it
// re-checks every account without bands.
//
// State while a review runs (snapshot format 16 on, hashed only then): the next account id.
// States between reviews keep their hash.

import { assert } from '../assert.js';
import { expectSnapshot, type SnapshotReader, type SnapshotWriter, type StateDigest } from '../parts.js';
import { SCAN_PER_POSITION } from '../perp/positions.js';
import type { EngineState } from '../state.js';
import { NO_TIMER, TimerKind } from '../timers.js';
import { reviewAllBorrowers, reviewLiquidating } from './liquidating.js';

export class BorrowerReview {
  /** The next account id the review visits (0: no review runs). */
  account = 0;
  /** The BorrowerReview timer (NO_TIMER while no review runs). */
  timer = NO_TIMER;

  /** `stepBorrowers` 0: every borrower in the command that finds the hour due. */
  constructor(readonly stepBorrowers: number) {}

  passing(): boolean {
    return this.account !== 0;
  }

  exportTo(w: SnapshotWriter): void {
    w.number(this.account);
  }

  /** Reads the review in progress (`present` false: an older snapshot, none); its timer is armed by the caller. */
  importFrom(r: SnapshotReader, present: boolean, accountCount: number): void {
    if (!present) return;
    const account = r.number();
    expectSnapshot(account === 0 || (account >= 1 && account <= accountCount + 1), 'a borrower review beyond the accounts');
    expectSnapshot(account === 0 || this.stepBorrowers > 0, 'a borrower review in steps under a configuration without them');
    this.account = account;
  }

  /** Only while a review runs: every state between reviews keeps its hash. */
  hashInto(d: StateDigest): void {
    if (this.passing()) d.number(this.account);
  }
}

/** After an hour's interest: every borrower now without steps, else the review's first step (header). */
export function startBorrowerReview(s: EngineState): void {
  const b = s.borrowerReview;
  if (b.stepBorrowers === 0) return reviewAllBorrowers(s);
  b.account = 1;
  reviewStep(s);
}

/** The BorrowerReview timer is due: the review's next step. */
export function borrowerReviewDue(s: EngineState, timer: number): void {
  const b = s.borrowerReview;
  assert(b.timer === timer && b.passing(), 'a borrower review timer without its review');
  reviewStep(s);
}

/**
 * One step (header): from the cursor, at most stepBorrowers borrowers re-checked, ascending, and
 * SCAN_PER_POSITION times as many account ids scanned; the review ends when the cursor passes the
 * last account. Then the timer waits 1 µs after the last command exactly while borrowers are left.
 */
function reviewStep(s: EngineState): void {
  const b = s.borrowerReview;
  const borrowCountOf = s.pools.borrowCountOf;
  const lastAccount = s.accounts.count;
  let visits = b.stepBorrowers;
  let scans = b.stepBorrowers * SCAN_PER_POSITION;
  let accountId = b.account;
  for (; accountId <= lastAccount && visits > 0 && scans > 0; accountId++, scans--) {
    if (borrowCountOf[accountId] === 0) continue;
    reviewLiquidating(s, accountId, true);
    visits--;
  }
  b.account = accountId <= lastAccount ? accountId : 0;
  if (b.timer !== NO_TIMER) s.timers.remove(b.timer);
  b.timer = b.passing() ? s.timers.add(s.lastTimeUs + 1, TimerKind.BorrowerReview, 0) : NO_TIMER;
}

/** After a snapshot load: a review that runs waits for its next step 1 µs after the last command. */
export function armBorrowerReview(s: EngineState): void {
  const b = s.borrowerReview;
  if (b.passing() && b.timer === NO_TIMER) b.timer = s.timers.add(s.lastTimeUs + 1, TimerKind.BorrowerReview, 0);
}

/** A review runs exactly while its timer waits, 1 µs after the last command, and only in steps. */
export function checkBorrowerReview(s: EngineState): void {
  const b = s.borrowerReview;
  const waiting = s.timers.inOrder(TimerKind.BorrowerReview);
  if (!b.passing()) {
    assert(b.timer === NO_TIMER && waiting.length === 0, 'a borrower review timer without a review');
    return;
  }
  assert(b.stepBorrowers > 0, 'a borrower review without steps outlived its command');
  assert(b.account >= 1 && b.account <= s.accounts.count + 1, 'a borrower review beyond the accounts');
  assert(waiting.length === 1 && s.timers.kindOf(b.timer) === TimerKind.BorrowerReview && s.timers.dueOf(b.timer) === s.lastTimeUs + 1, 'a borrower review whose step is not due 1 µs after the last command');
}
