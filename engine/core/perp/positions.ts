// Perpetual positions: one net position per (account, perpetual market), and the perpetuals'
// settlement line per quote asset.
//
// A position is its signed size in lots and its signed cost C in quote units (USDC): each fill
// adds −price·qty to the buyer's C and +price·qty to the seller's, so Σ C moves by 0 on every
// fill. Its unrealized PnL at mark m is size·m + C; its entry price (display) is −C / size, which
// the rules below keep as the venue defines it: the weighted average of increasing fills,
// unchanged by reductions, reset to the fill price by a flip.
//
// Reducing r of |L| lots moves the reduced share of C, floor(C·r/|L|) (rounded against the
// account), out of the position together with the fill's cost of those r lots: their sum is the
// realized PnL R. C_after + R = C_before + fill cost, so Σ (C + realized) over every position
// changes by 0 on each fill: realization creates no money, it only decides when money moves.
//
// Settlement, exact and zero-sum (the perpetuals' rule, README "Perpetuals"): a realized loss is
// paid into the quote asset's settlement line from the account's available units, a realized
// profit out of it, and only out of what it holds. What cannot move yet stays on the position:
// `unsettled` (signed: a claim > 0 on the line, a debt < 0 the account owes it) and `feeDebt`
// (a futures fee its available USDC could not pay, owed to the fee ledger). Debts are paid from
// available units at the account's next fill in the market and at its next deposit of the quote
// asset; claims wait in one FIFO queue per exchange and are paid, oldest first, whenever units
// reach the line. So no account ever receives a unit the line does not hold, no balance goes
// negative, and for the quote asset
//   Σ (available + locked + lent − borrowed) + fees + interest lines + settlement line = supply.
// While the line holds units no claim waits (the queue is drained as units arrive).
//
// Storage: flat typed arrays indexed by accountId × perpCount + perp ordinal (catalog order of the
// perpetual markets); money in BigInt64Array (a position's cost may pass 2^53), sizes in a
// Float64Array of safe integers. Position ids come from one counter, given when a position opens
// from flat, so replay reproduces them.

import { LITTLE_ENDIAN } from '../../bus/codec-primitives.js';
import { assert } from '../assert.js';
import { expectSnapshot, type SnapshotReader, type SnapshotWriter, type StateDigest } from '../parts.js';

/** No queued cell. */
const NO_CELL = -1;

export class Positions {
  /** Perpetual ordinal by market index (-1: a spot market), and market index by ordinal. */
  readonly ordinalOf: Int32Array;
  readonly marketOf: number[];
  readonly perpCount: number;
  readonly lots: Float64Array;
  readonly cost: BigInt64Array;
  /**
   * The entry cost: what C would be had no realization at mark (realize.ts) moved it; the wire's
   * entry price, break-even price and netCost read it. Equal to C until a realization, and kept
   * apart (snapshot and hash) only where it differs.
   */
  readonly entryCost: BigInt64Array;
  /** Realized PnL of the position since it opened (pnlRealized). */
  readonly realized: BigInt64Array;
  /** Futures fees charged to the position since it opened (breakEvenPrice). */
  readonly fees: BigInt64Array;
  /** Realized but not yet settled: > 0 a claim on the settlement line, < 0 a debt to it. */
  readonly unsettled: BigInt64Array;
  /** Futures fees not yet paid to the fee ledger. */
  readonly feeDebt: BigInt64Array;
  readonly positionId: Float64Array;
  /**
   * The wide columns as 32-bit words (the same memory): the snapshot, the hash and isOpen read a
   * value that fits 53 bits from its two words, without making a bigint of it (wideOf).
   */
  private readonly words: { cost: Int32Array; entryCost: Int32Array; realized: Int32Array; fees: Int32Array; unsettled: Int32Array; feeDebt: Int32Array };
  /** The FIFO of cells with a claim: next and previous links, a membership flag, head and tail. */
  private readonly queueNext: Int32Array;
  private readonly queuePrev: Int32Array;
  private readonly queued: Uint8Array;
  private queueHead = NO_CELL;
  private queueTail = NO_CELL;
  /** The settlement line per asset index (units it holds; only quote assets of perpetuals move). */
  readonly settlementUnits: Float64Array;
  /** The last position id given. */
  lastPositionId = 0;
  /**
   * Open interest per perpetual ordinal: Σ long lots (derived from the sizes: kept by setLots,
   * recomputed on import, checked by validate; neither snapshotted nor hashed).
   */
  readonly openInterestLots: Float64Array;
  /**
   * The holders of each perpetual (accounts with a size ≠ 0, by ordinal) and the number of
   * positions each account holds: derived from the sizes like open interest (kept by setLots,
   * rebuilt on import, checked by validate), so a mark's move re-checks only its holders
   * (margin/liquidating.ts reviewPositionHoldersOf).
   */
  private readonly holders: Set<number>[];
  readonly positionCountOf: Int32Array;
  /**
   * Called with the account whenever one of its positions' figures that count in its margin
   * (size, cost, unsettled equity, fee debt) may have changed: the liquidation trigger index
   * drops its bands (margin/trigger-index.ts touch).
   */
  changed: (accountId: number) => void = () => {};

