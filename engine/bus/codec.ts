// Hot-path reader/writer of the fixed struct layouts of schemas/exchange.fbs.
//
// Purpose: every byte that crosses a thread (the SharedArrayBuffer rings) or reaches the disk (the
// journal) has a FlatBuffers *struct* layout. This module moves the plain objects of
// engine/bus/types.ts to and from those bytes. The per-struct code (sizes, offsets, newXRec,
// writeX, readX, the header accessors) is generated from the schema by schemas/gen.mjs into
// engine/bus/generated/codec.ts and re-exported here; the helpers it calls are in
// ./codec-primitives.ts; what stays here is not per struct (the ring slot size, the journal's
// offsets under their short names, copyBytes and crc32).
//
// Why not the generated accessors (schemas/generated/): they return bigint for every 64-bit field
// (and `createX` takes bigint), so each read or write of a long allocates, and each nested header
// accessor allocates an object. The engine handles millions of records, so the hot path instead
// reads and writes through a DataView at literal byte offsets, with 64-bit integers as two 32-bit
// halves, and allocates nothing. A writer whose stores are all whole aligned 32-bit words (every
// outbound record) stores them through an Int32Array over the view's bytes instead, when the
// platform is little-endian and the view and offset are 4-byte aligned (codec-primitives wordsOf):
// the same bytes, an element store being a few instructions where a DataView store is several
// times that; any other view, offset or platform, and a record past the view's end (which then
// throws), go through the DataView. test/structure/schema.test.ts proves that the codec and the generated code
// read and write the same bytes for every field of every struct, and that every size and offset
// constant equals the generated layout (offsets, sizeOf()).
//
// Invariants:
// - All multi-byte values are little-endian (FlatBuffers' byte order) at the offsets of flatc's
//   struct layout.
// - 64-bit integer fields are JS numbers inside the safe-integer range. A writer throws a
//   RangeError for any other number (fractional, NaN, ±Infinity, |n| > 2^53 - 1); the bytes of the
//   record being written are then unspecified. Readers compute hi * 2^32 + lo (hi signed), which is
//   exact for everything a writer produced.
// - Narrower integer fields (u32/u16/u8, enums, flags) are stored with DataView semantics, i.e.
//   modulo 2^bits; range checks belong at the API boundary, not here.
// - The public key (CommandSlot/AccountRecord key_0..key_3) is 32 raw bytes in order: the four
//   little-endian u64 words of the schema, so key byte i is struct byte (keyOffset + i).
// - Booleans are one byte, 0 or 1 (read: nonzero is true).
// - Writers zero the struct's trailing padding, so equal records are equal bytes (the journal
//   checksums stamped bytes; replay compares them).
// - writeX for an outbound record writes RecordType.X into the header whatever r.type says; readX
//   reads the type byte as stored into r.type. writeHeader writes h.type as given.
// - OrderRec.orderFlags is OrderRecord.flags; OrderRec.flags is its header's flags, as for
//   every record.
// - No function here allocates, except newXRec() and the error path.
// - Writers are shaped for V8: each reads only its own record type (monomorphic property loads),
//   tests all its 64-bit fields up front and then writes them through put64, which is small
//   enough to be inlined everywhere (an out-of-line call would box every double it is passed).

export * from './generated/codec.js';
export { KEY_BYTES } from './generated/records.js';
export { LITTLE_ENDIAN } from './codec-primitives.js';
export { commandFromSlot, slotFromCommand } from './generated/records.js';
import { JOURNAL_RECORD_CHECKSUM_OFFSET, JOURNAL_RECORD_OUTPUT_DIGEST_OFFSET } from './generated/codec.js';

/** Ring slot size: every record (the largest is a StampedRecord, 184 bytes) fits one slot. */
export const SLOT_BYTES = 256;
/** Offset of JournalRecord.output_digest (u32, little-endian), right after the StampedRecord. */
export const JOURNAL_DIGEST_OFFSET = JOURNAL_RECORD_OUTPUT_DIGEST_OFFSET;
/** Offset of JournalRecord.checksum (u32, little-endian). */
export const JOURNAL_CHECKSUM_OFFSET = JOURNAL_RECORD_CHECKSUM_OFFSET;

