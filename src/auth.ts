// Request authentication per the Backpack wire reference (§2): the canonical signing string, the
// validity window of X-Timestamp/X-Window, and ed25519 verification with cached public keys.
//
// Signing string: `instruction=<i>[&k=v...]&timestamp=<t>&window=<w>`, parameters sorted by key
// in byte (code point) order. Clients disagree only on how values are rendered: ccxt signs
// RFC 3986 percent-encoded values, the Rust client, bpx-py and the Go SDK sign raw values. For
// values made of [A-Za-z0-9._~-] (symbols, decimals, ids, enums) both forms are identical, so the
// server verifies the raw form first and tries the encoded form only when needsEncodedVariant()
// says it would differ. Values render as: strings as-is, booleans `true`/`false`, numbers
// String(n), null as an empty value (the ccxt form). Body numbers come from JSON.parse, so a
// client that signs its own JSON number text ("1.0", "1e3") instead of String(n) will not verify;
// no known client does that for the integer fields (clientId) that arrive as numbers.
//
// Verification uses libsodium (sodium-native) by default: measured 1.9x faster than node:crypto
// with a cached KeyObject on this hardware (see bench/verify.bench.ts), and stricter — it rejects
// small-order and non-canonical public keys. OpenSSL (node:crypto) accepts the identity point as a
// public key, for which `R = identity, S = 0` verifies for every message; the node:crypto backend,
// kept as a fallback for platforms without the prebuilt binary, therefore screens keys the same
// way (isStrongPublicKey) before caching them.
//
// Invariants:
// - Everything here is pure except SignatureVerifier, whose only state is its key cache and two
//   scratch buffers. verify() never throws: malformed input is simply "not verified".
// - Base64 is accepted only in its canonical, padded, standard-alphabet form (what every client
//   produces), decoded into exact byte lengths: 32 for a key, 64 for a signature.
// - The key cache is bounded; eviction is first-in-first-out so a cache hit does no Map writes.

import { createPublicKey, verify as cryptoVerify, type KeyObject } from 'node:crypto';
import { createRequire } from 'node:module';
import { Point } from '@noble/ed25519';

export type ParamValue = string | number | boolean | null;

// ---------------------------------------------------------------------------------------------
// Signing string

/** Window (ms) appended to the signing string when the X-Window header is absent [doc]. */
export const DEFAULT_WINDOW_MS = 5000;
export const DEFAULT_WINDOW_TEXT = '5000';
/** Largest X-Window the API accepts [doc]. */
export const MAX_WINDOW_MS = 60000;

/** RFC 3986 unreserved characters: the only ones ccxt leaves unescaped. */
const UNRESERVED = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  UNRESERVED[c] = /[A-Za-z0-9\-._~]/.test(ch) ? 1 : 0;
}

function isAllUnreserved(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 128 || UNRESERVED[c] === 0) return false;
  }
  return true;
}

const HEX_UPPER = '0123456789ABCDEF';

/**
 * encodeURIComponent plus `!'()*` escaped, i.e. every byte outside the unreserved set as %XX.
 * Unlike encodeURIComponent it never throws: a lone surrogate encodes as U+FFFD, as Buffer does.
 */
export function percentEncode(text: string): string {
  if (isAllUnreserved(text)) return text;
  const bytes = Buffer.from(text, 'utf8');
  let out = '';
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (b < 128 && UNRESERVED[b] === 1) out += String.fromCharCode(b);
    else out += '%' + HEX_UPPER[b >> 4] + HEX_UPPER[b & 15];
  }
  return out;
}

function renderValue(value: ParamValue): string {
  if (value === null) return '';
  if (typeof value === 'string') return value;
  return String(value);
}

/** Maps a UTF-16 code unit so that code-unit order equals code-point (and UTF-8 byte) order. */
function codePointRank(unit: number): number {
  if (unit >= 0xe000) return unit - 0x800;
  if (unit >= 0xd800) return unit + 0x2000;
  return unit;
}

/** Byte-order comparison of two keys, as Rust's BTreeMap<String, _> sorts them. */
export function compareKeys(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (ca !== cb) return codePointRank(ca) - codePointRank(cb);
  }
  return a.length - b.length;
}

