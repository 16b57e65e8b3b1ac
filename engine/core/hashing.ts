// Hash functions and sizing for the core's open-addressing tables (order ids, account keys).
//
// 32-bit integer mixing only (Math.imul, shifts, xor): deterministic on every platform and free
// of floating point. Inputs can come from clients, so every input bit reaches the hash.

const TWO_POW_32 = 0x100000000;

/** Smallest power of two ≥ n (table sizes, so that `hash & mask` picks a cell). */
export function powerOfTwoAtLeast(n: number): number {
  let size = 1;
  while (size < n) size *= 2;
  return size;
}

/** Mixes a safe non-negative integer (an order id) into 32 bits. */
export function mixId(value: number): number {
  // Dividing by 2^32 only moves the exponent: high and low are exact, without a float modulo (a call).
  const high = Math.floor(value / TWO_POW_32);
  const low = value - high * TWO_POW_32;
  let x = (low ^ Math.imul(high, 0x9e3779b1)) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

/** FNV-1a over a byte string (an account key). */
export function hashBytes(bytes: Uint8Array): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) hash = Math.imul(hash ^ bytes[i], 0x01000193);
  return hash >>> 0;
}
