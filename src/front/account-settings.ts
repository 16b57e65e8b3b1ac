// What an account has besides engine state, kept in the LMDB database "account-settings"
// (engine/store/history-account.ts names it) and written directly by front threads: the
// operator's address book of two-factor-exempt withdrawal addresses, each account's two-factor
// secret, and withdrawal intents.
//
// Account settings (PATCH /api/v1/account) are engine state (engine/core/margin/
// account-settings.ts). Older versions kept them here under ['settings', accountId]; this store
// still lists and removes those records so that the start-up import (legacy-settings.ts) can move
// them into the engine.
//
// None of this changes balances or matching, so it is not a journaled engine command; it is
// committed before the request that set it is answered.
//
// Two-factor rule (spec: a withdrawal to an address that is not two-factor exempt needs a
// twoFactorToken): the token is a time-based one-time password (RFC 6238: HMAC-SHA1, 30-second
// steps, 6 digits, accepted one step either side for clock drift) over the account's secret,
// which the operator sets (`POST /admin/two-factor`, answering the base32 secret and an otpauth://
// URI for an authenticator app). A code is accepted once: its step must be later than the last
// step used, so a code seen in transit cannot be replayed. Wrong codes are counted per account:
// the limit of them (default 5) locks the account's two-factor withdrawals for the lockout
// (default 15 minutes), during which every code, the right one too, is refused; an accepted code
// clears the count, and so does a lockout's length without a wrong code. The count, the lockout
// and the last used step live in the account's "totp" record, committed before the answer is
// sent. An account without a secret can only withdraw to exempt addresses. The operator marks an
// address exempt with `POST /admin/address-book` {accountId, blockchain, address}.

import { createHmac, randomBytes } from 'node:crypto';
import type { Database } from 'lmdb';
import type { HistoryKey } from '../../engine/store/history-account.js';

/** Account settings as older versions stored them here (each field absent when never set). */
export interface LegacyAccountSettings {
  autoBorrowSettlements?: unknown;
  autoLend?: unknown;
  autoRepayBorrows?: unknown;
  leverageLimit?: unknown;
}

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

/** How many wrong codes in a row lock an account's two-factor withdrawals, and for how long. */
export interface TwoFactorPolicy {
  maxFailures: number;
  lockoutMs: number;
}

/**
 * The answer to one code: accepted (with the claim to release if the request is then refused),
 * invalid (`locked` when this wrong code started a lockout), or refused unchecked because the
 * account is locked until `untilMs`.
 */
export type TwoFactorVerdict =
  | { kind: 'accepted'; claim: TwoFactorClaim }
  | { kind: 'invalid'; locked: boolean }
  | { kind: 'locked'; untilMs: number };

const INVALID: TwoFactorVerdict = { kind: 'invalid', locked: false };

interface TwoFactorRecord {
  secretB64: string;
  lastStep: number;
  /** Wrong codes since the last accepted one; forgotten a lockout's length after the latest. */
  failures?: number;
  lastFailureMs?: number;
  /** Codes are refused unchecked before this time. */
  lockedUntilMs?: number;
}

function isLocked(record: TwoFactorRecord, nowMs: number): boolean {
  return record.lockedUntilMs !== undefined && nowMs < record.lockedUntilMs;
}

/** The unused step whose code is `code`, within the drift window around now, or null. */
function matchingStep(record: TwoFactorRecord, code: string, nowMs: number): number | null {
  const secret = Buffer.from(record.secretB64, 'base64');
  const now = totpStep(nowMs);
  for (let step = now - TOTP_DRIFT_STEPS; step <= now + TOTP_DRIFT_STEPS; step++) {
    if (step > record.lastStep && totpCode(secret, step) === code) return step;
  }
  return null;
}

export class AccountSettingsStore {
  constructor(
    private readonly db: Database<unknown, HistoryKey>,
    /** From the configuration (src/config.ts has the defaults). */
    private readonly policy: TwoFactorPolicy,
  ) {}

  get lockoutMs(): number {
    return this.policy.lockoutMs;
  }

