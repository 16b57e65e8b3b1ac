// Older snapshot formats built from today's: the tests of a part added in an earlier format cut
// their bytes from a snapshot as that format wrote it.

import type { Exchange } from '../../engine/core/exchange.js';
import { exportSnapshot } from '../../engine/core/snapshot.js';

/** The perpetual mark and funding part of a state where every perpetual is fresh and no position has funding: two 8-byte counts of 0. */
const FRESH_PERP_MARKS_PART = 16;

/** The entry cost part of a state where no realization moved an entry cost: an 8-byte count of 0. */
const NO_ENTRY_COSTS_PART = 8;

/** The backstop provider part of a state without providers: an 8-byte count of 0. */
const NO_BACKSTOP_PART = 8;

/** The realization pass part of a state where no pass runs: two 8-byte numbers of 0. */
const NO_REALIZE_PASS_PART = 16;

/** The funding pass part of a state where no pass runs: an 8-byte count of 0. */
const NO_FUNDING_PASS_PART = 8;

/**
 * The snapshot as format 14 wrote it: today's without the funding pass part (just before the end
 * marker; the state must have no funding pass running, as checked), marked 14.
 */
export function formatFourteenSnapshot(exchange: Exchange): Uint8Array {
  const today = exportSnapshot(exchange);
  const part = today.subarray(today.length - 4 - NO_FUNDING_PASS_PART, today.length - 4);
  if (part.some((byte) => byte !== 0)) throw new Error('formatFourteenSnapshot needs a state without a funding pass running');
  const old = new Uint8Array(today.length - NO_FUNDING_PASS_PART);
  old.set(today.subarray(0, today.length - 4 - NO_FUNDING_PASS_PART));
  old.set(today.subarray(today.length - 4), today.length - 4 - NO_FUNDING_PASS_PART);
  new DataView(old.buffer).setUint32(4, 14, true);
  return old;
}

/**
 * The snapshot as format 13 wrote it: format 14's without the realization pass part (just before
 * the end marker; the state must have no pass running, as checked), marked 13.
 */
export function formatThirteenSnapshot(exchange: Exchange): Uint8Array {
  const today = formatFourteenSnapshot(exchange);
  const part = today.subarray(today.length - 4 - NO_REALIZE_PASS_PART, today.length - 4);
  if (part.some((byte) => byte !== 0)) throw new Error('formatThirteenSnapshot needs a state without a realization pass running');
  const old = new Uint8Array(today.length - NO_REALIZE_PASS_PART);
  old.set(today.subarray(0, today.length - 4 - NO_REALIZE_PASS_PART));
  old.set(today.subarray(today.length - 4), today.length - 4 - NO_REALIZE_PASS_PART);
  new DataView(old.buffer).setUint32(4, 13, true);
  return old;
}

/**
 * The snapshot as format 12 wrote it: format 13's without the backstop provider part (just before
 * the end marker; the state must have no provider, as checked), marked 12.
 */
export function formatTwelveSnapshot(exchange: Exchange): Uint8Array {
  const today = formatThirteenSnapshot(exchange);
  const part = today.subarray(today.length - 4 - NO_BACKSTOP_PART, today.length - 4);
  if (part.some((byte) => byte !== 0)) throw new Error('formatTwelveSnapshot needs a state without backstop providers');
  const old = new Uint8Array(today.length - NO_BACKSTOP_PART);
  old.set(today.subarray(0, today.length - 4 - NO_BACKSTOP_PART));
  old.set(today.subarray(today.length - 4), today.length - 4 - NO_BACKSTOP_PART);
  new DataView(old.buffer).setUint32(4, 12, true);
  return old;
}

/**
 * The snapshot as format 11 wrote it: format 12's without the positions' entry cost part (just
 * before the end marker; the state must have no entry cost apart from its cost, as checked), marked 11.
 */
export function formatElevenSnapshot(exchange: Exchange): Uint8Array {
  const today = formatTwelveSnapshot(exchange);
  const part = today.subarray(today.length - 4 - NO_ENTRY_COSTS_PART, today.length - 4);
  if (part.some((byte) => byte !== 0)) throw new Error('formatElevenSnapshot needs a state without realized entry costs');
  const old = new Uint8Array(today.length - NO_ENTRY_COSTS_PART);
  old.set(today.subarray(0, today.length - 4 - NO_ENTRY_COSTS_PART));
  old.set(today.subarray(today.length - 4), today.length - 4 - NO_ENTRY_COSTS_PART);
  new DataView(old.buffer).setUint32(4, 11, true);
  return old;
}

/**
 * The snapshot as format 10 wrote it: format 11's without the perpetual mark and funding part
 * (just before the end marker; the state must have every perpetual fresh, as checked), marked 10.
 */
export function formatTenSnapshot(exchange: Exchange): Uint8Array {
  const today = formatElevenSnapshot(exchange);
  const marks = today.subarray(today.length - 4 - FRESH_PERP_MARKS_PART, today.length - 4);
  if (marks.some((byte) => byte !== 0)) throw new Error('formatTenSnapshot needs a state whose perpetuals are fresh');
  const old = new Uint8Array(today.length - FRESH_PERP_MARKS_PART);
  old.set(today.subarray(0, today.length - 4 - FRESH_PERP_MARKS_PART));
  old.set(today.subarray(today.length - 4), today.length - 4 - FRESH_PERP_MARKS_PART);
  new DataView(old.buffer).setUint32(4, 10, true);
  return old;
}

/**
 * The snapshot as format 9 wrote it: format 10's without the liquidation part (its five lines per
 * asset and the step timer's due time, just before the end marker), marked 9.
 */
export function formatNineSnapshot(exchange: Exchange, assetCount: number): Uint8Array {
  const ten = formatTenSnapshot(exchange);
  const part = assetCount * 5 * 8 + 8;
  const old = new Uint8Array(ten.length - part);
  old.set(ten.subarray(0, ten.length - 4 - part));
  old.set(ten.subarray(ten.length - 4), ten.length - 4 - part);
  new DataView(old.buffer).setUint32(4, 9, true);
  return old;
}
