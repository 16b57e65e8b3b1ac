// GET /api/v1/assets, /api/v1/markets, /api/v1/market: the configured assets and markets (SPOT
// and PERP) in the wire shapes of the reference (§3.1). Only a market's orderBookState changes while the
// server runs (the operator's SetMarketState, seen through this thread's read model), so each
// body is rendered once per state.
//
// Fields for features not built yet are null rather than invented: impact and mark-price bands,
// a spot market's margin functions and funding. A PERP market shows its imfFunction/mmfFunction,
// fundingInterval (integer ms), funding rate bounds (bps) and openInterestLimit as the venue
// does, and its positionLimitWeight (the configured weight in every account's position limit,
// engine/core/perp/position-limit.ts; "1" when the market names none; null for a spot market,
// which holds no position). The price-band multipliers are the ones the engine
// enforces on limit prices. Tokens report deposits disabled because nothing watches a chain
// (balances arrive through the operator's deposit command) and withdrawals enabled: they leave
// the account at once and a simulated chain confirms them (src/routes/capital-transfers.ts).

import type { AssetConfig, MarketInfo } from '../config.js';
import { formatFraction } from '../margin-config.js';
import type { MarginFunctionSpec } from '../../engine/bus/margin-params.js';
import { sendError, sendJson, type Route } from '../front/http.js';
import { Errors } from '../errors.js';
import { isError, marketTypesSelected } from '../wire/history-query.js';
import { ORDER_BOOK_STATE } from '../wire/enums.js';
import type { FrontContext } from '../front/context.js';
import { OrderBookState, POSITION_LIMIT_WEIGHT_ONE } from '../../engine/bus/types.js';

function canonical(text: string): string {
  return text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
}

/** The wire's marketType of a configured market. */
export function marketTypeOf(market: MarketInfo): 'SPOT' | 'PERP' {
  return market.spec.perp === undefined ? 'SPOT' : 'PERP';
}

function marginFunctionJson(f: MarginFunctionSpec): Record<string, string> {
  return { type: 'sqrt', base: formatFraction(f.base), factor: formatFraction(f.factor) };
}

/** A perpetual's fields of the Market shape (null for a spot market). */
function perpFields(market: MarketInfo): Record<string, unknown> {
  const perp = market.spec.perp;
  if (perp === undefined) {
    return { imfFunction: null, mmfFunction: null, fundingInterval: null, fundingRateUpperBound: null, fundingRateLowerBound: null, openInterestLimit: null };
  }
  return {
    imfFunction: marginFunctionJson(perp.imf),
    mmfFunction: marginFunctionJson(perp.mmf),
    fundingInterval: perp.fundingIntervalMs,
    fundingRateUpperBound: String(perp.fundingRateUpperBoundBps),
    fundingRateLowerBound: String(perp.fundingRateLowerBoundBps),
    openInterestLimit: canonical(market.openInterestLimit ?? '0'),
  };
}

export function marketJson(market: MarketInfo, orderBookState: OrderBookState = OrderBookState.Open): Record<string, unknown> {
  return {
    symbol: market.symbol,
    baseSymbol: market.baseSymbol,
    quoteSymbol: market.quoteSymbol,
    marketType: marketTypeOf(market),
    filters: {
      price: {
        minPrice: canonical(market.minPrice),
        maxPrice: canonical(market.maxPrice),
        tickSize: canonical(market.tickSize),
        maxMultiplier: canonical(market.maxMultiplier),
        minMultiplier: canonical(market.minMultiplier),
        maxImpactMultiplier: null,
        minImpactMultiplier: null,
        meanMarkPriceBand: null,
        meanPremiumBand: null,
        borrowEntryFeeMaxMultiplier: null,
        borrowEntryFeeMinMultiplier: null,
      },
      quantity: {
        minQuantity: canonical(market.minQuantity),
        maxQuantity: canonical(market.maxQuantity),
        stepSize: canonical(market.stepSize),
      },
    },
    ...perpFields(market),
    orderBookState: ORDER_BOOK_STATE.name(orderBookState),
    createdAt: market.createdAt,
    visible: true,
    positionLimitWeight: market.spec.perp === undefined ? null : formatFraction(market.spec.perp.positionLimitWeight ?? POSITION_LIMIT_WEIGHT_ONE),
    rwaMarketType: null,
  };
}

export function assetJson(asset: AssetConfig): Record<string, unknown> {
  return {
    symbol: asset.symbol,
    displayName: asset.displayName,
    coingeckoId: null,
    tokens: [
      {
        displayName: asset.displayName,
        blockchain: asset.blockchain,
        contractAddress: null,
        depositEnabled: false,
        minimumDeposit: '0',
        withdrawEnabled: true,
        minimumWithdrawal: '0',
        maximumWithdrawal: null,
        withdrawalFee: '0',
        nativeDecimals: asset.decimals,
      },
    ],
  };
}

export function marketRoutes(front: FrontContext): Route[] {
  const assetsBody = JSON.stringify(front.config.assets.map(assetJson));
  // Bodies are rendered once per order book state and reused until the operator changes it.
  const rendered = front.config.markets.map(() => ({ state: -1, body: '' }));
  const marketBody = (market: MarketInfo): string => {
    const state = front.data.books[market.spec.marketId].orderBookState;
    const cache = rendered[market.spec.marketId];
    if (cache.state !== state) {
      cache.state = state;
      cache.body = JSON.stringify(marketJson(market, state));
    }
    return cache.body;
  };
  const marketsBody = (types: Set<string> | null): string =>
    `[${front.config.markets.filter((m) => types === null || types.has(marketTypeOf(m))).map(marketBody).join(',')}]`;
  const marketsBySymbol = new Map(front.config.markets.map((m) => [m.symbol, m]));
  return [
    { method: 'get', path: '/api/v1/assets', handle: (ctx) => sendJson(ctx, 200, assetsBody) },
    {
      method: 'get',
      path: '/api/v1/markets',
      handle: (ctx, input) => {
        // The same marketType rule as every other route: any case, repeatable; absent: every market.
        const types = marketTypesSelected(input.query);
        if (isError(types)) sendError(ctx, types);
        else sendJson(ctx, 200, marketsBody(types));
      },
    },
    {
      method: 'get',
      path: '/api/v1/market',
      handle: (ctx, input) => {
        const symbol = input.query.get('symbol') ?? '';
        const market = marketsBySymbol.get(symbol);
        if (market === undefined) sendError(ctx, Errors.invalidMarket(symbol.slice(0, 40)));
        else sendJson(ctx, 200, marketBody(market));
      },
    },
  ];
}
