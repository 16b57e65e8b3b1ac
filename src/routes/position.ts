// GET /api/v1/position (positionQuery): the signer's open perpetual positions in the venue's
// FuturePositionWithMargin shape, every figure from the engine's position query
// (engine/core/perp/query.ts: one margin summary, so a position shows the uPnL, exposure, IMF and
// MMF that admission and net equity use). Optional `symbol` (a PERP market: with no position
// there, 404 "Position not found" as the venue answers) and `marketType` (a filter without PERP
// selects nothing).
//
// Rendering: quantities in the underlying's decimals; money in USDC's; prices (entry, break-even,
// mark, estimated liquidation) as USDC per whole unit to 9 decimals, rounded toward zero.
// entryPrice = −C / size (the venue's rule: weighted average of increasing fills, kept by
// reductions, reset by a flip); breakEvenPrice = (fees − F − C) / size (entry adjusted for the
// futures fees the position paid and its funding F, negative paid); netCost = −C (positive long,
// negative short: ccxt reads the side from its sign). cumulativeFundingPayment is F, the funding
// the position paid (negative) or received since it opened (engine/core/perp/cumulative-funding.ts);
// cumulativeInterest is "0": the venue is removing it.

import { Errors } from '../errors.js';
import { sendError, sendJson, type Route } from '../front/http.js';
import type { FrontContext } from '../front/context.js';
import { engineCalls, replyTo, type PositionView } from '../front/engine-calls/index.js';
import type { MarketInfo } from '../config.js';
import { formatDecimal, formatDecimalBig } from '../decimal.js';
import { formatFraction } from '../margin-config.js';
import { isError, marketTypesSelected } from '../wire/history-query.js';
import { marginFunctionJson } from './collateral.js';

const PRICE_DECIMALS = 9;
const WIDE = 2n ** 53n;
const MARKET_ID_ALL = 0xffff;

const wide = (high: number, low: number): bigint => BigInt(high) * WIDE + BigInt(low);

/** quote units / base units as USDC per whole unit to 9 decimals, rounded toward zero ("0" for no size). */
function unitPrice(market: MarketInfo, quoteUnits: bigint, baseUnits: bigint): string {
  if (baseUnits === 0n) return '0';
  const e9 = (quoteUnits * 10n ** BigInt(market.baseDecimals + PRICE_DECIMALS)) / (baseUnits * 10n ** BigInt(market.quoteDecimals));
  return formatDecimalBig(e9, PRICE_DECIMALS);
}

export function positionJson(market: MarketInfo, p: PositionView): Record<string, unknown> {
  const perp = market.spec.perp!;
  const baseUnits = (lots: number) => formatDecimal(lots * market.spec.baseUnitsPerLot, market.baseDecimals);
  const money = (units: bigint) => formatDecimalBig(units, market.quoteDecimals);
  const cost = wide(p.costHigh, p.costLow);
  const sizeUnits = BigInt(p.netLots) * BigInt(market.spec.baseUnitsPerLot);
  return {
    breakEvenPrice: unitPrice(market, wide(p.feesHigh, p.feesLow) - BigInt(p.cumulativeFundingUnits) - cost, sizeUnits),
    cumulativeFundingPayment: money(BigInt(p.cumulativeFundingUnits)),
    cumulativeInterest: '0',
    entryPrice: unitPrice(market, -cost, sizeUnits),
    estLiquidationPrice: formatDecimalBig(BigInt(p.estLiquidationPriceE9), PRICE_DECIMALS),
    imf: formatFraction(BigInt(p.imf)),
    imfFunction: marginFunctionJson(perp.imf),
    markPrice: formatDecimalBig(BigInt(p.markPriceE9), PRICE_DECIMALS),
    mmf: formatFraction(BigInt(p.mmf)),
    mmfFunction: marginFunctionJson(perp.mmf),
    netCost: money(-cost),
    netExposureNotional: money(wide(p.exposureNotionalHigh, p.exposureNotionalLow)),
    netExposureQuantity: baseUnits(p.exposureLots),
    netQuantity: baseUnits(p.netLots),
    pnlRealized: money(wide(p.realizedHigh, p.realizedLow)),
    pnlUnrealized: money(wide(p.unrealizedHigh, p.unrealizedLow)),
    positionId: String(p.positionId),
    subaccountId: null,
    symbol: market.symbol,
    userId: p.accountId,
  };
}

export function positionRoutes(front: FrontContext): Route[] {
  const engine = engineCalls(front);
  return [
    {
      method: 'get',
      path: '/api/v1/position',
      instruction: 'positionQuery',
      handle: (ctx, input) => {
        const types = marketTypesSelected(input.query);
        if (isError(types)) return sendError(ctx, types);
        if (types !== null && !types.has('PERP')) return sendJson(ctx, 200, '[]');
        const symbol = input.query.get('symbol');
        let marketId = MARKET_ID_ALL;
        if (symbol !== null) {
          const market = front.config.markets.find((m) => m.symbol === symbol);
          if (market === undefined || market.spec.perp === undefined) return sendError(ctx, Errors.invalidMarket(symbol.slice(0, 40)));
          marketId = market.spec.marketId;
        }
        engine.queryPositions(replyTo(ctx, (positions) => {
          if (symbol !== null && positions.length === 0) return sendError(ctx, Errors.positionNotFound);
          sendJson(ctx, 200, JSON.stringify(positions.map((p) => positionJson(front.config.markets[p.marketId], p))));
        }), { accountId: input.accountId, marketId });
      },
    },
  ];
}
