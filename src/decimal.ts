// Exact conversion between decimal strings on the wire and integer unit counts inside the server.
//
// Prices and quantities arrive as JSON strings ("4000", "0.001") and leave as strings; in between
// they are integers counting 10^-scale units. These functions are the only place where the two
// meet, so they never touch floating point: no parseFloat, no Number() on text, no toFixed, no
// float multiplied by a scale. Parsing walks the characters once and accumulates digits into an
// integer, checking against Number.MAX_SAFE_INTEGER before each step, so every result is exact.
//
// Invariants:
// - parseDecimal accepts exactly the grammar  digits [ "." digits ]  — no sign, no exponent, no
//   whitespace, and digits are required on both sides of a point (the JSON number grammar; ".5"
//   and "5." are rejected because no client sends them and accepting them would only hide bugs).
// - A value is rejected, never rounded, when it has significant digits beyond `scale`; zeros
//   beyond `scale` are accepted ("1.500" at scale 2 is 150).
// - Every accepted result is a safe integer; anything larger is rejected as too large.
// - The fast path (parseDecimal) allocates nothing: errors are small negative codes internally,
//   and decimalError re-runs the same scan only when a message is needed.
// - formatDecimal(parseDecimal(t, s), s) is the canonical (trailing-zero-trimmed) form of t.

export type DecimalError = 'syntax' | 'too_many_decimals' | 'too_large';

const MAX_SAFE_DIV_10 = 900719925474099; // Math.floor(Number.MAX_SAFE_INTEGER / 10)
const MAX_SAFE_LAST_DIGIT = 1; // Number.MAX_SAFE_INTEGER % 10

const CODE_SYNTAX = -1;
const CODE_TOO_MANY_DECIMALS = -2;
const CODE_TOO_LARGE = -3;

const CHAR_0 = 48;
const CHAR_9 = 57;
const CHAR_DOT = 46;

function assertScale(scale: number): void {
  if (!Number.isInteger(scale) || scale < 0 || scale > 100) {
    throw new RangeError(`decimal scale must be an integer in [0, 100], got ${scale}`);
  }
}

/** Appends one digit to a safe integer, or returns CODE_TOO_LARGE when the result would not be safe. */
function pushDigit(value: number, digit: number): number {
  if (value > MAX_SAFE_DIV_10 || (value === MAX_SAFE_DIV_10 && digit > MAX_SAFE_LAST_DIGIT)) {
    return CODE_TOO_LARGE;
  }
  return value * 10 + digit;
}

/**
 * The single scan behind parseDecimal and decimalError. Returns the unit count, or a negative
 * code. Precedence when several things are wrong: syntax, then too many decimals, then too large,
 * so the message names the most basic problem.
 */
function scanDecimal(text: string, scale: number): number {
  const length = text.length;
  let index = 0;
  let value = 0;
  let tooLarge = false;
  let digitsInteger = 0;
  while (index < length) {
    const c = text.charCodeAt(index);
    if (c < CHAR_0 || c > CHAR_9) break;
    if (!tooLarge) {
      value = pushDigit(value, c - CHAR_0);
      tooLarge = value < 0;
    }
    digitsInteger++;
    index++;
  }
  if (digitsInteger === 0) return CODE_SYNTAX;
  let digitsFraction = 0;
  let tooManyDecimals = false;
  if (index < length) {
    if (text.charCodeAt(index) !== CHAR_DOT) return CODE_SYNTAX;
    index++;
    while (index < length) {
      const c = text.charCodeAt(index);
      if (c < CHAR_0 || c > CHAR_9) return CODE_SYNTAX;
      if (digitsFraction < scale) {
        if (!tooLarge) {
          value = pushDigit(value, c - CHAR_0);
          tooLarge = value < 0;
        }
      } else if (c !== CHAR_0) {
        tooManyDecimals = true;
      }
      digitsFraction++;
      index++;
    }
    if (digitsFraction === 0) return CODE_SYNTAX;
  }
  if (tooManyDecimals) return CODE_TOO_MANY_DECIMALS;
  for (let pad = digitsFraction; pad < scale && !tooLarge; pad++) {
    value = pushDigit(value, 0);
    tooLarge = value < 0;
  }
  return tooLarge ? CODE_TOO_LARGE : value;
}

/**
 * Parses a non-negative decimal string into an integer count of 10^-scale units: "0.001" at
 * scale 3 is 1. Returns -1 when the text is not a plain decimal, has significant digits beyond
 * `scale`, or the count exceeds Number.MAX_SAFE_INTEGER; decimalError says which.
 */
export function parseDecimal(text: string, scale: number): number {
  assertScale(scale);
  const result = scanDecimal(text, scale);
  return result < 0 ? -1 : result;
}

