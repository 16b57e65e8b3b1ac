// GET /api/v1/borrowLend/markets/history (public): each pool's rates, totals and utilization over
// the last day, week, month or year, from the samples the engine writes after every hour of
// interest (LendPoolSampleRecord; engine/core/margin/borrow-lend.ts) and the journal worker keeps
// in LMDB (engine/store/history-borrow-lend.ts), never from engine memory.
//
// Query: interval (required: 1d, 1w, 1month = 30 days, 1year = 365 days, back from now), symbol
// (an asset symbol, optional: every pool without it; unknown: INVALID_ASSET; an asset without a
// pool lists nothing). Items oldest first, pools in asset order within an hour:
// {borrowInterestRate, borrowedQuantity, lendInterestRate, lentQuantity, symbol, timestamp (ISO
// 8601 of the hour, as GET /api/v1/borrowLend/markets writes its timestamp), utilization}; rates
// annual, utilization rounded down. The venue's example item has no symbol; it is added so a
// listing of every pool can be told apart.
//
// Choice where the venue is silent: a pool is sampled at the hours the engine's interest timer
// runs, that is while some account lends or borrows anything; an hour with no position anywhere
// has no sample (the pools then stand still: nothing lent, nothing borrowed, the base rate).

import type { LendPoolSampleRec } from '../../engine/bus/types.js';
import { Errors } from '../errors.js';
import { sendError, sendJson, type Route } from '../front/http.js';
import type { FrontContext } from '../front/context.js';
import { formatFraction } from '../margin-config.js';
import { formatDecimal } from '../decimal.js';

const HOUR_US = 3_600_000_000;
const INTERVAL_HOURS: Record<string, number> = { '1d': 24, '1w': 24 * 7, '1month': 24 * 30, '1year': 24 * 365 };

export function poolSampleJson(front: FrontContext, r: LendPoolSampleRec): Record<string, unknown> {
  const asset = front.config.assets[r.assetId];
  return {
    borrowInterestRate: formatFraction(BigInt(r.borrowRate)),
    borrowedQuantity: formatDecimal(r.borrowedUnits, asset.decimals),
    lendInterestRate: formatFraction(BigInt(r.lendRate)),
    lentQuantity: formatDecimal(r.lentUnits, asset.decimals),
    symbol: asset.symbol,
    timestamp: new Date(Math.floor(r.hourUs / 1000)).toISOString(),
    utilization: formatFraction(BigInt(r.utilization)),
  };
}

/** Every pool's samples (or one asset's) from `fromUs` to `toUs`, oldest first, pools in asset order within an hour. */
export function poolHistory(front: FrontContext, assetIds: number[], fromUs: number, toUs: number): LendPoolSampleRec[] {
  const samples = assetIds.flatMap((assetId) => front.accountHistory.lendPoolSamples(assetId, fromUs, toUs));
  return samples.sort((a, b) => a.hourUs - b.hourUs);
}

export function borrowLendMarketHistoryRoutes(front: FrontContext): Route[] {
  const pooled = front.config.margin.lendPools.map((l) => l.spec.assetId).sort((a, b) => a - b);
  return [{
    method: 'get',
    path: '/api/v1/borrowLend/markets/history',
    handle: (ctx, input) => {
      const interval = input.query.get('interval');
      const hours = interval === null ? undefined : INTERVAL_HOURS[interval];
      if (hours === undefined) return sendError(ctx, Errors.invalid('interval must be 1d, 1w, 1month or 1year'));
      const symbol = input.query.get('symbol');
      let assetIds = pooled;
      if (symbol !== null) {
        const asset = front.assetsBySymbol.get(symbol);
        if (!asset) return sendError(ctx, Errors.invalidAsset(symbol.slice(0, 20)));
        const assetId = front.config.assets.indexOf(asset);
        assetIds = pooled.filter((id) => id === assetId);
      }
      const nowUs = Date.now() * 1000;
      const items = poolHistory(front, assetIds, nowUs - hours * HOUR_US, nowUs);
      sendJson(ctx, 200, JSON.stringify(items.map((r) => poolSampleJson(front, r))));
    },
  }];
}
