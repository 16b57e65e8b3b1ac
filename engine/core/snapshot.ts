// Snapshot export and import of the engine core's whole state, for restart without replaying the
// journal from its beginning.
//
// The snapshot is *logical*: it walks what the exchange is (accounts, balances, fee ledger, each
// open order with every field, each book's levels best first with their FIFO of order ids, the
// speed-bump queue in order, the counters replay must reproduce), never how it is stored, so its
// size follows the live state (not the preallocated pools) and import rebuilds every structure
// through its own methods (accounts.add, pool.open, index.insert, side.insert, pending timers).
// Pool and level slot numbers may therefore differ after an import; nothing observable depends
// on them (ids, outputs and stateHash do not), which is why the state hash leaves them out.
//
// Deterministic and integer-only: every value is a safe integer written as two little-endian
// 32-bit words (low, then high as a signed word, so the few counters that start at -1 fit), keys
// as raw bytes. The same state always exports to the same bytes. Import is only defined on a
// freshly constructed Exchange of the same configuration (the shell checks the configuration
// fingerprint and, after import, the state hash recorded at export).
//
// Layout (all words little-endian u32 unless said):
//   magic 'EXS1', format version
//   orderNumber, lastSeq, lastTimeUs, assetCount, marketCount
//   accounts: count; per account: 32 key bytes, makerFeeBps, takerFeeBps, then per asset
//             available, locked
//   per asset: supply, feeUnits
//   orders: count; per order, in account order then each account's placement order: its fields
//   per market: updateId, lastTradeId, bandReferenceTicks, guardedReferenceTicks,
//             guardedReferenceTimeUs, updateIdSeq, orderBookState, restCounter, restingCount,
//             pendingCount, pendingGtc bid, pendingGtc ask, then for bids and asks: level count;
//             per level best first: price, qty, order count, the order ids
//   pending: count, order ids in queue order
//   system state (format 4 on; system.ts)
//   index prices (format 5 on; margin/index-prices.ts): count; per priced asset: asset index,
//             priceE9, updatedUs, source
//   account settings (format 6 on; margin/account-settings.ts): count of accounts off the
//             defaults, then per account id, flags, leverage limit in hundredths
//   borrow/lend pools (format 7 on; margin/pools.ts): per pool its totals and interest lines, the
//             open positions, the interest timer's due time
//   borrow/lend throttle (format 8 on; margin/throttle.ts): pool count; per pool its asset index
//             and u0 (an older snapshot takes u0 from the pools' totals)
//   perpetual positions (format 9 on; perp/positions.ts): the last position id, the settlement
//             line per asset, each open position with every field, the claim queue in order
//   insurance fund (format 10 on; liquidation/fund.ts): per asset its five lines, then the
//             liquidation step timer's due time (-1: none); an older snapshot has an empty fund
//             and no step waiting (a liquidating account's next re-check arms it)
//   perpetual marks and funding (format 11 on; perp/mark-price.ts, below)
//   positions' entry costs (format 12 on; perp/positions.ts): count of open positions whose entry
//             cost differs from their cost (realization at mark, perp/realize.ts), then per one
//             its cell and entry cost; an older snapshot has none (every entry cost is the cost)
//   backstop liquidity providers (format 13 on; liquidation/backstop-providers.ts): count, then
//             the account ids ascending; an older snapshot has none
//   realization pass (format 14 on; perp/realize.ts): the perpetual's ordinal + 1 it reached (0:
//             no pass runs) and the next account id; an older snapshot has no pass running
//   funding passes (format 15 on; perp/funding-passes.ts): count of passes running; per pass its
//             perpetual's ordinal, next account id, rate + 2^52, mark, interval end, then the
//             count and ids of the accounts a fill paid ahead of it; an older snapshot has none
//   interest pass (format 16 on; margin/interest-pass.ts): the next account id the hour's pass
//             over the lenders and borrowers visits (0: none runs), then while one runs its hour,
//             the count of pools it pays and per pool its asset index and lend rate, and the count
//             and cells of the lends ahead of it already paid; an older snapshot has none running
//   'EXSE' end marker
//
// Version 2 (before markets kept a guarded reference price) is still read: it lacks the two
// guarded reference words, and import starts each banded market's guarded reference at its last
// trade price as of the snapshot's engine time (book/reference.ts then moves it as usual). Such a
// state carries the version-2 state hash (Exchange.hasStateHash).
//
// Version 3 (before the exchange kept a system state) is still read: it lacks the system state
// word, and import starts Ok; such a state has the same hash as before (system.ts).
//
// Version 4 (before the margin room kept index prices) is still read: it lacks the index price
// part, and import starts with no asset priced; such a state has the same hash as before.
//
// Version 5 (before accounts had margin settings) is still read: it lacks the account settings,
// and import gives every account the defaults; such a state has the same hash as before.
//
// Version 11 adds the perpetuals' mark and funding part (perp/mark-price.ts) at the end: count of
// perpetuals off fresh, then per one its market index, EWMA, premium sum and sample count; then
// the open positions' cumulative funding (perp/cumulative-funding.ts): count, then per position
// its cell, position id and units. Versions before it are still read, and every perpetual starts
// fresh.
//
// Version 6 (before the borrow/lend pools) is still read: it has no pool part, and import starts
// every pool empty; such a state has the same hash as before (margin/pools.ts).
//
// Formats before 9 (before perpetual positions) are still read: they have no positions part, and
// import starts with no position and empty settlement lines; such a state has the same hash as
// before (perp/positions.ts hashes nothing until a position or a line was used).
//
// Each structure writes and reads its own part beside its rules (parts.ts); this file is the
// versioned list of those parts, in file order, between the magic words.

