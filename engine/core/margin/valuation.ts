// An account's margin summary (venue mechanics §1.1–§1.4): every asset it holds, lends or borrows
// valued at mark (mark.ts), the collateral after haircut, the liabilities, net equity, the
// exposure of its borrows and the margin it needs. The one place these figures are computed. The
// collateral query (funds/risk.ts), the leverage limit (leverage-limit.ts) and the liquidation
// waterfall's ADL and backstop steps read the whole summary. The liquidation re-checks that draw
// no bands (fills, borrow/lend moves, the hourly review of every borrower), the
// liquidation price's search and the perpetual position rows and events read only
// maintenanceFigures: net equity, TEN, Σ N·MMF and the perpetuals' lines, the same figures without
// the assets' initial margin and the display fractions (about half the time per account); a price
// move's re-check reads bandFigures (the same, with the priced assets its bands are drawn from);
// order admission, the borrow and withdrawal tests and a backstop provider's check read
// admissionFigures (net equity, Σ N·IMF, unpriced, stale). One computation (figuresOf) makes all
// three, each figure the summary's own to the unit.
//
//   collateral(asset) = (available + locked + lent) × mark × haircut weight   (collateral.ts)
//   liability(asset)  = borrowed × mark, no haircut
//   netEquity         = Σ collateral − Σ liabilities + Σ perpetual uPnL + unsettled equity
//   exposure          = each borrow at mark, and each perpetual's worst-side exposure at its mark
//                       (perp/exposure.ts), IMF with the account's leverage limit (fractions.ts)
//
// Cost: O(assets + perpetuals + the account's open orders) for one account, never a walk over accounts. Precision: bigint throughout; the
// roundings are those of collateral.ts, fractions.ts and account.ts (always against the account).
//
// An asset without a mark counts for nothing as collateral; a borrowed asset without a mark makes
// the summary `unpriced` (its liability cannot be valued). `stale` says the valuation rests on a
// price that is not a fresh index: some asset that is borrowed, or held with collateral
// parameters, is valued at a book or stale index price, or not at all. New borrowing needs
// neither (venue: stale prices block new borrowing).

import { assert } from '../assert.js';
import type { EngineState } from '../state.js';
import { accountMargin, netEquity, type AccountMargin, type Exposure } from './account.js';
import { collateralLine, collateralValue, notionalCeil, type UnitPrice } from './collateral.js';
import type { Fraction } from './fixed.js';
import { positionImf, positionMmf, requirementUnits } from './fractions.js';
import { MarkSource, markOf, NO_MARK_MARKET, type Mark } from './mark.js';
import { perpSummary, type PerpFillChange, type PerpLine, type PerpOrderChange, type PerpSummary } from '../perp/exposure.js';

/** One asset of the summary, in the asset's units and in quote units of the valuation asset. */
export interface AssetMarginLine {
  assetIndex: number;
  availableUnits: bigint;
  lockedUnits: bigint;
  lentUnits: bigint;
  borrowedUnits: bigint;
  mark: Mark | null;
  /** (available + locked + lent) × mark before the haircut, rounded down. */
  notionalUnits: bigint;
  weight: Fraction;
  collateralUnits: bigint;
  liabilityUnits: bigint;
}

export interface MarginSummary {
  /** Assets the account holds, lends or borrows, by asset index. */
  lines: AssetMarginLine[];
  assetsUnits: bigint;
  liabilitiesUnits: bigint;
  netEquityUnits: bigint;
  /** TEN, Σ N·IMF (netEquityLocked), Σ N·MMF and the account fractions over the borrows. */
  margin: AccountMargin;
  /** The perpetuals: unrealized PnL, unsettled equity, each one's exposure (perp/exposure.ts). */
  perp: PerpSummary;
  /** A borrowed asset, or a perpetual with a position or exposure, has no mark at all. */
  unpriced: boolean;
  /** Some asset that counts is valued at anything but a fresh index (header). */
  stale: boolean;
}