  constructor(maxAccounts: number, readonly assetCount: number, perpMarketIndices: readonly number[], marketCount: number) {
    this.perpCount = perpMarketIndices.length;
    this.marketOf = [...perpMarketIndices];
    this.ordinalOf = new Int32Array(marketCount).fill(-1);
    perpMarketIndices.forEach((marketIndex, ordinal) => { this.ordinalOf[marketIndex] = ordinal; });
    const cells = (maxAccounts + 1) * this.perpCount;
    this.lots = new Float64Array(cells);
    this.cost = new BigInt64Array(cells);
    this.entryCost = new BigInt64Array(cells);
    this.realized = new BigInt64Array(cells);
    this.fees = new BigInt64Array(cells);
    this.unsettled = new BigInt64Array(cells);
    this.feeDebt = new BigInt64Array(cells);
    const words = (column: BigInt64Array): Int32Array => new Int32Array(column.buffer, column.byteOffset, column.length * 2);
    this.words = { cost: words(this.cost), entryCost: words(this.entryCost), realized: words(this.realized), fees: words(this.fees), unsettled: words(this.unsettled), feeDebt: words(this.feeDebt) };
    this.positionId = new Float64Array(cells);
    this.queueNext = new Int32Array(cells).fill(NO_CELL);
    this.queuePrev = new Int32Array(cells).fill(NO_CELL);
    this.queued = new Uint8Array(cells);
    this.settlementUnits = new Float64Array(assetCount);
    this.openInterestLots = new Float64Array(this.perpCount);
    this.holders = Array.from({ length: this.perpCount }, () => new Set<number>());
    this.positionCountOf = new Int32Array(maxAccounts + 1);
  }

  /** Sets a position's size, keeping its perpetual's open interest and holders. */
  setLots(cell: number, lots: number): void {
    const ordinal = cell % this.perpCount;
    this.changed(this.accountOf(cell));
    this.openInterestLots[ordinal] += Math.max(lots, 0) - Math.max(this.lots[cell], 0);
    if ((this.lots[cell] === 0) !== (lots === 0)) {
      const accountId = this.accountOf(cell);
      if (lots === 0) this.holders[ordinal].delete(accountId);
      else this.holders[ordinal].add(accountId);
      this.positionCountOf[accountId] += lots === 0 ? -1 : 1;
    }
    this.lots[cell] = lots;
  }

