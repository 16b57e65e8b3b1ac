// Collateral conversion (venue mechanics §4.4, §3.5): an account left owing USDC on its perpetual
// positions sells its other collateral for USDC, and the proceeds pay what it owes.
//
// The debt. A perpetual fill's fee and realized loss, a funding payment and a realization at mark
// are paid from the account's available USDC; what it cannot pay stays on the position as a debt
// (perp/settle.ts: fee debt and negative unsettled, "losers owe winners"). With the setting
// autoBorrowSettlements the USDC lend is redeemed and USDC borrowed to pay it at once
// (settle.ts fundDebts). When that setting is off, or the pool or the margin refuses, fundDebts
// marks the account here instead.
//
// When. At the end of the command that left the debt (Exchange.apply: after the command's rule
// and every timer it ran), each marked account converts, in ascending account id. So a debt is
// converted in the command that made it, on that command's engine time, whatever made it: a fill,
// a funding interval's end, a realization, a liquidation. A debt a conversion cannot clear (nothing
// to sell, no bid) stays on the position; the next command that leaves the account owing tries
// again, and a deposit of USDC pays it (settle.ts payDebtsOnDeposit).
//
// What. First the account's available USDC pays its debts (a spot sale may have brought USDC since
// the debt arose), then the claims waiting on the settlement line are paid (payClaims). While it
// still owes, it sells, lowest collateral weight first (the asset's configured haircut weight, the
// weight GET /api/v1/collateral shows; ties: the lower asset index), every asset other than USDC
// that has collateral parameters, that the account does not borrow, whose first spot market
// against USDC takes market orders now (unwind.ts bookTakes, and a free slot in the order pool),
// and of which the account has at least that market's minimum quantity available (units open
// orders lock and lends are not sold).
//
// How much. The venue asks its makers by a system RFQ; this engine has no RFQ, so it sells on the
// asset's USDC book. One system market IOC ask per asset, of the fewest whole lots whose proceeds,
// after the account's taker fee on each fill, cover what the account owes, found by walking the bids
// exactly as matching will fill them (price-time priority at the makers' prices, the market order's
// sweep band, stopping at the account's own bid as self-trade prevention RejectTaker stops); at
// least the market's minimum quantity, at most its maximum and the lots the account holds. When the
// bids run out first, it sells what they take and the next asset follows. A book that takes nothing
// now (no bid within the band, or the account's own bid first) is passed: no order. The proceeds
// pay the debts, each perpetual in market order (fee debt first, then the PnL debt), then waiting
// claims; what is left over (lot rounding, the minimum quantity) stays the account's USDC. An
// account whose taker fee takes everything it receives (10000 bps) sells nothing.
//
// The orders. SystemOrderType CollateralConversion: origin COLLATERAL_CONVERSION on order updates,
// fill type CollateralConversion in the fills history (src/wire/fill-type.ts). They pay the
// account's taker fee and no liquidation fee, and what they receive is neither lent nor used to
// repay a borrow (the settings autoLend and autoRepayBorrows, spot/settle.ts): it pays the debt.
//
// Marking a conversion order. OrderRecord.flags is one byte whose eight bits are all named, and a
// wider record would change the output digests of every journal written before it. A conversion
// order carries OrderFlag.Liquidation | OrderFlag.Adl on a spot market, a combination no other
// order has: auto-deleveraging orders (adl.ts), the only ones with both bits, trade perpetuals only.
// The bits' readers: fee.ts (the spot liquidation fee skips the combination; the perpetual one and
// perp/settle.ts feeBpsOf read perpetual fills only), output.ts (the record's system order type),
// spot/settle.ts (the proceeds), the account history (engine/store/history-account.ts believes a
// stored record's system order type when its Liquidation bit is set, as it is here). Matching
// reads only PostOnly and ReduceOnly, and the wire shows neither bit, so the mark changes nothing
// else. The order never outlives the command (an IOC matched at once), so no snapshot holds one.
//
// The marks are scratch of one command, not state: empty after every apply, never snapshotted or
// hashed.

import { FRONT_ID_NONE, OrderFlag, Side } from '../../bus/types.js';
import { assert } from '../assert.js';
import { NO_LEVEL } from '../book/book.js';
import { activateOrder, sweepReferenceOf } from '../book/matching.js';
import { NO_SLOT, Of } from '../book/orders.js';
import { beyondSweepBand } from '../book/reference.js';
import { payDebtsOnDeposit } from '../perp/settle.js';
import type { EngineState } from '../state.js';
import { BPS_PER_UNIT, baseUnits, feeUnits, notionalUnits, MAX_AMOUNT_UNITS, type AmountUnits, type PriceTicks, type QtyLots } from '../units.js';
import { bookTakes, openSystemSlot } from './unwind.js';

