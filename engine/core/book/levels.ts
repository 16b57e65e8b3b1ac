// The price order of one book side's levels: which level slot holds a price, which is the best,
// and which comes next going away from the touch. Two forms, chosen per side from the market's
// tick range (BookSide picks, see levelOrderFor):
//
// - LadderLevels, for a range of at most LADDER_MAX_TICKS ticks: a bitmap of occupied ticks
//   (offsets from the market's minimum price) in layers of 32-bit words, each layer one bit per
//   non-empty word of the layer below, so the next occupied tick on either side of any tick is a
//   few Math.clz32 steps; a hash table (open addressing, linear probing) from price to level slot.
//   Adding or removing a level is O(layers), with no search and no shift.
// - SortedLevels, for wider ranges: level prices as sort keys in one ascending typed array, best
//   last (bids by +price, asks by -price), binary-searched and shifted on insert and remove.
//
// Both give the same order: best first, strictly worsening prices. Neither allocates after
// construction; the ladder's memory is about range / 8 bytes (two megabytes per side at the limit).

import { Side } from '../../bus/types.js';
import { assert } from '../assert.js';

export const NO_LEVEL = -1;

/**
 * Widest tick range (maxPriceTicks − minPriceTicks + 1) kept as a ladder: 2^24 ticks, a 2 MB
 * bitmap per side. Wider markets keep their levels in a sorted array.
 */
export const LADDER_MAX_TICKS = 1 << 24;

export interface LevelOrder {
  /** Level slot of the best price, or NO_LEVEL. */
  best(): number;
  /** The level after `level` going away from the touch, or NO_LEVEL after the worst. */
  worse(level: number): number;
  /** Level slot holding `priceTicks`, or NO_LEVEL. */
  find(priceTicks: number): number;
  /** Places `level` (its price already in levelPrice, not yet present) in the order. */
  add(level: number): void;
  /** Takes `level` out of the order. */
  delete(level: number): void;
}

/** The order for one side of a market whose prices run minPriceTicks..maxPriceTicks. */
export function levelOrderFor(side: Side, capacity: number, levelPrice: Float64Array, minPriceTicks: number, maxPriceTicks: number): LevelOrder {
  const ticks = maxPriceTicks - minPriceTicks + 1;
  return ticks >= 1 && ticks <= LADDER_MAX_TICKS
    ? new LadderLevels(side, capacity, levelPrice, minPriceTicks, ticks)
    : new SortedLevels(side, capacity, levelPrice);
}

/** Highest set bit of a non-zero word. */
function highBit(word: number): number {
  return 31 - Math.clz32(word);
}

/** Lowest set bit of a non-zero word. */
function lowBit(word: number): number {
  return 31 - Math.clz32(word & -word);
}

export class LadderLevels implements LevelOrder {
  /** layers[0] holds one bit per tick; layers[k + 1] one bit per non-zero word of layers[k]; the last is one word. */
  private readonly layers: Int32Array[] = [];
  /** Hash table of level slots by price (NO_LEVEL: free), a power of two at least twice the capacity. */
  private readonly table: Int32Array;
  private readonly tableShift: number;
  private readonly mask: number;
  private bestLevel = NO_LEVEL;

  constructor(
    private readonly side: Side,
    capacity: number,
    private readonly levelPrice: Float64Array,
    private readonly minPriceTicks: number,
    private readonly ticks: number,
  ) {
    for (let bits = ticks; ; bits = Math.ceil(bits / 32)) {
      this.layers.push(new Int32Array(Math.ceil(bits / 32)));
      if (bits <= 32) break;
    }
    let tableBits = 1;
    while (1 << tableBits < 2 * capacity) tableBits++;
    this.table = new Int32Array(1 << tableBits).fill(NO_LEVEL);
    this.tableShift = 32 - tableBits;
    this.mask = (1 << tableBits) - 1;
  }

  best(): number {
    return this.bestLevel;
  }

  worse(level: number): number {
    const offset = this.levelPrice[level] - this.minPriceTicks;
    const next = this.side === Side.Bid ? this.below(offset) : this.above(offset);
    return next < 0 ? NO_LEVEL : this.find(next + this.minPriceTicks);
  }

  find(priceTicks: number): number {
    const table = this.table;
    const levelPrice = this.levelPrice;
    for (let i = this.home(priceTicks); ; i = (i + 1) & this.mask) {
      const level = table[i];
      if (level === NO_LEVEL || levelPrice[level] === priceTicks) return level;
    }
  }

  add(level: number): void {
    const price = this.levelPrice[level];
    let i = this.home(price);
    while (this.table[i] !== NO_LEVEL) i = (i + 1) & this.mask;
    this.table[i] = level;
    let at = price - this.minPriceTicks;
    assert(at >= 0 && at < this.ticks, 'a level price outside the ladder');
    for (const layer of this.layers) {
      const word = layer[at >>> 5];
      layer[at >>> 5] = word | (1 << (at & 31));
      if (word !== 0) break;
      at >>>= 5;
    }
    const best = this.bestLevel;
    if (best === NO_LEVEL || (this.side === Side.Bid ? price > this.levelPrice[best] : price < this.levelPrice[best])) this.bestLevel = level;
  }

  delete(level: number): void {
    if (level === this.bestLevel) this.bestLevel = this.worse(level);
    const price = this.levelPrice[level];
    let at = price - this.minPriceTicks;
    for (const layer of this.layers) {
      const word = layer[at >>> 5] & ~(1 << (at & 31));
      layer[at >>> 5] = word;
      if (word !== 0) break;
      at >>>= 5;
    }
    this.unhash(level, price);
  }

  private home(priceTicks: number): number {
    return Math.imul(priceTicks - this.minPriceTicks, 0x9e3779b1) >>> this.tableShift;
  }

