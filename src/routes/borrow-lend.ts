// Borrow and lend: GET /api/v1/borrowLend/markets (public), GET /api/v1/borrowLend/positions
// (borrowLendPositionQuery), POST /api/v1/borrowLend (borrowLendExecute) and GET
// /api/v1/borrowLend/position/liquidationPrice (signed, see below). The figures are the
// engine's (engine/core/margin/borrow-lend.ts: pools, positions, rates, utilization, the mark
// price); the pool parameters are the configuration's, rendered from the integers the engine
// applies (src/margin-config.ts). This file only validates and formats.
//
// Choices where the spec is silent:
// - Side: Lend on a borrowed asset repays (at most the borrow: LEND_REQUIRES_BORROW_REPAY
//   beyond), Borrow on a lent asset redeems (at most the lend: BORROW_REQUIRES_LEND_REDEEM
//   beyond); answered with an empty 200 as the venue does.
// - Positions: netQuantity is signed (lent positive, borrowed negative), cumulativeInterest too
//   (earned positive, paid negative); a lend has no exposure (netExposureQuantity "0"), a borrow's
//   exposure is its quantity at the mark price, with imf and mmf at that notional. There is no
//   liquidation engine yet, so estLiquidationPrice is null. id is the position id: the sequence
//   of the command that opened it.
// - Liquidation price: query `borrow` (required), the standard base64 of the borrow/lend execute
//   payload's JSON {quantity, side, symbol}; `subaccountId` is refused (no subaccounts). The venue
//   documents no signing instruction for it; it is signed with an empty one
//   (`instruction=&borrow=…`), as ccxt signs it. The engine (engine/core/margin/liquidation-price.ts)
//   takes the account as it would be after that BorrowLend and answers {liquidationPrice,
//   markPrice}: the asset's mark at which the maintenance margin ratio reaches 100 %, everything
//   else at its mark, and the mark now, USDC per whole unit at 9 decimals at most; "0" where none
//   exists (no borrow anywhere, USDC itself, an asset without a mark).
// - Markets: assetMarkPrice is the engine's mark (the guarded reference price of the asset's USDC
//   market; "1" for USDC, "0" when it has none yet); timestamp is the engine time of the answer.

import { BorrowLendSide, LendPoolStateCode } from '../../engine/bus/types.js';
import type { CollateralSpec } from '../../engine/bus/margin-params.js';
import { Errors, type ApiError } from '../errors.js';
import { isError } from '../wire/history-query.js';
import { sendError, sendJson, type Route } from '../front/http.js';
import type { FrontContext } from '../front/context.js';
import { engineCalls, replyTo, type BorrowLendView, type LendPoolView } from '../front/engine-calls/index.js';
import { formatFraction } from '../margin-config.js';
import { formatDecimal, formatDecimalBig } from '../decimal.js';
import { parseAssetUnits } from '../wire/market-codec.js';
import { marginFunctionJson } from './collateral.js';

const POOL_STATE_NAMES: Record<number, string> = {
  [LendPoolStateCode.Open]: 'Open',
  [LendPoolStateCode.Closed]: 'Closed',
  [LendPoolStateCode.RepayOnly]: 'RepayOnly',
};

const SIDES: Record<string, BorrowLendSide> = { Borrow: BorrowLendSide.Borrow, Lend: BorrowLendSide.Lend };

/** The mark price as text: "1" for USDC, the market's price for the ticks, "0" without one. */
export function markText(front: FrontContext, assetId: number, marketId: number, markTicks: number): string {
  if (front.config.assets[assetId]?.symbol === 'USDC') return '1';
  const market = front.config.markets.find((m) => m.spec.marketId === marketId);
  return market && markTicks > 0 ? formatDecimal(markTicks * market.tickUnits, market.priceDecimals) : '0';
}

/** units × mark in USDC units, rounded down (the notional shown; the engine's own checks round against the account). */
function notionalUnits(front: FrontContext, assetId: number, marketId: number, markTicks: number, units: number): bigint {
  if (front.config.assets[assetId]?.symbol === 'USDC') return BigInt(units);
  const market = front.config.markets.find((m) => m.spec.marketId === marketId);
  if (!market || markTicks <= 0) return 0n;
  return (BigInt(units) * BigInt(markTicks) * BigInt(market.spec.quoteUnitsPerTickLot)) / BigInt(market.spec.baseUnitsPerLot);
}

export function lendMarketJson(front: FrontContext, p: LendPoolView): Record<string, unknown> {
  const asset = front.config.assets[p.assetId];
  const spec = front.config.margin.lendPools.find((l) => l.spec.assetId === p.assetId)!.spec;
  const units = (value: bigint | number) => formatDecimalBig(BigInt(value), asset.decimals);
  return {
    state: POOL_STATE_NAMES[p.state],
    assetMarkPrice: markText(front, p.assetId, p.marketId, p.markTicks),
    borrowInterestRate: formatFraction(BigInt(p.borrowRate)),
    borrowedQuantity: units(p.borrowedUnits),
    fee: formatFraction(spec.fee),
    lendInterestRate: formatFraction(BigInt(p.lendRate)),
    lentQuantity: units(p.lentUnits),
    maxUtilization: formatFraction(spec.maxUtilization),
    openBorrowLendLimit: units(spec.openBorrowLendLimitUnits),
    optimalUtilization: formatFraction(spec.optimalUtilization),
    symbol: asset.symbol,
    timestamp: new Date(Math.floor(p.timeUs / 1000)).toISOString(),
    throttleUtilizationThreshold: formatFraction(spec.throttleUtilizationThreshold),
    throttleUtilizationBound: formatFraction(spec.throttleUtilizationBound),
    throttleUpdateFraction: formatFraction(spec.throttleUpdateFraction),
    utilization: formatFraction(BigInt(p.utilization)),
    stepSize: units(spec.stepUnits),
  };
}