/** The flags of a conversion order (on a spot market: header). */
export const CONVERSION_FLAGS = OrderFlag.Liquidation | OrderFlag.Adl;

/** Whether an order with `flags` in a market of this kind is a conversion order (header). */
export function isConversion(flags: number, spot: boolean): boolean {
  return spot && (flags & CONVERSION_FLAGS) === CONVERSION_FLAGS;
}

/** The accounts left owing in the current command, each once, in the order marked. */
export class ConversionMarks {
  count = 0;
  private readonly marked: Uint8Array;
  private readonly list: Int32Array;

  constructor(maxAccounts: number) {
    this.marked = new Uint8Array(maxAccounts + 1);
    this.list = new Int32Array(maxAccounts);
  }

  mark(accountId: number): void {
    if (this.marked[accountId] !== 0) return;
    this.marked[accountId] = 1;
    this.list[this.count++] = accountId;
  }

  /** The marked accounts, ascending, and the marks cleared. */
  take(): number[] {
    const accounts = Array.from(this.list.subarray(0, this.count)).sort((a, b) => a - b);
    for (const accountId of accounts) this.marked[accountId] = 0;
    this.count = 0;
    return accounts;
  }

  /** Between commands no account is marked. */
  validate(): void {
    assert(this.count === 0 && this.marked.every((m) => m === 0), 'an account is marked for conversion between commands');
  }
}

/** End of a command: every account marked in it converts (header), in ascending account id. */
export function convertMarked(s: EngineState): void {
  if (s.conversion.count === 0) return;
  for (const accountId of s.conversion.take()) convertAccount(s, accountId);
  assert(s.conversion.count === 0, 'a conversion left an account owing for another conversion');
}

/** Pays the account's debts from its USDC, then sells collateral, lowest weight first, while it owes (header). */
function convertAccount(s: EngineState, accountId: number): void {
  const usdc = s.pools.valuationIndex;
  if (usdc < 0) return;
  payOwed(s, accountId, usdc);
  for (const assetIndex of assetsByWeight(s)) {
    const owed = owedUnits(s, accountId, usdc);
    if (owed === 0n) return;
    if (sellFor(s, accountId, assetIndex, owed)) payOwed(s, accountId, usdc);
  }
}

/** When it owes and holds USDC: pays the account's debts from its available USDC, then waiting claims, and its USDC balance. */
function payOwed(s: EngineState, accountId: number, usdc: number): void {
  if (s.ledger.availableUnits(accountId, usdc) === 0 || owedUnits(s, accountId, usdc) === 0n) return;
  payDebtsOnDeposit(s, accountId, usdc);
  s.out.balance(accountId, usdc, FRONT_ID_NONE, 0);
}

/** What the account owes on its perpetuals settled in USDC: fee debts and PnL debts. */
export function owedUnits(s: EngineState, accountId: number, usdc: number): bigint {
  const p = s.positions;
  let owed = 0n;
  for (let ordinal = 0; ordinal < p.perpCount; ordinal++) {
    const marketIndex = p.marketOf[ordinal];
    if (s.catalog.quoteIndexOf[marketIndex] !== usdc) continue;
    const cell = p.cell(accountId, marketIndex);
    owed += p.feeDebt[cell] + (p.unsettled[cell] < 0n ? -p.unsettled[cell] : 0n);
  }
  return owed;
}

/** The assets with collateral parameters other than USDC, lowest configured weight first, then by index. */
function assetsByWeight(s: EngineState): number[] {
  const pools = s.pools;
  const assets: number[] = [];
  for (let assetIndex = 0; assetIndex < pools.assetCount; assetIndex++) {
    if (assetIndex !== pools.valuationIndex && pools.collateralOf[assetIndex] !== undefined) assets.push(assetIndex);
  }
  const weight = (assetIndex: number) => pools.collateralOf[assetIndex]!.haircut.weight;
  return assets.sort((a, b) => (weight(a) !== weight(b) ? (weight(a) < weight(b) ? -1 : 1) : a - b));
}

