// GET /api/v1/assets, /api/v1/markets, /api/v1/market: the configured assets and spot markets in
// the wire shapes of the reference (§3.1). Only a market's orderBookState changes while the
// server runs (the operator's SetMarketState, seen through this thread's read model), so each
// body is rendered once per state.
//
// Fields for features not built yet are null rather than invented: impact and mark-price bands,
// margin functions and funding (spot only). The price-band multipliers are the ones the engine
// enforces on limit prices. Tokens report deposits disabled because nothing watches a chain
// (balances arrive through the operator's deposit command) and withdrawals enabled: they leave
// the account at once and a simulated chain confirms them (src/routes/capital-transfers.ts).

import type { AssetConfig, MarketInfo } from '../config.js';
import { sendError, sendJson, type Route } from '../front/http.js';
import { Errors } from '../errors.js';
import { isError, spotSelected } from '../wire/history-query.js';
import { ORDER_BOOK_STATE } from '../wire/enums.js';
import type { FrontContext } from '../front/context.js';
import { OrderBookState } from '../../engine/bus/types.js';

function canonical(text: string): string {
  return text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
}

export function marketJson(market: MarketInfo, orderBookState: OrderBookState = OrderBookState.Open): Record<string, unknown> {
  return {
    symbol: market.symbol,
    baseSymbol: market.baseSymbol,
    quoteSymbol: market.quoteSymbol,
    marketType: 'SPOT',
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
    imfFunction: null,
    mmfFunction: null,
    fundingInterval: null,
    fundingRateUpperBound: null,
    fundingRateLowerBound: null,
    openInterestLimit: null,
    orderBookState: ORDER_BOOK_STATE.name(orderBookState),
    createdAt: market.createdAt,
    visible: true,
    positionLimitWeight: null,
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
  const marketsBody = (): string => `[${front.config.markets.map(marketBody).join(',')}]`;
  const marketsBySymbol = new Map(front.config.markets.map((m) => [m.symbol, m]));
  return [
    { method: 'get', path: '/api/v1/assets', handle: (ctx) => sendJson(ctx, 200, assetsBody) },
    {
      method: 'get',
      path: '/api/v1/markets',
      handle: (ctx, input) => {
        // The same marketType rule as every other route: any case; every configured market is
        // SPOT, so a filter without SPOT selects none of them.
        const spot = spotSelected(input.query);
        if (isError(spot)) sendError(ctx, spot);
        else sendJson(ctx, 200, spot ? marketsBody() : '[]');
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
