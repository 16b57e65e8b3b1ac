// The engine core: a pure, synchronous state machine over the sequenced command stream.
//
// apply() is the only way state changes. Each state-changing command first runs the engine-time
// timers due by its engine time (timers.ts: today the speed bump, whose orders activate in
// sequence order), then runs:
// validate the whole command (every rejection is a result code and changes nothing), mutate,
// write outputs. Queries (CommandKind >= 64) change nothing and activate nothing. No clock,
// randomness, I/O or floating point: replaying the same commands with the same seq and engine
// times rebuilds the same state (stateHash) and the same outputs, ids included.
//
// This file keeps only apply and its time checks; the dispatch from kind to rule is generated from
// the schema's kind table (generated/dispatch.ts, each kind's rule: attribute). The rules live in rooms:
//   book/    product-agnostic: places, levels, queues, matching, cancels (it reports fills);
//   funds/   the ledger, accounts, capital commands (deposits, withdrawals, dust) and spot risk
//            (collateral, the largest order, converting all dust: risk.ts);
//   spot/    what a spot order holds and what a spot fill moves, chosen by the market's kind
//            through the one switch in kinds.ts;
//   margin/  the unified account: index prices, each account's settings (leverage limit,
//            automation flags), the margin arithmetic and the borrow/lend pools (pools.ts,
//            borrow-lend.ts);
//   liquidation/  the waterfall that unwinds a liquidating account on engine time, the backstop
//            liquidity providers, the insurance fund, and the conversion of collateral of accounts
//            left owing USDC, run at the end of the command that left the debt (conversion.ts);
// beside operator.ts (market states, fee rates), system.ts (maintenance), queries.ts (reads), invariants.ts, snapshot.ts
// and stateHash.ts. See state.ts for the structures and their bounds.

import { CommandKind, ResultCode, type Command, type EngineConfig, type RecordSink } from '../bus/types.js';
import { assert } from './assert.js';
import { activateOrder } from './book/matching.js';
import { applyMutating, applyQuery } from './generated/dispatch.js';
import { accrueInterest, HOUR_US } from './margin/borrow-lend.js';
import { interestStepDue } from './margin/interest-pass.js';
import { drawAllBands } from './margin/liquidating.js';
import { validateState } from './invariants.js';
import { systemRefusal } from './system.js';
import { decodeState, encodeState } from './snapshot.js';
import { EngineState } from './state.js';
import { hashState } from './stateHash.js';
import { TimerKind } from './timers.js';
import { armPerpTimers, needsPerpTimers, wakeSampler } from './perp/mark-price.js';
import { perpTimerSteps, sampleMarks, settleFunding } from './perp/funding.js';
import { armRealization, realizePnl } from './perp/realize.js';
import { fundingStepDue } from './perp/funding-passes.js';
import { liquidationStep } from './liquidation/waterfall.js';
import { convertMarked } from './liquidation/conversion.js';

/** Commands from this kind up are queries: no seq of their own, no state change. */
const FIRST_QUERY_KIND = 64;

export class Exchange {
  private readonly s: EngineState;

  constructor(config: EngineConfig) {
    this.s = new EngineState(config);
  }

  /** Applies one command; every output goes through `out`. */
  apply(cmd: Command, seq: number, timeUs: number, out: RecordSink): void {
    const s = this.s;
    assert(Number.isSafeInteger(seq) && seq >= 0 && Number.isSafeInteger(timeUs) && timeUs >= 0, 'seq and engine time must be safe integers');
    if (cmd.kind >= FIRST_QUERY_KIND) {
      s.out.begin(out, seq, timeUs);
      applyQuery(s, cmd);
      return;
    }
    assert(seq > s.lastSeq, 'sequence numbers must increase');
    assert(timeUs >= s.lastTimeUs, 'engine time went backwards');
    s.lastSeq = seq;
    s.lastTimeUs = timeUs;
    s.out.begin(out, seq, timeUs);
    if (needsPerpTimers(s)) armPerpTimers(s);
    armRealization(s);
    // Most commands find no timer due: the loop (and its code) only runs when one is.
    if (s.timers.count > 0 && s.timers.headDueUs() <= timeUs) this.runDueTimers(timeUs);
    const refusal = systemRefusal(s, cmd.kind);
    if (refusal !== ResultCode.Ok) {
      s.out.result(refusal, 0, cmd.frontId, cmd.requestId);
    } else {
      // The generated dispatch (generated/dispatch.ts): each kind of the schema to its rule.
      applyMutating(s, cmd);
      // A fresh index wakes the perpetuals' mark sampler (perp/mark-price.ts).
      if (cmd.kind === CommandKind.SetIndexPrice) wakeSampler(s);
    }
    // Accounts the command (or a timer it ran) left owing USDC convert collateral (liquidation/conversion.ts).
    convertMarked(s);
  }

