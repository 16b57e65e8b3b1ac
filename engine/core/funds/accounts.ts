// Accounts and their ed25519 public keys.
//
// Account ids are dense, 1, 2, 3 … in creation order, so every per-account array is indexed by
// the id directly (index 0 is never used). Keys live in one preallocated byte array, 32 bytes per
// account; a key → account lookup (for DuplicateKey) is an open-addressing table of account ids
// with linear probing, at most half full. Accounts are never removed, so the table needs no
// deletion. Bounded by config.limits.maxAccounts.
//
// Each account has its own maker and taker fee rates (basis points), set from the configured
// defaults when it is created; no command changes them yet, but fills read them per account.

import { assert } from '../assert.js';
import { hashBytes, powerOfTwoAtLeast } from '../hashing.js';
import { expectSnapshot, type SnapshotReader, type SnapshotWriter, type StateDigest } from '../parts.js';

/** Writes, reads or hashes the rest of one account's row (its balances, funds/ledger.ts). */
type AccountRow = (accountId: number) => void;

export const KEY_BYTES = 32;

export class Accounts {
  count = 0;
  readonly capacity: number;
  private readonly keys: Uint8Array;
  /** Open-addressing table of account ids; 0 marks an empty slot. */
  private readonly table: Int32Array;
  private readonly mask: number;
  /** Fee rates in basis points, indexed by account id. */
  readonly makerFeeBps: Uint16Array;
  readonly takerFeeBps: Uint16Array;

  constructor(
    maxAccounts: number,
    private readonly defaultMakerFeeBps = 0,
    private readonly defaultTakerFeeBps = 0,
  ) {
    this.capacity = maxAccounts;
    this.makerFeeBps = new Uint16Array(maxAccounts + 1);
    this.takerFeeBps = new Uint16Array(maxAccounts + 1);
    this.keys = new Uint8Array((maxAccounts + 1) * KEY_BYTES);
    const size = powerOfTwoAtLeast(maxAccounts * 2);
    this.table = new Int32Array(size);
    this.mask = size - 1;
  }

  /** True when accountId names a created account. */
  exists(accountId: number): boolean {
    return Number.isInteger(accountId) && accountId >= 1 && accountId <= this.count;
  }

  /** The account holding `key`, or 0. */
  find(key: Uint8Array): number {
    assert(key.length === KEY_BYTES, 'key must be 32 bytes');
    for (let probe = hashBytes(key) & this.mask, steps = 0; steps <= this.mask; probe = (probe + 1) & this.mask, steps++) {
      const accountId = this.table[probe];
      if (accountId === 0) return 0;
      if (this.keyEquals(accountId, key)) return accountId;
    }
    return 0;
  }

  /** Creates the next account for a key the caller checked is new; returns its id. */
  add(key: Uint8Array): number {
    assert(this.count < this.capacity, 'account capacity exceeded');
    assert(this.find(key) === 0, 'duplicate account key');
    const accountId = ++this.count;
    this.keys.set(key, accountId * KEY_BYTES);
    let probe = hashBytes(key) & this.mask;
    while (this.table[probe] !== 0) probe = (probe + 1) & this.mask;
    this.table[probe] = accountId;
    this.makerFeeBps[accountId] = this.defaultMakerFeeBps;
    this.takerFeeBps[accountId] = this.defaultTakerFeeBps;
    return accountId;
  }

  /** A read-only view of an account's key in the key store (callers copy, never write). */
  keyOf(accountId: number): Uint8Array {
    assert(this.exists(accountId), 'key of an unknown account');
    return this.keys.subarray(accountId * KEY_BYTES, (accountId + 1) * KEY_BYTES);
  }

  private keyEquals(accountId: number, key: Uint8Array): boolean {
    const base = accountId * KEY_BYTES;
    for (let i = 0; i < KEY_BYTES; i++) if (this.keys[base + i] !== key[i]) return false;
    return true;
  }

  /** Snapshot: the count, then per account its key, fee rates and the rest of its row. */
  exportTo(w: SnapshotWriter, row: AccountRow): void {
    w.number(this.count);
    for (let accountId = 1; accountId <= this.count; accountId++) {
      w.raw(this.keyOf(accountId));
      w.number(this.makerFeeBps[accountId]);
      w.number(this.takerFeeBps[accountId]);
      row(accountId);
    }
  }

  /** Rebuilds the accounts of a snapshot (through add, so the key table is this engine's own). */
  importFrom(r: SnapshotReader, row: AccountRow): void {
    const accountCount = r.number();
    expectSnapshot(accountCount >= 0 && accountCount <= this.capacity, 'more accounts than the configuration allows');
    for (let accountId = 1; accountId <= accountCount; accountId++) {
      const key = r.raw(KEY_BYTES).slice();
      expectSnapshot(this.find(key) === 0, 'an account key appears twice');
      expectSnapshot(this.add(key) === accountId, 'account ids are not dense');
      this.makerFeeBps[accountId] = r.number();
      this.takerFeeBps[accountId] = r.number();
      row(accountId);
    }
  }

  /** State hash: the count, then per account its key, the rest of its row and its fee rates. */
  hashInto(d: StateDigest, row: AccountRow): void {
    d.number(this.count);
    for (let accountId = 1; accountId <= this.count; accountId++) {
      d.bytes(this.keyOf(accountId));
      row(accountId);
      d.number(this.makerFeeBps[accountId]);
      d.number(this.takerFeeBps[accountId]);
    }
  }
}
