// Stage 2 of the waterfall for perpetual positions (waterfall.ts, venue mechanics §4.2): the
// backstop liquidity providers (backstop-providers.ts) take a liquidated position off the book.
// With no provider set the stage does not exist: the waterfall runs as without it.
//
// Entry, in a step of a solvent account (net equity > 0: a bankrupt one goes to the fund and ADL
// at once, adl.ts, since a fill at mark would leave the providers a deficit's counterpart):
//   - the account's margin fraction is below the Auto-Close MF,
//       MF < ACMF = max(AccountMMF / divisor, AccountMMF − offset),
//     compared exactly on whole quote units (MF = netEquity / TEN, AccountMMF = Σ N·MMF / TEN):
//       netEquity × divisor < Σ N·MMF   or   netEquity × 10^12 < Σ N·MMF × 10^12 − offset × TEN;
//     then every position of it is backstopped, in market order;
//   - or the book could not close a position (perp-unwind.ts Unfilled: its order filled nothing
//     within the band); then that position is.
// What the providers do not take goes on to stage 3 (adl.ts deleveragePosition: the fund, then ADL).
//
// Price. The perpetual's mark, in ticks rounded in the liquidated account's favour (a long sells
// at ⌈mark⌉, a short buys at ⌊mark⌋) and clamped to the market's price range (adl.ts
// bankruptcyTicks at zero deficit).
//
// Providers, in ascending account id (the fixed order), passing over the liquidated account and
// any provider that is liquidating. Each takes the most lots, up to what is left, that its own
// initial margin allows after the fill: with the fill counted in its position (size and cost) at
// mark, its net equity covers Σ N·IMF over all its exposures (open orders included) and nothing
// of it is unpriced (margin/account.ts admits). The quantity is the whole rest when that passes,
// else the largest passing one a bisection over [0, rest − 1] finds (the requirement grows with
// the quantity once it outgrows the provider's opposite position). A provider that can take none
// is skipped. How much each takes is settled before any fill, each on its own account only.
//
// The fills. One system order of the account for what the providers take together and one of each
// provider, flagged OrderFlag.Adl without Liquidation (SystemOrderType LiquidatePositionOnBackstop,
// origin BACKSTOP_LIQUIDITY_PROVIDER, fills Backstop), limit IOC at the price, never on the book:
// Accepted, then per provider a Trade record (the market's next trade id, header flag OffBook: the
// trade stream and the fills history show it, the candles leave it out; the band reference and the
// last price do not move) and both orders' fill events; each order then ends Filled. The account's
// order is the taker: it pays the liquidation fee (fee.ts, into the insurance fund) and no trading
// fee; the provider's pays neither. Settled as any perpetual fill (perp/settle.ts: realized PnL
// through the settlement line, so Σ positions stays 0 and USDC is conserved exactly). Each
// provider's resting reduce-only orders are then brought within its position and its liquidating
// state re-checked, in the order they took.

import { DEFAULT_AUTO_CLOSE_DIVISOR, DEFAULT_AUTO_CLOSE_OFFSET_E12, ExpiryReason, FRONT_ID_NONE, HeaderFlag, OrderEvent, OrderFlag, OrderStatus, Side } from '../../bus/types.js';
import { closeOrder } from '../book/cancel.js';
import { admits } from '../margin/account.js';
import { largestPassing } from '../margin/auto-funding.js';
import { FRACTION_ONE } from '../margin/fixed.js';
import { isLiquidating, reviewLiquidating } from '../margin/liquidating.js';
import { admissionFigures, marginSummary } from '../margin/valuation.js';
import { perpMarkOf } from '../perp/mark.js';
import { trimReduceOnly } from '../perp/reduce-only.js';
import type { EngineState } from '../state.js';
import { notionalUnits, type PriceTicks, type QtyLots } from '../units.js';
import { bankruptcyTicks, deleveragePosition, offBookFill, offBookSlot } from './adl.js';

/** The flags of a backstop order (header; engine/bus/types.ts OrderFlag.Adl explains the choice). */
const BACKSTOP_FLAGS = OrderFlag.Adl;

/** Whether providers are set and the account, holding a position, is below the Auto-Close MF (header). */
export function belowAutoClose(s: EngineState, accountId: number): boolean {
  if (s.backstop.count === 0 || s.positions.positionCountOf[accountId] === 0) return false;
  const summary = marginSummary(s, accountId);
  const { tenUnits, mmfUnits } = summary.margin;
  if (summary.unpriced || tenUnits <= 0n) return false;
  const config = s.insurance.config;
  const divisor = BigInt(config.autoCloseDivisor ?? DEFAULT_AUTO_CLOSE_DIVISOR);
  const offset = BigInt(config.autoCloseOffsetE12 ?? DEFAULT_AUTO_CLOSE_OFFSET_E12);
  const equity = summary.netEquityUnits;
  return equity * divisor < mmfUnits || equity * FRACTION_ONE < mmfUnits * FRACTION_ONE - offset * tenUnits;
}

