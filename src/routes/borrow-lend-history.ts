// GET /wapi/v1/history/borrowLend (borrowHistoryQueryAll) and /wapi/v1/history/interest
// (interestHistoryQueryAll): the signer's borrow/lend moves and interest payments, read from LMDB
// (engine/store/history-account.ts: the engine's BorrowLend records as the journal worker wrote
// them), never from engine memory.
//
// Filters: type (Borrow, BorrowRepay, Lend, LendRedeem), sources (Manual: every move today is a
// POST /api/v1/borrowLend; any other source lists nothing), positionId, symbol / asset (an asset
// symbol; unknown: INVALID_ASSET), source (BorrowLend; UnrealizedPnl lists nothing: there are no
// perpetual positions), limit/offset, sortDirection (default Desc).
//
// Shapes: a move is {eventType, positionId, positionQuantity (the position after it, signed: lent
// positive, borrowed negative), quantity, source, symbol, timestamp, spotMarginOrderId null}; an
// interest payment {paymentType (Borrow or Lend), interestRate (annual), interval (ms of the hour
// charged), marketSymbol (the asset), positionId, quantity (the interest, positive), symbol,
// timestamp}. Timestamps are naive ISO date-times with milliseconds, ids strings of digits.

import { BorrowLendEvent, type BorrowLendRec } from '../../engine/bus/types.js';
import { Errors } from '../errors.js';
import { sendError, sendJson, type Route } from '../front/http.js';
import type { FrontContext } from '../front/context.js';
import { formatFraction } from '../margin-config.js';
import { formatDecimal } from '../decimal.js';
import { isoMillis } from '../wire/market-codec.js';
import { isError, parseIdParam, parsePage } from '../wire/history-query.js';
import type { ApiError } from '../errors.js';

const MOVE_NAMES: Record<number, string> = {
  [BorrowLendEvent.Borrow]: 'Borrow',
  [BorrowLendEvent.BorrowRepay]: 'BorrowRepay',
  [BorrowLendEvent.Lend]: 'Lend',
  [BorrowLendEvent.LendRedeem]: 'LendRedeem',
};
const MOVE_EVENTS = new Map(Object.entries(MOVE_NAMES).map(([event, name]) => [name, Number(event)]));
const HOUR_MS = 3_600_000;
/** The source of every move today: the account's own request. */
const MANUAL_SOURCE = 'Manual';

/** The asset id of the first of `names` given as a query parameter: undefined for none, or the error. */
function assetParam(front: FrontContext, query: URLSearchParams, names: string[]): number | undefined | ApiError {
  for (const name of names) {
    const symbol = query.get(name);
    if (symbol === null) continue;
    const asset = front.assetsBySymbol.get(symbol);
    return asset ? front.config.assets.indexOf(asset) : Errors.invalidAsset(symbol.slice(0, 20));
  }
  return undefined;
}

export function moveJson(front: FrontContext, r: BorrowLendRec): Record<string, unknown> {
  const asset = front.config.assets[r.assetId];
  return {
    eventType: MOVE_NAMES[r.event],
    positionId: String(r.positionId),
    positionQuantity: formatDecimal(r.lentUnits - r.borrowedUnits, asset.decimals),
    quantity: formatDecimal(r.quantityUnits, asset.decimals),
    source: MANUAL_SOURCE,
    symbol: asset.symbol,
    timestamp: isoMillis(r.timeUs),
    spotMarginOrderId: null,
  };
}

export function interestJson(front: FrontContext, r: BorrowLendRec): Record<string, unknown> {
  const asset = front.config.assets[r.assetId];
  return {
    paymentType: r.event === BorrowLendEvent.BorrowInterest ? 'Borrow' : 'Lend',
    interestRate: formatFraction(BigInt(r.rate)),
    interval: HOUR_MS,
    marketSymbol: asset.symbol,
    positionId: String(r.positionId),
    quantity: formatDecimal(r.quantityUnits, asset.decimals),
    symbol: asset.symbol,
    timestamp: isoMillis(r.timeUs),
  };
}

export function borrowLendHistoryRoutes(front: FrontContext): Route[] {
  return [
    {
      method: 'get',
      path: '/wapi/v1/history/borrowLend',
      instruction: 'borrowHistoryQueryAll',
      handle: (ctx, input) => {
        const page = parsePage(input.query);
        const positionId = parseIdParam(input.query, 'positionId');
        const assetId = assetParam(front, input.query, ['symbol']);
        for (const value of [page, positionId, assetId]) if (isError(value)) return sendError(ctx, value);
        const type = input.query.get('type');
        const event = type === null ? undefined : MOVE_EVENTS.get(type);
        if (type !== null && event === undefined) return sendError(ctx, Errors.invalid('type must be Borrow, BorrowRepay, Lend or LendRedeem'));
        const sources = input.query.get('sources');
        if (sources !== null && !sources.split(',').includes(MANUAL_SOURCE)) return sendJson(ctx, 200, '[]');
        const items = front.accountHistory.borrowLendHistory(input.accountId, 'bl', (r) => (event === undefined || r.event === event)
          && (assetId === undefined || r.assetId === assetId) && (positionId === undefined || r.positionId === positionId), page as never);
        sendJson(ctx, 200, JSON.stringify(items.map((r) => moveJson(front, r))));
      },
    },
    {
      method: 'get',
      path: '/wapi/v1/history/interest',
      instruction: 'interestHistoryQueryAll',
      handle: (ctx, input) => {
        const page = parsePage(input.query);
        const positionId = parseIdParam(input.query, 'positionId');
        const assetId = assetParam(front, input.query, ['asset', 'symbol']);
        for (const value of [page, positionId, assetId]) if (isError(value)) return sendError(ctx, value);
        const source = input.query.get('source');
        if (source !== null && source !== 'BorrowLend' && source !== 'UnrealizedPnl') return sendError(ctx, Errors.invalid('source must be BorrowLend or UnrealizedPnl'));
        if (source === 'UnrealizedPnl') return sendJson(ctx, 200, '[]');
        const items = front.accountHistory.borrowLendHistory(input.accountId, 'bi', (r) => (assetId === undefined || r.assetId === assetId)
          && (positionId === undefined || r.positionId === positionId), page as never);
        sendJson(ctx, 200, JSON.stringify(items.map((r) => interestJson(front, r))));
      },
    },
  ];
}
