// The operator's view of the insurance fund (fund.ts): DepositInsurance pays units of an asset
// into it from outside the exchange (the asset's supply grows, as with a deposit), QueryInsurance
// reads every asset's lines. Both answer InsuranceRecords (GET and POST /admin/insurance).
//
// DepositInsurance refuses, changing nothing: an account id other than 0 (the fund is no
// account; InvalidCommand), an unknown asset (UnknownAsset), an amount that is not positive or
// would take the asset's supply past the safe-integer range (AmountOutOfRange).

import { ResultCode, type CommandHeader, type DepositInsuranceCommand } from '../../bus/types.js';
import type { EngineState } from '../state.js';
import type { AmountUnits } from '../units.js';

/** DepositInsurance: units into the fund (header). */
export function depositInsurance(s: EngineState, cmd: DepositInsuranceCommand): void {
  const assetIndex = s.catalog.assetIndex(cmd.assetId);
  const amount = cmd.amountUnits as AmountUnits;
  let code: ResultCode = ResultCode.Ok;
  if (cmd.accountId !== 0) code = ResultCode.InvalidCommand;
  else if (assetIndex < 0) code = ResultCode.UnknownAsset;
  else if (!s.ledger.canDeposit(assetIndex, amount)) code = ResultCode.AmountOutOfRange;
  if (code !== ResultCode.Ok) return s.out.result(code, 0, cmd.frontId, cmd.requestId);
  s.ledger.depositOutside(assetIndex, amount);
  s.insurance.deposit(assetIndex, amount);
  s.out.insurance(assetIndex, s.insurance, cmd.frontId, cmd.requestId);
  s.out.result(ResultCode.Ok, s.insurance.fundUnits[assetIndex], cmd.frontId, cmd.requestId);
}

/** QueryInsurance: one InsuranceRecord per asset, in asset order, then a Result (value = their number). */
export function queryInsurance(s: EngineState, cmd: CommandHeader): void {
  for (let assetIndex = 0; assetIndex < s.catalog.assetCount; assetIndex++) s.out.insurance(assetIndex, s.insurance, cmd.frontId, cmd.requestId);
  s.out.result(ResultCode.Ok, s.catalog.assetCount, cmd.frontId, cmd.requestId);
}
