// Borrow/lend pools: one per configured asset (EngineConfig.margin.lendPools), the totals lent
// and borrowed, each account's lend or borrow of each asset, and the exchange's two interest
// ledger lines per asset.
//
// Positions are integer units of the asset, in flat Float64Arrays indexed like the ledger
// (accountId × assetCount + assetIndex); every value is a safe non-negative integer. An account
// either lends or borrows an asset, never both (BorrowLend repays before it lends and redeems
// before it borrows). Each open position keeps the seq of the command that opened it (its
// position id) and the interest it has paid or earned so far; both reset when it closes.
//
// Conservation. Lending moves available units into `lent`; borrowing adds units to available
// and the same to `borrowed`; interest adds to `borrowed` (rounded up) and to `lent` (rounded
// down), and the difference goes to the exchange's lines: `interestFeeUnits` (its share, the
// pool's fee) and `interestRoundingUnits` (what rounding against each party kept). So, for every
// asset,
//   Σ (available + locked + lent) − Σ borrowed + fees + interestFee + interestRounding = supply,
// which validateState checks with the ledger (heldOutside gives this part's term). A pool's
// borrowed total may pass its lent total only by the interest the exchange kept: borrows and
// redemptions keep borrowed ≤ maxUtilization × lent ≤ lent, and each hour adds to borrowed
// exactly what it adds to lent and to the two lines; so borrowed ≤ lent + the two lines.
//
// The borrowers: how many assets each account borrows (borrowCountOf) and the set of accounts that
// borrow anything (borrowerIds, unordered, with each account's slot in it), so that a price move
// or an hour of interest re-checks the borrowers' margin without walking every account
// (liquidating.ts). Derived from the positions: rebuilt on import, in neither snapshot nor hash.
//
// The pool's state (Open, Closed, RepayOnly) is its configured one: no command changes it yet.
//
// The hourly interest timer (timers.ts, TimerKind.Interest) is armed while some position may
// earn or owe interest: set at the first hour after a move opens one, set again after each hour
// that finds a position open. Its due time is part of the snapshot and of the hash.
//
// Snapshot (format 5 on) and hash: the part of the pools. The hash covers it only once something
// happened in a pool (a total, a line, a position or the timer), so every state without borrow or
// lend keeps the hash it had before pools existed.

import { LendPoolStateCode, type AssetSpec } from '../../bus/types.js';
import type { CollateralSpec, EngineMarginConfig, LendPoolSpec, LendPoolState } from '../../bus/margin-params.js';
import { assert, isUnsignedSafe } from '../assert.js';
import { expectSnapshot, type SnapshotReader, type SnapshotWriter, type StateDigest } from '../parts.js';
import { NO_TIMER } from '../timers.js';

const STATE_CODES: Record<LendPoolState, LendPoolStateCode> = {
  Open: LendPoolStateCode.Open,
  Closed: LendPoolStateCode.Closed,
  RepayOnly: LendPoolStateCode.RepayOnly,
};

export class LendPools {
  /** Pool parameters and collateral parameters by asset index (undefined: none configured). */
  readonly poolOf: (LendPoolSpec | undefined)[];
  readonly collateralOf: (CollateralSpec | undefined)[];
  readonly stateOf: Uint8Array;
  /** Asset index of the valuation asset (USDC), -1 without margin parameters. */
  readonly valuationIndex: number;
  readonly lent: Float64Array;
  readonly borrowed: Float64Array;
  /** Interest of the open position so far (paid by a borrow, earned by a lend). */
  readonly interest: Float64Array;
  /** The seq of the command that opened the position (0: no position). */
  readonly positionId: Float64Array;
  readonly lentTotal: Float64Array;
  readonly borrowedTotal: Float64Array;
  readonly interestFeeUnits: Float64Array;
  readonly interestRoundingUnits: Float64Array;
  /**
   * The throttle's u0 per asset: the pool's utilization (10^-12, rounded down, at most
   * MAX_THROTTLE_START) when the current hour began (throttle.ts).
   */
  readonly stepStartUtilization: Float64Array;
  /** The hourly interest timer's handle (NO_TIMER: not armed). */
  interestTimer = NO_TIMER;
  /** Assets each account borrows, by account id. */
  readonly borrowCountOf: Uint16Array;
  /** Called with the account whose lend or borrow changed (margin/trigger-index.ts). */
  positionChanged: (accountId: number) => void = () => {};
  /** Called before a lend changes, with its account and asset: the hour's pass pays it first (margin/interest-pass.ts). */
  beforeLendMove: (accountId: number, assetIndex: number) => void = () => {};
  /** Accounts that borrow anything: the first borrowerCount entries, in no order. */
  readonly borrowerIds: Int32Array;
  /** Each borrowing account's place in borrowerIds (-1: none). */
  readonly borrowerSlotOf: Int32Array;
  borrowerCount = 0;

