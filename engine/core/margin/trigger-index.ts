// The liquidation trigger index: which borrowers a price move can push over the liquidation line
// (venue mechanics §1.4, liquidating.ts), found without walking every borrower.
//
// Bands. When liquidating.ts re-checks a borrower and finds it healthy, its slack
// S = netEquity − Σ N·MMF (≥ 1 quote unit) is split evenly over the priced assets it holds or
// borrows, and each asset gets a band of its mark (trigger-band.ts) inside which that asset's part
// of S cannot fall by more than its share. Since the parts add up (nothing couples two assets
// without perpetuals), while every mark stays inside its band the account stays at S − (S − 1) ≥ 1
// above the line: a re-check would find it healthy and change nothing. An account with a
// perpetual position or open perpetual order, an unpriced one and a liquidating one get no band.
//
// Marks, not index prices. A band bounds the mark the margin summary values the asset at,
// whatever its source (mark.ts: the index while fresh, else the book's guarded reference, else
// the stale index), so a mark that moves without a SetIndexPrice (an index gone stale, the book's
// reference moving) is caught at the next price move like any other.
//
// What a price move re-checks (candidates): every account whose band of any asset the current
// mark has left (taken from two heaps per asset, by lo descending and by hi ascending), and every
// borrower without a band (the pool): the liquidating ones, the perpetual traders, and those whose
// state changed since their band was drawn. liquidating.ts keeps those exposed to the moved asset,
// exactly as the full walk would, and re-checks them in ascending account id, so the records and
// the state are those of the full walk: an account left out is healthy at the marks it would be
// valued at, and its re-check would have been a no-op.
//
// Any change of what an account holds, lends or borrows, and any order it opens (a perpetual
// order adds exposure), drops its band (touch): the ledger, the pools and the order pool call it.
// Dropping is O(1): the account's generation moves on and its heap entries become garbage, popped
// when they surface or swept when a heap doubles. A dropped borrower joins the pool.
//
// Derived state: neither in the snapshot nor in the state hash. A fresh state (and so one loaded
// from a snapshot) starts with every borrower in the pool and no band; the first move of each
// asset re-checks its borrowers and draws their bands.
//
// TRIGGER_SWITCH.fullWalk (for the differential tests and the benchmarks) goes back to walking
// every borrower; the index stays maintained, so the switch may flip at any time.

import { AccountSettingFlag } from '../../bus/types.js';
import type { EngineState } from '../state.js';
import { assert } from '../assert.js';
import { liquidatable } from './account.js';
import { MarkSource, markOf } from './mark.js';
import type { LendPools } from './pools.js';
import { bandOf, indexUnitsOf } from './trigger-band.js';
import { marginSummary, type MarginSummary } from './valuation.js';

/** The full-walk switch, and a count of the re-checks price moves made (for the tests and benchmarks; not state). */
export const TRIGGER_SWITCH = { fullWalk: false, rechecks: 0 };

/** A binary min-heap of (key, account, generation) entries in parallel arrays. */
class BandHeap {
  keys: number[] = [];
  ids: number[] = [];
  gens: number[] = [];
  private sweepAt = 1024;

  get size(): number {
    return this.keys.length;
  }

  push(key: number, id: number, gen: number, live: (id: number, gen: number) => boolean): void {
    if (this.keys.length >= this.sweepAt) this.sweep(live);
    this.keys.push(key);
    this.ids.push(id);
    this.gens.push(gen);
    this.up(this.keys.length - 1);
  }

  pop(): void {
    const last = this.keys.length - 1;
    this.move(last, 0);
    this.keys.pop();
    this.ids.pop();
    this.gens.pop();
    if (this.keys.length > 0) this.down(0);
  }

  clear(): void {
    this.keys = [];
    this.ids = [];
    this.gens = [];
    this.sweepAt = 1024;
  }

  /** Drops the entries of bands no longer held and rebuilds the heap. */
  private sweep(live: (id: number, gen: number) => boolean): void {
    let kept = 0;
    for (let i = 0; i < this.keys.length; i++) {
      if (!live(this.ids[i], this.gens[i])) continue;
      this.keys[kept] = this.keys[i];
      this.ids[kept] = this.ids[i];
      this.gens[kept] = this.gens[i];
      kept++;
    }
    this.keys.length = kept;
    this.ids.length = kept;
    this.gens.length = kept;
    for (let i = (kept >> 1) - 1; i >= 0; i--) this.down(i);
    this.sweepAt = Math.max(1024, kept * 2);
  }

  private move(from: number, to: number): void {
    this.keys[to] = this.keys[from];
    this.ids[to] = this.ids[from];
    this.gens[to] = this.gens[from];
  }

