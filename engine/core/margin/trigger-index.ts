// The liquidation trigger index: which accounts a price move can push over the liquidation line
// (venue mechanics §1.4, liquidating.ts), found without walking every borrower or position holder.
//
// Bands. When liquidating.ts re-checks an account and finds it healthy, its slack
// S = netEquity − Σ N·MMF (≥ 1 quote unit) is split evenly over the priced assets it holds or
// borrows and the perpetuals it has a position or open orders in, and each gets a band of its mark
// (trigger-band.ts) inside which that part of S cannot fall by more than its share. The parts add
// up (an asset's part moves with the asset's mark alone, a perpetual's with the perpetual's mark
// alone), so while every mark stays inside its band the account stays at S − (S − 1) ≥ 1 above the
// line: a re-check would find it healthy and change nothing. An unpriced account and a
// liquidating one get no band.
//
// Marks, not index prices. A band bounds the mark the margin summary values the asset or the
// perpetual at, whatever its source (mark.ts, perp/mark.ts: the index while fresh, else the book,
// else the stale index), so a mark that moves without a SetIndexPrice is caught at the next price
// move like any other.
//
// Keys. The heaps are kept per key: an asset's key is its index, a perpetual's is the asset count
// plus its ordinal (perp/positions.ts).
//
// What a price move re-checks (candidates): every account whose band of any key the current mark
// has left (taken from two heaps per key, by lo descending and by hi ascending), and every account
// at risk (it borrows or holds a position) without a band (the pool): the liquidating ones, the
// unpriced ones and those whose state changed since their band was drawn. liquidating.ts keeps
// those exposed to the move, exactly as the full walk would, and re-checks them in ascending
// account id; a re-check that flips an account (its orders cancelled can move a book mark) releases
// the bands again before the next one, so the records and the state are those of the full walk:
// an account left out is healthy at the marks it would be valued at, and its re-check would have
// been a no-op.
//
// Any change of what an account holds, lends or borrows, of its positions (size, cost, unsettled
// equity, fee debt) and any order it opens (exposure) drops its bands (touch): the ledger, the
// pools, the positions and the order pool call it. Dropping is O(1): the account's generation
// moves on and its heap entries become garbage, popped when they surface or swept when a heap
// doubles. A dropped account at risk joins the pool. Two moves keep the bands: realizing a
// position's PnL at mark (perp/realize.ts) and paying a claim (perp/settle.ts payClaims) move USDC
// between the account's balance, its claim or debt and its position's cost by amounts that cancel
// in net equity at every mark, and change no requirement; with USDC the valuation asset at full
// weight (quoteNeutral) each part of the margin shifts by a constant and their sum not at all, so
// every band still bounds its part as drawn. An hour's lend interest keeps them too: a holding of
// an asset with a fixed haircut weight that only grows raises its collateral at every mark and no
// requirement, so the margin at every mark can only rise. While such a move runs, the touches of
// its account are ignored (spared); whatever else follows it (a debt funded by a borrow, a
// conversion) touches as usual.
//
// Derived state: neither in the snapshot nor in the state hash. A fresh state (and so one loaded
// from a snapshot) starts with every account at risk in the pool and no band; the first move of
// each key re-checks its accounts and draws their bands.
//
// TRIGGER_SWITCH.fullWalk (for the differential tests and the benchmarks) goes back to walking
// every borrower or holder; the index stays maintained, so the switch may flip at any time.

import { AccountSettingFlag } from '../../bus/types.js';
import type { EngineState } from '../state.js';
import { assert } from '../assert.js';
import { FRACTION_ONE } from './fixed.js';
import { liquidatable } from './account.js';
import { MarkSource, markOf } from './mark.js';
import type { LendPools } from './pools.js';
import { bandOf, indexUnitsOf, perpBandOf } from './trigger-band.js';
import { marginSummary, type BandFigures, type PricedAssetLine } from './valuation.js';
import type { PerpLine } from '../perp/exposure.js';
import { perpMarkOf } from '../perp/mark.js';
import type { Positions } from '../perp/positions.js';

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

/** One band of an account: a key (an asset, or a perpetual: header) and its range, in index units. */
export interface AssetBand {
  key: number;
  lo: number;
  hi: number;
}

