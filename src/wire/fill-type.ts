// The fill types of GET /wapi/v1/history/fills (the API's FillType, venue mechanics §4): what each
// `fillType` filter selects, from the system order type a fill's order carries (the fill record is
// the order's record at the fill, so stored fills keep it; fills stored before the field existed
// read None, a client's order, which is what every one of them was).
//
// A fill is classified by its order: a client's order gives User; LiquidatePositionOnBook
// BookLiquidation; LiquidatePositionOnBackstop Backstop; LiquidatePositionOnAdl Adl;
// CollateralConversion CollateralConversion; FutureExpiry and OrderBookClosed (settlement closes)
// belong to no type and show only without a filter. The groups: Liquidation is book + backstop +
// ADL; AllLiquidation adds collateral conversion; CollateralConversionAndSpotLiquidation is
// collateral conversion with the liquidation fills of spot markets (the spot margin waterfall's,
// engine/core/liquidation/). The waterfall places on-book, backstop and auto-deleveraging orders
// (both halves of a backstop fill are Backstop, both of an ADL fill Adl), collateral conversion
// its spot sales (engine/core/liquidation/conversion.ts: the seller's half is CollateralConversion,
// the maker's a client's). Every type is accepted; one the venue has not filled yet lists nothing.
// accepted and lists nothing.
//
// No filter lists every fill, system fills included (the venue's default since 2025-04-22).
// Names are matched without regard to case or underscores (the Rust client sends snake case).

import { MarketKind, SystemOrderType, type OrderRec } from '../../engine/bus/types.js';
import type { ServerConfig } from '../config.js';
import { Errors, type ApiError } from '../errors.js';

export type FillType = 'User' | 'BookLiquidation' | 'Adl' | 'Backstop' | 'CollateralConversion';

/** The fill type of a fill by its order's system order type; null for a type no filter names. */
export function fillTypeOf(systemOrderType: SystemOrderType): FillType | null {
  switch (systemOrderType) {
    case SystemOrderType.None: return 'User';
    case SystemOrderType.LiquidatePositionOnBook: return 'BookLiquidation';
    case SystemOrderType.LiquidatePositionOnBackstop: return 'Backstop';
    case SystemOrderType.LiquidatePositionOnAdl: return 'Adl';
    case SystemOrderType.CollateralConversion: return 'CollateralConversion';
    default: return null;
  }
}

const LIQUIDATION: readonly FillType[] = ['BookLiquidation', 'Backstop', 'Adl'];

/** Each filter name and the fill types it selects (`spotLiquidation`: also liquidation fills of spot markets). */
const FILTERS: ReadonlyArray<{ name: string; types: readonly FillType[]; spotLiquidation?: boolean }> = [
  { name: 'User', types: ['User'] },
  { name: 'BookLiquidation', types: ['BookLiquidation'] },
  { name: 'Adl', types: ['Adl'] },
  { name: 'Backstop', types: ['Backstop'] },
  { name: 'Liquidation', types: LIQUIDATION },
  { name: 'AllLiquidation', types: [...LIQUIDATION, 'CollateralConversion'] },
  { name: 'CollateralConversion', types: ['CollateralConversion'] },
  { name: 'CollateralConversionAndSpotLiquidation', types: ['CollateralConversion'], spotLiquidation: true },
];

export const FILL_TYPE_NAMES: readonly string[] = FILTERS.map((f) => f.name);

/** Whether a fill passes a filter; built per request from the configuration's markets. */
export type FillFilter = (rec: OrderRec) => boolean;

/** fillType (`fill_type` too): null without one (every fill), the filter, or the error for an unknown name. */
export function parseFillType(config: ServerConfig, query: URLSearchParams): FillFilter | null | ApiError {
  const raw = query.get('fillType') ?? query.get('fill_type');
  if (raw === null) return null;
  const wanted = raw.toLowerCase().replace(/_/g, '');
  const filter = FILTERS.find((f) => f.name.toLowerCase() === wanted);
  if (!filter) return Errors.invalid(`fillType must be one of ${FILL_TYPE_NAMES.join(', ')}`);
  const types = new Set<FillType | null>(filter.types);
  return (rec) => {
    const type = fillTypeOf(rec.systemOrderType);
    if (types.has(type)) return true;
    return filter.spotLiquidation === true && LIQUIDATION.includes(type as FillType)
      && config.markets[rec.marketId]?.spec.kind !== MarketKind.Perp;
  };
}
