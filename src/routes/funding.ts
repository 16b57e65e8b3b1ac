// Perpetual mark prices and funding rates: GET /api/v1/markPrices (the engine's mark, index and
// running funding estimate per perpetual, engine/core/perp/mark-price.ts and funding.ts) and GET
// /api/v1/fundingRates (each ended funding interval of one perpetual, from the LMDB history the
// journal worker writes from FundingRate events, engine/store/history-market.ts).
//
// Choices where the spec is silent:
// - markPrices lists perpetuals only (marketType defaults to PERP; SPOT and the other types list
//   nothing, an unknown type is refused); a perpetual without any price (no index ever, an empty
//   book) has no row; `symbol` of a market that is not a perpetual lists nothing, an unknown one
//   is refused (INVALID_MARKET).
// - Prices are USDC ×10^9 with trailing zeros trimmed; rates are the engine's exact rate at 10^-12
//   with trailing zeros trimmed (a quiet hour reads "0.0000125"), the rate funding was paid at.
// - fundingRates answers newest first, `limit` 1…10000 (default 100), `offset` from the newest.

import { Errors } from '../errors.js';
import { sendError, sendJson, type Route } from '../front/http.js';
import type { FrontContext } from '../front/context.js';
import { engineCalls, replyTo, type MarkPriceView } from '../front/engine-calls/index.js';
import { naiveDateTime, priceE9Text, rateE12Text } from '../wire/funding.js';
import type { MarketInfo } from '../config.js';
import { marketTypeOf } from './markets.js';
import { intParam, isError } from './query-params.js';
import { marketTypesSelected } from '../wire/history-query.js';

export function markPriceJson(market: MarketInfo, m: MarkPriceView): Record<string, unknown> {
  return {
    symbol: market.symbol,
    markPrice: priceE9Text(m.markPriceE9),
    indexPrice: priceE9Text(m.indexPriceE9),
    fundingRate: rateE12Text(m.fundingRateE12),
    nextFundingTimestamp: Math.floor(m.nextFundingUs / 1000),
  };
}

export function fundingRoutes(front: FrontContext): Route[] {
  const engine = engineCalls(front);
  const bySymbol = new Map(front.config.markets.map((m) => [m.symbol, m]));
  const byId = new Map(front.config.markets.map((m) => [m.spec.marketId, m]));
  return [
    {
      method: 'get',
      path: '/api/v1/markPrices',
      handle: (ctx, input) => {
        const types = marketTypesSelected(input.query);
        if (isError(types)) return sendError(ctx, types);
        const symbol = input.query.get('symbol');
        if (symbol !== null && !bySymbol.has(symbol)) return sendError(ctx, Errors.invalidMarket(symbol.slice(0, 40)));
        const listed = (market: MarketInfo): boolean =>
          marketTypeOf(market) === 'PERP' && (types === null || types.has('PERP')) && (symbol === null || market.symbol === symbol);
        engine.queryMarkPrices(replyTo(ctx, (rows) => {
          const body = rows.flatMap((row) => {
            const market = byId.get(row.marketId);
            return market !== undefined && listed(market) ? [markPriceJson(market, row)] : [];
          });
          sendJson(ctx, 200, JSON.stringify(body));
        }));
      },
    },
    {
      method: 'get',
      path: '/api/v1/fundingRates',
      handle: (ctx, input) => {
        const symbol = input.query.get('symbol') ?? '';
        const market = bySymbol.get(symbol);
        if (market === undefined || marketTypeOf(market) !== 'PERP') return sendError(ctx, Errors.invalidMarket(symbol.slice(0, 40)));
        const limit = intParam(input.query, 'limit', 1, 10_000, 100);
        if (isError(limit)) return sendError(ctx, limit);
        const offset = intParam(input.query, 'offset', 0, Number.MAX_SAFE_INTEGER, 0);
        if (isError(offset)) return sendError(ctx, offset);
        const rows = front.history.fundingRates(market.spec.marketId, offset, limit, front.link.seqDurableNow());
        sendJson(ctx, 200, JSON.stringify(rows.map((r) => ({
          symbol: market.symbol,
          intervalEndTimestamp: naiveDateTime(r.intervalEndUs),
          fundingRate: rateE12Text(r.fundingRateE12),
        }))));
      },
    },
  ];
}