  readonly assetCount: number;
  /** Decimals of each asset, by asset index. */
  readonly decimalsOf: number[];

  constructor(maxAccounts: number, assets: readonly AssetSpec[], assetIndexOf: (assetId: number) => number, margin: EngineMarginConfig | undefined) {
    const assetCount = assets.length;
    this.assetCount = assetCount;
    this.decimalsOf = new Array<number>(assetCount).fill(0);
    for (const asset of assets) this.decimalsOf[indexOf(assetIndexOf, asset.assetId)] = asset.decimals;
    this.poolOf = new Array<LendPoolSpec | undefined>(assetCount).fill(undefined);
    this.collateralOf = new Array<CollateralSpec | undefined>(assetCount).fill(undefined);
    this.stateOf = new Uint8Array(assetCount).fill(LendPoolStateCode.Closed);
    for (const spec of margin?.collateral ?? []) this.collateralOf[indexOf(assetIndexOf, spec.assetId)] = spec;
    for (const spec of margin?.lendPools ?? []) {
      const assetIndex = indexOf(assetIndexOf, spec.assetId);
      assert(this.collateralOf[assetIndex] !== undefined, 'a lend pool without collateral parameters');
      this.poolOf[assetIndex] = spec;
      this.stateOf[assetIndex] = STATE_CODES[spec.state];
    }
    this.valuationIndex = margin === undefined ? -1 : indexOf(assetIndexOf, margin.valuationAssetId);
    const cells = (maxAccounts + 1) * assetCount;
    this.lent = new Float64Array(cells);
    this.borrowed = new Float64Array(cells);
    this.interest = new Float64Array(cells);
    this.positionId = new Float64Array(cells);
    this.lentTotal = new Float64Array(assetCount);
    this.borrowedTotal = new Float64Array(assetCount);
    this.interestFeeUnits = new Float64Array(assetCount);
    this.interestRoundingUnits = new Float64Array(assetCount);
    this.stepStartUtilization = new Float64Array(assetCount);
    this.borrowCountOf = new Uint16Array(maxAccounts + 1);
    this.borrowerIds = new Int32Array(maxAccounts + 1);
    this.borrowerSlotOf = new Int32Array(maxAccounts + 1).fill(-1);
  }

  cell(accountId: number, assetIndex: number): number {
    const cell = accountId * this.assetCount + assetIndex;
    assert(assetIndex >= 0 && assetIndex < this.assetCount && cell < this.lent.length, 'lend cell out of range');
    return cell;
  }

  /** The pool count: assets with a pool. */
  get poolCount(): number {
    return this.poolOf.filter((pool) => pool !== undefined).length;
  }

  /** Lend `amount` more (a lend, or an hour's interest); opens the position at `seq` if none. */
  addLent(accountId: number, assetIndex: number, amount: number, seq: number): void {
    this.beforeLendMove(accountId, assetIndex);
    const cell = this.cell(accountId, assetIndex);
    assert(this.borrowed[cell] === 0 && amount >= 0, 'a lend on a borrowed asset');
    if (this.lent[cell] === 0 && amount > 0) this.openPosition(cell, seq);
    this.lent[cell] = safeSum(this.lent[cell], amount);
    this.lentTotal[assetIndex] = safeSum(this.lentTotal[assetIndex], amount);
    this.positionChanged(accountId);
  }