  /** Removes `level` from the table, moving later entries of its probe run back over the gap. */
  private unhash(level: number, priceTicks: number): void {
    const table = this.table;
    const mask = this.mask;
    let gap = this.home(priceTicks);
    while (table[gap] !== level) gap = (gap + 1) & mask;
    for (let i = (gap + 1) & mask; table[i] !== NO_LEVEL; i = (i + 1) & mask) {
      const home = this.home(this.levelPrice[table[i]]);
      // The entry at i may fill the gap when its home is not cyclically within (gap, i].
      if (((i - home) & mask) >= ((i - gap) & mask)) {
        table[gap] = table[i];
        gap = i;
      }
    }
    table[gap] = NO_LEVEL;
  }

  /** Highest occupied tick offset below `offset`, or -1. */
  private below(offset: number): number {
    const layers = this.layers;
    let at = offset;
    let k = 0;
    let found = -1;
    for (; k < layers.length; k++) {
      const bit = at & 31;
      at >>>= 5;
      const word = bit === 0 ? 0 : layers[k][at] & ((1 << bit) - 1);
      if (word !== 0) {
        found = (at << 5) | highBit(word);
        break;
      }
    }
    if (found < 0) return -1;
    for (let j = k - 1; j >= 0; j--) found = (found << 5) | highBit(layers[j][found]);
    return found;
  }

  /** Lowest occupied tick offset above `offset`, or -1. */
  private above(offset: number): number {
    const layers = this.layers;
    let at = offset;
    let k = 0;
    let found = -1;
    for (; k < layers.length; k++) {
      const bit = at & 31;
      at >>>= 5;
      const word = bit === 31 ? 0 : layers[k][at] & ~((2 << bit) - 1);
      if (word !== 0) {
        found = (at << 5) | lowBit(word);
        break;
      }
    }
    if (found < 0) return -1;
    for (let j = k - 1; j >= 0; j--) found = (found << 5) | lowBit(layers[j][found]);
    return found;
  }
}

/** Longest level shift done by a loop rather than copyWithin (measured break-even, see shiftUp). */
const SHORT_SHIFT = 16;

export class SortedLevels implements LevelOrder {
  private count = 0;
  /** Sort keys of the levels, ascending; the best level is at count - 1. */
  private readonly keys: Float64Array;
  /** Level slot for each sorted position. */
  private readonly levelAt: Int32Array;

  constructor(
    private readonly side: Side,
    capacity: number,
    private readonly levelPrice: Float64Array,
  ) {
    this.keys = new Float64Array(capacity);
    this.levelAt = new Int32Array(capacity);
  }

  private sortKey(priceTicks: number): number {
    return this.side === Side.Bid ? priceTicks : -priceTicks;
  }

  best(): number {
    return this.count === 0 ? NO_LEVEL : this.levelAt[this.count - 1];
  }

  worse(level: number): number {
    const position = this.positionOf(level);
    return position > 0 ? this.levelAt[position - 1] : NO_LEVEL;
  }

  find(priceTicks: number): number {
    const key = this.sortKey(priceTicks);
    const position = this.lowerBound(key);
    return position < this.count && this.keys[position] === key ? this.levelAt[position] : NO_LEVEL;
  }

  add(level: number): void {
    const key = this.sortKey(this.levelPrice[level]);
    const position = this.lowerBound(key);
    assert(position === this.count || this.keys[position] !== key, 'inserting a level that exists');
    this.shiftUp(position);
    this.keys[position] = key;
    this.levelAt[position] = level;
    this.count++;
  }

  delete(level: number): void {
    this.shiftDown(this.positionOf(level));
    this.count--;
  }

  /** Position of a present level; fills and cancels at the touch take the best, the last position. */
  private positionOf(level: number): number {
    const last = this.count - 1;
    const position = last >= 0 && this.levelAt[last] === level ? last : this.lowerBound(this.sortKey(this.levelPrice[level]));
    assert(position < this.count && this.levelAt[position] === level, 'level not found at its price');
    return position;
  }

  /**
   * Moves positions [position, count) one up, opening a hole at `position`. Most changes happen
   * near the best price, which is the end of the arrays, so the move is usually short or empty:
   * short moves are a plain loop, because the two copyWithin calls cost ~45 ns on our box whatever
   * the length, as much as moving 16-20 elements by hand; long ones use copyWithin (a memmove).
   */
  private shiftUp(position: number): void {
    const count = this.count;
    if (count - position > SHORT_SHIFT) {
      this.keys.copyWithin(position + 1, position, count);
      this.levelAt.copyWithin(position + 1, position, count);
      return;
    }
    const keys = this.keys;
    const levelAt = this.levelAt;
    for (let i = count; i > position; i--) {
      keys[i] = keys[i - 1];
      levelAt[i] = levelAt[i - 1];
    }
  }

  /** Moves positions (position, count) one down, over `position` (see shiftUp). */
  private shiftDown(position: number): void {
    const count = this.count;
    if (count - position > SHORT_SHIFT) {
      this.keys.copyWithin(position, position + 1, count);
      this.levelAt.copyWithin(position, position + 1, count);
      return;
    }
    const keys = this.keys;
    const levelAt = this.levelAt;
    for (let i = position + 1; i < count; i++) {
      keys[i - 1] = keys[i];
      levelAt[i - 1] = levelAt[i];
    }
  }

  /**
   * First position whose key is ≥ key. A key past the best (an improving price, or the book
   * filling outward from the touch) is answered before the binary search.
   */
  private lowerBound(key: number): number {
    let high = this.count;
    if (high === 0 || this.keys[high - 1] < key) return high;
    let low = 0;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.keys[middle] < key) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}
