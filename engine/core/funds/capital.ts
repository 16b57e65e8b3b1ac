// Capital commands: accounts and deposits, funds leaving the exchange, dust conversion, and the
// simulated chain's confirmation of a withdrawal.
//
// CreateAccount adds an account for a new, non-zero 32-byte key (DuplicateKey, AccountLimitReached);
// Deposit credits available units, refused once the asset's supply would leave the safe-integer
// range (AmountOutOfRange), which bounds every later settlement (ledger.ts); then the account's
// autoRepayBorrows and autoLend settings repay a borrow of the asset and lend the rest
// (margin/auto-funding.ts), and a borrower's liquidating state is re-checked. The result's value
// is the available balance after all of it. A deposit of a perpetual's quote asset first pays the
// account's perpetual debts (perp/settle.ts).
//
// Withdraw moves available units out of the exchange at once (an account that borrows must keep
// its margin: margin/borrow-lend.ts, InsufficientMargin; with autoLendRedeem or autoBorrow the
// shortfall is redeemed or borrowed first, margin/auto-funding.ts; a liquidating one may not
// withdraw: margin/liquidating.ts, AccountLiquidating): the account's available balance and
// the asset's supply shrink by the same amount, so conservation reads, for every asset,
// Σ (available + locked) + fees = deposits − withdrawals. The result's value is the withdrawal id,
// which is the command's own sequence number (decided once at the sequencing point, so replay
// reproduces it). Where the funds go (address, chain, client id) is not engine state: the front
// thread records it beside the journal and the command carries its 32-byte digest (intentDigest).
//
// ConvertDust sells an account's whole dust balance of one asset to the exchange at 95% of the
// dust market's mark price, rounded down, and never more than the market's dust payout cap
// (MarketSpec.dustMaxPayoutUnits, by default 10 whole quote units). The mark price is
// min(guarded reference price, last trade price): the guarded reference (book/reference.ts) moves
// only by bounded steps per interval of engine time, so wash trades that walk the last price up
// do not raise what the exchange pays, and taking the lower of the two never pays more than
// either says. The dust goes to the exchange's fee column (its own
// funds) and the payout comes out of the fees it collected in the payout asset, so no unit is
// created or destroyed; when those fees cannot pay, the conversion is refused. Preconditions: the
// balance is positive, all available, below the market's minimum order quantity, and equal to the
// quantity the request was computed for (the front reads the balance first; a change in between
// is refused rather than converting a different amount). Both prices are kept for every banded
// market (every configured market by default); an unbanded or never-traded market has no mark
// price.
//
// ConfirmWithdrawal changes no engine state: it is journaled so that the withdrawal's
// pending → confirmed transition is part of the sequenced history that replay and the account
// history (engine/store/history-account.ts) derive from.

import {
  CommandFlag, FRONT_ID_NONE, ResultCode,
  type ConfirmWithdrawalCommand, type ConvertDustCommand, type CreateAccountCommand, type DepositCommand, type WithdrawCommand,
} from '../../bus/types.js';
import type { EngineState } from '../state.js';
import { type AmountUnits } from '../units.js';
import { KEY_BYTES } from './accounts.js';
import { payDebtsOnDeposit } from '../perp/settle.js';
import { applyDepositAutomation, applyFunding, planFunding, type Funding } from '../margin/auto-funding.js';

/** The flags a withdrawal may carry: spot margin funding of the shortfall. */
const WITHDRAW_FLAGS = CommandFlag.AutoBorrow | CommandFlag.AutoLendRedeem;
/** What the withdrawal being applied redeems and borrows. */
const WITHDRAW_FUNDING: Funding = { redeemUnits: 0, borrowUnits: 0 };
import { isLiquidating, reviewLiquidating } from '../margin/liquidating.js';

/** Dust payout as a fraction of the mark price: 95 / 100. */
const DUST_PAYOUT_PERCENT = 95n;

export function createAccount(s: EngineState, cmd: CreateAccountCommand): void {
  let code: ResultCode = ResultCode.Ok;
  if (cmd.key.length !== KEY_BYTES || cmd.key.every((byte) => byte === 0)) code = ResultCode.InvalidCommand;
  else if (s.accounts.find(cmd.key) !== 0) code = ResultCode.DuplicateKey;
  else if (s.accounts.count >= s.accounts.capacity) code = ResultCode.AccountLimitReached;
  if (code !== ResultCode.Ok) return s.out.result(code, 0, cmd.frontId, cmd.requestId);
  const accountId = s.accounts.add(cmd.key);
  s.out.account(accountId, FRONT_ID_NONE, 0);
  s.out.result(ResultCode.Ok, accountId, cmd.frontId, cmd.requestId);
}

export function deposit(s: EngineState, cmd: DepositCommand): void {
  const assetIndex = s.catalog.assetIndex(cmd.assetId);
  const amount = cmd.amountUnits as AmountUnits;
  let code: ResultCode = ResultCode.Ok;
  if (!s.accounts.exists(cmd.accountId)) code = ResultCode.UnknownAccount;
  else if (assetIndex < 0) code = ResultCode.UnknownAsset;
  else if (!s.ledger.canDeposit(assetIndex, amount)) code = ResultCode.AmountOutOfRange;
  if (code !== ResultCode.Ok) return s.out.result(code, 0, cmd.frontId, cmd.requestId);
  s.ledger.deposit(cmd.accountId, assetIndex, amount);
  const beforeDebts = s.ledger.availableUnits(cmd.accountId, assetIndex);
  payDebtsOnDeposit(s, cmd.accountId, assetIndex);
  s.out.balance(cmd.accountId, assetIndex, FRONT_ID_NONE, 0);
  // The automation moves only what the deposit still credits once perpetual debts took their part.
  const paidDebts = beforeDebts - s.ledger.availableUnits(cmd.accountId, assetIndex);
  applyDepositAutomation(s, cmd.accountId, assetIndex, Math.min(amount, Math.max(0, amount - paidDebts)));
  s.out.result(ResultCode.Ok, s.ledger.availableUnits(cmd.accountId, assetIndex), cmd.frontId, cmd.requestId);
}