  /** Redeem `amount` of the account's lend; the caller checked it lends that much. */
  removeLent(accountId: number, assetIndex: number, amount: number): void {
    this.beforeLendMove(accountId, assetIndex);
    const cell = this.cell(accountId, assetIndex);
    assert(amount >= 0 && this.lent[cell] >= amount, 'redeeming more than is lent');
    this.lent[cell] -= amount;
    this.lentTotal[assetIndex] -= amount;
    if (this.lent[cell] === 0) this.closePosition(cell);
    this.positionChanged(accountId);
  }

  /** Borrow `amount` more (a borrow, or an hour's interest); opens the position at `seq` if none. */
  addBorrowed(accountId: number, assetIndex: number, amount: number, seq: number): void {
    const cell = this.cell(accountId, assetIndex);
    assert(this.lent[cell] === 0 && amount >= 0, 'a borrow on a lent asset');
    if (this.borrowed[cell] === 0 && amount > 0) {
      this.openPosition(cell, seq);
      this.countBorrow(accountId, 1);
    }
    this.borrowed[cell] = safeSum(this.borrowed[cell], amount);
    this.borrowedTotal[assetIndex] = safeSum(this.borrowedTotal[assetIndex], amount);
    this.positionChanged(accountId);
  }

  /** Repay `amount` of the account's borrow; the caller checked it borrows that much. */
  removeBorrowed(accountId: number, assetIndex: number, amount: number): void {
    const cell = this.cell(accountId, assetIndex);
    assert(amount >= 0 && this.borrowed[cell] >= amount, 'repaying more than is borrowed');
    this.borrowed[cell] -= amount;
    this.borrowedTotal[assetIndex] -= amount;
    if (this.borrowed[cell] === 0) {
      this.closePosition(cell);
      this.countBorrow(accountId, -1);
    }
    this.positionChanged(accountId);
  }

  /** One more (+1) or one fewer (-1) asset borrowed by the account; keeps the borrower set. */
  private countBorrow(accountId: number, delta: 1 | -1): void {
    const count = this.borrowCountOf[accountId] + delta;
    assert(count >= 0 && count <= this.assetCount, 'an account borrows a negative number of assets');
    this.borrowCountOf[accountId] = count;
    if (count === 1 && delta === 1) {
      this.borrowerSlotOf[accountId] = this.borrowerCount;
      this.borrowerIds[this.borrowerCount++] = accountId;
    } else if (count === 0) {
      const slot = this.borrowerSlotOf[accountId];
      const last = this.borrowerIds[--this.borrowerCount];
      this.borrowerIds[slot] = last;
      this.borrowerSlotOf[last] = slot;
      this.borrowerSlotOf[accountId] = -1;
    }
  }

  /** The borrowing accounts, ascending (a deterministic order whatever the set's history). */
  borrowersAscending(): Int32Array {
    return this.borrowerIds.slice(0, this.borrowerCount).sort();
  }

  private openPosition(cell: number, seq: number): void {
    this.positionId[cell] = seq;
    this.interest[cell] = 0;
  }

  private closePosition(cell: number): void {
    this.positionId[cell] = 0;
    this.interest[cell] = 0;
  }

  /** Whether any account lends or borrows anything. */
  anyPosition(): boolean {
    for (let assetIndex = 0; assetIndex < this.assetCount; assetIndex++) {
      if (this.lentTotal[assetIndex] > 0 || this.borrowedTotal[assetIndex] > 0) return true;
    }
    return false;
  }

  /** Units of an asset held in the pools, as conservation counts them: Σ lent − Σ borrowed + the interest lines. */
  heldOutside(assetIndex: number): bigint {
    return BigInt(this.lentTotal[assetIndex]) - BigInt(this.borrowedTotal[assetIndex])
      + BigInt(this.interestFeeUnits[assetIndex]) + BigInt(this.interestRoundingUnits[assetIndex]);
  }

