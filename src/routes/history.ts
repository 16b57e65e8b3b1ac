// GET /wapi/v1/history/orders (orderHistoryQueryAll), /wapi/v1/history/fills
// (fillHistoryQueryAll), /wapi/v1/history/dust (dustHistoryQueryAll): the signer's history, read
// from LMDB (engine/store/history-account.ts), never from engine memory. Orders include open ones
// (their latest state) as the venue's docs allow; /api/v1/orders is the live view.
//
// Filters: symbol (an unknown one is INVALID_MARKET), orderId, from/to (fills), fillType
// (fills: by the order's systemOrderType, wire/fill-type.ts), marketType (repeatable: the markets of
// those types, SPOT or PERP; the other types have no market here and list nothing), id (dust), limit/offset,
// sortDirection (default Desc).

import { Errors } from '../errors.js';
import { sendError, sendJson, type Route } from '../front/http.js';
import { type FrontContext } from '../front/context.js';
import { DUST_PAYOUT_SYMBOL } from '../front/engine-calls/index.js';
import { isError, marketTypesSelected, parseIdParam, parsePage, parseTimeRange } from '../wire/history-query.js';
import { marketTypeOf } from './markets.js';
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

/**
 * The markets a marketType filter selects: undefined for every market (no filter, or every
 * configured market's type named), else their ids (empty: none), or the error.
 */
export function marketIdsParam(front: FrontContext, query: URLSearchParams): number[] | undefined | ApiError {
  const types = marketTypesSelected(query);
  if (isError(types) || types === null) return types ?? undefined;
  const ids = front.config.markets.filter((m) => types.has(marketTypeOf(m))).map((m) => m.spec.marketId);
  return ids.length === front.config.markets.length ? undefined : ids;
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
        const marketIds = marketIdsParam(front, input.query);
        for (const value of [page, marketId, orderId, marketIds]) if (isError(value)) return sendError(ctx, value);
        if ((marketIds as number[] | undefined)?.length === 0 || input.query.get('strategyId') !== null) return sendJson(ctx, 200, '[]');
        const filter = { marketId: marketId as number | undefined, marketIds: marketIds as number[] | undefined, orderId: orderId as number | undefined };
        const orders = front.accountHistory.orders(input.accountId, filter, page as never);
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
        const marketIds = marketIdsParam(front, input.query);
        for (const value of [page, range, marketId, orderId, fillType, marketIds]) if (isError(value)) return sendError(ctx, value);
        if ((marketIds as number[] | undefined)?.length === 0 || input.query.get('strategyId') !== null) return sendJson(ctx, 200, '[]');
        const filter = {
          marketId: marketId as number | undefined, marketIds: marketIds as number[] | undefined, orderId: orderId as number | undefined,
          keep: (fillType as FillFilter | null) ?? undefined,
        };
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
