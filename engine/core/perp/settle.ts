// A perpetual fill's moves: the buyer's position grows by the lots and its cost by −notional, the
// seller's the other way (positions.ts); what a reduction realizes is settled in USDC through the
// settlement line, and each party pays its futures fee (maker or taker rate of the market, in
// basis points of the notional, rounded down) into the fee ledger.
//
// Order of moves for one party (the header of positions.ts has the money rules):
//   1. the position: open, increase, reduce, close or flip (applyFill), giving its realized PnL R;
//   2. the fee: from available USDC to the fee ledger, the part available cannot pay becomes the
//      position's fee debt;
//   3. R: a loss is paid into the line from available USDC (the rest becomes debt), a profit is
//      paid from the line (the rest becomes a claim, queued);
//   4. debts left from before are paid from what is available now (then a liquidation order's
//      liquidation fee, liquidation/fee.ts), then queued claims are paid from whatever the line holds;
//   5. with the account setting autoBorrowSettlements (PATCH /api/v1/account), what it still owes
//      is covered by redeeming its USDC lend, then borrowing USDC in whole pool steps, all or
//      nothing and by the pool's and the margin's checks (margin/auto-funding.ts planFunding), and
//      paid; without it, or when a check refuses, the debt stays on the position and the account
//      sells collateral for USDC at the end of the command (liquidation/conversion.ts).
// No lot of any asset is locked by a perpetual order, so nothing is released here.

import { AccountSettingFlag, CommandFlag, FRONT_ID_NONE, OrderFlag, ResultCode } from '../../bus/types.js';
import { assert } from '../assert.js';
import { applyFunding, planFunding, type Funding } from '../margin/auto-funding.js';
import type { Fill } from '../kinds.js';
import type { EngineState } from '../state.js';
import { takePerpLiquidationFee } from '../liquidation/fee.js';
import { feeUnits, type AmountUnits } from '../units.js';
import { fillEventOf, reportPosition } from './position-events.js';
import { fundBeforeFill } from './funding-passes.js';
import { Of } from '../book/orders.js';

/** One party's share of a fill: signed lots and signed cost. */
function applyFill(s: EngineState, cell: number, deltaLots: number, deltaCost: bigint): bigint {
  const p = s.positions;
  const lots = p.lots[cell];
  const next = lots + deltaLots;
  assert(Number.isSafeInteger(next), 'a position size leaves the safe-integer range');
  if (lots === 0) {
    p.positionId[cell] = ++p.lastPositionId;
    p.realized[cell] = 0n;
    p.fees[cell] = 0n;
  }
  if (lots === 0 || Math.sign(deltaLots) === Math.sign(lots)) {
    p.setLots(cell, next);
    p.cost[cell] += deltaCost;
    p.entryCost[cell] += deltaCost;
    return 0n;
  }
  const reduced = Math.min(Math.abs(deltaLots), Math.abs(lots));
  const costPerLot = deltaCost / BigInt(Math.abs(deltaLots)); // exact: price × quoteUnitsPerTickLot
  const share = floorDiv(p.cost[cell] * BigInt(reduced), BigInt(Math.abs(lots)));
  const realized = share + costPerLot * BigInt(reduced);
  const rest = Math.abs(deltaLots) - reduced;
  p.cost[cell] = p.cost[cell] - share + costPerLot * BigInt(rest);
  // The entry cost follows the same rule (the entry price stays on a reduction, a flip resets it).
  p.entryCost[cell] = p.entryCost[cell] - floorDiv(p.entryCost[cell] * BigInt(reduced), BigInt(Math.abs(lots))) + costPerLot * BigInt(rest);
  p.setLots(cell, next);
  p.realized[cell] += realized;
  if (next === 0) assert(p.cost[cell] === 0n && p.entryCost[cell] === 0n, 'a closed position keeps a cost');
  return realized;
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n ? q - 1n : q;
}

/** Moves up to `units` of available quote from the account; returns what moved. */
function takeAvailable(s: EngineState, accountId: number, quoteIndex: number, units: bigint): number {
  const paid = Math.min(Number(units), s.ledger.availableUnits(accountId, quoteIndex));
  return paid > 0 ? paid : 0;
}

