// Each account's futures fee rates: the maker and taker basis points it pays on perpetual fills,
// distinct from its spot rates (funds/accounts.ts). An account without its own rates pays the
// perpetual's configured ones (the market's perp.makerFeeBps / takerFeeBps, the configuration's
// futuresMakerFeeBps / futuresTakerFeeBps); SetFuturesFeeRates, an operator command, gives it its
// own, and nothing takes them back (setting the configured values keeps them as its own).
//
// Part (parts.ts): the accounts with their own rates, ascending: count, then per account its id,
// maker and taker. The state hash leaves the part out while no account has its own rates, so
// every state before the first SetFuturesFeeRates keeps its earlier hash; a snapshot before
// format 13 holds none.

import { ResultCode, type SetFuturesFeeRatesCommand } from '../../bus/types.js';
import { assert } from '../assert.js';
import { expectSnapshot, type SnapshotReader, type SnapshotWriter, type StateDigest } from '../parts.js';
import type { Catalog } from '../catalog.js';
import type { EngineState } from '../state.js';
import { BPS_PER_UNIT } from '../units.js';

/** An account's rate slot holding this has no rate of its own. */
const NONE = 0xffff;

export class FuturesFees {
  /** Own rates in basis points, by account id (NONE: the perpetual's configured rate). */
  private readonly maker: Uint16Array;
  private readonly taker: Uint16Array;
  /** Accounts with their own rates. */
  private ownCount = 0;

  constructor(maxAccounts: number) {
    this.maker = new Uint16Array(maxAccounts + 1).fill(NONE);
    this.taker = new Uint16Array(maxAccounts + 1).fill(NONE);
  }

  /** Whether the account has rates of its own. */
  hasOwn(accountId: number): boolean {
    return this.maker[accountId] !== NONE;
  }

  /** The account's futures rate (basis points) for one side, `configuredBps` when it has none of its own. */
  rateOf(accountId: number, isTaker: boolean, configuredBps: number): number {
    const own = isTaker ? this.taker[accountId] : this.maker[accountId];
    return own === NONE ? configuredBps : own;
  }

  set(accountId: number, makerBps: number, takerBps: number): void {
    if (!this.hasOwn(accountId)) this.ownCount++;
    this.maker[accountId] = makerBps;
    this.taker[accountId] = takerBps;
  }

  exportTo(w: SnapshotWriter, accountCount: number): void {
    w.number(this.ownCount);
    for (let accountId = 1; accountId <= accountCount; accountId++) {
      if (!this.hasOwn(accountId)) continue;
      w.number(accountId);
      w.number(this.maker[accountId]);
      w.number(this.taker[accountId]);
    }
  }

  /** Older snapshots (`hasPart` false) hold none: every account pays the configured rates. */
  importFrom(r: SnapshotReader, accountCount: number, hasPart: boolean): void {
    if (!hasPart) return;
    const count = r.number();
    expectSnapshot(count >= 0 && count <= accountCount, 'futures fee rates count out of range');
    let previous = 0;
    for (let i = 0; i < count; i++) {
      const accountId = r.number();
      expectSnapshot(accountId > previous && accountId <= accountCount, 'futures fee rates of an unknown account or out of order');
      const makerBps = r.number();
      const takerBps = r.number();
      expectSnapshot(isFeeRate(makerBps) && isFeeRate(takerBps), 'futures fee rates out of range');
      this.set(accountId, makerBps, takerBps);
      previous = accountId;
    }
  }

  hashInto(d: StateDigest, accountCount: number): void {
    if (this.ownCount === 0) return;
    d.number(this.ownCount);
    for (let accountId = 1; accountId <= accountCount; accountId++) {
      if (!this.hasOwn(accountId)) continue;
      d.number(accountId);
      d.number(this.maker[accountId]);
      d.number(this.taker[accountId]);
    }
  }

  validate(accountCount: number): void {
    let own = 0;
    for (let accountId = 0; accountId < this.maker.length; accountId++) {
      const has = this.maker[accountId] !== NONE;
      assert(has === (this.taker[accountId] !== NONE), `account ${accountId} has one futures fee rate of its own`);
      if (!has) continue;
      own++;
      assert(accountId >= 1 && accountId <= accountCount, `account ${accountId} does not exist but has futures fee rates`);
      assert(isFeeRate(this.maker[accountId]) && isFeeRate(this.taker[accountId]), `account ${accountId} has a futures fee rate out of range`);
    }
    assert(own === this.ownCount, 'futures fee rates count differs from the accounts holding them');
  }
}

function isFeeRate(value: number): boolean {
  return Number.isInteger(value) && value >= 0 && value <= BPS_PER_UNIT;
}

/** The futures rate the configuration gives every account: the first perpetual's (0 without perpetuals). */
export function configuredFuturesBps(catalog: Catalog, isTaker: boolean): number {
  const perp = catalog.markets.find((m) => m.perp !== undefined)?.perp;
  return perp === undefined ? 0 : isTaker ? perp.takerFeeBps : perp.makerFeeBps;
}

/**
 * SetFuturesFeeRates: the account's own futures maker and taker rates (0 to 10000 basis points),
 * then its FeeRates record and the result.
 */
export function setFuturesFeeRates(s: EngineState, cmd: SetFuturesFeeRatesCommand): void {
  if (!s.accounts.exists(cmd.accountId)) return s.out.result(ResultCode.UnknownAccount, 0, cmd.frontId, cmd.requestId);
  if (!isFeeRate(cmd.makerFeeBps) || !isFeeRate(cmd.takerFeeBps)) return s.out.result(ResultCode.FeeRateOutOfRange, 0, cmd.frontId, cmd.requestId);
  s.accounts.futures.set(cmd.accountId, cmd.makerFeeBps, cmd.takerFeeBps);
  s.out.feeRates(cmd.accountId, cmd.frontId, cmd.requestId, 0);
  s.out.result(ResultCode.Ok, 0, cmd.frontId, cmd.requestId);
}