/** Sells the lots of the asset that cover `owedUnits` (header); whether an order was placed. */
function sellFor(s: EngineState, accountId: number, assetIndex: number, owedUnits: bigint): boolean {
  if (s.pools.borrowed[s.pools.cell(accountId, assetIndex)] > 0) return false;
  const market = spotUsdcMarketOf(s, assetIndex);
  if (market < 0) return false;
  const spec = s.catalog.markets[market];
  const heldLots = Math.floor(s.ledger.availableUnits(accountId, assetIndex) / spec.baseUnitsPerLot);
  if (heldLots < spec.minQtyLots || !bookTakes(s, market) || s.pool.liveCount >= s.pool.capacity) return false;
  const covering = lotsCovering(s, accountId, market, owedUnits, Math.min(heldLots, spec.maxQtyLots));
  if (covering === 0) return false;
  placeConversion(s, accountId, market, Math.max(covering, spec.minQtyLots));
  return true;
}

/** The first spot market whose base is the asset and whose quote is USDC, or -1 (a perpetual is never sold into). */
function spotUsdcMarketOf(s: EngineState, assetIndex: number): number {
  for (let m = 0; m < s.catalog.marketCount; m++) {
    if (s.catalog.isSpot(m) && s.catalog.baseIndexOf[m] === assetIndex && s.catalog.quoteIndexOf[m] === s.pools.valuationIndex) return m;
  }
  return -1;
}

/**
 * The fewest lots, at most `capLots`, whose proceeds after the account's taker fee cover
 * `owedUnits` when sold into the market's bids now (all it would fill when they do not), walking
 * the bids as matching fills a market ask (header); 0 when the book would fill nothing.
 */
export function lotsCovering(s: EngineState, accountId: number, marketIndex: number, owedUnits: bigint, capLots: number): number {
  const pool = s.pool;
  const spec = s.catalog.markets[marketIndex];
  const feeBps = s.accounts.takerFeeBps[accountId];
  if (feeBps >= BPS_PER_UNIT) return 0;
  const bids = s.books[marketIndex].sideOf(Side.Bid);
  const reference = sweepReferenceOf(s, marketIndex, Side.Ask);
  let lots = 0;
  let left = owedUnits;
  for (let level = bids.best(); level !== NO_LEVEL; level = bids.worse(level)) {
    const priceTicks = bids.levelPrice[level];
    if (beyondSweepBand(spec, reference, Side.Ask, priceTicks)) return lots;
    for (let maker = bids.levelHead[level]; maker !== NO_SLOT; maker = pool.i32[maker << Of.w32 | Of.next]) {
      if (pool.u32[maker << Of.w32 | Of.accountId] === accountId) return lots;
      const room = Math.min(pool.f64[maker << Of.f64 | Of.remainingLots], capLots - lots);
      const proceeds = (k: number) => netProceeds(priceTicks, k, spec.quoteUnitsPerTickLot, feeBps);
      const taken = fewestLots(proceeds, left, room);
      lots += taken;
      left -= BigInt(proceeds(taken));
      if (left <= 0n || lots === capLots) return lots;
    }
  }
  return lots;
}

/** What one fill of `lots` at `priceTicks` pays the seller after its fee. */
function netProceeds(priceTicks: number, lots: number, quoteUnitsPerTickLot: number, feeBps: number): number {
  const quote = notionalUnits(priceTicks as PriceTicks, lots as QtyLots, quoteUnitsPerTickLot);
  return quote - feeUnits(quote, feeBps);
}

/** The least k in [0, room] with proceeds(k) ≥ owed, or room (proceeds grow with k: a lot adds its notional, its fee at most as much). */
function fewestLots(proceeds: (lots: number) => number, owed: bigint, room: number): number {
  if (BigInt(proceeds(room)) < owed) return room;
  let low = 0;
  let high = room;
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    if (BigInt(proceeds(middle)) >= owed) high = middle;
    else low = middle + 1;
  }
  return low;
}

/** The account's conversion order: a market IOC ask of `lots`, holding them, matched at once (header). */
function placeConversion(s: EngineState, accountId: number, marketIndex: number, lots: number): void {
  const spec = s.catalog.markets[marketIndex];
  const baseIndex = s.catalog.baseIndexOf[marketIndex];
  const holdUnits = baseUnits(lots as QtyLots, spec.baseUnitsPerLot);
  assert(lots > 0 && s.ledger.availableUnits(accountId, baseIndex) >= holdUnits, 'a conversion order holds more than the account has');
  const slot = openSystemSlot(s, accountId, marketIndex, Side.Ask, lots, CONVERSION_FLAGS, MAX_AMOUNT_UNITS);
  s.ledger.lock(accountId, baseIndex, holdUnits as AmountUnits);
  s.out.balance(accountId, baseIndex, FRONT_ID_NONE, 0);
  activateOrder(s, slot);
}