import type { Exchange } from './exchange.js';
import { SnapshotFormatError, SnapshotReader, SnapshotWriter, expectSnapshot } from './parts.js';
import { ResultCode, type CommandHeader } from '../bus/types.js';
import type { EngineState } from './state.js';
import { exportSystemStateTo, importSystemStateFrom } from './system.js';
import { exportPoolsTo, importPoolsFrom } from './margin/borrow-lend.js';
import { exportThrottleTo, importThrottleFrom } from './margin/throttle.js';
import { exportInsuranceTo, importInsuranceFrom } from './liquidation/parts.js';
import { armPerpTimers, needsPerpTimers } from './perp/mark-price.js';
import { armRealization } from './perp/realize.js';
import { armFundingSteps } from './perp/funding-passes.js';
import { armInterestPass } from './margin/interest-pass.js';

export { SnapshotFormatError };

const MAGIC = 0x31535845; // 'EXS1'
const END_MAGIC = 0x45535845; // 'EXSE'
const FORMAT_VERSION = 16;
/** The last version without the hour's interest pass in progress; import still reads it. */
const FORMAT_VERSION_NO_INTEREST_PASS = 15;
/** The last version without the funding passes in progress; import still reads it. */
const FORMAT_VERSION_NO_FUNDING_PASSES = 14;
/** The last version without the realization pass in progress; import still reads it. */
const FORMAT_VERSION_NO_REALIZE_PASS = 13;
/** The last version without the backstop liquidity providers; import still reads it. */
const FORMAT_VERSION_NO_BACKSTOP = 12;
/** The last version without the liquidation room (its fund and step timer); import still reads it. */
const FORMAT_VERSION_NO_LIQUIDATION = 9;
/** The last version without the borrow/lend throttle's step starts; import still reads it. */
const FORMAT_VERSION_NO_THROTTLE = 7;
/** The last version without perpetual positions; import still reads the versions before it. */
const FORMAT_VERSION_NO_POSITIONS = 8;
/** The last version without the perpetuals' mark and funding state; import still reads it. */
const FORMAT_VERSION_NO_PERP_MARKS = 10;
/** The last version without the positions' entry costs (before realization at mark). */
const FORMAT_VERSION_NO_ENTRY_COSTS = 11;
/** The last version without index prices; import still reads it. */
const FORMAT_VERSION_NO_INDEX_PRICES = 4;
/** The last version without accounts' margin settings; import still reads it. */
const FORMAT_VERSION_NO_ACCOUNT_SETTINGS = 5;
/** The last version without the borrow/lend pools; import still reads it. */
const FORMAT_VERSION_NO_POOLS = 6;
/** The last version without the exchange's system state; import still reads it. */
const FORMAT_VERSION_NO_SYSTEM_STATE = 3;
/** The last version without the guarded reference price; import still reads it. */
const FORMAT_VERSION_NO_GUARD = 2;

interface SnapshotPart {
  exportTo(s: EngineState, w: SnapshotWriter): void;
  /** `version` is the file's format version (FORMAT_VERSION or an older one still read). */
  importFrom(s: EngineState, r: SnapshotReader, version: number): void;
}

