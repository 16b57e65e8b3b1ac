// GET /api/v1/assets, /api/v1/markets, /api/v1/market: the configured assets and spot markets in
// the wire shapes of the reference (§3.1). The bodies never change while the server runs, so they
// are rendered once per thread.
//
// Fields for features not built yet are null rather than invented: impact and mark-price bands,
// margin functions and funding (spot only). The price-band multipliers are the ones the engine
// enforces on limit prices. Tokens report deposits disabled because nothing watches a chain
// (balances arrive through the operator's deposit command) and withdrawals enabled: they leave
// the account at once and a simulated chain confirms them (src/routes/capital-transfers.ts).

import type { AssetConfig, MarketInfo } from '../config.js';
import { sendError, sendJson, type Route } from '../front/http.js';
import { Errors } from '../errors.js';
import type { FrontContext } from '../front/context.js';

function canonical(text: string): string {
  return text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
}

export function marketJson(market: MarketInfo): Record<string, unknown> {
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
    orderBookState: 'Open',
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

const MARKET_TYPES = new Set(['SPOT', 'PERP', 'IPERP', 'DATED', 'PREDICTION', 'RFQ']);

export function marketRoutes(front: FrontContext): Route[] {
  const assetsBody = JSON.stringify(front.config.assets.map(assetJson));
  const marketsBody = JSON.stringify(front.config.markets.map(marketJson));
  const marketBodies = new Map(front.config.markets.map((m) => [m.symbol, JSON.stringify(marketJson(m))]));
  return [
    { method: 'get', path: '/api/v1/assets', handle: (ctx) => sendJson(ctx, 200, assetsBody) },
    {
      method: 'get',
      path: '/api/v1/markets',
      handle: (ctx, input) => {
        const types = input.query.getAll('marketType');
        for (const type of types) {
          if (!MARKET_TYPES.has(type)) {
            sendError(ctx, Errors.invalid(`Invalid marketType: ${type.slice(0, 20)}`));
            return;
          }
        }
        // Every configured market is SPOT; a filter without SPOT selects none of them.
        sendJson(ctx, 200, types.length === 0 || types.includes('SPOT') ? marketsBody : '[]');
      },
    },
    {
      method: 'get',
      path: '/api/v1/market',
      handle: (ctx, input) => {
        const symbol = input.query.get('symbol') ?? '';
        const body = marketBodies.get(symbol);
        if (body === undefined) sendError(ctx, Errors.invalidMarket(symbol.slice(0, 40)));
        else sendJson(ctx, 200, body);
      },
    },
  ];
}