  /** Whether anything ever happened in a pool (the hash covers the pools only then). */
  private touched(): boolean {
    if (this.interestTimer !== NO_TIMER || this.anyPosition()) return true;
    for (let assetIndex = 0; assetIndex < this.assetCount; assetIndex++) {
      if (this.interestFeeUnits[assetIndex] > 0 || this.interestRoundingUnits[assetIndex] > 0) return true;
    }
    return false;
  }

  /** Snapshot part: per pool its totals and lines; the open positions; the interest due time (-1: none). */
  exportTo(w: SnapshotWriter, accountCount: number, interestDueUs: number): void {
    w.number(this.poolCount);
    this.forEachPool((assetIndex) => {
      w.number(assetIndex);
      w.number(this.lentTotal[assetIndex]);
      w.number(this.borrowedTotal[assetIndex]);
      w.number(this.interestFeeUnits[assetIndex]);
      w.number(this.interestRoundingUnits[assetIndex]);
    });
    const cells = this.openCells(accountCount);
    w.number(cells.length);
    for (const cell of cells) {
      w.number(cell);
      w.number(this.lent[cell]);
      w.number(this.borrowed[cell]);
      w.number(this.interest[cell]);
      w.number(this.positionId[cell]);
    }
    w.number(interestDueUs);
  }

  /**
   * Reads the part back; returns the interest due time (-1: none) for the caller to arm. A part
   * with no pool (written under a configuration without margin parameters, so without positions
   * or a timer either) loads as every pool empty, like a snapshot from before pools: a data
   * directory continues when its configuration gains margin parameters (engine/shell/journal.ts).
   */
  importFrom(r: SnapshotReader, accountCount: number): number {
    const poolCount = r.number();
    expectSnapshot(poolCount === this.poolCount || poolCount === 0, 'the snapshot has other lend pools than the configuration');
    if (poolCount > 0) this.forEachPool((assetIndex) => {
      expectSnapshot(r.number() === assetIndex, 'lend pools out of order');
      this.lentTotal[assetIndex] = r.number();
      this.borrowedTotal[assetIndex] = r.number();
      this.interestFeeUnits[assetIndex] = r.number();
      this.interestRoundingUnits[assetIndex] = r.number();
    });
    const count = r.number();
    let previous = -1;
    for (let i = 0; i < count; i++) {
      const cell = r.number();
      const assetIndex = cell % this.assetCount;
      expectSnapshot(cell > previous && cell < (accountCount + 1) * this.assetCount && cell >= this.assetCount, 'lend position of an unknown account');
      expectSnapshot(this.poolOf[assetIndex] !== undefined, 'lend position of an asset without a pool');
      previous = cell;
      this.lent[cell] = r.number();
      this.borrowed[cell] = r.number();
      this.interest[cell] = r.number();
      this.positionId[cell] = r.number();
      if (this.borrowed[cell] > 0) this.countBorrow((cell - assetIndex) / this.assetCount, 1);
    }
    return r.number();
  }

  /** State hash part (only once a pool was used: every earlier state keeps its hash). */
  hashInto(d: StateDigest, accountCount: number, interestDueUs: number): void {
    if (!this.touched()) return;
    this.forEachPool((assetIndex) => {
      d.number(assetIndex);
      d.number(this.lentTotal[assetIndex]);
      d.number(this.borrowedTotal[assetIndex]);
      d.number(this.interestFeeUnits[assetIndex]);
      d.number(this.interestRoundingUnits[assetIndex]);
    });
    for (const cell of this.openCells(accountCount)) {
      d.number(cell);
      d.number(this.lent[cell]);
      d.number(this.borrowed[cell]);
      d.number(this.interest[cell]);
      d.number(this.positionId[cell]);
    }
    d.number(interestDueUs + 1);
  }