export function withdraw(s: EngineState, cmd: WithdrawCommand): void {
  const assetIndex = s.catalog.assetIndex(cmd.assetId);
  const amount = cmd.amountUnits as AmountUnits;
  let code: ResultCode = ResultCode.Ok;
  if (!s.accounts.exists(cmd.accountId)) code = ResultCode.UnknownAccount;
  else if (assetIndex < 0) code = ResultCode.UnknownAsset;
  else if ((cmd.flags & ~WITHDRAW_FLAGS) !== 0) code = ResultCode.InvalidCommand;
  else if (!Number.isSafeInteger(amount) || amount <= 0) code = ResultCode.AmountOutOfRange;
  else if (isLiquidating(s, cmd.accountId)) code = ResultCode.AccountLiquidating;
  else code = planFunding(s, cmd.accountId, assetIndex, amount, amount, cmd.flags, WITHDRAW_FUNDING);
  if (code !== ResultCode.Ok) return s.out.result(code, 0, cmd.frontId, cmd.requestId);
  applyFunding(s, cmd.accountId, assetIndex, WITHDRAW_FUNDING);
  s.ledger.withdraw(cmd.accountId, assetIndex, amount);
  s.out.balance(cmd.accountId, assetIndex, FRONT_ID_NONE, 0);
  reviewLiquidating(s, cmd.accountId);
  s.out.result(ResultCode.Ok, s.lastSeq, cmd.frontId, cmd.requestId);
}

/** The payout of `dustUnits` base units at `priceTicks`: floor(value × 95 / 100), exact. */
export function dustPayoutUnits(dustUnits: number, priceTicks: number, quoteUnitsPerTickLot: number, baseUnitsPerLot: number): number {
  const value = BigInt(dustUnits) * BigInt(priceTicks) * BigInt(quoteUnitsPerTickLot) * DUST_PAYOUT_PERCENT;
  return Number(value / (BigInt(baseUnitsPerLot) * 100n));
}

/** The price dust is valued at: min(guarded reference, last trade price); 0 when there is none. */
export function dustMarkTicks(s: EngineState, marketIndex: number): number {
  if (s.catalog.markets[marketIndex].maxMultiplierBps === undefined) return 0;
  const book = s.books[marketIndex];
  return Math.min(book.guardedReferenceTicks, book.bandReferenceTicks);
}

export function convertDust(s: EngineState, cmd: ConvertDustCommand): void {
  const marketIndex = s.catalog.marketIndex(cmd.marketId);
  if (!s.accounts.exists(cmd.accountId)) return s.out.result(ResultCode.UnknownAccount, 0, cmd.frontId, cmd.requestId);
  // A perpetual's base is its underlying, never held there: no dust to convert through it.
  if (marketIndex < 0 || !s.catalog.isSpot(marketIndex)) return s.out.result(ResultCode.UnknownMarket, 0, cmd.frontId, cmd.requestId);
  const market = s.catalog.markets[marketIndex];
  const baseIndex = s.catalog.baseIndexOf[marketIndex];
  const quoteIndex = s.catalog.quoteIndexOf[marketIndex];
  const available = s.ledger.availableUnits(cmd.accountId, baseIndex);
  const locked = s.ledger.lockedUnits(cmd.accountId, baseIndex);
  const minUnits = market.minQtyLots * market.baseUnitsPerLot;
  const markTicks = dustMarkTicks(s, marketIndex);
  let code: ResultCode = ResultCode.Ok;
  let payout = 0;
  if (available + locked === 0 || locked > 0 || available >= minUnits) code = ResultCode.DustNotEligible;
  else if (available !== cmd.amountUnits) code = ResultCode.DustBalanceChanged;
  else if (markTicks === 0) code = ResultCode.DustNoMarkPrice;
  else {
    payout = Math.min(dustPayoutUnits(available, markTicks, market.quoteUnitsPerTickLot, market.baseUnitsPerLot), s.catalog.dustMaxPayoutUnitsOf[marketIndex]);
    if (s.ledger.feeUnits[quoteIndex] < payout) code = ResultCode.DustTreasuryShort;
  }
  if (code !== ResultCode.Ok) return s.out.result(code, 0, cmd.frontId, cmd.requestId);
  s.ledger.sweepToFees(cmd.accountId, baseIndex, available);
  if (payout > 0) s.ledger.payFromFees(cmd.accountId, quoteIndex, payout as AmountUnits);
  s.out.balance(cmd.accountId, baseIndex, FRONT_ID_NONE, 0);
  s.out.balance(cmd.accountId, quoteIndex, FRONT_ID_NONE, 0);
  s.out.result(ResultCode.Ok, payout, cmd.frontId, cmd.requestId);
}

/** The withdrawal id must name an earlier command of an existing account. */
export function confirmWithdrawal(s: EngineState, cmd: ConfirmWithdrawalCommand): void {
  let code: ResultCode = ResultCode.Ok;
  const id = cmd.withdrawalId;
  if (!s.accounts.exists(cmd.accountId)) code = ResultCode.UnknownAccount;
  else if (!Number.isSafeInteger(id) || id <= 0 || id >= s.lastSeq) code = ResultCode.InvalidCommand;
  s.out.result(code, 0, cmd.frontId, cmd.requestId);
}
