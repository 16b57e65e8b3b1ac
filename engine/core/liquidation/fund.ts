// The liquidation room's state: the insurance fund's ledger lines per asset, the waterfall's step
// timer and its parameters (EngineConfig.liquidation).
//
// Lines, per asset, in integer units of the asset (Float64Arrays used as exact integer stores):
//   fundUnits       what the fund holds: liquidation fees in, operator deposits in, bankrupt
//                   debt paid out into the pools, a bankrupt perpetual account's deficit paid
//                   out into its USDC (adl.ts);
//   feesUnits       the liquidation fees it took in so far (a counter, not money);
//   coveredUnits    bankrupt debt it paid into the pools and deficits it paid to accounts (a counter);
//   socializedUnits bankrupt debt it could not pay, written off the pools' lenders (a counter);
//   depositedUnits  what the operator paid in (DepositInsurance) so far (a counter).
// Only fundUnits holds money: conservation reads, per asset,
//   Σ (available + locked + lent) − Σ borrowed + fees + interest lines + fundUnits = supply,
// where an operator deposit grows the supply as a deposit does (heldOutside gives this part's term).
//
// The step timer (timers.ts, TimerKind.LiquidationStep) waits exactly while some account is
// liquidating: armed when the first account enters the state, set again after each step that
// leaves one liquidating (and, after loading a snapshot from before the waterfall, at the first
// re-check of an account still liquidating). Its due time is part of the snapshot and of the hash.
//
// Snapshot (format 10 on) and hash: the part of the fund. The hash covers it only once something
// happened (a line not 0, or the timer armed), so every state without a liquidation keeps the hash
// it had before the room existed; an older snapshot reads as an empty fund with none in progress.

import { DEFAULT_LIQUIDATION, type LiquidationConfig } from '../../bus/types.js';
import { assert, isUnsignedSafe } from '../assert.js';
import { expectSnapshot, type SnapshotReader, type SnapshotWriter, type StateDigest } from '../parts.js';
import { NO_TIMER } from '../timers.js';

/** The lines an InsuranceRecord reports (output.ts). */
export interface InsuranceLines {
  readonly fundUnits: Float64Array;
  readonly feesUnits: Float64Array;
  readonly coveredUnits: Float64Array;
  readonly socializedUnits: Float64Array;
  readonly depositedUnits: Float64Array;
}

export class InsuranceFund implements InsuranceLines {
  readonly config: LiquidationConfig;
  readonly fundUnits: Float64Array;
  readonly feesUnits: Float64Array;
  readonly coveredUnits: Float64Array;
  readonly socializedUnits: Float64Array;
  readonly depositedUnits: Float64Array;
  /** The waterfall's step timer (NO_TIMER: no account is liquidating). */
  stepTimer = NO_TIMER;
  /** Scratch of one step, not state: true while liquidationStep runs (it arms the next step itself). */
  stepping = false;

  constructor(readonly assetCount: number, config: LiquidationConfig | undefined) {
    this.config = config ?? DEFAULT_LIQUIDATION;
    const { stepIntervalUs, chunkBps, feeBps } = this.config;
    assert(Number.isSafeInteger(stepIntervalUs) && stepIntervalUs > 0, 'liquidation stepIntervalUs must be a positive integer');
    assert(Number.isInteger(chunkBps) && chunkBps >= 1 && chunkBps <= 10_000, 'liquidation chunkBps must be 1 to 10000');
    assert(Number.isInteger(feeBps) && feeBps >= 0 && feeBps <= 10_000, 'liquidation feeBps must be 0 to 10000');
    const { autoCloseDivisor, autoCloseOffsetE12 } = this.config;
    assert(autoCloseDivisor === undefined || (Number.isInteger(autoCloseDivisor) && autoCloseDivisor >= 1 && autoCloseDivisor <= 1000), 'liquidation autoCloseDivisor must be 1 to 1000');
    assert(autoCloseOffsetE12 === undefined || (Number.isSafeInteger(autoCloseOffsetE12) && autoCloseOffsetE12 >= 0 && autoCloseOffsetE12 <= 1_000_000_000_000), 'liquidation autoCloseOffsetE12 must be 0 to 10^12');
    this.fundUnits = new Float64Array(assetCount);
    this.feesUnits = new Float64Array(assetCount);
    this.coveredUnits = new Float64Array(assetCount);
    this.socializedUnits = new Float64Array(assetCount);
    this.depositedUnits = new Float64Array(assetCount);
  }

  /** Units of an asset the fund holds, as conservation counts them. */
  heldOutside(assetIndex: number): bigint {
    return BigInt(this.fundUnits[assetIndex]);
  }