  /**
   * Totals equal the sums of the positions; an account lends or borrows an asset, not both; a
   * position has an id exactly while open; positions only where pools are; accounts past
   * `accountCount` hold none; per pool borrowed ≤ lent + the lines the exchange kept.
   */
  validate(accountCount: number): void {
    const lent = new Array<number>(this.assetCount).fill(0);
    const borrowed = new Array<number>(this.assetCount).fill(0);
    for (let cell = 0; cell < this.lent.length; cell++) {
      const assetIndex = cell % this.assetCount;
      const accountId = (cell - assetIndex) / this.assetCount;
      const open = this.lent[cell] > 0 || this.borrowed[cell] > 0;
      assert(isUnsignedSafe(this.lent[cell]) && isUnsignedSafe(this.borrowed[cell]) && isUnsignedSafe(this.interest[cell]), 'a lend position is not a safe non-negative integer');
      assert(this.lent[cell] === 0 || this.borrowed[cell] === 0, `account ${accountId} both lends and borrows asset index ${assetIndex}`);
      assert(open === (this.positionId[cell] > 0) && (open || this.interest[cell] === 0), 'a position id or interest without a position');
      assert(!open || (accountId >= 1 && accountId <= accountCount && this.poolOf[assetIndex] !== undefined), 'a position of an unknown account or of an asset without a pool');
      lent[assetIndex] += this.lent[cell];
      borrowed[assetIndex] += this.borrowed[cell];
      if (assetIndex === 0) this.validateBorrower(accountId);
    }
    for (let assetIndex = 0; assetIndex < this.assetCount; assetIndex++) {
      assert(lent[assetIndex] === this.lentTotal[assetIndex] && borrowed[assetIndex] === this.borrowedTotal[assetIndex], `lend pool totals of asset index ${assetIndex} differ from its positions`);
      assert(isUnsignedSafe(this.interestFeeUnits[assetIndex]) && isUnsignedSafe(this.interestRoundingUnits[assetIndex]), 'an interest line is not a safe non-negative integer');
      const kept = this.interestFeeUnits[assetIndex] + this.interestRoundingUnits[assetIndex];
      assert(this.borrowedTotal[assetIndex] <= this.lentTotal[assetIndex] + kept, `pool of asset index ${assetIndex} lent out more than it holds`);
      assert(isUnsignedSafe(this.stepStartUtilization[assetIndex]) && (this.poolOf[assetIndex] !== undefined || this.stepStartUtilization[assetIndex] === 0), 'a throttle start out of range');
    }
  }

  /** The account's borrow count and its place in the borrower set match its positions. */
  private validateBorrower(accountId: number): void {
    let count = 0;
    for (let assetIndex = 0; assetIndex < this.assetCount; assetIndex++) if (this.borrowed[accountId * this.assetCount + assetIndex] > 0) count++;
    const slot = this.borrowerSlotOf[accountId];
    assert(count === this.borrowCountOf[accountId], `account ${accountId} borrow count is off`);
    assert(count === 0 ? slot === -1 : slot >= 0 && slot < this.borrowerCount && this.borrowerIds[slot] === accountId, `account ${accountId} is misplaced in the borrower set`);
  }

  private forEachPool(visit: (assetIndex: number) => void): void {
    for (let assetIndex = 0; assetIndex < this.assetCount; assetIndex++) if (this.poolOf[assetIndex] !== undefined) visit(assetIndex);
  }

  /** Cells with a position, in cell order (account, then asset). */
  private openCells(accountCount: number): number[] {
    const cells: number[] = [];
    const end = (accountCount + 1) * this.assetCount;
    for (let cell = this.assetCount; cell < end; cell++) if (this.lent[cell] > 0 || this.borrowed[cell] > 0) cells.push(cell);
    return cells;
  }
}

function indexOf(assetIndexOf: (assetId: number) => number, assetId: number): number {
  const assetIndex = assetIndexOf(assetId);
  assert(assetIndex >= 0, 'margin parameters of an unknown asset');
  return assetIndex;
}

function safeSum(a: number, b: number): number {
  const sum = a + b;
  assert(Number.isSafeInteger(sum), 'a lend pool amount left the safe-integer range');
  return sum;
}
