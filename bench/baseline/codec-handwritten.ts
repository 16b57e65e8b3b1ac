// The hand-written codec as it was before the codec was generated from the schema
// (engine/bus/generated/codec.ts, by schemas/gen.mjs). Kept only as the baseline of
// bench/codec.bench.ts, which runs both in one process and reports the generated codec's speed
// as a ratio of this one's, so a change to the generator that slows the hot path shows. Not
// used by the product; do not extend it.

// Hot-path reader/writer of the fixed struct layouts of schemas/exchange.fbs.
//
// Purpose: every byte that crosses a thread (the SharedArrayBuffer rings) or reaches the disk (the
// journal) has a FlatBuffers *struct* layout. This module moves the plain objects of
// engine/bus/types.ts to and from those bytes.
//
// Why not the generated accessors (schemas/generated/): they return bigint for every 64-bit field
// (and `createX` takes bigint), so each read or write of a long allocates, and each nested header
// accessor allocates an object. The engine handles millions of records, so the hot path instead
// reads and writes through a DataView at constant byte offsets, with 64-bit integers as two 32-bit
// halves, and allocates nothing. test/structure/schema.test.ts proves that the codec and the generated code
// read and write the same bytes for every field of every struct, and that every constant below
// equals the generated layout (offsets, sizeOf()).
//
// Invariants:
// - All multi-byte values are little-endian (FlatBuffers' byte order) at the offsets below.
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

// It predates the command payloads: it writes and reads the slot by position (CommandSlot), as
// every command's bytes were laid out then and still are.
import { RecordType, newCommandSlot as newCommand } from '../../engine/bus/types.js';
import type {
  CommandSlot as Command,
  RecordHeaderFields,
  StampedRec as PayloadStampedRec,
  ResultRec,
  OrderRec,
  TradeRec,
  BalanceRec,
  DepthRec,
  AccountRec,
  MarketRec,
  // Order book states and fee rates
  MarketStateRec,
  FeeRatesRec,
} from '../../engine/bus/types.js';

/** A Stamped record whose command is the raw slot. */
type StampedRec = Omit<PayloadStampedRec, 'command'> & { command: Command };

// ---------------------------------------------------------------------------------------------
// Sizes and public offsets

/** Ring slot size: every record (the largest is a StampedRecord, 184 bytes) fits one slot. */
export const SLOT_BYTES = 256;
/** CommandSlot.sizeOf() */
export const COMMAND_BYTES = 160;
/** RecordHeader.sizeOf() */
export const HEADER_BYTES = 24;
/** Offset of the CommandSlot inside a StampedRecord (right after the header). */
export const STAMPED_COMMAND_OFFSET = 24;
/** StampedRecord.sizeOf() */
export const STAMPED_BYTES = 184;
/** ResultRecord.sizeOf() */
export const RESULT_BYTES = 40;
/** OrderRecord.sizeOf() */
export const ORDER_BYTES = 136;
/** TradeRecord.sizeOf() */
export const TRADE_BYTES = 72;
/** BalanceRecord.sizeOf() */
export const BALANCE_BYTES = 48;
/** DepthRecord.sizeOf() */
export const DEPTH_BYTES = 56;
/** AccountRecord.sizeOf() */
export const ACCOUNT_BYTES = 64;
/** MarketRecord.sizeOf() */
export const MARKET_BYTES = 48;
// Order book states and fee rates
/** MarketStateRecord.sizeOf() */
export const MARKET_STATE_BYTES = 32;
/** FeeRatesRecord.sizeOf() */
export const FEE_RATES_BYTES = 32;
/** JournalRecord.sizeOf(): a StampedRecord at offset 0, then the u32 output digest, then the u32 checksum. */
export const JOURNAL_RECORD_BYTES = 192;
/** Offset of JournalRecord.output_digest (u32, little-endian). */
export const JOURNAL_DIGEST_OFFSET = 184;
/** Offset of JournalRecord.checksum (u32, little-endian). */
export const JOURNAL_CHECKSUM_OFFSET = 188;
/** Size of the ed25519 public key carried by CreateAccount commands and Account records. */
export const KEY_BYTES = 32;

// ---------------------------------------------------------------------------------------------
// Field offsets (private). Each equals the generated accessor's `this.bb_pos + N`.

// RecordHeader
const H_SEQ = 0;
const H_TIME_US = 8;
const H_REQUEST_ID = 16;
const H_FRONT_ID = 20;
const H_TYPE = 22;
const H_FLAGS = 23;