  /** The account settings older versions stored here, by account id, in id order (as committed now). */
  legacySettings(): Array<[number, LegacyAccountSettings]> {
    this.db.resetReadTxn();
    const found: Array<[number, LegacyAccountSettings]> = [];
    for (const { key, value } of this.db.getRange({ start: ['settings'], end: ['settings', '\uffff'] })) {
      const accountId = key[1];
      if (key[0] !== 'settings' || typeof accountId !== 'number') continue;
      found.push([accountId, (typeof value === 'object' && value !== null ? value : {}) as LegacyAccountSettings]);
    }
    return found;
  }

  /** Removes one account's legacy settings record, once the engine holds what it said. */
  async removeLegacySettings(accountId: number): Promise<void> {
    await this.db.remove(['settings', accountId]);
  }

  isExempt(accountId: number, blockchain: string, address: string): boolean {
    return this.db.get(['exempt', accountId, blockchain, address]) === true;
  }

  async markExempt(accountId: number, blockchain: string, address: string): Promise<void> {
    await this.db.put(['exempt', accountId, blockchain, address], true);
  }

  /** Sets a new random two-factor secret, clearing any wrong-code count and lockout; returns it in base32. */
  async newTwoFactorSecret(accountId: number): Promise<string> {
    const secret = randomBytes(20);
    const record: TwoFactorRecord = { secretB64: secret.toString('base64'), lastStep: 0 };
    await this.db.put(['totp', accountId], record);
    return base32Encode(secret);
  }

  /**
   * Judges a code for a withdrawal and records the outcome before answering: an accepted code
   * marks its step used and clears the wrong-code count; a wrong one counts towards the lockout.
   * Every front thread shares the record, so one account's guesses add up whichever thread
   * serves them, and a restart (even kill -9) forgets neither used codes nor counts nor lockouts.
   */
  async acceptTwoFactorCode(accountId: number, code: string, nowMs: number): Promise<TwoFactorVerdict> {
    // A read snapshot answers a lockout without a write; everything else is decided again inside
    // the write transaction, which sees what other threads committed since the snapshot.
    const seen = this.db.get(['totp', accountId]) as TwoFactorRecord | undefined;
    if (!seen) return INVALID;
    if (isLocked(seen, nowMs)) return { kind: 'locked', untilMs: seen.lockedUntilMs! };
    // A malformed token is not a guess at the code: it is refused without counting.
    if (!/^\d{6}$/.test(code)) return INVALID;
    return this.db.transaction(() => {
      const current = this.db.get(['totp', accountId]) as TwoFactorRecord | undefined;
      return current ? this.judge(accountId, current, code, nowMs) : INVALID;
    });
  }

  /**
   * Decides on `current`, the record as this write transaction sees it: checking the step
   * against it (not against an earlier snapshot) is the compare-and-set that lets a code sent
   * twice at once, on one thread or two, be accepted once.
   */
  private judge(accountId: number, current: TwoFactorRecord, code: string, nowMs: number): TwoFactorVerdict {
    if (isLocked(current, nowMs)) return { kind: 'locked', untilMs: current.lockedUntilMs! };
    const step = matchingStep(current, code, nowMs);
    if (step === null) return this.countFailure(accountId, current, nowMs);
    const accepted: TwoFactorRecord = { secretB64: current.secretB64, lastStep: step };
    this.db.put(['totp', accountId], accepted);
    return { kind: 'accepted', claim: { accountId, step, previousStep: current.lastStep, secretB64: current.secretB64 } };
  }

  private countFailure(accountId: number, current: TwoFactorRecord, nowMs: number): TwoFactorVerdict {
    const { maxFailures, lockoutMs } = this.policy;
    const recent = current.lastFailureMs !== undefined && nowMs - current.lastFailureMs < lockoutMs;
    const failures = (recent ? current.failures ?? 0 : 0) + 1;
    const base = { secretB64: current.secretB64, lastStep: current.lastStep };
    if (failures >= maxFailures) {
      // The count starts again from zero once the lockout ends.
      this.db.put(['totp', accountId], { ...base, lockedUntilMs: nowMs + lockoutMs });
      return { kind: 'invalid', locked: true };
    }
    this.db.put(['totp', accountId], { ...base, failures, lastFailureMs: nowMs });
    return INVALID;
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
