// /api/v1/orders: GET lists the signer's open orders (orderQueryAll; optional symbol and
// marketType filters), DELETE cancels all of them in one market (orderCancelAll). Both answer an
// array of Order objects, possibly empty. Batch execution (POST) is in orders-batch.ts.

import { Errors } from '../errors.js';
import { sendError, sendJson, type RequestContext, type Route } from '../front/http.js';
import { marketFor, type FrontContext } from '../front/context.js';
import { engineCalls, replyTo, type OrderView } from '../front/engine-calls/index.js';
import { orderJson } from '../wire/orders.js';
import { isError, marketTypesSelected } from '../wire/history-query.js';
import { marketTypeOf } from './markets.js';

/** orderCancelAll's optional filter; without one every open order of the market is cancelled. */
const CANCEL_ORDER_TYPES = new Set(['RestingLimitOrder', 'ConditionalOrder']);

/** Collects orders in the REST Order shape and answers the array once the engine is done. */
function orderList(front: FrontContext, ctx: RequestContext, types: Set<string> | null = null) {
  const orders: Array<Record<string, unknown>> = [];
  return {
    reply: replyTo<number>(ctx, () => sendJson(ctx, 200, JSON.stringify(orders))),
    onOrder: (order: OrderView) => {
      const market = front.config.markets[order.marketId];
      if (types === null || types.has(marketTypeOf(market))) orders.push(orderJson(market, order));
    },
  };
}

export function ordersRoutes(front: FrontContext): Route[] {
  const engine = engineCalls(front);
  return [
    {
      method: 'get',
      path: '/api/v1/orders',
      instruction: 'orderQueryAll',
      handle: (ctx, input) => {
        const types = marketTypesSelected(input.query);
        if (isError(types)) {
          sendError(ctx, types);
          return;
        }
        const symbol = input.query.get('symbol');
        let marketId: number | null = null;
        if (symbol !== null) {
          const market = marketFor(front, symbol);
          if (!market) {
            sendError(ctx, Errors.invalidMarket(symbol.slice(0, 40)));
            return;
          }
          marketId = market.spec.marketId;
        }
        const list = orderList(front, ctx, types);
        engine.openOrders(list.reply, input.accountId, marketId, list.onOrder);
      },
    },
    {
      method: 'delete',
      path: '/api/v1/orders',
      instruction: 'orderCancelAll',
      handle: (ctx, input) => {
        const body = (input.body ?? {}) as Record<string, unknown>;
        const market = marketFor(front, body.symbol);
        if (!market) {
          sendError(ctx, typeof body.symbol === 'string' ? Errors.invalidMarket(body.symbol.slice(0, 40)) : Errors.invalid('symbol is required'));
          return;
        }
        const orderType = body.orderType ?? null;
        if (orderType !== null && !CANCEL_ORDER_TYPES.has(orderType as string)) {
          sendError(ctx, Errors.invalid('orderType must be RestingLimitOrder or ConditionalOrder'));
          return;
        }
        if (orderType === 'ConditionalOrder') {
          sendJson(ctx, 200, '[]'); // no conditional orders exist yet
          return;
        }
        const list = orderList(front, ctx);
        engine.cancelAll(list.reply, { accountId: input.accountId, marketId: market.spec.marketId }, list.onOrder);
      },
    },
  ];
}