  /**
   * A step of a pass over perpetual `ordinal`'s holders (realize.ts, funding-passes.ts): from
   * account `from` on, ascending, `visit(cell, accountId)` for each holder while `budget` lasts;
   * a visit that returns false (a holder the pass skips) does not count. Returns the next account
   * id, past `lastAccount` once the walk is done.
   */
  walkHolders(ordinal: number, from: number, lastAccount: number, budget: PassBudget, visit: (cell: number, accountId: number) => boolean): number {
    let accountId = from;
    for (; accountId <= lastAccount && budget.visits > 0 && budget.scans > 0; accountId++, budget.scans--) {
      const cell = accountId * this.perpCount + ordinal;
      if (this.lots[cell] !== 0 && visit(cell, accountId)) budget.visits--;
    }
    return accountId;
  }

  /** The accounts holding a position in the perpetual of `marketIndex`, ascending. O(holders · log holders). */
  holdersOf(marketIndex: number): number[] {
    const ordinal = this.ordinalOf[marketIndex];
    assert(ordinal >= 0, 'holders of a market that is not a perpetual');
    return [...this.holders[ordinal]].sort((a, b) => a - b);
  }

  cell(accountId: number, marketIndex: number): number {
    const ordinal = this.ordinalOf[marketIndex];
    assert(ordinal >= 0, 'a position in a market that is not a perpetual');
    const cell = accountId * this.perpCount + ordinal;
    assert(cell < this.lots.length, 'position cell out of range');
    return cell;
  }

  accountOf(cell: number): number {
    return Math.floor(cell / this.perpCount);
  }

  marketIndexOf(cell: number): number {
    return this.marketOf[cell % this.perpCount];
  }

  /** Whether the cell has anything to show or settle: a size, or an unsettled amount. */
  isOpen(cell: number): boolean {
    const { unsettled, feeDebt } = this.words;
    return this.lots[cell] !== 0 || unsettled[2 * cell] !== 0 || unsettled[2 * cell + 1] !== 0 || feeDebt[2 * cell] !== 0 || feeDebt[2 * cell + 1] !== 0;
  }

  /**
   * Keeps the claim queue equal to the cells with a claim after the cell's unsettled amount
   * changed: a new claim joins at the tail, a claim that is gone (paid, or netted by a loss)
   * leaves from wherever it is; a claim that only changed keeps its place.
   */
  syncClaim(cell: number): void {
    this.changed(this.accountOf(cell));
    const claim = this.unsettled[cell] > 0n;
    if (claim === (this.queued[cell] !== 0)) return;
    if (claim) {
      this.queued[cell] = 1;
      this.queuePrev[cell] = this.queueTail;
      if (this.queueTail === NO_CELL) this.queueHead = cell;
      else this.queueNext[this.queueTail] = cell;
      this.queueTail = cell;
      return;
    }
    const prev = this.queuePrev[cell];
    const next = this.queueNext[cell];
    if (prev === NO_CELL) this.queueHead = next;
    else this.queueNext[prev] = next;
    if (next === NO_CELL) this.queueTail = prev;
    else this.queuePrev[next] = prev;
    this.queueNext[cell] = NO_CELL;
    this.queuePrev[cell] = NO_CELL;
    this.queued[cell] = 0;
  }

  /** The oldest cell with a claim, or NO_CELL. */
  headClaim(): number {
    return this.queueHead;
  }

  /** The claim queue's cells, oldest first (snapshot, hash, invariants). */
  claimQueue(): number[] {
    const cells: number[] = [];
    for (let cell = this.queueHead; cell !== NO_CELL; cell = this.queueNext[cell]) {
      cells.push(cell);
      assert(cells.length <= this.lots.length, 'the claim queue loops');
    }
    return cells;
  }

  /** Cells of the first `accountCount` accounts that are open, in cell order. */
  openCells(accountCount: number): number[] {
    const cells: number[] = [];
    const end = (accountCount + 1) * this.perpCount;
    for (let cell = this.perpCount; cell < end; cell++) if (this.isOpen(cell)) cells.push(cell);
    return cells;
  }

