// The mark price the margin family values an asset at, in the valuation asset (USDC).
//
// For a spot asset the venue's mark is its index (venue mechanics §1.1, §3.2), so the source of a
// mark, in order:
//   1. Fixed   the valuation asset itself is worth 1;
//   2. Index   the asset's index price (index-prices.ts) while it is fresh;
//   3. Book    otherwise the guarded reference price (book/reference.ts) of the asset's first
//              market quoted in the valuation asset: the engine's own price that trades cannot
//              move cheaply (never the last trade), so margin goes on being valued when a feed
//              pauses;
//   4. Stale   otherwise the asset's last index price, however old: an account keeps being valued
//              at the last outside price rather than at nothing;
// and none when the asset has neither (then its holdings count for nothing and a borrow of it
// cannot be valued). New borrowing may rest on a fresh index only (valuation.ts): a mark of
// source Book or Stale values the account, but never lets it borrow more.
//
// An index is USDC per whole unit × 10^9 (priceE9); as a UnitPrice it is priceE9 × 10^quoteDecimals
// quote units per 10^9 × 10^assetDecimals units of the asset, exact. bookMarkOf is the price the
// borrow/lend records carry in ticks of the market (mark_ticks, market_id).

import { assert } from '../assert.js';
import type { EngineState } from '../state.js';
import type { UnitPrice } from './collateral.js';
import { pow10 } from './fixed.js';
import { INDEX_PRICE_DECIMALS } from './index-prices.js';

/** The market id of a mark without a market (the valuation asset itself, or no mark). */
export const NO_MARK_MARKET = 0xffff;

/** Where a mark price comes from (the header's order); the numbers are CollateralRecord.mark_source. */
export const enum MarkSource {
  None = 0,
  Fixed = 1,
  Index = 2,
  Book = 3,
  Stale = 4,
}

export interface Mark {
  price: UnitPrice;
  source: MarkSource;
  /** The index price the mark is (sources Index and Stale; 10^9 for Fixed), else 0. */
  priceE9: number;
  /** The market of the book price (source Book; NO_MARK_MARKET otherwise) and its ticks. */
  marketId: number;
  ticks: number;
}

const ONE_TO_ONE: Mark = { price: { quoteUnits: 1n, baseUnits: 1n }, source: MarkSource.Fixed, priceE9: 1_000_000_000, marketId: NO_MARK_MARKET, ticks: 0 };

/** The guarded reference of the asset's first market quoted in the valuation asset, or null (USDC: 1). */
export function bookMarkOf(s: EngineState, assetIndex: number): Mark | null {
  const valuationIndex = s.pools.valuationIndex;
  if (valuationIndex < 0) return null;
  if (assetIndex === valuationIndex) return ONE_TO_ONE;
  for (let m = 0; m < s.catalog.marketCount; m++) {
    if (!s.catalog.isSpot(m) || s.catalog.baseIndexOf[m] !== assetIndex || s.catalog.quoteIndexOf[m] !== valuationIndex) continue;
    const market = s.catalog.markets[m];
    const ticks = market.maxMultiplierBps === undefined ? 0 : s.books[m].guardedReferenceTicks;
    if (ticks <= 0) return null;
    const price = { quoteUnits: BigInt(ticks) * BigInt(market.quoteUnitsPerTickLot), baseUnits: BigInt(market.baseUnitsPerLot) };
    return { price, source: MarkSource.Book, priceE9: 0, marketId: market.marketId, ticks };
  }
  return null;
}

export function indexMark(s: EngineState, assetIndex: number, source: MarkSource): Mark {
  const priceE9 = s.indexPrices.priceOf(assetIndex);
  assert(priceE9 > 0, 'an index mark without an index price');
  const quoteDecimals = s.pools.decimalsOf[s.pools.valuationIndex];
  const price = {
    quoteUnits: BigInt(priceE9) * pow10(quoteDecimals),
    baseUnits: pow10(INDEX_PRICE_DECIMALS) * pow10(s.pools.decimalsOf[assetIndex]),
  };
  return { price, source, priceE9, marketId: NO_MARK_MARKET, ticks: 0 };
}

/** The mark price of the asset at `assetIndex` at engine time `nowUs` (header order), or null when it has none. */
export function markOf(s: EngineState, assetIndex: number, nowUs = s.lastTimeUs): Mark | null {
  const valuationIndex = s.pools.valuationIndex;
  if (valuationIndex < 0) return null;
  if (assetIndex === valuationIndex) return ONE_TO_ONE;
  if (!s.indexPrices.isStale(assetIndex, nowUs)) return indexMark(s, assetIndex, MarkSource.Index);
  const book = bookMarkOf(s, assetIndex);
  if (book !== null) return book;
  return s.indexPrices.priceOf(assetIndex) > 0 ? indexMark(s, assetIndex, MarkSource.Stale) : null;
}