// CommandSlot
const C_PRICE_TICKS = 0;
const C_QTY_LOTS = 8;
const C_QUOTE_QTY_UNITS = 16;
const C_AMOUNT_UNITS = 24;
const C_ORDER_ID = 32;
const C_TRIGGER_PRICE_TICKS = 40;
const C_TRIGGER_QTY_LOTS = 48;
const C_TAKE_PROFIT_TRIGGER_TICKS = 56;
const C_TAKE_PROFIT_LIMIT_TICKS = 64;
const C_STOP_LOSS_TRIGGER_TICKS = 72;
const C_STOP_LOSS_LIMIT_TICKS = 80;
const C_SLIPPAGE_TOLERANCE = 88;
const C_KEY = 96; // key_0..key_3: 96..127
const C_REQUEST_ID = 128;
const C_ACCOUNT_ID = 132;
const C_CLIENT_ID = 136;
const C_FRONT_ID = 140;
const C_MARKET_ID = 142;
const C_ASSET_ID = 144;
const C_KIND = 146;
const C_SIDE = 147;
const C_ORDER_TYPE = 148;
const C_TIME_IN_FORCE = 149;
const C_SELF_TRADE_PREVENTION = 150;
const C_FLAGS = 151;
const C_TRIGGER_BY = 152;
const C_TAKE_PROFIT_TRIGGER_BY = 153;
const C_STOP_LOSS_TRIGGER_BY = 154;
const C_SLIPPAGE_TOLERANCE_TYPE = 155;
const C_PAD = 156; // 4 bytes

// ResultRecord
const R_VALUE = 24;
const R_CODE = 32; // u16
const R_PAD = 34; // 6 bytes

// OrderRecord
const O_ORDER_ID = 24;
const O_PRICE_TICKS = 32;
const O_QTY_LOTS = 40;
const O_QUOTE_QTY_UNITS = 48;
const O_EXECUTED_QTY_LOTS = 56;
const O_EXECUTED_QUOTE_UNITS = 64;
const O_LAST_FILL_QTY_LOTS = 72;
const O_LAST_FILL_PRICE_TICKS = 80;
const O_TRADE_ID = 88;
const O_FEE_UNITS = 96;
const O_CREATED_AT_US = 104;
const O_ACCOUNT_ID = 112;
const O_CLIENT_ID = 116;
const O_MARKET_ID = 120;
const O_FEE_ASSET_ID = 122;
const O_EVENT = 124;
const O_SIDE = 125;
const O_ORDER_TYPE = 126;
const O_TIME_IN_FORCE = 127;
const O_SELF_TRADE_PREVENTION = 128;
const O_STATUS = 129;
const O_EXPIRY_REASON = 130;
const O_FLAGS = 131;
const O_SYSTEM_ORDER_TYPE = 132;
const O_PAD = 132; // 4 bytes

// TradeRecord
const T_TRADE_ID = 24;
const T_PRICE_TICKS = 32;
const T_QTY_LOTS = 40;
const T_BUYER_ORDER_ID = 48;
const T_SELLER_ORDER_ID = 56;
const T_MARKET_ID = 64;
const T_BUYER_IS_MAKER = 66;
const T_PAD = 67; // 5 bytes

// BalanceRecord
const B_AVAILABLE_UNITS = 24;
const B_LOCKED_UNITS = 32;
const B_ACCOUNT_ID = 40;
const B_ASSET_ID = 44;
const B_PAD = 46; // 2 bytes

// DepthRecord
const D_PRICE_TICKS = 24;
const D_QTY_LOTS = 32;
const D_UPDATE_ID = 40;
const D_MARKET_ID = 48;
const D_SIDE = 50;
const D_PAD = 51; // 5 bytes

// AccountRecord
const A_KEY = 24; // key_0..key_3: 24..55
const A_ACCOUNT_ID = 56;
const A_PAD = 60; // 4 bytes

// MarketRecord
const M_UPDATE_ID = 24;
const M_LAST_TRADE_ID = 32;
const M_MARKET_ID = 40;
const M_PAD = 42; // 6 bytes

// Order book states and fee rates
// MarketStateRecord
const MS_MARKET_ID = 24;
const MS_STATE = 26;
const MS_PAD = 27; // 5 bytes
// FeeRatesRecord
const F_ACCOUNT_ID = 24;
const F_MAKER_FEE_BPS = 28;
const F_TAKER_FEE_BPS = 30;

const TWO32 = 4294967296;
const TWO_NEG32 = 1 / TWO32;

// ---------------------------------------------------------------------------------------------
// Primitive helpers

function badInt(field: string, v: number): never {
  throw new RangeError(`codec: ${field} must be a safe integer, got ${v}`);
}

/**
 * Writes a safe integer as a little-endian two's-complement 64-bit value, unchecked: the caller
 * has already tested every 64-bit field of the record with Number.isSafeInteger (one test each,
 * which the optimizing compiler turns into a few instructions) and thrown through badField if one
 * failed. Kept tiny so the compiler inlines all of a record's writes: a call left out of line
 * would box each double argument.
 */
function put64(dv: DataView, at: number, v: number): void {
  // v >>> 0 is the unsigned low word (ToUint32 is v modulo 2^32, for negatives too); v - lo is a
  // multiple of 2^32 of magnitude at most 2^53, so it and its product with 2^-32 (the signed high
  // word) are exact.
  const lo = v >>> 0;
  dv.setUint32(at, lo, true);
  dv.setInt32(at + 4, (v - lo) * TWO_NEG32, true);
}

/**
 * The error path of a writer whose safe-integer test failed: throws the RangeError of the first
 * field of `fields` (in writing order) that is not a safe integer. Only ever called to throw.
 */
function badField(r: object, fields: readonly string[]): never {
  for (const field of fields) {
    const v = (r as Record<string, number>)[field];
    if (!Number.isSafeInteger(v)) badInt(field, v);
  }
  throw new RangeError('codec: a 64-bit field is not a safe integer');
}

