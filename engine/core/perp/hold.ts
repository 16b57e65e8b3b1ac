// What a perpetual order holds: nothing. A perpetual order locks no asset (its hold is 0 units of
// the quote asset, so the ledger's locked units still equal what open orders hold); it is
// admitted by the account's initial margin instead (venue mechanics §1.3, §1.5 [P]):
//
//   the order's full quantity is added to its side of the market; if that does not raise the
//   market's worst-side exposure max(|size + Σ bids|, |size − Σ asks|) the order passes (it
//   reduces or closes); otherwise the account's net equity, with that exposure at the
//   perpetual's mark, must cover Σ N·IMF(N) over all its exposures (margin/valuation.ts), else
//   InsufficientMargin. A perpetual without a mark admits no new exposure. Before that test, the
//   account's position limit (position-limit.ts admitPositionLimit): PositionLimit.
//
// The quantity: a limit order's lots; a market order by quantity its lots (no quote limit); a
// market order by quote quantity the lots that quote would buy at minPriceTicks (its cap, as spot
// does), with the quote quantity as its limit. The spot margin flags (autoLend, autoLendRedeem,
// autoBorrow, autoBorrowRepay) fund or spend a held asset: a perpetual order carries none. A
// reduce-only order always passes (it is clipped to the position when it takes effect).

import { CommandFlag, OrderType, ResultCode, Side, type PlaceOrderCommand } from '../../bus/types.js';
import type { PlaceHold } from '../kinds.js';
import { admits } from '../margin/account.js';
import { admissionFigures } from '../margin/valuation.js';
import type { EngineState } from '../state.js';
import { MAX_AMOUNT_UNITS, floorDiv, notionalUnits, type AmountUnits, type PriceTicks, type QtyLots } from '../units.js';
import { exposureLotsOf } from './exposure.js';
import { admitPositionLimit } from './position-limit.js';
import { NO_SLOT, Of } from '../book/orders.js';

const SPOT_MARGIN_FLAGS = CommandFlag.AutoLend | CommandFlag.AutoLendRedeem | CommandFlag.AutoBorrow | CommandFlag.AutoBorrowRepay;

/** The (empty) hold and the margin admission of a perpetual place that passed the book's checks. */
export function perpHold(s: EngineState, cmd: PlaceOrderCommand, marketIndex: number, hold: PlaceHold): ResultCode {
  if ((cmd.flags & SPOT_MARGIN_FLAGS) !== 0) return ResultCode.InvalidCommand;
  const market = s.catalog.markets[marketIndex];
  hold.assetIndex = s.catalog.quoteIndexOf[marketIndex];
  hold.units = 0 as AmountUnits;
  hold.lots = cmd.qtyLots as QtyLots;
  hold.quoteLimitUnits = MAX_AMOUNT_UNITS;
  if (cmd.orderType === OrderType.Market && cmd.quoteQtyUnits > 0) {
    const lotQuoteUnitsMin = notionalUnits(market.minPriceTicks as PriceTicks, 1 as QtyLots, market.quoteUnitsPerTickLot);
    hold.lots = Math.min(market.maxQtyLots, floorDiv(cmd.quoteQtyUnits, lotQuoteUnitsMin)) as QtyLots;
    if (hold.lots < market.minQtyLots) return ResultCode.QuantityBelowMinimum;
    hold.quoteLimitUnits = cmd.quoteQtyUnits as AmountUnits;
  }
  // A reduce-only order never raises the exposure it is admitted against (reduce-only.ts clips it).
  if ((cmd.flags & CommandFlag.ReduceOnly) !== 0) return ResultCode.Ok;
  return perpAdmission(s, cmd.accountId, marketIndex, cmd.side, hold.lots);
}

/** The position limit, then whether `lots` more on `side` of the perpetual raise its worst-side exposure; if so, the IMF test (header). */
export function perpAdmission(s: EngineState, accountId: number, marketIndex: number, side: Side, lots: number): ResultCode {
  const limited = admitPositionLimit(s, accountId, marketIndex, side, lots);
  if (limited !== ResultCode.Ok) return limited;
  const p = s.positions;
  const size = p.lots[p.cell(accountId, marketIndex)];
  let bidLots = 0;
  let askLots = 0;
  const pool = s.pool;
  for (let slot = pool.accountHead[accountId]; slot !== NO_SLOT; slot = pool.i32[slot << Of.w32 | Of.accountNext]) {
    if (pool.u16[slot << Of.w16 | Of.marketIndex] !== marketIndex) continue;
    if (pool.u8[slot << Of.w8 | Of.side] === Side.Bid) bidLots += pool.f64[slot << Of.f64 | Of.remainingLots];
    else askLots += pool.f64[slot << Of.f64 | Of.remainingLots];
  }
  const before = exposureLotsOf(size, bidLots, askLots);
  const after = side === Side.Bid ? exposureLotsOf(size, bidLots + lots, askLots) : exposureLotsOf(size, bidLots, askLots + lots);
  if (after <= before) return ResultCode.Ok;
  const figures = admissionFigures(s, accountId, { assetIndex: -1, heldDelta: 0n, borrowDelta: 0n, perpOrder: { marketIndex, side, lots } });
  if (figures.unpriced) return ResultCode.InsufficientMargin;
  return admits(figures.netEquityUnits, figures) ? ResultCode.Ok : ResultCode.InsufficientMargin;
}

/** The asset a perpetual order's (empty) hold sits in: its quote. */
export function perpHoldAssetOf(s: EngineState, slot: number): number {
  return s.catalog.quoteIndexOf[s.pool.u16[slot << Of.w16 | Of.marketIndex]];
}

/** What a perpetual order holds: nothing, whatever remains of it. */
export function perpHoldUnitsOf(): AmountUnits {
  return 0 as AmountUnits;
}
