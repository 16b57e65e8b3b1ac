// Older snapshot formats built from today's: the tests of a part added in an earlier format cut
// their bytes from a snapshot as that format wrote it.

import { expect } from 'vitest';
import type { EngineConfig } from '../../engine/bus/types.js';
import { Exchange } from '../../engine/core/exchange.js';
import { exportSnapshot, importSnapshot } from '../../engine/core/snapshot.js';

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

/** The interest pass part of a state where none runs: an 8-byte account id of 0. */
const NO_INTEREST_PASS_PART = 8;

/**
 * `snapshot` without its last part of `partBytes` (just before the 4-byte end marker), marked
 * `version`. With `empty`, the part must be all zeros (the state has nothing in it), else `empty`
 * names what the state must lack.
 */
function withoutLastPart(snapshot: Uint8Array, partBytes: number, version: number, empty?: string): Uint8Array {
  const end = snapshot.length - 4;
  if (empty !== undefined && snapshot.subarray(end - partBytes, end).some((byte) => byte !== 0)) throw new Error(`format ${version} needs a state without ${empty}`);
  const old = new Uint8Array(snapshot.length - partBytes);
  old.set(snapshot.subarray(0, end - partBytes));
  old.set(snapshot.subarray(end), end - partBytes);
  new DataView(old.buffer).setUint32(4, version, true);
  return old;
}

/** The snapshot as format 15 wrote it: today's without the interest pass part; no pass may run. */
export function formatFifteenSnapshot(exchange: Exchange): Uint8Array {
  return withoutLastPart(exportSnapshot(exchange), NO_INTEREST_PASS_PART, 15, 'an interest pass running');
}

/** The snapshot as format 14 wrote it: format 15's without the funding pass part; the state must have no funding pass running. */
export function formatFourteenSnapshot(exchange: Exchange): Uint8Array {
  return withoutLastPart(formatFifteenSnapshot(exchange), NO_FUNDING_PASS_PART, 14, 'a funding pass running');
}

/** The snapshot as format 13 wrote it: format 14's without the realization pass part; no realization pass may run. */
export function formatThirteenSnapshot(exchange: Exchange): Uint8Array {
  return withoutLastPart(formatFourteenSnapshot(exchange), NO_REALIZE_PASS_PART, 13, 'a realization pass running');
}

/** The snapshot as format 12 wrote it: format 13's without the backstop provider part; the state must have no provider. */
export function formatTwelveSnapshot(exchange: Exchange): Uint8Array {
  return withoutLastPart(formatThirteenSnapshot(exchange), NO_BACKSTOP_PART, 12, 'backstop providers');
}

/** The snapshot as format 11 wrote it: format 12's without the positions' entry cost part; no entry cost may differ from its cost. */
export function formatElevenSnapshot(exchange: Exchange): Uint8Array {
  return withoutLastPart(formatTwelveSnapshot(exchange), NO_ENTRY_COSTS_PART, 11, 'realized entry costs');
}

/** The snapshot as format 10 wrote it: format 11's without the perpetual mark and funding part; every perpetual must be fresh. */
export function formatTenSnapshot(exchange: Exchange): Uint8Array {
  return withoutLastPart(formatElevenSnapshot(exchange), FRESH_PERP_MARKS_PART, 10, 'perpetuals that moved from fresh');
}

/**
 * The snapshot as format 9 wrote it: format 10's without the liquidation part (its five lines per
 * asset and the step timer's due time), marked 9.
 */
export function formatNineSnapshot(exchange: Exchange, assetCount: number): Uint8Array {
  return withoutLastPart(formatTenSnapshot(exchange), assetCount * 5 * 8 + 8, 9);
}

/**
 * The snapshot of `exchange` and a fresh engine under `config` restored from it, checked: its
 * invariants hold, its state hash is the original's and it exports the same bytes.
 */
export function restoredCopy(exchange: Exchange, config: EngineConfig): { bytes: Uint8Array; restored: Exchange } {
  const bytes = exportSnapshot(exchange);
  const restored = new Exchange(config);
  importSnapshot(restored, bytes);
  restored.validateInvariants();
  expect(restored.stateHash()).toBe(exchange.stateHash());
  expect(Buffer.from(exportSnapshot(restored)).equals(Buffer.from(bytes))).toBe(true);
  return { bytes, restored };
}
