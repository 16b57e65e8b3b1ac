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
// This file keeps only apply, its time checks and the dispatch. The rules live in rooms:
//   book/    product-agnostic: places, levels, queues, matching, cancels (it reports fills);
//   funds/   the ledger, accounts, capital commands (deposits, withdrawals, dust) and spot risk
//            (collateral, the largest order, converting all dust: risk.ts);
//   spot/    what a spot order holds and what a spot fill moves, chosen by the market's kind
//            through the one switch in kinds.ts;
//   margin/  the unified account: index prices, each account's settings (leverage limit,
//            automation flags), the margin arithmetic and the borrow/lend pools (pools.ts,
//            borrow-lend.ts);
// beside operator.ts (market states, fee rates), system.ts (maintenance), queries.ts (reads), invariants.ts, snapshot.ts
// and stateHash.ts. See state.ts for the structures and their bounds.

import { CommandKind, ResultCode, type Command, type EngineConfig, type MutatingCommandKind, type RecordSink } from '../bus/types.js';
import { assert } from './assert.js';
import { cancelAll, cancelOrder } from './book/cancel.js';
import { activateOrder } from './book/matching.js';
import { placeOrder } from './book/place.js';
import { confirmWithdrawal, convertDust, createAccount, deposit, withdraw } from './funds/capital.js';
import { convertAllDust } from './funds/risk.js';
import { accrueInterest, borrowLend, HOUR_US } from './margin/borrow-lend.js';
import { validateState } from './invariants.js';
import { setFeeRates, setMarketState } from './operator.js';
import { setSystemState, systemRefusal } from './system.js';
import { setIndexPrice } from './margin/index-prices.js';
import { updateAccountSettings } from './margin/account-settings.js';
import { refuseUnknownKind, runQuery } from './queries.js';
import { decodeState, encodeState } from './snapshot.js';
import { EngineState } from './state.js';
import { hashState } from './stateHash.js';
import { TimerKind } from './timers.js';

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
      runQuery(s, cmd, timeUs);
      return;
    }
    assert(seq > s.lastSeq, 'sequence numbers must increase');
    assert(timeUs >= s.lastTimeUs, 'engine time went backwards');
    s.lastSeq = seq;
    s.lastTimeUs = timeUs;
    s.out.begin(out, seq, timeUs);
    this.runDueTimers(timeUs);
    const refusal = systemRefusal(s, cmd.kind);
    if (refusal !== ResultCode.Ok) return s.out.result(refusal, 0, cmd.frontId, cmd.requestId);
    // Below FIRST_QUERY_KIND every kind of the schema is mutating; any other number (a slot no
    // front should have sent) reaches the default, whose `never` makes a schema kind without its
    // case here a compile error.
    const kind = cmd.kind as MutatingCommandKind;
    switch (kind) {
      case CommandKind.CreateAccount:
        return createAccount(s, cmd);
      case CommandKind.Deposit:
        return deposit(s, cmd);
      case CommandKind.PlaceOrder:
        return placeOrder(s, cmd, timeUs);
      case CommandKind.CancelOrder:
        return cancelOrder(s, cmd);
      case CommandKind.CancelAll:
        return cancelAll(s, cmd);
      case CommandKind.Tick:
        return;
      // The shell serialises the state after this apply; the core only
      // answers with the snapshot's sequence.
      case CommandKind.Snapshot:
        return s.out.result(ResultCode.Ok, seq, cmd.frontId, cmd.requestId);
      // Operator commands
      case CommandKind.SetMarketState:
        return setMarketState(s, cmd);
      case CommandKind.SetFeeRates:
        return setFeeRates(s, cmd);
      // Capital: see funds/capital.ts
      case CommandKind.Withdraw:
        return withdraw(s, cmd);
      case CommandKind.ConvertDust:
        return convertDust(s, cmd);
      case CommandKind.ConfirmWithdrawal:
        return confirmWithdrawal(s, cmd);
      // Spot risk: see funds/risk.ts
      case CommandKind.ConvertAllDust:
        return convertAllDust(s, cmd);
      // Margin: see margin/borrow-lend.ts
      case CommandKind.BorrowLend:
        return borrowLend(s, cmd);
      // The whole exchange: see system.ts
      case CommandKind.SetSystemState:
        return setSystemState(s, cmd);
      // Margin: see margin/index-prices.ts
      case CommandKind.SetIndexPrice:
        return setIndexPrice(s, cmd);
      // Margin: see margin/account-settings.ts
      case CommandKind.UpdateAccountSettings:
        return updateAccountSettings(s, cmd);
      default:
        return refuseUnknownKind(s, cmd, kind);
    }
  }

  /** Engine time at which the next timer is due (timers.ts), or -1 when none waits. */
  nextWakeUs(): number {
    return this.s.timers.headDueUs();
  }

  stateHash(): string {
    return hashState(this.s);
  }

  /**
   * Whether `hash` is this state's hash: today's, or the one engines computed before markets kept
   * a guarded reference price (format-2 snapshot files and clean-stop marks carry that one; it
   * covers everything else, and a hash of one kind never equals the other's by accident).
   */
  hasStateHash(hash: string): boolean {
    return hash === hashState(this.s) || hash === hashState(this.s, false);
  }

  /** The whole state as deterministic bytes (snapshot.ts). */
  exportSnapshot(): Uint8Array {
    return encodeState(this.s);
  }

  /** Loads a snapshot into this freshly constructed engine (throws SnapshotFormatError on bytes that do not fit). */
  importSnapshot(bytes: Uint8Array): void {
    decodeState(this.s, bytes);
  }

  validateInvariants(): void {
    validateState(this.s);
  }

  /**
   * Sum over accounts of available + locked units of an asset, plus the fees collected in it, plus
   * what the borrow/lend pools hold (lent − borrowed + their interest lines): equal to the asset's
   * deposits minus its withdrawals (conservation).
   */
  totalUnits(assetId: number): number {
    const assetIndex = this.s.catalog.assetIndex(assetId);
    assert(assetIndex >= 0, 'totalUnits of an unknown asset');
    return this.s.ledger.totalUnits(assetIndex, this.s.accounts.count, this.s.pools.heldOutside(assetIndex));
  }

  /**
   * Runs, in (due, seq) order, every timer due by `timeUs` (timers.ts): the speed bump, whose due
   * orders activate in sequence order, and the hourly interest, which sets itself again an hour
   * on (so a long quiet spell runs one tick per hour it spans). Each handler removes its timer.
   */
  private runDueTimers(timeUs: number): void {
    const timers = this.s.timers;
    const hours = timers.count > 0 && timers.headDueUs() <= timeUs ? Math.floor((timeUs - timers.headDueUs()) / HOUR_US) + 1 : 0;
    for (let steps = 0; timers.count > 0 && timers.headDueUs() <= timeUs; steps++) {
      assert(steps <= timers.capacity + hours, 'timer loop ran past the number of timers');
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
        default:
          throw new Error(`engine assertion failed: a timer of kind ${timers.kindOf(timer)} has no handler`);
      }
    }
  }
}