function compareEntries(a: [string, ParamValue], b: [string, ParamValue]): number {
  return compareKeys(a[0], b[0]);
}

/** The params in key order; returns the input itself when already sorted (ccxt sends them so). */
function sortedByKey(params: Array<[string, ParamValue]>): Array<[string, ParamValue]> {
  for (let i = 1; i < params.length; i++) {
    if (compareKeys(params[i - 1][0], params[i][0]) > 0) return params.slice().sort(compareEntries);
  }
  return params;
}

/** `&k1=v1&k2=v2...` for the sorted params (empty for none). */
function renderParams(params: Array<[string, ParamValue]>, encode: boolean): string {
  const sorted = sortedByKey(params);
  let out = '';
  for (let i = 0; i < sorted.length; i++) {
    const key = sorted[i][0];
    const value = renderValue(sorted[i][1]);
    out += encode ? '&' + percentEncode(key) + '=' + percentEncode(value) : '&' + key + '=' + value;
  }
  return out;
}

/**
 * `instruction=<i>&k1=v1&...&timestamp=<t>&window=<w>` with params sorted by key. encode=false
 * renders raw values; encode=true renders RFC 3986 percent-encoded keys and values (ccxt's form).
 * `timestamp` and `window` are the header texts as sent (window defaults to "5000").
 */
export function signingString(
  instruction: string,
  params: Array<[string, ParamValue]>,
  timestamp: string,
  window: string,
  encode: boolean,
): string {
  return 'instruction=' + instruction + renderParams(params, encode) + '&timestamp=' + timestamp + '&window=' + window;
}

/**
 * The batch form (§2.3): for each item in array order `instruction=<i>&<sorted k=v>`, joined
 * with '&', then `&timestamp=T&window=W` once. With no items it is `timestamp=T&window=W`.
 */
export function batchSigningString(
  instruction: string,
  items: Array<Array<[string, ParamValue]>>,
  timestamp: string,
  window: string,
  encode: boolean,
): string {
  let out = '';
  for (let i = 0; i < items.length; i++) {
    out += (i === 0 ? 'instruction=' : '&instruction=') + instruction + renderParams(items[i], encode);
  }
  return (out === '' ? '' : out + '&') + 'timestamp=' + timestamp + '&window=' + window;
}

/**
 * Signing params from a parsed JSON object body: its top-level keys in their order, strings,
 * numbers, booleans and null as they are; nested objects and arrays as their JSON text.
 */
export function paramsFromBody(body: Record<string, unknown>): Array<[string, ParamValue]> {
  const params: Array<[string, ParamValue]> = [];
  for (const key of Object.keys(body)) {
    const value = body[key];
    if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      params.push([key, value]);
    } else if (typeof value === 'bigint') {
      params.push([key, value.toString()]);
    } else if (typeof value === 'object') {
      params.push([key, JSON.stringify(value)]);
    }
    // undefined, functions and symbols cannot come from JSON.parse and have no rendering.
  }
  return params;
}

/**
 * Signing params from a raw query string ("a=1&b=x%20y", a leading '?' allowed), values
 * percent-decoded as URLSearchParams does ('+' is a space, as form-encoding clients send it).
 */
export function paramsFromQuery(query: string): Array<[string, ParamValue]> {
  const params: Array<[string, ParamValue]> = [];
  if (query === '' || query === '?') return params;
  for (const [key, value] of new URLSearchParams(query)) params.push([key, value]);
  return params;
}

