// The liquidating state of an account (venue mechanics §1.4, §4): an account that borrows or holds
// a perpetual position is liquidating while its maintenance margin ratio is at or above 100 %,
// netEquity ≤ Σ N·MMF over its borrows and its perpetuals' exposures (account.ts `liquidatable`,
// on valuation.ts's maintenance figures: the margin summary's own net equity, TEN and Σ N·MMF).
// The flag is the AccountSettingFlag.Liquidating bit of account-settings.ts, so the state hash,
// the snapshot and GET /api/v1/account carry it.
//
// When. The ratio is re-checked when something can move it across 100 %:
//   - SetIndexPrice of an asset: the accounts that borrow it, hold it (available, locked or
//     lent) or have a position or an open order in a perpetual on it (perp/exposure.ts
//     followsUnderlying) while borrowing anything, and of those only the ones the trigger index
//     (trigger-index.ts) cannot show healthy at the current marks: a healthy account's bands
//     are drawn at each re-check, and the move re-checks those whose band it left, those
//     without bands (liquidating, unpriced, changed since) and no other;
//   - each hour of interest: every borrower;
//   - a perpetual's mark can move (each mark sample of it, perp/funding.ts sampleMarks; SetIndexPrice
//     of its underlying), and after its funding payments: the holders of a position in that
//     perpetual, through reviewPositionHoldersOf, and of those only the ones the trigger index
//     cannot show healthy (a holder's band of the perpetual's mark is drawn like an asset's);
//   - after a taker's fills changed perpetual positions: each account whose position they changed,
//     in the order first touched (perp/reduce-only.ts trimTouched);
//   - a BorrowLend move (borrow, repay, lend, redeem) and a withdrawal: that account.
// A flip writes the account's AccountSettingsRecord as an event for everyone.
//
// Entering the state cancels every open order of the account and starts the liquidation
// waterfall (engine/core/liquidation/waterfall.ts), which repays, unwinds on the book and, for a
// bankrupt account, draws on the insurance fund, step by step on engine time.
//
// Clearing. The flag clears at the first re-check that finds the ratio below 100 % again (or
// neither a borrow nor a position left), so an account that repays enough leaves the state at once. While it lasts, the
// state keeps the account from adding risk through borrow/lend and capital: a liquidating account may not borrow, lend or withdraw (AccountLiquidating); repaying,
// redeeming a lend and cancelling stay open. Automatic lends (an order's autoLend, the account's
// autoLend setting) do not happen while it is liquidating.
//
// Spot orders of a liquidating account. Only an order that trades what the account holds for
// what it owes passes: a bid whose base asset the account borrows, or an ask whose quote asset it
// borrows (AccountLiquidating otherwise, checked before the hold). It must be paid from what the
// account holds: the available balance, or its own lend redeemed with autoLendRedeem; the
// shortfall is never borrowed (auto-funding refuses the borrow with AccountLiquidating). Its size
// is not capped at the borrow: what it buys beyond the borrow stays a holding (collateral), which
// adds no borrow. The rule is read when the order is placed. Such an order lives until the
// waterfall's next step, which cancels it (reason Liquidation) to free what it locks.
//
// A borrowed asset without any mark leaves the summary unpriced: the flag then stays as it was.

import { AccountSettingFlag, FRONT_ID_NONE, Side } from '../../bus/types.js';
import type { EngineState } from '../state.js';
import { liquidatable } from './account.js';
import { bandFigures, maintenanceFigures } from './valuation.js';
import { enterLiquidation, keepLiquidating } from '../liquidation/waterfall.js';
import { followsUnderlying } from '../perp/exposure.js';
import { drawBands, releaseLeftBands, TRIGGER_SWITCH } from './trigger-index.js';

/** Whether the account is liquidating. */
export function isLiquidating(s: EngineState, accountId: number): boolean {
  return (s.accountSettings.flags[accountId] & AccountSettingFlag.Liquidating) !== 0;
}

/** Whether a spot order on `side` (0 bid, 1 ask) in the market receives an asset the account borrows (header). */
export function receivesBorrowedAsset(s: EngineState, accountId: number, marketIndex: number, side: number): boolean {
  const received = side === Side.Bid ? s.catalog.baseIndexOf[marketIndex] : s.catalog.quoteIndexOf[marketIndex];
  return s.pools.borrowed[s.pools.cell(accountId, received)] > 0;
}

/**
 * Re-checks one account's ratio and flips its flag when it crossed 100 % either way (event on a
 * flip); true on a flip. `draw`: a price move's re-check or the hour's review of the borrowers,
 * which draw a healthy account's bands (trigger-index.ts); the other re-checks (fills, borrow/lend
 * moves, the waterfall's steps) leave them to the next move, which re-checks the account anyway
 * once it changed.
 */
export function reviewLiquidating(s: EngineState, accountId: number, draw = false): boolean {
  const was = isLiquidating(s, accountId);
  let now = false;
  if (s.pools.borrowCountOf[accountId] > 0 || s.positions.positionCountOf[accountId] > 0) {
    const past = pastTheLine(s, accountId, draw && !TRIGGER_SWITCH.fullWalk);
    if (past === null) {
      s.trigger.unband(accountId);
      return false;
    }
    now = past;
    if (now) s.trigger.unband(accountId);
  }
  if (now && was) {
    keepLiquidating(s);
    return false;
  }
  if (now === was) return false;
  s.accountSettings.flags[accountId] ^= AccountSettingFlag.Liquidating;
  s.out.accountSettings(accountId, FRONT_ID_NONE, 0, 0);
  if (now) enterLiquidation(s, accountId);
  return true;
}