/** Reads a little-endian two's-complement 64-bit value as hi * 2^32 + lo. */
function getI64(dv: DataView, at: number): number {
  return dv.getInt32(at + 4, true) * TWO32 + dv.getUint32(at, true);
}

function checkKey(key: Uint8Array): void {
  if (key.length !== KEY_BYTES) {
    throw new RangeError(`codec: key must be ${KEY_BYTES} bytes, got ${key.length}`);
  }
}

/** Writes the 32 key bytes in order as eight little-endian u32 words. */
function setKey(dv: DataView, at: number, key: Uint8Array): void {
  checkKey(key);
  for (let i = 0; i < KEY_BYTES; i += 4) {
    dv.setUint32(at + i, key[i] | (key[i + 1] << 8) | (key[i + 2] << 16) | (key[i + 3] << 24), true);
  }
}

/** Copies the 32 key bytes into `key` (which must be 32 bytes long). */
function getKey(dv: DataView, at: number, key: Uint8Array): void {
  checkKey(key);
  for (let i = 0; i < KEY_BYTES; i += 4) {
    const w = dv.getUint32(at + i, true);
    key[i] = w;
    key[i + 1] = w >>> 8;
    key[i + 2] = w >>> 16;
    key[i + 3] = w >>> 24;
  }
}

/**
 * Writes a header from its field values. Each writer reads its own record's header fields and
 * passes them here, so every property read stays monomorphic (one record shape per call site)
 * instead of one shared function reading seven shapes.
 */
function putHeader(
  dv: DataView,
  off: number,
  seq: number,
  timeUs: number,
  requestId: number,
  frontId: number,
  type: number,
  flags: number,
): void {
  if (!Number.isSafeInteger(seq)) badInt('seq', seq);
  if (!Number.isSafeInteger(timeUs)) badInt('timeUs', timeUs);
  put64(dv, off + H_SEQ, seq);
  put64(dv, off + H_TIME_US, timeUs);
  dv.setUint32(off + H_REQUEST_ID, requestId, true);
  dv.setUint16(off + H_FRONT_ID, frontId, true);
  dv.setUint8(off + H_TYPE, type);
  dv.setUint8(off + H_FLAGS, flags);
}

// ---------------------------------------------------------------------------------------------
// RecordHeader

/** Type byte of the record at `off` (any outbound record, or a StampedRecord). */
export function recordType(dv: DataView, off: number): RecordType {
  return dv.getUint8(off + H_TYPE);
}

/** Header flags (HeaderFlag bits) of the record at `off`. */
export function recordFlags(dv: DataView, off: number): number {
  return dv.getUint8(off + H_FLAGS);
}

/** Sets header flag bits of a record the caller is still writing (claimed, not yet published). */
export function addRecordFlags(dv: DataView, off: number, flags: number): void {
  dv.setUint8(off + H_FLAGS, dv.getUint8(off + H_FLAGS) | flags);
}

/** Header seq of the record at `off`. */
export function recordSeq(dv: DataView, off: number): number {
  return getI64(dv, off + H_SEQ);
}

export function readHeader(dv: DataView, off: number, h: RecordHeaderFields): void {
  h.seq = getI64(dv, off + H_SEQ);
  h.timeUs = getI64(dv, off + H_TIME_US);
  h.requestId = dv.getUint32(off + H_REQUEST_ID, true);
  h.frontId = dv.getUint16(off + H_FRONT_ID, true);
  h.type = dv.getUint8(off + H_TYPE);
  h.flags = dv.getUint8(off + H_FLAGS);
}

/** Writes a header with h.type as given. */
export function writeHeader(dv: DataView, off: number, h: RecordHeaderFields): void {
  putHeader(dv, off, h.seq, h.timeUs, h.requestId, h.frontId, h.type, h.flags);
}

// ---------------------------------------------------------------------------------------------
// CommandSlot

const COMMAND_I64_FIELDS = [
  'priceTicks',
  'qtyLots',
  'quoteQtyUnits',
  'amountUnits',
  'orderId',
  'triggerPriceTicks',
  'triggerQtyLots',
  'takeProfitTriggerTicks',
  'takeProfitLimitTicks',
  'stopLossTriggerTicks',
  'stopLossLimitTicks',
  'slippageTolerance',
] as const;

