// What an account's perpetual positions add to its margin summary (venue mechanics §1.2–§1.3):
// for each perpetual in which it has a position, open orders or an unsettled amount,
//   unrealized PnL      size·mark + C (rounded down: against the account)
//   unsettled equity    claims (> 0) less debts and unpaid fees
//   exposure quantity   max(|size + Σ bids|, |size − Σ asks|)   (the worst side, §1.3 [P])
//   exposure notional   N = exposure × mark (rounded up), with IMF(N) and MMF(N) of the market
// at the perpetual's mark (mark.ts). A perpetual with exposure or a size but no mark makes the
// summary unpriced.
//
// Cost: O(perpetual markets + the account's open orders) for one account; the open orders are
// walked once through the account's order list.

import { Side } from '../../bus/types.js';
import { NO_SLOT, Of } from '../book/orders.js';
import type { Exposure } from '../margin/account.js';
import { notionalCeil } from '../margin/collateral.js';
import { floorDiv } from '../margin/fixed.js';
import { positionImf, positionMmf } from '../margin/fractions.js';
import type { Mark } from '../margin/mark.js';
import type { EngineState } from '../state.js';
import { perpMarkOf } from './mark.js';

/** An order not yet placed, counted as if open (admission): lots on one side of one perpetual. */
export interface PerpOrderChange {
  marketIndex: number;
  side: Side;
  lots: number;
}

/**
 * A fill not yet made, counted as if made (a backstop provider's check, liquidation/backstop.ts):
 * `lots` more (signed) in one perpetual's position and `costUnits` added to its cost C.
 */
export interface PerpFillChange {
  marketIndex: number;
  lots: number;
  costUnits: bigint;
}

export interface PerpLine {
  marketIndex: number;
  cell: number;
  lots: number;
  bidLots: number;
  askLots: number;
  mark: Mark | null;
  pnlUnrealizedUnits: bigint;
  /** Claims less debts and unpaid fees. */
  unsettledUnits: bigint;
  exposureLots: number;
  /** N, IMF and MMF of the exposure (0 when there is none or no mark). */
  exposure: Exposure;
}

export interface PerpSummary {
  lines: PerpLine[];
  pnlUnrealizedUnits: bigint;
  unsettledUnits: bigint;
  exposures: Exposure[];
  unpriced: boolean;
}

/**
 * Whether the account's perpetual figures move with the asset's index price: a position or an
 * open order in a perpetual whose underlying it is (its uPnL and its exposure are valued at that
 * perpetual's mark, the underlying's index while fresh). O(perpetuals + the account's orders).
 */
export function followsUnderlying(s: EngineState, accountId: number, assetIndex: number): boolean {
  const p = s.positions;
  for (let ordinal = 0; ordinal < p.perpCount; ordinal++) {
    const market = p.marketOf[ordinal];
    if (s.catalog.baseIndexOf[market] === assetIndex && p.lots[p.cell(accountId, market)] !== 0) return true;
  }
  const pool = s.pool;
  for (let slot = pool.accountHead[accountId]; slot !== NO_SLOT; slot = pool.i32[slot << Of.w32 | Of.accountNext]) {
    const market = pool.u16[slot << Of.w16 | Of.marketIndex];
    if (p.ordinalOf[market] >= 0 && s.catalog.baseIndexOf[market] === assetIndex) return true;
  }
  return false;
}

/** Open lots of the account per perpetual and side: [ordinal × 2 + side]. */
function openLots(s: EngineState, accountId: number, change: PerpOrderChange | null): Float64Array {
  const p = s.positions;
  const lots = new Float64Array(p.perpCount * 2);
  const pool = s.pool;
  for (let slot = pool.accountHead[accountId]; slot !== NO_SLOT; slot = pool.i32[slot << Of.w32 | Of.accountNext]) {
    const ordinal = p.ordinalOf[pool.u16[slot << Of.w16 | Of.marketIndex]];
    if (ordinal >= 0) lots[ordinal * 2 + pool.u8[slot << Of.w8 | Of.side]] += pool.f64[slot << Of.f64 | Of.remainingLots];
  }
  if (change !== null) lots[p.ordinalOf[change.marketIndex] * 2 + change.side] += change.lots;
  return lots;
}