/** The parts of a snapshot, in file order. */
const PARTS: readonly SnapshotPart[] = [
  // orderNumber, lastSeq, lastTimeUs
  { exportTo: (s, w) => s.exportCountersTo(w), importFrom: (s, r) => s.importCountersFrom(r) },
  // assetCount, marketCount
  { exportTo: (s, w) => s.catalog.exportTo(w), importFrom: (s, r) => s.catalog.importFrom(r) },
  // accounts, each with its balances
  {
    exportTo: (s, w) => s.accounts.exportTo(w, (accountId) => s.ledger.exportRowTo(w, accountId)),
    importFrom: (s, r) => s.accounts.importFrom(r, (accountId) => s.ledger.importRowFrom(r, accountId)),
  },
  // per asset: supply, fees
  { exportTo: (s, w) => s.ledger.exportTo(w), importFrom: (s, r) => s.ledger.importFrom(r) },
  // open orders
  {
    exportTo: (s, w) => s.pool.exportTo(w, s.accounts.count),
    importFrom: (s, r) => s.pool.importFrom(r, (accountId) => s.accounts.exists(accountId), s.index, s.catalog.marketCount),
  },
  // per market: its book
  {
    exportTo: (s, w) => {
      for (const book of s.books) book.exportTo(w);
    },
    importFrom: (s, r, version) => {
      for (const book of s.books) {
        if (book.marketIndex >= s.catalog.snapshotMarketCount) continue; // a perpetual added after the snapshot's configuration: fresh
        book.importFrom(r, s.index, s.catalog.markets[book.marketIndex], version !== FORMAT_VERSION_NO_GUARD, s.lastTimeUs);
      }
    },
  },
  // the speed-bump queue
  { exportTo: (s, w) => s.pending.exportTo(w), importFrom: (s, r) => s.pending.importFrom(r, s.index) },
  // the exchange's system state
  { exportTo: exportSystemStateTo, importFrom: (s, r, version) => importSystemStateFrom(s, r, version > FORMAT_VERSION_NO_SYSTEM_STATE) },
  // the margin room's index prices
  {
    exportTo: (s, w) => s.indexPrices.exportTo(w),
    importFrom: (s, r, version) => s.indexPrices.importFrom(r, version > FORMAT_VERSION_NO_INDEX_PRICES, s.lastTimeUs),
  },
  // accounts' margin settings, those off the defaults
  {
    exportTo: (s, w) => s.accountSettings.exportTo(w, s.accounts.count),
    importFrom: (s, r, version) => s.accountSettings.importFrom(r, s.accounts.count, version > FORMAT_VERSION_NO_ACCOUNT_SETTINGS),
  },
  // the borrow/lend pools, their positions and the interest timer
  { exportTo: exportPoolsTo, importFrom: (s, r, version) => importPoolsFrom(s, r, version > FORMAT_VERSION_NO_POOLS) },
  // the borrow/lend throttle: each pool's utilization when the hour began (after the pools: an
  // older snapshot takes it from their totals)
  { exportTo: exportThrottleTo, importFrom: (s, r, version) => importThrottleFrom(s, r, version > FORMAT_VERSION_NO_THROTTLE) },
  // perpetual positions, the settlement lines and the claim queue
  {
    exportTo: (s, w) => s.positions.exportTo(w, s.accounts.count),
    importFrom: (s, r, version) => {
      if (version > FORMAT_VERSION_NO_POSITIONS) s.positions.importFrom(r, s.accounts.count);
    },
  },
  // the insurance fund and the liquidation step timer (an older snapshot: an empty fund, no step waiting)
  { exportTo: exportInsuranceTo, importFrom: (s, r, version) => importInsuranceFrom(s, r, version > FORMAT_VERSION_NO_LIQUIDATION) },
  // the perpetuals' mark EWMAs and open funding intervals; their timers follow from lastTimeUs
  {
    exportTo: (s, w) => {
      s.perpMarks.exportTo(w);
      s.perpMarks.cumulative.exportTo(w, s.positions);
    },
    importFrom: (s, r, version) => {
      s.perpMarks.importFrom(r, version > FORMAT_VERSION_NO_PERP_MARKS);
      if (version > FORMAT_VERSION_NO_PERP_MARKS) s.perpMarks.cumulative.importFrom(r);
      if (s.lastSeq >= 0 && needsPerpTimers(s)) armPerpTimers(s);
    },
  },
  // the positions' entry costs that realization at mark moved apart from their costs
  {
    exportTo: (s, w) => s.positions.exportEntryCostsTo(w, s.accounts.count),
    importFrom: (s, r, version) => s.positions.importEntryCostsFrom(r, version > FORMAT_VERSION_NO_ENTRY_COSTS),
  },
  // the backstop liquidity providers (an older snapshot: none)
  {
    exportTo: (s, w) => s.backstop.exportTo(w),
    importFrom: (s, r, version) => s.backstop.importFrom(r, version > FORMAT_VERSION_NO_BACKSTOP, (accountId) => s.accounts.exists(accountId)),
  },
  // the realization pass in progress (an older snapshot: none); the realization timer follows
  // from it and lastTimeUs
  {
    exportTo: (s, w) => s.realization.exportTo(w),
    importFrom: (s, r, version) => {
      s.realization.importFrom(r, version > FORMAT_VERSION_NO_REALIZE_PASS, s.positions.perpCount, s.accounts.count);
      if (s.lastSeq >= 0) armRealization(s);
    },
  },
  // the funding passes in progress (an older snapshot: none); their step timers follow from
  // them and lastTimeUs
  {
    exportTo: (s, w) => s.fundingPasses.exportTo(s, w),
    importFrom: (s, r, version) => {
      s.fundingPasses.importFrom(s, r, version > FORMAT_VERSION_NO_FUNDING_PASSES);
      if (s.lastSeq >= 0) armFundingSteps(s);
    },
  },
  // the hour's pass over the lenders and borrowers in progress (an older snapshot: none); its
  // step timer follows from it and lastTimeUs
  {
    exportTo: (s, w) => s.interestPass.exportTo(s, w),
    importFrom: (s, r, version) => {
      s.interestPass.importFrom(s, r, version > FORMAT_VERSION_NO_INTEREST_PASS);
      if (s.lastSeq >= 0) armInterestPass(s);
    },
  },
];