  /** A liquidation fee taken from a liquidated account's proceeds. */
  takeFee(assetIndex: number, units: number): void {
    this.fundUnits[assetIndex] = safeSum(this.fundUnits[assetIndex], units);
    this.feesUnits[assetIndex] = safeSum(this.feesUnits[assetIndex], units);
  }

  /** Units the operator paid in. */
  deposit(assetIndex: number, units: number): void {
    this.fundUnits[assetIndex] = safeSum(this.fundUnits[assetIndex], units);
    this.depositedUnits[assetIndex] = safeSum(this.depositedUnits[assetIndex], units);
  }

  /** Units paid out into a pool for a bankrupt borrow; the caller checked the fund holds them. */
  cover(assetIndex: number, units: number): void {
    assert(units >= 0 && this.fundUnits[assetIndex] >= units, 'the fund covers more than it holds');
    this.fundUnits[assetIndex] -= units;
    this.coveredUnits[assetIndex] = safeSum(this.coveredUnits[assetIndex], units);
  }

  /** A bankrupt account's leftover holding, taken in when its debt is covered. */
  takeLeftover(assetIndex: number, units: number): void {
    this.fundUnits[assetIndex] = safeSum(this.fundUnits[assetIndex], units);
  }

  socialize(assetIndex: number, units: number): void {
    this.socializedUnits[assetIndex] = safeSum(this.socializedUnits[assetIndex], units);
  }

  private touched(): boolean {
    if (this.stepTimer !== NO_TIMER) return true;
    for (let assetIndex = 0; assetIndex < this.assetCount; assetIndex++) if (this.anyLine(assetIndex)) return true;
    return false;
  }

  private anyLine(assetIndex: number): boolean {
    return this.fundUnits[assetIndex] > 0 || this.feesUnits[assetIndex] > 0 || this.coveredUnits[assetIndex] > 0
      || this.socializedUnits[assetIndex] > 0 || this.depositedUnits[assetIndex] > 0;
  }

  /** Snapshot part: per asset its five lines, then the step timer's due time (-1: none). */
  exportTo(w: SnapshotWriter, stepDueUs: number): void {
    for (let assetIndex = 0; assetIndex < this.assetCount; assetIndex++) {
      w.number(this.fundUnits[assetIndex]);
      w.number(this.feesUnits[assetIndex]);
      w.number(this.coveredUnits[assetIndex]);
      w.number(this.socializedUnits[assetIndex]);
      w.number(this.depositedUnits[assetIndex]);
    }
    w.number(stepDueUs);
  }

  /** Reads the part back; returns the step timer's due time (-1: none) for the caller to arm. */
  importFrom(r: SnapshotReader): number {
    for (let assetIndex = 0; assetIndex < this.assetCount; assetIndex++) {
      this.fundUnits[assetIndex] = r.number();
      this.feesUnits[assetIndex] = r.number();
      this.coveredUnits[assetIndex] = r.number();
      this.socializedUnits[assetIndex] = r.number();
      this.depositedUnits[assetIndex] = r.number();
      expectSnapshot(this.linesAreSafe(assetIndex), 'an insurance line is not a safe non-negative integer');
    }
    return r.number();
  }

  /** State hash part (only once something happened: every earlier state keeps its hash). */
  hashInto(d: StateDigest, stepDueUs: number): void {
    if (!this.touched()) return;
    for (let assetIndex = 0; assetIndex < this.assetCount; assetIndex++) {
      d.number(this.fundUnits[assetIndex]);
      d.number(this.feesUnits[assetIndex]);
      d.number(this.coveredUnits[assetIndex]);
      d.number(this.socializedUnits[assetIndex]);
      d.number(this.depositedUnits[assetIndex]);
    }
    d.number(stepDueUs + 1);
  }

  /** Every line is a safe non-negative integer. */
  validate(): void {
    for (let assetIndex = 0; assetIndex < this.assetCount; assetIndex++) {
      assert(this.linesAreSafe(assetIndex), `an insurance line of asset index ${assetIndex} is not a safe non-negative integer`);
    }
  }

  private linesAreSafe(assetIndex: number): boolean {
    return isUnsignedSafe(this.fundUnits[assetIndex]) && isUnsignedSafe(this.feesUnits[assetIndex]) && isUnsignedSafe(this.coveredUnits[assetIndex])
      && isUnsignedSafe(this.socializedUnits[assetIndex]) && isUnsignedSafe(this.depositedUnits[assetIndex]);
  }
}

function safeSum(a: number, b: number): number {
  const sum = a + b;
  assert(b >= 0 && Number.isSafeInteger(sum), 'an insurance line left the safe-integer range');
  return sum;
}
