// The mark price of a perpetual, in its quote asset (USDC) per base unit of its underlying: the one
// function every perpetual rule asks (valuation, admission, the position query, funding).
//
// It is the venue's mark (venue mechanics §3.3), computed in mark-price.ts (perpMarkPriceOf):
// index + the one-minute EWMA of (mid − index) clamped to the band around the index while the
// index is fresh (the index itself on a PostOnly book or before the EWMA moved); else the
// perpetual's own book (median of bid, ask and last, its mid, its last); else the underlying's
// last, stale, index; else none (an unpriced position: margin/valuation.ts). Here it becomes the
// margin family's Mark: the price ×10^9 as an exact unit price, its source mapped to MarkSource
// (Ewma and Index → Index, the book's → Book, StaleIndex → Stale).

import { MarkPriceSource } from '../../bus/types.js';
import { pow10 } from '../margin/fixed.js';
import { INDEX_PRICE_DECIMALS } from '../margin/index-prices.js';
import { MarkSource, NO_MARK_MARKET, type Mark } from '../margin/mark.js';
import type { EngineState } from '../state.js';
import { perpMarkPriceOf } from './mark-price.js';

function markSourceOf(source: MarkPriceSource): MarkSource {
  switch (source) {
    case MarkPriceSource.Ewma:
    case MarkPriceSource.Index:
      return MarkSource.Index;
    case MarkPriceSource.StaleIndex:
      return MarkSource.Stale;
    default:
      return MarkSource.Book;
  }
}

export function perpMarkOf(s: EngineState, marketIndex: number, nowUs = s.lastTimeUs): Mark | null {
  if (s.pools.valuationIndex < 0) return null;
  const mark = perpMarkPriceOf(s, marketIndex, nowUs);
  if (mark.source === MarkPriceSource.None || mark.markE9 <= 0) return null;
  const baseDecimals = s.pools.decimalsOf[s.catalog.baseIndexOf[marketIndex]];
  const quoteDecimals = s.pools.decimalsOf[s.catalog.quoteIndexOf[marketIndex]];
  const price = { quoteUnits: BigInt(mark.markE9) * pow10(quoteDecimals), baseUnits: pow10(INDEX_PRICE_DECIMALS) * pow10(baseDecimals) };
  return { price, source: markSourceOf(mark.source), priceE9: mark.markE9, marketId: NO_MARK_MARKET, ticks: 0 };
}