  private up(i: number): void {
    const key = this.keys[i], id = this.ids[i], gen = this.gens[i];
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.keys[parent] <= key) break;
      this.move(parent, i);
      i = parent;
    }
    this.keys[i] = key;
    this.ids[i] = id;
    this.gens[i] = gen;
  }

  private down(i: number): void {
    const n = this.keys.length;
    const key = this.keys[i], id = this.ids[i], gen = this.gens[i];
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && this.keys[child + 1] < this.keys[child]) child++;
      if (this.keys[child] >= key) break;
      this.move(child, i);
      i = child;
    }
    this.keys[i] = key;
    this.ids[i] = id;
    this.gens[i] = gen;
  }
}

/** One asset's band of an account, in index units. */
export interface AssetBand {
  assetIndex: number;
  lo: number;
  hi: number;
}

export class TriggerIndex {
  /** 1 while the account's bands hold. */
  private readonly banded: Uint8Array;
  /** Moves on each time the account's bands are dropped; heap entries of older generations are garbage. */
  private readonly generation: Uint32Array;
  private readonly inPool: Uint8Array;
  /** Borrowers without a band (and stale entries, dropped at the next scan). */
  private pool: number[] = [];
  private seeded = false;
  /** Per asset: bands by lo, descending (key −lo), and by hi, ascending. */
  private readonly byLo: BandHeap[];
  private readonly byHi: BandHeap[];
  private readonly live = (id: number, gen: number): boolean => this.banded[id] === 1 && this.generation[id] === gen;

  constructor(maxAccounts: number, assetCount: number, private readonly pools: LendPools) {
    this.banded = new Uint8Array(maxAccounts + 1);
    this.generation = new Uint32Array(maxAccounts + 1);
    this.inPool = new Uint8Array(maxAccounts + 1);
    this.byLo = Array.from({ length: assetCount }, () => new BandHeap());
    this.byHi = Array.from({ length: assetCount }, () => new BandHeap());
  }

  /** The account's holdings, lends, borrows or orders changed: its bands no longer hold. */
  readonly touch = (accountId: number): void => {
    if (this.banded[accountId] === 1) {
      this.banded[accountId] = 0;
      this.generation[accountId]++;
    }
    if (this.inPool[accountId] === 0 && this.pools.borrowCountOf[accountId] > 0) {
      this.inPool[accountId] = 1;
      this.pool.push(accountId);
    }
  };

  /** Forgets every band (a snapshot was loaded into the state): every borrower joins the pool at the next move. */
  reset(): void {
    this.banded.fill(0);
    this.inPool.fill(0);
    this.pool = [];
    this.seeded = false;
    for (const heap of this.byLo) heap.clear();
    for (const heap of this.byHi) heap.clear();
  }

  /** Whether the account holds bands (tests). */
  isBanded(accountId: number): boolean {
    return this.banded[accountId] === 1;
  }

  /** Draws the account's bands (replacing any); no asset at all: healthy at any price. */
  band(accountId: number, bands: readonly AssetBand[]): void {
    const gen = ++this.generation[accountId];
    this.banded[accountId] = 1;
    for (const { assetIndex, lo, hi } of bands) {
      if (lo > 0) this.byLo[assetIndex].push(-lo, accountId, gen, this.live);
      if (hi < Number.MAX_SAFE_INTEGER) this.byHi[assetIndex].push(hi, accountId, gen, this.live);
    }
  }

  /** The account stays without a band (and in the pool while it borrows). */
  unband(accountId: number): void {
    this.touch(accountId);
  }

  /**
   * Drops the bands of every account whose band of `assetIndex` does not hold the mark
   * [markLo, markHi] (index units, rounded down and up; null: the asset has no mark).
   */
  release(assetIndex: number, mark: [number, number] | null): void {
    const byLo = this.byLo[assetIndex];
    while (byLo.size > 0 && (mark === null || -byLo.keys[0] > mark[0])) this.dropTop(byLo);
    const byHi = this.byHi[assetIndex];
    while (byHi.size > 0 && (mark === null || byHi.keys[0] < mark[1])) this.dropTop(byHi);
  }

  /** Whether any band of `assetIndex` is held. */
  hasBands(assetIndex: number): boolean {
    return this.byLo[assetIndex].size > 0 || this.byHi[assetIndex].size > 0;
  }

  /** The accounts holding a band of `assetIndex` that the mark [markLo, markHi] (null: none) has left; nothing is dropped. */
  leftBy(assetIndex: number, mark: [number, number] | null): number[] {
    const left: number[] = [];
    const byLo = this.byLo[assetIndex];
    for (let i = 0; i < byLo.size; i++) if (this.live(byLo.ids[i], byLo.gens[i]) && (mark === null || -byLo.keys[i] > mark[0])) left.push(byLo.ids[i]);
    const byHi = this.byHi[assetIndex];
    for (let i = 0; i < byHi.size; i++) if (this.live(byHi.ids[i], byHi.gens[i]) && (mark === null || byHi.keys[i] < mark[1])) left.push(byHi.ids[i]);
    return left;
  }

