// Index prices of the margin room: what each asset is worth in USDC, as the engine last heard it.
//
// Collateral, borrows and (later) perpetuals are valued at mark price, and for a spot asset mark
// is its index (venue mechanics §1.1, §3.2). An index is an outside price: it enters the engine
// only as a journaled SetIndexPrice command (one asset per command), so replay sees exactly the
// prices the engine saw, at the same engine times. Its sources: the operator (CLI, admin
// endpoint), a feed process, or the embedded default that front thread 0 derives from the asset's
// own USDC book (src/front/index-default.ts); each update records which.
//
// Unit: USDC per one whole unit of the asset, as an integer count of 10^-9 USDC (priceE9): SOL at
// 150.25 is 150_250_000_000. The unit is the venue's currency, not a market's tick, so an asset
// without a USDC market can have an index, and a feed's decimals need no tick grid. The largest
// price a safe integer holds is about 9 million USDC per unit.
//
// USDC itself (the asset of that symbol) is fixed at 1 (INDEX_PRICE_ONE): it cannot be set and is
// never stale. Any other asset starts without a price (0, source None) and is stale until set.
//
// Staleness is a rule of engine time only: an index updated at engine time u is stale at t when
// t − u exceeds the configured maximum age (indexMaxAgeUs). Margin values an asset at its index
// while fresh (mark.ts) and refuses new borrowing resting on anything else (valuation.ts); a query
// shows the flag. No timer is needed, since nothing happens
// when a price goes stale: it is only read as stale.
//
// Update bounds (venue mechanics §3.2, EngineConfig.indexUpdateBounds, per asset): once an asset
// has a price, each update is capped at prev × maxPriceUpdateMultiplier (rounded down) and
// floored at prev × minPriceUpdateMultiplier (rounded up), multipliers at 10^-12 with max ≥ 1 and
// 0 < min ≤ 1, so the bounded price stays positive and safe. The price set (IndexPrice record,
// the result's value) is the bounded one; nothing else marks that it was cut. An asset without
// bounds (the default) takes every update as sent. The first price of an asset is never bounded.
//
// State: price, engine time of the last update and its source per asset index. It enters the
// snapshot from format 5 on and the state hash only while some asset has a price, so every state
// reachable before this command existed keeps its hash and its snapshot.

import {
  FRONT_ID_NONE, HeaderFlag, IndexPriceSource, ResultCode, type CommandHeader, type IndexUpdateBounds, type SetIndexPriceCommand,
} from '../../bus/types.js';
import { assert, isUnsignedSafe } from '../assert.js';
import { expectSnapshot, type SnapshotReader, type SnapshotWriter, type StateDigest } from '../parts.js';
import type { EngineState } from '../state.js';
import { ceilDiv, FRACTION_ONE } from './fixed.js';
import { reviewBorrowersOf, reviewUnderlyingHolders } from './liquidating.js';

/** An index price: USDC per whole unit of an asset, in 10^-9 USDC. */
export type IndexPriceE9 = number & { readonly __unit: 'index_price_e9' };

/** Decimals of an index price: priceE9 = USDC per whole unit × 10^INDEX_PRICE_DECIMALS. */
export const INDEX_PRICE_DECIMALS = 9;
/** 1 USDC per unit: the fixed index of USDC. */
export const INDEX_PRICE_ONE = 1_000_000_000 as IndexPriceE9;
/** The asset whose index is fixed at 1: the venue's quote and settlement currency. */
export const INDEX_FIXED_SYMBOL = 'USDC';
/** Default maximum age of an index: 30 s of engine time (the venue refreshes its index every few seconds). */
export const DEFAULT_INDEX_MAX_AGE_US = 30_000_000;

/** Tags the index part of the state hash (after the optional system state word). */
const HASH_TAG = 0x494e4458; // 'INDX'

/** A source a SetIndexPrice may name (Fixed and None are the engine's own). */
function isSettableSource(value: number): boolean {
  return value === IndexPriceSource.Operator || value === IndexPriceSource.Feed || value === IndexPriceSource.Default;
}

export class IndexPrices {
  /** priceE9 by asset index; 0: never set. */
  readonly priceE9: Float64Array;
  /** Engine time of the last update, by asset index (0 while never set). */
  readonly updatedUs: Float64Array;
  /** IndexPriceSource of the last update, by asset index (None while never set). */
  readonly source: Uint8Array;
  /** Number of assets with a price. */
  setCount = 0;
  /** Per asset index, the update multipliers at 10^-12 (0: that side is not bounded). */
  readonly maxUpdateMultiplier: bigint[];
  readonly minUpdateMultiplier: bigint[];

  /** `fixedIndex`: the asset index of USDC (fixed at 1), or -1 when no asset has that symbol. */
  constructor(readonly assetCount: number, readonly fixedIndex: number, readonly maxAgeUs: number) {
    assert(Number.isSafeInteger(maxAgeUs) && maxAgeUs > 0, 'index maximum age must be a positive integer');
    this.priceE9 = new Float64Array(assetCount);
    this.updatedUs = new Float64Array(assetCount);
    this.source = new Uint8Array(assetCount);
    this.maxUpdateMultiplier = new Array<bigint>(assetCount).fill(0n);
    this.minUpdateMultiplier = new Array<bigint>(assetCount).fill(0n);
  }

