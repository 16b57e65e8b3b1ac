// Account history in LMDB (issue 4): orders, fills, deposits, withdrawals and dust conversions
// per account, written by the journal worker in the same LMDB transaction as the journal batch
// that produced them, and read by front threads through LMDB read transactions.
//
// Why here: the history endpoints must survive restarts and page through more than the engine
// keeps in memory (it forgets an order once it is final). Writing in the journal's transaction
// makes history exactly as durable as the journal: a response released after seqDurable is
// always visible in history (read-your-writes), and a crash never leaves history ahead of or
// behind the journal.
//
// What the sink sees is the outbound record stream. Each Stamped record starts a command; every
// record after it until the next Stamped one is that command's output or a query's (queries take
// no sequence number and are answered in stream order). It keeps:
//   orders       from every order record that is an event for everyone (accepted, fill, cancelled,
//                expired) or carries a final status (filled, cancelled, expired). Query rows and
//                the response to a resting place only repeat an open state the events already
//                carry, so they are skipped, and a read never causes a write.
//   fills        from every fill event: one per party, with fee, fee asset, maker flag, trade id.
//   deposits,    from the Stamped Deposit / Withdraw / ConvertDust command and its Result (the first
//   withdrawals, Result after a Stamped record is the command's own: activations of delayed orders
//   dust         answer with order records, never with results). A withdrawal's destination comes
//                from the intent the front thread stored before submitting (keyed by the digest
//                the command carries). ConfirmWithdrawal marks it confirmed.
//
// Layout: one LMDB database "history-account", keys are ordered-binary arrays, values bytes:
//   ['o',  account, orderId]                               → OrderRecord bytes (the latest state)
//   ['ot', account, createdAtUs, orderId]                  → empty   (orders by time)
//   ['om', account, marketId, createdAtUs, orderId]        → empty   (orders by market and time)
//   ['f',  account, timeUs, seq, ordinal]                  → OrderRecord bytes of the fill event
//   ['fm', account, marketId, timeUs, seq, ordinal]        → the same bytes (fills by market)
//   ['fo', account, orderId, timeUs, seq, ordinal]         → the same bytes (fills by order)
//   ['d',  account, timeUs, id]                            → JSON deposit    (id = its seq)
//   ['w',  account, timeUs, id]                            → JSON withdrawal (id = its seq)
//   ['wi', id]                                             → JSON [account, timeUs] (find by id)
//   ['wp', id]                                             → empty   (withdrawals still pending)
//   ['u',  account, timeUs, id]                            → JSON dust conversion (id = its seq)
//   ['lp', marketId]                                       → JSON [priceTicks, tradeId, timeUs] of
//                                                            the market's last trade (mark prices
//                                                            for collateral and dust, restart-proof)
// Amounts are stored as integers (units, ticks, lots) with asset and market ids; front threads
// format them with the configuration. Every index a filter needs is a key range, so a page costs
// O(offset + limit) entries, never a scan of the account's whole history (a fillType or clientId
// filter is the exception: it skips non-matching entries of the range).
//
// A second database, "account-settings", holds what is not engine state: account settings
// (PATCH /api/v1/account), the operator's address book (two-factor-exempt addresses) and
// two-factor secrets, and withdrawal intents. Front threads write it directly.

import { createHash } from 'node:crypto';
import type { Database, RootDatabase } from 'lmdb';
import { ORDER_BYTES, newOrderRec, newResultRec, newStampedRec, newTradeRec, readOrder, readResult, readStamped, readTrade, recordType } from '../codec.js';
import { CommandKind, FRONT_ID_NONE, OrderEvent, OrderStatus, RecordType, ResultCode, type OrderRec } from '../types.js';

export type HistoryKey = Array<string | number>;

export const HISTORY_DB = 'history-account';
export const SETTINGS_DB = 'account-settings';

export function openHistoryDbs(root: RootDatabase): { history: Database<Buffer, HistoryKey>; settings: Database<unknown, HistoryKey> } {
  return {
    history: root.openDB<Buffer, HistoryKey>({ name: HISTORY_DB, encoding: 'binary' }),
    settings: root.openDB<unknown, HistoryKey>({ name: SETTINGS_DB, encoding: 'json' }),
  };
}

export interface DepositRecord {
  id: number;
  accountId: number;
  assetId: number;
  amountUnits: number;
  timeUs: number;
}

export type WithdrawalStatus = 'pending' | 'confirmed';

