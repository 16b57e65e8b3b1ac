// Account history in LMDB: orders, fills, deposits, withdrawals and dust conversions
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
//                the command carries). ConfirmWithdrawal marks it confirmed. A ConvertAllDust
//                command's conversions come from its Dust records, one entry per converted asset,
//                all under the command's seq as id (the key's last part, the market, keeps them apart).
//
// Layout: one LMDB database "history-account", keys are ordered-binary arrays, values bytes:
//   ['o',  account, orderId]                               → OrderRecord bytes (the latest state)
//   ['om', account, marketId, createdAtUs, orderId]        → empty   (orders by market and time)
// A listing across all markets merges the per-market ranges (one iterator per configured market,
// a k-way merge on the key's time part), so each order and each fill costs one index write.
//   ['fm', account, marketId, timeUs, seq, ordinal]        → OrderRecord bytes of the fill event
//                                                            (its order's system order type with it;
//                                                            see decodeOrder for records stored
//                                                            before the type existed)
//   ['d',  account, timeUs, id]                            → JSON DepositValue    (id = its seq)
//   ['w',  account, timeUs, id]                            → JSON WithdrawalValue (id = its seq)
//   ['wi', id]                                             → JSON WithdrawalPlace [account, timeUs]
//                                                            (find by id)
//   ['wp', id]                                             → empty   (withdrawals still pending)
//   ['u',  account, timeUs, id]                            → JSON DustValue (id = its seq)
//   ['u',  account, timeUs, id, marketId]                  → JSON DustValue of one ConvertAllDust
//                                                            conversion (id = its command's seq)
//   ['bl', account, timeUs, seq, ordinal]                  → BorrowLendRecord bytes of a move
//                                                            (Borrow, BorrowRepay, Lend, LendRedeem;
//                                                            ordinal: one command may make several,
//                                                            a redemption and a borrow, or a repay
//                                                            per fill; moves stored before the
//                                                            ordinal have the key without it)
//   ['bi', account, timeUs, seq, ordinal]                  → BorrowLendRecord bytes of an hour's
//                                                            interest (ordinal: a command that
//                                                            catches up several hours pays several)
//   ['bp', account, positionId]                            → JSON BorrowLendPositionValue: a
//                                                            position, open or closed
//                                                            (history-borrow-lend.ts)
//   ['pm', assetId, hourUs]                                → LendPoolSampleRecord bytes: a pool
//                                                            after an hour of interest
//   ['bp-built']                                           → empty: the position rows exist
//   ['fp', account, intervalEndUs, marketId]              → FundingPaymentRecord bytes of a
//                                                            perpetual funding payment
//   ['pr', account, positionId], ['pp', account, positionId],
//   ['st', account, timeUs, seq, ordinal]                  → a perpetual position's latest event,
//                                                            its row, and its settlements
//                                                            (history-perp.ts)
//   ['lp', marketId]                                       → JSON LastPriceValue [priceTicks,
//                                                            tradeId, timeUs] of the market's last
//                                                            trade (mark prices for collateral and
//                                                            dust, restart-proof)
// The JSON values are declared in schemas/exchange.fbs as (json) tables; the generated
// engine/store/generated/values.ts writes their text and checks their shape when they are read.
// Amounts are stored as integers (units, ticks, lots) with asset and market ids; front threads
// format them with the configuration. Every filter is a key range, so a page costs
// O(offset + limit) entries, never a scan of the account's whole history. Exceptions, chosen to
// keep writes down (each put costs the journal worker ~2 µs, see bench/history-sink.bench.ts):
// fills of one order are read from its market's range between its creation and its last update,
// skipping other orders' fills of that time; clientId, dust and fill type filters skip non-matching entries.
// Writes per command are kept low: an order's index entries are written with its first record
// only, a response repeating the state its event just wrote is skipped, a market's last price is
// written only when it changes, and an order's row ('o') is written once per command, with the
// state it has when the command ends (a taker accepted and filled by one command: one put, not
// two). The rows wait from the command's Stamped record to its last record (HeaderFlag.CommandEnd);
// the journal worker's transaction ends only at a command's end, so they always join the
// transaction of the command that changed them, and every put stays in the stream's order per key.
// The sink runs inside the batch's synchronous transaction, where a put is written at once: the
// value buffers of fills and rows are reused (putSync, synchronous in any context).
//
// A second database, "account-settings", holds what is not engine state: the operator's address
// book (two-factor-exempt addresses), two-factor secrets and withdrawal intents. Front threads
// write it directly. Account settings (PATCH /api/v1/account) are engine state; the ones older
// versions kept here are moved into the engine once at start (src/front/legacy-settings.ts).