/**
 * Whether the account is at or past the liquidation line (null: a borrow or perpetual without a
 * mark), from its maintenance figures (valuation.ts: the margin summary's own net equity, TEN and
 * Σ N·MMF). With `bands` a healthy account's bands are drawn, from the priced assets and
 * perpetuals the figures valued.
 */
function pastTheLine(s: EngineState, accountId: number, bands: boolean): boolean | null {
  if (!bands) {
    const figures = maintenanceFigures(s, accountId);
    return figures.unpriced ? null : liquidatable(figures.netEquityUnits, figures);
  }
  const figures = bandFigures(s, accountId);
  if (figures.unpriced) return null;
  const past = liquidatable(figures.netEquityUnits, figures);
  if (!past) drawBands(s, accountId, figures);
  return past;
}

/**
 * The indexed re-check of a price move (trigger-index.ts): the accounts at risk that `exposed`
 * keeps and the index cannot show healthy, ascending. A flip cancels orders, which can move a
 * book mark: the bands are released again and those it pushed out join the walk ahead.
 */
function recheckIndexed(s: EngineState, exposed: (accountId: number) => boolean): void {
  releaseLeftBands(s);
  const queue = s.trigger.unbandedAccounts(exposed);
  for (let i = 0; i < queue.length; i++) {
    const accountId = queue[i];
    TRIGGER_SWITCH.rechecks++;
    const length = s.trigger.poolLength;
    if (!reviewLiquidating(s, accountId, true)) continue;
    releaseLeftBands(s);
    const ahead = s.trigger.joinedSince(length, exposed).filter((id) => id > accountId && !queue.includes(id, i + 1));
    if (ahead.length > 0) queue.splice(i + 1, queue.length - i - 1, ...[...queue.slice(i + 1), ...ahead].sort((a, b) => a - b));
  }
}

/**
 * Draws the bands of every account at risk that holds none and is healthy at the current marks:
 * what the first price move's re-checks would draw for them (a healthy account's re-check writes
 * no record), drawn before it instead, so that move re-checks only the accounts past the line,
 * unpriced or liquidating. A start or a snapshot load leaves every band undrawn (the index is
 * derived), and the first move would otherwise re-check every account at risk in one command.
 * Changes no state and writes no record.
 */
export function drawAllBands(s: EngineState): void {
  if (TRIGGER_SWITCH.fullWalk) return;
  for (const accountId of s.trigger.unbandedAccounts(() => true)) {
    if (!isLiquidating(s, accountId)) pastTheLine(s, accountId, true);
  }
}

/** Whether the account borrows, lends or holds the asset or trades a perpetual on it (a price move of it may move its ratio). */
function exposedTo(s: EngineState, accountId: number, assetIndex: number): boolean {
  const pools = s.pools;
  const cell = pools.cell(accountId, assetIndex);
  return pools.borrowed[cell] > 0 || pools.lent[cell] > 0
    || s.ledger.availableUnits(accountId, assetIndex) > 0 || s.ledger.lockedUnits(accountId, assetIndex) > 0
    || followsUnderlying(s, accountId, assetIndex);
}

/**
 * After a price of `assetIndex` moved: re-checks the borrowers that borrow or hold it or trade a
 * perpetual on it, in account order. The trigger index (trigger-index.ts) names those whose
 * re-check can change anything; the full walk re-checks all of them, with the same records.
 */
export function reviewBorrowersOf(s: EngineState, assetIndex: number): void {
  const pools = s.pools;
  if (pools.borrowerCount === 0) return;
  const exposed = (accountId: number): boolean => pools.borrowCountOf[accountId] > 0 && exposedTo(s, accountId, assetIndex);
  if (!TRIGGER_SWITCH.fullWalk) return recheckIndexed(s, exposed);
  for (const accountId of pools.borrowersAscending()) {
    if (!exposedTo(s, accountId, assetIndex)) continue;
    TRIGGER_SWITCH.rechecks++;
    reviewLiquidating(s, accountId);
  }
}

/**
 * After the mark of the perpetual `marketIndex` can have moved: re-checks the accounts holding a
 * position in it, in account order; the trigger index names those whose re-check can change
 * anything (never a walk over every holder), the full walk re-checks every holder.
 */
export function reviewPositionHoldersOf(s: EngineState, marketIndex: number): void {
  const p = s.positions;
  if (!TRIGGER_SWITCH.fullWalk) return recheckIndexed(s, (accountId) => p.lots[p.cell(accountId, marketIndex)] !== 0);
  for (const accountId of p.holdersOf(marketIndex)) {
    TRIGGER_SWITCH.rechecks++;
    reviewLiquidating(s, accountId);
  }
}

/** After an index price of `assetIndex` moved: the holders of every perpetual on it, in market order. */
export function reviewUnderlyingHolders(s: EngineState, assetIndex: number): void {
  const p = s.positions;
  for (let ordinal = 0; ordinal < p.perpCount; ordinal++) {
    if (s.catalog.baseIndexOf[p.marketOf[ordinal]] === assetIndex) reviewPositionHoldersOf(s, p.marketOf[ordinal]);
  }
}

/**
 * After an hour of interest: re-checks every borrower, in account order, drawing the bands of the
 * healthy ones (the interest dropped them all: left undrawn, the next price move would re-check
 * every borrower exposed to it in one command).
 */
export function reviewAllBorrowers(s: EngineState): void {
  if (s.pools.borrowerCount === 0) return;
  for (const accountId of s.pools.borrowersAscending()) reviewLiquidating(s, accountId, true);
}