export function lendPositionJson(front: FrontContext, p: BorrowLendView): Record<string, unknown> {
  const asset = front.config.assets[p.assetId];
  const usdc = front.config.assets.find((a) => a.symbol === 'USDC');
  const collateral: CollateralSpec | undefined = front.config.margin.collateral.find((c) => c.spec.assetId === p.assetId)?.spec;
  const borrowing = p.borrowedUnits > 0;
  const exposure = borrowing ? p.borrowedUnits : 0;
  return {
    cumulativeInterest: formatDecimal(borrowing ? -p.interestUnits : p.interestUnits, asset.decimals),
    id: String(p.positionId),
    imf: formatFraction(BigInt(p.imf)),
    imfFunction: collateral ? marginFunctionJson(collateral.imf) : null,
    markPrice: markText(front, p.assetId, p.marketId, p.markTicks),
    mmf: formatFraction(BigInt(p.mmf)),
    mmfFunction: collateral ? marginFunctionJson(collateral.mmf) : null,
    netExposureNotional: formatDecimalBig(notionalUnits(front, p.assetId, p.marketId, p.markTicks, exposure), usdc?.decimals ?? 0),
    netExposureQuantity: formatDecimal(exposure, asset.decimals),
    netQuantity: formatDecimal(p.lentUnits - p.borrowedUnits, asset.decimals),
    estLiquidationPrice: null,
    symbol: asset.symbol,
  };
}

/** The decimals of an engine price ×10^9 (USDC per whole unit). */
const PRICE_E9_DECIMALS = 9;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The liquidation price query's `borrow`: base64 of {quantity, side, symbol}, as the engine's assumed move. */
function parseBorrowPayload(front: FrontContext, text: string | null): { assetId: number; side: BorrowLendSide; quantityUnits: number } | ApiError {
  if (text === null) return Errors.invalid('borrow is required');
  // A '+' of the base64 text arrives as a space when the client did not percent-encode it.
  const base64 = text.replaceAll(' ', '+');
  let body: unknown;
  try {
    if (!BASE64.test(base64)) throw new Error('not base64');
    body = JSON.parse(Buffer.from(base64, 'base64').toString('utf8'));
  } catch {
    return Errors.invalid('borrow must be the base64 of a JSON borrow/lend payload {quantity, side, symbol}');
  }
  const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const side = typeof fields.side === 'string' ? SIDES[fields.side] : undefined;
  if (side === undefined) return Errors.invalid('side must be Borrow or Lend');
  if (typeof fields.symbol !== 'string') return Errors.invalid('symbol must be an asset symbol');
  const asset = front.assetsBySymbol.get(fields.symbol);
  if (!asset) return Errors.invalidAsset(fields.symbol.slice(0, 20));
  const units = parseAssetUnits(asset, fields.quantity);
  if (typeof units !== 'number') return units;
  return { assetId: front.config.assets.indexOf(asset), side, quantityUnits: units };
}

export function borrowLendRoutes(front: FrontContext): Route[] {
  const engine = engineCalls(front);
  return [
    {
      method: 'get',
      path: '/api/v1/borrowLend/markets',
      handle: (ctx) => engine.queryLendPools(replyTo(ctx, (pools) => sendJson(ctx, 200, JSON.stringify(pools.map((p) => lendMarketJson(front, p)))))),
    },
    {
      method: 'get',
      path: '/api/v1/borrowLend/positions',
      instruction: 'borrowLendPositionQuery',
      handle: (ctx, input) => engine.queryBorrowLendPositions(replyTo(ctx, (positions) => {
        sendJson(ctx, 200, JSON.stringify(positions.map((p) => lendPositionJson(front, p))));
      }), { accountId: input.accountId }),
    },
    {
      method: 'get',
      path: '/api/v1/borrowLend/position/liquidationPrice',
      instruction: '',
      handle: (ctx, input) => {
        if (input.query.get('subaccountId') !== null) return sendError(ctx, Errors.invalid('This account has no subaccounts'));
        const move = parseBorrowPayload(front, input.query.get('borrow'));
        if (isError(move)) return sendError(ctx, move);
        engine.queryLiquidationPrice(replyTo(ctx, (answer) => sendJson(ctx, 200, JSON.stringify({
          liquidationPrice: formatDecimal(answer.liquidationPriceE9, PRICE_E9_DECIMALS),
          markPrice: formatDecimal(answer.markPriceE9, PRICE_E9_DECIMALS),
        }))), { accountId: input.accountId, ...move });
      },
    },
    {
      method: 'post',
      path: '/api/v1/borrowLend',
      instruction: 'borrowLendExecute',
      handle: (ctx, input) => {
        const body = (input.body ?? {}) as Record<string, unknown>;
        const side = typeof body.side === 'string' ? SIDES[body.side] : undefined;
        if (side === undefined) return sendError(ctx, Errors.invalid('side must be Borrow or Lend'));
        if (typeof body.symbol !== 'string') return sendError(ctx, Errors.invalid('symbol must be an asset symbol'));
        const asset = front.assetsBySymbol.get(body.symbol);
        if (!asset) return sendError(ctx, Errors.invalidAsset(body.symbol.slice(0, 20)));
        const units = parseAssetUnits(asset, body.quantity);
        if (typeof units !== 'number') return sendError(ctx, units);
        engine.borrowLend(replyTo(ctx, () => sendJson(ctx, 200, '')), {
          accountId: input.accountId, assetId: front.config.assets.indexOf(asset), side, quantityUnits: units,
        });
      },
    },
  ];
}