export function writeCommand(dv: DataView, off: number, c: Command): void {
  if (
    !(
      Number.isSafeInteger(c.priceTicks) &&
      Number.isSafeInteger(c.qtyLots) &&
      Number.isSafeInteger(c.quoteQtyUnits) &&
      Number.isSafeInteger(c.amountUnits) &&
      Number.isSafeInteger(c.orderId) &&
      Number.isSafeInteger(c.triggerPriceTicks) &&
      Number.isSafeInteger(c.triggerQtyLots) &&
      Number.isSafeInteger(c.takeProfitTriggerTicks) &&
      Number.isSafeInteger(c.takeProfitLimitTicks) &&
      Number.isSafeInteger(c.stopLossTriggerTicks) &&
      Number.isSafeInteger(c.stopLossLimitTicks) &&
      Number.isSafeInteger(c.slippageTolerance)
    )
  ) badField(c, COMMAND_I64_FIELDS);
  put64(dv, off + C_PRICE_TICKS, c.priceTicks);
  put64(dv, off + C_QTY_LOTS, c.qtyLots);
  put64(dv, off + C_QUOTE_QTY_UNITS, c.quoteQtyUnits);
  put64(dv, off + C_AMOUNT_UNITS, c.amountUnits);
  put64(dv, off + C_ORDER_ID, c.orderId);
  put64(dv, off + C_TRIGGER_PRICE_TICKS, c.triggerPriceTicks);
  put64(dv, off + C_TRIGGER_QTY_LOTS, c.triggerQtyLots);
  put64(dv, off + C_TAKE_PROFIT_TRIGGER_TICKS, c.takeProfitTriggerTicks);
  put64(dv, off + C_TAKE_PROFIT_LIMIT_TICKS, c.takeProfitLimitTicks);
  put64(dv, off + C_STOP_LOSS_TRIGGER_TICKS, c.stopLossTriggerTicks);
  put64(dv, off + C_STOP_LOSS_LIMIT_TICKS, c.stopLossLimitTicks);
  put64(dv, off + C_SLIPPAGE_TOLERANCE, c.slippageTolerance);
  setKey(dv, off + C_KEY, c.key);
  dv.setUint32(off + C_REQUEST_ID, c.requestId, true);
  dv.setUint32(off + C_ACCOUNT_ID, c.accountId, true);
  dv.setUint32(off + C_CLIENT_ID, c.clientId, true);
  dv.setUint16(off + C_FRONT_ID, c.frontId, true);
  dv.setUint16(off + C_MARKET_ID, c.marketId, true);
  dv.setUint16(off + C_ASSET_ID, c.assetId, true);
  dv.setUint8(off + C_KIND, c.kind);
  dv.setUint8(off + C_SIDE, c.side);
  dv.setUint8(off + C_ORDER_TYPE, c.orderType);
  dv.setUint8(off + C_TIME_IN_FORCE, c.timeInForce);
  dv.setUint8(off + C_SELF_TRADE_PREVENTION, c.selfTradePrevention);
  dv.setUint8(off + C_FLAGS, c.flags);
  dv.setUint8(off + C_TRIGGER_BY, c.triggerBy);
  dv.setUint8(off + C_TAKE_PROFIT_TRIGGER_BY, c.takeProfitTriggerBy);
  dv.setUint8(off + C_STOP_LOSS_TRIGGER_BY, c.stopLossTriggerBy);
  dv.setUint8(off + C_SLIPPAGE_TOLERANCE_TYPE, c.slippageToleranceType);
  dv.setUint32(off + C_PAD, 0, true);
}

/** Fills `c` in place; the key bytes are copied into c.key (32 bytes), never aliased. */
export function readCommand(dv: DataView, off: number, c: Command): void {
  c.priceTicks = getI64(dv, off + C_PRICE_TICKS);
  c.qtyLots = getI64(dv, off + C_QTY_LOTS);
  c.quoteQtyUnits = getI64(dv, off + C_QUOTE_QTY_UNITS);
  c.amountUnits = getI64(dv, off + C_AMOUNT_UNITS);
  c.orderId = getI64(dv, off + C_ORDER_ID);
  c.triggerPriceTicks = getI64(dv, off + C_TRIGGER_PRICE_TICKS);
  c.triggerQtyLots = getI64(dv, off + C_TRIGGER_QTY_LOTS);
  c.takeProfitTriggerTicks = getI64(dv, off + C_TAKE_PROFIT_TRIGGER_TICKS);
  c.takeProfitLimitTicks = getI64(dv, off + C_TAKE_PROFIT_LIMIT_TICKS);
  c.stopLossTriggerTicks = getI64(dv, off + C_STOP_LOSS_TRIGGER_TICKS);
  c.stopLossLimitTicks = getI64(dv, off + C_STOP_LOSS_LIMIT_TICKS);
  c.slippageTolerance = getI64(dv, off + C_SLIPPAGE_TOLERANCE);
  getKey(dv, off + C_KEY, c.key);
  c.requestId = dv.getUint32(off + C_REQUEST_ID, true);
  c.accountId = dv.getUint32(off + C_ACCOUNT_ID, true);
  c.clientId = dv.getUint32(off + C_CLIENT_ID, true);
  c.frontId = dv.getUint16(off + C_FRONT_ID, true);
  c.marketId = dv.getUint16(off + C_MARKET_ID, true);
  c.assetId = dv.getUint16(off + C_ASSET_ID, true);
  c.kind = dv.getUint8(off + C_KIND);
  c.side = dv.getUint8(off + C_SIDE);
  c.orderType = dv.getUint8(off + C_ORDER_TYPE);
  c.timeInForce = dv.getUint8(off + C_TIME_IN_FORCE);
  c.selfTradePrevention = dv.getUint8(off + C_SELF_TRADE_PREVENTION);
  c.flags = dv.getUint8(off + C_FLAGS);
  c.triggerBy = dv.getUint8(off + C_TRIGGER_BY);
  c.takeProfitTriggerBy = dv.getUint8(off + C_TAKE_PROFIT_TRIGGER_BY);
  c.stopLossTriggerBy = dv.getUint8(off + C_STOP_LOSS_TRIGGER_BY);
  c.slippageToleranceType = dv.getUint8(off + C_SLIPPAGE_TOLERANCE_TYPE);
}

