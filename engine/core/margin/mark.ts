// The mark price the margin family values an asset at, in the valuation asset (USDC).
//
// One function, so the source can change in one place: today the guarded reference price
// (book/reference.ts) of the asset's first market quoted in the valuation asset, the engine's
// price that trades cannot move cheaply (the venue values margin at mark, never at the last
// trade); the valuation asset itself is worth 1. An asset without such a market, or whose market
// has no guarded reference yet (never traded, or unbanded), has no mark price.

import type { EngineState } from '../state.js';
import type { UnitPrice } from './collateral.js';

/** The market id of a mark without a market (the valuation asset itself, or no mark). */
export const NO_MARK_MARKET = 0xffff;

export interface Mark {
  price: UnitPrice;
  /** The market the price is read from (NO_MARK_MARKET for the valuation asset) and its ticks. */
  marketId: number;
  ticks: number;
}

const ONE_TO_ONE: Mark = { price: { quoteUnits: 1n, baseUnits: 1n }, marketId: NO_MARK_MARKET, ticks: 0 };

/** The mark price of the asset at `assetIndex`, or null when it has none. */
export function markOf(s: EngineState, assetIndex: number): Mark | null {
  const valuationIndex = s.pools.valuationIndex;
  if (valuationIndex < 0) return null;
  if (assetIndex === valuationIndex) return ONE_TO_ONE;
  for (let m = 0; m < s.catalog.marketCount; m++) {
    if (s.catalog.baseIndexOf[m] !== assetIndex || s.catalog.quoteIndexOf[m] !== valuationIndex) continue;
    const market = s.catalog.markets[m];
    const ticks = market.maxMultiplierBps === undefined ? 0 : s.books[m].guardedReferenceTicks;
    if (ticks <= 0) return null;
    return { price: { quoteUnits: BigInt(ticks) * BigInt(market.quoteUnitsPerTickLot), baseUnits: BigInt(market.baseUnitsPerLot) }, marketId: market.marketId, ticks };
  }
  return null;
}
