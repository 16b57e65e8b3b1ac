// The per-type-agnostic pieces of the history values' codec (engine/store/generated/values.ts,
// generated from the schema's (store) structs and (json) tables): 64-bit integers as two
// big-endian 32-bit halves, and the field checks of the validating JSON decoders.

const TWO32 = 4294967296;
const TWO_NEG32 = 1 / TWO32;

/**
 * Writes a safe integer as a big-endian two's-complement 64-bit value. The values come from
 * records the bus codec has already checked, so nothing is checked here (the same bytes as
 * writing Math.floor(v / 2^32) and v >>> 0 as two unsigned words, the first layout's writer).
 */
export function putBE64(dv: DataView, at: number, v: number): void {
  const lo = v >>> 0;
  dv.setInt32(at, (v - lo) * TWO_NEG32);
  dv.setUint32(at + 4, lo);
}

/** Reads a big-endian two's-complement 64-bit value as hi * 2^32 + lo. */
export function getBE64(dv: DataView, at: number): number {
  return dv.getInt32(at) * TWO32 + dv.getUint32(at + 4);
}

/** A stored history value that is not the shape the schema declares. */
export class HistoryValueError extends Error {
  constructor(what: string, expected: string, got: unknown) {
    super(`history value ${what}: expected ${expected}, got ${JSON.stringify(got) ?? String(got)}`);
  }
}

/** The value as an object of exactly `count` properties. */
export function jsonObject(value: unknown, what: string, count: number): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.keys(value).length !== count) {
    throw new HistoryValueError(what, `an object of ${count} fields`, value);
  }
  return value as Record<string, unknown>;
}

/** The value as an array of exactly `count` elements. */
export function jsonArray(value: unknown, what: string, count: number): unknown[] {
  if (!Array.isArray(value) || value.length !== count) throw new HistoryValueError(what, `an array of ${count} fields`, value);
  return value;
}

/** An integer from min to max (a 64-bit field: any safe integer). */
export function jsonInt(value: unknown, what: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new HistoryValueError(what, `an integer from ${min} to ${max}`, value);
  }
  return value;
}

export function jsonBool(value: unknown, what: string): boolean {
  if (typeof value !== 'boolean') throw new HistoryValueError(what, 'a boolean', value);
  return value;
}

export function jsonString(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new HistoryValueError(what, 'a string', value);
  return value;
}

/** One of an enum's names (the JSON text stores an enum by name). */
export function jsonName<T extends string>(value: unknown, what: string, names: readonly T[]): T {
  if (!names.includes(value as T)) throw new HistoryValueError(what, `one of ${names.join(', ')}`, value);
  return value as T;
}
