// GET /api/v1/trades (the newest trades) and GET /api/v1/trades/history (paged back by offset):
// public trades of a market from the LMDB trade history, newest first, as the venue lists them.
// Both stop at the last trade this thread has seen on the durable event stream.
// Bounds: limit 1..1000 (default 100); history offset ≥ 0 with offset + limit ≤ 10000.

import { sendError, sendJson, type Route } from '../front/http.js';
import { Errors } from '../errors.js';
import { marketFor, type FrontContext } from '../front/context.js';
import { tradeJson } from '../wire/market-json.js';
import { intParam, isError } from './query-params.js';

export const MAX_TRADES_LIMIT = 1000;
export const MAX_TRADES_HISTORY_DEPTH = 10_000;

export function tradesRoutes(front: FrontContext): Route[] {
  const serve = (withOffset: boolean): Route['handle'] => (ctx, input) => {
    const symbol = input.query.get('symbol') ?? '';
    const market = marketFor(front, symbol);
    if (!market) {
      sendError(ctx, Errors.invalidMarket(symbol.slice(0, 40)));
      return;
    }
    const limit = intParam(input.query, 'limit', 1, MAX_TRADES_LIMIT, 100);
    if (isError(limit)) return sendError(ctx, limit);
    const offset = withOffset ? intParam(input.query, 'offset', 0, MAX_TRADES_HISTORY_DEPTH, 0) : 0;
    if (isError(offset)) return sendError(ctx, offset);
    if (offset + limit > MAX_TRADES_HISTORY_DEPTH) {
      return sendError(ctx, Errors.invalid(`offset + limit must be at most ${MAX_TRADES_HISTORY_DEPTH}`));
    }
    const marketId = market.spec.marketId;
    const trades = front.history.trades(marketId, front.data.books[marketId].lastTradeId, offset, limit);
    sendJson(ctx, 200, JSON.stringify(trades.map((t) => tradeJson(market, t))));
  };
  return [
    { method: 'get', path: '/api/v1/trades', handle: serve(false) },
    { method: 'get', path: '/api/v1/trades/history', handle: serve(true) },
  ];
}