  /** Snapshot: the counter, the lines, the open cells with every field, the claim queue. */
  exportTo(w: SnapshotWriter, accountCount: number): void {
    w.number(this.lastPositionId);
    for (let a = 0; a < this.assetCount; a++) w.number(this.settlementUnits[a]);
    const cells = this.openCells(accountCount);
    w.number(cells.length);
    for (const cell of cells) {
      w.number(cell);
      w.number(this.lots[cell]);
      w.number(this.positionId[cell]);
      writeWide(w, this.cost, this.words.cost, cell);
      writeWide(w, this.realized, this.words.realized, cell);
      writeWide(w, this.fees, this.words.fees, cell);
      writeWide(w, this.unsettled, this.words.unsettled, cell);
      writeWide(w, this.feeDebt, this.words.feeDebt, cell);
    }
    const queue = this.claimQueue();
    w.number(queue.length);
    for (const cell of queue) w.number(cell);
  }

  importFrom(r: SnapshotReader, accountCount: number): void {
    this.lastPositionId = r.number();
    for (let a = 0; a < this.assetCount; a++) this.settlementUnits[a] = r.number();
    const count = r.number();
    const end = (accountCount + 1) * this.perpCount;
    for (let i = 0; i < count; i++) {
      const cell = r.number();
      expectSnapshot(cell >= this.perpCount && cell < end, 'a position of an unknown account');
      this.setLots(cell, r.number());
      this.positionId[cell] = r.number();
      for (const column of [this.cost, this.realized, this.fees, this.unsettled, this.feeDebt]) column[cell] = readBig(r);
      this.entryCost[cell] = this.cost[cell];
      expectSnapshot(this.isOpen(cell), 'a snapshot position with nothing in it');
    }
    const queued = r.number();
    for (let i = 0; i < queued; i++) {
      const cell = r.number();
      expectSnapshot(cell >= this.perpCount && cell < end && this.unsettled[cell] > 0n && this.queued[cell] === 0, 'a queued claim that is not one');
      this.syncClaim(cell);
    }
  }

  /** State hash, only once a position or a line was ever used: states without perpetual activity keep their hash. */
  hashInto(d: StateDigest, accountCount: number): void {
    const cells = this.openCells(accountCount);
    const lines = this.settlementUnits.some((units) => units !== 0);
    if (this.lastPositionId === 0 && cells.length === 0 && !lines) return;
    d.number(this.lastPositionId);
    for (let a = 0; a < this.assetCount; a++) d.number(this.settlementUnits[a]);
    d.number(cells.length);
    for (const cell of cells) {
      d.number(cell);
      hashSigned(d, this.lots[cell]);
      d.number(this.positionId[cell]);
      hashWide(d, this.cost, this.words.cost, cell);
      hashWide(d, this.realized, this.words.realized, cell);
      hashWide(d, this.fees, this.words.fees, cell);
      hashWide(d, this.unsettled, this.words.unsettled, cell);
      hashWide(d, this.feeDebt, this.words.feeDebt, cell);
    }
    for (const cell of this.claimQueue()) d.number(cell);
  }

  /** The open cells whose entry cost differs from C (after a realization), in cell order. */
  private realizedCells(accountCount: number): number[] {
    const { entryCost, cost } = this.words;
    return this.openCells(accountCount).filter((cell) => entryCost[2 * cell] !== cost[2 * cell] || entryCost[2 * cell + 1] !== cost[2 * cell + 1]);
  }

  /** Snapshot part (format 12 on): the entry costs that differ from C: count, then cell and value. */
  exportEntryCostsTo(w: SnapshotWriter, accountCount: number): void {
    const cells = this.realizedCells(accountCount);
    w.number(cells.length);
    for (const cell of cells) {
      w.number(cell);
      writeWide(w, this.entryCost, this.words.entryCost, cell);
    }
  }

