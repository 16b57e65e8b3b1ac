// GET /api/v1/position (positionQuery): the signer's open perpetual positions in the venue's
// FuturePositionWithMargin shape, every figure from the engine's position query
// (engine/core/perp/query.ts: one margin summary, so a position shows the uPnL, exposure, IMF and
// MMF that admission and net equity use). Optional `symbol` (a PERP market: with no position
// there, 404 "Position not found" as the venue answers) and `marketType` (a filter without PERP
// selects nothing).
//
// Rendering: src/wire/position.ts.

import { Errors } from '../errors.js';
import { sendError, sendJson, type Route } from '../front/http.js';
import type { FrontContext } from '../front/context.js';
import { engineCalls, replyTo, type PositionView } from '../front/engine-calls/index.js';
import type { MarketInfo } from '../config.js';
import { positionFigures } from '../wire/position.js';
import { isError, marketTypesSelected } from '../wire/history-query.js';
import { marginFunctionJson } from './collateral.js';

const MARKET_ID_ALL = 0xffff;

export function positionJson(market: MarketInfo, p: PositionView): Record<string, unknown> {
  const perp = market.spec.perp!;
  return { ...positionFigures(market, p), imfFunction: marginFunctionJson(perp.imf), mmfFunction: marginFunctionJson(perp.mmf) };
}

export function positionRoutes(front: FrontContext): Route[] {
  const engine = engineCalls(front);
  return [
    {
      method: 'get',
      path: '/api/v1/position',
      instruction: 'positionQuery',
      handle: (ctx, input) => {
        const types = marketTypesSelected(input.query);
        if (isError(types)) return sendError(ctx, types);
        if (types !== null && !types.has('PERP')) return sendJson(ctx, 200, '[]');
        const symbol = input.query.get('symbol');
        let marketId = MARKET_ID_ALL;
        if (symbol !== null) {
          const market = front.config.markets.find((m) => m.symbol === symbol);
          if (market === undefined || market.spec.perp === undefined) return sendError(ctx, Errors.invalidMarket(symbol.slice(0, 40)));
          marketId = market.spec.marketId;
        }
        engine.queryPositions(replyTo(ctx, (positions) => {
          if (symbol !== null && positions.length === 0) return sendError(ctx, Errors.positionNotFound);
          sendJson(ctx, 200, JSON.stringify(positions.map((p) => positionJson(front.config.markets[p.marketId], p))));
        }), { accountId: input.accountId, marketId });
      },
    },
  ];
}
