// Each account's margin settings (PATCH /api/v1/account → UpdateAccountSettings; GET reads them
// with QueryAccountSettings): the automation flags of venue-mechanics §2 (autoBorrowSettlements,
// autoLend, autoRepayBorrows), the leverage limit of §1.4, and whether the account is being
// liquidated (shown as `liquidating`). autoLend and autoRepayBorrows act on the account's
// deposits and fills (auto-funding.ts applyProceeds); autoBorrowSettlements covers what a
// perpetual fill leaves the account owing in USDC from its lend and the pool (perp/settle.ts).
//
// The leverage limit is an integer in hundredths (100 = 1×, 250 = 2.5×): the wire allows two
// decimals, and hundredths keep 1/leverageLimit exact as a ratio of integers wherever margin
// needs it (BaseIMF = max(imf.base, 100 / leverageLimitHundredths)). It runs from 1.00 to the
// platform's maximum (EngineConfig.maxLeverageHundredths, default 100×). A new account has
// 1.00×, no automation and is not liquidating. Lowering the limit below what the account's
// exposure already uses is refused with MaxLeverageReached (leverage-limit.ts).
//
// Liquidating is engine state the margin rules set and clear (liquidating.ts: netEquity ≤ Σ N·MMF
// over the account's borrows); UpdateAccountSettings cannot touch it.
//
// Invariants: every account's flags hold only the four setting bits, its leverage limit lies in
// [1.00, maximum], and an account id past the created ones has the defaults.
//
// Settings are journaled like any command. A default account adds nothing to the state hash and
// the snapshot lists only accounts off the defaults (format 5 on), so every state reachable before
// this structure existed keeps the hash and the snapshot it had.

import {
  AccountSettingFlag, DEFAULT_MAX_LEVERAGE_HUNDREDTHS, HeaderFlag, LEVERAGE_HUNDREDTHS_PER_UNIT, MAX_CONFIGURABLE_LEVERAGE_HUNDREDTHS, ResultCode,
  type QueryAccountSettingsCommand, type UpdateAccountSettingsCommand,
} from '../../bus/types.js';
import { assert } from '../assert.js';
import { expectSnapshot, type SnapshotReader, type SnapshotWriter, type StateDigest } from '../parts.js';
import type { EngineState } from '../state.js';
import { leverageLimitRefusal } from './leverage-limit.js';

/** The leverage limit of a new account: 1×. */
export const DEFAULT_LEVERAGE_LIMIT_HUNDREDTHS = LEVERAGE_HUNDREDTHS_PER_UNIT;

/** The automation flags a command may set. */
const AUTOMATION_BITS = AccountSettingFlag.AutoBorrowSettlements | AccountSettingFlag.AutoLend | AccountSettingFlag.AutoRepayBorrows;
/** What a command may change: the automation flags and the leverage limit. */
const SETTABLE_BITS = AUTOMATION_BITS | AccountSettingFlag.LeverageLimit;
/** Every bit an account's flags may hold. */
const STATE_BITS = AUTOMATION_BITS | AccountSettingFlag.Liquidating;
const SETTINGS_WORD_MAX = 0xffff;

export class AccountSettings {
  /** AccountSettingFlag bits (STATE_BITS), indexed by account id. */
  readonly flags: Uint8Array;
  readonly leverageLimitHundredths: Uint32Array;
  readonly maxLeverageHundredths: number;

  constructor(maxAccounts: number, maxLeverageHundredths = DEFAULT_MAX_LEVERAGE_HUNDREDTHS) {
    assert(
      Number.isInteger(maxLeverageHundredths) && maxLeverageHundredths >= LEVERAGE_HUNDREDTHS_PER_UNIT && maxLeverageHundredths <= MAX_CONFIGURABLE_LEVERAGE_HUNDREDTHS,
      'maxLeverageHundredths must be an integer from 100 to 100000',
    );
    this.maxLeverageHundredths = maxLeverageHundredths;
    this.flags = new Uint8Array(maxAccounts + 1);
    this.leverageLimitHundredths = new Uint32Array(maxAccounts + 1).fill(DEFAULT_LEVERAGE_LIMIT_HUNDREDTHS);
  }

  isLeverageLimit(hundredths: number): boolean {
    return Number.isInteger(hundredths) && hundredths >= LEVERAGE_HUNDREDTHS_PER_UNIT && hundredths <= this.maxLeverageHundredths;
  }

  isDefault(accountId: number): boolean {
    return this.flags[accountId] === 0 && this.leverageLimitHundredths[accountId] === DEFAULT_LEVERAGE_LIMIT_HUNDREDTHS;
  }

  /** Snapshot part (format 5 on): the count of accounts off the defaults, then id, flags, limit of each. */
  exportTo(w: SnapshotWriter, accountCount: number): void {
    let changed = 0;
    for (let accountId = 1; accountId <= accountCount; accountId++) if (!this.isDefault(accountId)) changed++;
    w.number(changed);
    for (let accountId = 1; accountId <= accountCount; accountId++) {
      if (this.isDefault(accountId)) continue;
      w.number(accountId);
      w.word(this.flags[accountId]);
      w.word(this.leverageLimitHundredths[accountId]);
    }
  }