  private dropTop(heap: BandHeap): void {
    const id = heap.ids[0];
    const gen = heap.gens[0];
    heap.pop();
    if (this.live(id, gen)) this.touch(id);
  }

  /**
   * The borrowers without a band that `exposed` keeps, ascending; the pool sheds accounts that
   * hold a band again or borrow nothing. Call after `release` for every asset.
   */
  unbandedBorrowers(exposed: (accountId: number) => boolean): number[] {
    if (!this.seeded) {
      this.seeded = true;
      for (const accountId of this.pools.borrowersAscending()) this.touch(accountId);
    }
    const kept: number[] = [];
    const out: number[] = [];
    for (const accountId of this.pool) {
      if (this.banded[accountId] === 1 || this.pools.borrowCountOf[accountId] === 0) {
        this.inPool[accountId] = 0;
        continue;
      }
      kept.push(accountId);
      if (exposed(accountId)) out.push(accountId);
    }
    this.pool = kept;
    return out.sort((a, b) => a - b);
  }
}

/**
 * The account was re-checked and is healthy (summary.netEquity > Σ N·MMF): draws its bands, or
 * leaves it without (a perpetual, a band that cannot hold its own mark) (header).
 */
export function drawBands(s: EngineState, accountId: number, summary: MarginSummary): void {
  const index = s.trigger;
  const slack = summary.netEquityUnits - summary.margin.mmfUnits;
  if (summary.perp.lines.length > 0 || summary.unpriced || slack < 1n) return index.unband(accountId);
  const pools = s.pools;
  const quoteDecimals = pools.decimalsOf[pools.valuationIndex];
  const priced = summary.lines.filter((line) => line.mark !== null && line.mark.source !== MarkSource.Fixed
    && (line.borrowedUnits > 0n || pools.collateralOf[line.assetIndex] !== undefined));
  const share = priced.length === 0 ? 0n : (slack - 1n) / BigInt(priced.length);
  const bands: AssetBand[] = [];
  for (const line of priced) {
    const collateral = pools.collateralOf[line.assetIndex];
    const risk = {
      heldUnits: line.availableUnits + line.lockedUnits + line.lentUnits, borrowedUnits: line.borrowedUnits,
      assetDecimals: pools.decimalsOf[line.assetIndex], quoteDecimals, haircut: collateral?.haircut, mmf: collateral?.mmf,
    };
    const band = bandOf(risk, line.mark!.price, share);
    if (band === null) return index.unband(accountId);
    bands.push({ assetIndex: line.assetIndex, lo: band.lo, hi: band.hi });
  }
  index.band(accountId, bands);
}

/**
 * Before the borrowers exposed to a price move are re-checked: drops every band the current mark
 * of its asset has left (any asset: a mark may move without a SetIndexPrice of its own).
 */
export function releaseLeftBands(s: EngineState): void {
  const index = s.trigger;
  const pools = s.pools;
  const quoteDecimals = pools.decimalsOf[pools.valuationIndex];
  for (let assetIndex = 0; assetIndex < pools.assetCount; assetIndex++) {
    if (!index.hasBands(assetIndex)) continue;
    const mark = markOf(s, assetIndex);
    index.release(assetIndex, mark === null ? null : indexUnitsOf(mark.price, pools.decimalsOf[assetIndex], quoteDecimals));
  }
}

/**
 * The index's soundness, for the tests (a summary per banded account: too dear for the invariant
 * checker's every command): an account that holds bands, all of which hold the
 * current marks, is not liquidating and is healthy at those marks.
 */
export function validateTriggerIndex(s: EngineState): void {
  const index = s.trigger;
  const pools = s.pools;
  if (pools.valuationIndex < 0) return;
  const quoteDecimals = pools.decimalsOf[pools.valuationIndex];
  const left = new Set<number>();
  for (let assetIndex = 0; assetIndex < pools.assetCount; assetIndex++) {
    if (!index.hasBands(assetIndex)) continue;
    const mark = markOf(s, assetIndex);
    for (const id of index.leftBy(assetIndex, mark === null ? null : indexUnitsOf(mark.price, pools.decimalsOf[assetIndex], quoteDecimals))) left.add(id);
  }
  for (let accountId = 1; accountId <= s.accounts.count; accountId++) {
    if (!index.isBanded(accountId) || left.has(accountId)) continue;
    assert(!isLiquidatingFlag(s, accountId), `account ${accountId} holds bands while liquidating`);
    if (pools.borrowCountOf[accountId] === 0) continue;
    const summary = marginSummary(s, accountId);
    assert(!summary.unpriced && !liquidatable(summary.netEquityUnits, summary.margin), `account ${accountId} is past the line inside its bands`);
  }
}

function isLiquidatingFlag(s: EngineState, accountId: number): boolean {
  return (s.accountSettings.flags[accountId] & AccountSettingFlag.Liquidating) !== 0;
}
