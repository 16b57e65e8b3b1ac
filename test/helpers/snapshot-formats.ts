// Older snapshot formats built from today's: the tests of a part added in an earlier format cut
// their bytes from a snapshot as that format wrote it.

import type { Exchange } from '../../engine/core/exchange.js';
import { exportSnapshot } from '../../engine/core/snapshot.js';

/**
 * The snapshot as format 9 wrote it: today's without the liquidation part (its five lines per
 * asset and the step timer's due time, just before the end marker), marked 9.
 */
export function formatNineSnapshot(exchange: Exchange, assetCount: number): Uint8Array {
  const today = exportSnapshot(exchange);
  const part = assetCount * 5 * 8 + 8;
  const old = new Uint8Array(today.length - part);
  old.set(today.subarray(0, today.length - 4 - part));
  old.set(today.subarray(today.length - 4), today.length - 4 - part);
  new DataView(old.buffer).setUint32(4, 9, true);
  return old;
}