export class TriggerIndex {
  /** 1 while the account's bands hold. */
  private readonly banded: Uint8Array;
  /** Moves on each time the account's bands are dropped; heap entries of older generations are garbage. */
  private readonly generation: Uint32Array;
  private readonly inPool: Uint8Array;
  /** Accounts at risk without a band (and stale entries, dropped at the next scan). */
  private pool: number[] = [];
  private seeded = false;
  /** Per key: bands by lo, descending (key −lo), and by hi, ascending. */
  private readonly byLo: BandHeap[];
  private readonly byHi: BandHeap[];
  private readonly live = (id: number, gen: number): boolean => this.banded[id] === 1 && this.generation[id] === gen;
  /** The account whose touches are ignored while a move that cancels in its margin runs (0: none; header). */
  private spared = 0;
  /** Whether the valuation asset counts at full weight, so that USDC moved against a cost or a claim cancels (header). */
  private readonly quoteNeutral: boolean;
  /** By asset index: 1 when its haircut is a fixed weight, so that a growing holding of it only raises the margin (header). */
  private readonly fixedWeight: Uint8Array;

  constructor(maxAccounts: number, readonly keyCount: number, private readonly pools: LendPools, private readonly positions: Positions) {
    const quote = pools.valuationIndex >= 0 ? pools.collateralOf[pools.valuationIndex] : undefined;
    this.quoteNeutral = quote !== undefined && quote.haircut.kind === 'identity' && quote.haircut.weight === FRACTION_ONE;
    this.fixedWeight = Uint8Array.from(pools.collateralOf, (spec) => (spec?.haircut.kind === 'identity' ? 1 : 0));
    this.banded = new Uint8Array(maxAccounts + 1);
    this.generation = new Uint32Array(maxAccounts + 1);
    this.inPool = new Uint8Array(maxAccounts + 1);
    this.byLo = Array.from({ length: keyCount }, () => new BandHeap());
    this.byHi = Array.from({ length: keyCount }, () => new BandHeap());
  }

  private atRisk(accountId: number): boolean {
    return this.pools.borrowCountOf[accountId] > 0 || this.positions.positionCountOf[accountId] > 0;
  }

  /** The account's holdings, lends, borrows, positions or orders changed: its bands no longer hold. */
  readonly touch = (accountId: number): void => {
    if (accountId === this.spared) return;
    if (this.banded[accountId] === 1) {
      this.banded[accountId] = 0;
      this.generation[accountId]++;
    }
    if (this.inPool[accountId] === 0 && this.atRisk(accountId)) {
      this.inPool[accountId] = 1;
      this.pool.push(accountId);
    }
  };

  /**
   * From now until `endSpare`, ignores the touches of `accountId` while its USDC of asset
   * `quoteIndex` moves against its position's cost or claim (header): only when that asset is the
   * valuation asset at full weight.
   */
  spare(accountId: number, quoteIndex: number): void {
    if (this.quoteNeutral && quoteIndex === this.pools.valuationIndex) this.spared = accountId;
  }

  /** Likewise while the account's holding of `assetIndex` only grows (an hour's lend interest), when the asset's haircut is a fixed weight (header). */
  spareGrowth(accountId: number, assetIndex: number): void {
    if (this.fixedWeight[assetIndex] === 1) this.spared = accountId;
  }

  endSpare(): void {
    this.spared = 0;
  }

  /** Forgets every band (a snapshot was loaded into the state): every account at risk joins the pool at the next move. */
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

  /** Whether a price move would find the account: it holds bands, waits in the pool, or the pool is not seeded yet (tests). */
  covers(accountId: number): boolean {
    return !this.seeded || this.banded[accountId] === 1 || this.inPool[accountId] === 1;
  }

  /** Draws the account's bands (replacing any); no key at all: healthy at any price. */
  band(accountId: number, bands: readonly AssetBand[]): void {
    const gen = ++this.generation[accountId];
    this.banded[accountId] = 1;
    for (const { key, lo, hi } of bands) {
      if (lo > 0) this.byLo[key].push(-lo, accountId, gen, this.live);
      if (hi < Number.MAX_SAFE_INTEGER) this.byHi[key].push(hi, accountId, gen, this.live);
    }
  }

  /** The account stays without a band (and in the pool while at risk). */
  unband(accountId: number): void {
    this.touch(accountId);
  }

  /**
   * Drops the bands of every account whose band of `key` does not hold the mark [markLo, markHi]
   * (index units, rounded down and up; null: no mark).
   */
  release(key: number, mark: [number, number] | null): void {
    const byLo = this.byLo[key];
    while (byLo.size > 0 && (mark === null || -byLo.keys[0] > mark[0])) this.dropTop(byLo);
    const byHi = this.byHi[key];
    while (byHi.size > 0 && (mark === null || byHi.keys[0] < mark[1])) this.dropTop(byHi);
  }

