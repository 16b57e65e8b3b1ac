// /api/v1/order: POST executes an order (orderExecute), GET reads one open order (orderQuery),
// DELETE cancels one (orderCancel). Each becomes one engine command; the answer is the order in
// the REST Order shape once the engine's result is durable.
//
// Cancelling an order that is not open answers 400 INVALID_CLIENT_REQUEST "Order not found", as
// the public venue was observed to; reading one answers 404 RESOURCE_NOT_FOUND.

import { Errors } from '../errors.js';
import { sendError, sendJson, type RequestContext, type Route } from '../front/http.js';
import type { FrontContext } from '../front/context.js';
import { engineCalls, replyTo, type OrderView, type Reply } from '../front/engine-calls/index.js';
import { orderJsonText } from '../wire/orders.js';
import { parseOrder, parseOrderTarget } from '../wire/parse-order.js';

/** Answers the request with the order in the REST Order shape, or the engine's error. */
function sendOrder(front: FrontContext, ctx: RequestContext): Reply<OrderView> {
  return replyTo(ctx, (order) => sendJson(ctx, 200, orderJsonText(front.config.markets[order.marketId], order)));
}

export function orderRoutes(front: FrontContext): Route[] {
  const engine = engineCalls(front);
  return [
    {
      method: 'post',
      path: '/api/v1/order',
      instruction: 'orderExecute',
      handle: (ctx, input) => {
        if (input.body === null) {
          sendError(ctx, Errors.invalid('An order body is required'));
          return;
        }
        const order = parseOrder(input.body as Record<string, unknown>, front.marketsBySymbol);
        if ('status' in order) {
          sendError(ctx, order);
          return;
        }
        engine.place(sendOrder(front, ctx), input.accountId, order);
      },
    },
    {
      method: 'delete',
      path: '/api/v1/order',
      instruction: 'orderCancel',
      handle: (ctx, input) => {
        const target = parseOrderTarget((input.body ?? {}) as Record<string, unknown>, front.marketsBySymbol);
        if ('status' in target) {
          sendError(ctx, target);
          return;
        }
        engine.cancel(sendOrder(front, ctx), input.accountId, target);
      },
    },
    {
      method: 'get',
      path: '/api/v1/order',
      instruction: 'orderQuery',
      handle: (ctx, input) => {
        const target = parseOrderTarget(Object.fromEntries(input.query), front.marketsBySymbol);
        if ('status' in target) {
          sendError(ctx, target);
          return;
        }
        engine.find(sendOrder(front, ctx), input.accountId, target);
      },
    },
  ];
}
