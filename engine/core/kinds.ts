// Market kinds: the one place where what a market trades selects its product rules.
//
// The book (book/) is product-agnostic: it places, matches and cancels orders and reports each
// fill. What an open order holds and what a fill moves between accounts depend on what the market
// trades; the book asks the market's rules through rulesOf, whose switch on the kind is the only
// one (exchange-core's shape: matching settles through it, placing holds through it): spot (spot/)
// and USDC-settled perpetuals (perp/: no hold, margin admission, positions and settlement).

import { ExpiryReason, MarketKind, type PlaceOrderCommand, type ResultCode } from '../bus/types.js';
import { perpFillRefusal, perpWalkFill, perpWalkStart } from './perp/open-interest.js';
import { perpHold, perpHoldAssetOf, perpHoldUnitsOf } from './perp/hold.js';
import { reportPerpBalances, reportPerpSettlement, settlePerp } from './perp/settle.js';
import { perpMakerLots, touchParties, trimTouched } from './perp/reduce-only.js';
import { holdAssetOf, holdUnitsOf, spotHold } from './spot/hold.js';
import { reportSpotBalances, reportSpotSettlement, settleSpot } from './spot/settle.js';
import type { EngineState } from './state.js';
import type { AmountUnits, PriceTicks, QtyLots } from './units.js';
import { Of } from './book/orders.js';

/** What a place that passed the book's checks holds, as its market's rules computed it. */
export interface PlaceHold {
  /** The asset the hold sits in and how many units it takes from available. */
  assetIndex: number;
  units: AmountUnits;
  /** The order's lot quantity (for a market order: its lot cap). */
  lots: QtyLots;
  /** A market order's quote limit (the most quote it may exchange in total). */
  quoteLimitUnits: AmountUnits;
}

/** One fill as the book reports it; the rules write the fees they charged each party. */
export interface Fill {
  marketIndex: number;
  /** Pool slots of the parties: the taker and the maker, the buyer and the seller. */
  taker: number;
  maker: number;
  buyer: number;
  seller: number;
  /** The maker's price, the lots traded and their notional in quote units. */
  priceTicks: PriceTicks;
  qtyLots: QtyLots;
  quoteUnits: AmountUnits;
  buyerFeeUnits: AmountUnits;
  sellerFeeUnits: AmountUnits;
}

export interface ProductRules {
  /** Computes the hold of a place (into `hold`); Ok, or why the account cannot hold it. */
  hold(s: EngineState, cmd: PlaceOrderCommand, marketIndex: number, hold: PlaceHold): ResultCode;
  /** The asset an open order's hold sits in. */
  holdAssetOf(s: EngineState, slot: number): number;
  /** What an open order's remaining quantity still holds: every release gives back exactly this. */
  holdUnitsOf(s: EngineState, slot: number): AmountUnits;
  /** A fill's ledger moves, from the parties' holds; writes the fees into the fill. */
  settle(s: EngineState, fill: Fill): void;
  /**
   * The records of a settled fill's parties: their balances (the taker's only with `takerToo`; a
   * match writes them once, when it ends: reportBalances) and, on a perpetual, their positions.
   */
  reportSettlement(s: EngineState, fill: Fill, takerToo: boolean): void;
  /** The balance records of the assets a fill in market `marketIndex` moves for `accountId`. */
  reportBalances(s: EngineState, marketIndex: number, accountId: number): void;
  /** After a fill is recorded and its maker closed or reduced: notes the parties for afterMatch. */
  afterFill(s: EngineState, marketIndex: number, buyerAccount: number, sellerAccount: number): void;
  /** After a taker matched, before it rests or ends: what its fills changed in the parties' other orders. */
  afterMatch(s: EngineState, marketIndex: number): void;
  /** Lots a resting order may fill now (at most its remaining lots; 0: it expires where the taker meets it, perp/reduce-only.ts). */
  makerLots(s: EngineState, slot: number): number;
  /** Why a fill about to happen may not (ExpiryReason None: it may); the taker then expires with that reason. */
  fillRefusal(s: EngineState, marketIndex: number, buyerAccount: number, sellerAccount: number, lots: number, priceTicks: number): ExpiryReason;
  /** A fill-or-kill check's walk: started once, then asked about each fill it would make in turn. */
  walkStart(s: EngineState, marketIndex: number): void;
  /** Lots the walk's taker would fill from this maker (at most `lots`; 0: the maker is passed), or -1 where the taker would stop. */
  walkFill(s: EngineState, taker: number, maker: number, lots: number): number;
}

const SPOT: ProductRules = {
  hold: spotHold,
  holdAssetOf,
  holdUnitsOf,
  settle: settleSpot,
  reportSettlement: reportSpotSettlement,
  reportBalances: reportSpotBalances,
  afterFill: () => undefined,
  afterMatch: () => undefined,
  makerLots: (s, slot) => s.pool.f64[slot << Of.f64 | Of.remainingLots],
  fillRefusal: () => ExpiryReason.None,
  walkStart: () => undefined,
  walkFill: (_s, _taker, _maker, lots) => lots,
};

const PERP: ProductRules = {
  hold: perpHold,
  holdAssetOf: perpHoldAssetOf,
  holdUnitsOf: perpHoldUnitsOf,
  settle: settlePerp,
  reportSettlement: reportPerpSettlement,
  reportBalances: reportPerpBalances,
  afterFill: touchParties,
  afterMatch: trimTouched,
  makerLots: perpMakerLots,
  fillRefusal: perpFillRefusal,
  walkStart: perpWalkStart,
  walkFill: perpWalkFill,
};

/** The rules of a market kind: the one switch on the kind. */
export function rulesOf(kind: number): ProductRules {
  switch (kind) {
    case MarketKind.Spot:
      return SPOT;
    case MarketKind.Perp:
      return PERP;
    default:
      throw new Error(`engine assertion failed: market kind ${kind} has no rules`);
  }
}

/** The rules of the market an open order belongs to. */
export function rulesOfOrder(s: EngineState, slot: number): ProductRules {
  return rulesOf(s.catalog.kindOf[s.pool.u16[slot << Of.w16 | Of.marketIndex]]);
}