/** The whole state of `exchange` as deterministic bytes. */
/**
 * Snapshot: the shell serialises the state after this apply; the core only answers with the
 * snapshot's sequence (the command's own).
 */
export function snapshot(s: EngineState, cmd: CommandHeader): void {
  s.out.result(ResultCode.Ok, s.lastSeq, cmd.frontId, cmd.requestId);
}

export function exportSnapshot(exchange: Exchange): Uint8Array {
  return exchange.exportSnapshot();
}

/**
 * Loads a snapshot into a freshly constructed Exchange of the same configuration. Throws
 * SnapshotFormatError on bytes that do not fit it; the caller then compares the state hash.
 */
export function importSnapshot(exchange: Exchange, bytes: Uint8Array): void {
  exchange.importSnapshot(bytes);
}

/** The snapshot of a state (Exchange.exportSnapshot). */
export function encodeState(s: EngineState): Uint8Array {
  // Sized for the last snapshot of this state plus an eighth: a state that grows a little between
  // snapshots is written without growing (and copying) the buffer.
  const w = new SnapshotWriter(s.snapshotBytesHint + (s.snapshotBytesHint >> 3));
  w.word(MAGIC);
  w.word(FORMAT_VERSION);
  for (const part of PARTS) part.exportTo(s, w);
  w.word(END_MAGIC);
  s.snapshotBytesHint = w.length;
  return w.finish();
}

/** Loads a snapshot into a fresh state (Exchange.importSnapshot). */
export function decodeState(s: EngineState, bytes: Uint8Array): void {
  const r = new SnapshotReader(bytes);
  expectSnapshot(s.lastSeq === -1 && s.accounts.count === 0 && s.pool.liveCount === 0, 'import needs a fresh engine');
  expectSnapshot(r.word() === MAGIC, 'not an engine snapshot (magic)');
  const version = r.word();
  expectSnapshot(version >= FORMAT_VERSION_NO_GUARD && version <= FORMAT_VERSION, 'unknown snapshot format version');
  for (const part of PARTS) part.importFrom(s, r, version);
  expectSnapshot(r.word() === END_MAGIC && r.atEnd(), 'snapshot does not end where its contents do');
  s.pool.expectAllPlaced();
  s.trigger.reset();
}
