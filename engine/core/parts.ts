// The three ways every structure of the engine core describes itself (each beside its rules):
//   exportTo / importFrom  its part of the snapshot (SnapshotWriter, SnapshotReader);
//   hashInto               its contribution to the state hash (StateDigest);
//   validate               its invariants (assert).
// snapshot.ts, stateHash.ts and invariants.ts are lists of these parts.
//
// Both encodings are deterministic and integer-only: every value is a safe integer written as two
// little-endian 32-bit words (the snapshot's high word signed, so the few counters that start at -1
// fit; the hash's unsigned), keys as raw bytes.

import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { assert, isUnsignedSafe } from './assert.js';

const TWO_POW_32 = 0x100000000;
const CHUNK_BYTES = 1 << 16;

/** A running SHA-256: what StateDigest feeds its chunks to. */
export interface Sha256 {
  update(bytes: Uint8Array): unknown;
  digest(): Uint8Array;
}

let createSha256: () => Sha256 = () => sha256.create();

/**
 * Where the state hash's SHA-256 comes from: @noble/hashes' (the core imports nothing else), or
 * the shell's native one (node:crypto, engine/shell/journal.ts), the same function an order of
 * magnitude faster on large states. Every hash is the same either way.
 */
export function useSha256(create: () => Sha256): void {
  createSha256 = create;
}

/** A snapshot whose bytes do not describe a state of this configuration. */
export class SnapshotFormatError extends Error {
  override name = 'SnapshotFormatError';
}

/** Throws SnapshotFormatError unless `condition` holds: an import's check of the bytes it reads. */
export function expectSnapshot(condition: boolean, what: string): asserts condition {
  if (!condition) throw new SnapshotFormatError(`snapshot: ${what}`);
}

export class SnapshotWriter {
  private bytes: Uint8Array;
  private view: DataView;
  length = 0;

  /** `capacity`: the bytes expected (the previous snapshot's size), so that a large state is written without growing the buffer. */
  constructor(capacity = 1 << 16) {
    this.bytes = new Uint8Array(Math.max(capacity, 64));
    this.view = new DataView(this.bytes.buffer);
  }

  private reserve(extra: number): void {
    if (this.length + extra <= this.bytes.length) return;
    let size = this.bytes.length * 2;
    while (size < this.length + extra) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
    this.view = new DataView(grown.buffer);
  }

  word(value: number): void {
    this.reserve(4);
    this.view.setUint32(this.length, value >>> 0, true);
    this.length += 4;
  }

  /** A safe integer (≥ -2^53): low word, then the high word as a signed 32-bit value. */
  number(value: number): void {
    assert(Number.isSafeInteger(value), 'snapshot of a value that is not a safe integer');
    // Dividing by 2^32 only moves the exponent, so high and low are exact without a float modulo.
    const high = Math.floor(value / TWO_POW_32);
    const low = value - high * TWO_POW_32;
    this.reserve(8);
    this.view.setUint32(this.length, low, true);
    this.view.setInt32(this.length + 4, high, true);
    this.length += 8;
  }

  raw(bytes: Uint8Array): void {
    this.reserve(bytes.length);
    this.bytes.set(bytes, this.length);
    this.length += bytes.length;
  }

  /** The bytes written: a view of the buffer when it is mostly used (no copy of a large state), else a copy. */
  finish(): Uint8Array {
    return this.length >= this.bytes.length - (this.bytes.length >> 3) ? this.bytes.subarray(0, this.length) : this.bytes.slice(0, this.length);
  }
}

export class SnapshotReader {
  private readonly view: DataView;
  private position = 0;

  constructor(private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  private need(count: number): void {
    if (this.position + count > this.bytes.length) throw new SnapshotFormatError('snapshot ends early');
  }

  word(): number {
    this.need(4);
    const value = this.view.getUint32(this.position, true);
    this.position += 4;
    return value;
  }

  number(): number {
    this.need(8);
    const low = this.view.getUint32(this.position, true);
    const high = this.view.getInt32(this.position + 4, true);
    this.position += 8;
    const value = high * TWO_POW_32 + low;
    if (!Number.isSafeInteger(value)) throw new SnapshotFormatError('snapshot holds a value outside the safe-integer range');
    return value;
  }

  raw(count: number): Uint8Array {
    this.need(count);
    const out = this.bytes.subarray(this.position, this.position + count);
    this.position += count;
    return out;
  }

  atEnd(): boolean {
    return this.position === this.bytes.length;
  }
}


/** SHA-256 over the state's canonical walk, fed in chunks. */
export class StateDigest {
  private readonly hash = createSha256();
  private readonly chunk = new Uint8Array(CHUNK_BYTES);
  private readonly view = new DataView(this.chunk.buffer);
  private used = 0;

  word(value: number): void {
    if (this.used + 4 > CHUNK_BYTES) this.flush();
    this.view.setUint32(this.used, value >>> 0, true);
    this.used += 4;
  }

  /** A safe non-negative integer: its low word, then its high word (one check of the chunk's room for both). */
  number(value: number): void {
    assert(isUnsignedSafe(value), 'state hash of a value that is not a safe non-negative integer');
    const high = Math.floor(value / TWO_POW_32); // exact, as in SnapshotWriter.number
    if (this.used + 8 > CHUNK_BYTES) this.flush();
    this.view.setUint32(this.used, value - high * TWO_POW_32, true);
    this.view.setUint32(this.used + 4, high, true);
    this.used += 8;
  }

  bytes(bytes: Uint8Array): void {
    if (this.used + bytes.length > CHUNK_BYTES) this.flush();
    if (bytes.length > CHUNK_BYTES) {
      this.hash.update(bytes);
      return;
    }
    this.chunk.set(bytes, this.used);
    this.used += bytes.length;
  }

  hex(): string {
    this.flush();
    return bytesToHex(this.hash.digest());
  }

  private flush(): void {
    if (this.used > 0) this.hash.update(this.chunk.subarray(0, this.used));
    this.used = 0;
  }
}
