// GET /wapi/v1/history/orders (orderHistoryQueryAll), /wapi/v1/history/fills
// (fillHistoryQueryAll), /wapi/v1/history/dust (dustHistoryQueryAll): the signer's history, read
// from LMDB (engine/store/history-account.ts), never from engine memory. Orders include open ones
// (their latest state) as the venue's docs allow; /api/v1/orders is the live view.
//
// Filters: symbol (an unknown one is INVALID_MARKET), orderId, from/to (fills), fillType
// (fills: by the order's systemOrderType, wire/fill-type.ts), marketType (SPOT or nothing lists; other types list nothing), id (dust), limit/offset,
// sortDirection (default Desc).

import { Errors } from '../errors.js';
import { sendError, sendJson, type Route } from '../front/http.js';
import { type FrontContext } from '../front/context.js';
import { DUST_PAYOUT_SYMBOL } from '../front/engine-calls/index.js';
import { isError, parseIdParam, parsePage, parseTimeRange, spotSelected } from '../wire/history-query.js';
import { parseFillType, type FillFilter } from '../wire/fill-type.js';
import { dustJson, fillJson, orderHistoryJson } from '../wire/history.js';
import type { ApiError } from '../errors.js';

/** The market id of an optional `symbol` query parameter: undefined for none, or the error. */
export function marketIdParam(front: FrontContext, query: URLSearchParams): number | undefined | ApiError {
  const symbol = query.get('symbol');
  if (symbol === null) return undefined;
  const market = front.marketsBySymbol.get(symbol);
  return market ? market.spec.marketId : Errors.invalidMarket(symbol.slice(0, 40));
}

export function historyRoutes(front: FrontContext): Route[] {
  return [
    {
      method: 'get',
      path: '/wapi/v1/history/orders',
      instruction: 'orderHistoryQueryAll',
      handle: (ctx, input) => {
        const page = parsePage(input.query);
        const marketId = marketIdParam(front, input.query);
        const orderId = parseIdParam(input.query, 'orderId');
        const spot = spotSelected(input.query);
        for (const value of [page, marketId, orderId, spot]) if (isError(value)) return sendError(ctx, value);
        if (!spot || input.query.get('strategyId') !== null) return sendJson(ctx, 200, '[]');
        const orders = front.accountHistory.orders(input.accountId, { marketId: marketId as number | undefined, orderId: orderId as number | undefined }, page as never);
        sendJson(ctx, 200, JSON.stringify(orders.map((rec) => orderHistoryJson(front.config.markets[rec.marketId], rec))));
      },
    },
    {
      method: 'get',
      path: '/wapi/v1/history/fills',
      instruction: 'fillHistoryQueryAll',
      handle: (ctx, input) => {
        const page = parsePage(input.query);
        const range = parseTimeRange(input.query);
        const marketId = marketIdParam(front, input.query);
        const orderId = parseIdParam(input.query, 'orderId');
        const fillType = parseFillType(front.config, input.query);
        const spot = spotSelected(input.query);
        for (const value of [page, range, marketId, orderId, fillType, spot]) if (isError(value)) return sendError(ctx, value);
        if (!spot || input.query.get('strategyId') !== null) return sendJson(ctx, 200, '[]');
        const filter = { marketId: marketId as number | undefined, orderId: orderId as number | undefined, keep: (fillType as FillFilter | null) ?? undefined };
        const fills = front.accountHistory.fills(input.accountId, filter, range as never, page as never);
        sendJson(ctx, 200, JSON.stringify(fills.map((rec) => fillJson(front.config, rec))));
      },
    },
    {
      method: 'get',
      path: '/wapi/v1/history/dust',
      instruction: 'dustHistoryQueryAll',
      handle: (ctx, input) => {
        const page = parsePage(input.query);
        const id = parseIdParam(input.query, 'id');
        for (const value of [page, id]) if (isError(value)) return sendError(ctx, value);
        const symbol = input.query.get('symbol');
        let marketId: number | undefined;
        if (symbol !== null) {
          const market = front.config.markets.find((m) => m.baseSymbol === symbol && m.quoteSymbol === DUST_PAYOUT_SYMBOL);
          if (!market) return sendError(ctx, front.assetsBySymbol.has(symbol) ? Errors.invalid(`${symbol} has no dust market`) : Errors.invalidAsset(symbol.slice(0, 20)));
          marketId = market.spec.marketId;
        }
        const items = front.accountHistory.dust(input.accountId, { id: id as number | undefined, marketId }, page as never);
        sendJson(ctx, 200, JSON.stringify(items.map((d) => dustJson(front.config, d))));
      },
    },
  ];
}