export interface WithdrawalRecord {
  id: number;
  accountId: number;
  assetId: number;
  amountUnits: number;
  timeUs: number;
  blockchain: string;
  address: string;
  clientId: string | null;
  status: WithdrawalStatus;
  /** Simulated chain: a digest of the withdrawal, set when it is confirmed. */
  transactionHash: string | null;
  confirmedUs: number | null;
}

export interface DustRecord {
  id: number;
  accountId: number;
  marketId: number;
  amountUnits: number;
  payoutUnits: number;
  timeUs: number;
}

/** What the front thread stores before submitting a Withdraw; the command carries its digest. */
export interface WithdrawalIntent {
  accountId: number;
  blockchain: string;
  address: string;
  clientId: string | null;
}

/** The 32-byte digest a Withdraw command carries for its intent. */
export function intentDigest(intent: WithdrawalIntent, nonce: string): Buffer {
  return createHash('sha256').update(JSON.stringify([intent.accountId, intent.blockchain, intent.address, intent.clientId, nonce])).digest();
}

export function intentKey(digest: Uint8Array): HistoryKey {
  return ['intent', Buffer.from(digest).toString('hex')];
}

/** The simulated chain's transaction hash of a confirmed withdrawal: deterministic, 32 bytes hex. */
export function simulatedTransactionHash(id: number, address: string): string {
  return createHash('sha256').update(`withdrawal:${id}:${address}`).digest('hex');
}

function json(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value));
}

function isFinal(status: OrderStatus): boolean {
  return status === OrderStatus.Filled || status === OrderStatus.Cancelled || status === OrderStatus.Expired;
}

/** The journal worker's sink: onRecord is called for every outbound record, in ring order. */
export class AccountHistorySink {
  private readonly history: Database<Buffer, HistoryKey>;
  private readonly settings: Database<unknown, HistoryKey>;
  private readonly stamped = newStampedRec();
  private readonly order = newOrderRec();
  private readonly result = newResultRec();
  private readonly trade = newTradeRec();
  /** The current command awaits its first Result (Deposit, Withdraw, ConvertDust). */
  private awaitingResult = false;
  /** Fills recorded under the current sequence number (the key's ordinal). */
  private fillOrdinal = 0;
  /** Withdrawals not yet confirmed, by id (a confirmation may arrive in the batch that wrote them). */
  private readonly pending = new Map<number, WithdrawalRecord>();

  constructor(root: RootDatabase) {
    const dbs = openHistoryDbs(root);
    this.history = dbs.history;
    this.settings = dbs.settings;
    for (const { key } of this.history.getRange({ start: ['wp', 0], end: ['wp', Number.MAX_SAFE_INTEGER] })) {
      const id = key[1] as number;
      const where = JSON.parse(this.history.get(['wi', id])!.toString()) as [number, number];
      const value = this.history.get(['w', where[0], where[1], id]);
      if (value) this.pending.set(id, JSON.parse(value.toString()) as WithdrawalRecord);
    }
  }

  onRecord(view: DataView, offset: number): void {
    const type = recordType(view, offset);
    if (type === RecordType.Stamped) return this.onStamped(view, offset);
    if (type === RecordType.Order) return this.onOrder(view, offset);
    if (type === RecordType.Trade) {
      readTrade(view, offset, this.trade);
      this.history.put(['lp', this.trade.marketId], json([this.trade.priceTicks, this.trade.tradeId, this.trade.timeUs]));
      return;
    }
    if (type === RecordType.Result && this.awaitingResult) {
      this.awaitingResult = false;
      readResult(view, offset, this.result);
      if (this.result.code === ResultCode.Ok) this.onCapitalResult(this.result.value);
    }
  }

  private onStamped(view: DataView, offset: number): void {
    readStamped(view, offset, this.stamped);
    const kind = this.stamped.command.kind;
    this.fillOrdinal = 0;
    this.awaitingResult = kind === CommandKind.Deposit || kind === CommandKind.Withdraw || kind === CommandKind.ConvertDust;
    if (kind === CommandKind.ConfirmWithdrawal) this.confirm(this.stamped.command.orderId, this.stamped.command.accountId);
  }

