// GET /wapi/v1/history/funding (fundingHistoryQueryAll): the signer's perpetual funding payments,
// read from LMDB (engine/store/history-account.ts: the engine's FundingPayment events as the
// journal worker wrote them, engine/core/perp/funding-payments.ts), never from engine memory.
//
// Item: {userId, subaccountId null, symbol, quantity (USDC, signed from the account's side:
// negative paid, positive received), intervalEndTimestamp (naive ISO), fundingRate}. Filters:
// symbol (a perpetual; anything else INVALID_MARKET), subaccountId (there are no subaccounts: a
// given one lists nothing), limit/offset, sortDirection (default Desc, by interval end).

import { Errors } from '../errors.js';
import { sendError, sendJson, type Route } from '../front/http.js';
import type { FrontContext } from '../front/context.js';
import { formatDecimal } from '../decimal.js';
import { isError, parsePage } from '../wire/history-query.js';
import { naiveDateTime, rateE12Text } from '../wire/funding.js';
import { marketTypeOf } from './markets.js';

export function fundingHistoryRoutes(front: FrontContext): Route[] {
  const bySymbol = new Map(front.config.markets.map((m) => [m.symbol, m]));
  return [
    {
      method: 'get',
      path: '/wapi/v1/history/funding',
      instruction: 'fundingHistoryQueryAll',
      handle: (ctx, input) => {
        const page = parsePage(input.query);
        if (isError(page)) return sendError(ctx, page);
        const symbol = input.query.get('symbol');
        const market = symbol === null ? undefined : bySymbol.get(symbol);
        if (symbol !== null && (market === undefined || marketTypeOf(market) !== 'PERP')) return sendError(ctx, Errors.invalidMarket(symbol.slice(0, 40)));
        if (input.query.get('subaccountId') !== null) return sendJson(ctx, 200, '[]');
        const items = front.accountHistory.fundingPayments(input.accountId, (r) => market === undefined || r.marketId === market.spec.marketId, page);
        sendJson(ctx, 200, JSON.stringify(items.map((r) => {
          const paid = front.config.markets[r.marketId];
          return {
            userId: r.accountId,
            subaccountId: null,
            symbol: paid.symbol,
            quantity: formatDecimal(r.quantityUnits, paid.quoteDecimals),
            intervalEndTimestamp: naiveDateTime(r.intervalEndUs),
            fundingRate: rateE12Text(r.fundingRateE12),
          };
        })));
      },
    },
  ];
}
