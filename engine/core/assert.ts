// Assertions for the engine core.
//
// A failed assertion is a bug, never a client error: client mistakes become result codes long
// before any state changes. Throwing stops the engine, which restarts through recovery and
// replays the journal, so a broken invariant never reaches the books or the ledger.

/** Throws when `condition` is false; the message names the broken invariant. */
export function assert(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(`engine assertion failed: ${message}`);
}

/** True for an integer in 0..MAX_SAFE_INTEGER, the only kind of number the core stores. */
export function isUnsignedSafe(value: number): boolean {
  return Number.isSafeInteger(value) && value >= 0;
}