// ---------------------------------------------------------------------------------------------
// StampedRecord

export function newStampedRec(): StampedRec {
  return { seq: 0, timeUs: 0, requestId: 0, frontId: 0, type: RecordType.Stamped, flags: 0, command: newCommand() };
}

export function writeStamped(dv: DataView, off: number, r: StampedRec): void {
  putHeader(dv, off, r.seq, r.timeUs, r.requestId, r.frontId, RecordType.Stamped, r.flags);
  writeCommand(dv, off + STAMPED_COMMAND_OFFSET, r.command);
}

export function readStamped(dv: DataView, off: number, r: StampedRec): void {
  readHeader(dv, off, r);
  readCommand(dv, off + STAMPED_COMMAND_OFFSET, r.command);
}

// ---------------------------------------------------------------------------------------------
// ResultRecord

export function newResultRec(): ResultRec {
  return { seq: 0, timeUs: 0, requestId: 0, frontId: 0, type: RecordType.Result, flags: 0, value: 0, code: 0 };
}

const RESULT_I64_FIELDS = ['value'] as const;

export function writeResult(dv: DataView, off: number, r: ResultRec): void {
  putHeader(dv, off, r.seq, r.timeUs, r.requestId, r.frontId, RecordType.Result, r.flags);
  if (!(Number.isSafeInteger(r.value))) badField(r, RESULT_I64_FIELDS);
  put64(dv, off + R_VALUE, r.value);
  dv.setUint16(off + R_CODE, r.code, true);
  dv.setUint16(off + R_PAD, 0, true);
  dv.setUint32(off + R_PAD + 2, 0, true);
}

export function readResult(dv: DataView, off: number, r: ResultRec): void {
  readHeader(dv, off, r);
  r.value = getI64(dv, off + R_VALUE);
  r.code = dv.getUint16(off + R_CODE, true);
}

// ---------------------------------------------------------------------------------------------
// OrderRecord

export function newOrderRec(): OrderRec {
  return {
    seq: 0,
    timeUs: 0,
    requestId: 0,
    frontId: 0,
    type: RecordType.Order,
    flags: 0,
    orderFlags: 0,
    orderId: 0,
    priceTicks: 0,
    qtyLots: 0,
    quoteQtyUnits: 0,
    executedQtyLots: 0,
    executedQuoteUnits: 0,
    lastFillQtyLots: 0,
    lastFillPriceTicks: 0,
    tradeId: 0,
    feeUnits: 0,
    createdAtUs: 0,
    accountId: 0,
    clientId: 0,
    marketId: 0,
    feeAssetId: 0,
    event: 0,
    side: 0,
    orderType: 0,
    timeInForce: 0,
    selfTradePrevention: 0,
    status: 0,
    expiryReason: 0,
    systemOrderType: 0,
  };
}

const ORDER_I64_FIELDS = [
  'orderId',
  'priceTicks',
  'qtyLots',
  'quoteQtyUnits',
  'executedQtyLots',
  'executedQuoteUnits',
  'lastFillQtyLots',
  'lastFillPriceTicks',
  'tradeId',
  'feeUnits',
  'createdAtUs',
] as const;

export function writeOrder(dv: DataView, off: number, r: OrderRec): void {
  putHeader(dv, off, r.seq, r.timeUs, r.requestId, r.frontId, RecordType.Order, r.flags);
  if (
    !(
      Number.isSafeInteger(r.orderId) &&
      Number.isSafeInteger(r.priceTicks) &&
      Number.isSafeInteger(r.qtyLots) &&
      Number.isSafeInteger(r.quoteQtyUnits) &&
      Number.isSafeInteger(r.executedQtyLots) &&
      Number.isSafeInteger(r.executedQuoteUnits) &&
      Number.isSafeInteger(r.lastFillQtyLots) &&
      Number.isSafeInteger(r.lastFillPriceTicks) &&
      Number.isSafeInteger(r.tradeId) &&
      Number.isSafeInteger(r.feeUnits) &&
      Number.isSafeInteger(r.createdAtUs)
    )
  ) badField(r, ORDER_I64_FIELDS);
  put64(dv, off + O_ORDER_ID, r.orderId);
  put64(dv, off + O_PRICE_TICKS, r.priceTicks);
  put64(dv, off + O_QTY_LOTS, r.qtyLots);
  put64(dv, off + O_QUOTE_QTY_UNITS, r.quoteQtyUnits);
  put64(dv, off + O_EXECUTED_QTY_LOTS, r.executedQtyLots);
  put64(dv, off + O_EXECUTED_QUOTE_UNITS, r.executedQuoteUnits);
  put64(dv, off + O_LAST_FILL_QTY_LOTS, r.lastFillQtyLots);
  put64(dv, off + O_LAST_FILL_PRICE_TICKS, r.lastFillPriceTicks);
  put64(dv, off + O_TRADE_ID, r.tradeId);
  put64(dv, off + O_FEE_UNITS, r.feeUnits);
  put64(dv, off + O_CREATED_AT_US, r.createdAtUs);
  dv.setUint32(off + O_ACCOUNT_ID, r.accountId, true);
  dv.setUint32(off + O_CLIENT_ID, r.clientId, true);
  dv.setUint16(off + O_MARKET_ID, r.marketId, true);
  dv.setUint16(off + O_FEE_ASSET_ID, r.feeAssetId, true);
  dv.setUint8(off + O_EVENT, r.event);
  dv.setUint8(off + O_SIDE, r.side);
  dv.setUint8(off + O_ORDER_TYPE, r.orderType);
  dv.setUint8(off + O_TIME_IN_FORCE, r.timeInForce);
  dv.setUint8(off + O_SELF_TRADE_PREVENTION, r.selfTradePrevention);
  dv.setUint8(off + O_STATUS, r.status);
  dv.setUint8(off + O_EXPIRY_REASON, r.expiryReason);
  dv.setUint8(off + O_FLAGS, r.orderFlags);
  dv.setUint8(off + O_SYSTEM_ORDER_TYPE, r.systemOrderType);
  dv.setUint32(off + O_PAD, 0, true);
}