/** Worst-side exposure in lots: max(|size + bids|, |size − asks|). */
export function exposureLotsOf(lots: number, bidLots: number, askLots: number): number {
  return Math.max(Math.abs(lots + bidLots), Math.abs(lots - askLots));
}

/** One perpetual of the account, valued at its mark (with `fill` counted when it is this perpetual's). */
function perpLine(s: EngineState, accountId: number, ordinal: number, bidLots: number, askLots: number, leverage: bigint, nowUs: number, fill: PerpFillChange | null): PerpLine {
  const p = s.positions;
  const marketIndex = p.marketOf[ordinal];
  const market = s.catalog.markets[marketIndex];
  const cell = p.cell(accountId, marketIndex);
  const filled = fill !== null && fill.marketIndex === marketIndex;
  const lots = p.lots[cell] + (filled ? fill.lots : 0);
  const cost = p.cost[cell] + (filled ? fill.costUnits : 0n);
  const mark = perpMarkOf(s, marketIndex, nowUs);
  const exposureLots = exposureLotsOf(lots, bidLots, askLots);
  const line: PerpLine = {
    marketIndex, cell, lots, bidLots, askLots, mark, pnlUnrealizedUnits: 0n,
    unsettledUnits: p.unsettled[cell] - p.feeDebt[cell], exposureLots, exposure: { notionalUnits: 0n, imf: 0n as bigint, mmf: 0n as bigint },
  };
  if (mark === null) return line;
  const sizeUnits = BigInt(lots) * BigInt(market.baseUnitsPerLot);
  line.pnlUnrealizedUnits = floorDiv(sizeUnits * mark.price.quoteUnits, mark.price.baseUnits) + cost;
  if (exposureLots === 0) return line;
  const perp = market.perp!;
  const quoteDecimals = s.pools.decimalsOf[s.catalog.quoteIndexOf[marketIndex]];
  const notionalUnits = notionalCeil(BigInt(exposureLots) * BigInt(market.baseUnitsPerLot), mark.price);
  line.exposure = {
    notionalUnits,
    imf: positionImf(perp.imf, notionalUnits, quoteDecimals, leverage),
    mmf: positionMmf(perp.mmf, notionalUnits, quoteDecimals),
  };
  return line;
}

/** The account's perpetuals at engine time `nowUs`, optionally with an order not yet placed or a fill not yet made. */
export function perpSummary(s: EngineState, accountId: number, leverage: bigint, change: PerpOrderChange | null, nowUs: number, fill: PerpFillChange | null = null): PerpSummary {
  const p = s.positions;
  const summary: PerpSummary = { lines: [], pnlUnrealizedUnits: 0n, unsettledUnits: 0n, exposures: [], unpriced: false };
  if (p.perpCount === 0) return summary;
  const lots = openLots(s, accountId, change);
  for (let ordinal = 0; ordinal < p.perpCount; ordinal++) {
    const bidLots = lots[ordinal * 2 + Side.Bid];
    const askLots = lots[ordinal * 2 + Side.Ask];
    const filled = fill !== null && fill.marketIndex === p.marketOf[ordinal] && fill.lots !== 0;
    if (!p.isOpen(p.cell(accountId, p.marketOf[ordinal])) && bidLots === 0 && askLots === 0 && !filled) continue;
    const line = perpLine(s, accountId, ordinal, bidLots, askLots, leverage, nowUs, fill);
    summary.lines.push(line);
    summary.pnlUnrealizedUnits += line.pnlUnrealizedUnits;
    summary.unsettledUnits += line.unsettledUnits;
    if (line.mark === null && (line.lots !== 0 || line.exposureLots !== 0)) summary.unpriced = true;
    if (line.exposure.notionalUnits > 0n) summary.exposures.push(line.exposure);
  }
  return summary;
}