/** The fee of one party: paid from available quote, the rest owed (fee debt). */
function chargeFee(s: EngineState, cell: number, accountId: number, quoteIndex: number, fee: number): void {
  const p = s.positions;
  p.fees[cell] += BigInt(fee);
  const paid = takeAvailable(s, accountId, quoteIndex, BigInt(fee));
  if (paid > 0) s.ledger.sweepToFees(accountId, quoteIndex, paid as AmountUnits);
  p.feeDebt[cell] += BigInt(fee - paid);
  p.changed(accountId);
}

/** Realized PnL of one party: a loss into the line (the rest a debt), a profit out of it (the rest a queued claim). */
export function settleRealized(s: EngineState, cell: number, accountId: number, quoteIndex: number, realized: bigint): void {
  const p = s.positions;
  if (realized < 0n) {
    const paid = takeAvailable(s, accountId, quoteIndex, -realized);
    if (paid > 0) {
      s.ledger.toSettlement(accountId, quoteIndex, paid as AmountUnits);
      p.settlementUnits[quoteIndex] += paid;
    }
    p.unsettled[cell] += realized + BigInt(paid);
  } else if (realized > 0n) {
    p.unsettled[cell] += realized;
  }
  p.syncClaim(cell);
}

/** Pays the account's debts on `cell` from available quote: fee debt to the fee ledger first, then the PnL debt into the line. */
export function payDebts(s: EngineState, cell: number, accountId: number, quoteIndex: number): void {
  const p = s.positions;
  if (p.feeDebt[cell] > 0n) {
    const paid = takeAvailable(s, accountId, quoteIndex, p.feeDebt[cell]);
    if (paid > 0) s.ledger.sweepToFees(accountId, quoteIndex, paid as AmountUnits);
    p.feeDebt[cell] -= BigInt(paid);
    p.changed(accountId);
  }
  if (p.unsettled[cell] < 0n) {
    const paid = takeAvailable(s, accountId, quoteIndex, -p.unsettled[cell]);
    if (paid > 0) {
      s.ledger.toSettlement(accountId, quoteIndex, paid as AmountUnits);
      p.settlementUnits[quoteIndex] += paid;
      p.unsettled[cell] += BigInt(paid);
    }
  }
}

const SETTLEMENT_FUNDING: Funding = { redeemUnits: 0, borrowUnits: 0 };

/**
 * With autoBorrowSettlements: what the account still owes on `cell` redeemed and borrowed in USDC,
 * then paid (header, step 5); a debt left marks the account for collateral conversion.
 */
export function fundDebts(s: EngineState, cell: number, accountId: number, quoteIndex: number): void {
  const p = s.positions;
  const owed = p.feeDebt[cell] + (p.unsettled[cell] < 0n ? -p.unsettled[cell] : 0n);
  if (owed === 0n) return;
  const flags = CommandFlag.AutoLendRedeem | CommandFlag.AutoBorrow;
  const auto = (s.accountSettings.flags[accountId] & AccountSettingFlag.AutoBorrowSettlements) !== 0;
  if (auto && planFunding(s, accountId, quoteIndex, Number(owed), 0, flags, SETTLEMENT_FUNDING) === ResultCode.Ok) {
    applyFunding(s, accountId, quoteIndex, SETTLEMENT_FUNDING);
    payDebts(s, cell, accountId, quoteIndex);
    return;
  }
  s.conversion.mark(accountId);
}

/** Pays queued claims, oldest first, from what the line holds; a balance record for each account paid. */
export function payClaims(s: EngineState, quoteIndex: number): void {
  const p = s.positions;
  for (let steps = 0; p.settlementUnits[quoteIndex] > 0; steps++) {
    assert(steps <= p.lots.length, 'the claim payments ran past the number of positions');
    const cell = p.headClaim();
    if (cell < 0) return;
    const accountId = p.accountOf(cell);
    const paid = Math.min(p.settlementUnits[quoteIndex], Number(p.unsettled[cell]));
    // A claim into USDC: the account's margin at every mark is unchanged, so are its trigger bands.
    s.trigger.spare(accountId, quoteIndex);
    p.settlementUnits[quoteIndex] -= paid;
    p.unsettled[cell] -= BigInt(paid);
    s.ledger.fromSettlement(accountId, quoteIndex, paid as AmountUnits);
    p.syncClaim(cell);
    s.trigger.endSpare();
    s.out.balance(accountId, quoteIndex, FRONT_ID_NONE, 0);
  }
}

