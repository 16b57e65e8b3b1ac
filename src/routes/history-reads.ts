// The history routes: GET routes that only read history from LMDB — the signer's (orders, fills,
// dust, borrow/lend, interest, funding, positions, settlements), the lend pools' hourly samples
// (public, up to a year of every pool in one request) and the public trades and klines (up to
// 1,000 trades or candles a request, each bounded by the last trade id the front thread has seen
// on the durable stream, which the pool's task carries). A front thread serves them
// on its history pool (front/history-pool.ts) when it has one, so that a long read (a page of 1,000
// fills, or an offset deep into an account's history) does not hold up the thread's other requests;
// the pool's threads build the same routes over their own reader (src/history-thread.ts).

import type { Route } from '../front/http.js';
import type { FrontContext } from '../front/context.js';
import { borrowLendHistoryRoutes } from './borrow-lend-history.js';
import { borrowLendMarketHistoryRoutes } from './borrow-lend-market-history.js';
import { fundingHistoryRoutes } from './funding-history.js';
import { historyRoutes } from './history.js';
import { perpHistoryRoutes } from './perp-history.js';
import { klinesRoutes } from './klines.js';
import { tradesRoutes } from './trades.js';

/**
 * What the history routes read: the configuration, its look-ups, the account and market history,
 * and of the books only each market's last trade id as this front thread has seen it.
 */
export type HistoryFront = Pick<FrontContext, 'config' | 'marketsBySymbol' | 'assetsBySymbol' | 'accountHistory' | 'history'> & {
  data: { books: ReadonlyArray<{ readonly lastTradeId: number }> };
};

/** Every history route; each reads only what HistoryFront holds. */
export function historyReadRoutes(front: HistoryFront): Route[] {
  const f = front as FrontContext;
  return [
    ...historyRoutes(f), ...borrowLendHistoryRoutes(f), ...fundingHistoryRoutes(f), ...perpHistoryRoutes(f), ...borrowLendMarketHistoryRoutes(f),
    ...tradesRoutes(f), ...klinesRoutes(f),
  ];
}
