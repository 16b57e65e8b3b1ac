// POST /api/v1/orders: batch order execution (instruction orderExecute, signed by the batch rule
// of the wire reference §2.3, checked in front/http.ts). The body is a JSON array of OrderExecute
// bodies; the answer is an array with one entry per item, in item order: the Order object plus
// "operation":"Ok", or {"operation":"Err","code","message"} for an item that was refused.
//
// Each item is parsed on its own and becomes its own PlaceOrder command, submitted in item order,
// so items are sequenced in that order (other requests may be sequenced between them: a batch is
// not atomic, as each item has its own result). An item that fails to parse, or finds the engine
// queue full, is an Err entry and never reaches the engine; the others are unaffected. The answer
// goes out when every submitted item has its answer (a taker item after its speed bump).
// A batch holds 1 to MAX_BATCH_ORDERS items; anything else is refused whole, as is every batch
// while the exchange is in maintenance (503 MAINTENANCE).

import { Errors, type ApiError } from '../errors.js';
import { sendError, sendJson, type Route } from '../front/http.js';
import type { FrontContext } from '../front/context.js';
import { engineCalls } from '../front/engine-calls/index.js';
import { orderJson } from '../wire/orders.js';
import { parseOrder } from '../wire/parse-order.js';

/** Largest batch accepted (ccxt's createOrders assumes at most 20; the venue documents none). */
export const MAX_BATCH_ORDERS = 50;

function errEntry(error: ApiError): Record<string, unknown> {
  return { operation: 'Err', code: error.code, message: error.message };
}

export function ordersBatchRoutes(front: FrontContext): Route[] {
  const engine = engineCalls(front);
  return [
    {
      method: 'post',
      path: '/api/v1/orders',
      instruction: 'orderExecute',
      arrayBody: true,
      handle: (ctx, input) => {
        const items = input.body;
        if (!Array.isArray(items)) {
          sendError(ctx, Errors.invalid('A batch body must be a JSON array of orders'));
          return;
        }
        if (items.length === 0 || items.length > MAX_BATCH_ORDERS) {
          sendError(ctx, Errors.invalid(`A batch holds 1 to ${MAX_BATCH_ORDERS} orders`));
          return;
        }
        // In maintenance every item would be refused: the whole batch is, at once.
        if (front.data.inMaintenance()) return sendError(ctx, Errors.maintenance);
        const entries: Array<Record<string, unknown> | null> = items.map(() => null);
        let waiting = 0;
        let submitting = true;
        const finish = (): void => {
          if (waiting === 0 && !submitting) sendJson(ctx, 200, JSON.stringify(entries));
        };
        items.forEach((item, index) => {
          const order = item !== null && typeof item === 'object' && !Array.isArray(item)
            ? parseOrder(item as Record<string, unknown>, front.marketsBySymbol)
            : Errors.invalid('Each batch item must be a JSON object');
          if ('status' in order) {
            entries[index] = errEntry(order);
            return;
          }
          // A refusal before the item reached the engine (a full queue) arrives during the call,
          // while `submitted` is still false: it is an entry, never something to wait for.
          let submitted = false;
          const settle = (entry: Record<string, unknown>): void => {
            entries[index] = entry;
            if (!submitted) return;
            waiting--;
            finish();
          };
          submitted = engine.place({
            ok: (placed) => settle({ ...orderJson(front.config.markets[placed.marketId], placed), operation: 'Ok' }),
            fail: (error) => settle(errEntry(error)),
          }, input.accountId, order);
          if (submitted) ctx.engineBound = true;
          if (submitted) waiting++;
        });
        submitting = false;
        finish();
      },
    },
  ];
}
