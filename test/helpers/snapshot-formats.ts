// Older snapshot formats built from today's: the tests of a part added in an earlier format cut
// their bytes from a snapshot as that format wrote it.

import type { Exchange } from '../../engine/core/exchange.js';
import { exportSnapshot } from '../../engine/core/snapshot.js';

/** The perpetual mark and funding part of a state where every perpetual is fresh and no position has funding: two 8-byte counts of 0. */
const FRESH_PERP_MARKS_PART = 16;
/** The accounts' futures fee rates part of a state where no account has its own: one 8-byte count of 0. */
const NO_FUTURES_FEES_PART = 8;

/** `file` without the `part` bytes just before its end marker, marked `version`. */
function withoutLastPart(file: Uint8Array, part: number, version: number): Uint8Array {
  const old = new Uint8Array(file.length - part);
  old.set(file.subarray(0, file.length - 4 - part));
  old.set(file.subarray(file.length - 4), file.length - 4 - part);
  new DataView(old.buffer).setUint32(4, version, true);
  return old;
}

/** Whether the `part` bytes just before the end marker are all zero. */
function zeroPart(file: Uint8Array, part: number): boolean {
  return file.subarray(file.length - 4 - part, file.length - 4).every((byte) => byte === 0);
}

/**
 * The snapshot as format 11 wrote it: today's without the accounts' futures fee rates part (just
 * before the end marker; the state must have no account with rates of its own, as checked), marked 11.
 */
export function formatElevenSnapshot(exchange: Exchange): Uint8Array {
  const today = exportSnapshot(exchange);
  if (!zeroPart(today, NO_FUTURES_FEES_PART)) throw new Error('formatElevenSnapshot needs a state without futures fee rates of an account\'s own');
  return withoutLastPart(today, NO_FUTURES_FEES_PART, 11);
}

/**
 * The snapshot as format 10 wrote it: format 11's without the perpetual mark and funding part (just
 * before the end marker; the state must have every perpetual fresh, as checked), marked 10.
 */
export function formatTenSnapshot(exchange: Exchange): Uint8Array {
  const eleven = formatElevenSnapshot(exchange);
  if (!zeroPart(eleven, FRESH_PERP_MARKS_PART)) throw new Error('formatTenSnapshot needs a state whose perpetuals are fresh');
  return withoutLastPart(eleven, FRESH_PERP_MARKS_PART, 10);
}

/**
 * The snapshot as format 9 wrote it: format 10's without the liquidation part (its five lines per
 * asset and the step timer's due time, just before the end marker), marked 9.
 */
export function formatNineSnapshot(exchange: Exchange, assetCount: number): Uint8Array {
  return withoutLastPart(formatTenSnapshot(exchange), assetCount * 5 * 8 + 8, 9);
}
