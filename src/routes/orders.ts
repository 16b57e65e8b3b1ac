// /api/v1/orders: GET lists the signer's open orders (orderQueryAll; optional symbol and
// marketType filters), DELETE cancels all of them in one market (orderCancelAll). Both answer an
// array of Order objects, possibly empty. Batch execution (POST) is in orders-batch.ts.

import { CommandKind, RecordType, ResultCode } from '../../engine/bus/types.js';
import { readOrder, readResult } from '../../engine/bus/codec.js';
import { Errors, resultError } from '../errors.js';
import { sendError, sendJson, type RequestContext, type Route } from '../front/http.js';
import { callEngine, marketFor, scratch, type FrontContext } from '../front/context.js';
import type { PendingRequest } from '../front/engine-link.js';
import { orderJson } from '../wire/orders.js';
import { isError, spotSelected } from '../wire/history-query.js';

const ALL_MARKETS = 0xffff;
/** orderCancelAll's optional filter; without one every open order of the market is cancelled. */
const CANCEL_ORDER_TYPES = new Set(['RestingLimitOrder', 'ConditionalOrder']);

function orderListResponse(front: FrontContext, ctx: RequestContext): PendingRequest {
  const orders: Array<Record<string, unknown>> = [];
  return {
    onRecord(type, view, offset) {
      if (type === RecordType.Order) {
        readOrder(view, offset, scratch.order);
        orders.push(orderJson(front.config.markets[scratch.order.marketId], scratch.order));
      } else if (type === RecordType.Result) {
        readResult(view, offset, scratch.result);
        if (scratch.result.code === ResultCode.Ok) sendJson(ctx, 200, JSON.stringify(orders));
        else sendError(ctx, resultError(scratch.result.code));
      }
    },
  };
}

export function ordersRoutes(front: FrontContext): Route[] {
  return [
    {
      method: 'get',
      path: '/api/v1/orders',
      instruction: 'orderQueryAll',
      handle: (ctx, input) => {
        const spot = spotSelected(input.query);
        if (isError(spot)) {
          sendError(ctx, spot);
          return;
        }
        if (!spot) {
          sendJson(ctx, 200, '[]'); // every market here is spot
          return;
        }
        const symbol = input.query.get('symbol');
        let marketId = ALL_MARKETS;
        if (symbol !== null) {
          const market = marketFor(front, symbol);
          if (!market) {
            sendError(ctx, Errors.invalidMarket(symbol.slice(0, 40)));
            return;
          }
          marketId = market.spec.marketId;
        }
        callEngine(front, ctx, (cmd) => {
          cmd.kind = CommandKind.QueryOpenOrders;
          cmd.accountId = input.accountId;
          cmd.marketId = marketId;
        }, orderListResponse(front, ctx));
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
        callEngine(front, ctx, (cmd) => {
          cmd.kind = CommandKind.CancelAll;
          cmd.accountId = input.accountId;
          cmd.marketId = market.spec.marketId;
        }, orderListResponse(front, ctx));
      },
    },
  ];
}
