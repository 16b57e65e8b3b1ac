// GET /api/v1/ticker and GET /api/v1/tickers: rolling-window statistics of the venue's own trades,
// `interval` 1d (default) or 1w, from the LMDB candle history. The window starts at the minute
// boundary at or after now − interval and ends now. With no trade in the window the prices are the
// last trade's and the volumes zero; a market that never traded has null prices.

import { sendError, sendJson, type Route } from '../front/http.js';
import { Errors } from '../errors.js';
import { marketFor, type FrontContext } from '../front/context.js';
import type { MarketInfo } from '../config.js';
import { tickerJson } from '../wire/market-json.js';
import { windowStartS } from '../front/market-history.js';

const WINDOWS_S = new Map([['1d', 86_400], ['1w', 604_800]]);

/**
 * The ticker of one market as a JSON string. Its value depends only on the minute the window
 * starts at and on the trades stored up to the newest one this front has seen (the history of a
 * trade is in LMDB before its record reaches a front), so the string is kept per market and
 * window and rebuilt when either changes: a ticker read between trades costs no LMDB read.
 */
export function tickerCache(front: FrontContext): (market: MarketInfo, windowS: number) => string {
  const cache = new Map<number, { startS: number; lastTradeId: number; body: string }>();
  return (market, windowS) => {
    const marketId = market.spec.marketId;
    const nowS = Math.floor(Date.now() / 1000);
    const startS = windowStartS(nowS - windowS);
    const lastTradeId = front.data.books[marketId].lastTradeId;
    const slot = marketId * 2 + (windowS === WINDOWS_S.get('1d') ? 0 : 1);
    const cached = cache.get(slot);
    if (cached !== undefined && cached.startS === startS && cached.lastTradeId === lastTradeId) return cached.body;
    const window = front.history.window(marketId, nowS - windowS, nowS);
    const last = window.tradeCount === 0 ? front.history.lastTrade(marketId, lastTradeId) : null;
    const body = JSON.stringify(tickerJson(market, window, last));
    cache.set(slot, { startS, lastTradeId, body });
    return body;
  };
}

function windowParam(query: URLSearchParams): number | null {
  const interval = query.get('interval') ?? '1d';
  return WINDOWS_S.get(interval) ?? null;
}

export function tickerRoutes(front: FrontContext): Route[] {
  const tickerBody = tickerCache(front);
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
        sendJson(ctx, 200, tickerBody(market, windowS));
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
        sendJson(ctx, 200, `[${front.config.markets.map((m) => tickerBody(m, windowS)).join(',')}]`);
      },
    },
  ];
}