  private onOrder(view: DataView, offset: number): void {
    const rec = this.order;
    readOrder(view, offset, rec);
    if (rec.frontId !== FRONT_ID_NONE && !isFinal(rec.status)) return;
    const bytes = Buffer.from(new Uint8Array(view.buffer, view.byteOffset + offset, ORDER_BYTES));
    const account = rec.accountId;
    this.history.put(['o', account, rec.orderId], bytes);
    if (rec.event === OrderEvent.Fill) {
      const ordinal = this.fillOrdinal++;
      this.history.put(['f', account, rec.timeUs, rec.seq, ordinal], bytes);
      this.history.put(['fm', account, rec.marketId, rec.timeUs, rec.seq, ordinal], bytes);
      this.history.put(['fo', account, rec.orderId, rec.timeUs, rec.seq, ordinal], bytes);
      return;
    }
    // Index entries are the same keys on every write of an order (createdAt never changes).
    const empty = Buffer.alloc(0);
    this.history.put(['ot', account, rec.createdAtUs, rec.orderId], empty);
    this.history.put(['om', account, rec.marketId, rec.createdAtUs, rec.orderId], empty);
  }

  private onCapitalResult(value: number): void {
    const s = this.stamped;
    const c = s.command;
    const id = s.seq;
    if (c.kind === CommandKind.Deposit) {
      const deposit: DepositRecord = { id, accountId: c.accountId, assetId: c.assetId, amountUnits: c.amountUnits, timeUs: s.timeUs };
      this.history.put(['d', c.accountId, s.timeUs, id], json(deposit));
    } else if (c.kind === CommandKind.ConvertDust) {
      const dust: DustRecord = { id, accountId: c.accountId, marketId: c.marketId, amountUnits: c.amountUnits, payoutUnits: value, timeUs: s.timeUs };
      this.history.put(['u', c.accountId, s.timeUs, id], json(dust));
    } else if (c.kind === CommandKind.Withdraw) {
      const key = intentKey(c.key);
      const intent = this.settings.get(key) as WithdrawalIntent | undefined;
      const withdrawal: WithdrawalRecord = {
        id, accountId: c.accountId, assetId: c.assetId, amountUnits: c.amountUnits, timeUs: s.timeUs,
        blockchain: intent?.blockchain ?? '', address: intent?.address ?? '', clientId: intent?.clientId ?? null,
        status: 'pending', transactionHash: null, confirmedUs: null,
      };
      if (intent) this.settings.remove(key);
      this.history.put(['w', c.accountId, s.timeUs, id], json(withdrawal));
      this.history.put(['wi', id], json([c.accountId, s.timeUs]));
      this.history.put(['wp', id], Buffer.alloc(0));
      this.pending.set(id, withdrawal);
    }
  }

  private confirm(id: number, accountId: number): void {
    const withdrawal = this.pending.get(id);
    if (!withdrawal || withdrawal.accountId !== accountId) return;
    this.pending.delete(id);
    withdrawal.status = 'confirmed';
    withdrawal.confirmedUs = this.stamped.timeUs;
    withdrawal.transactionHash = simulatedTransactionHash(id, withdrawal.address);
    this.history.put(['w', withdrawal.accountId, withdrawal.timeUs, id], json(withdrawal));
    this.history.remove(['wp', id]);
  }
}

// ---------------------------------------------------------------------------------------------
// Reads (front threads)

export interface Page {
  limit: number;
  offset: number;
  /** Newest first. */
  descending: boolean;
}

export interface TimeRange {
  fromUs: number;
  /** Inclusive. */
  toUs: number;
}

const MAX_ID = Number.MAX_SAFE_INTEGER;

export class AccountHistoryReader {
  private readonly history: Database<Buffer, HistoryKey>;
  readonly settings: Database<unknown, HistoryKey>;

  constructor(root: RootDatabase) {
    const dbs = openHistoryDbs(root);
    this.history = dbs.history;
    this.settings = dbs.settings;
  }

  /** Keys of `prefix` whose next element lies in [low, high], in the page's order. */
  private *range(prefix: HistoryKey, low: number, high: number, page: Page, skip = page.offset): Generator<{ key: HistoryKey; value: Buffer }> {
    const lowKey = [...prefix, low];
    const highKey = [...prefix, high + 1];
    const options = page.descending
      ? { start: highKey, end: lowKey, reverse: true, offset: skip }
      : { start: lowKey, end: highKey, offset: skip };
    for (const entry of this.history.getRange(options)) yield entry as { key: HistoryKey; value: Buffer };
  }

  private decodeOrder(value: Buffer): OrderRec {
    const rec = newOrderRec();
    readOrder(new DataView(value.buffer, value.byteOffset, value.length), 0, rec);
    return rec;
  }

