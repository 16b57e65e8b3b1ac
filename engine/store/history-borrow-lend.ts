// The borrow/lend part of the LMDB history (engine/store/history-account.ts holds the database and
// documents every key): each account's positions, open and closed, and the pools' hourly samples.
//
//   ['bp', account, positionId] → JSON BorrowLendPositionValue: the position as its BorrowLend
//                                 records left it (side and source of the move that opened it,
//                                 when, when it closed, its quantity and interest now, the mean of
//                                 the annual rates of its hours of interest)
//   ['pm', assetId, hourUs]     → LendPoolSampleRecord bytes: the pool after that hour's interest
//
// A position's row is rewritten by each record of it, so listing positions is a key range per
// account. Rows start with this version: positions older than it are rebuilt once, at the first
// start, from the stored moves and interest ('bl', 'bi'), where a move that closed a position
// before the records carried its id (position id 0) closes the account's open position of that
// asset.

import { BorrowLendEvent, type BorrowLendRec } from '../bus/types.js';
import {
  BORROW_LEND_SOURCE_NAMES, borrowLendPositionValueJson, parseBorrowLendPositionValue, type BorrowLendPositionValue,
} from './generated/values.js';

export type { BorrowLendPositionValue };

function isInterest(event: BorrowLendEvent): boolean {
  return event === BorrowLendEvent.BorrowInterest || event === BorrowLendEvent.LendInterest;
}

function isBorrowSide(event: BorrowLendEvent): boolean {
  return event === BorrowLendEvent.Borrow || event === BorrowLendEvent.BorrowRepay || event === BorrowLendEvent.BorrowInterest;
}

/** The position `prev` (undefined: not seen yet) after the move or hour of interest `r` of it. */
export function positionAfter(prev: BorrowLendPositionValue | undefined, r: BorrowLendRec): BorrowLendPositionValue {
  const opened: BorrowLendPositionValue = prev ?? {
    positionId: r.positionId, accountId: r.accountId, assetId: r.assetId, side: isBorrowSide(r.event) ? 'Borrow' : 'Lend',
    source: BORROW_LEND_SOURCE_NAMES[r.source] ?? 'Manual', openedUs: r.timeUs, closedUs: null,
    quantityUnits: 0, interestUnits: 0, hours: 0, rateMean: 0, rateRest: 0,
  };
  const quantityUnits = r.lentUnits + r.borrowedUnits;
  const next = { ...opened, quantityUnits, interestUnits: r.interestUnits, closedUs: quantityUnits === 0 ? r.timeUs : null };
  if (isInterest(r.event)) {
    const hours = BigInt(opened.hours) + 1n;
    const total = BigInt(opened.rateMean) * BigInt(opened.hours) + BigInt(opened.rateRest) + BigInt(r.rate);
    next.hours = Number(hours);
    next.rateMean = Number(total / hours);
    next.rateRest = Number(total % hours);
  }
  return next;
}

/** The store the rows live in: the history database, read and written in the journal worker's transaction. */
export interface PositionRows {
  get(key: Array<string | number>): Buffer | undefined;
  put(key: Array<string | number>, value: Buffer): unknown;
}

/** Rewrites the row of the position `r` moved or paid interest on. */
export function keepPosition(rows: PositionRows, r: BorrowLendRec): void {
  const key = ['bp', r.accountId, r.positionId];
  const stored = rows.get(key);
  const next = positionAfter(stored === undefined ? undefined : parseBorrowLendPositionValue(stored.toString()), r);
  rows.put(key, Buffer.from(borrowLendPositionValueJson(next)));
}

/** One stored move or hour of interest, with where its key orders it. */
export interface StoredRecord {
  rec: BorrowLendRec;
  /** 0 for interest ('bi'), 1 for a move ('bl'): a command's hours run before its own move. */
  kindOrder: number;
  ordinal: number;
}

/**
 * Rebuilds every position row from stored records (header), in time order per account. A move
 * stored with position id 0 closed the account's open position of its asset: it takes that id
 * and that position's interest.
 */
export function rebuildPositions(rows: PositionRows, records: StoredRecord[]): void {
  records.sort((a, b) => a.rec.accountId - b.rec.accountId || a.rec.timeUs - b.rec.timeUs || a.rec.seq - b.rec.seq
    || a.kindOrder - b.kindOrder || a.ordinal - b.ordinal);
  const open = new Map<string, BorrowLendPositionValue>();
  for (const { rec } of records) {
    const asset = `${rec.accountId}:${rec.assetId}`;
    const current = open.get(asset);
    if (rec.positionId === 0) {
      if (current === undefined) continue;
      rec.positionId = current.positionId;
      rec.interestUnits = current.interestUnits;
    }
    const next = positionAfter(current !== undefined && current.positionId === rec.positionId ? current : undefined, rec);
    rows.put(['bp', rec.accountId, rec.positionId], Buffer.from(borrowLendPositionValueJson(next)));
    if (next.closedUs === null) open.set(asset, next);
    else open.delete(asset);
  }
}
