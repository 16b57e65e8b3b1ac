// Funding payments at a perpetual's interval end (venue mechanics §3.4): every open position pays
// or receives rate × size × mark, in USDC; a positive rate has longs pay shorts.
//
// Exactly zero-sum: with the position's notional n = lots × baseUnitsPerLot × mark in quote units
// (exact as a fraction), the exact payment is rate × n, and since a perpetual's positions sum to
// 0 lots, the exact payments sum to 0. Each payer pays its payment rounded up, each receiver gets
// its receipt rounded down, so what payers owe is at least what receivers are owed; the rounding
// residue (at most one unit per position) stays in the quote asset's perpetual settlement line
// (positions.ts settlementUnits), the ledger line conservation already counts, where it pays
// later claims.
//
// Money moves as realized PnL does (settle.ts settleRealized): a payment is paid into the
// settlement line from the account's available USDC (what it cannot pay becomes its debt on the
// position), a receipt becomes a claim on the line, paid from what payers paid in; claims that
// cannot be paid yet wait in the queue. A payer with autoBorrowSettlements has what it could not
// pay redeemed and borrowed in USDC and paid at once, as after a fill (settle.ts fundDebts). Each
// position keeps the sum of its payments since it opened (cumulative-funding.ts, the wire's
// cumulativeFundingPayment). One FundingPayment event per position (signed from the account's
// side), then a payer's balance, then the position's event (position-events.ts); payClaims writes
// the receivers' balances. The pass over the holders, whole or in steps, is funding-passes.ts's.

import { FRONT_ID_NONE, PositionEvent } from '../../bus/types.js';
import { assert } from '../assert.js';
import { pow10 } from '../margin/fixed.js';
import { INDEX_PRICE_DECIMALS } from '../margin/index-prices.js';
import type { EngineState } from '../state.js';
import { ONE_E12 } from './mark-price.js';
import { reportPosition } from './position-events.js';
import { fundDebts, settleRealized } from './settle.js';

/** The payment of a position of `lots` (signed, positive: the account pays), rounded up for a payer and down for a receiver. */
export function fundingPaymentUnits(perLotNumerator: bigint, denominator: bigint, lots: number): bigint {
  const exact = perLotNumerator * BigInt(lots);
  if (exact >= 0n) return (exact + denominator - 1n) / denominator;
  return -(-exact / denominator);
}

/** A pass's terms: each position pays fundingPaymentUnits(perLot, denominator, lots) at `rateE12` for the interval ending at `endUs`. */
export interface FundingTerms {
  perLot: bigint;
  denominator: bigint;
  rateE12: number;
  marketId: number;
  quoteIndex: number;
}

/** The terms of perpetual `m`'s funding at `rateE12` (×10^12) and `markE9`. */
export function fundingTerms(s: EngineState, m: number, rateE12: number, markE9: number): FundingTerms {
  const market = s.catalog.markets[m];
  const quoteIndex = s.catalog.quoteIndexOf[m];
  const baseDecimals = s.pools.decimalsOf[s.catalog.baseIndexOf[m]];
  const perLot = BigInt(rateE12) * BigInt(market.baseUnitsPerLot) * BigInt(markE9) * pow10(s.pools.decimalsOf[quoteIndex]);
  const denominator = ONE_E12 * pow10(INDEX_PRICE_DECIMALS) * pow10(baseDecimals);
  return { perLot, denominator, rateE12, marketId: market.marketId, quoteIndex };
}

/**
 * One position's payment (header): into the line (or its debt) or a claim, the autoBorrowSettlements
 * cover of a payer, the position's cumulative funding, the FundingPayment event, a payer's
 * balance, the position's event. The claims are the caller's to pay (payClaims).
 */
export function payHolder(s: EngineState, m: number, cell: number, accountId: number, terms: FundingTerms, intervalEndUs: number): void {
  const p = s.positions;
  const lots = p.lots[cell];
  const payment = fundingPaymentUnits(terms.perLot, terms.denominator, lots);
  assert(Number.isSafeInteger(Number(payment)) && payment >= -BigInt(Number.MAX_SAFE_INTEGER), 'a funding payment beyond the safe-integer range');
  if (payment === 0n) return;
  settleRealized(s, cell, accountId, terms.quoteIndex, -payment);
  if (payment > 0n) fundDebts(s, cell, accountId, terms.quoteIndex);
  s.perpMarks.cumulative.add(cell, p.positionId[cell], Number(-payment));
  s.out.fundingPayment(accountId, terms.marketId, Number(-payment), intervalEndUs, terms.rateE12, lots);
  if (payment > 0n) s.out.balance(accountId, terms.quoteIndex, FRONT_ID_NONE, 0);
  reportPosition(s, accountId, m, PositionEvent.Adjusted);
}
