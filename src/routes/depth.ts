// GET /api/v1/depth: the order book snapshot from this thread's read model, stamped with the
// market's depth update id (the id space of the depth stream's U/u) and the engine time of that
// state in microseconds. Both sides are listed in ascending price order, as the public API does.

import { Side } from '../../engine/bus/types.js';
import { Errors } from '../errors.js';
import { sendError, sendJson, type Route } from '../front/http.js';
import { marketFor, type FrontContext } from '../front/context.js';
import { priceTextFixed, qtyTextFixed } from '../wire/market-codec.js';

const LIMITS = new Set([5, 10, 20, 50, 100, 500, 1000]);

export function depthRoutes(front: FrontContext): Route[] {
  return [
    {
      method: 'get',
      path: '/api/v1/depth',
      handle: (ctx, input) => {
        const symbol = input.query.get('symbol') ?? '';
        const market = marketFor(front, symbol);
        if (!market) {
          sendError(ctx, Errors.invalidMarket(symbol.slice(0, 40)));
          return;
        }
        const limitText = input.query.get('limit');
        const limit = limitText === null ? 1000 : Number(limitText);
        if (!LIMITS.has(limit) || (limitText !== null && !/^\d+$/.test(limitText))) {
          sendError(ctx, Errors.invalid('limit must be one of 5, 10, 20, 50, 100, 500, 1000'));
          return;
        }
        const book = front.data.books[market.spec.marketId];
        const side = (s: Side) => book.levels(s, limit).map(([p, q]) => [priceTextFixed(market, p), qtyTextFixed(market, q)]);
        sendJson(ctx, 200, JSON.stringify({
          asks: side(Side.Ask),
          bids: side(Side.Bid),
          lastUpdateId: String(book.updateId),
          timestamp: book.timeUs,
        }));
      },
    },
  ];
}
