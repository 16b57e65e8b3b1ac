// A deterministic digest of the whole logical state: SHA-256 over a canonical walk.
//
// The walk visits what the exchange *is*, never how it is stored: accounts in id order with keys,
// balances and fee rates, asset supplies and collected fees, each market's counters (a banded
// market's last price and guarded reference price among them), order book state and its book
// best level first with each level's orders in time priority, the pending queue in sequence order, and each account's open
// orders in placement order. Pool slot numbers and free-list order are left out, so two engines
// that reached the same state by different slot histories (a snapshot restore, say) agree.
// Every number is a safe non-negative integer, written as two little-endian 32-bit words.

import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { assert, isUnsignedSafe } from './assert.js';
import type { BookSide } from './book/book.js';
import { NO_SLOT } from './book/orders.js';
import type { EngineState } from './state.js';

const TWO_POW_32 = 0x100000000;
const CHUNK_BYTES = 4096;

class Digest {
  private readonly hash = sha256.create();
  private readonly chunk = new Uint8Array(CHUNK_BYTES);
  private readonly view = new DataView(this.chunk.buffer);
  private used = 0;

  word(value: number): void {
    if (this.used === CHUNK_BYTES) this.flush();
    this.view.setUint32(this.used, value >>> 0, true);
    this.used += 4;
  }

  number(value: number): void {
    assert(isUnsignedSafe(value), 'state hash of a value that is not a safe non-negative integer');
    const low = value % TWO_POW_32;
    this.word(low);
    this.word((value - low) / TWO_POW_32);
  }

  bytes(bytes: Uint8Array): void {
    this.flush();
    this.hash.update(bytes);
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

/**
 * The state hash. `withGuardedReference` false leaves out each banded market's guarded reference
 * price and its time: the hash as engines before the guarded reference computed it, which
 * snapshot files and clean-stop marks they wrote still carry (Exchange.hasStateHash).
 */
export function hashState(s: EngineState, withGuardedReference = true): string {
  const digest = new Digest();
  digest.number(s.catalog.assetCount);
  digest.number(s.catalog.marketCount);
  digest.number(s.orderNumber);
  digest.number(s.accounts.count);
  for (let accountId = 1; accountId <= s.accounts.count; accountId++) {
    digest.bytes(s.accounts.keyOf(accountId));
    for (let assetIndex = 0; assetIndex < s.catalog.assetCount; assetIndex++) {
      digest.number(s.ledger.availableUnits(accountId, assetIndex));
      digest.number(s.ledger.lockedUnits(accountId, assetIndex));
    }
    digest.number(s.accounts.makerFeeBps[accountId]);
    digest.number(s.accounts.takerFeeBps[accountId]);
  }
  for (let assetIndex = 0; assetIndex < s.catalog.assetCount; assetIndex++) {
    digest.number(s.ledger.supply[assetIndex]);
    digest.number(s.ledger.feeUnits[assetIndex]);
  }
  for (const book of s.books) {
    digest.number(book.updateId);
    digest.number(book.lastTradeId);
    // Only a banded market keeps a band reference; an unbanded one has nothing more to hash.
    if (s.catalog.markets[book.marketIndex].maxMultiplierBps !== undefined) {
      digest.number(book.bandReferenceTicks);
      if (withGuardedReference) {
        digest.number(book.guardedReferenceTicks);
        digest.number(book.guardedReferenceTimeUs);
      }
    }
    digest.number(book.restCount());
    digest.number(book.restingCount);
    digest.number(book.pendingCount);
    digest.number(book.orderBookState);
    hashSide(s, digest, book.bids);
    hashSide(s, digest, book.asks);
  }
  digest.number(s.pending.count);
  for (let slot = s.pending.head; slot !== NO_SLOT; slot = s.pool.next[slot]) hashOrder(s, digest, slot);
  for (let accountId = 1; accountId <= s.accounts.count; accountId++) {
    digest.number(s.pool.accountOpenCount[accountId]);
    for (let slot = s.pool.accountHead[accountId]; slot !== NO_SLOT; slot = s.pool.accountNext[slot]) digest.number(s.pool.orderId[slot]);
  }
  return digest.hex();
}

function hashSide(s: EngineState, digest: Digest, side: BookSide): void {
  digest.number(side.count);
  for (let rank = 0; rank < side.count; rank++) {
    const level = side.atRank(rank);
    digest.number(side.levelPrice[level]);
    digest.number(side.levelQty[level]);
    digest.number(side.levelOrders[level]);
    for (let slot = side.levelHead[level]; slot !== NO_SLOT; slot = s.pool.next[slot]) hashOrder(s, digest, slot);
  }
}

function hashOrder(s: EngineState, digest: Digest, slot: number): void {
  const pool = s.pool;
  digest.number(pool.orderId[slot]);
  digest.number(pool.accountId[slot]);
  digest.number(pool.marketIndex[slot]);
  digest.number(pool.side[slot]);
  digest.number(pool.orderType[slot]);
  digest.number(pool.quoteQtyUnits[slot]);
  digest.number(pool.quoteLimitUnits[slot]);
  digest.number(pool.priceTicks[slot]);
  digest.number(pool.qtyLots[slot]);
  digest.number(pool.remainingLots[slot]);
  digest.number(pool.executedLots[slot]);
  digest.number(pool.executedQuoteUnits[slot]);
  digest.number(pool.createdAtUs[slot]);
  digest.number(pool.restNumber[slot]);
  digest.number(pool.clientId[slot]);
  digest.number(pool.flags[slot]);
  digest.number(pool.timeInForce[slot]);
  digest.number(pool.selfTradePrevention[slot]);
  digest.number(pool.state[slot]);
  digest.number(pool.frontId[slot]);
  digest.number(pool.requestId[slot]);
}
