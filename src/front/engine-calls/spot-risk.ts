// Spot risk arithmetic that belongs to the engine but is computed on the front thread today,
// gathered here so there is one copy of each rule and one place to replace: collateral value,
// maximum order quantity, and dust conversion (which runs several engine commands).
//
// Why here and not in the engine: the engine answers none of these as a query yet. Each function
// starts from the engine's live balances (QueryBalances, in order with the account's commands)
// and adds inputs only the front thread has: the mark price (the last trade price of the asset's
// USDC market, read from LMDB) and, for a market bid, the front's copy of the order book. Under
// margin these become the engine's own rules (collateral weights, liabilities, open positions),
// and each function here should turn into a single engine query; until then the routes reach them
// through the engine calls (index.ts) and only format the answers.
//
// Every value is an integer (bigint where a balance times a price could pass 2^53).

import { Side } from '../../../engine/bus/types.js';
import { Errors } from '../../errors.js';
import type { MarketInfo } from '../../config.js';
import type { FrontContext } from '../context.js';
import type { Balances, EngineCalls, Reply } from './index.js';

/** Dust converts to USDC (the spec's rule) and collateral is valued in it: through <ASSET>_USDC. */
export const DUST_PAYOUT_SYMBOL = 'USDC';

/** The <ASSET>_USDC market of an asset, the one dust converts and collateral values through. */
export function usdcMarketOf(front: FrontContext, assetId: number): MarketInfo | undefined {
  return front.config.markets.find((m) => m.spec.baseAssetId === assetId && m.quoteSymbol === DUST_PAYOUT_SYMBOL);
}

/** Value of `units` of an asset in USDC units at the market's price: exact, rounded down. */
function usdcValue(market: MarketInfo, units: number, priceTicks: number): bigint {
  return (BigInt(units) * BigInt(priceTicks) * BigInt(market.spec.quoteUnitsPerTickLot)) / BigInt(market.spec.baseUnitsPerLot);
}

/** One asset's line of the collateral answer, in the asset's units and USDC units. */
export interface AssetCollateral {
  assetId: number;
  availableUnits: number;
  lockedUnits: number;
  /** The mark price in ticks of the asset's USDC market; 0 without one (valued at 0); null for USDC itself (1). */
  markTicks: number | null;
  markMarket: MarketInfo | undefined;
  /** Value of available + locked, and of available alone. */
  totalValue: bigint;
  availableValue: bigint;
}

export interface Collateral {
  assets: AssetCollateral[];
  assetsValue: bigint;
  availableValue: bigint;
  lockedValue: bigint;
}

/**
 * Spot collateral: every asset weighted 1 (the haircuts GET /api/v1/collateral publishes are not
 * applied to spot-only accounts), valued at the last trade price
 * of its <ASSET>_USDC market (USDC at 1); an asset whose market has not traded is valued at 0.
 */
export function collateralOf(front: FrontContext, balances: Balances): Collateral {
  const out: Collateral = { assets: [], assetsValue: 0n, availableValue: 0n, lockedValue: 0n };
  front.config.assets.forEach((asset, assetId) => {
    const [availableUnits, lockedUnits] = balances[assetId];
    const isQuote = asset.symbol === DUST_PAYOUT_SYMBOL;
    const market = isQuote ? undefined : usdcMarketOf(front, assetId);
    const markTicks = isQuote ? null : market ? front.accountHistory.lastPriceTicks(market.spec.marketId) : 0;
    const value = (units: number): bigint => {
      if (markTicks === null) return BigInt(units);
      return market && markTicks > 0 ? usdcValue(market, units, markTicks) : 0n;
    };
    const totalValue = value(availableUnits + lockedUnits);
    const availableValue = value(availableUnits);
    out.assets.push({ assetId, availableUnits, lockedUnits, markTicks, markMarket: market, totalValue, availableValue });
    out.assetsValue += totalValue;
    out.availableValue += availableValue;
    out.lockedValue += totalValue - availableValue;
  });
  return out;
}

/**
 * Whole lots the account could order now; 0 when it can afford none. An ask can sell its
 * available base; a limit bid can buy what its available quote pays at the price; a market bid
 * (priceTicks 0) what its available quote buys by walking the current asks. Rounded down to whole
 * lots and capped at the market's maximum.
 */
export function maxOrderLots(front: FrontContext, market: MarketInfo, side: Side, priceTicks: number, balances: Balances): number {
  const spec = market.spec;
  let lots: number;
  if (side === Side.Ask) {
    lots = Math.floor(balances[spec.baseAssetId][0] / spec.baseUnitsPerLot);
  } else if (priceTicks > 0) {
    lots = Number(BigInt(balances[spec.quoteAssetId][0]) / (BigInt(priceTicks) * BigInt(spec.quoteUnitsPerTickLot)));
  } else {
    let budget = BigInt(balances[spec.quoteAssetId][0]);
    lots = 0;
    for (const [askTicks, askLots] of front.data.books[spec.marketId].levels(Side.Ask, 1000)) {
      const lotCost = BigInt(askTicks) * BigInt(spec.quoteUnitsPerTickLot);
      const affordable = Number(budget / lotCost);
      const take = Math.min(affordable, askLots);
      lots += take;
      budget -= BigInt(take) * lotCost;
      if (take < askLots) break;
    }
  }
  return Math.min(lots, spec.maxQtyLots);
}

/**
 * Converts the account's dust (spec: a balance below the minimum tradable quantity, not USDC, not
 * in open orders) through each asset's USDC market, one ConvertDust command per asset, one after
 * another; `only` converts that asset whatever its size (the engine still checks it is dust).
 * Ok once all are done; the first refusal stops the rest.
 */
export function convertDust(front: FrontContext, engine: EngineCalls, reply: Reply<void>, accountId: number, only: number | undefined): void {
  engine.balances({
    fail: reply.fail,
    ok: (balances) => {
      const jobs: Array<{ market: MarketInfo; units: number }> = [];
      balances.forEach(([available, locked], assetId) => {
        if (only !== undefined && assetId !== only) return;
        const market = usdcMarketOf(front, assetId);
        if (!market) return;
        const eligible = available > 0 && locked === 0 && available < market.spec.minQtyLots * market.spec.baseUnitsPerLot;
        if (eligible || only !== undefined) jobs.push({ market, units: available });
      });
      if (jobs.length === 0) return reply.fail(Errors.preconditionFailed('No dust balances to convert'));
      const next = (index: number): void => {
        if (index === jobs.length) return reply.ok();
        const job = jobs[index];
        engine.convertDust({ fail: reply.fail, ok: () => next(index + 1) }, accountId, job.market.spec.marketId, job.units);
      };
      next(0);
    },
  }, accountId);
}