  /** After the positions part: an older format has none (every entry cost is C, as the positions part set it). */
  importEntryCostsFrom(r: SnapshotReader, hasPart: boolean): void {
    if (!hasPart) return;
    const count = r.number();
    for (let i = 0; i < count; i++) {
      const cell = r.number();
      expectSnapshot(cell >= 0 && cell < this.lots.length && this.lots[cell] !== 0, 'an entry cost of a position that is not open');
      this.entryCost[cell] = readBig(r);
      expectSnapshot(this.entryCost[cell] !== this.cost[cell], 'an entry cost kept that equals the cost');
    }
  }

  /** State hash: the entry costs that differ from C (nothing while none does, so earlier states keep their hash). */
  hashEntryCostsInto(d: StateDigest, accountCount: number): void {
    const cells = this.realizedCells(accountCount);
    if (cells.length === 0) return;
    d.number(cells.length);
    for (const cell of cells) {
      d.number(cell);
      hashWide(d, this.entryCost, this.words.entryCost, cell);
    }
  }

  /**
   * Each perpetual's sizes sum to 0; every number is in range; a flat position holds no cost; the
   * claim queue holds exactly the cells with a claim, and none waits while a line holds units.
   */
  validate(accountCount: number): void {
    const sums = new Float64Array(this.perpCount);
    const longs = new Float64Array(this.perpCount);
    const end = (accountCount + 1) * this.perpCount;
    let claims = 0;
    for (let cell = 0; cell < this.lots.length; cell++) {
      const lots = this.lots[cell];
      assert(Number.isSafeInteger(lots), 'a position size is not a safe integer');
      assert(cell >= this.perpCount && cell < end || (!this.isOpen(cell) && this.cost[cell] === 0n), 'a position of an account that does not exist');
      assert(lots !== 0 || (this.cost[cell] === 0n && this.entryCost[cell] === 0n), 'a flat position keeps a cost');
      assert(this.fees[cell] >= 0n && this.feeDebt[cell] >= 0n, 'fees are not negative');
      assert((this.queued[cell] !== 0) === (this.unsettled[cell] > 0n), 'the claim queue differs from the claims');
      if (this.unsettled[cell] > 0n) claims++;
      sums[cell % this.perpCount] += lots;
      if (lots > 0) longs[cell % this.perpCount] += lots;
    }
    for (let ordinal = 0; ordinal < this.perpCount; ordinal++) assert(sums[ordinal] === 0, `positions of perpetual ${ordinal} do not sum to 0`);
    for (let ordinal = 0; ordinal < this.perpCount; ordinal++) assert(longs[ordinal] === this.openInterestLots[ordinal], `open interest of perpetual ${ordinal} differs from its long positions`);
    this.validateHolders();
    assert(this.claimQueue().length === claims, 'the claim queue holds other cells than the claims');
    for (let a = 0; a < this.assetCount; a++) {
      assert(Number.isSafeInteger(this.settlementUnits[a]) && this.settlementUnits[a] >= 0, 'a settlement line is negative');
      assert(this.settlementUnits[a] === 0 || claims === 0, 'claims wait while a settlement line holds units');
    }
  }

  /** The holder sets and per-account counts are exactly the sizes ≠ 0. */
  private validateHolders(): void {
    const counts = new Int32Array(this.positionCountOf.length);
    for (let ordinal = 0; ordinal < this.perpCount; ordinal++) {
      let held = 0;
      for (let cell = ordinal; cell < this.lots.length; cell += this.perpCount) {
        if (this.lots[cell] === 0) continue;
        held++;
        counts[this.accountOf(cell)]++;
        assert(this.holders[ordinal].has(this.accountOf(cell)), `a holder of perpetual ${ordinal} is missing from its set`);
      }
      assert(held === this.holders[ordinal].size, `perpetual ${ordinal} lists holders without a position`);
    }
    for (let a = 0; a < counts.length; a++) assert(counts[a] === this.positionCountOf[a], 'an account\'s position count differs from its positions');
  }
}

