// A stream message written as bytes into one reused buffer, for the streams that send a message
// per engine event (trade.<symbol>): the fan-out of such a stream costs, per event, one message
// encoding and one uWS publish, so neither may allocate.
//
// The fixed parts of a message (the envelope and its stream name, key names) are encoded once per
// stream as bytes; only the values are written per event. The message leaves as a Uint8Array view
// of the buffer, taken from a cache by length: uWS reads a typed array in place (a string would be
// converted to UTF-8 into a fresh allocation on each publish) and copies what it keeps, so the
// buffer is free again as soon as publish returns. Values are written exactly as JSON.stringify
// writes them (integers as plain digits, decimals as the quoted strings of priceTextFixed).
//
// The put* functions write one part at an offset of a buffer the caller has sized (INT_BYTES_MAX,
// fixedBytesMax) and return the offset after it: no checks and no object state, so the per-event
// encoder of a stream keeps its offset in a local and checks its values once, up front.

const CHAR_0 = 0x30;
const CHAR_MINUS = 0x2d;
const CHAR_DOT = 0x2e;
/** Longest safe integer written by putInt: a sign and 16 digits. */
export const INT_BYTES_MAX = 17;

/** The UTF-8 bytes of a fixed message part (computed once per stream, never per event). */
export function messageBytes(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text, 'utf8'));
}

/** Longest decimal written by putFixed at `scale`: a sign, up to 16 integer digits, the point and the decimals. */
export function fixedBytesMax(scale: number): number {
  return INT_BYTES_MAX + 1 + scale;
}

/** Copies `part` to `at`; returns the offset after it. */
export function putPart(dv: DataView, at: number, part: Uint8Array): number {
  const count = part.length;
  for (let i = 0; i < count; i++) dv.setUint8(at + i, part[i]);
  return at + count;
}

/** Writes safe integer `value` as JSON writes a number ("-12", "0", "1795331459791958"); returns the offset after it. */
export function putInt(dv: DataView, at: number, value: number): number {
  if (value < 0) {
    dv.setUint8(at++, CHAR_MINUS);
    value = -value;
  }
  return writeDigits(dv, at, value, 1);
}

/**
 * Writes safe integer `units` of 10^-scale as a decimal with exactly `scale` decimals, unquoted,
 * as formatDecimalFixed writes it (150 at scale 2 → 1.50, 5 at scale 3 → 0.005); returns the
 * offset after it.
 */
export function putFixed(dv: DataView, at: number, units: number, scale: number): number {
  if (units < 0) {
    dv.setUint8(at++, CHAR_MINUS);
    units = -units;
  }
  // Beyond 15 decimals every safe integer is below one whole unit.
  const integerPart = scale > SAFE_DIGITS ? 0 : Math.floor(units / POW10[scale]);
  at = writeDigits(dv, at, integerPart, 1);
  if (scale > 0) {
    dv.setUint8(at++, CHAR_DOT);
    at = writeDigits(dv, at, integerPart === 0 ? units : units - integerPart * POW10[scale], scale);
  }
  return at;
}

/** The first `length` bytes of `bytes`, from `views` (indexed by length; filled on first use). */
export function viewOf(bytes: Uint8Array, views: Uint8Array[], length: number): Uint8Array {
  let view = views[length];
  if (view === undefined) {
    view = bytes.subarray(0, length);
    views[length] = view;
  }
  return view;
}

/** Safe integers are written as two halves of at most 8 digits, each small enough for int32 arithmetic. */
const HALF_DIGITS = 8;
const HALF_UNIT = 10 ** HALF_DIGITS;
/** Scales up to this one have a power of ten below Number.MAX_SAFE_INTEGER (10^15 < 2^53). */
const SAFE_DIGITS = 15;
const POW10 = Array.from({ length: SAFE_DIGITS + 1 }, (_, i) => 10 ** i);
/** The two ASCII digits of 0 to 99 as one little-endian 16-bit word: 7 → "07" = 0x3730. */
const DIGIT_PAIRS = Uint16Array.from({ length: 100 }, (_, i) => (CHAR_0 + Math.floor(i / 10)) | ((CHAR_0 + (i % 10)) << 8));

/**
 * Writes non-negative safe integer `value` in decimal at `at`, left-padded with zeros to
 * `minDigits`; returns the offset after it. One floating division splits it into halves below
 * 10^8 (exact: the quotient's gap to the next integer exceeds its rounding error); the digits
 * themselves come from int32 divisions by 10^4 and 100, which compile to multiplications, and are
 * stored four at a time.
 */
function writeDigits(dv: DataView, at: number, value: number, minDigits: number): number {
  if (value < HALF_UNIT) return writeSmall(dv, at, value | 0, minDigits);
  const high = Math.floor(value / HALF_UNIT);
  at = writeSmall(dv, at, high | 0, minDigits - HALF_DIGITS);
  writeEight(dv, at, (value - high * HALF_UNIT) | 0);
  return at + HALF_DIGITS;
}

/** writeDigits for 0 <= value < 10^8. */
function writeSmall(dv: DataView, at: number, value: number, minDigits: number): number {
  if (minDigits <= HALF_DIGITS && (value >= 10_000_000 || minDigits === HALF_DIGITS)) {
    writeEight(dv, at, value);
    return at + HALF_DIGITS;
  }
  let digits = value < 10 ? 1 : value < 100 ? 2 : value < 1000 ? 3 : value < 10_000 ? 4
    : value < 100_000 ? 5 : value < 1_000_000 ? 6 : 7;
  if (digits < minDigits) digits = minDigits;
  const end = at + digits;
  let index = end;
  // Two digits per division; padding zeros come out as "00" pairs of a value that reached 0.
  while (index - at >= 2) {
    const next = (value / 100) | 0;
    index -= 2;
    dv.setUint16(index, DIGIT_PAIRS[value - next * 100], true);
    value = next;
  }
  if (index > at) dv.setUint8(--index, CHAR_0 + value);
  return end;
}

/** Writes 0 <= value < 10^8 as exactly eight digits (zero-padded) at `at`. */
function writeEight(dv: DataView, at: number, value: number): void {
  const high = (value / 10_000) | 0;
  const low = value - high * 10_000;
  const highPairs = (high / 100) | 0;
  const lowPairs = (low / 100) | 0;
  dv.setUint32(at, DIGIT_PAIRS[highPairs] | (DIGIT_PAIRS[high - highPairs * 100] << 16), true);
  dv.setUint32(at + 4, DIGIT_PAIRS[lowPairs] | (DIGIT_PAIRS[low - lowPairs * 100] << 16), true);
}
