// The leverage-limit check (venue-mechanics §1.4, error MAX_LEVERAGE_REACHED): an account may not
// lower its leverage limit below what its exposure already uses.
//
// With TEN the account's total exposure notional (§1.3: perpetual positions and spot-margin
// borrows at mark) and a leverage limit L, the account's initial margin is at least TEN / L
// (AccountIMF = max(1/L, …)); the limit is exceeded when that is more than the account's net
// equity: TEN / L > netEquity, i.e. TEN × 100 > L_hundredths × netEquity in integers (bigint:
// notionals times a limit leave the safe-integer range). An account with exposure and no
// positive equity exceeds every limit; an account without exposure exceeds none.
//
// The exposure and the equity are the account's margin summary (valuation.ts): TEN is its
// borrows at mark (spot balances and lends carry none; perpetual positions join the summary when
// they exist), net equity its collateral after haircut less its liabilities. Without margin
// parameters (no valuation asset) nothing can be borrowed, so there is no exposure.

import { ResultCode } from '../../bus/types.js';
import { assert } from '../assert.js';
import type { EngineState } from '../state.js';
import { marginSummary } from './valuation.js';

/** What the check needs of one account, in quote units of the settlement asset. */
export interface MarginUsage {
  /** Total exposure notional (TEN, §1.3), never negative. */
  exposureNotionalUnits: bigint;
  /** Net equity (§1.2); read only when the exposure is positive. */
  netEquityUnits: bigint;
}

const HUNDREDTHS = 100n;

/** Whether an account of this usage uses more leverage than `leverageLimitHundredths` allows. Pure. */
export function exceedsLeverageLimit(usage: MarginUsage, leverageLimitHundredths: number): boolean {
  assert(usage.exposureNotionalUnits >= 0n, 'exposure notional is negative');
  assert(Number.isInteger(leverageLimitHundredths) && leverageLimitHundredths > 0, 'leverage limit must be a positive integer');
  if (usage.exposureNotionalUnits === 0n) return false;
  return usage.exposureNotionalUnits * HUNDREDTHS > BigInt(leverageLimitHundredths) * usage.netEquityUnits;
}

/** The account's exposure (TEN) and net equity, from its margin summary (header). */
export function marginUsage(s: EngineState, accountId: number): MarginUsage {
  assert(s.accounts.exists(accountId), 'margin usage of an unknown account');
  if (s.pools.valuationIndex < 0) return { exposureNotionalUnits: 0n, netEquityUnits: 0n };
  const summary = marginSummary(s, accountId);
  return { exposureNotionalUnits: summary.margin.tenUnits, netEquityUnits: summary.netEquityUnits };
}

/** MaxLeverageReached when the account's usage exceeds the limit, else Ok. */
export function leverageLimitRefusal(s: EngineState, accountId: number, leverageLimitHundredths: number): ResultCode {
  return exceedsLeverageLimit(marginUsage(s, accountId), leverageLimitHundredths) ? ResultCode.MaxLeverageReached : ResultCode.Ok;
}