  /** Orders by creation time, optionally of one market or one order id. */
  orders(accountId: number, filter: { marketId?: number; orderId?: number }, page: Page): OrderRec[] {
    if (filter.orderId !== undefined) {
      const value = this.history.get(['o', accountId, filter.orderId]);
      if (!value || page.offset > 0) return [];
      const rec = this.decodeOrder(value);
      return filter.marketId === undefined || rec.marketId === filter.marketId ? [rec] : [];
    }
    const prefix = filter.marketId === undefined ? ['ot', accountId] : ['om', accountId, filter.marketId];
    const out: OrderRec[] = [];
    for (const { key } of this.range(prefix, 0, MAX_ID, page)) {
      if (out.length >= page.limit) break;
      const value = this.history.get(['o', accountId, key[key.length - 1] as number]);
      if (value) out.push(this.decodeOrder(value));
    }
    return out;
  }

  /** Fill events (OrderRecords with event Fill) in time order, filtered by market or order. */
  fills(accountId: number, filter: { marketId?: number; orderId?: number }, range: TimeRange, page: Page): OrderRec[] {
    let prefix: HistoryKey = ['f', accountId];
    if (filter.orderId !== undefined) prefix = ['fo', accountId, filter.orderId];
    else if (filter.marketId !== undefined) prefix = ['fm', accountId, filter.marketId];
    const out: OrderRec[] = [];
    // With both filters the order index is used and the market checked per entry (an order
    // belongs to one market), so the offset counts matching entries only.
    let skip = page.offset;
    for (const { value } of this.range(prefix, range.fromUs, range.toUs, page, filter.orderId !== undefined ? 0 : skip)) {
      if (out.length >= page.limit) break;
      const rec = this.decodeOrder(value);
      if (filter.marketId !== undefined && rec.marketId !== filter.marketId) continue;
      if (filter.orderId !== undefined && skip > 0) {
        skip--;
        continue;
      }
      out.push(rec);
    }
    return out;
  }

  private jsonRange<T>(prefix: HistoryKey, range: TimeRange, page: Page, keep: (value: T) => boolean = () => true): T[] {
    const out: T[] = [];
    let skip = page.offset;
    for (const { value } of this.range(prefix, range.fromUs, range.toUs, page, 0)) {
      if (out.length >= page.limit) break;
      const item = JSON.parse(value.toString()) as T;
      if (!keep(item)) continue;
      if (skip > 0) {
        skip--;
        continue;
      }
      out.push(item);
    }
    return out;
  }

  deposits(accountId: number, range: TimeRange, page: Page): DepositRecord[] {
    return this.jsonRange<DepositRecord>(['d', accountId], range, page);
  }

  withdrawals(accountId: number, filter: { id?: number; clientId?: string }, range: TimeRange, page: Page): WithdrawalRecord[] {
    if (filter.id !== undefined) {
      const where = this.history.get(['wi', filter.id]);
      if (!where) return [];
      const [owner, timeUs] = JSON.parse(where.toString()) as [number, number];
      if (owner !== accountId || timeUs < range.fromUs || timeUs > range.toUs || page.offset > 0) return [];
      const value = this.history.get(['w', owner, timeUs, filter.id]);
      const item = value ? (JSON.parse(value.toString()) as WithdrawalRecord) : undefined;
      return item && (filter.clientId === undefined || item.clientId === filter.clientId) ? [item] : [];
    }
    return this.jsonRange<WithdrawalRecord>(['w', accountId], range, page, (w) => filter.clientId === undefined || w.clientId === filter.clientId);
  }

  dust(accountId: number, filter: { id?: number; marketId?: number }, page: Page): DustRecord[] {
    return this.jsonRange<DustRecord>(['u', accountId], { fromUs: 0, toUs: MAX_ID - 1 }, page,
      (d) => (filter.id === undefined || d.id === filter.id) && (filter.marketId === undefined || d.marketId === filter.marketId));
  }

  /** The last trade price of a market in ticks, or 0 before its first trade. */
  lastPriceTicks(marketId: number): number {
    const value = this.history.get(['lp', marketId]);
    return value ? (JSON.parse(value.toString()) as [number, number, number])[0] : 0;
  }

  /** Every withdrawal not yet confirmed: [id, accountId, timeUs] (the simulated chain's work list). */
  pendingWithdrawals(): Array<[number, number, number]> {
    const out: Array<[number, number, number]> = [];
    for (const { key } of this.history.getRange({ start: ['wp', 0], end: ['wp', MAX_ID] })) {
      const id = key[1] as number;
      const where = this.history.get(['wi', id]);
      if (!where) continue;
      const [accountId, timeUs] = JSON.parse(where.toString()) as [number, number];
      out.push([id, accountId, timeUs]);
    }
    return out;
  }
}
