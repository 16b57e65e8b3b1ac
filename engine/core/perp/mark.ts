// The mark price of a perpetual, in its quote asset (USDC) per base unit of its underlying: the one
// function every perpetual rule asks (valuation, admission, the position query), so that the
// venue's mark (index + EWMA of the premium, venue mechanics §3.3) can replace it in one place.
//
// Today, in order: the underlying's index price while it is fresh (margin/index-prices.ts); else
// the guarded reference price of the perpetual's own book (book/reference.ts: the engine's price
// that trades cannot move cheaply); else the underlying's last, stale, index; else none (an
// unpriced position: margin/valuation.ts).

import type { EngineState } from '../state.js';
import { indexMark, MarkSource, type Mark } from '../margin/mark.js';

export function perpMarkOf(s: EngineState, marketIndex: number, nowUs = s.lastTimeUs): Mark | null {
  if (s.pools.valuationIndex < 0) return null;
  const underlying = s.catalog.baseIndexOf[marketIndex];
  if (!s.indexPrices.isStale(underlying, nowUs)) return indexMark(s, underlying, MarkSource.Index);
  const market = s.catalog.markets[marketIndex];
  const ticks = market.maxMultiplierBps === undefined ? 0 : s.books[marketIndex].guardedReferenceTicks;
  if (ticks > 0) {
    const price = { quoteUnits: BigInt(ticks) * BigInt(market.quoteUnitsPerTickLot), baseUnits: BigInt(market.baseUnitsPerLot) };
    return { price, source: MarkSource.Book, priceE9: 0, marketId: market.marketId, ticks };
  }
  return s.indexPrices.priceOf(underlying) > 0 ? indexMark(s, underlying, MarkSource.Stale) : null;
}
