// The guarded reference price of a banded market: a price that trades cannot move cheaply.
//
// The last trade price is whatever two accounts agree to trade at, so anything valued by it can
// be gamed: two colluding accounts walk it up band step by band step with minimum-size wash
// trades (×1.25 per trade under the default band: ×100 in 21 trades, seconds of work). The
// guarded reference follows trades too, but slowly: the market's first trade sets it, and after
// that a trade moves it toward the trade's price by at most stepBps basis points of itself (at
// least one tick) and only when intervalUs of engine time have passed since it last moved. Its
// speed is therefore bounded by engine time, not by how many trades anyone makes: moving it by a
// factor F takes at least log(F) / log(1 + stepBps / 10000) intervals (with the defaults, 1 % per
// minute: ×2 takes 70 minutes, ×100 almost 8 hours) of trading at the manipulated price, in
// public, against anyone willing to take the other side. Idle time gives no credit: a long pause
// still allows one step, so waiting does not buy a jump.
//
// What uses it: dust conversion values dust at min(reference, last trade price) (capital.ts), and
// a market order's sweep stops at the market's band around it (matching.ts). The limit-order band
// stays around the last trade price (place.ts header).
//
// Integers only: reference × stepBps ≤ maxPriceTicks × 10000, which the catalog proved safe
// (maxPriceTicks × maxMultiplierBps is, and maxMultiplierBps ≥ 10000). No clock: engine time is
// the trade's command time.

import { Side, type MarketSpec } from '../../bus/types.js';
import { assert } from '../assert.js';
import { expectSnapshot, type SnapshotReader, type SnapshotWriter, type StateDigest } from '../parts.js';
import type { Book } from './book.js';
import { BPS_PER_UNIT, floorDiv } from '../units.js';

/** Default step: 1 % of the reference per interval. */
export const DEFAULT_REFERENCE_STEP_BPS = 100;
/** Default interval: one minute of engine time. */
export const DEFAULT_REFERENCE_INTERVAL_US = 60_000_000;

/** Moves the book's guarded reference for a trade at `priceTicks` at engine time `timeUs`. */
export function followTrade(book: Book, priceTicks: number, timeUs: number, stepBps: number, intervalUs: number): void {
  const current = book.guardedReferenceTicks;
  if (current === 0) {
    book.guardedReferenceTicks = priceTicks;
    book.guardedReferenceTimeUs = timeUs;
    return;
  }
  if (timeUs - book.guardedReferenceTimeUs < intervalUs) return;
  const step = Math.max(1, floorDiv(current * stepBps, BPS_PER_UNIT));
  book.guardedReferenceTicks = priceTicks > current ? Math.min(priceTicks, current + step) : Math.max(priceTicks, current - step);
  book.guardedReferenceTimeUs = timeUs;
}

/**
 * True when a level at `levelPriceTicks` lies beyond the band of `referenceTicks` for a market
 * order on `takerSide`: a buy may not pay above reference × maxMultiplierBps / 10000, a sell may
 * not receive below reference × minMultiplierBps / 10000. Cheaper asks for a buy (richer bids
 * for a sell) are never beyond. An unbanded market or a zero reference bands nothing.
 */
export function beyondSweepBand(market: MarketSpec, referenceTicks: number, takerSide: Side, levelPriceTicks: number): boolean {
  if (market.maxMultiplierBps === undefined || market.minMultiplierBps === undefined || referenceTicks === 0) return false;
  const scaled = levelPriceTicks * BPS_PER_UNIT;
  return takerSide === Side.Bid ? scaled > referenceTicks * market.maxMultiplierBps : scaled < referenceTicks * market.minMultiplierBps;
}

/** Snapshot of a market's reference prices: last trade price, guarded reference and its time. */
export function exportReferencesTo(book: Book, w: SnapshotWriter): void {
  w.number(book.bandReferenceTicks);
  w.number(book.guardedReferenceTicks);
  w.number(book.guardedReferenceTimeUs);
}

/**
 * The reference prices of a snapshot. A snapshot without the guarded reference (`withGuard`
 * false: format 2) starts a banded market's guarded reference at its last trade price as of the
 * snapshot's engine time `lastTimeUs`; followTrade then moves it as usual.
 */
export function importReferencesFrom(book: Book, r: SnapshotReader, market: MarketSpec, withGuard: boolean, lastTimeUs: number): void {
  book.bandReferenceTicks = r.number();
  const banded = market.maxMultiplierBps !== undefined;
  if (!withGuard) {
    book.guardedReferenceTicks = banded ? book.bandReferenceTicks : 0;
    book.guardedReferenceTimeUs = banded && book.bandReferenceTicks > 0 ? lastTimeUs : 0;
    return;
  }
  book.guardedReferenceTicks = r.number();
  book.guardedReferenceTimeUs = r.number();
  const inRange = (ticks: number) => ticks === 0 || (ticks >= market.minPriceTicks && ticks <= market.maxPriceTicks);
  expectSnapshot(inRange(book.bandReferenceTicks) && inRange(book.guardedReferenceTicks), 'a reference price is outside its market\'s price range');
  expectSnapshot((book.guardedReferenceTicks === 0) === (book.bandReferenceTicks === 0), 'a market has one reference price without the other');
  expectSnapshot(book.guardedReferenceTimeUs >= 0 && book.guardedReferenceTimeUs <= lastTimeUs, 'a guarded reference moved after the snapshot\'s time');
}

/**
 * State hash of a banded market's reference prices (an unbanded one has nothing to hash).
 * `withGuard` false leaves the guarded reference out: the hash as engines before it computed it.
 */
export function hashReferencesInto(book: Book, d: StateDigest, market: MarketSpec, withGuard: boolean): void {
  if (market.maxMultiplierBps === undefined) return;
  d.number(book.bandReferenceTicks);
  if (!withGuard) return;
  d.number(book.guardedReferenceTicks);
  d.number(book.guardedReferenceTimeUs);
}

/**
 * A banded market has both reference prices or neither (before its first trade), each within its
 * price range, and its guarded reference moved no later than the last command; an unbanded
 * market keeps none.
 */
export function validateReferences(book: Book, market: MarketSpec, lastTimeUs: number): void {
  const guarded = book.guardedReferenceTicks;
  if (market.maxMultiplierBps === undefined) {
    assert(book.bandReferenceTicks === 0 && guarded === 0 && book.guardedReferenceTimeUs === 0, 'an unbanded market keeps a reference price');
    return;
  }
  assert((guarded === 0) === (book.bandReferenceTicks === 0), 'a market has one reference price without the other');
  assert(guarded === 0 || (guarded >= market.minPriceTicks && guarded <= market.maxPriceTicks), 'the guarded reference is outside the price range');
  assert(guarded !== 0 || book.guardedReferenceTimeUs === 0, 'a guarded reference time without a reference');
  assert(book.guardedReferenceTimeUs <= lastTimeUs, 'the guarded reference moved after the last command');
}