export function readOrder(dv: DataView, off: number, r: OrderRec): void {
  readHeader(dv, off, r);
  r.orderId = getI64(dv, off + O_ORDER_ID);
  r.priceTicks = getI64(dv, off + O_PRICE_TICKS);
  r.qtyLots = getI64(dv, off + O_QTY_LOTS);
  r.quoteQtyUnits = getI64(dv, off + O_QUOTE_QTY_UNITS);
  r.executedQtyLots = getI64(dv, off + O_EXECUTED_QTY_LOTS);
  r.executedQuoteUnits = getI64(dv, off + O_EXECUTED_QUOTE_UNITS);
  r.lastFillQtyLots = getI64(dv, off + O_LAST_FILL_QTY_LOTS);
  r.lastFillPriceTicks = getI64(dv, off + O_LAST_FILL_PRICE_TICKS);
  r.tradeId = getI64(dv, off + O_TRADE_ID);
  r.feeUnits = getI64(dv, off + O_FEE_UNITS);
  r.createdAtUs = getI64(dv, off + O_CREATED_AT_US);
  r.accountId = dv.getUint32(off + O_ACCOUNT_ID, true);
  r.clientId = dv.getUint32(off + O_CLIENT_ID, true);
  r.marketId = dv.getUint16(off + O_MARKET_ID, true);
  r.feeAssetId = dv.getUint16(off + O_FEE_ASSET_ID, true);
  r.event = dv.getUint8(off + O_EVENT);
  r.side = dv.getUint8(off + O_SIDE);
  r.orderType = dv.getUint8(off + O_ORDER_TYPE);
  r.timeInForce = dv.getUint8(off + O_TIME_IN_FORCE);
  r.selfTradePrevention = dv.getUint8(off + O_SELF_TRADE_PREVENTION);
  r.status = dv.getUint8(off + O_STATUS);
  r.expiryReason = dv.getUint8(off + O_EXPIRY_REASON);
  r.orderFlags = dv.getUint8(off + O_FLAGS);
  r.systemOrderType = dv.getUint8(off + O_SYSTEM_ORDER_TYPE);
}

// ---------------------------------------------------------------------------------------------
// TradeRecord

export function newTradeRec(): TradeRec {
  return {
    seq: 0,
    timeUs: 0,
    requestId: 0,
    frontId: 0,
    type: RecordType.Trade,
    flags: 0,
    tradeId: 0,
    priceTicks: 0,
    qtyLots: 0,
    buyerOrderId: 0,
    sellerOrderId: 0,
    marketId: 0,
    buyerIsMaker: false,
  };
}

const TRADE_I64_FIELDS = ['tradeId', 'priceTicks', 'qtyLots', 'buyerOrderId', 'sellerOrderId'] as const;

export function writeTrade(dv: DataView, off: number, r: TradeRec): void {
  putHeader(dv, off, r.seq, r.timeUs, r.requestId, r.frontId, RecordType.Trade, r.flags);
  if (
    !(
      Number.isSafeInteger(r.tradeId) &&
      Number.isSafeInteger(r.priceTicks) &&
      Number.isSafeInteger(r.qtyLots) &&
      Number.isSafeInteger(r.buyerOrderId) &&
      Number.isSafeInteger(r.sellerOrderId)
    )
  ) badField(r, TRADE_I64_FIELDS);
  put64(dv, off + T_TRADE_ID, r.tradeId);
  put64(dv, off + T_PRICE_TICKS, r.priceTicks);
  put64(dv, off + T_QTY_LOTS, r.qtyLots);
  put64(dv, off + T_BUYER_ORDER_ID, r.buyerOrderId);
  put64(dv, off + T_SELLER_ORDER_ID, r.sellerOrderId);
  dv.setUint16(off + T_MARKET_ID, r.marketId, true);
  dv.setUint8(off + T_BUYER_IS_MAKER, r.buyerIsMaker ? 1 : 0);
  dv.setUint8(off + T_PAD, 0);
  dv.setUint32(off + T_PAD + 1, 0, true);
}