/** Why parseDecimal(text, scale) fails, or null when it succeeds. For error messages only. */
export function decimalError(text: string, scale: number): DecimalError | null {
  assertScale(scale);
  switch (scanDecimal(text, scale)) {
    case CODE_SYNTAX:
      return 'syntax';
    case CODE_TOO_MANY_DECIMALS:
      return 'too_many_decimals';
    case CODE_TOO_LARGE:
      return 'too_large';
    default:
      return null;
  }
}

function assertUnits(units: number): void {
  if (!Number.isSafeInteger(units)) {
    throw new RangeError(`decimal units must be a safe integer, got ${units}`);
  }
}

/** Splits |units| into integer and fraction digit strings; the fraction has exactly `scale` digits. */
function splitDigits(unitsAbs: number, scale: number): [string, string] {
  // String() of a safe non-negative integer is plain digits (no exponent below 1e21).
  const digits = String(unitsAbs);
  if (scale === 0) return [digits, ''];
  const padded = digits.length > scale ? digits : '0'.repeat(scale - digits.length + 1) + digits;
  const split = padded.length - scale;
  return [padded.slice(0, split), padded.slice(split)];
}

/** Formats a count of 10^-scale units with trailing zeros trimmed: "4000", "0.001", "-1.5", "0". */
export function formatDecimal(units: number, scale: number): string {
  assertUnits(units);
  assertScale(scale);
  const [integerDigits, fractionDigits] = splitDigits(Math.abs(units), scale);
  let end = fractionDigits.length;
  while (end > 0 && fractionDigits.charCodeAt(end - 1) === CHAR_0) end--;
  const sign = units < 0 ? '-' : '';
  return end === 0 ? sign + integerDigits : sign + integerDigits + '.' + fractionDigits.slice(0, end);
}

/** Formats a count of 10^-scale units with exactly `scale` decimals: "1.00000", "-0.0020". */
export function formatDecimalFixed(units: number, scale: number): string {
  assertUnits(units);
  assertScale(scale);
  const [integerDigits, fractionDigits] = splitDigits(Math.abs(units), scale);
  const sign = units < 0 ? '-' : '';
  return scale === 0 ? sign + integerDigits : sign + integerDigits + '.' + fractionDigits;
}

/**
 * Number of decimals written in a decimal string such as a tick size: "0.01" → 2, "1" → 0,
 * "0.00001" → 5. Counts the digits as written ("0.10" → 2), so a market configured with a padded
 * tick keeps its intended precision. Returns -1 when the text is not a plain decimal.
 */
export function decimalsOf(text: string): number {
  const length = text.length;
  let index = 0;
  while (index < length) {
    const c = text.charCodeAt(index);
    if (c < CHAR_0 || c > CHAR_9) break;
    index++;
  }
  if (index === 0) return -1;
  if (index === length) return 0;
  if (text.charCodeAt(index) !== CHAR_DOT) return -1;
  const pointIndex = index;
  index++;
  while (index < length) {
    const c = text.charCodeAt(index);
    if (c < CHAR_0 || c > CHAR_9) return -1;
    index++;
  }
  const decimals = length - pointIndex - 1;
  return decimals === 0 ? -1 : decimals;
}

/**
 * parseDecimal without the safe-integer limit, for totals and conversions that can exceed 2^53.
 * Same grammar and rules; returns null instead of -1.
 */
export function parseDecimalBig(text: string, scale: number): bigint | null {
  assertScale(scale);
  // Reuse the scan for syntax and decimals; its safe-integer limit (too_large) does not apply here.
  const code = scanDecimal(text, scale);
  if (code === CODE_SYNTAX || code === CODE_TOO_MANY_DECIMALS) return null;
  const pointIndex = text.indexOf('.');
  const integerDigits = pointIndex < 0 ? text : text.slice(0, pointIndex);
  const fractionAll = pointIndex < 0 ? '' : text.slice(pointIndex + 1);
  const fractionDigits =
    fractionAll.length >= scale ? fractionAll.slice(0, scale) : fractionAll + '0'.repeat(scale - fractionAll.length);
  return BigInt(integerDigits + fractionDigits);
}

/** formatDecimal for bigint unit counts (no size limit). */
export function formatDecimalBig(units: bigint, scale: number): string {
  assertScale(scale);
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString();
  const sign = negative ? '-' : '';
  if (scale === 0) return sign + digits;
  const padded = digits.length > scale ? digits : '0'.repeat(scale - digits.length + 1) + digits;
  const split = padded.length - scale;
  let end = padded.length;
  while (end > split && padded.charCodeAt(end - 1) === CHAR_0) end--;
  return end === split ? sign + padded.slice(0, split) : sign + padded.slice(0, split) + '.' + padded.slice(split, end);
}
