// The per-type-agnostic pieces of the codec: 64-bit integers as two 32-bit halves, the range
// errors, and the 32-byte public key. engine/bus/generated/codec.ts (generated from the schema)
// calls them from every writer and reader; engine/bus/codec.ts states the invariants they keep.

/**
 * KEY_BYTES of the generated records (the schema's key_0..key_3), as a local constant: an imported
 * binding is a cell load in the key loops on the hot path, a local const folds away.
 * test/bus/codec.test.ts round-trips every key byte, so a different schema length fails there.
 */
const KEY_BYTES = 32;
const TWO32 = 4294967296;

export function badInt(field: string, v: number): never {
  throw new RangeError(`codec: ${field} must be a safe integer, got ${v}`);
}

/**
 * Writes a safe integer as a little-endian two's-complement 64-bit value, unchecked: the caller
 * has already tested every 64-bit field of the record with Number.isSafeInteger (one test each,
 * which the optimizing compiler turns into a few instructions) and thrown through badField if one
 * failed. Kept tiny so the compiler inlines all of a record's writes: a call left out of line
 * would box each double argument.
 */
export function put64(dv: DataView, at: number, v: number): void {
  // v >>> 0 is the unsigned low word (ToUint32 is v modulo 2^32, for negatives too); v - lo is a
  // multiple of 2^32 of magnitude at most 2^53, so it and its product with 2^-32 (the signed high
  // word) are exact.
  // 2^-32 is written as a literal: a module constant is a context load and a check per call.
  const lo = v >>> 0;
  dv.setUint32(at, lo, true);
  dv.setInt32(at + 4, (v - lo) * 2.3283064365386963e-10, true);
}

/** True on a little-endian platform, where a record's 32-bit words can be stored through an Int32Array. */
export const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
let lastView: DataView | null = null;
let lastWords: Int32Array | null = null;

/**
 * The 32-bit words of `dv` (an Int32Array over the same bytes, word 0 at the view's first byte) on
 * a little-endian platform when the view starts on a 4-byte boundary; null otherwise, and a writer
 * then stores through the DataView. The writers store a record's words through it: an element store
 * is a few instructions where a DataView store is several times that. Cached for the last view
 * asked (a thread writes its records into one ring).
 */
export function wordsOf(dv: DataView): Int32Array | null {
  if (dv === lastView) return lastWords;
  lastView = dv;
  lastWords = LITTLE_ENDIAN && (dv.byteOffset & 3) === 0 ? new Int32Array(dv.buffer, dv.byteOffset, dv.byteLength >> 2) : null;
  return lastWords;
}

/** put64 into words[i] and words[i + 1] (wordsOf): the same bytes, the same unchecked contract. */
export function put64w(words: Int32Array, i: number, v: number): void {
  const lo = v >>> 0;
  words[i] = lo;
  words[i + 1] = (v - lo) * 2.3283064365386963e-10;
}

/**
 * The error path of a writer whose safe-integer test failed: throws the RangeError of the first
 * field of `fields` (in writing order) that is not a safe integer. Only ever called to throw.
 */
export function badField(r: object, fields: readonly string[]): never {
  for (const field of fields) {
    const v = (r as Record<string, number>)[field];
    if (!Number.isSafeInteger(v)) badInt(field, v);
  }
  throw new RangeError('codec: a 64-bit field is not a safe integer');
}

/** Reads a little-endian two's-complement 64-bit value as hi * 2^32 + lo. */
export function getI64(dv: DataView, at: number): number {
  return dv.getInt32(at + 4, true) * TWO32 + dv.getUint32(at, true);
}

function checkKey(key: Uint8Array): void {
  if (key.length !== KEY_BYTES) {
    throw new RangeError(`codec: key must be ${KEY_BYTES} bytes, got ${key.length}`);
  }
}

/** Writes the 32 key bytes in order as eight little-endian u32 words. */
export function setKey(dv: DataView, at: number, key: Uint8Array): void {
  checkKey(key);
  for (let i = 0; i < KEY_BYTES; i += 4) {
    dv.setUint32(at + i, key[i] | (key[i + 1] << 8) | (key[i + 2] << 16) | (key[i + 3] << 24), true);
  }
}

/** Copies the 32 key bytes into `key` (which must be 32 bytes long). */
export function getKey(dv: DataView, at: number, key: Uint8Array): void {
  checkKey(key);
  for (let i = 0; i < KEY_BYTES; i += 4) {
    const w = dv.getUint32(at + i, true);
    key[i] = w;
    key[i + 1] = w >>> 8;
    key[i + 2] = w >>> 16;
    key[i + 3] = w >>> 24;
  }
}