/**
 * A hypothetical change to value the account with: `heldDelta` more of one asset available,
 * `borrowDelta` more borrowed, and, when `price` is given, that asset valued at it (as a fresh
 * index) instead of its mark.
 */
export interface MarginChange {
  assetIndex: number;
  heldDelta: bigint;
  borrowDelta: bigint;
  price?: UnitPrice;
  /** A perpetual order not yet placed, counted as open (order admission, perp/hold.ts). */
  perpOrder?: PerpOrderChange;
  /** A perpetual fill not yet made, counted as made (a backstop provider's check, liquidation/backstop.ts). */
  perpFill?: PerpFillChange;
}

const NO_CHANGE: MarginChange = { assetIndex: -1, heldDelta: 0n, borrowDelta: 0n };

/** The account's margin summary at engine time `nowUs`, optionally as it would be after `change`. */
export function marginSummary(s: EngineState, accountId: number, change: MarginChange = NO_CHANGE, nowUs = s.lastTimeUs): MarginSummary {
  const pools = s.pools;
  assert(pools.valuationIndex >= 0, 'a margin summary without a valuation asset');
  const quoteDecimals = pools.decimalsOf[pools.valuationIndex];
  const leverage = BigInt(s.accountSettings.leverageLimitHundredths[accountId]);
  const lines: AssetMarginLine[] = [];
  const exposures: Exposure[] = [];
  let unpriced = false;
  let stale = false;
  for (let assetIndex = 0; assetIndex < pools.assetCount; assetIndex++) {
    const changed = assetIndex === change.assetIndex;
    const cell = pools.cell(accountId, assetIndex);
    const availableUnits = BigInt(s.ledger.availableUnits(accountId, assetIndex)) + (changed ? change.heldDelta : 0n);
    const lockedUnits = BigInt(s.ledger.lockedUnits(accountId, assetIndex));
    const lentUnits = BigInt(pools.lent[cell]);
    const borrowedUnits = BigInt(pools.borrowed[cell]) + (changed ? change.borrowDelta : 0n);
    const heldUnits = availableUnits + lockedUnits + lentUnits;
    if (heldUnits === 0n && borrowedUnits === 0n) continue;
    assert(heldUnits >= 0n && borrowedUnits >= 0n, 'a margin change leaves a holding negative');
    const mark = changed && change.price !== undefined ? assumedMark(change.price) : markOf(s, assetIndex, nowUs);
    const collateral = pools.collateralOf[assetIndex];
    if ((borrowedUnits > 0n || collateral !== undefined) && (mark === null || (mark.source !== MarkSource.Index && mark.source !== MarkSource.Fixed))) stale = true;
    const line: AssetMarginLine = {
      assetIndex, availableUnits, lockedUnits, lentUnits, borrowedUnits, mark, notionalUnits: 0n, weight: 0n, collateralUnits: 0n, liabilityUnits: 0n,
    };
    lines.push(line);
    if (mark === null) {
      if (borrowedUnits > 0n) unpriced = true;
      continue;
    }
    const valued = collateralLine(collateral?.haircut, heldUnits, pools.decimalsOf[assetIndex], mark.price, quoteDecimals);
    line.notionalUnits = valued.notionalUnits;
    line.weight = valued.weight;
    line.collateralUnits = valued.collateralUnits;
    if (borrowedUnits === 0n) continue;
    assert(collateral !== undefined, 'a borrow of an asset without collateral parameters');
    line.liabilityUnits = notionalCeil(borrowedUnits, mark.price);
    exposures.push({
      notionalUnits: line.liabilityUnits,
      imf: positionImf(collateral.imf, line.liabilityUnits, quoteDecimals, leverage),
      mmf: positionMmf(collateral.mmf, line.liabilityUnits, quoteDecimals),
    });
  }
  const perp = perpSummary(s, accountId, leverage, change.perpOrder ?? null, nowUs, change.perpFill ?? null);
  exposures.push(...perp.exposures);
  const assets = lines.map((l) => ({ collateralUnits: l.collateralUnits, liabilityUnits: l.liabilityUnits }));
  const equity = netEquity(assets, perp.pnlUnrealizedUnits, perp.unsettledUnits);
  return { lines, ...equity, margin: accountMargin(exposures, equity.netEquityUnits, leverage), perp, unpriced: unpriced || perp.unpriced, stale };
}

