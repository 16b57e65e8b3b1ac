// Open interest of a perpetual (venue mechanics §3.6): Σ long positions, in lots here and in base
// units on the wire (GET /api/v1/openInterest). Positions keep it as sizes change (positions.ts).
//
// The limit ([P], a fill-time check): a fill that would raise the market's open interest above its
// openInterestLimitUnits (base units) does not happen; the taker stops there and its remainder
// expires PositionLimit (a limit order does not rest). A fill that keeps or lowers the open
// interest (closing trades) always passes, even while the open interest is above a lowered limit.
// A fill of q lots between a buyer of size b and a seller of size s changes it by
//   max(b + q, 0) − max(b, 0) + max(s − q, 0) − max(s, 0)   (at most q).
// A fill-or-kill order's check walks its fills with the same rule and the reduce-only makers'
// clipping (reduce-only.ts makerLots), on the sizes its earlier fills would leave (FillWalk).
// Each party's position limit (position-limit.ts) is checked with it, after the open interest:
// either refuses the fill the same way.

import { ExpiryReason, OrderFlag, ResultCode, Side, type QueryOpenInterestCommand } from '../../bus/types.js';
import { MARKET_ID_ALL } from '../catalog.js';
import type { EngineState } from '../state.js';
import { beyondPositionLimit } from './position-limit.js';
import { Of } from '../book/orders.js';

/** The change in lots of the market's open interest if `buyer` bought `lots` from `seller`, their sizes given. */
function openInterestChange(buyerLots: number, sellerLots: number, lots: number): number {
  return Math.max(buyerLots + lots, 0) - Math.max(buyerLots, 0) + Math.max(sellerLots - lots, 0) - Math.max(sellerLots, 0);
}

/** Whether open interest of `openLots` + `change` lots passes the market's limit. */
function beyondLimit(s: EngineState, marketIndex: number, openLots: number, change: number): boolean {
  if (change <= 0) return false;
  const market = s.catalog.markets[marketIndex];
  return (openLots + change) * market.baseUnitsPerLot > market.perp!.openInterestLimitUnits;
}

/** Whether a buyer and a seller of those sizes trading `lots` at `priceTicks` would take either past its position limit. */
function beyondPartyLimits(s: EngineState, marketIndex: number, buyerAccount: number, buyerLots: number, sellerAccount: number, sellerLots: number, lots: number, priceTicks: number): boolean {
  return beyondPositionLimit(s, buyerAccount, marketIndex, buyerLots, lots, priceTicks) || beyondPositionLimit(s, sellerAccount, marketIndex, sellerLots, -lots, priceTicks);
}

/**
 * PositionLimit when the fill would raise the market's open interest past its limit, or take a
 * party past its position limit (position-limit.ts), else None.
 */
export function perpFillRefusal(s: EngineState, marketIndex: number, buyerAccount: number, sellerAccount: number, lots: number, priceTicks: number): ExpiryReason {
  const p = s.positions;
  const buyerLots = p.lots[p.cell(buyerAccount, marketIndex)];
  const sellerLots = p.lots[p.cell(sellerAccount, marketIndex)];
  const change = openInterestChange(buyerLots, sellerLots, lots);
  if (beyondLimit(s, marketIndex, p.openInterestLots[p.ordinalOf[marketIndex]], change)) return ExpiryReason.PositionLimit;
  return beyondPartyLimits(s, marketIndex, buyerAccount, buyerLots, sellerAccount, sellerLots, lots, priceTicks) ? ExpiryReason.PositionLimit : ExpiryReason.None;
}

/** The market's open interest in base units. */
export function openInterestUnits(s: EngineState, marketIndex: number): number {
  const p = s.positions;
  return p.openInterestLots[p.ordinalOf[marketIndex]] * s.catalog.markets[marketIndex].baseUnitsPerLot;
}