  /** The configured update bounds (EngineConfig.indexUpdateBounds), checked. */
  setUpdateBounds(bounds: readonly IndexUpdateBounds[], assetIndexOf: (assetId: number) => number): void {
    for (const bound of bounds) {
      const assetIndex = assetIndexOf(bound.assetId);
      assert(assetIndex >= 0 && assetIndex !== this.fixedIndex, `index update bounds of asset ${bound.assetId}: unknown or fixed asset`);
      const max = bound.maxPriceUpdateMultiplier ?? 0n;
      const min = bound.minPriceUpdateMultiplier ?? 0n;
      assert(max === 0n || max >= FRACTION_ONE, 'maxPriceUpdateMultiplier must be at least 1');
      assert(min === 0n || (min > 0n && min <= FRACTION_ONE), 'minPriceUpdateMultiplier must be above 0 and at most 1');
      this.maxUpdateMultiplier[assetIndex] = max;
      this.minUpdateMultiplier[assetIndex] = min;
    }
  }

  /**
   * The price an update to `priceE9` sets (header): capped at prev × max (rounded down) and
   * floored at prev × min (rounded up) where configured and the asset has a previous price.
   */
  bounded(assetIndex: number, priceE9: number): number {
    if (this.source[assetIndex] === IndexPriceSource.None) return priceE9;
    const previous = BigInt(this.priceE9[assetIndex]);
    let price = BigInt(priceE9);
    const max = this.maxUpdateMultiplier[assetIndex];
    const min = this.minUpdateMultiplier[assetIndex];
    if (max > 0n && price > (previous * max) / FRACTION_ONE) price = (previous * max) / FRACTION_ONE;
    if (min > 0n && price < ceilDiv(previous * min, FRACTION_ONE)) price = ceilDiv(previous * min, FRACTION_ONE);
    return Number(price);
  }

  /** The index of an asset index: INDEX_PRICE_ONE for USDC, 0 when never set. */
  priceOf(assetIndex: number): IndexPriceE9 {
    return (assetIndex === this.fixedIndex ? INDEX_PRICE_ONE : this.priceE9[assetIndex]) as IndexPriceE9;
  }

  sourceOf(assetIndex: number): IndexPriceSource {
    return assetIndex === this.fixedIndex ? IndexPriceSource.Fixed : (this.source[assetIndex] as IndexPriceSource);
  }

  /** True when the asset has no price, or its last update is more than maxAgeUs before `nowUs`. */
  isStale(assetIndex: number, nowUs: number): boolean {
    if (assetIndex === this.fixedIndex) return false;
    return this.source[assetIndex] === IndexPriceSource.None || nowUs - this.updatedUs[assetIndex] > this.maxAgeUs;
  }

  set(assetIndex: number, priceE9: IndexPriceE9, timeUs: number, source: IndexPriceSource): void {
    assert(assetIndex !== this.fixedIndex && priceE9 > 0 && isSettableSource(source), 'index price set out of its rules');
    if (this.source[assetIndex] === IndexPriceSource.None) this.setCount++;
    this.priceE9[assetIndex] = priceE9;
    this.updatedUs[assetIndex] = timeUs;
    this.source[assetIndex] = source;
  }

  /** Snapshot part (format 5 on): count, then per priced asset: index, price, time, source. */
  exportTo(w: SnapshotWriter): void {
    w.number(this.setCount);
    for (let i = 0; i < this.assetCount; i++) {
      if (this.source[i] === IndexPriceSource.None) continue;
      w.number(i);
      w.number(this.priceE9[i]);
      w.number(this.updatedUs[i]);
      w.word(this.source[i]);
    }
  }

  /** Reads the part (`hasPart`: format 5 on; older files hold none, and start without prices). */
  importFrom(r: SnapshotReader, hasPart: boolean, lastTimeUs: number): void {
    const count = hasPart ? r.number() : 0;
    expectSnapshot(count >= 0 && count <= this.assetCount, 'index price count out of range');
    let previous = -1;
    for (let n = 0; n < count; n++) {
      const i = r.number();
      const price = r.number();
      const timeUs = r.number();
      const source = r.word();
      expectSnapshot(i > previous && i < this.assetCount && i !== this.fixedIndex, 'index price of an unknown, repeated or fixed asset');
      expectSnapshot(price > 0 && timeUs >= 0 && timeUs <= lastTimeUs && isSettableSource(source), 'index price out of range');
      this.set(i, price as IndexPriceE9, timeUs, source as IndexPriceSource);
      previous = i;
    }
  }