/** True when encode=true renders some key or value differently from encode=false. */
export function needsEncodedVariant(params: Array<[string, ParamValue]>): boolean {
  for (let i = 0; i < params.length; i++) {
    if (!isAllUnreserved(params[i][0]) || !isAllUnreserved(renderValue(params[i][1]))) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Validity window

/**
 * How far X-Timestamp may be ahead of the server clock. The wire reference leaves this open
 * (§7.8). Clients stamp requests with their own clock and none of them syncs to server time
 * (ccxt uses its local clock), so a client a few seconds fast would fail every request under a
 * tight bound. 5000 ms — the default window — tolerates that while keeping the interval in which
 * one signed request can be replayed at most window + 5 s (65 s at the maximum window).
 */
export const FUTURE_TOLERANCE_MS = 5000;

export interface WindowCheck {
  ok: boolean;
  code?: string;
  message?: string;
  status?: number;
}

// Malformed headers and an out-of-range window are client request errors (400
// INVALID_CLIENT_REQUEST → ccxt BadRequest); a well-formed request outside its window is an
// authentication failure (401 UNAUTHORIZED → ccxt AuthenticationError), matching the observed
// 401 "Request has expired". A missing X-Timestamp is 401 UNAUTHORIZED like the other missing
// authentication headers in src/errors.ts. The enum has no REQUEST_EXPIRED code.
const WINDOW_OK: WindowCheck = Object.freeze({ ok: true });
const MISSING_TIMESTAMP: WindowCheck = windowFailure(401, 'UNAUTHORIZED', 'Missing X-Timestamp header');
const INVALID_TIMESTAMP: WindowCheck = windowFailure(400, 'INVALID_CLIENT_REQUEST', 'Invalid X-Timestamp header');
const INVALID_WINDOW: WindowCheck = windowFailure(400, 'INVALID_CLIENT_REQUEST', 'Invalid X-Window header');
const WINDOW_NOT_POSITIVE: WindowCheck = windowFailure(400, 'INVALID_CLIENT_REQUEST', 'Window must be positive');
const WINDOW_TOO_LARGE: WindowCheck = windowFailure(400, 'INVALID_CLIENT_REQUEST', `Window must be at most ${MAX_WINDOW_MS}`);
const EXPIRED: WindowCheck = windowFailure(401, 'UNAUTHORIZED', 'Request has expired');
const IN_FUTURE: WindowCheck = windowFailure(401, 'UNAUTHORIZED', 'Request timestamp is in the future');

function windowFailure(status: number, code: string, message: string): WindowCheck {
  return Object.freeze({ ok: false, status, code, message });
}

/** Plain decimal digits (at most 15, so always a safe integer) to a number, else -1. */
function parseHeaderInteger(text: string): number {
  const length = text.length;
  if (length === 0 || length > 15) return -1;
  let value = 0;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return -1;
    value = value * 10 + (c - 48);
  }
  return value;
}

/**
 * Checks X-Timestamp/X-Window (raw header texts; an absent window means 5000) against the server
 * clock. Valid when ts - FUTURE_TOLERANCE_MS <= now <= ts + window, both bounds inclusive.
 * Returns shared frozen results, so the check allocates nothing.
 */
export function checkWindow(timestampText: string | undefined, windowText: string | undefined, nowMs: number): WindowCheck {
  if (timestampText === undefined) return MISSING_TIMESTAMP;
  const timestampMs = parseHeaderInteger(timestampText);
  if (timestampMs < 0) return INVALID_TIMESTAMP;
  let windowMs = DEFAULT_WINDOW_MS;
  if (windowText !== undefined) {
    windowMs = parseHeaderInteger(windowText);
    if (windowMs < 0) return INVALID_WINDOW;
    if (windowMs === 0) return WINDOW_NOT_POSITIVE;
    if (windowMs > MAX_WINDOW_MS) return WINDOW_TOO_LARGE;
  }
  if (nowMs > timestampMs + windowMs) return EXPIRED;
  if (timestampMs > nowMs + FUTURE_TOLERANCE_MS) return IN_FUTURE;
  return WINDOW_OK;
}

// ---------------------------------------------------------------------------------------------
// Base64 and keys

const PUBLIC_KEY_BYTES = 32;
const SIGNATURE_BYTES = 64;

/** Standard base64 alphabet value per ASCII code, -1 elsewhere. */
const BASE64_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < 64; i++) {
  BASE64_VALUE['ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.charCodeAt(i)] = i;
}

/**
 * True when `text` is the canonical padded standard base64 of exactly `byteLength` bytes: right
 * length, alphabet, padding, and zero unused bits in the last character. Buffer's own decoder is
 * lenient (skips junk, accepts url-safe and unpadded text), so it only runs after this check.
 */
export function isCanonicalBase64(text: string, byteLength: number): boolean {
  const padCount = (3 - (byteLength % 3)) % 3;
  if (text.length !== Math.ceil(byteLength / 3) * 4) return false;
  const dataLength = text.length - padCount;
  for (let i = 0; i < dataLength; i++) {
    const c = text.charCodeAt(i);
    if (c >= 128 || BASE64_VALUE[c] < 0) return false;
  }
  for (let i = dataLength; i < text.length; i++) {
    if (text.charCodeAt(i) !== 61 /* '=' */) return false;
  }
  const unusedBits = dataLength * 6 - byteLength * 8;
  return dataLength === 0 || (BASE64_VALUE[text.charCodeAt(dataLength - 1)] & ((1 << unusedBits) - 1)) === 0;
}

/** Decodes base64 that passed isCanonicalBase64 into `out`, which has exactly its byte length. */
function decodeCanonicalBase64(text: string, out: Uint8Array): void {
  let at = 0;
  for (let i = 0; i < text.length; i += 4) {
    const c2 = text.charCodeAt(i + 2);
    const c3 = text.charCodeAt(i + 3);
    const bits = (BASE64_VALUE[text.charCodeAt(i)] << 18) | (BASE64_VALUE[text.charCodeAt(i + 1)] << 12)
      | (c2 === 61 ? 0 : BASE64_VALUE[c2] << 6) | (c3 === 61 ? 0 : BASE64_VALUE[c3]);
    out[at++] = bits >>> 16;
    if (at < out.length) out[at++] = (bits >>> 8) & 0xff;
    if (at < out.length) out[at++] = bits & 0xff;
  }
}

/** The first 9 bytes of a signature, decoded by signaturePrefix (reused on every call). */
const SIGNATURE_PREFIX = new Uint8Array(9);

/**
 * The first 9 bytes (from the first 12 characters) of a base64 signature that passed
 * isCanonicalBase64, into a scratch array valid until the next call: what the replay guard keys
 * on, without decoding the whole signature into a new Buffer.
 */
export function signaturePrefix(signatureB64: string): Uint8Array {
  for (let group = 0; group < 3; group++) {
    const at = group * 4;
    const bits = (BASE64_VALUE[signatureB64.charCodeAt(at)] << 18) | (BASE64_VALUE[signatureB64.charCodeAt(at + 1)] << 12)
      | (BASE64_VALUE[signatureB64.charCodeAt(at + 2)] << 6) | BASE64_VALUE[signatureB64.charCodeAt(at + 3)];
    SIGNATURE_PREFIX[group * 3] = bits >>> 16;
    SIGNATURE_PREFIX[group * 3 + 1] = (bits >>> 8) & 0xff;
    SIGNATURE_PREFIX[group * 3 + 2] = bits & 0xff;
  }
  return SIGNATURE_PREFIX;
}

/**
 * True when a 32-byte ed25519 public key is one libsodium's verify accepts: a canonical encoding
 * of a curve point that is not of small order. Registration should refuse other keys; a
 * small-order key lets anyone forge signatures under verifiers that do not check it.
 */
export function isStrongPublicKey(key: Uint8Array): boolean {
  if (key.length !== PUBLIC_KEY_BYTES) return false;
  try {
    return !Point.fromBytes(key, false).isSmallOrder();
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Verification

/** The part of sodium-native used here (the package ships no type declarations). */
interface SodiumVerify {
  crypto_sign_verify_detached(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean;
}

function loadSodium(): SodiumVerify | null {
  try {
    return createRequire(import.meta.url)('sodium-native') as SodiumVerify;
  } catch {
    return null;
  }
}

const sodium = loadSodium();

export type VerifierBackend = 'sodium' | 'node';

export interface SignatureVerifierOptions {
  /** Bound on cached decoded keys; default 10000. */
  maxCachedKeys?: number;
  /** 'sodium' (default when sodium-native loads) or 'node' (node:crypto, the fallback). */
  backend?: VerifierBackend;
}

/** A decoded key ready for the backend, or null for a well-formed but weak key (node backend). */
type CachedKey = Buffer | KeyObject | null;

/** Messages longer than this are encoded into a fresh buffer rather than growing the scratch one. */
const MESSAGE_SCRATCH_MAX_BYTES = 64 * 1024;

export class SignatureVerifier {
  readonly backend: VerifierBackend;
  readonly #maxCachedKeys: number;
  readonly #keys = new Map<string, CachedKey>();
  readonly #signature = Buffer.alloc(SIGNATURE_BYTES);
  #messageScratch = Buffer.alloc(1024);

  constructor(opts?: SignatureVerifierOptions) {
    const backend = opts?.backend ?? (sodium !== null ? 'sodium' : 'node');
    if (backend === 'sodium' && sodium === null) throw new Error('sodium-native is not available on this platform');
    const maxCachedKeys = opts?.maxCachedKeys ?? 10000;
    if (!Number.isInteger(maxCachedKeys) || maxCachedKeys < 1) throw new RangeError('maxCachedKeys must be a positive integer');
    this.backend = backend;
    this.#maxCachedKeys = maxCachedKeys;
  }

  get cachedKeyCount(): number {
    return this.#keys.size;
  }

  /**
   * Checks an ed25519 signature (base64, 64 bytes) over the UTF-8 bytes of `message` under the
   * public key named by X-API-Key (base64, 32 bytes). False for anything malformed; never throws.
   */
  verify(apiKeyB64: string, signatureB64: string, message: string): boolean {
    const key = this.#key(apiKeyB64);
    if (key === null || key === undefined) return false;
    if (!isCanonicalBase64(signatureB64, SIGNATURE_BYTES)) return false;
    decodeCanonicalBase64(signatureB64, this.#signature);
    const messageBytes = this.#encodeMessage(message);
    try {
      if (sodium !== null && this.backend === 'sodium') {
        return sodium.crypto_sign_verify_detached(this.#signature, messageBytes, key as Buffer);
      }
      return cryptoVerify(null, messageBytes, key as KeyObject, this.#signature);
    } catch {
      return false;
    }
  }

  /** The cached key for a base64 public key, decoding and caching it on a miss; undefined if malformed. */
  #key(apiKeyB64: string): CachedKey | undefined {
    const cached = this.#keys.get(apiKeyB64);
    if (cached !== undefined) return cached;
    if (!isCanonicalBase64(apiKeyB64, PUBLIC_KEY_BYTES)) return undefined;
    const raw = Buffer.from(apiKeyB64, 'base64');
    const key = this.backend === 'sodium' ? raw : importNodeKey(raw);
    if (this.#keys.size >= this.#maxCachedKeys) {
      const oldest = this.#keys.keys().next().value;
      if (oldest !== undefined) this.#keys.delete(oldest);
    }
    this.#keys.set(apiKeyB64, key);
    return key;
  }

  #encodeMessage(message: string): Buffer {
    // UTF-8 takes at most 3 bytes per UTF-16 code unit.
    const bytesMax = message.length * 3;
    if (bytesMax > this.#messageScratch.length) {
      if (bytesMax > MESSAGE_SCRATCH_MAX_BYTES) return Buffer.from(message, 'utf8');
      this.#messageScratch = Buffer.alloc(Math.min(MESSAGE_SCRATCH_MAX_BYTES, Math.max(bytesMax, this.#messageScratch.length * 2)));
    }
    const scratch = this.#messageScratch;
    // Signing strings are ASCII in practice: copy the code units, cheaper than a call into the
    // UTF-8 encoder; anything else goes through it from the start.
    for (let i = 0; i < message.length; i++) {
      const c = message.charCodeAt(i);
      if (c >= 128) return scratch.subarray(0, scratch.write(message, 0, 'utf8'));
      scratch[i] = c;
    }
    return scratch.subarray(0, message.length);
  }
}

/**
 * A node:crypto KeyObject for a raw key, through JWK (the DER import path costs ~190 µs), or null
 * for a weak key, which OpenSSL would otherwise accept.
 */
function importNodeKey(raw: Buffer): KeyObject | null {
  if (!isStrongPublicKey(raw)) return null;
  try {
    return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
  } catch {
    return null;
  }
}
