// GET /wapi/v1/history/borrowLend (borrowHistoryQueryAll), /wapi/v1/history/interest
// (interestHistoryQueryAll) and /wapi/v1/history/borrowLend/positions
// (borrowPositionHistoryQueryAll): the signer's borrow/lend moves, interest payments and
// positions, read from LMDB (engine/store/history-account.ts and history-borrow-lend.ts: the
// engine's BorrowLend records as the journal worker wrote them), never from engine memory.
//
// Filters: type (Borrow, BorrowRepay, Lend, LendRedeem), sources (one or comma-separated, of the
// move sources below; another name lists nothing), positionId, symbol / asset (an asset symbol;
// unknown: INVALID_ASSET), source (BorrowLend; UnrealizedPnl lists nothing: there are no
// perpetual positions), side (Borrow, Lend) and state (Open, Closed) of positions, limit/offset,
// sortDirection (default Desc).
//
// Sources (the venue's BorrowLendSource): Manual (POST /api/v1/borrowLend), AutoLend and
// AutoBorrowRepay (a fill's proceeds lent or repaid by the order's flag), and AutoBorrow and
// AutoLendRedeem (an order's hold or a withdrawal funded by its flag: named after their flags as
// the venue names the other two; the venue's published lists of the enum are partial), and
// Liquidation (the liquidation waterfall's redemptions and repayments, and a bankrupt borrow
// closed by the insurance fund: the venue's lists show no name for them, and Liquidation is the
// name its liquidation documents use for the process).
//
// Shapes: a move is {eventType, positionId, positionQuantity (the position after it, signed: lent
// positive, borrowed negative), quantity, source, symbol, timestamp, spotMarginOrderId null}; an
// interest payment {paymentType (Borrow or Lend), interestRate (annual), interval (ms of the hour
// charged), marketSymbol (the asset), positionId, quantity (the interest, positive), symbol,
// timestamp}; a position {positionId, quantity (lent or borrowed now, "0" once closed), symbol,
// cumulativeInterest (signed: earned positive, paid negative, as GET /api/v1/borrowLend/positions
// shows it), avgInterestRate (the mean annual rate of its hours of interest, "0" before any),
// createdAt, source (of the move that opened it), side}. Timestamps are naive ISO date-times with
// milliseconds, ids strings of digits.

import { BorrowLendEvent, BorrowLendSource, type BorrowLendRec } from '../../engine/bus/types.js';
import type { BorrowLendPositionValue } from '../../engine/store/history-borrow-lend.js';
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
/** The wire name of each BorrowLendSource of a move. */
const SOURCE_NAMES: Record<number, string> = {
  [BorrowLendSource.Manual]: 'Manual',
  [BorrowLendSource.Interest]: 'Interest',
  [BorrowLendSource.AutoBorrow]: 'AutoBorrow',
  [BorrowLendSource.AutoLendRedeem]: 'AutoLendRedeem',
  [BorrowLendSource.AutoBorrowRepay]: 'AutoBorrowRepay',
  [BorrowLendSource.AutoLend]: 'AutoLend',
  [BorrowLendSource.Liquidation]: 'Liquidation',
  [BorrowLendSource.LiquidationAdl]: 'LiquidationAdl',
  [BorrowLendSource.AdlProvider]: 'AdlProvider',
};
const SOURCES_BY_NAME = new Map(Object.entries(SOURCE_NAMES).map(([source, name]) => [name, Number(source)]));
const SIDES = new Set(['Borrow', 'Lend']);
const STATES = new Set(['Open', 'Closed']);

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
    source: SOURCE_NAMES[r.source] ?? 'Manual',
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

export function positionHistoryJson(front: FrontContext, p: BorrowLendPositionValue): Record<string, unknown> {
  const asset = front.config.assets[p.assetId];
  return {
    positionId: String(p.positionId),
    quantity: formatDecimal(p.quantityUnits, asset.decimals),
    symbol: asset.symbol,
    cumulativeInterest: formatDecimal(p.side === 'Borrow' ? -p.interestUnits : p.interestUnits, asset.decimals),
    avgInterestRate: formatFraction(BigInt(p.rateMean)),
    createdAt: isoMillis(p.openedUs),
    source: p.source,
    side: p.side,
  };
}

/** Which sources of `sources` (comma-separated names) a move may have; unknown names select nothing. */
function sourcesParam(query: URLSearchParams): Set<number> | undefined {
  const sources = query.get('sources');
  if (sources === null) return undefined;
  return new Set(sources.split(',').flatMap((name) => SOURCES_BY_NAME.get(name) ?? []));
}

function positionsRoute(front: FrontContext): Route {
  return {
    method: 'get',
    path: '/wapi/v1/history/borrowLend/positions',
    instruction: 'borrowPositionHistoryQueryAll',
    handle: (ctx, input) => {
      const page = parsePage(input.query);
      const assetId = assetParam(front, input.query, ['symbol']);
      for (const value of [page, assetId]) if (isError(value)) return sendError(ctx, value);
      const side = input.query.get('side');
      const state = input.query.get('state');
      if (side !== null && !SIDES.has(side)) return sendError(ctx, Errors.invalid('side must be Borrow or Lend'));
      if (state !== null && !STATES.has(state)) return sendError(ctx, Errors.invalid('state must be Open or Closed'));
      const items = front.accountHistory.borrowLendPositions(input.accountId, (p) => (assetId === undefined || p.assetId === assetId)
        && (side === null || p.side === side) && (state === null || (state === 'Open') === (p.closedUs === null)), page as never);
      sendJson(ctx, 200, JSON.stringify(items.map((p) => positionHistoryJson(front, p))));
    },
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
        const sources = sourcesParam(input.query);
        const items = front.accountHistory.borrowLendHistory(input.accountId, 'bl', (r) => (event === undefined || r.event === event)
          && (sources === undefined || sources.has(r.source))
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
    positionsRoute(front),
  ];
}