/** The futures fee rate of the order in `slot` for this fill. */
function feeBpsOf(s: EngineState, slot: number, fill: Fill): number {
  if ((s.pool.u8[slot << Of.w8 | Of.flags] & OrderFlag.Adl) !== 0) return 0; // auto-deleveraging and backstop fills pay no trading fee (liquidation/adl.ts, backstop.ts)
  const perp = s.catalog.markets[fill.marketIndex].perp;
  assert(perp !== undefined, 'a perpetual fill in a market without perp parameters');
  return slot === fill.taker ? perp.takerFeeBps : perp.makerFeeBps;
}

/** One party of a perpetual fill: position, fee, realized PnL, old debts (header order). */
function settleParty(s: EngineState, fill: Fill, slot: number, buys: boolean): number {
  const accountId = s.pool.u32[slot << Of.w32 | Of.accountId];
  const quoteIndex = s.catalog.quoteIndexOf[fill.marketIndex];
  const cell = s.positions.cell(accountId, fill.marketIndex);
  const notional = BigInt(fill.quoteUnits);
  const realized = applyFill(s, cell, buys ? fill.qtyLots : -fill.qtyLots, buys ? -notional : notional);
  const fee = feeUnits(fill.quoteUnits, feeBpsOf(s, slot, fill));
  chargeFee(s, cell, accountId, quoteIndex, fee);
  settleRealized(s, cell, accountId, quoteIndex, realized);
  payDebts(s, cell, accountId, quoteIndex);
  const liquidationFee = takePerpLiquidationFee(s, slot, slot === fill.taker, quoteIndex, fill.quoteUnits);
  fundDebts(s, cell, accountId, quoteIndex);
  return fee + liquidationFee;
}

export function settlePerp(s: EngineState, fill: Fill): void {
  // While the perpetual's funding pass runs, a party it has not reached pays on its size first (funding-passes.ts).
  fundBeforeFill(s, s.pool.u32[fill.buyer << Of.w32 | Of.accountId], fill.marketIndex);
  fundBeforeFill(s, s.pool.u32[fill.seller << Of.w32 | Of.accountId], fill.marketIndex);
  fill.buyerFeeUnits = settleParty(s, fill, fill.buyer, true) as AmountUnits;
  fill.sellerFeeUnits = settleParty(s, fill, fill.seller, false) as AmountUnits;
  payClaims(s, s.catalog.quoteIndexOf[fill.marketIndex]);
}

/**
 * Balances of a fill: maker quote, then (with `takerToo`) taker quote (a perpetual moves only its
 * quote asset); then the maker's and the taker's position events.
 */
export function reportPerpSettlement(s: EngineState, fill: Fill, takerToo: boolean): void {
  const quoteIndex = s.catalog.quoteIndexOf[fill.marketIndex];
  s.out.balance(s.pool.u32[fill.maker << Of.w32 | Of.accountId], quoteIndex, FRONT_ID_NONE, 0);
  if (takerToo) s.out.balance(s.pool.u32[fill.taker << Of.w32 | Of.accountId], quoteIndex, FRONT_ID_NONE, 0);
  for (const slot of [fill.maker, fill.taker]) {
    const accountId = s.pool.u32[slot << Of.w32 | Of.accountId];
    const lotsAfter = s.positions.lots[s.positions.cell(accountId, fill.marketIndex)];
    const lotsBefore = lotsAfter - (slot === fill.buyer ? fill.qtyLots : -fill.qtyLots);
    reportPosition(s, accountId, fill.marketIndex, fillEventOf(lotsBefore, lotsAfter));
  }
}

/** An account's balance of a perpetual market's quote asset. */
export function reportPerpBalances(s: EngineState, marketIndex: number, accountId: number): void {
  s.out.balance(accountId, s.catalog.quoteIndexOf[marketIndex], FRONT_ID_NONE, 0);
}

/** A deposit of the quote asset pays the account's perpetual debts first (losers owe winners), then waiting claims. */
export function payDebtsOnDeposit(s: EngineState, accountId: number, assetIndex: number): void {
  const p = s.positions;
  let paidAny = false;
  for (let ordinal = 0; ordinal < p.perpCount; ordinal++) {
    const marketIndex = p.marketOf[ordinal];
    if (s.catalog.quoteIndexOf[marketIndex] !== assetIndex) continue;
    const cell = p.cell(accountId, marketIndex);
    if (p.feeDebt[cell] === 0n && p.unsettled[cell] >= 0n) continue;
    payDebts(s, cell, accountId, assetIndex);
    paidAny = true;
  }
  if (paidAny) payClaims(s, assetIndex);
}
