// The embedded default index: so that `npm start` has index prices with no operator and no feed,
// front thread 0 (the one serving the admin port) derives each asset's index from the mid of its
// own <ASSET>_USDC book every --index-default-interval-ms, and submits it as the same journaled
// SetIndexPrice command the operator and feeds use, with source Default. Replay therefore sees the
// derived prices exactly as the engine did; nothing here is engine state.
//
// Why front 0: it holds the books' read model (best bid and ask, exactly the engine's at the last
// drained record), reads the last trade price from LMDB like the other front code, and already
// runs the operator's machinery (the simulated chain); the main thread has neither.
//
// The price: (best bid + best ask) / 2, clamped to the market's price band (the limit band around
// its last trade price, last × [minMultiplier, maxMultiplier], once it has traded) and to its
// static minPrice..maxPrice, in USDC per whole unit × 10^9, rounded down. A book without a bid or
// an ask gives no price (the asset's index then ages and goes stale). USDC is fixed at 1 by the
// engine and never derived.
//
// Who wins: an operator or feed price owns its asset while it is fresh. The default skips an asset
// whose last update came from the operator or a feed and is not stale (younger than the engine's
// maximum age, the flag QueryIndexPrices reports); once such a price goes stale, the default takes
// over again. To skip journal records in a quiet market, an unchanged default price is only
// submitted again once half the maximum age has passed.
//
// A book mid is only as good as the book: production venues should run a feed and turn this off
// (--no-index-default, INDEX_DEFAULT=0).

import { IndexPriceSource } from '../../engine/bus/types.js';
import { DEFAULT_INDEX_DEFAULT_INTERVAL_MS, DEFAULT_INDEX_MAX_AGE_MS, type MarketInfo } from '../config.js';
import type { FrontContext } from './context.js';
import { engineCalls, type IndexPriceRow, type IndexPrices } from './engine-calls/index.js';

/** Decimals of an index price: USDC per whole unit × 10^9 (the engine's INDEX_PRICE_DECIMALS). */
export const INDEX_PRICE_DECIMALS = 9;
const BPS = 10_000n;

/**
 * The default index of `market`'s base asset from its best bid and ask (ticks, 0: side empty) and
 * its last trade price (ticks, 0: none yet), clamped to the band; null when there is no mid, or
 * the market's tick is finer than 10^-9 USDC.
 */
export function derivedIndexE9(market: MarketInfo, bestBidTicks: number, bestAskTicks: number, lastPriceTicks: number): number | null {
  if (bestBidTicks <= 0 || bestAskTicks <= 0 || market.priceDecimals > INDEX_PRICE_DECIMALS) return null;
  const { minPriceTicks, maxPriceTicks, minMultiplierBps, maxMultiplierBps } = market.spec;
  let low = BigInt(minPriceTicks);
  let high = BigInt(maxPriceTicks);
  if (lastPriceTicks > 0 && minMultiplierBps !== undefined && maxMultiplierBps !== undefined) {
    const last = BigInt(lastPriceTicks);
    const bandLow = (last * BigInt(minMultiplierBps) + BPS - 1n) / BPS;
    const bandHigh = (last * BigInt(maxMultiplierBps)) / BPS;
    if (bandLow > low) low = bandLow;
    if (bandHigh < high) high = bandHigh;
  }
  // In half ticks, so that a mid between two ticks is clamped and priced exactly.
  let midHalfTicks = BigInt(bestBidTicks) + BigInt(bestAskTicks);
  if (midHalfTicks < 2n * low) midHalfTicks = 2n * low;
  if (midHalfTicks > 2n * high) midHalfTicks = 2n * high;
  const tickE9 = BigInt(market.tickUnits) * 10n ** BigInt(INDEX_PRICE_DECIMALS - market.priceDecimals);
  const priceE9 = (midHalfTicks * tickE9) / 2n;
  return priceE9 > 0n && priceE9 <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(priceE9) : null;
}

/** Whether the default should set this asset's index now, to `priceE9`, at engine time `nowUs`. */
export function defaultIndexDue(row: IndexPriceRow, priceE9: number, nowUs: number, maxAgeUs: number): boolean {
  const external = row.source === IndexPriceSource.Operator || row.source === IndexPriceSource.Feed;
  if (external && !row.stale) return false;
  if (row.source !== IndexPriceSource.Default || row.priceE9 !== priceE9) return true;
  return nowUs - row.updatedUs >= maxAgeUs / 2;
}

/** One round: read the engine's index prices, submit a Default price for each asset due. */
function deriveRound(front: FrontContext, prices: IndexPrices, maxAgeUs: number): void {
  for (const row of prices.rows) {
    const asset = front.config.assets[row.assetId];
    if (!asset || row.source === IndexPriceSource.Fixed) continue;
    const market = front.marketsBySymbol.get(`${asset.symbol}_USDC`);
    if (!market) continue;
    const book = front.data.books[market.spec.marketId];
    const lastTicks = front.accountHistory.lastPriceTicks(market.spec.marketId);
    const priceE9 = derivedIndexE9(market, book.bestBid, book.bestAsk, lastTicks);
    if (priceE9 === null || !defaultIndexDue(row, priceE9, prices.timeUs, maxAgeUs)) continue;
    engineCalls(front).setIndexPrice({
      ok: () => {},
      fail: (error) => front.log.debug({ asset: asset.symbol, error: error.message }, 'default index price not set'),
    }, { assetId: row.assetId, priceE9, source: IndexPriceSource.Default });
  }
}

/** Starts the default index on this front thread; returns its stop. */
export function startIndexDefault(front: FrontContext): () => void {
  const maxAgeUs = (front.config.indexMaxAgeMs ?? DEFAULT_INDEX_MAX_AGE_MS) * 1000;
  let inFlight = false;
  const round = (): void => {
    if (inFlight) return;
    inFlight = true;
    engineCalls(front).queryIndexPrices({
      ok: (prices) => {
        inFlight = false;
        try {
          deriveRound(front, prices, maxAgeUs);
        } catch (error) {
          front.log.error({ err: error }, 'default index round failed');
        }
      },
      fail: () => {
        inFlight = false;
      },
    });
  };
  round();
  const timer = setInterval(round, front.config.indexDefaultIntervalMs ?? DEFAULT_INDEX_DEFAULT_INTERVAL_MS);
  return () => clearInterval(timer);
}
