// What an account has besides engine state, kept in the LMDB database "account-settings"
// (engine/shell/history-account.ts names it) and written directly by front threads: account
// settings (PATCH /api/v1/account), the operator's address book of two-factor-exempt withdrawal
// addresses, each account's two-factor secret, and withdrawal intents.
//
// None of this changes balances or matching, so it is not a journaled engine command; it is
// committed before the request that set it is answered.
//
// Two-factor rule (spec: a withdrawal to an address that is not two-factor exempt needs a
// twoFactorToken): the token is a time-based one-time password (RFC 6238: HMAC-SHA1, 30-second
// steps, 6 digits, accepted one step either side for clock drift) over the account's secret,
// which the operator sets (`POST /admin/two-factor`, answering the base32 secret and an otpauth://
// URI for an authenticator app). A code is accepted once: its step must be later than the last
// step used, so a code seen in transit cannot be replayed. An account without a secret can only
// withdraw to exempt addresses. The operator marks an address exempt with
// `POST /admin/address-book` {accountId, blockchain, address}.

import { createHmac, randomBytes } from 'node:crypto';
import type { Database } from 'lmdb';
import type { HistoryKey } from '../../engine/shell/history-account.js';

export interface AccountSettings {
  autoBorrowSettlements: boolean;
  autoLend: boolean;
  autoRepayBorrows: boolean;
  leverageLimit: string;
}

export const DEFAULT_SETTINGS: AccountSettings = {
  autoBorrowSettlements: false,
  autoLend: false,
  autoRepayBorrows: false,
  leverageLimit: '1',
};

const TOTP_STEP_MS = 30_000;
const TOTP_DIGITS = 6;
const TOTP_DRIFT_STEPS = 1;
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export function base32Encode(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** The RFC 6238 code of `secret` at time step `step`. */
export function totpCode(secret: Uint8Array, step: number): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const mac = createHmac('sha1', secret).update(counter).digest();
  const offset = mac[mac.length - 1] & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** TOTP_DIGITS).padStart(TOTP_DIGITS, '0');
}

export function totpStep(nowMs: number): number {
  return Math.floor(nowMs / TOTP_STEP_MS);
}

/** A two-factor code accepted for one request (see releaseTwoFactorCode). */
export interface TwoFactorClaim {
  accountId: number;
  step: number;
  previousStep: number;
  secretB64: string;
}

interface TwoFactorRecord {
  secretB64: string;
  lastStep: number;
}

export class AccountSettingsStore {
  constructor(private readonly db: Database<unknown, HistoryKey>) {}

  settings(accountId: number): AccountSettings {
    return { ...DEFAULT_SETTINGS, ...((this.db.get(['settings', accountId]) as Partial<AccountSettings> | undefined) ?? {}) };
  }

  async updateSettings(accountId: number, update: Partial<AccountSettings>): Promise<AccountSettings> {
    const next = { ...this.settings(accountId), ...update };
    await this.db.put(['settings', accountId], next);
    return next;
  }

  isExempt(accountId: number, blockchain: string, address: string): boolean {
    return this.db.get(['exempt', accountId, blockchain, address]) === true;
  }

  async markExempt(accountId: number, blockchain: string, address: string): Promise<void> {
    await this.db.put(['exempt', accountId, blockchain, address], true);
  }

  /** Sets a new random two-factor secret; returns it in base32. */
  async newTwoFactorSecret(accountId: number): Promise<string> {
    const secret = randomBytes(20);
    const record: TwoFactorRecord = { secretB64: secret.toString('base64'), lastStep: 0 };
    await this.db.put(['totp', accountId], record);
    return base32Encode(secret);
  }

  /**
   * Accepts a code not used before and marks its step used; the claim to hand back to
   * releaseTwoFactorCode if the request it authorised is then refused, or null when not accepted.
   */
  async acceptTwoFactorCode(accountId: number, code: string, nowMs: number): Promise<TwoFactorClaim | null> {
    if (!/^\d{6}$/.test(code)) return null;
    const record = this.db.get(['totp', accountId]) as TwoFactorRecord | undefined;
    if (!record) return null;
    const secret = Buffer.from(record.secretB64, 'base64');
    const now = totpStep(nowMs);
    for (let step = now - TOTP_DRIFT_STEPS; step <= now + TOTP_DRIFT_STEPS; step++) {
      if (step <= record.lastStep || totpCode(secret, step) !== code) continue;
      // Compare-and-set inside one write transaction: a code used twice at once is accepted once.
      return this.db.transaction((): TwoFactorClaim | null => {
        const current = this.db.get(['totp', accountId]) as TwoFactorRecord | undefined;
        if (!current || current.secretB64 !== record.secretB64 || step <= current.lastStep) return null;
        this.db.put(['totp', accountId], { ...current, lastStep: step });
        return { accountId, step, previousStep: current.lastStep, secretB64: current.secretB64 };
      });
    }
    return null;
  }

  /**
   * Hands back a code whose request was refused (a refused request changes nothing), unless the
   * secret changed or a later code was used meanwhile.
   */
  async releaseTwoFactorCode(claim: TwoFactorClaim): Promise<void> {
    await this.db.transaction(() => {
      const current = this.db.get(['totp', claim.accountId]) as TwoFactorRecord | undefined;
      if (!current || current.secretB64 !== claim.secretB64 || current.lastStep !== claim.step) return;
      this.db.put(['totp', claim.accountId], { ...current, lastStep: claim.previousStep });
    });
  }

  async putIntent(key: HistoryKey, value: unknown): Promise<void> {
    await this.db.put(key, value);
  }

  async removeIntent(key: HistoryKey): Promise<void> {
    await this.db.remove(key);
  }
}