export function readTrade(dv: DataView, off: number, r: TradeRec): void {
  readHeader(dv, off, r);
  r.tradeId = getI64(dv, off + T_TRADE_ID);
  r.priceTicks = getI64(dv, off + T_PRICE_TICKS);
  r.qtyLots = getI64(dv, off + T_QTY_LOTS);
  r.buyerOrderId = getI64(dv, off + T_BUYER_ORDER_ID);
  r.sellerOrderId = getI64(dv, off + T_SELLER_ORDER_ID);
  r.marketId = dv.getUint16(off + T_MARKET_ID, true);
  r.buyerIsMaker = dv.getUint8(off + T_BUYER_IS_MAKER) !== 0;
}

// ---------------------------------------------------------------------------------------------
// BalanceRecord

export function newBalanceRec(): BalanceRec {
  return {
    seq: 0,
    timeUs: 0,
    requestId: 0,
    frontId: 0,
    type: RecordType.Balance,
    flags: 0,
    availableUnits: 0,
    lockedUnits: 0,
    accountId: 0,
    assetId: 0,
  };
}

const BALANCE_I64_FIELDS = ['availableUnits', 'lockedUnits'] as const;

export function writeBalance(dv: DataView, off: number, r: BalanceRec): void {
  putHeader(dv, off, r.seq, r.timeUs, r.requestId, r.frontId, RecordType.Balance, r.flags);
  if (!(Number.isSafeInteger(r.availableUnits) && Number.isSafeInteger(r.lockedUnits))) badField(r, BALANCE_I64_FIELDS);
  put64(dv, off + B_AVAILABLE_UNITS, r.availableUnits);
  put64(dv, off + B_LOCKED_UNITS, r.lockedUnits);
  dv.setUint32(off + B_ACCOUNT_ID, r.accountId, true);
  dv.setUint16(off + B_ASSET_ID, r.assetId, true);
  dv.setUint16(off + B_PAD, 0, true);
}

export function readBalance(dv: DataView, off: number, r: BalanceRec): void {
  readHeader(dv, off, r);
  r.availableUnits = getI64(dv, off + B_AVAILABLE_UNITS);
  r.lockedUnits = getI64(dv, off + B_LOCKED_UNITS);
  r.accountId = dv.getUint32(off + B_ACCOUNT_ID, true);
  r.assetId = dv.getUint16(off + B_ASSET_ID, true);
}

// ---------------------------------------------------------------------------------------------
// DepthRecord

export function newDepthRec(): DepthRec {
  return {
    seq: 0,
    timeUs: 0,
    requestId: 0,
    frontId: 0,
    type: RecordType.Depth,
    flags: 0,
    priceTicks: 0,
    qtyLots: 0,
    updateId: 0,
    marketId: 0,
    side: 0,
  };
}

const DEPTH_I64_FIELDS = ['priceTicks', 'qtyLots', 'updateId'] as const;

export function writeDepth(dv: DataView, off: number, r: DepthRec): void {
  putHeader(dv, off, r.seq, r.timeUs, r.requestId, r.frontId, RecordType.Depth, r.flags);
  if (
    !(
      Number.isSafeInteger(r.priceTicks) &&
      Number.isSafeInteger(r.qtyLots) &&
      Number.isSafeInteger(r.updateId)
    )
  ) badField(r, DEPTH_I64_FIELDS);
  put64(dv, off + D_PRICE_TICKS, r.priceTicks);
  put64(dv, off + D_QTY_LOTS, r.qtyLots);
  put64(dv, off + D_UPDATE_ID, r.updateId);
  dv.setUint16(off + D_MARKET_ID, r.marketId, true);
  dv.setUint8(off + D_SIDE, r.side);
  dv.setUint8(off + D_PAD, 0);
  dv.setUint32(off + D_PAD + 1, 0, true);
}

export function readDepth(dv: DataView, off: number, r: DepthRec): void {
  readHeader(dv, off, r);
  r.priceTicks = getI64(dv, off + D_PRICE_TICKS);
  r.qtyLots = getI64(dv, off + D_QTY_LOTS);
  r.updateId = getI64(dv, off + D_UPDATE_ID);
  r.marketId = dv.getUint16(off + D_MARKET_ID, true);
  r.side = dv.getUint8(off + D_SIDE);
}

// ---------------------------------------------------------------------------------------------
// AccountRecord

export function newAccountRec(): AccountRec {
  return {
    seq: 0,
    timeUs: 0,
    requestId: 0,
    frontId: 0,
    type: RecordType.Account,
    flags: 0,
    key: new Uint8Array(KEY_BYTES),
    accountId: 0,
  };
}

export function writeAccount(dv: DataView, off: number, r: AccountRec): void {
  putHeader(dv, off, r.seq, r.timeUs, r.requestId, r.frontId, RecordType.Account, r.flags);
  setKey(dv, off + A_KEY, r.key);
  dv.setUint32(off + A_ACCOUNT_ID, r.accountId, true);
  dv.setUint32(off + A_PAD, 0, true);
}

