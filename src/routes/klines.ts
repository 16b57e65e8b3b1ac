// GET /api/v1/klines: candles of a market from the LMDB candle and trade history.
// `startTime` (required) and `endTime` (default now) are UTC seconds; candles whose bucket starts
// in [startTime, endTime) are returned ascending, only buckets that had trades (the venue's
// open/high/low/close are nullable, ccxt reads only non-empty candles), at most 1000 candles per
// request, and for 1s at most 1000 seconds spanned (ccxt pages forward with `since`). Weeks start on Monday 00:00 UTC and
// months on the 1st. `priceType` Last (default) is the trades; Mark a perpetual's mark price, from
// the engine's MarkPrice events (one a second while its index is fresh; a spot market answers 400);
// Index the index price of the market's base asset, from its IndexPrice events (SetIndexPrice).
// Their candles are stored beside the trade candles (engine/store/history-market.ts); their open,
// high, low and close are the prices sampled in the bucket, volume and trades "0", and only
// buckets with a sample are returned. Only `source=Venue` exists: External answers NOT_IMPLEMENTED.

import { sendError, sendJson, type Route } from '../front/http.js';
import { Errors } from '../errors.js';
import { marketFor, type FrontContext } from '../front/context.js';
import { KLINE_INTERVALS } from '../front/market-history.js';
import { klineJson, priceKlineJson } from '../wire/market-json.js';
import { intParam, isError } from './query-params.js';

const MAX_TIME_S = 253_402_300_799; // 9999-12-31T23:59:59Z

export function klinesRoutes(front: FrontContext): Route[] {
  return [
    {
      method: 'get',
      path: '/api/v1/klines',
      handle: (ctx, input) => {
        const q = input.query;
        const symbol = q.get('symbol') ?? '';
        const market = marketFor(front, symbol);
        if (!market) return sendError(ctx, Errors.invalidMarket(symbol.slice(0, 40)));
        const interval = q.get('interval');
        if (interval === null || !KLINE_INTERVALS.has(interval)) {
          return sendError(ctx, Errors.invalid(`interval must be one of ${[...KLINE_INTERVALS.keys()].join(', ')}`));
        }
        if (q.get('startTime') === null) return sendError(ctx, Errors.invalid('startTime is required (UTC seconds)'));
        const startS = intParam(q, 'startTime', 0, MAX_TIME_S, 0);
        if (isError(startS)) return sendError(ctx, startS);
        const endS = intParam(q, 'endTime', 0, MAX_TIME_S, Math.floor(Date.now() / 1000) + 1);
        if (isError(endS)) return sendError(ctx, endS);
        const priceType = q.get('priceType') ?? 'Last';
        if (priceType !== 'Last' && priceType !== 'Index' && priceType !== 'Mark') return sendError(ctx, Errors.invalid('priceType must be one of Last, Index, Mark'));
        if (priceType === 'Mark' && market.spec.perp === undefined) return sendError(ctx, Errors.invalid('priceType Mark is for perpetual markets'));
        const source = q.get('source');
        if (source !== null && source !== 'Venue') {
          if (source === 'External') return sendError(ctx, Errors.notImplemented('source External'));
          return sendError(ctx, Errors.invalid('source must be Venue or External'));
        }
        const marketId = market.spec.marketId;
        if (priceType !== 'Last') {
          const id = priceType === 'Mark' ? marketId : market.spec.baseAssetId;
          const klines = front.history.klines(id, 0, interval, startS, endS, priceType);
          return sendJson(ctx, 200, JSON.stringify(klines.map((k) => priceKlineJson(k))));
        }
        const klines = front.history.klines(marketId, front.data.books[marketId].lastTradeId, interval, startS, endS);
        sendJson(ctx, 200, JSON.stringify(klines.map((k) => klineJson(market, k))));
      },
    },
  ];
}