// ---------------------------------------------------------------------------------------------
// Raw bytes

/**
 * Copies one raw CommandSlot (COMMAND_BYTES) from src to dst — used by the engine to stamp an
 * inbound slot into an outbound Stamped record without decoding. Copies `length` bytes in general;
 * overlapping ranges of one buffer are handled like memmove. Throws a RangeError when either range
 * is out of bounds (a typed array would otherwise drop the bytes silently).
 *
 * The copy is TypedArray set from a subarray: one memmove in the runtime, where a loop over the
 * bytes cost about 36 instructions a byte (some 5,800 for a command slot) and reading each view's
 * `buffer` to test for overlap was a runtime call per copy. `set` copies as if through a temporary
 * when both views share a buffer (ECMA-262 %TypedArray%.prototype.set), so overlap needs no test.
 */
export function copyBytes(src: Uint8Array, srcOff: number, dst: Uint8Array, dstOff: number, length: number): void {
  if (
    !(length >= 0 && srcOff >= 0 && dstOff >= 0 && srcOff + length <= src.length && dstOff + length <= dst.length)
  ) {
    throw new RangeError(`codec: copyBytes out of bounds (src ${srcOff}+${length}/${src.length}, dst ${dstOff}+${length}/${dst.length})`);
  }
  dst.set(src.subarray(srcOff, srcOff + length), dstOff);
}

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/**
 * crc32 (IEEE 802.3 / zlib, reflected polynomial 0xEDB88320, table-driven) over
 * bytes[off, off + len), continuing from `prev` (0 to start): crc32(b, 0, n, crc32(a, 0, m, 0))
 * equals the crc32 of a ++ b. Returns an unsigned 32-bit integer. For the journal's chained checksum.
 */
export function crc32(bytes: Uint8Array, off: number, len: number, prev: number): number {
  if (!(len >= 0 && off >= 0 && off + len <= bytes.length)) {
    throw new RangeError(`codec: crc32 range ${off}+${len} out of bounds (${bytes.length})`);
  }
  let c = ~prev;
  const end = off + len;
  for (let i = off; i < end; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}

/**
 * Slice-by-8 tables: CRC_SLICES[k * 256 + b] is the crc of byte b followed by k zero bytes, so
 * eight bytes fold in with eight lookups instead of eight dependent steps (and four bytes with the
 * tables k = 0..3). Exported for the journal writer, which folds a record's words in as it copies
 * them (engine/shell/journal-writer.ts).
 */
export const CRC_SLICES = (() => {
  const t = new Int32Array(8 * 256);
  for (let n = 0; n < 256; n++) t[n] = CRC_TABLE[n];
  for (let k = 1; k < 8; k++) {
    for (let n = 0; n < 256; n++) {
      const p = t[(k - 1) * 256 + n];
      t[k * 256 + n] = CRC_TABLE[p & 0xff] ^ (p >>> 8);
    }
  }
  return t;
})();

/**
 * The same crc32 as crc32() over view[off, off + len), read eight bytes at a time as two
 * little-endian words (slice-by-8). For the journal's per-record checksum: it needs no sub-view of
 * the record and no call into native code, which for a record's 188 bytes cost more than the crc.
 */
export function crc32View(view: DataView, off: number, len: number, prev: number): number {
  if (!(len >= 0 && off >= 0 && off + len <= view.byteLength)) {
    throw new RangeError(`codec: crc32 range ${off}+${len} out of bounds (${view.byteLength})`);
  }
  const t = CRC_SLICES;
  let c = ~prev;
  let i = off;
  const end = off + len;
  for (const end8 = off + (len & ~7); i < end8; i += 8) {
    const a = c ^ view.getInt32(i, true);
    const b = view.getInt32(i + 4, true);
    c = t[1792 + (a & 0xff)] ^ t[1536 + ((a >>> 8) & 0xff)] ^ t[1280 + ((a >>> 16) & 0xff)] ^ t[1024 + (a >>> 24)] ^
      t[768 + (b & 0xff)] ^ t[512 + ((b >>> 8) & 0xff)] ^ t[256 + ((b >>> 16) & 0xff)] ^ t[b >>> 24];
  }
  for (; i < end; i++) c = t[(c ^ view.getUint8(i)) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}
