// The backstop liquidity providers (venue mechanics §4.2): the accounts the operator named
// (SetBackstopProvider, RemoveBackstopProvider: backstop-admin.ts) to take liquidated perpetual
// positions off the book (backstop.ts). They are kept in ascending account id, which is the order
// in which they take positions; at most MAX_BACKSTOP_PROVIDERS of them.
//
// Snapshot (format 13 on): count, then the account ids in order; an older snapshot has none. State
// hash: only while some account is a provider (count, then the ids), so every state without one
// keeps the hash it had before providers existed.

import { assert } from '../assert.js';
import { expectSnapshot, type SnapshotReader, type SnapshotWriter, type StateDigest } from '../parts.js';

/** The most providers the engine keeps (SetBackstopProvider past it: BackstopProvidersFull). */
export const MAX_BACKSTOP_PROVIDERS = 64;

export class BackstopProviders {
  /** Provider account ids, ascending. */
  private readonly ids: number[] = [];

  /** The providers in the order they take positions (ascending account id); a view, not a copy. */
  get order(): readonly number[] {
    return this.ids;
  }

  get count(): number {
    return this.ids.length;
  }

  has(accountId: number): boolean {
    return this.ids.includes(accountId);
  }

  /** Adds a provider; the caller checked it is not one and that there is room. */
  add(accountId: number): void {
    assert(!this.has(accountId) && this.ids.length < MAX_BACKSTOP_PROVIDERS, 'a backstop provider added twice or past the limit');
    let at = this.ids.length;
    while (at > 0 && this.ids[at - 1] > accountId) at--;
    this.ids.splice(at, 0, accountId);
  }

  /** Removes a provider; the caller checked it is one. */
  remove(accountId: number): void {
    const at = this.ids.indexOf(accountId);
    assert(at >= 0, 'a backstop provider removed that is not one');
    this.ids.splice(at, 1);
  }

  /** Snapshot part: count, then the ids in order. */
  exportTo(w: SnapshotWriter): void {
    w.number(this.ids.length);
    for (const id of this.ids) w.number(id);
  }

  /** Reads the part back (`hasPart`: format 13 on; an older snapshot has no provider). */
  importFrom(r: SnapshotReader, hasPart: boolean, accountExists: (accountId: number) => boolean): void {
    this.ids.length = 0;
    if (!hasPart) return;
    const count = r.number();
    expectSnapshot(Number.isSafeInteger(count) && count >= 0 && count <= MAX_BACKSTOP_PROVIDERS, 'a bad backstop provider count');
    for (let i = 0; i < count; i++) {
      const id = r.number();
      expectSnapshot(accountExists(id) && (i === 0 || id > this.ids[i - 1]), 'a backstop provider that is no account, or out of order');
      this.ids.push(id);
    }
  }

  /** State hash part (only while some account is a provider). */
  hashInto(d: StateDigest): void {
    if (this.ids.length === 0) return;
    d.number(this.ids.length);
    for (const id of this.ids) d.number(id);
  }

  /** Providers are existing accounts, ascending, within the limit. */
  validate(accountExists: (accountId: number) => boolean): void {
    assert(this.ids.length <= MAX_BACKSTOP_PROVIDERS, 'more backstop providers than the limit');
    for (let i = 0; i < this.ids.length; i++) {
      assert(accountExists(this.ids[i]), `backstop provider ${this.ids[i]} is no account`);
      assert(i === 0 || this.ids[i] > this.ids[i - 1], 'backstop providers out of order');
    }
  }
}
