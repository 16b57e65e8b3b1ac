// Snapshot export and import of the engine core's whole state, for restart without replaying the
// journal from its beginning.
//
// The snapshot is *logical*: it walks what the exchange is (accounts, balances, fee ledger, each
// open order with every field, each book's levels best first with their FIFO of order ids, the
// speed-bump queue in order, the counters replay must reproduce), never how it is stored, so its
// size follows the live state (not the preallocated pools) and import rebuilds every structure
// through its own methods (accounts.add, pool.open, index.insert, side.insert, pending.push).
// Pool and level slot numbers may therefore differ after an import; nothing observable depends
// on them (ids, outputs and stateHash do not), which is why the state hash leaves them out.
//
// Deterministic and integer-only: every value is a safe integer written as two little-endian
// 32-bit words (low, then high as a signed word, so the few counters that start at -1 fit), keys
// as raw bytes. The same state always exports to the same bytes. Import is only defined on a
// freshly constructed Exchange of the same configuration (the shell checks the configuration
// fingerprint and, after import, the state hash recorded at export).
//
// Layout (all words little-endian u32 unless said):
//   magic 'EXS1', format version
//   orderNumber, lastSeq, lastTimeUs, assetCount, marketCount
//   accounts: count; per account: 32 key bytes, makerFeeBps, takerFeeBps, then per asset
//             available, locked
//   per asset: supply, feeUnits
//   orders: count; per order, in account order then each account's placement order: its fields
//   per market: updateId, lastTradeId, bandReferenceTicks, guardedReferenceTicks,
//             guardedReferenceTimeUs, updateIdSeq, orderBookState, restCounter, restingCount,
//             pendingCount, pendingGtc bid, pendingGtc ask, then for bids and asks: level count;
//             per level best first: price, qty, order count, the order ids
//   pending: count, order ids in queue order
//   'EXSE' end marker
//
// Version 2 (before markets kept a guarded reference price) is still read: it lacks the two
// guarded reference words, and import starts each banded market's guarded reference at its last
// trade price as of the snapshot's engine time (reference.ts then moves it as usual). Such a
// state carries the version-2 state hash (Exchange.hasStateHash).

import { OrderState, NO_SLOT } from './book/orders.js';
import { assert } from './assert.js';
import type { Exchange } from './exchange.js';
import type { EngineState } from './state.js';
import type { Book, BookSide } from './book/book.js';
import type { PriceTicks } from './units.js';
import type { OrderBookState } from '../bus/types.js';

const MAGIC = 0x31535845; // 'EXS1'
const END_MAGIC = 0x45535845; // 'EXSE'
const FORMAT_VERSION = 3;
/** The last version without the guarded reference price; import still reads it. */
const FORMAT_VERSION_NO_GUARD = 2;
const TWO_POW_32 = 0x100000000;
const KEY_BYTES = 32;

class SnapshotWriter {
  private bytes = new Uint8Array(1 << 16);
  private view = new DataView(this.bytes.buffer);
  length = 0;

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
    const low = ((value % TWO_POW_32) + TWO_POW_32) % TWO_POW_32;
    this.reserve(8);
    this.view.setUint32(this.length, low, true);
    this.view.setInt32(this.length + 4, (value - low) / TWO_POW_32, true);
    this.length += 8;
  }

  raw(bytes: Uint8Array): void {
    this.reserve(bytes.length);
    this.bytes.set(bytes, this.length);
    this.length += bytes.length;
  }

  finish(): Uint8Array {
    return this.bytes.slice(0, this.length);
  }
}