/**
 * What the liquidation test reads of an account (account.ts `liquidatable`): net equity, TEN and
 * Σ N·MMF, and whether some borrow or perpetual has no mark. Each figure is the one marginSummary
 * computes, to the unit (the same functions, the same roundings; sums of bigints do not depend on
 * their order): only the initial-margin side and the display fractions are left out, and assets
 * the account neither holds nor borrows are skipped before any bigint is made.
 */
export interface MaintenanceFigures {
  netEquityUnits: bigint;
  tenUnits: bigint;
  mmfUnits: bigint;
  unpriced: boolean;
  /** The perpetuals with a position or an exposure (perp/exposure.ts perpSummary's lines, the summary's own). */
  perpLines: readonly PerpLine[];
}

/** A priced asset the account holds or borrows, as the trigger bands read it (trigger-index.ts drawBands). */
export interface PricedAssetLine {
  assetIndex: number;
  /** Available + locked + lent. */
  heldUnits: bigint;
  borrowedUnits: bigint;
  mark: Mark;
}

/** The maintenance figures with the priced assets they valued: what drawing an account's trigger bands reads. */
export interface BandFigures extends MaintenanceFigures {
  assetLines: readonly PricedAssetLine[];
}

/**
 * What order admission and the borrow and withdrawal tests read (account.ts `admits`): net equity
 * and Σ N·IMF, whether a borrow or perpetual has no mark, and whether the valuation rests on
 * anything but fresh index prices; each the margin summary's own, to the unit.
 */
export interface AdmissionFigures {
  netEquityUnits: bigint;
  imfUnits: bigint;
  unpriced: boolean;
  stale: boolean;
}

/** Every figure figuresOf computes: one object shape for every caller (imfUnits is 0 unless asked for). */
interface Figures extends BandFigures, AdmissionFigures {}

const NO_PERP_LINES: readonly PerpLine[] = [];
const NO_ASSET_LINES: readonly PricedAssetLine[] = [];

/**
 * The account's maintenance figures at engine time `nowUs`, optionally as they would be after
 * `change` (above): the liquidation re-checks that draw no bands and the liquidation price's
 * search read these.
 */
export function maintenanceFigures(s: EngineState, accountId: number, change: MarginChange = NO_CHANGE, nowUs = s.lastTimeUs): MaintenanceFigures {
  return figuresOf(s, accountId, change, nowUs, null, false);
}

/** The account's maintenance figures as it stands, with its priced assets: a price move's re-check, which draws bands. */
export function bandFigures(s: EngineState, accountId: number): BandFigures {
  return figuresOf(s, accountId, NO_CHANGE, s.lastTimeUs, [], false);
}

/** The account's admission figures, as it would be after `change` (above): order admission, the borrow and withdrawal tests. */
export function admissionFigures(s: EngineState, accountId: number, change: MarginChange): AdmissionFigures {
  return figuresOf(s, accountId, change, s.lastTimeUs, null, true);
}

/**
 * The figures above, pushing each priced asset it values to `assetLines` when given and summing
 * Σ N·IMF when `initial`. Every figures object it returns has the one shape (assetLines empty and
 * imfUnits 0 when not asked for), so the code that reads them sees one object map.
 */