  /**
   * Whether the orders' events ride in their answers (output.ts eventsInAnswers; on unless turned
   * off): replay turns it off for the commands a journal recorded before format 5.
   */
  setEventsInAnswers(on: boolean): void {
    this.s.out.eventsInAnswers = on;
  }

  /**
   * Whether a taker's match ends in one summary: its balance records once, when the match ends,
   * and its last fill in its answer where that answer would repeat it (output.ts takerSummary; on
   * unless turned off): replay turns it off for the commands a journal recorded before format 6.
   */
  setTakerSummary(on: boolean): void {
    this.s.out.takerSummary = on;
  }

  /** Engine time at which the next timer is due (timers.ts), or -1 when none waits. */
  nextWakeUs(): number {
    return this.s.timers.headDueUs();
  }

  stateHash(): string {
    return hashState(this.s);
  }

  /**
   * Whether `hash` is this state's hash: today's, the one engines computed before the borrow/lend
   * throttle (format-7 snapshot files and clean-stop marks carry it: no throttle part), or the one
   * engines computed before markets kept a guarded reference price (format 2: neither part). Each
   * covers everything else, and a hash of one kind never equals another's by accident.
   */
  hasStateHash(hash: string): boolean {
    return hash === hashState(this.s) || hash === hashState(this.s, true, false) || hash === hashState(this.s, false, false);
  }

  /** The whole state as deterministic bytes (snapshot.ts). */
  exportSnapshot(): Uint8Array {
    return encodeState(this.s);
  }

  /** Loads a snapshot into this freshly constructed engine (throws SnapshotFormatError on bytes that do not fit). */
  importSnapshot(bytes: Uint8Array): void {
    decodeState(this.s, bytes);
  }

  /**
   * Draws the liquidation trigger bands of every healthy account at risk (margin/liquidating.ts
   * drawAllBands): after a start or a snapshot load, before the first price move, which would
   * otherwise re-check them all in one command. Derived: no state, no record.
   */
  drawTriggerBands(): void {
    drawAllBands(this.s);
  }

  validateInvariants(): void {
    validateState(this.s);
  }

  /**
   * Sum over accounts of available + locked units of an asset, plus the fees collected in it, plus
   * what the borrow/lend pools hold (lent − borrowed + their interest lines), the perpetuals'
   * settlement line and the insurance fund's units of it (liquidation/fund.ts): equal to the asset's
   * deposits minus its withdrawals (conservation).
   */
  totalUnits(assetId: number): number {
    const assetIndex = this.s.catalog.assetIndex(assetId);
    assert(assetIndex >= 0, 'totalUnits of an unknown asset');
    return this.s.ledger.totalUnits(assetIndex, this.s.accounts.count, this.s.heldOutside(assetIndex));
  }

  /**
   * Runs, in (due, seq) order, every timer due by `timeUs` (timers.ts): the speed bump, whose due
   * orders activate in sequence order, and the hourly interest, which sets itself again an hour
   * on (so a long quiet spell runs one tick per hour it spans). Each handler removes its timer.
   */
  private runDueTimers(timeUs: number): void {
    const timers = this.s.timers;
    const due = timers.count > 0 && timers.headDueUs() <= timeUs;
    const hours = due ? Math.floor((timeUs - timers.headDueUs()) / HOUR_US) + 1 : 0;
    const perpSteps = due ? perpTimerSteps(this.s, timers.headDueUs(), timeUs) : 0;
    for (let steps = 0; timers.count > 0 && timers.headDueUs() <= timeUs; steps++) {
      assert(steps <= timers.capacity + hours + perpSteps, 'timer loop ran past the number of timers');
      const timer = timers.head();
      switch (timers.kindOf(timer)) {
        case TimerKind.SpeedBump: {
          const slot = timers.refOf(timer);
          this.s.pending.remove(slot);
          activateOrder(this.s, slot);
          break;
        }
        case TimerKind.Interest:
          accrueInterest(this.s, timer);
          break;
        case TimerKind.MarkSample:
          sampleMarks(this.s, timer);
          break;
        case TimerKind.Funding:
          settleFunding(this.s, timer);
          break;
        case TimerKind.FundingStep:
          fundingStepDue(this.s, timer);
          break;
        case TimerKind.InterestStep:
          interestStepDue(this.s, timer);
          break;
        case TimerKind.LiquidationStep:
          liquidationStep(this.s, timer);
          break;
        case TimerKind.RealizePnl:
          realizePnl(this.s, timer);
          break;
        default:
          throw new Error(`engine assertion failed: a timer of kind ${timers.kindOf(timer)} has no handler`);
      }
    }
  }
}
