// /api/v1/order: POST executes an order (orderExecute), GET reads one open order (orderQuery),
// DELETE cancels one (orderCancel). Each becomes one engine command; the answer is the order in
// the REST Order shape once the engine's result is durable.
//
// Cancelling an order that is not open answers 400 INVALID_CLIENT_REQUEST "Order not found", as
// the public venue was observed to; reading one answers 404 RESOURCE_NOT_FOUND.

import { CommandFlag, CommandKind, HeaderFlag, RecordType, ResultCode, type Command } from '../../engine/bus/types.js';
import { readOrder, readResult } from '../../engine/bus/codec.js';
import { Errors, apiError, resultError, type ApiError } from '../errors.js';
import { sendError, sendJson, type RequestContext, type Route } from '../front/http.js';
import { callEngine, scratch, type FrontContext } from '../front/context.js';
import type { PendingRequest } from '../front/engine-link.js';
import { orderJson } from '../wire/orders.js';
import { parseOrder, parseOrderTarget, type ParsedOrder } from '../wire/parse-order.js';
import type { MarketInfo } from '../config.js';

/** Answers a request with the single Order record the engine addresses to it, or its error. */
export function singleOrderResponse(front: FrontContext, ctx: RequestContext, unknownOrder: ApiError): PendingRequest {
  return {
    onRecord(type, view, offset, header) {
      if (type === RecordType.Order && (header.flags & HeaderFlag.Last) !== 0) {
        readOrder(view, offset, scratch.order);
        const market = front.config.markets[scratch.order.marketId];
        sendJson(ctx, 200, JSON.stringify(orderJson(market, scratch.order)));
      } else if (type === RecordType.Result) {
        readResult(view, offset, scratch.result);
        const code = scratch.result.code;
        sendError(ctx, code === ResultCode.UnknownOrder ? unknownOrder : resultError(code));
      }
    },
  };
}

/** Fills a PlaceOrder command from a parsed order (also used by the batch route). */
export function placeCommand(accountId: number, order: ParsedOrder): (cmd: Command) => void {
  return (cmd) => {
    cmd.kind = CommandKind.PlaceOrder;
    cmd.accountId = accountId;
    cmd.marketId = order.market.spec.marketId;
    cmd.side = order.side;
    cmd.orderType = order.orderType;
    cmd.timeInForce = order.timeInForce;
    cmd.selfTradePrevention = order.selfTradePrevention;
    cmd.flags = order.flags;
    cmd.priceTicks = order.priceTicks;
    cmd.qtyLots = order.qtyLots;
    cmd.quoteQtyUnits = order.quoteQtyUnits;
    cmd.clientId = order.clientId;
  };
}

const CANCEL_NOT_FOUND = apiError(400, 'INVALID_CLIENT_REQUEST', 'Order not found');
const QUERY_NOT_FOUND = apiError(404, 'RESOURCE_NOT_FOUND', 'Order not found');

function targetCommand(kind: CommandKind, accountId: number, market: MarketInfo, orderId: number, clientId: number, byClientId: boolean) {
  return (cmd: Command) => {
    cmd.kind = kind;
    cmd.accountId = accountId;
    cmd.marketId = market.spec.marketId;
    cmd.orderId = orderId;
    cmd.clientId = clientId;
    if (byClientId) cmd.flags |= CommandFlag.HasClientId;
  };
}

export function orderRoutes(front: FrontContext): Route[] {
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
        callEngine(front, ctx, placeCommand(input.accountId, order), singleOrderResponse(front, ctx, QUERY_NOT_FOUND));
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
        callEngine(front, ctx,
          targetCommand(CommandKind.CancelOrder, input.accountId, target.market, target.orderId, target.clientId, target.byClientId),
          singleOrderResponse(front, ctx, CANCEL_NOT_FOUND));
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
        callEngine(front, ctx,
          targetCommand(CommandKind.QueryOrder, input.accountId, target.market, target.orderId, target.clientId, target.byClientId),
          singleOrderResponse(front, ctx, QUERY_NOT_FOUND));
      },
    },
  ];
}