function figuresOf(s: EngineState, accountId: number, change: MarginChange, nowUs: number, assetLines: PricedAssetLine[] | null, initial: boolean): Figures {
  const pools = s.pools;
  assert(pools.valuationIndex >= 0, 'a margin summary without a valuation asset');
  const quoteDecimals = pools.decimalsOf[pools.valuationIndex];
  const leverage = BigInt(s.accountSettings.leverageLimitHundredths[accountId]);
  let collateralUnits = 0n;
  let liabilitiesUnits = 0n;
  let tenUnits = 0n;
  let mmfUnits = 0n;
  let imfUnits = 0n;
  let unpriced = false;
  let stale = false;
  for (let assetIndex = 0; assetIndex < pools.assetCount; assetIndex++) {
    const changed = assetIndex === change.assetIndex;
    const cell = pools.cell(accountId, assetIndex);
    const available = s.ledger.availableUnits(accountId, assetIndex);
    const locked = s.ledger.lockedUnits(accountId, assetIndex);
    const lent = pools.lent[cell];
    const borrowed = pools.borrowed[cell];
    if (!changed && available === 0 && locked === 0 && lent === 0 && borrowed === 0) continue;
    // Three safe integers whose sum is safe add exactly as numbers; a larger sum is added in bigint.
    const held = available + locked + lent;
    let heldUnits = Number.isSafeInteger(held) ? BigInt(held) : BigInt(available) + BigInt(locked) + BigInt(lent);
    let borrowedUnits = BigInt(borrowed);
    if (changed) {
      heldUnits += change.heldDelta;
      borrowedUnits += change.borrowDelta;
    }
    if (heldUnits === 0n && borrowedUnits === 0n) continue;
    assert(heldUnits >= 0n && borrowedUnits >= 0n, 'a margin change leaves a holding negative');
    const mark = changed && change.price !== undefined ? assumedMark(change.price) : markOf(s, assetIndex, nowUs);
    const collateral = pools.collateralOf[assetIndex];
    if ((borrowedUnits > 0n || collateral !== undefined) && (mark === null || (mark.source !== MarkSource.Index && mark.source !== MarkSource.Fixed))) stale = true;
    if (mark === null) {
      if (borrowedUnits > 0n) unpriced = true;
      continue;
    }
    assetLines?.push({ assetIndex, heldUnits, borrowedUnits, mark });
    // Nothing held is worth nothing at any weight.
    if (heldUnits > 0n) collateralUnits += collateralValue(collateral?.haircut, heldUnits, pools.decimalsOf[assetIndex], mark.price, quoteDecimals);
    if (borrowedUnits === 0n) continue;
    assert(collateral !== undefined, 'a borrow of an asset without collateral parameters');
    const liabilityUnits = notionalCeil(borrowedUnits, mark.price);
    liabilitiesUnits += liabilityUnits;
    tenUnits += liabilityUnits;
    mmfUnits += requirementUnits(liabilityUnits, positionMmf(collateral.mmf, liabilityUnits, quoteDecimals));
    if (initial) imfUnits += requirementUnits(liabilityUnits, positionImf(collateral.imf, liabilityUnits, quoteDecimals, leverage));
  }
  let netEquityUnits = collateralUnits - liabilitiesUnits;
  let perpLines: readonly PerpLine[] = NO_PERP_LINES;
  if (s.positions.perpCount > 0) {
    const perp = perpSummary(s, accountId, leverage, change.perpOrder ?? null, nowUs, change.perpFill ?? null);
    netEquityUnits += perp.pnlUnrealizedUnits + perp.unsettledUnits;
    for (const exposure of perp.exposures) {
      tenUnits += exposure.notionalUnits;
      mmfUnits += requirementUnits(exposure.notionalUnits, exposure.mmf);
      if (initial) imfUnits += requirementUnits(exposure.notionalUnits, exposure.imf);
    }
    if (perp.unpriced) unpriced = true;
    perpLines = perp.lines;
  }
  return { netEquityUnits, tenUnits, mmfUnits, imfUnits, unpriced, stale, perpLines, assetLines: assetLines ?? NO_ASSET_LINES };
}

/** A price the caller assumes for an asset, valued as a fresh index would be. */
function assumedMark(price: UnitPrice): Mark {
  return { price, source: MarkSource.Index, priceE9: 0, marketId: NO_MARK_MARKET, ticks: 0 };
}