  /** Older snapshots (`hasPart` false) hold none: every account has the defaults. */
  importFrom(r: SnapshotReader, accountCount: number, hasPart: boolean): void {
    if (!hasPart) return;
    const changed = r.number();
    expectSnapshot(changed >= 0 && changed <= accountCount, 'account settings count out of range');
    let previous = 0;
    for (let i = 0; i < changed; i++) {
      const accountId = r.number();
      expectSnapshot(accountId > previous && accountId <= accountCount, 'account settings of an unknown account or out of order');
      const flags = r.word();
      const limit = r.word();
      expectSnapshot((flags & ~STATE_BITS) === 0 && this.isLeverageLimit(limit), 'account settings out of range');
      this.flags[accountId] = flags;
      this.leverageLimitHundredths[accountId] = limit;
      previous = accountId;
    }
  }

  /** State hash part: the count of accounts off the defaults, then each with its settings; nothing when none is. */
  hashInto(d: StateDigest, accountCount: number): void {
    let changed = 0;
    for (let accountId = 1; accountId <= accountCount; accountId++) if (!this.isDefault(accountId)) changed++;
    if (changed === 0) return;
    d.number(changed);
    for (let accountId = 1; accountId <= accountCount; accountId++) {
      if (this.isDefault(accountId)) continue;
      d.number(accountId);
      d.number(this.flags[accountId]);
      d.number(this.leverageLimitHundredths[accountId]);
    }
  }

  validate(accountCount: number): void {
    for (let accountId = 0; accountId < this.flags.length; accountId++) {
      assert((this.flags[accountId] & ~STATE_BITS) === 0, `account ${accountId} has unknown setting bits`);
      assert(this.isLeverageLimit(this.leverageLimitHundredths[accountId]), `account ${accountId} has a leverage limit out of range`);
      assert((accountId >= 1 && accountId <= accountCount) || this.isDefault(accountId), `account ${accountId} does not exist but has settings`);
    }
  }
}

/** The settings word's parts, or null when it names a bit no command may set. */
function decodeSettingsWord(word: number): { change: number; values: number } | null {
  if (!Number.isInteger(word) || word < 0 || word > SETTINGS_WORD_MAX) return null;
  const change = word & 0xff;
  const values = word >>> 8;
  if ((change & ~SETTABLE_BITS) !== 0 || (values & ~(change & AUTOMATION_BITS)) !== 0) return null;
  return { change, values };
}

/** Why UpdateAccountSettings is refused, or Ok; checks everything before anything changes. */
function updateRefusal(s: EngineState, cmd: UpdateAccountSettingsCommand, change: number): ResultCode {
  const settings = s.accountSettings;
  if ((change & AccountSettingFlag.LeverageLimit) === 0) return cmd.leverageLimitHundredths === 0 ? ResultCode.Ok : ResultCode.InvalidCommand;
  if (!settings.isLeverageLimit(cmd.leverageLimitHundredths)) return ResultCode.LeverageLimitOutOfRange;
  // Only a lower limit can leave the account above it; raising one never is refused.
  if (cmd.leverageLimitHundredths >= settings.leverageLimitHundredths[cmd.accountId]) return ResultCode.Ok;
  return leverageLimitRefusal(s, cmd.accountId, cmd.leverageLimitHundredths);
}

/**
 * UpdateAccountSettings: the settings word (low byte: what changes; next byte: the new automation
 * flags), the new leverage limit in hundredths (0 unless it changes). Answers the account's settings as they now are, then the result. A word naming
 * nothing changes nothing and answers the settings.
 */
export function updateAccountSettings(s: EngineState, cmd: UpdateAccountSettingsCommand): void {
  if (!s.accounts.exists(cmd.accountId)) return s.out.result(ResultCode.UnknownAccount, 0, cmd.frontId, cmd.requestId);
  const word = decodeSettingsWord(cmd.settingsWord);
  if (word === null) return s.out.result(ResultCode.InvalidCommand, 0, cmd.frontId, cmd.requestId);
  const refusal = updateRefusal(s, cmd, word.change);
  if (refusal !== ResultCode.Ok) return s.out.result(refusal, 0, cmd.frontId, cmd.requestId);
  const settings = s.accountSettings;
  const automation = word.change & AUTOMATION_BITS;
  settings.flags[cmd.accountId] = (settings.flags[cmd.accountId] & ~automation) | word.values;
  if ((word.change & AccountSettingFlag.LeverageLimit) !== 0) settings.leverageLimitHundredths[cmd.accountId] = cmd.leverageLimitHundredths;
  s.out.accountSettings(cmd.accountId, cmd.frontId, cmd.requestId, 0);
  s.out.result(ResultCode.Ok, 0, cmd.frontId, cmd.requestId);
}

/** QueryAccountSettings: the account's AccountSettingsRecord, flagged Last. */
export function queryAccountSettings(s: EngineState, cmd: QueryAccountSettingsCommand): void {
  if (!s.accounts.exists(cmd.accountId)) return s.out.result(ResultCode.UnknownAccount, 0, cmd.frontId, cmd.requestId);
  s.out.accountSettings(cmd.accountId, cmd.frontId, cmd.requestId, HeaderFlag.Last);
}