class SnapshotReader {
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

/** A snapshot whose bytes do not describe a state of this configuration. */
export class SnapshotFormatError extends Error {
  override name = 'SnapshotFormatError';
}

function stateOf(exchange: Exchange): EngineState {
  // The core's state is private to Exchange; snapshot export/import is the one other reader.
  return exchange['s'];
}

/** The whole state of `exchange` as deterministic bytes. */
export function exportSnapshot(exchange: Exchange): Uint8Array {
  const s = stateOf(exchange);
  const w = new SnapshotWriter();
  const assetCount = s.catalog.assetCount;
  w.word(MAGIC);
  w.word(FORMAT_VERSION);
  w.number(s.orderNumber);
  w.number(s.lastSeq);
  w.number(s.lastTimeUs);
  w.number(assetCount);
  w.number(s.catalog.marketCount);

  w.number(s.accounts.count);
  for (let accountId = 1; accountId <= s.accounts.count; accountId++) {
    w.raw(s.accounts.keyOf(accountId));
    w.number(s.accounts.makerFeeBps[accountId]);
    w.number(s.accounts.takerFeeBps[accountId]);
    for (let assetIndex = 0; assetIndex < assetCount; assetIndex++) {
      w.number(s.ledger.availableUnits(accountId, assetIndex));
      w.number(s.ledger.lockedUnits(accountId, assetIndex));
    }
  }
  for (let assetIndex = 0; assetIndex < assetCount; assetIndex++) {
    w.number(s.ledger.supply[assetIndex]);
    w.number(s.ledger.feeUnits[assetIndex]);
  }

  const pool = s.pool;
  w.number(pool.liveCount);
  let written = 0;
  for (let accountId = 1; accountId <= s.accounts.count; accountId++) {
    for (let slot = pool.accountHead[accountId]; slot !== NO_SLOT; slot = pool.accountNext[slot]) {
      assert(pool.state[slot] === OrderState.Pending || pool.state[slot] === OrderState.Resting, 'snapshot between commands only');
      w.number(pool.orderId[slot]);
      w.number(pool.accountId[slot]);
      w.number(pool.marketIndex[slot]);
      w.number(pool.side[slot]);
      w.number(pool.orderType[slot]);
      w.number(pool.timeInForce[slot]);
      w.number(pool.selfTradePrevention[slot]);
      w.number(pool.flags[slot]);
      w.number(pool.state[slot]);
      w.number(pool.priceTicks[slot]);
      w.number(pool.qtyLots[slot]);
      w.number(pool.remainingLots[slot]);
      w.number(pool.executedLots[slot]);
      w.number(pool.executedQuoteUnits[slot]);
      w.number(pool.createdAtUs[slot]);
      w.number(pool.quoteQtyUnits[slot]);
      w.number(pool.quoteLimitUnits[slot]);
      w.number(pool.restNumber[slot]);
      w.number(pool.clientId[slot]);
      w.number(pool.requestId[slot]);
      w.number(pool.frontId[slot]);
      written++;
    }
  }
  assert(written === pool.liveCount, 'open orders outside every account list');

  for (const book of s.books) {
    w.number(book.updateId);
    w.number(book.lastTradeId);
    w.number(book.bandReferenceTicks);
    w.number(book.guardedReferenceTicks);
    w.number(book.guardedReferenceTimeUs);
    w.number(book.updateIdSeq);
    w.number(book.orderBookState);
    w.number(book.restCount());
    w.number(book.restingCount);
    w.number(book.pendingCount);
    w.number(book.pendingGtc[0]);
    w.number(book.pendingGtc[1]);
    exportSide(s, w, book.bids);
    exportSide(s, w, book.asks);
  }

  w.number(s.pending.count);
  for (let slot = s.pending.head; slot !== NO_SLOT; slot = pool.next[slot]) w.number(pool.orderId[slot]);
  w.word(END_MAGIC);
  return w.finish();
}

function exportSide(s: EngineState, w: SnapshotWriter, side: BookSide): void {
  w.number(side.count);
  for (let rank = 0; rank < side.count; rank++) {
    const level = side.atRank(rank);
    w.number(side.levelPrice[level]);
    w.number(side.levelQty[level]);
    w.number(side.levelOrders[level]);
    for (let slot = side.levelHead[level]; slot !== NO_SLOT; slot = s.pool.next[slot]) w.number(s.pool.orderId[slot]);
  }
}

/**
 * Loads a snapshot into a freshly constructed Exchange of the same configuration. Throws
 * SnapshotFormatError on bytes that do not fit it; the caller then compares the state hash.
 */
export function importSnapshot(exchange: Exchange, bytes: Uint8Array): void {
  const s = stateOf(exchange);
  const r = new SnapshotReader(bytes);
  const check = (condition: boolean, what: string): void => {
    if (!condition) throw new SnapshotFormatError(`snapshot: ${what}`);
  };
  check(s.lastSeq === -1 && s.accounts.count === 0 && s.pool.liveCount === 0, 'import needs a fresh engine');
  check(r.word() === MAGIC, 'not an engine snapshot (magic)');
  const version = r.word();
  check(version === FORMAT_VERSION || version === FORMAT_VERSION_NO_GUARD, 'unknown snapshot format version');
  s.orderNumber = r.number();
  s.lastSeq = r.number();
  s.lastTimeUs = r.number();
  const assetCount = s.catalog.assetCount;
  check(r.number() === assetCount && r.number() === s.catalog.marketCount, 'asset or market count differs from the configuration');

  const accountCount = r.number();
  check(accountCount >= 0 && accountCount <= s.accounts.capacity, 'more accounts than the configuration allows');
  for (let accountId = 1; accountId <= accountCount; accountId++) {
    const key = r.raw(KEY_BYTES).slice();
    check(s.accounts.find(key) === 0, 'an account key appears twice');
    check(s.accounts.add(key) === accountId, 'account ids are not dense');
    s.accounts.makerFeeBps[accountId] = r.number();
    s.accounts.takerFeeBps[accountId] = r.number();
    for (let assetIndex = 0; assetIndex < assetCount; assetIndex++) {
      const cell = s.ledger.cell(accountId, assetIndex);
      s.ledger.available[cell] = r.number();
      s.ledger.locked[cell] = r.number();
    }
  }
  for (let assetIndex = 0; assetIndex < assetCount; assetIndex++) {
    s.ledger.supply[assetIndex] = r.number();
    s.ledger.feeUnits[assetIndex] = r.number();
  }

  const pool = s.pool;
  const orderCount = r.number();
  check(orderCount >= 0 && orderCount <= pool.capacity, 'more open orders than the pool holds');
  for (let i = 0; i < orderCount; i++) {
    const orderId = r.number();
    const accountId = r.number();
    check(s.accounts.exists(accountId) && orderId > 0 && s.index.find(orderId) === NO_SLOT, 'an order names an unknown account or a repeated id');
    const slot = pool.open(accountId);
    pool.orderId[slot] = orderId;
    const marketIndex = r.number();
    check(marketIndex >= 0 && marketIndex < s.catalog.marketCount, 'an order names an unknown market');
    pool.marketIndex[slot] = marketIndex;
    pool.side[slot] = r.number();
    pool.orderType[slot] = r.number();
    pool.timeInForce[slot] = r.number();
    pool.selfTradePrevention[slot] = r.number();
    pool.flags[slot] = r.number();
    const state = r.number();
    check(state === OrderState.Pending || state === OrderState.Resting, 'an order is neither pending nor resting');
    // Stays Active until linked below: Book and PendingQueue set the final state themselves.
    pool.priceTicks[slot] = r.number();
    pool.qtyLots[slot] = r.number();
    pool.remainingLots[slot] = r.number();
    pool.executedLots[slot] = r.number();
    pool.executedQuoteUnits[slot] = r.number();
    pool.createdAtUs[slot] = r.number();
    pool.quoteQtyUnits[slot] = r.number();
    pool.quoteLimitUnits[slot] = r.number();
    pool.restNumber[slot] = r.number();
    pool.clientId[slot] = r.number();
    pool.requestId[slot] = r.number();
    pool.frontId[slot] = r.number();
    s.index.insert(orderId, slot);
  }

  for (const book of s.books) {
    book.updateId = r.number();
    book.lastTradeId = r.number();
    importReferences(s, r, book, version, check);
    book.updateIdSeq = r.number();
    book.orderBookState = r.number() as OrderBookState;
    setRestCounter(book, r.number());
    const restingCount = r.number();
    book.pendingCount = r.number();
    book.pendingGtc[0] = r.number();
    book.pendingGtc[1] = r.number();
    const linked = importSide(s, r, book, book.bids, check) + importSide(s, r, book, book.asks, check);
    check(linked === restingCount, 'a book counts other resting orders than its levels hold');
    book.restingCount = restingCount;
  }

  const pendingCount = r.number();
  for (let i = 0; i < pendingCount; i++) {
    const slot = s.index.find(r.number());
    check(slot !== NO_SLOT && pool.state[slot] === OrderState.Active, 'a pending order is unknown or already placed');
    s.pending.push(slot);
  }
  check(r.word() === END_MAGIC && r.atEnd(), 'snapshot does not end where its contents do');
  for (let slot = 0; slot < pool.capacity; slot++) {
    check(pool.state[slot] !== OrderState.Active, 'an open order is neither in a book nor pending');
  }
}

function importSide(s: EngineState, r: SnapshotReader, book: Book, side: BookSide, check: (c: boolean, what: string) => void): number {
  const pool = s.pool;
  const levelCount = r.number();
  check(levelCount >= 0 && levelCount <= side.capacity, 'more levels than a side holds');
  let orders = 0;
  for (let rank = 0; rank < levelCount; rank++) {
    const price = r.number();
    check(price > 0 && side.find(price as PriceTicks) < 0, 'a level price is repeated or not positive');
    const level = side.insert(price as PriceTicks);
    side.levelQty[level] = r.number();
    const count = r.number();
    check(count > 0, 'an empty level');
    side.levelOrders[level] = count;
    for (let i = 0; i < count; i++) {
      const slot = s.index.find(r.number());
      check(slot !== NO_SLOT && pool.state[slot] === OrderState.Active && pool.side[slot] === side.side, 'a level names an unknown or misplaced order');
      check(pool.marketIndex[slot] === book.marketIndex && pool.priceTicks[slot] === price, 'a level holds an order of another market or price');
      const tail = side.levelTail[level];
      pool.prev[slot] = tail;
      pool.next[slot] = NO_SLOT;
      if (tail === NO_SLOT) side.levelHead[level] = slot;
      else pool.next[tail] = slot;
      side.levelTail[level] = slot;
      pool.level[slot] = level;
      pool.state[slot] = OrderState.Resting;
      orders++;
    }
  }
  return orders;
}

/** The last trade price and guarded reference of a market (version 2: the reference starts at the last price). */
function importReferences(s: EngineState, r: SnapshotReader, book: Book, version: number, check: (c: boolean, what: string) => void): void {
  const market = s.catalog.markets[book.marketIndex];
  book.bandReferenceTicks = r.number();
  const banded = market.maxMultiplierBps !== undefined;
  if (version === FORMAT_VERSION_NO_GUARD) {
    book.guardedReferenceTicks = banded ? book.bandReferenceTicks : 0;
    book.guardedReferenceTimeUs = banded && book.bandReferenceTicks > 0 ? s.lastTimeUs : 0;
    return;
  }
  book.guardedReferenceTicks = r.number();
  book.guardedReferenceTimeUs = r.number();
  const inRange = (ticks: number) => ticks === 0 || (ticks >= market.minPriceTicks && ticks <= market.maxPriceTicks);
  check(inRange(book.bandReferenceTicks) && inRange(book.guardedReferenceTicks), 'a reference price is outside its market\'s price range');
  check((book.guardedReferenceTicks === 0) === (book.bandReferenceTicks === 0), 'a market has one reference price without the other');
  check(book.guardedReferenceTimeUs >= 0 && book.guardedReferenceTimeUs <= s.lastTimeUs, 'a guarded reference moved after the snapshot\'s time');
}

function setRestCounter(book: Book, value: number): void {
  // The counter is private to Book (only rest() advances it); a snapshot restores it.
  book['restCounter'] = value;
}