/** Every position of the account, in market order, to the providers, the rest to the fund and ADL (header). */
export function backstopAll(s: EngineState, accountId: number): void {
  const p = s.positions;
  for (let ordinal = 0; ordinal < p.perpCount; ordinal++) {
    const marketIndex = p.marketOf[ordinal];
    if (p.lots[p.cell(accountId, marketIndex)] !== 0) backstopPosition(s, accountId, marketIndex);
  }
}

/** The account's position in `marketIndex` to the providers, then what is left to the fund and ADL (header). */
export function backstopPosition(s: EngineState, accountId: number, marketIndex: number): void {
  const p = s.positions;
  const cell = p.cell(accountId, marketIndex);
  const mark = perpMarkOf(s, marketIndex);
  if (mark !== null && s.backstop.count > 0) {
    const lots = p.lots[cell];
    const ticks = bankruptcyTicks(s, marketIndex, lots, mark.price, 0n);
    const plan = planProviders(s, accountId, marketIndex, lots, ticks);
    if (plan.length > 0) fillProviders(s, accountId, marketIndex, lots > 0 ? Side.Ask : Side.Bid, ticks, plan);
  }
  if (p.lots[cell] !== 0) deleveragePosition(s, accountId, marketIndex);
}

interface Take {
  accountId: number;
  lots: number;
}

/** What each provider takes of a position of `lots` (signed) at `ticks`, in order (header). */
function planProviders(s: EngineState, accountId: number, marketIndex: number, lots: number, ticks: number): Take[] {
  const plan: Take[] = [];
  let rest = Math.abs(lots);
  for (const provider of s.backstop.order) {
    if (rest === 0) break;
    if (provider === accountId || isLiquidating(s, provider)) continue;
    const taken = providerCapacity(s, provider, marketIndex, lots > 0 ? 1 : -1, ticks, rest);
    if (taken === 0) continue;
    plan.push({ accountId: provider, lots: taken });
    rest -= taken;
  }
  return plan;
}

/** The most lots up to `most` the provider can take on the side `sign` (1: it buys) at `ticks` (header). */
function providerCapacity(s: EngineState, provider: number, marketIndex: number, sign: number, ticks: number, most: number): number {
  const passes = (lots: number): boolean => providerPasses(s, provider, marketIndex, sign, ticks, lots);
  return passes(most) ? most : largestPassing(most - 1, passes);
}

/** The provider's initial margin check with `lots` filled at `ticks` (header). */
function providerPasses(s: EngineState, provider: number, marketIndex: number, sign: number, ticks: number, lots: number): boolean {
  const quote = BigInt(notionalUnits(ticks as PriceTicks, lots as QtyLots, s.catalog.markets[marketIndex].quoteUnitsPerTickLot));
  const figures = admissionFigures(s, provider, { assetIndex: -1, heldDelta: 0n, borrowDelta: 0n, perpFill: { marketIndex, lots: sign * lots, costUnits: -BigInt(sign) * quote } });
  return !figures.unpriced && admits(figures.netEquityUnits, figures);
}

/** The fills of the plan (header): the account's order on `side`, one order per provider. */
function fillProviders(s: EngineState, accountId: number, marketIndex: number, side: Side, ticks: number, plan: Take[]): void {
  const total = plan.reduce((sum, take) => sum + take.lots, 0);
  const own = offBookSlot(s, accountId, marketIndex, side, total, ticks, BACKSTOP_FLAGS);
  for (const take of plan) {
    const theirs = offBookSlot(s, take.accountId, marketIndex, side === Side.Bid ? Side.Ask : Side.Bid, take.lots, ticks, BACKSTOP_FLAGS);
    offBookFill(s, own, theirs, take.lots, ticks, HeaderFlag.OffBook);
    s.out.order(theirs, OrderEvent.None, OrderStatus.Filled, ExpiryReason.None, FRONT_ID_NONE, 0, HeaderFlag.Last);
    closeOrder(s, theirs);
  }
  s.out.order(own, OrderEvent.None, OrderStatus.Filled, ExpiryReason.None, FRONT_ID_NONE, 0, HeaderFlag.Last);
  closeOrder(s, own);
  for (const take of plan) trimReduceOnly(s, take.accountId, marketIndex);
  for (const take of plan) reviewLiquidating(s, take.accountId);
}