const TWO_POW_53 = 2n ** 53n;

/** A signed bigint within ±2^63 as two snapshot numbers: high × 2^53 + low, 0 ≤ low < 2^53. */
/**
 * A wide value in a snapshot: high, then low, with value = high × 2^53 + low and 0 ≤ low < 2^53
 * (the definition; the columns write through writeWide, which takes no bigint for a value that
 * fits 53 bits). Reading one back takes no bigint arithmetic when high is 0 or −1.
 */
export function writeBig(w: SnapshotWriter, value: bigint): void {
  const low = ((value % TWO_POW_53) + TWO_POW_53) % TWO_POW_53;
  w.number(Number((value - low) / TWO_POW_53));
  w.number(Number(low));
}

export function readBig(r: SnapshotReader): bigint {
  const high = r.number();
  const low = r.number();
  expectSnapshot(low >= 0, 'a low word is negative');
  if (high === 0) return BigInt(low);
  if (high === -1) return BigInt(low - 2 ** 53);
  return BigInt(high) * TWO_POW_53 + BigInt(low);
}

/**
 * Account ids a step of a pass over the positions (realize.ts, funding-passes.ts) may scan per
 * position it may visit: holders can be sparse among the accounts, and a step stays bounded.
 */
export const SCAN_PER_POSITION = 64;

/** What a step of a pass may still do: holders to visit and account ids to scan (Infinity: no bound). */
export interface PassBudget {
  visits: number;
  scans: number;
}

/** The budget of one step of `positions` positions (Infinity: the rest of the pass). */
export function passBudget(positions: number): PassBudget {
  return { visits: positions, scans: positions * SCAN_PER_POSITION };
}

/** Index of a 64-bit value's low and high 32-bit words within its pair. */
const LOW_WORD = LITTLE_ENDIAN ? 0 : 1;
const HIGH_WORD = 1 - LOW_WORD;

/**
 * The value of column[cell] from its two words when it lies in [−2^53, 2^53) (exact: its high word
 * is then in [−2^21, 2^21)), else NaN: the caller reads the bigint.
 */
function wideOf(words: Int32Array, cell: number): number {
  const high = words[2 * cell + HIGH_WORD];
  return high >= -0x200000 && high < 0x200000 ? high * 0x1_0000_0000 + (words[2 * cell + LOW_WORD] >>> 0) : NaN;
}

/** writeBig of column[cell], from its words when it fits (wideOf). */
export function writeWide(w: SnapshotWriter, column: BigInt64Array, words: Int32Array, cell: number): void {
  const n = wideOf(words, cell);
  if (n !== n) return writeBig(w, column[cell]);
  w.number(n >= 0 ? 0 : -1);
  w.number(n >= 0 ? n : n + 2 ** 53);
}

/** hashBig of column[cell], from its words when it fits 53 bits with its sign (wideOf). */
export function hashWide(d: StateDigest, column: BigInt64Array, words: Int32Array, cell: number): void {
  const n = wideOf(words, cell);
  if (!Number.isSafeInteger(n)) return hashBig(d, column[cell]);
  d.number(n < 0 ? 1 : 0);
  d.number(0);
  d.number(n < 0 ? -n : n);
}

/** A signed value in the hash: its sign, then its magnitude (both safe non-negative) as high × 2^53 + low (the definition; the columns hash through hashWide). */
export function hashBig(d: StateDigest, value: bigint): void {
  const magnitude = value < 0n ? -value : value;
  d.number(value < 0n ? 1 : 0);
  d.number(Number(magnitude / TWO_POW_53));
  d.number(Number(magnitude % TWO_POW_53));
}

function hashSigned(d: StateDigest, value: number): void {
  d.number(value < 0 ? 1 : 0);
  d.number(Math.abs(value));
}