import { createHash } from 'node:crypto';
import type { Database, RootDatabase } from 'lmdb';
import {
  BORROW_LEND_BYTES, FUNDING_PAYMENT_BYTES, LEND_POOL_SAMPLE_BYTES, ORDER_BYTES, POSITION_BYTES, newBorrowLendRec, newDustRec, newFundingPaymentRec, newLendPoolSampleRec, newOrderRec, newPositionRec, newResultRec, newStampedRec, newTradeRec,
  readBorrowLend, readDust, readFundingPayment, readLendPoolSample, readOrder, readPosition, readResult, readStamped, readTrade, recordFlags, recordType,
} from '../bus/codec.js';
import { BorrowLendEvent, CommandKind, FRONT_ID_NONE, HeaderFlag, OrderEvent, OrderFlag, OrderStatus, RecordType, ResultCode, SystemOrderType, type BorrowLendRec, type FundingPaymentRec, type LendPoolSampleRec, type OrderRec, type PositionRec } from '../bus/types.js';
import { keepPosition, rebuildPositions, type BorrowLendPositionValue, type StoredRecord } from './history-borrow-lend.js';
import { keepPositionEvent, type LastFill } from './history-perp.js';
import { parseBorrowLendPositionValue, parsePerpPositionValue, parsePerpSettlementValue, type PerpPositionValue, type PerpSettlementValue } from './generated/values.js';
import {
  depositValueJson, dustValueJson, lastPriceValueJson, parseDepositValue, parseDustValue, parseLastPriceValue, parseWithdrawalPlace,
  parseWithdrawalValue, withdrawalIntentFrom, withdrawalPlaceJson, withdrawalValueJson,
  type DepositValue, type DustValue, type WithdrawalIntent, type WithdrawalStatus, type WithdrawalValue,
} from './generated/values.js';

export type HistoryKey = Array<string | number>;

export const HISTORY_DB = 'history-account';
export const SETTINGS_DB = 'account-settings';

export function openHistoryDbs(root: RootDatabase): { history: Database<Buffer, HistoryKey>; settings: Database<unknown, HistoryKey> } {
  return {
    history: root.openDB<Buffer, HistoryKey>({ name: HISTORY_DB, encoding: 'binary' }),
    settings: root.openDB<unknown, HistoryKey>({ name: SETTINGS_DB, encoding: 'json' }),
  };
}

