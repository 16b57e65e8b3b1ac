// Each open position's cumulative funding (the wire's cumulativeFundingPayment): the sum of its
// funding payments since it opened, signed from the account's side (negative: paid), in USDC
// units (funding-payments.ts adds to it).
//
// Kept per position cell (positions.ts: accountId × perpetuals + ordinal) together with the id of
// the position it belongs to: a position that closes and a new one that opens in the same cell
// start from 0 without any rule touching this table when positions change (positionId differs).
// Only live entries are observable (cumulativeFundingOf), so only they enter the snapshot and the
// state hash: a position still open, of the recorded id, with a sum other than 0.

import { assert } from '../assert.js';
import { expectSnapshot, type SnapshotReader, type SnapshotWriter, type StateDigest } from '../parts.js';
import type { Positions } from './positions.js';

/** Tags the cumulative funding part of the state hash. */
const HASH_TAG = 0x46554e44; // 'FUND'

export class CumulativeFunding {
  readonly units: Float64Array;
  readonly positionId: Float64Array;

  constructor(cellCount: number) {
    this.units = new Float64Array(cellCount);
    this.positionId = new Float64Array(cellCount);
  }

  /** The position in `cell` (now `positionId`) paid (< 0) or received (> 0) `units`. */
  add(cell: number, positionId: number, units: number): void {
    if (this.positionId[cell] !== positionId) {
      this.positionId[cell] = positionId;
      this.units[cell] = 0;
    }
    this.units[cell] += units;
    assert(Number.isSafeInteger(this.units[cell]), 'cumulative funding leaves the safe-integer range');
  }

  /** The cumulative funding of the position now in `cell` (0 when it never paid or received). */
  of(cell: number, p: Positions): number {
    return p.lots[cell] !== 0 && this.positionId[cell] === p.positionId[cell] ? this.units[cell] : 0;
  }

  private liveCells(p: Positions): number[] {
    const cells: number[] = [];
    for (let cell = 0; cell < this.units.length; cell++) if (this.of(cell, p) !== 0) cells.push(cell);
    return cells;
  }

  /** Snapshot: count, then per live cell: cell, position id, units. */
  exportTo(w: SnapshotWriter, p: Positions): void {
    const cells = this.liveCells(p);
    w.number(cells.length);
    for (const cell of cells) {
      w.number(cell);
      w.number(this.positionId[cell]);
      w.number(this.units[cell]);
    }
  }

  importFrom(r: SnapshotReader): void {
    const count = r.number();
    expectSnapshot(count >= 0 && count <= this.units.length, 'cumulative funding count out of range');
    for (let n = 0; n < count; n++) {
      const cell = r.number();
      expectSnapshot(cell >= 0 && cell < this.units.length, 'cumulative funding of an unknown cell');
      this.positionId[cell] = r.number();
      this.units[cell] = r.number();
    }
  }

  /** State hash: nothing while no open position has paid or received funding. */
  hashInto(d: StateDigest, p: Positions): void {
    const cells = this.liveCells(p);
    if (cells.length === 0) return;
    d.number(HASH_TAG);
    d.number(cells.length);
    for (const cell of cells) {
      d.number(cell);
      d.number(this.positionId[cell]);
      d.number(this.units[cell] < 0 ? 1 : 0);
      d.number(Math.abs(this.units[cell]));
    }
  }
}
