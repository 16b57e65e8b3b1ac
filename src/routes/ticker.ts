// GET /api/v1/ticker and GET /api/v1/tickers: rolling-window statistics of the venue's own trades,
// `interval` 1d (default) or 1w, from the LMDB candle history. The window starts at the minute
// boundary at or after now − interval and ends now. With no trade in the window the prices are the
// last trade's and the volumes zero; a market that never traded has null prices.

import { sendError, sendJson, type Route } from '../front/http.js';
import { Errors } from '../errors.js';
import { marketFor, type FrontContext } from '../front/context.js';
import type { MarketInfo } from '../config.js';
import { tickerJson } from '../wire/market-json.js';

const WINDOWS_S = new Map([['1d', 86_400], ['1w', 604_800]]);

export function tickerFor(front: FrontContext, market: MarketInfo, windowS: number): Record<string, unknown> {
  const marketId = market.spec.marketId;
  const nowS = Math.floor(Date.now() / 1000);
  const window = front.history.window(marketId, nowS - windowS, nowS);
  const last = window.tradeCount === 0 ? front.history.lastTrade(marketId, front.data.books[marketId].lastTradeId) : null;
  return tickerJson(market, window, last);
}

function windowParam(query: URLSearchParams): number | null {
  const interval = query.get('interval') ?? '1d';
  return WINDOWS_S.get(interval) ?? null;
}

export function tickerRoutes(front: FrontContext): Route[] {
  const checkSource = (query: URLSearchParams) => {
    const source = query.get('source');
    if (source === null || source === 'Venue') return null;
    return source === 'External' ? Errors.notImplemented('source External') : Errors.invalid('source must be Venue or External');
  };
  return [
    {
      method: 'get',
      path: '/api/v1/ticker',
      handle: (ctx, input) => {
        const symbol = input.query.get('symbol') ?? '';
        const market = marketFor(front, symbol);
        if (!market) return sendError(ctx, Errors.invalidMarket(symbol.slice(0, 40)));
        const windowS = windowParam(input.query);
        if (windowS === null) return sendError(ctx, Errors.invalid('interval must be 1d or 1w'));
        const sourceError = checkSource(input.query);
        if (sourceError) return sendError(ctx, sourceError);
        sendJson(ctx, 200, JSON.stringify(tickerFor(front, market, windowS)));
      },
    },
    {
      method: 'get',
      path: '/api/v1/tickers',
      handle: (ctx, input) => {
        const windowS = windowParam(input.query);
        if (windowS === null) return sendError(ctx, Errors.invalid('interval must be 1d or 1w'));
        const sourceError = checkSource(input.query);
        if (sourceError) return sendError(ctx, sourceError);
        sendJson(ctx, 200, JSON.stringify(front.config.markets.map((m) => tickerFor(front, m, windowS))));
      },
    },
  ];
}
