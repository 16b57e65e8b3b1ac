// The operator's view of the backstop liquidity providers (backstop-providers.ts):
// SetBackstopProvider names an account a provider, RemoveBackstopProvider takes it off the list,
// QueryBackstop reads the list. Each answers one BackstopProviderRecord per provider, in the order
// they take positions (ascending account id, rank from 1), then a Result (value = their number)
// (GET and POST /admin/backstop).
//
// Refusals, changing nothing: SetBackstopProvider of an account that does not exist
// (UnknownAccount), that is a provider already (BackstopProviderAlreadySet), or past the most
// providers the engine keeps (BackstopProvidersFull); RemoveBackstopProvider of an account that is
// not a provider (BackstopProviderNotSet). A provider that is liquidating, or the liquidated
// account itself, is passed over when a position is backstopped (backstop.ts), not refused here.

import { ResultCode, type CommandHeader, type RemoveBackstopProviderCommand, type SetBackstopProviderCommand } from '../../bus/types.js';
import type { EngineState } from '../state.js';
import { MAX_BACKSTOP_PROVIDERS } from './backstop-providers.js';

/** SetBackstopProvider (header). */
export function setBackstopProvider(s: EngineState, cmd: SetBackstopProviderCommand): void {
  const providers = s.backstop;
  let code: ResultCode = ResultCode.Ok;
  if (!s.accounts.exists(cmd.accountId)) code = ResultCode.UnknownAccount;
  else if (providers.has(cmd.accountId)) code = ResultCode.BackstopProviderAlreadySet;
  else if (providers.count >= MAX_BACKSTOP_PROVIDERS) code = ResultCode.BackstopProvidersFull;
  if (code !== ResultCode.Ok) return s.out.result(code, 0, cmd.frontId, cmd.requestId);
  providers.add(cmd.accountId);
  answerProviders(s, cmd);
}

/** RemoveBackstopProvider (header). */
export function removeBackstopProvider(s: EngineState, cmd: RemoveBackstopProviderCommand): void {
  if (!s.backstop.has(cmd.accountId)) return s.out.result(ResultCode.BackstopProviderNotSet, 0, cmd.frontId, cmd.requestId);
  s.backstop.remove(cmd.accountId);
  answerProviders(s, cmd);
}

/** QueryBackstop: every provider, then a Result (header). */
export function queryBackstop(s: EngineState, cmd: CommandHeader): void {
  answerProviders(s, cmd);
}

function answerProviders(s: EngineState, cmd: CommandHeader): void {
  const order = s.backstop.order;
  for (let i = 0; i < order.length; i++) s.out.backstopProvider(order[i], i + 1, cmd.frontId, cmd.requestId);
  s.out.result(ResultCode.Ok, order.length, cmd.frontId, cmd.requestId);
}