  /** Whether any band of `key` is held. */
  hasBands(key: number): boolean {
    return this.byLo[key].size > 0 || this.byHi[key].size > 0;
  }

  /** The accounts holding a band of `key` that the mark [markLo, markHi] (null: none) has left; nothing is dropped. */
  leftBy(key: number, mark: [number, number] | null): number[] {
    const left: number[] = [];
    const byLo = this.byLo[key];
    for (let i = 0; i < byLo.size; i++) if (this.live(byLo.ids[i], byLo.gens[i]) && (mark === null || -byLo.keys[i] > mark[0])) left.push(byLo.ids[i]);
    const byHi = this.byHi[key];
    for (let i = 0; i < byHi.size; i++) if (this.live(byHi.ids[i], byHi.gens[i]) && (mark === null || byHi.keys[i] < mark[1])) left.push(byHi.ids[i]);
    return left;
  }

  private dropTop(heap: BandHeap): void {
    const id = heap.ids[0];
    const gen = heap.gens[0];
    heap.pop();
    if (this.live(id, gen)) this.touch(id);
  }

  /** How many entries the pool holds: accounts that join it later are found by `joinedSince`. */
  get poolLength(): number {
    return this.pool.length;
  }

  /** The accounts that joined the pool since it held `length` entries and `exposed` keeps. */
  joinedSince(length: number, exposed: (accountId: number) => boolean): number[] {
    const out: number[] = [];
    for (let i = length; i < this.pool.length; i++) if (this.banded[this.pool[i]] === 0 && exposed(this.pool[i])) out.push(this.pool[i]);
    return out;
  }

  /**
   * The accounts at risk without a band that `exposed` keeps, ascending; the pool sheds accounts
   * that hold a band again or are at risk no more. Call after `release` for every key.
   */
  unbandedAccounts(exposed: (accountId: number) => boolean): number[] {
    if (!this.seeded) this.seed();
    const kept: number[] = [];
    const out: number[] = [];
    for (const accountId of this.pool) {
      if (this.banded[accountId] === 1 || !this.atRisk(accountId)) {
        this.inPool[accountId] = 0;
        continue;
      }
      kept.push(accountId);
      if (exposed(accountId)) out.push(accountId);
    }
    this.pool = kept;
    return out.sort((a, b) => a - b);
  }

  /** The first move: every borrower and every position holder joins the pool. */
  private seed(): void {
    this.seeded = true;
    for (const accountId of this.pools.borrowersAscending()) this.touch(accountId);
    for (const marketIndex of this.positions.marketOf) for (const accountId of this.positions.holdersOf(marketIndex)) this.touch(accountId);
  }
}

/** The key of the perpetual of `marketIndex` (header). */
export function perpKey(s: EngineState, marketIndex: number): number {
  return s.pools.assetCount + s.positions.ordinalOf[marketIndex];
}

/** The bands of an account's priced assets, each allowed to lose `share`; null: one cannot hold its own mark. */
function assetBands(s: EngineState, share: bigint, priced: readonly PricedAssetLine[]): AssetBand[] | null {
  const pools = s.pools;
  const quoteDecimals = pools.decimalsOf[pools.valuationIndex];
  const bands: AssetBand[] = [];
  for (const line of priced) {
    const collateral = pools.collateralOf[line.assetIndex];
    const risk = {
      heldUnits: line.heldUnits, borrowedUnits: line.borrowedUnits,
      assetDecimals: pools.decimalsOf[line.assetIndex], quoteDecimals, haircut: collateral?.haircut, mmf: collateral?.mmf,
    };
    const band = bandOf(risk, line.mark.price, share);
    if (band === null) return null;
    bands.push({ key: line.assetIndex, lo: band.lo, hi: band.hi });
  }
  return bands;
}

