// The utilization throttle of the borrow/lend pools (venue mechanics §2 "Throttle fields", its
// proposed algorithm): how far a voluntary borrow or lend redemption may push a pool's
// utilization within the current hour.
//
// Timestep: one hour of engine time, on the hourly interest timer (borrow-lend.ts). At each tick,
// after the hour's interest, every pool takes u0 = its utilization then (lending.ts
// `utilization`, rounded down). The step's ceiling is (lending.ts `throttleCeiling`)
//   min(maxUtilization, throttleUtilizationBound)                               if u0 < threshold
//   min(maxUtilization, u0 + throttleUpdateFraction · (bound − u0))  (rounded down) otherwise.
// A borrow (BorrowLend, an order's or a withdrawal's autoBorrow) or a redemption (BorrowLend on a
// lent asset, autoLendRedeem) that would leave the pool's utilization above the ceiling is
// refused with InsufficientSupply; the largest-borrow, -withdrawal and -order queries ask the same
// check (borrow-lend.ts borrowRefusal, redeemRefusal). Repayments, lends and interest are never
// refused by it. When the timer is not armed, no position is open anywhere: the last tick found
// every pool empty and u0 is 0, as it is before the first tick.
//
// u0 is kept at most MAX_THROTTLE_START (a utilization of about 9 007, reachable only when
// interest the exchange kept lets borrows pass a tiny lent total): the ceiling reads u0 only
// below the threshold (≤ 1) or through (1 − fraction) · u0 + fraction · bound, which is at least
// 1 ≥ maxUtilization long before that bound unless the fraction is within 10^-3 of 1.
//
// State: u0 per pool, a snapshot part from format 8 on (older snapshots load with u0 taken as
// the current utilization) and a state hash part only while some pool's u0 is not 0 (every state
// before it keeps its hash; Exchange.hasStateHash also accepts the hash without this part, as
// snapshot files and clean-stop marks of engines before the throttle carry it).

import { expectSnapshot, type SnapshotReader, type SnapshotWriter, type StateDigest } from '../parts.js';
import type { EngineState } from '../state.js';
import { minBig, type Fraction } from './fixed.js';
import { throttleCeiling, utilization } from './lending.js';

/** The largest u0 kept (header). */
export const MAX_THROTTLE_START = Number.MAX_SAFE_INTEGER;

/** The pool's utilization now, as a throttle start. */
function currentStart(s: EngineState, assetIndex: number): number {
  const pools = s.pools;
  const u = utilization(BigInt(pools.borrowedTotal[assetIndex]), BigInt(pools.lentTotal[assetIndex]));
  return Number(minBig(u, BigInt(MAX_THROTTLE_START)));
}

/** The hourly tick: every pool's u0 is its utilization now. */
export function startThrottleStep(s: EngineState): void {
  const pools = s.pools;
  for (let assetIndex = 0; assetIndex < pools.assetCount; assetIndex++) {
    if (pools.poolOf[assetIndex] !== undefined) pools.stepStartUtilization[assetIndex] = currentStart(s, assetIndex);
  }
}

/** The utilization a voluntary borrow or redemption may reach in this step. */
export function throttleCeilingOf(s: EngineState, assetIndex: number): Fraction {
  const pools = s.pools;
  return throttleCeiling(pools.poolOf[assetIndex]!, BigInt(pools.stepStartUtilization[assetIndex]));
}

/** Snapshot part (format 8 on): per pool, in asset order, its asset index and u0. */
export function exportThrottleTo(s: EngineState, w: SnapshotWriter): void {
  const pools = s.pools;
  w.number(pools.poolCount);
  for (let assetIndex = 0; assetIndex < pools.assetCount; assetIndex++) {
    if (pools.poolOf[assetIndex] === undefined) continue;
    w.number(assetIndex);
    w.number(pools.stepStartUtilization[assetIndex]);
  }
}

/** Older snapshots (`hasPart` false) hold none: u0 is each pool's utilization as loaded. */
export function importThrottleFrom(s: EngineState, r: SnapshotReader, hasPart: boolean): void {
  const pools = s.pools;
  if (!hasPart) {
    startThrottleStep(s);
    return;
  }
  const count = r.number();
  expectSnapshot(count === pools.poolCount || count === 0, 'the snapshot has other lend pools than the configuration');
  if (count === 0) return startThrottleStep(s);
  for (let assetIndex = 0; assetIndex < pools.assetCount; assetIndex++) {
    if (pools.poolOf[assetIndex] === undefined) continue;
    expectSnapshot(r.number() === assetIndex, 'throttle starts out of order');
    const u0 = r.number();
    expectSnapshot(Number.isSafeInteger(u0) && u0 >= 0, 'a throttle start out of range');
    pools.stepStartUtilization[assetIndex] = u0;
  }
}

/** State hash part: only while some pool's u0 is not 0 (header); `withThrottle` false leaves it out. */
export function hashThrottleInto(s: EngineState, d: StateDigest, withThrottle: boolean): void {
  const pools = s.pools;
  if (!withThrottle || !pools.stepStartUtilization.some((u0) => u0 !== 0)) return;
  for (let assetIndex = 0; assetIndex < pools.assetCount; assetIndex++) {
    if (pools.poolOf[assetIndex] === undefined) continue;
    d.number(assetIndex);
    d.number(pools.stepStartUtilization[assetIndex]);
  }
}
