// GET /wapi/v1/history/position (positionHistoryQueryAll) and GET /wapi/v1/history/settlement
// (settlementHistoryQueryAll): the signer's perpetual positions, open and closed, and its
// settlements, read from LMDB (engine/store/history-perp.ts: kept by the journal worker from the
// engine's position events, engine/core/perp/position-events.ts), never from engine memory.
//
// Positions: one row per position id (a flip keeps its position; a new one starts from flat), as
// its latest event left it (src/wire/position.ts positionHistoryJson). Filters: symbol (a
// perpetual, else INVALID_MARKET), state (Open, Closed), marketType (without PERP: nothing),
// limit/offset, sortDirection (default Desc: newest position first).
//
// Settlements: {quantity (USDC, signed from the account's side), source, subaccountId null,
// timestamp (naive ISO with ms), userId, positionId, engineSequence (the journal sequence of the
// command)}, sources RealizePnl (a fill's realized PnL), TradingFees (a fill's futures fee,
// negative) and FundingPayment; filters source (one of those), limit/offset, sortDirection
// (default Desc).

import { Errors } from '../errors.js';
import { sendError, sendJson, type Route } from '../front/http.js';
import type { FrontContext } from '../front/context.js';
import { formatDecimal } from '../decimal.js';
import { isError, marketTypesSelected, parsePage } from '../wire/history-query.js';
import { isoMillis } from '../wire/market-codec.js';
import { positionHistoryJson } from '../wire/position.js';
import { marketTypeOf } from './markets.js';

const STATES = new Set(['Open', 'Closed']);
const SOURCES = new Set(['RealizePnl', 'TradingFees', 'FundingPayment']);

export function perpHistoryRoutes(front: FrontContext): Route[] {
  const bySymbol = new Map(front.config.markets.map((m) => [m.symbol, m]));
  return [
    {
      method: 'get',
      path: '/wapi/v1/history/position',
      instruction: 'positionHistoryQueryAll',
      handle: (ctx, input) => {
        const page = parsePage(input.query);
        if (isError(page)) return sendError(ctx, page);
        const types = marketTypesSelected(input.query);
        if (isError(types)) return sendError(ctx, types);
        const symbol = input.query.get('symbol');
        const market = symbol === null ? undefined : bySymbol.get(symbol);
        if (symbol !== null && (market === undefined || marketTypeOf(market) !== 'PERP')) return sendError(ctx, Errors.invalidMarket(symbol.slice(0, 40)));
        const state = input.query.get('state');
        if (state !== null && !STATES.has(state)) return sendError(ctx, Errors.invalid(`Invalid state: ${state.slice(0, 20)}`));
        if (types !== null && !types.has('PERP')) return sendJson(ctx, 200, '[]');
        const rows = front.accountHistory.perpPositions(input.accountId, (p) =>
          (market === undefined || p.marketId === market.spec.marketId) && (state === null || (state === 'Open') === (p.closedUs === null)), page);
        sendJson(ctx, 200, JSON.stringify(rows.map(({ meta, rec }) => positionHistoryJson(front.config.markets[meta.marketId], rec, meta))));
      },
    },
    {
      method: 'get',
      path: '/wapi/v1/history/settlement',
      instruction: 'settlementHistoryQueryAll',
      handle: (ctx, input) => {
        const page = parsePage(input.query);
        if (isError(page)) return sendError(ctx, page);
        const source = input.query.get('source');
        if (source !== null && !SOURCES.has(source)) return sendError(ctx, Errors.invalid(`Invalid source: ${source.slice(0, 40)}`));
        const rows = front.accountHistory.perpSettlements(input.accountId, (r) => source === null || r.source === source, page);
        sendJson(ctx, 200, JSON.stringify(rows.map((r) => ({
          quantity: formatDecimal(r.quantityUnits, front.config.markets[r.marketId].quoteDecimals),
          source: r.source, subaccountId: null, timestamp: isoMillis(r.timeUs), userId: r.accountId,
          positionId: String(r.positionId), engineSequence: r.seq,
        }))));
      },
    },
  ];
}