  /** State hash part: nothing while no asset has a price (earlier states keep their hash). */
  hashInto(d: StateDigest): void {
    if (this.setCount === 0) return;
    d.number(HASH_TAG);
    d.number(this.setCount);
    for (let i = 0; i < this.assetCount; i++) {
      if (this.source[i] === IndexPriceSource.None) continue;
      d.number(i);
      d.number(this.priceE9[i]);
      d.number(this.updatedUs[i]);
      d.number(this.source[i]);
    }
  }

  /** Prices positive and safe where set, zero where not; times not after `lastTimeUs`; the count right. */
  validate(lastTimeUs: number): void {
    let count = 0;
    for (let i = 0; i < this.assetCount; i++) {
      if (this.source[i] === IndexPriceSource.None) {
        assert(this.priceE9[i] === 0 && this.updatedUs[i] === 0, 'an asset without an index has a price or a time');
        continue;
      }
      count++;
      assert(i !== this.fixedIndex && isSettableSource(this.source[i]), 'the fixed asset was set, or a source is unknown');
      assert(isUnsignedSafe(this.priceE9[i]) && this.priceE9[i] > 0, 'an index price is not a positive safe integer');
      assert(isUnsignedSafe(this.updatedUs[i]) && this.updatedUs[i] <= lastTimeUs, 'an index price was updated after the last command');
    }
    assert(count === this.setCount, 'index price count is off');
  }
}

/**
 * Whether the index of `assetId` is stale at engine time `nowUs` (no price yet, or older than the
 * configured maximum age); an unknown asset counts as stale. USDC never is. New borrowing is
 * refused against a stale index.
 */
export function isIndexStale(s: EngineState, assetId: number, nowUs: number): boolean {
  const assetIndex = s.catalog.assetIndex(assetId);
  return assetIndex < 0 || s.indexPrices.isStale(assetIndex, nowUs);
}

/** The index of `assetId` (0 when it has none, or the asset is unknown); USDC is INDEX_PRICE_ONE. */
export function indexPriceOf(s: EngineState, assetId: number): IndexPriceE9 {
  const assetIndex = s.catalog.assetIndex(assetId);
  return (assetIndex < 0 ? 0 : s.indexPrices.priceOf(assetIndex)) as IndexPriceE9;
}

/**
 * SetIndexPrice: the price, within the asset's update bounds (header), an IndexPrice event for
 * every front, the liquidating state of the borrowers of or against the asset re-checked, then
 * of the holders of a position in a perpetual on it (liquidating.ts; an event per flip), then the result (value: the price set, after the bounds).
 */
export function setIndexPrice(s: EngineState, cmd: SetIndexPriceCommand): void {
  const assetIndex = s.catalog.assetIndex(cmd.assetId);
  if (assetIndex < 0) return s.out.result(ResultCode.UnknownAsset, 0, cmd.frontId, cmd.requestId);
  if (assetIndex === s.indexPrices.fixedIndex) return s.out.result(ResultCode.IndexPriceFixed, 0, cmd.frontId, cmd.requestId);
  if (!(Number.isSafeInteger(cmd.priceE9) && cmd.priceE9 > 0)) return s.out.result(ResultCode.IndexPriceNotPositive, 0, cmd.frontId, cmd.requestId);
  if (!isSettableSource(cmd.source)) return s.out.result(ResultCode.InvalidIndexPriceSource, 0, cmd.frontId, cmd.requestId);
  const priceE9 = s.indexPrices.bounded(assetIndex, cmd.priceE9);
  s.indexPrices.set(assetIndex, priceE9 as IndexPriceE9, s.lastTimeUs, cmd.source);
  writeIndexPrice(s, assetIndex, s.lastTimeUs, FRONT_ID_NONE, 0, 0);
  reviewBorrowersOf(s, assetIndex);
  reviewUnderlyingHolders(s, assetIndex);
  s.out.result(ResultCode.Ok, priceE9, cmd.frontId, cmd.requestId);
}

/**
 * QueryIndexPrices: one IndexPrice row per configured asset, stale flags at the query's own engine
 * time (the time its records carry); result value = rows.
 */
export function queryIndexPrices(s: EngineState, cmd: CommandHeader): void {
  const nowUs = s.out.applyTimeUs;
  for (let assetIndex = 0; assetIndex < s.catalog.assetCount; assetIndex++) {
    writeIndexPrice(s, assetIndex, nowUs, cmd.frontId, cmd.requestId, 0);
  }
  s.out.result(ResultCode.Ok, s.catalog.assetCount, cmd.frontId, cmd.requestId);
}

function writeIndexPrice(s: EngineState, assetIndex: number, nowUs: number, frontId: number, requestId: number, flags: number): void {
  const prices = s.indexPrices;
  const fixed = assetIndex === prices.fixedIndex;
  assert(flags === 0 || flags === HeaderFlag.Last, 'index price record flags');
  s.out.indexPrice(s.catalog.assetIdOf[assetIndex], prices.priceOf(assetIndex), fixed ? 0 : prices.updatedUs[assetIndex],
    prices.sourceOf(assetIndex), prices.isStale(assetIndex, nowUs), frontId, requestId, flags);
}
