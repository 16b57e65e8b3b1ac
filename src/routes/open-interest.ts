// GET /api/v1/openInterest (public): each perpetual's open interest, Σ long positions in base units
// of its underlying, as the engine's QueryOpenInterest reads it (engine/core/perp/open-interest.ts).
// Optional `symbol` (a PERP market; another symbol is 400 INVALID_MARKET as elsewhere); without it
// every perpetual, in configuration order. `timestamp` is the engine time of the read, in ms.
// ccxt's backpack fetchOpenInterest reads `[0].openInterest` and `[0].timestamp`.

import { Errors } from '../errors.js';
import { sendError, sendJson, type Route } from '../front/http.js';
import type { FrontContext } from '../front/context.js';
import { engineCalls, replyTo } from '../front/engine-calls/index.js';
import { formatDecimal } from '../decimal.js';

const MARKET_ID_ALL = 0xffff;

export function openInterestRoutes(front: FrontContext): Route[] {
  const engine = engineCalls(front);
  return [
    {
      method: 'get',
      path: '/api/v1/openInterest',
      handle: (ctx, input) => {
        const symbol = input.query.get('symbol');
        let marketId = MARKET_ID_ALL;
        if (symbol !== null) {
          const market = front.config.markets.find((m) => m.symbol === symbol);
          if (market === undefined || market.spec.perp === undefined) return sendError(ctx, Errors.invalidMarket(symbol.slice(0, 40)));
          marketId = market.spec.marketId;
        }
        engine.queryOpenInterest(replyTo(ctx, (answer) => {
          const timestamp = Math.floor(answer.timeUs / 1000);
          sendJson(ctx, 200, JSON.stringify(answer.lines.map((line) => {
            const market = front.config.markets[line.marketId];
            return { symbol: market.symbol, openInterest: formatDecimal(line.openInterestUnits, market.baseDecimals), timestamp };
          })));
        }), { marketId });
      },
    },
  ];
}