/** The bands of an account's perpetuals with a size or an exposure, each allowed to lose `share`; null as above. */
function perpBands(s: EngineState, share: bigint, lines: readonly PerpLine[]): AssetBand[] | null {
  const bands: AssetBand[] = [];
  for (const line of lines) {
    const market = s.catalog.markets[line.marketIndex];
    const unitsPerLot = BigInt(market.baseUnitsPerLot);
    const risk = {
      sizeUnits: BigInt(line.lots) * unitsPerLot, exposureUnits: BigInt(line.exposureLots) * unitsPerLot,
      baseDecimals: s.pools.decimalsOf[s.catalog.baseIndexOf[line.marketIndex]],
      quoteDecimals: s.pools.decimalsOf[s.catalog.quoteIndexOf[line.marketIndex]], mmf: market.perp!.mmf,
    };
    const band = perpBandOf(risk, line.mark!.priceE9, share);
    if (band === null) return null;
    bands.push({ key: perpKey(s, line.marketIndex), lo: band.lo, hi: band.hi });
  }
  return bands;
}

/**
 * The account was re-checked and is healthy (netEquity > Σ N·MMF, valuation.ts bandFigures): draws
 * its bands, or leaves it without (unpriced, a band that cannot hold its own mark) (header).
 */
export function drawBands(s: EngineState, accountId: number, figures: BandFigures): void {
  const index = s.trigger;
  const slack = figures.netEquityUnits - figures.mmfUnits;
  if (figures.unpriced || slack < 1n) return index.unband(accountId);
  const pools = s.pools;
  const priced = figures.assetLines.filter((line) => line.mark.source !== MarkSource.Fixed
    && (line.borrowedUnits > 0n || pools.collateralOf[line.assetIndex] !== undefined));
  const perps = figures.perpLines.filter((line) => line.mark !== null && (line.lots !== 0 || line.exposureLots !== 0));
  const parts = priced.length + perps.length;
  const share = parts === 0 ? 0n : (slack - 1n) / BigInt(parts);
  const assets = assetBands(s, share, priced);
  const positions = assets === null ? null : perpBands(s, share, perps);
  if (assets === null || positions === null) return index.unband(accountId);
  index.band(accountId, [...assets, ...positions]);
}

/** Each key's current mark in index units, rounded down and up (null: none), for the keys holding bands. */
function markUnitsOf(s: EngineState, key: number): [number, number] | null {
  const pools = s.pools;
  if (key < pools.assetCount) {
    const mark = markOf(s, key);
    return mark === null ? null : indexUnitsOf(mark.price, pools.decimalsOf[key], pools.decimalsOf[pools.valuationIndex]);
  }
  const mark = perpMarkOf(s, s.positions.marketOf[key - pools.assetCount]);
  return mark === null ? null : [mark.priceE9, mark.priceE9];
}

/**
 * Before the accounts exposed to a price move are re-checked: drops every band the current mark
 * of its key has left (any key: a mark may move without a SetIndexPrice of its own).
 */
export function releaseLeftBands(s: EngineState): void {
  const index = s.trigger;
  for (let key = 0; key < index.keyCount; key++) {
    if (index.hasBands(key)) index.release(key, markUnitsOf(s, key));
  }
}

/**
 * The index's soundness, for the tests (a summary per banded account: too dear for the invariant
 * checker's every command): every account at risk holds bands or waits in the pool, and an
 * account that holds bands, all of which hold the current marks, is not liquidating and is
 * healthy at those marks.
 */
export function validateTriggerIndex(s: EngineState): void {
  const index = s.trigger;
  const pools = s.pools;
  if (pools.valuationIndex < 0) return;
  const left = new Set<number>();
  for (let key = 0; key < index.keyCount; key++) {
    if (!index.hasBands(key)) continue;
    for (const id of index.leftBy(key, markUnitsOf(s, key))) left.add(id);
  }
  for (let accountId = 1; accountId <= s.accounts.count; accountId++) {
    const atRisk = pools.borrowCountOf[accountId] > 0 || s.positions.positionCountOf[accountId] > 0;
    assert(!atRisk || index.covers(accountId), `account ${accountId} is at risk, without bands and not in the pool`);
    if (!index.isBanded(accountId) || left.has(accountId)) continue;
    assert(!isLiquidatingFlag(s, accountId), `account ${accountId} holds bands while liquidating`);
    if (pools.borrowCountOf[accountId] === 0 && s.positions.positionCountOf[accountId] === 0) continue;
    const summary = marginSummary(s, accountId);
    assert(!summary.unpriced && !liquidatable(summary.netEquityUnits, summary.margin), `account ${accountId} is past the line inside its bands`);
  }
}

function isLiquidatingFlag(s: EngineState, accountId: number): boolean {
  return (s.accountSettings.flags[accountId] & AccountSettingFlag.Liquidating) !== 0;
}
