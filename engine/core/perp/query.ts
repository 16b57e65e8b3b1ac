// QueryPositions: an account's perpetual positions, valued at the query's engine time through the
// margin valuation (margin/valuation.ts maintenanceFigures, the summary's own figures), so a
// position shows the same uPnL, exposure, IMF and MMF that admission and net equity use.
//
// The estimated liquidation price (informational, venue mechanics §4 [P]) is the perpetual's mark
// m at which the account's net equity meets its maintenance margin, everything else fixed and the
// position's MMF held at its current value: with size S and exposure X in base units, current mark
// m0, net equity E and Σ N·MMF of the other exposures M',
//   E + S·(m − m0) = M' + X·m·MMF   ⇒   m = (M' − E + S·m0) / (S − X·MMF)
// rounded down to 10^-9 USDC per whole unit; 0 when the position is flat, has no mark, or no
// positive price solves it.

import { PositionEvent, ResultCode, type QueryPositionsCommand } from '../../bus/types.js';
import { MARKET_ID_ALL } from '../catalog.js';
import { FRACTION_ONE, ceilDiv, pow10 } from '../margin/fixed.js';
import type { Mark } from '../margin/mark.js';
import { maintenanceFigures, type MaintenanceFigures } from '../margin/valuation.js';
import type { PositionView } from '../output.js';
import type { EngineState } from '../state.js';
import type { PerpLine } from './exposure.js';

const E9 = 10n ** 9n;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** quote units per base unit → USDC per whole unit × 10^9, rounded down (0 when not positive). */
function priceE9(quoteUnits: bigint, baseUnits: bigint, baseDecimals: number, quoteDecimals: number): number {
  if (baseUnits < 0n) return priceE9(-quoteUnits, -baseUnits, baseDecimals, quoteDecimals);
  if (baseUnits === 0n || quoteUnits <= 0n) return 0;
  const value = (quoteUnits * pow10(baseDecimals) * E9) / (baseUnits * pow10(quoteDecimals));
  return Number(value < MAX_SAFE ? value : MAX_SAFE);
}

function estLiquidationPriceE9(s: EngineState, line: PerpLine, figures: MaintenanceFigures, mark: Mark, decimals: [number, number]): number {
  const market = s.catalog.markets[line.marketIndex];
  if (line.lots === 0) return 0;
  const size = BigInt(line.lots) * BigInt(market.baseUnitsPerLot);
  const exposure = BigInt(line.exposureLots) * BigInt(market.baseUnitsPerLot);
  const ownMmf = ceilDiv(line.exposure.notionalUnits * line.exposure.mmf, FRACTION_ONE);
  const others = figures.mmfUnits - ownMmf;
  const { quoteUnits: q0, baseUnits: b0 } = mark.price;
  const numerator = ((others - figures.netEquityUnits) * b0 + size * q0) * FRACTION_ONE;
  const denominator = (size * FRACTION_ONE - exposure * line.exposure.mmf) * b0;
  return priceE9(numerator, denominator, decimals[0], decimals[1]);
}

/** The figures of the position in `line` of the account's maintenance figures, as a query row or an event reports them. */
export function positionView(s: EngineState, accountId: number, line: PerpLine, figures: MaintenanceFigures): PositionView {
  const p = s.positions;
  const market = s.catalog.markets[line.marketIndex];
  const decimals: [number, number] = [s.pools.decimalsOf[s.catalog.baseIndexOf[line.marketIndex]], s.pools.decimalsOf[s.catalog.quoteIndexOf[line.marketIndex]]];
  const mark = line.mark;
  return {
    accountId, marketId: market.marketId, positionId: p.positionId[line.cell],
    netLots: line.lots, exposureLots: line.exposureLots,
    costUnits: p.entryCost[line.cell], realizedUnits: p.realized[line.cell], unrealizedUnits: line.pnlUnrealizedUnits,
    unsettledUnits: line.unsettledUnits, feesUnits: p.fees[line.cell], exposureNotionalUnits: line.exposure.notionalUnits,
    markPriceE9: mark === null ? 0 : priceE9(mark.price.quoteUnits, mark.price.baseUnits, decimals[0], decimals[1]),
    markSource: mark === null ? 0 : mark.source,
    estLiquidationPriceE9: mark === null ? 0 : estLiquidationPriceE9(s, line, figures, mark, decimals),
    imf: line.exposure.imf, mmf: line.exposure.mmf, cumulativeFundingUnits: s.perpMarks.cumulative.of(line.cell, p),
  };
}

export function queryPositions(s: EngineState, cmd: QueryPositionsCommand): void {
  if (!s.accounts.exists(cmd.accountId)) return s.out.result(ResultCode.UnknownAccount, 0, cmd.frontId, cmd.requestId);
  const marketIndex = s.catalog.marketIndex(cmd.marketId);
  const all = cmd.marketId === MARKET_ID_ALL;
  if (!all && (marketIndex < 0 || s.catalog.isSpot(marketIndex))) return s.out.result(ResultCode.UnknownMarket, 0, cmd.frontId, cmd.requestId);
  if (s.positions.perpCount === 0) return s.out.result(ResultCode.Ok, 0, cmd.frontId, cmd.requestId);
  const figures = maintenanceFigures(s, cmd.accountId, undefined, s.out.applyTimeUs);
  let count = 0;
  for (const line of figures.perpLines) {
    if (!s.positions.isOpen(line.cell) || (!all && line.marketIndex !== marketIndex)) continue;
    s.out.position(positionView(s, cmd.accountId, line, figures), PositionEvent.None, cmd.frontId, cmd.requestId);
    count++;
  }
  s.out.result(ResultCode.Ok, count, cmd.frontId, cmd.requestId);
}
