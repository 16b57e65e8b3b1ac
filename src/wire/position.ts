// A perpetual position on the wire, from the engine's Position record (a QueryPositions row or a
// position event, engine/core/perp/position-events.ts): the REST FuturePositionWithMargin figures
// and the account.positionUpdate stream message, which carries the same figures under one-letter
// keys.
//
// Rendering: quantities in the underlying's decimals; money in USDC's; prices (entry, break-even,
// mark, estimated liquidation) as USDC per whole unit to 9 decimals, rounded toward zero.
// entryPrice = −C / size (the venue's rule: weighted average of increasing fills, kept by
// reductions, reset by a flip); breakEvenPrice = (fees − F − C) / size (entry adjusted for the
// futures fees the position paid and its funding F, negative paid); netCost = −C (positive long,
// negative short: ccxt reads the side from its sign). cumulativeFundingPayment is F, the funding
// the position paid (negative) or received since it opened (engine/core/perp/cumulative-funding.ts);
// cumulativeInterest is "0": the venue is removing it.

import { PositionEvent, type PositionRec } from '../../engine/bus/types.js';
import type { MarketInfo } from '../config.js';
import { formatDecimal, formatDecimalBig } from '../decimal.js';
import { formatFraction } from '../margin-config.js';
import { isoMillis, priceText } from './market-codec.js';

const PRICE_DECIMALS = 9;
const WIDE = 2n ** 53n;

const wide = (high: number, low: number): bigint => BigInt(high) * WIDE + BigInt(low);

/** quote units / base units as USDC per whole unit to 9 decimals, rounded toward zero ("0" for no size). */
function unitPrice(market: MarketInfo, quoteUnits: bigint, baseUnits: bigint): string {
  if (baseUnits === 0n) return '0';
  const e9 = (quoteUnits * 10n ** BigInt(market.baseDecimals + PRICE_DECIMALS)) / (baseUnits * 10n ** BigInt(market.quoteDecimals));
  return formatDecimalBig(e9, PRICE_DECIMALS);
}

/** The position's figures as the REST position lists them (without the margin functions). */
export function positionFigures(market: MarketInfo, p: Readonly<PositionRec>): Record<string, string | number | null> {
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
    markPrice: formatDecimalBig(BigInt(p.markPriceE9), PRICE_DECIMALS),
    mmf: formatFraction(BigInt(p.mmf)),
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

const EVENT_NAME: Readonly<Record<number, string>> = {
  [PositionEvent.Opened]: 'positionOpened',
  [PositionEvent.Adjusted]: 'positionAdjusted',
  [PositionEvent.Closed]: 'positionClosed',
};

/**
 * The account.positionUpdate message of a position event (wire doc §5.4): b break-even, B entry,
 * f IMF, M mark, m MMF, q net quantity (signed), Q net exposure quantity, n net exposure notional,
 * i position id, p realized and P unrealized PnL, l the estimated liquidation price (the venue
 * sends "0" there; this sends the estimate the REST position shows), T engine and E event µs.
 */
export function positionUpdateJson(market: MarketInfo, rec: Readonly<PositionRec>, eventUs: number): Record<string, unknown> {
  const f = positionFigures(market, rec);
  return {
    e: EVENT_NAME[rec.event], E: eventUs, s: market.symbol,
    b: f.breakEvenPrice, B: f.entryPrice, f: f.imf, M: f.markPrice, m: f.mmf,
    q: f.netQuantity, Q: f.netExposureQuantity, n: f.netExposureNotional,
    i: f.positionId, p: f.pnlRealized, P: f.pnlUnrealized, l: f.estLiquidationPrice, T: rec.timeUs,
  };
}

/** What the history keeps of a position beside its latest event (engine/store/history-perp.ts). */
export interface PositionHistoryMeta {
  positionId: number;
  openedUs: number;
  closedUs: number | null;
  closedLots: number;
  fundingUnits: number;
  liquidationFills: number;
  closingPriceTicks: number | null;
}

/**
 * A position history item (GET /wapi/v1/history/position) from its latest event: the figures as
 * they were then (a closed position shows size, cost, entry and exposure 0 and its final realized
 * PnL and fees). Not kept per position here, so null: liquidationFees (a liquidation's fee goes to
 * the insurance fund per account) and accountLeverage.
 */
export function positionHistoryJson(market: MarketInfo, rec: Readonly<PositionRec>, meta: PositionHistoryMeta): Record<string, unknown> {
  const f = positionFigures(market, rec);
  return {
    id: String(meta.positionId), symbol: market.symbol,
    netQuantity: f.netQuantity, netExposureQuantity: f.netExposureQuantity, netExposureNotional: f.netExposureNotional,
    netCost: f.netCost, markPrice: f.markPrice, entryPrice: f.entryPrice,
    cumulativePnlRealized: f.pnlRealized, unrealizedPnl: f.pnlUnrealized,
    fundingQuantity: formatDecimal(meta.fundingUnits, market.quoteDecimals), interest: '0',
    liquidated: meta.liquidationFills > 0, imf: f.imf,
    fees: formatDecimalBig(wide(rec.feesHigh, rec.feesLow), market.quoteDecimals),
    closedVolume: formatDecimal(meta.closedLots * market.spec.baseUnitsPerLot, market.baseDecimals),
    liquidationFees: null,
    closingPrice: meta.closingPriceTicks === null ? null : priceText(market, meta.closingPriceTicks),
    accountLeverage: null,
    openedAt: isoMillis(meta.openedUs), closedAt: meta.closedUs === null ? null : isoMillis(meta.closedUs),
    state: meta.closedUs === null ? 'Open' : 'Closed',
  };
}
