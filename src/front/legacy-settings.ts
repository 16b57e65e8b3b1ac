// The start-up import of account settings that older versions kept in LMDB (the "account-settings"
// database, ['settings', accountId]) into the engine, where settings now live
// (engine/core/margin/account-settings.ts).
//
// Front thread 0 sends each stored record as one UpdateAccountSettings command, naming only the
// settings the record holds, and removes the record once the engine's answer, released only when
// durable, says the journal has it. So a crash at any point loses nothing: a record still there at
// the next start is imported again, which sets the same values. Every other front thread waits,
// before it listens, until no record is left, and thread 0 listens only after its import: no
// PATCH can be served before the import, so the stored values can never overwrite a newer choice.
//
// A stored value the engine would refuse (a leverage limit above the platform's maximum, a field of
// the wrong type) is left out with a warning naming the account and the value, and the rest of its
// record is imported; a record of an account the engine does not know is removed with a warning.
// Nothing stored is dropped without a log line.

import type { Logger } from 'pino';
import { DEFAULT_MAX_LEVERAGE_HUNDREDTHS } from '../../engine/bus/types.js';
import { parseDecimal } from '../decimal.js';
import type { ApiError } from '../errors.js';
import type { LegacyAccountSettings } from './account-settings.js';
import type { FrontContext } from './context.js';
import { engineCalls, type AccountSettingsUpdate } from './engine-calls/index.js';

/** How long a waiting thread, or an import whose command found the ring full, waits before looking again. */
const RETRY_MS = 10;

/** The engine update a stored record asks for; `dropped` lists the values left out. Pure. */
export function legacyUpdate(stored: LegacyAccountSettings, maxLeverageHundredths: number): { update: AccountSettingsUpdate; dropped: string[] } {
  const update: AccountSettingsUpdate = {};
  const dropped: string[] = [];
  for (const name of ['autoBorrowSettlements', 'autoLend', 'autoRepayBorrows'] as const) {
    const value = stored[name];
    if (typeof value === 'boolean') update[name] = value;
    else if (value !== undefined) dropped.push(`${name}=${JSON.stringify(value)}`);
  }
  const leverage = stored.leverageLimit;
  if (leverage !== undefined) {
    const hundredths = typeof leverage === 'string' ? parseDecimal(leverage, 2) : -1;
    if (hundredths >= 100 && hundredths <= maxLeverageHundredths) update.leverageLimitHundredths = hundredths;
    else dropped.push(`leverageLimit=${JSON.stringify(leverage)}`);
  }
  return { update, dropped };
}

/** Imports every stored record, one command at a time, then calls `onDone`. */
export function importLegacySettings(front: FrontContext, onDone: () => void): void {
  const records = front.settings.legacySettings();
  if (records.length > 0) front.log.info({ accounts: records.length }, 'importing account settings stored by an older version into the engine');
  const maxLeverage = front.config.engine.maxLeverageHundredths ?? DEFAULT_MAX_LEVERAGE_HUNDREDTHS;
  const next = (index: number): void => {
    if (index === records.length) return onDone();
    const [accountId, stored] = records[index];
    const { update, dropped } = legacyUpdate(stored, maxLeverage);
    if (dropped.length > 0) front.log.warn({ accountId, dropped }, 'stored account settings the engine would refuse are left out');
    const remove = (): void => {
      front.settings.removeLegacySettings(accountId).then(() => next(index + 1), (error: unknown) => {
        front.log.fatal({ err: error, accountId }, 'could not remove imported account settings');
        throw error;
      });
    };
    const send = (): void => {
      engineCalls(front).updateSettings({
        ok: remove,
        fail: (error: ApiError) => {
          if (error.status === 503) return void setTimeout(send, RETRY_MS);
          front.log.warn({ accountId, stored, code: error.code, reason: error.message }, 'stored account settings refused by the engine; removed');
          remove();
        },
      }, accountId, update);
    };
    send();
  };
  next(0);
}

/** Calls `onDone` once no stored record is left (thread 0 imports them). */
export function whenLegacySettingsImported(front: FrontContext, log: Logger, onDone: () => void): void {
  let logged = false;
  const look = (): void => {
    if (front.settings.legacySettings().length === 0) return onDone();
    if (!logged) log.info('waiting for front thread 0 to import stored account settings');
    logged = true;
    setTimeout(look, RETRY_MS);
  };
  look();
}
