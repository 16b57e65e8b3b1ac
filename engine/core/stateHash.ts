// A deterministic digest of the whole logical state: SHA-256 over a canonical walk.
//
// The walk visits what the exchange *is*, never how it is stored: accounts in id order with keys,
// balances and fee rates, asset supplies and collected fees, each market's counters (a banded
// market's last price and guarded reference price among them), order book state and its book
// best level first with each level's orders in time priority, the pending queue in sequence order, and each account's open
// orders in placement order, (only once a pool was used) the borrow/lend pools and positions, (only
// while not Ok) the exchange's system state, (only once some asset has one) the index prices, each account whose margin settings differ from the
// defaults, (only while some is not 0) the pools' throttle step starts, (only once used) the perpetual positions and settlement lines, (only where realization moved
// them apart) the positions' entry costs, (only once it moved
// or a liquidation step waits) the insurance fund, (only while there are some) the backstop
// liquidity providers, (only while one runs in steps) the realization pass's cursor, (likewise) the funding passes, and (likewise) the hour's interest pass. Pool slot numbers and free-list order are left out, so two engines
// that reached the same state by different slot histories (a snapshot restore, say) agree.
// Every number is a safe non-negative integer, written as two little-endian 32-bit words.
//
// Each structure hashes its own part beside its rules (parts.ts); this file is the list of those
// parts, in hash order.

import { StateDigest } from './parts.js';
import type { EngineState } from './state.js';
import { hashSystemStateInto } from './system.js';
import { hashPoolsInto } from './margin/borrow-lend.js';
import { hashThrottleInto } from './margin/throttle.js';
import { hashInsuranceInto } from './liquidation/parts.js';

/** The parts of the state hash, in order; `withGuard` and `withThrottle` as for hashState. */
const PARTS: readonly ((s: EngineState, d: StateDigest, withGuard: boolean, withThrottle: boolean) => void)[] = [
  (s, d) => s.catalog.hashInto(d),
  (s, d) => s.hashCountersInto(d),
  (s, d) => s.accounts.hashInto(d, (accountId) => s.ledger.hashRowInto(d, accountId)),
  (s, d) => s.ledger.hashInto(d),
  (s, d, withGuard) => {
    // A perpetual's book as configuration made it adds nothing: a state from before the market existed keeps its hash.
    for (const book of s.books) {
      if (!s.catalog.isSpot(book.marketIndex) && book.isFresh()) continue;
      book.hashInto(d, s.catalog.markets[book.marketIndex], withGuard);
    }
  },
  (s, d) => s.pending.hashInto(d),
  (s, d) => s.pool.hashAccountListsInto(d, s.accounts.count),
  // Only once a pool was used: every state without borrow or lend keeps its earlier hash.
  (s, d) => hashPoolsInto(s, d),
  // Only while in maintenance: every state without it keeps its earlier hash.
  (s, d) => hashSystemStateInto(s, d),
  // After it, and only once some asset has an index price (margin/index-prices.ts).
  (s, d) => s.indexPrices.hashInto(d),
  // Only accounts off the default settings: every state without them keeps its earlier hash.
  (s, d) => s.accountSettings.hashInto(d, s.accounts.count),
  // Only while some pool's throttle step began above 0 utilization (margin/throttle.ts).
  (s, d, _withGuard, withThrottle) => hashThrottleInto(s, d, withThrottle),
  // Only once a perpetual position or settlement line was used (perp/positions.ts).
  (s, d) => s.positions.hashInto(d, s.accounts.count),
  // Only where a position's entry cost differs from its cost (perp/realize.ts).
  (s, d) => s.positions.hashEntryCostsInto(d, s.accounts.count),
  // Only once the insurance fund moved or a liquidation step waits (liquidation/fund.ts).
  (s, d) => hashInsuranceInto(s, d),
  // Only perpetuals whose mark or funding state moved: every earlier state keeps its hash.
  (s, d) => s.perpMarks.hashInto(d),
  (s, d) => s.perpMarks.cumulative.hashInto(d, s.positions),
  // Only while some account is a backstop liquidity provider (liquidation/backstop-providers.ts).
  (s, d) => s.backstop.hashInto(d),
  // Only while a realization pass runs in steps (perp/realize.ts).
  (s, d) => s.realization.hashInto(d),
  // Only while a funding pass runs in steps (perp/funding-passes.ts).
  (s, d) => s.fundingPasses.hashInto(s, d),
  // Only while the hour's pass over the lenders and borrowers runs in steps (margin/interest-pass.ts).
  (s, d) => s.interestPass.hashInto(s, d),
];

/**
 * The state hash. `withGuardedReference` false leaves out each banded market's guarded reference
 * price and its time: the hash as engines before the guarded reference computed it, which
 * snapshot files and clean-stop marks they wrote still carry (Exchange.hasStateHash).
 * `withThrottle` false leaves out the throttle's step starts, likewise for engines before it.
 */
export function hashState(s: EngineState, withGuardedReference = true, withThrottle = true): string {
  const digest = new StateDigest();
  for (const part of PARTS) part(s, digest, withGuardedReference, withThrottle);
  return digest.hex();
}