/** Fills `r` in place; the key bytes are copied into r.key (32 bytes), never aliased. */
export function readAccount(dv: DataView, off: number, r: AccountRec): void {
  readHeader(dv, off, r);
  getKey(dv, off + A_KEY, r.key);
  r.accountId = dv.getUint32(off + A_ACCOUNT_ID, true);
}

// ---------------------------------------------------------------------------------------------
// MarketRecord

export function newMarketRec(): MarketRec {
  return {
    seq: 0,
    timeUs: 0,
    requestId: 0,
    frontId: 0,
    type: RecordType.Market,
    flags: 0,
    updateId: 0,
    lastTradeId: 0,
    marketId: 0,
  };
}

const MARKET_I64_FIELDS = ['updateId', 'lastTradeId'] as const;

export function writeMarket(dv: DataView, off: number, r: MarketRec): void {
  putHeader(dv, off, r.seq, r.timeUs, r.requestId, r.frontId, RecordType.Market, r.flags);
  if (!(Number.isSafeInteger(r.updateId) && Number.isSafeInteger(r.lastTradeId))) badField(r, MARKET_I64_FIELDS);
  put64(dv, off + M_UPDATE_ID, r.updateId);
  put64(dv, off + M_LAST_TRADE_ID, r.lastTradeId);
  dv.setUint16(off + M_MARKET_ID, r.marketId, true);
  dv.setUint16(off + M_PAD, 0, true);
  dv.setUint32(off + M_PAD + 2, 0, true);
}

export function readMarket(dv: DataView, off: number, r: MarketRec): void {
  readHeader(dv, off, r);
  r.updateId = getI64(dv, off + M_UPDATE_ID);
  r.lastTradeId = getI64(dv, off + M_LAST_TRADE_ID);
  r.marketId = dv.getUint16(off + M_MARKET_ID, true);
}

// ---------------------------------------------------------------------------------------------
// MarketStateRecord, FeeRatesRecord

export function newMarketStateRec(): MarketStateRec {
  return { seq: 0, timeUs: 0, requestId: 0, frontId: 0, type: RecordType.MarketState, flags: 0, marketId: 0, state: 0 };
}

export function writeMarketState(dv: DataView, off: number, r: MarketStateRec): void {
  putHeader(dv, off, r.seq, r.timeUs, r.requestId, r.frontId, RecordType.MarketState, r.flags);
  dv.setUint16(off + MS_MARKET_ID, r.marketId, true);
  dv.setUint8(off + MS_STATE, r.state);
  dv.setUint8(off + MS_PAD, 0);
  dv.setUint32(off + MS_PAD + 1, 0, true);
}

export function readMarketState(dv: DataView, off: number, r: MarketStateRec): void {
  readHeader(dv, off, r);
  r.marketId = dv.getUint16(off + MS_MARKET_ID, true);
  r.state = dv.getUint8(off + MS_STATE);
}

export function newFeeRatesRec(): FeeRatesRec {
  return { seq: 0, timeUs: 0, requestId: 0, frontId: 0, type: RecordType.FeeRates, flags: 0, accountId: 0, makerFeeBps: 0, takerFeeBps: 0 };
}

export function writeFeeRates(dv: DataView, off: number, r: FeeRatesRec): void {
  putHeader(dv, off, r.seq, r.timeUs, r.requestId, r.frontId, RecordType.FeeRates, r.flags);
  dv.setUint32(off + F_ACCOUNT_ID, r.accountId, true);
  dv.setUint16(off + F_MAKER_FEE_BPS, r.makerFeeBps, true);
  dv.setUint16(off + F_TAKER_FEE_BPS, r.takerFeeBps, true);
}

export function readFeeRates(dv: DataView, off: number, r: FeeRatesRec): void {
  readHeader(dv, off, r);
  r.accountId = dv.getUint32(off + F_ACCOUNT_ID, true);
  r.makerFeeBps = dv.getUint16(off + F_MAKER_FEE_BPS, true);
  r.takerFeeBps = dv.getUint16(off + F_TAKER_FEE_BPS, true);
}

// ---------------------------------------------------------------------------------------------
// Raw bytes

/**
 * Copies one raw CommandSlot (COMMAND_BYTES) from src to dst — used by the engine to stamp an
 * inbound slot into an outbound Stamped record without decoding. Copies `length` bytes in general;
 * overlapping ranges of one buffer are handled like memmove. Throws a RangeError when either range
 * is out of bounds (a typed array would otherwise drop the bytes silently).
 */
export function copyBytes(src: Uint8Array, srcOff: number, dst: Uint8Array, dstOff: number, length: number): void {
  if (
    !(length >= 0 && srcOff >= 0 && dstOff >= 0 && srcOff + length <= src.length && dstOff + length <= dst.length)
  ) {
    throw new RangeError(`codec: copyBytes out of bounds (src ${srcOff}+${length}/${src.length}, dst ${dstOff}+${length}/${dst.length})`);
  }
  if (src.buffer === dst.buffer) {
    const from = src.byteOffset + srcOff;
    const to = dst.byteOffset + dstOff;
    if (to > from && to < from + length) {
      for (let i = length - 1; i >= 0; i--) dst[dstOff + i] = src[srcOff + i];
      return;
    }
  }
  for (let i = 0; i < length; i++) dst[dstOff + i] = src[srcOff + i];
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