// The values are declared in schemas/exchange.fbs ((json) tables) and encoded and checked by
// engine/store/generated/values.ts; the names below are the ones the rest of the code reads.
export type DepositRecord = DepositValue;
export type WithdrawalRecord = WithdrawalValue;
export type DustRecord = DustValue;
export type { WithdrawalIntent, WithdrawalStatus };

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
  private readonly dust = newDustRec();
  private readonly borrowLend = newBorrowLendRec();
  private readonly poolSample = newLendPoolSampleRec();
  private readonly fundingPayment = newFundingPaymentRec();
  private readonly position = newPositionRec();
  /** Each account's last fill in the current command (the cause of its position events). */
  private readonly lastFills = new Map<number, LastFill>();
  /** The funding payment just written, until the position event that follows it. */
  private pendingFunding: { accountId: number; marketId: number; units: number } | null = null;
  /** The current command awaits its first Result (Deposit, Withdraw, ConvertDust). */
  private awaitingResult = false;
  /** Fills recorded under the current sequence number (the key's ordinal). */
  private fillOrdinal = 0;
  /** The order state written last (a response repeating it is skipped). */
  private lastOrderId = 0;
  private lastStatus = 0;
  private lastExecutedLots = 0;
  private lastExecutedQuote = 0;
  /** Last trade price written per market: a trade at the same price writes nothing. */
  private readonly lastPriceWritten = new Map<number, number>();
  /** Withdrawals not yet confirmed, by id (a confirmation may arrive in the batch that wrote them). */
  private readonly pending = new Map<number, WithdrawalRecord>();
  /** Between a Stamped record and its command's last record. */
  private commandOpen = false;
  /** The open command's order rows, in the order first kept: bytes (reused buffers) and views on them, account, order id. */
  private readonly rowBytes: Buffer[] = [];
  private readonly rowAccounts: number[] = [];
  private readonly rowOrders: number[] = [];
  private rowCount = 0;
  /** Order id → its row's index among the open command's rows. */
  private readonly rowIndex = new Map<number, number>();
  private readonly rowViews: DataView[] = [];
  /** A fill's value, copied from the record (reused: puts inside the transaction are synchronous). */
  private readonly fillBytes = Buffer.alloc(ORDER_BYTES);
  private readonly fillView = new DataView(this.fillBytes.buffer, this.fillBytes.byteOffset, ORDER_BYTES);

  constructor(root: RootDatabase) {
    const dbs = openHistoryDbs(root);
    this.history = dbs.history;
    this.settings = dbs.settings;
    for (const { key, value } of this.history.getRange({ start: ['lp', 0], end: ['lp', 0x10000] })) {
      this.lastPriceWritten.set(key[1] as number, parseLastPriceValue(value.toString()).priceTicks);
    }
    for (const { key } of this.history.getRange({ start: ['wp', 0], end: ['wp', Number.MAX_SAFE_INTEGER] })) {
      const id = key[1] as number;
      const where = parseWithdrawalPlace(this.history.get(['wi', id])!.toString());
      const value = this.history.get(['w', where.accountId, where.timeUs, id]);
      if (value) this.pending.set(id, parseWithdrawalValue(value.toString()));
    }
    if (this.history.get(['bp-built']) === undefined) this.history.transactionSync(() => this.buildPositions());
  }

  /** Once, on a history written before the position rows: builds them from the stored moves and interest. */
  private buildPositions(): void {
    const records: StoredRecord[] = [];
    for (const [kind, kindOrder] of [['bi', 0], ['bl', 1]] as const) {
      for (const { key, value } of this.history.getRange({ start: [kind, 0], end: [kind, MAX_ID] })) {
        const rec = newBorrowLendRec();
        readBorrowLend(new DataView(value.buffer, value.byteOffset, value.byteLength), 0, rec);
        records.push({ rec, kindOrder, ordinal: (key[4] as number | undefined) ?? 0 });
      }
    }
    rebuildPositions(this.history, records);
    this.history.put(['bp-built'], Buffer.alloc(0));
  }

  onRecord(view: DataView, offset: number): void {
    this.keep(view, offset);
    if ((recordFlags(view, offset) & HeaderFlag.CommandEnd) !== 0) this.endCommand();
  }

  /** The command's last record has passed: its order rows are written, each once. */
  private endCommand(): void {
    this.commandOpen = false;
    for (let i = 0; i < this.rowCount; i++) this.history.putSync(['o', this.rowAccounts[i], this.rowOrders[i]], this.rowBytes[i]);
    this.rowCount = 0;
    this.rowIndex.clear();
  }

  /** What one record adds to the history (the command's order rows wait for its end). */
  private keep(view: DataView, offset: number): void {
    const type = recordType(view, offset);
    if (type === RecordType.Stamped) return this.onStamped(view, offset);
    if (type === RecordType.Order) return this.onOrder(view, offset);
    if (type === RecordType.Trade) {
      readTrade(view, offset, this.trade);
      if (this.lastPriceWritten.get(this.trade.marketId) === this.trade.priceTicks) return;
      this.lastPriceWritten.set(this.trade.marketId, this.trade.priceTicks);
      this.history.put(['lp', this.trade.marketId], Buffer.from(lastPriceValueJson(this.trade)));
      return;
    }
    if (type === RecordType.Dust) {
      const d = this.dust;
      readDust(view, offset, d);
      const value: DustRecord = { id: d.seq, accountId: d.accountId, marketId: d.marketId, amountUnits: d.amountUnits, payoutUnits: d.payoutUnits, timeUs: d.timeUs };
      this.history.put(['u', d.accountId, d.timeUs, d.seq, d.marketId], Buffer.from(dustValueJson(value)));
      return;
    }
    if (type === RecordType.BorrowLend) return this.onBorrowLend(view, offset);
    if (type === RecordType.LendPoolSample) {
      readLendPoolSample(view, offset, this.poolSample);
      this.history.put(['pm', this.poolSample.assetId, this.poolSample.hourUs], Buffer.from(new Uint8Array(view.buffer, view.byteOffset + offset, LEND_POOL_SAMPLE_BYTES)));
      return;
    }
    if (type === RecordType.FundingPayment) {
      readFundingPayment(view, offset, this.fundingPayment);
      const r = this.fundingPayment;
      this.history.put(['fp', r.accountId, r.intervalEndUs, r.marketId], Buffer.from(new Uint8Array(view.buffer, view.byteOffset + offset, FUNDING_PAYMENT_BYTES)));
      this.pendingFunding = { accountId: r.accountId, marketId: r.marketId, units: r.quantityUnits };
      return;
    }
    if (type === RecordType.Position) return this.onPosition(view, offset);
    if (type === RecordType.Result && this.awaitingResult) {
      this.awaitingResult = false;
      readResult(view, offset, this.result);
      if (this.result.code === ResultCode.Ok) this.onCapitalResult(this.result.value);
    }
  }

  /** A borrow/lend move or an hour's interest payment (ordinal: several per command), and the row of its position. */
  private onBorrowLend(view: DataView, offset: number): void {
    readBorrowLend(view, offset, this.borrowLend);
    const r = this.borrowLend;
    if (r.event === BorrowLendEvent.Position) return;
    const bytes = Buffer.from(new Uint8Array(view.buffer, view.byteOffset + offset, BORROW_LEND_BYTES));
    this.history.put([r.event <= BorrowLendEvent.LendRedeem ? 'bl' : 'bi', r.accountId, r.timeUs, r.seq, this.fillOrdinal++], bytes);
    if (r.positionId !== 0) keepPosition(this.history, r);
  }

  /** A position event (a query row is skipped): the position's rows and its settlements (history-perp.ts). */
  private onPosition(view: DataView, offset: number): void {
    const rec = this.position;
    readPosition(view, offset, rec);
    if (rec.frontId !== FRONT_ID_NONE) return;
    const funding = this.pendingFunding;
    const fundingUnits = funding !== null && funding.accountId === rec.accountId && funding.marketId === rec.marketId ? funding.units : null;
    this.pendingFunding = null;
    keepPositionEvent(this.history, Buffer.from(new Uint8Array(view.buffer, view.byteOffset + offset, POSITION_BYTES)), rec, {
      fill: this.lastFills.get(rec.accountId), fundingUnits, seq: rec.seq, nextOrdinal: () => this.fillOrdinal++,
    });
  }

  private onStamped(view: DataView, offset: number): void {
    if (this.rowCount > 0) this.endCommand();
    this.commandOpen = true;
    readStamped(view, offset, this.stamped);
    const kind = this.stamped.command.kind;
    this.lastFills.clear();
    this.pendingFunding = null;
    this.fillOrdinal = 0;
    this.lastOrderId = 0;
    this.awaitingResult = kind === CommandKind.Deposit || kind === CommandKind.Withdraw || kind === CommandKind.ConvertDust;
    if (kind === CommandKind.ConfirmWithdrawal) this.confirm(this.stamped.command.confirmWithdrawal.withdrawalId, this.stamped.command.confirmWithdrawal.accountId);
  }

  private onOrder(view: DataView, offset: number): void {
    const rec = this.order;
    readOrder(view, offset, rec);
    // An answer is skipped unless it carries its order's event (HeaderFlag.Event) or a final state.
    if (rec.frontId !== FRONT_ID_NONE && rec.event === OrderEvent.None && !isFinal(rec.status)) return;
    // A response repeating the state an event of the same command just wrote (the Filled,
    // Cancelled or Expired answer right after its event) costs no second write.
    const same = rec.orderId === this.lastOrderId && rec.status === this.lastStatus &&
      rec.executedQtyLots === this.lastExecutedLots && rec.executedQuoteUnits === this.lastExecutedQuote;
    if (rec.event === OrderEvent.None && same) return;
    this.lastOrderId = rec.orderId;
    this.lastStatus = rec.status;
    this.lastExecutedLots = rec.executedQtyLots;
    this.lastExecutedQuote = rec.executedQuoteUnits;
    const account = rec.accountId;
    this.keepRow(account, rec.orderId, view, offset);
    if (rec.event === OrderEvent.Fill) {
      this.lastFills.set(account, { marketId: rec.marketId, priceTicks: rec.lastFillPriceTicks, systemOrderType: rec.systemOrderType });
      const ordinal = this.fillOrdinal++;
      this.copyRecord(view, offset, this.fillView);
      this.history.putSync(['fm', account, rec.marketId, rec.timeUs, rec.seq, ordinal], this.fillBytes);
      return;
    }
    // Every order's first record is orderAccepted, or orderCancelled for one cancelled during its
    // speed bump; its index entries are written then (createdAt never changes).
    if (rec.event === OrderEvent.Accepted || rec.event === OrderEvent.Cancelled) {
      this.history.put(['om', account, rec.marketId, rec.createdAtUs, rec.orderId], Buffer.alloc(0));
    }
  }

  /**
   * An order's row ['o', account, orderId] takes this record's bytes: at the command's end, or at
   * once outside a command. A later state of the same order in the command replaces it.
   */
  private keepRow(account: number, orderId: number, view: DataView, offset: number): void {
    if (!this.commandOpen) {
      this.copyRecord(view, offset, this.fillView);
      this.history.putSync(['o', account, orderId], this.fillBytes);
      return;
    }
    let row = this.rowIndex.get(orderId);
    if (row === undefined || this.rowAccounts[row] !== account) {
      row = this.rowCount++;
      if (row === this.rowBytes.length) {
        const bytes = Buffer.alloc(ORDER_BYTES);
        this.rowBytes.push(bytes);
        this.rowViews.push(new DataView(bytes.buffer, bytes.byteOffset, ORDER_BYTES));
      }
      this.rowAccounts[row] = account;
      this.rowOrders[row] = orderId;
      this.rowIndex.set(orderId, row);
    }
    this.copyRecord(view, offset, this.rowViews[row]);
  }

  /** Copies the order record at `offset` of `view` into `target` (ORDER_BYTES, in 32-bit words: no allocation). */
  private copyRecord(view: DataView, offset: number, target: DataView): void {
    for (let at = 0; at < ORDER_BYTES; at += 4) target.setUint32(at, view.getUint32(offset + at, true), true);
  }

  private onCapitalResult(value: number): void {
    const s = this.stamped;
    const id = s.seq;
    if (s.command.kind === CommandKind.Deposit) {
      const c = s.command.deposit;
      const deposit: DepositRecord = { id, accountId: c.accountId, assetId: c.assetId, amountUnits: c.amountUnits, timeUs: s.timeUs };
      this.history.put(['d', c.accountId, s.timeUs, id], Buffer.from(depositValueJson(deposit)));
    } else if (s.command.kind === CommandKind.ConvertDust) {
      const c = s.command.convertDust;
      const dust: DustRecord = { id, accountId: c.accountId, marketId: c.marketId, amountUnits: c.amountUnits, payoutUnits: value, timeUs: s.timeUs };
      this.history.put(['u', c.accountId, s.timeUs, id], Buffer.from(dustValueJson(dust)));
    } else if (s.command.kind === CommandKind.Withdraw) {
      const c = s.command.withdraw;
      const key = intentKey(c.intentDigest);
      const stored = this.settings.get(key);
      const intent = stored === undefined ? undefined : withdrawalIntentFrom(stored);
      const withdrawal: WithdrawalRecord = {
        id, accountId: c.accountId, assetId: c.assetId, amountUnits: c.amountUnits, timeUs: s.timeUs,
        blockchain: intent?.blockchain ?? '', address: intent?.address ?? '', clientId: intent?.clientId ?? null,
        status: 'pending', transactionHash: null, confirmedUs: null,
      };
      if (intent) this.settings.remove(key);
      this.history.put(['w', c.accountId, s.timeUs, id], Buffer.from(withdrawalValueJson(withdrawal)));
      this.history.put(['wi', id], Buffer.from(withdrawalPlaceJson({ accountId: c.accountId, timeUs: s.timeUs })));
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
    this.history.put(['w', withdrawal.accountId, withdrawal.timeUs, id], Buffer.from(withdrawalValueJson(withdrawal)));
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

type Entry = { key: HistoryKey; value: Buffer };

/** Yields the entries of sorted iterators in one order (keys compared from index `tail` on), skipping `skip`. */
function* mergeInOrder(iterators: Iterator<Entry>[], tail: number, descending: boolean, skip: number): Generator<Entry> {
  const heads = iterators.map((it) => it.next());
  const compare = (a: HistoryKey, b: HistoryKey): number => {
    for (let i = tail; i < a.length; i++) if (a[i] !== b[i]) return (a[i] as number) < (b[i] as number) ? -1 : 1;
    return 0;
  };
  for (;;) {
    let best = -1;
    for (let i = 0; i < heads.length; i++) {
      if (heads[i].done) continue;
      if (best < 0) best = i;
      else {
        const order = compare(heads[i].value!.key, heads[best].value!.key);
        if (descending ? order > 0 : order < 0) best = i;
      }
    }
    if (best < 0) return;
    const entry = heads[best].value!;
    heads[best] = iterators[best].next();
    if (skip > 0) skip--;
    else yield entry;
  }
}

/** A listing's markets: one (`marketId`), else those of `marketIds` (the marketType filter), else all. */
export interface MarketFilter {
  marketId?: number;
  marketIds?: readonly number[];
}

function inMarkets(filter: MarketFilter, marketId: number): boolean {
  return (filter.marketId === undefined || marketId === filter.marketId) && (filter.marketIds === undefined || filter.marketIds.includes(marketId));
}

export class AccountHistoryReader {
  private readonly history: Database<Buffer, HistoryKey>;
  readonly settings: Database<unknown, HistoryKey>;

  /** `marketCount`: the configured markets (ids 0 … marketCount − 1), merged by all-market listings. */
  constructor(root: RootDatabase, private readonly marketCount: number) {
    const dbs = openHistoryDbs(root);
    this.history = dbs.history;
    this.settings = dbs.settings;
  }

  /**
   * The entries of several per-market prefixes (all of the same length) in one time order: a
   * k-way merge on the key parts after the prefix, skipping the page's offset.
   */
  private *merged(prefixes: HistoryKey[], low: number, high: number, page: Page): Generator<Entry> {
    const unpaged = { ...page, offset: 0 };
    const iterators: Generator<Entry>[] = [];
    // Every per-market iterator holds an LMDB cursor on this thread's read transaction. A caller
    // that stops early (its page filled before the ranges ran out) ends only this generator, so
    // the inner ones are ended here: an unfinished cursor keeps its read transaction alive after
    // lmdb-js has moved on to a newer one, pinning that snapshot, and with it every page freed
    // after it, until a garbage collection happens to reclaim the cursor (the file meanwhile grows
    // by each write's copied pages).
    try {
      for (const prefix of prefixes) iterators.push(this.range(prefix, low, high, unpaged, 0));
      yield* mergeInOrder(iterators, prefixes[0].length, page.descending, page.offset);
    } finally {
      for (const it of iterators) it.return(undefined);
    }
  }

  /** The per-market prefixes of `kind` for the account: every configured market, or those of `marketIds`. */
  private marketPrefixes(kind: string, accountId: number, marketIds?: readonly number[]): HistoryKey[] {
    if (marketIds !== undefined) return marketIds.map((marketId) => [kind, accountId, marketId]);
    return Array.from({ length: this.marketCount }, (_, marketId) => [kind, accountId, marketId]);
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

  /**
   * A stored order record. Its system order type is believed only when its flags mark a system
   * order (OrderFlag.Liquidation, or Adl alone for a backstop order, in a byte every version
   * wrote): the type sits in the struct's tail padding, which versions before it left as the ring
   * slot's earlier bytes, so a record stored by them may hold any value there; every order they
   * stored was a client's.
   */
  private decodeOrder(value: Buffer): OrderRec {
    const rec = newOrderRec();
    readOrder(new DataView(value.buffer, value.byteOffset, value.length), 0, rec);
    if ((rec.orderFlags & (OrderFlag.Liquidation | OrderFlag.Adl)) === 0) rec.systemOrderType = SystemOrderType.None;
    return rec;
  }

  /** Orders by creation time, optionally of one market or one order id. */
  orders(accountId: number, filter: MarketFilter & { orderId?: number }, page: Page): OrderRec[] {
    if (filter.marketId !== undefined && !inMarkets(filter, filter.marketId)) return [];
    if (filter.orderId !== undefined) {
      const value = this.history.get(['o', accountId, filter.orderId]);
      if (!value || page.offset > 0) return [];
      const rec = this.decodeOrder(value);
      return inMarkets(filter, rec.marketId) ? [rec] : [];
    }
    const entries = filter.marketId === undefined
      ? this.merged(this.marketPrefixes('om', accountId, filter.marketIds), 0, MAX_ID, page)
      : this.range(['om', accountId, filter.marketId], 0, MAX_ID, page);
    const out: OrderRec[] = [];
    for (const { key } of entries) {
      if (out.length >= page.limit) break;
      const value = this.history.get(['o', accountId, key[key.length - 1] as number]);
      if (value) out.push(this.decodeOrder(value));
    }
    return out;
  }

  /**
   * Fill events (OrderRecords with event Fill) in time order, filtered by market or order, and by
   * `keep` (a fill type: entries that fail it are read and skipped before the page's offset counts).
   */
  fills(accountId: number, filter: MarketFilter & { orderId?: number; keep?: (rec: OrderRec) => boolean }, range: TimeRange, page: Page): OrderRec[] {
    const keep = filter.keep;
    if (filter.marketId !== undefined && !inMarkets(filter, filter.marketId)) return [];
    if (filter.orderId === undefined) {
      // Without `keep` the offset is skipped in the key range; with it, after the test.
      const unpaged = keep === undefined ? page : { ...page, offset: 0 };
      const entries = filter.marketId === undefined
        ? this.merged(this.marketPrefixes('fm', accountId, filter.marketIds), range.fromUs, range.toUs, unpaged)
        : this.range(['fm', accountId, filter.marketId], range.fromUs, range.toUs, unpaged);
      return this.pageOfFills(entries, keep === undefined ? 0 : page.offset, page.limit, keep ?? (() => true));
    }
    // One order's fills lie in its market's range between its creation and its last update.
    const orderValue = this.history.get(['o', accountId, filter.orderId]);
    if (!orderValue) return [];
    const order = this.decodeOrder(orderValue);
    if (!inMarkets(filter, order.marketId)) return [];
    const fromUs = Math.max(range.fromUs, order.createdAtUs);
    const toUs = Math.min(range.toUs, order.timeUs);
    if (fromUs > toUs) return [];
    const orderId = filter.orderId;
    const entries = this.range(['fm', accountId, order.marketId], fromUs, toUs, page, 0);
    return this.pageOfFills(entries, page.offset, page.limit, (rec) => rec.orderId === orderId && (keep === undefined || keep(rec)));
  }

  /** Up to `limit` decoded fills of `entries` that `keep` takes, after skipping `skip` of them. */
  private pageOfFills(entries: Iterable<{ value: Buffer }>, skip: number, limit: number, keep: (rec: OrderRec) => boolean): OrderRec[] {
    const out: OrderRec[] = [];
    for (const { value } of entries) {
      if (out.length >= limit) break;
      const rec = this.decodeOrder(value);
      if (!keep(rec)) continue;
      if (skip > 0) {
        skip--;
        continue;
      }
      out.push(rec);
    }
    return out;
  }

  private jsonRange<T>(prefix: HistoryKey, range: TimeRange, page: Page, parse: (text: string) => T, keep: (value: T) => boolean = () => true): T[] {
    const out: T[] = [];
    let skip = page.offset;
    for (const { value } of this.range(prefix, range.fromUs, range.toUs, page, 0)) {
      if (out.length >= page.limit) break;
      const item = parse(value.toString());
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
    return this.jsonRange(['d', accountId], range, page, parseDepositValue);
  }

  withdrawals(accountId: number, filter: { id?: number; clientId?: string }, range: TimeRange, page: Page): WithdrawalRecord[] {
    if (filter.id !== undefined) {
      const where = this.history.get(['wi', filter.id]);
      if (!where) return [];
      const { accountId: owner, timeUs } = parseWithdrawalPlace(where.toString());
      if (owner !== accountId || timeUs < range.fromUs || timeUs > range.toUs || page.offset > 0) return [];
      const value = this.history.get(['w', owner, timeUs, filter.id]);
      const item = value ? parseWithdrawalValue(value.toString()) : undefined;
      return item && (filter.clientId === undefined || item.clientId === filter.clientId) ? [item] : [];
    }
    return this.jsonRange(['w', accountId], range, page, parseWithdrawalValue, (w) => filter.clientId === undefined || w.clientId === filter.clientId);
  }

  dust(accountId: number, filter: { id?: number; marketId?: number }, page: Page): DustRecord[] {
    return this.jsonRange(['u', accountId], { fromUs: 0, toUs: MAX_ID - 1 }, page, parseDustValue,
      (d) => (filter.id === undefined || d.id === filter.id) && (filter.marketId === undefined || d.marketId === filter.marketId));
  }

  /** Borrow/lend moves ('bl') or interest payments ('bi') of an account, with the records' filters. */
  borrowLendHistory(accountId: number, kind: 'bl' | 'bi', keep: (rec: BorrowLendRec) => boolean, page: Page): BorrowLendRec[] {
    const out: BorrowLendRec[] = [];
    let skip = page.offset;
    for (const { value } of this.range([kind, accountId], 0, MAX_ID - 1, page, 0)) {
      if (out.length >= page.limit) break;
      const rec = newBorrowLendRec();
      readBorrowLend(new DataView(value.buffer, value.byteOffset, value.byteLength), 0, rec);
      if (!keep(rec)) continue;
      if (skip > 0) {
        skip--;
        continue;
      }
      out.push(rec);
    }
    return out;
  }

  /** Borrow/lend positions of an account, open and closed, by position id (the order they opened in). */
  borrowLendPositions(accountId: number, keep: (p: BorrowLendPositionValue) => boolean, page: Page): BorrowLendPositionValue[] {
    const out: BorrowLendPositionValue[] = [];
    let skip = page.offset;
    for (const { value } of this.range(['bp', accountId], 0, MAX_ID - 1, page, 0)) {
      if (out.length >= page.limit) break;
      const position = parseBorrowLendPositionValue(value.toString());
      if (!keep(position)) continue;
      if (skip > 0) skip--;
      else out.push(position);
    }
    return out;
  }

  /** A pool's samples from `fromUs` to `toUs` (hours, inclusive), oldest first. */
  lendPoolSamples(assetId: number, fromUs: number, toUs: number): LendPoolSampleRec[] {
    const out: LendPoolSampleRec[] = [];
    for (const { value } of this.range(['pm', assetId], fromUs, toUs, { limit: MAX_ID, offset: 0, descending: false }, 0)) {
      const rec = newLendPoolSampleRec();
      readLendPoolSample(new DataView(value.buffer, value.byteOffset, value.byteLength), 0, rec);
      out.push(rec);
    }
    return out;
  }

  /** Funding payments of an account ('fp'), newest first unless the page says otherwise, with a filter. */
  fundingPayments(accountId: number, keep: (rec: FundingPaymentRec) => boolean, page: Page): FundingPaymentRec[] {
    const out: FundingPaymentRec[] = [];
    let skip = page.offset;
    for (const { value } of this.range(['fp', accountId], 0, MAX_ID - 1, page, 0)) {
      if (out.length >= page.limit) break;
      const rec = newFundingPaymentRec();
      readFundingPayment(new DataView(value.buffer, value.byteOffset, value.byteLength), 0, rec);
      if (!keep(rec)) continue;
      if (skip > 0) {
        skip--;
        continue;
      }
      out.push(rec);
    }
    return out;
  }

  /** Perpetual positions of an account, open and closed, by position id, each with its latest event's record (history-perp.ts). */
  perpPositions(accountId: number, keep: (p: PerpPositionValue) => boolean, page: Page): Array<{ meta: PerpPositionValue; rec: PositionRec }> {
    const out: Array<{ meta: PerpPositionValue; rec: PositionRec }> = [];
    let skip = page.offset;
    for (const { value } of this.range(['pp', accountId], 0, MAX_ID - 1, page, 0)) {
      if (out.length >= page.limit) break;
      const meta = parsePerpPositionValue(value.toString());
      if (!keep(meta)) continue;
      if (skip > 0) {
        skip--;
        continue;
      }
      const bytes = this.history.get(['pr', accountId, meta.positionId]);
      if (bytes === undefined) continue;
      const rec = newPositionRec();
      readPosition(new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), 0, rec);
      out.push({ meta, rec });
    }
    return out;
  }

  /** Perpetual settlements of an account ('st'), newest first unless the page says otherwise, with a filter. */
  perpSettlements(accountId: number, keep: (s: PerpSettlementValue) => boolean, page: Page): PerpSettlementValue[] {
    const out: PerpSettlementValue[] = [];
    let skip = page.offset;
    for (const { value } of this.range(['st', accountId], 0, MAX_ID - 1, page, 0)) {
      if (out.length >= page.limit) break;
      const row = parsePerpSettlementValue(value.toString());
      if (!keep(row)) continue;
      if (skip > 0) skip--;
      else out.push(row);
    }
    return out;
  }

  /** The last trade price of a market in ticks, or 0 before its first trade. */
  lastPriceTicks(marketId: number): number {
    const value = this.history.get(['lp', marketId]);
    return value ? parseLastPriceValue(value.toString()).priceTicks : 0;
  }

  /** Every withdrawal not yet confirmed: [id, accountId, timeUs] (the simulated chain's work list). */
  pendingWithdrawals(): Array<[number, number, number]> {
    const out: Array<[number, number, number]> = [];
    for (const { key } of this.history.getRange({ start: ['wp', 0], end: ['wp', MAX_ID] })) {
      const id = key[1] as number;
      const where = this.history.get(['wi', id]);
      if (!where) continue;
      const { accountId, timeUs } = parseWithdrawalPlace(where.toString());
      out.push([id, accountId, timeUs]);
    }
    return out;
  }
}