/** QueryOpenInterest: one record per perpetual (every one, or market_id's), in catalog order, then the count. */
export function queryOpenInterest(s: EngineState, cmd: QueryOpenInterestCommand): void {
  const all = cmd.marketId === MARKET_ID_ALL;
  const marketIndex = s.catalog.marketIndex(cmd.marketId);
  if (!all && (marketIndex < 0 || s.catalog.isSpot(marketIndex))) return s.out.result(ResultCode.UnknownMarket, 0, cmd.frontId, cmd.requestId);
  const p = s.positions;
  let count = 0;
  for (let ordinal = 0; ordinal < p.perpCount; ordinal++) {
    const index = p.marketOf[ordinal];
    if (!all && index !== marketIndex) continue;
    s.out.openInterest(s.catalog.markets[index].marketId, openInterestUnits(s, index), cmd.frontId, cmd.requestId);
    count++;
  }
  s.out.result(ResultCode.Ok, count, cmd.frontId, cmd.requestId);
}

/**
 * A fill-or-kill order's walk: the fills it would make, each checked against the limit with the
 * sizes the earlier fills of the walk left (the accounts and their size changes in a reused list).
 */
class FillWalk {
  private readonly accounts: number[] = [];
  private readonly deltas: number[] = [];
  private openLots = 0;
  private marketIndex = -1;
  private s!: EngineState;

  reset(s: EngineState, marketIndex: number): void {
    this.s = s;
    this.accounts.length = 0;
    this.deltas.length = 0;
    this.marketIndex = marketIndex;
    const p = s.positions;
    this.openLots = p.openInterestLots[p.ordinalOf[marketIndex]];
  }

  private sizeOf(accountId: number): number {
    const p = this.s.positions;
    const at = this.accounts.indexOf(accountId);
    return p.lots[p.cell(accountId, this.marketIndex)] + (at < 0 ? 0 : this.deltas[at]);
  }

  private move(accountId: number, lots: number): void {
    const at = this.accounts.indexOf(accountId);
    if (at >= 0) this.deltas[at] += lots;
    else {
      this.accounts.push(accountId);
      this.deltas.push(lots);
    }
  }

  /** The lots the next fill would take from the maker (0: passed, a reduce-only maker that cannot reduce), -1 if refused; counted. */
  fill(taker: number, maker: number, wanted: number): number {
    const pool = this.s.pool;
    const takerBuys = pool.u8[taker << Of.w8 | Of.side] === Side.Bid;
    const buyerAccount = pool.u32[(takerBuys ? taker : maker) << Of.w32 | Of.accountId];
    const sellerAccount = pool.u32[(takerBuys ? maker : taker) << Of.w32 | Of.accountId];
    let lots = wanted;
    if ((pool.u8[maker << Of.w8 | Of.flags] & OrderFlag.ReduceOnly) !== 0) {
      const size = this.sizeOf(pool.u32[maker << Of.w32 | Of.accountId]);
      lots = (takerBuys ? size > 0 : size < 0) ? Math.min(lots, Math.abs(size)) : 0;
      if (lots === 0) return 0;
    }
    const buyerLots = this.sizeOf(buyerAccount);
    const sellerLots = this.sizeOf(sellerAccount);
    const change = openInterestChange(buyerLots, sellerLots, lots);
    if (beyondLimit(this.s, this.marketIndex, this.openLots, change)) return -1;
    if (beyondPartyLimits(this.s, this.marketIndex, buyerAccount, buyerLots, sellerAccount, sellerLots, lots, pool.price(maker))) return -1;
    this.openLots += change;
    this.move(buyerAccount, lots);
    this.move(sellerAccount, -lots);
    return lots;
  }
}

/** The walk of the fill-or-kill check being applied (one at a time). */
const WALK = new FillWalk();

/** Starts a fill-or-kill walk in the perpetual (kinds.ts). */
export function perpWalkStart(s: EngineState, marketIndex: number): void {
  WALK.reset(s, marketIndex);
}

/** The walk's next fill (kinds.ts walkFill). */
export function perpWalkFill(_s: EngineState, taker: number, maker: number, lots: number): number {
  return WALK.fill(taker, maker, lots);
}
