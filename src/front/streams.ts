// WebSocket streams on a front thread, fed by the engine's durable event records.
//
// Events update the read models first (books, key registry), then fan out through uWS pub/sub:
// a public stream's topic is its name (`depth.SOL_USDC`); a private stream's topic is prefixed
// with the account id (`7|account.orderUpdate`) while the envelope's `stream` stays the name the
// client subscribed to. Payloads are only built when the topic has subscribers.
//
// Depth: every level change of one engine command shares one update id. Changes are collected per
// market during a drained batch and sent at the batch end as one message with U = first id and
// u = last id, levels at their absolute quantity (0 = removed), so consecutive messages satisfy
// U = previous u + 1. The aggregated variants (depth.200ms / 600ms / 1000ms) merge the batches of
// their period the same way.
//
// Quiet books: clients wait for several depth messages before they fetch the REST snapshot
// (ccxt: 11), so a subscribed market that sent nothing during a 100 ms tick gets an empty message
// (a: [], b: []) with U = L + 1 and u = L, L being the market's current update id. It consumes no
// id — ids come only from the engine — and keeps the documented contract for every client:
// U = previous u + 1 holds across it, and "apply if u > lastUpdateId" skips it. The aggregated
// variants send the same empty message when their period saw no change.
//
// bookTicker is sent at a batch end when the best bid or ask (price or quantity) changed; ticker
// (24-hour window) once a second per subscribed market; kline on change at most once a second per
// stream, plus a final X: true message when its candle closes. Ticker and kline values come from
// the LMDB history, which shows a batch when it commits, a moment before it is flushed: they are
// sent only once seqDurable covers every trade in them, else retried at the next tick.
//
// account.balanceUpdate (private, no public source documents its keys; shape chosen here and in the
// README): {"e":"balanceUpdate","E":µs,"T":µs,"s":"<asset>","f":"<available>","l":"<locked>",
// "x":"<staked>"}, absolute quantities after each change.
//
// Protocol: {"method":"SUBSCRIBE"|"UNSUBSCRIBE","params":[...],"signature":[key,sig,ts,window]}.
// An invalid stream answers {"id":null,"error":{"code":4006,"message":"Invalid stream"}}; a bad
// private-stream signature answers code 4001 (the public API documents no code for it; chosen
// here). Neither disturbs the connection's other streams. At most MAX_SUBSCRIPTIONS streams per
// connection (4005 beyond), and at most MAX_SUBSCRIPTIONS names per message: a longer list is
// answered with one error frame and changes nothing, so no message makes the server answer with
// more frames than it could subscribe streams. `id` is echoed when it is a number or a string of
// at most MAX_ECHOED_ID_CHARS, else null. A message longer than MAX_MESSAGE_BYTES closes the
// connection with 1009 and a reason naming the limit.
//
// Replayed subscribe signatures: a private subscription's signature, once accepted, is recorded
// in the shared replay guard (the REST one, replay-guard.ts) until its window ends, with the
// client's address as owner; a later use from another address is refused (4001). The same
// address may use it again: the subscribe signing string holds only a timestamp and a window, so
// subscribes sent in the same millisecond (ccxt's watchOrders and watchBalance together, or one
// client's several connections) carry the same signature. An eavesdropper elsewhere cannot reuse
// it; one on the client's own host (or behind the same NAT) could, within the window. After a
// restart every signature stamped before it is refused, from any address (replay-guard.ts).
//
// A connection whose send buffer passes MAX_BACKPRESSURE_BYTES loses its
// subscriptions and is closed with code 1008 ("Slow consumer") once it has read what was queued;
// uWS never waits for it, so it never delays the engine, the other clients or HTTP.
// Protocol pings: a connection silent for --ws-idle-timeout-s (default 60) gets a ping shortly
// before the timeout; a peer that answers nothing is closed when it passes.
//
// Limits (rate-limits.ts): an upgrade counts as a request of its client address and is refused
// with an HTTP 429 when the address is over its request rate or already holds
// --ws-connections-per-address connections (counted across front threads, given back on close);
// a signed subscribe is charged to the address like an HTTP request, before its signature is
// checked (code 4029 with the 429 message when over the limit; its private streams are not added);
// a connection sending more than --ws-messages-per-s messages a second, after a burst of four
// seconds' worth, is closed with 1008 rather than answered message by message.

import uWS, { type HttpResponse, type TemplatedApp, type WebSocket } from 'uWebSockets.js';
import { DEFAULT_WS_IDLE_TIMEOUT_S, type MarketInfo } from '../config.js';
import { RecordType, Side } from '../../engine/bus/types.js';
import { readAccount, readBalance, readDepth, readMarket, readMarketState, readOrder, readTrade } from '../../engine/bus/codec.js';
import { checkWindow, signingString, type SignatureVerifier } from '../auth.js';
import { addressOwner, type ReplayGuard } from './replay-guard.js';
import type { MessageBucket, RateLimits } from './rate-limits.js';
import type { ClientKey } from './rate-table.js';
import { errorBody, statusLine, type ApiError } from '../errors.js';
import type { EventHandler } from './engine-link.js';
import type { BookModel, MarketData } from './market-data.js';
import { scratch, type FrontContext } from './context.js';
import { CountedSubscriptions } from './front-metrics.js';
import { assetText, priceTextFixed, qtyTextFixed } from '../wire/market-codec.js';
import { orderUpdateJson } from '../wire/orders.js';
import { klineStreamJson, tickerStreamJson } from '../wire/market-json.js';
import { KLINE_INTERVALS, bucketStart, nextBucket } from './market-history.js';
import { performance } from 'node:perf_hooks';

export const MAX_SUBSCRIPTIONS = 64;
/** Longest request message; a longer one is answered with close code 1009 and this limit. */
export const MAX_MESSAGE_BYTES = 16 * 1024;
/**
 * uWS's own bound: a message beyond it is cut off without a close frame (1006 at the client), so
 * it sits above MAX_MESSAGE_BYTES, leaving room for the 1009 answer, and still bounds what one
 * connection can make the server buffer.
 */
const MAX_FRAME_BYTES = 4 * MAX_MESSAGE_BYTES;
/** Close code for a message longer than MAX_MESSAGE_BYTES (RFC 6455 "message too big"). */
export const CLOSE_MESSAGE_TOO_BIG = 1009;
export const MAX_BACKPRESSURE_BYTES = 1024 * 1024;
/** Close code for a connection dropped because it could not keep up. */
export const CLOSE_SLOW_CONSUMER = 1008;
const SLOW_CONSUMER_GRACE_MS = 30_000;
const SLOW_CONSUMER_CLOSE_BELOW_BYTES = 64 * 1024;
/** The streams' clock: quiet-book depth, aggregated depth, ticker and kline all run on it. */
export const TICK_MS = 100;
const AGGREGATES = [
  { name: '200ms', ticks: 2 },
  { name: '600ms', ticks: 6 },
  { name: '1000ms', ticks: 10 },
] as const;
const TICKER_WINDOW_S = 86_400;

/** Longest string `id` echoed in error frames (a longer one, or another type, is echoed as null). */
const MAX_ECHOED_ID_CHARS = 64;

interface SocketData {
  /** stream name → uWS topic */
  subscriptions: Map<string, string>;
  /** The client address's owner hash for the replay guard. */
  owner: number;
  /** The client's address (uWS's binary form), charged for each signed subscribe. */
  address: ArrayBuffer;
  closed: boolean;
  dropping: boolean;
  graceTimer: NodeJS.Timeout | null;
  /** The address's entry in the shared connection count, given back on close. */
  connectionKey: ClientKey | null;
  messages: MessageBucket;
}

/** Close code for a connection that sent messages faster than its rate limit. */
export const CLOSE_MESSAGE_RATE = 1008;
/** Error frame code of a signed subscribe refused by its address's request rate (chosen here). */
const CODE_RATE_LIMITED = 4029;

/** Sends the slow-consumer close once the connection's send buffer has room for it. */
function endIfDrained(ws: WebSocket<SocketData>): void {
  const state = ws.getUserData();
  if (state.closed || ws.getBufferedAmount() > SLOW_CONSUMER_CLOSE_BELOW_BYTES) return;
  ws.end(CLOSE_SLOW_CONSUMER, 'Slow consumer: send buffer limit reached');
}

function nowUs(): number {
  return Math.floor((performance.timeOrigin + performance.now()) * 1000);
}

interface DepthBatch {
  firstId: number;
  lastId: number;
  timeUs: number;
  bids: Set<number>;
  asks: Set<number>;
}

interface KlineStream {
  topic: string;
  marketId: number;
  interval: string;
  /** Bucket (UTC s) the stream was last looked at in. */
  bucketS: number;
  /** A closed bucket whose final message is still due. */
  finalDueS: number | null;
  /** The market's last trade id when the current candle was last sent. */
  sentTradeId: number;
  sentMs: number;
}

export class Streams implements EventHandler {
  private readonly depthBatches: Array<DepthBatch | null>;
  /** [aggregate][market]: changes merged since the aggregate's last message. */
  private readonly aggregates: Array<Array<DepthBatch | null>>;
  private readonly depthSentThisTick: boolean[];
  private readonly bookTickerSent: string[];
  private readonly tickerSentMs: number[];
  private readonly klineStreams = new Map<string, KlineStream>();
  private tickCount = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly app: TemplatedApp,
    private readonly front: FrontContext,
    private readonly data: MarketData,
  ) {
    const markets = front.config.markets;
    this.depthBatches = markets.map(() => null);
    this.aggregates = AGGREGATES.map(() => markets.map(() => null));
    this.depthSentThisTick = markets.map(() => false);
    this.bookTickerSent = markets.map(() => '');
    this.tickerSentMs = markets.map(() => 0);
    this.timer = setInterval(() => this.tick(), TICK_MS);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  onEvent(type: RecordType, view: DataView, offset: number): void {
    switch (type) {
      case RecordType.Depth: return this.onDepth(view, offset);
      case RecordType.Trade: return this.onTrade(view, offset);
      case RecordType.Order: return this.onOrder(view, offset);
      case RecordType.Balance: return this.onBalance(view, offset);
      case RecordType.Account: {
        readAccount(view, offset, scratch.account);
        this.data.registerKey(scratch.account.key, scratch.account.accountId);
        return;
      }
      // The operator changed a market's order book state
      case RecordType.MarketState:
        return this.onMarketState(view, offset);
      default:
        return;
    }
  }

  /** Applies the snapshot part of a QuerySnapshot reply (addressed to this thread). */
  onSnapshotRecord(type: RecordType, view: DataView, offset: number): void {
    if (type === RecordType.Account) {
      readAccount(view, offset, scratch.account);
      this.data.registerKey(scratch.account.key, scratch.account.accountId);
    } else if (type === RecordType.Market) {
      readMarket(view, offset, scratch.market);
      const book = this.data.books[scratch.market.marketId];
      book.updateId = scratch.market.updateId;
      book.lastTradeId = scratch.market.lastTradeId;
      book.timeUs = scratch.market.timeUs;
    } else if (type === RecordType.MarketState) {
      this.onMarketState(view, offset);
    } else if (type === RecordType.Depth) {
      readDepth(view, offset, scratch.depth);
      this.data.books[scratch.depth.marketId].setLevel(scratch.depth.side, scratch.depth.priceTicks, scratch.depth.qtyLots);
    }
  }

  /** A client subscribed to `name` (topic `topic`): streams that keep per-stream state start it. */
  onSubscribed(name: string, topic: string): void {
    if (!name.startsWith('kline.') || this.klineStreams.has(topic)) return;
    const [, interval, symbol] = name.split('.');
    const market = this.front.marketsBySymbol.get(symbol)!;
    const marketId = market.spec.marketId;
    this.klineStreams.set(topic, {
      topic, marketId, interval,
      bucketS: bucketStart(interval, Math.floor(Date.now() / 1000)),
      finalDueS: null,
      sentTradeId: this.data.books[marketId].lastTradeId,
      sentMs: 0,
    });
  }

  private onMarketState(view: DataView, offset: number): void {
    readMarketState(view, offset, scratch.marketState);
    this.data.books[scratch.marketState.marketId].orderBookState = scratch.marketState.state;
  }

  private onDepth(view: DataView, offset: number): void {
    const rec = scratch.depth;
    readDepth(view, offset, rec);
    const book = this.data.books[rec.marketId];
    book.setLevel(rec.side, rec.priceTicks, rec.qtyLots);
    book.updateId = rec.updateId;
    book.timeUs = rec.timeUs;
    let batch = this.depthBatches[rec.marketId];
    if (batch === null) {
      batch = { firstId: rec.updateId, lastId: rec.updateId, timeUs: rec.timeUs, bids: new Set(), asks: new Set() };
      this.depthBatches[rec.marketId] = batch;
    }
    batch.lastId = rec.updateId;
    batch.timeUs = rec.timeUs;
    (rec.side === Side.Bid ? batch.bids : batch.asks).add(rec.priceTicks);
  }

  onBatchEnd(): void {
    for (let marketId = 0; marketId < this.depthBatches.length; marketId++) {
      const batch = this.depthBatches[marketId];
      if (batch === null) continue;
      this.depthBatches[marketId] = null;
      const market = this.front.config.markets[marketId];
      const book = this.data.books[marketId];
      const topic = `depth.${market.symbol}`;
      if (this.app.numSubscribers(topic) > 0) {
        this.publishDepth(topic, market, book, batch);
        this.depthSentThisTick[marketId] = true;
      }
      for (let a = 0; a < AGGREGATES.length; a++) {
        if (this.app.numSubscribers(`depth.${AGGREGATES[a].name}.${market.symbol}`) === 0) {
          this.aggregates[a][marketId] = null;
          continue;
        }
        const merged = this.aggregates[a][marketId];
        if (merged === null) {
          this.aggregates[a][marketId] = { ...batch, bids: new Set(batch.bids), asks: new Set(batch.asks) };
        } else {
          merged.lastId = batch.lastId;
          merged.timeUs = batch.timeUs;
          for (const p of batch.bids) merged.bids.add(p);
          for (const p of batch.asks) merged.asks.add(p);
        }
      }
      this.maybeBookTicker(market, book);
    }
  }

  private publishDepth(topic: string, market: MarketInfo, book: BookModel, batch: DepthBatch): void {
    const levels = (prices: Set<number>, map: Map<number, number>) =>
      [...prices].sort((a, b) => a - b).map((p) => [priceTextFixed(market, p), qtyTextFixed(market, map.get(p) ?? 0)]);
    this.publish(topic, topic, {
      e: 'depth', E: nowUs(), s: market.symbol,
      a: levels(batch.asks, book.asks), b: levels(batch.bids, book.bids),
      U: batch.firstId, u: batch.lastId, T: batch.timeUs,
    });
  }

  /** The no-change depth message of a quiet book: U = L + 1, u = L (see the header). */
  private publishQuietDepth(topic: string, market: MarketInfo, book: BookModel): void {
    this.publish(topic, topic, {
      e: 'depth', E: nowUs(), s: market.symbol, a: [], b: [], U: book.updateId + 1, u: book.updateId, T: book.timeUs,
    });
  }

  private maybeBookTicker(market: MarketInfo, book: BookModel): void {
    const marketId = market.spec.marketId;
    const bidQty = book.bestBid === 0 ? 0 : book.bids.get(book.bestBid)!;
    const askQty = book.bestAsk === 0 ? 0 : book.asks.get(book.bestAsk)!;
    const top = `${book.bestBid}:${bidQty}:${book.bestAsk}:${askQty}`;
    if (top === this.bookTickerSent[marketId]) return;
    this.bookTickerSent[marketId] = top;
    const topic = `bookTicker.${market.symbol}`;
    if (this.app.numSubscribers(topic) === 0) return;
    this.publish(topic, topic, {
      e: 'bookTicker', E: nowUs(), s: market.symbol,
      // An empty side shows price and quantity 0 (the official Rust client requires decimals).
      a: priceTextFixed(market, book.bestAsk), A: qtyTextFixed(market, askQty),
      b: priceTextFixed(market, book.bestBid), B: qtyTextFixed(market, bidQty),
      u: book.updateId, T: book.timeUs,
    });
  }

  private tick(): void {
    this.tickCount++;
    const markets = this.front.config.markets;
    for (let marketId = 0; marketId < markets.length; marketId++) {
      const market = markets[marketId];
      const book = this.data.books[marketId];
      const topic = `depth.${market.symbol}`;
      if (!this.depthSentThisTick[marketId] && this.app.numSubscribers(topic) > 0) this.publishQuietDepth(topic, market, book);
      this.depthSentThisTick[marketId] = false;
      for (let a = 0; a < AGGREGATES.length; a++) {
        if (this.tickCount % AGGREGATES[a].ticks !== 0) continue;
        const aggregateTopic = `depth.${AGGREGATES[a].name}.${market.symbol}`;
        const merged = this.aggregates[a][marketId];
        this.aggregates[a][marketId] = null;
        if (this.app.numSubscribers(aggregateTopic) === 0) continue;
        if (merged === null) this.publishQuietDepth(aggregateTopic, market, book);
        else this.publishDepth(aggregateTopic, market, book, merged);
      }
    }
    const nowMs = Date.now();
    for (let marketId = 0; marketId < markets.length; marketId++) this.maybeTicker(markets[marketId], nowMs);
    for (const stream of this.klineStreams.values()) {
      if (this.app.numSubscribers(stream.topic) === 0) this.klineStreams.delete(stream.topic);
      else this.maybeKline(stream, nowMs);
    }
  }

  private maybeTicker(market: MarketInfo, nowMs: number): void {
    const marketId = market.spec.marketId;
    if (nowMs - this.tickerSentMs[marketId] < 1000) return;
    const topic = `ticker.${market.symbol}`;
    if (this.app.numSubscribers(topic) === 0) return;
    const nowS = Math.floor(nowMs / 1000);
    const history = this.front.history;
    const window = history.window(marketId, nowS - TICKER_WINDOW_S, nowS);
    if (window.lastSeq > this.front.link.seqDurableNow()) return; // not flushed yet: next tick
    const last = window.tradeCount === 0 ? history.lastTrade(marketId, this.data.books[marketId].lastTradeId) : null;
    this.tickerSentMs[marketId] = nowMs;
    this.publish(topic, topic, tickerStreamJson(market, window, last, nowUs()));
  }

  private maybeKline(k: KlineStream, nowMs: number): void {
    const market = this.front.config.markets[k.marketId];
    const lastTradeId = this.data.books[k.marketId].lastTradeId;
    const bucket = bucketStart(k.interval, Math.floor(nowMs / 1000));
    if (bucket !== k.bucketS) {
      if (k.finalDueS === null) k.finalDueS = k.bucketS;
      k.bucketS = bucket;
    }
    const durable = this.front.link.seqDurableNow();
    const candleOf = (startS: number) => this.front.history.klines(k.marketId, lastTradeId, k.interval, startS, nextBucket(k.interval, startS))[0];
    if (k.finalDueS !== null) {
      const closed = candleOf(k.finalDueS);
      if (closed !== undefined && closed.lastSeq > durable) return;
      k.finalDueS = null;
      if (closed !== undefined) this.publish(k.topic, k.topic, klineStreamJson(market, closed, true, nowUs()));
    }
    if (lastTradeId === k.sentTradeId || nowMs - k.sentMs < 1000) return;
    const current = candleOf(bucket);
    if (current !== undefined && current.lastSeq > durable) return;
    k.sentTradeId = lastTradeId;
    k.sentMs = nowMs;
    if (current !== undefined) this.publish(k.topic, k.topic, klineStreamJson(market, current, false, nowUs()));
  }

  private onTrade(view: DataView, offset: number): void {
    const rec = scratch.trade;
    readTrade(view, offset, rec);
    const market = this.front.config.markets[rec.marketId];
    this.data.books[rec.marketId].lastTradeId = rec.tradeId;
    const topic = `trade.${market.symbol}`;
    if (this.app.numSubscribers(topic) === 0) return;
    this.publish(topic, topic, {
      e: 'trade', E: nowUs(), s: market.symbol,
      p: priceTextFixed(market, rec.priceTicks), q: qtyTextFixed(market, rec.qtyLots),
      b: String(rec.buyerOrderId), a: String(rec.sellerOrderId),
      t: rec.tradeId, T: rec.timeUs, m: rec.buyerIsMaker,
    });
  }

  private onOrder(view: DataView, offset: number): void {
    const rec = scratch.order;
    readOrder(view, offset, rec);
    const market = this.front.config.markets[rec.marketId];
    const all = `${rec.accountId}|account.orderUpdate`;
    const one = `${all}.${market.symbol}`;
    const wantAll = this.app.numSubscribers(all) > 0;
    const wantOne = this.app.numSubscribers(one) > 0;
    if (!wantAll && !wantOne) return;
    const feeAsset = this.front.config.assets[rec.feeAssetId];
    const data = orderUpdateJson(market, rec, nowUs(), feeAsset?.symbol ?? market.quoteSymbol);
    if (wantAll) this.publish(all, 'account.orderUpdate', data);
    if (wantOne) this.publish(one, `account.orderUpdate.${market.symbol}`, data);
  }

  private onBalance(view: DataView, offset: number): void {
    const rec = scratch.balance;
    readBalance(view, offset, rec);
    const topic = `${rec.accountId}|account.balanceUpdate`;
    if (this.app.numSubscribers(topic) === 0) return;
    const asset = this.front.config.assets[rec.assetId];
    this.publish(topic, 'account.balanceUpdate', {
      e: 'balanceUpdate', E: nowUs(), T: rec.timeUs, s: asset.symbol,
      f: assetText(asset, rec.availableUnits), l: assetText(asset, rec.lockedUnits),
      // The engine has no staking: nothing is ever staked.
      x: '0',
    });
  }

  private publish(topic: string, stream: string, data: Record<string, unknown>): void {
    this.front.metrics?.add('wsMessagesSent', this.app.numSubscribers(topic));
    this.app.publish(topic, JSON.stringify({ stream, data }), false, true);
  }
}

type Resolve = { ok: true; topic: string } | { ok: false };

const PUBLIC_KINDS = new Set(['depth', 'trade', 'bookTicker', 'ticker']);
const AGGREGATE_NAMES = new Set<string>(AGGREGATES.map((a) => a.name));

/** Resolves a stream name to its topic; private names need the signer's account. */
export function resolveStream(name: string, markets: Map<string, MarketInfo>, accountId: number): Resolve {
  if (name === 'account.orderUpdate' || name === 'account.balanceUpdate') {
    return accountId > 0 ? { ok: true, topic: `${accountId}|${name}` } : { ok: false };
  }
  if (name.startsWith('account.orderUpdate.') && markets.has(name.slice('account.orderUpdate.'.length))) {
    return accountId > 0 ? { ok: true, topic: `${accountId}|${name}` } : { ok: false };
  }
  const parts = name.split('.');
  if (parts.length === 2 && PUBLIC_KINDS.has(parts[0]) && markets.has(parts[1])) return { ok: true, topic: name };
  if (parts.length === 3 && markets.has(parts[2])) {
    if (parts[0] === 'depth' && AGGREGATE_NAMES.has(parts[1])) return { ok: true, topic: name };
    if (parts[0] === 'kline' && KLINE_INTERVALS.has(parts[1])) return { ok: true, topic: name };
  }
  return { ok: false };
}

function errorFrame(id: unknown, code: number, message: string): string {
  const echoed = typeof id === 'number' || (typeof id === 'string' && id.length <= MAX_ECHOED_ID_CHARS) ? id : null;
  return JSON.stringify({ id: echoed, error: { code, message } });
}

const INVALID_SIGNATURE = 'Invalid signature';
const SIGNATURE_REPLAYED = 'Signature already used from another address';
const SIGNED_BEFORE_RESTART = 'Signature made before the server restarted; sign again';
const REPLAY_TABLE_FULL = 'Too many signed requests in flight; sign again later';

/** Counts an upgrade against its address's request rate and connection count; the refusal, if any. */
function admitConnection(limits: RateLimits | undefined, address: ArrayBuffer): ClientKey | ApiError | null {
  if (!limits) return null;
  return limits.takeAddress(address, Date.now()) ?? limits.openConnection(address);
}

/** Answers a refused upgrade with its error (counted when a rate limit refused it). */
function refuseUpgrade(res: HttpResponse, refusal: ApiError, front: FrontContext): void {
  if (refusal.status === 429) front.metrics?.add('rateLimited');
  res.writeStatus(statusLine(refusal.status)).writeHeader('Content-Type', 'application/json; charset=utf-8');
  if (refusal.retryAfterS !== undefined) res.writeHeader('Retry-After', String(refusal.retryAfterS));
  res.end(errorBody(refusal));
}

/** Logs and counts a connection being closed for not reading fast enough. */
function reportSlowConsumer(front: FrontContext, ws: WebSocket<SocketData>, state: SocketData): void {
  front.metrics?.add('wsSlowConsumers');
  front.log.warn({ subscriptions: state.subscriptions.size, bufferedBytes: ws.getBufferedAmount() }, 'closing slow WebSocket consumer');
}

function isApiError(value: ClientKey | ApiError | null): value is ApiError {
  return value !== null && 'status' in value;
}

/**
 * Verifies a private subscription's signature array and checks no other address used it; returns
 * the account id, or the error message to answer with (code 4001).
 */
function subscriberAccount(
  signature: unknown, front: FrontContext, verifier: SignatureVerifier, replayGuard: ReplayGuard | undefined, owner: number,
): number | string {
  if (!Array.isArray(signature) || signature.length !== 4) return INVALID_SIGNATURE;
  const [key, sig, ts, win] = signature.map((v) => (typeof v === 'number' ? String(v) : v));
  if (typeof key !== 'string' || typeof sig !== 'string' || typeof ts !== 'string' || typeof win !== 'string') return INVALID_SIGNATURE;
  const nowMs = Date.now();
  if (!checkWindow(ts, win, nowMs).ok) return INVALID_SIGNATURE;
  const accountId = front.data.accountsByKey.get(key);
  if (accountId === undefined) return INVALID_SIGNATURE;
  if (!verifier.verify(key, sig, signingString('subscribe', [], ts, win, false))) return INVALID_SIGNATURE;
  if (!replayGuard) return accountId;
  // checkWindow accepted both as plain decimal integers.
  if (replayGuard.signedBeforeRestart(Number(ts))) return SIGNED_BEFORE_RESTART;
  const verdict = replayGuard.check(Buffer.from(sig, 'base64'), Number(ts) + Number(win), nowMs, owner);
  if (verdict === 'replayed') return SIGNATURE_REPLAYED;
  if (verdict === 'full') return REPLAY_TABLE_FULL;
  return accountId;
}

export function mountWebSocket(
  app: TemplatedApp, front: FrontContext, verifier: SignatureVerifier, streams: Streams, replayGuard?: ReplayGuard,
  limits?: RateLimits,
): void {
  app.ws<SocketData>('/*', {
    compression: uWS.SHARED_COMPRESSOR,
    maxPayloadLength: MAX_FRAME_BYTES,
    maxBackpressure: MAX_BACKPRESSURE_BYTES,
    // Not uWS's own close-on-limit: the dropped handler closes with a code that says why.
    closeOnBackpressureLimit: false,
    idleTimeout: front.config.wsIdleTimeoutS ?? DEFAULT_WS_IDLE_TIMEOUT_S,
    sendPingsAutomatically: true,
    upgrade: (res, req, context) => {
      const address = res.getRemoteAddress();
      const admitted = admitConnection(limits, address);
      if (isApiError(admitted)) return refuseUpgrade(res, admitted, front);
      res.upgrade<SocketData>(
        {
          subscriptions: new CountedSubscriptions(front.metrics), owner: addressOwner(new Uint8Array(address)), address: address.slice(0), closed: false, dropping: false, graceTimer: null,
          connectionKey: admitted, messages: { tatMs: 0 },
        },
        req.getHeader('sec-websocket-key'),
        req.getHeader('sec-websocket-protocol'),
        req.getHeader('sec-websocket-extensions'),
        context,
      );
    },
    // A message dropped for backpressure marks a slow consumer: it loses its subscriptions at once
    // (nothing more is queued for it, nobody else waits on it), then gets close code 1008 as soon
    // as it has read what was already queued (a close frame sent into a full buffer would itself
    // be dropped); a peer that reads nothing for SLOW_CONSUMER_GRACE_MS is cut off.
    open: () => front.metrics?.add('wsConnections'),
    dropped: (ws: WebSocket<SocketData>) => {
      const state = ws.getUserData();
      if (state.closed || state.dropping) return;
      state.dropping = true;
      reportSlowConsumer(front, ws, state);
      setImmediate(() => {
        if (state.closed) return;
        for (const topic of state.subscriptions.values()) ws.unsubscribe(topic);
        state.subscriptions.clear();
        state.graceTimer = setTimeout(() => {
          if (!state.closed) ws.close();
        }, SLOW_CONSUMER_GRACE_MS);
        endIfDrained(ws);
      });
    },
    drain: (ws: WebSocket<SocketData>) => {
      if (ws.getUserData().dropping) endIfDrained(ws);
    },
    close: (ws: WebSocket<SocketData>) => {
      const state = ws.getUserData();
      state.closed = true;
      front.metrics?.socketClosed(state.subscriptions);
      if (state.graceTimer !== null) clearTimeout(state.graceTimer);
      if (state.connectionKey !== null) limits!.closeConnection(state.connectionKey);
    },
    message: (ws: WebSocket<SocketData>, message: ArrayBuffer) => {
      const state = ws.getUserData();
      // A slow consumer being closed has lost its subscriptions and gets no new ones.
      if (state.dropping || state.closed) return;
      if (message.byteLength > MAX_MESSAGE_BYTES) {
        ws.end(CLOSE_MESSAGE_TOO_BIG, `Message too large (at most ${MAX_MESSAGE_BYTES} bytes)`);
        return;
      }
      if (limits && !limits.takeMessage(state.messages, Date.now())) {
        // Answering each excess message would itself be a flood: the connection is closed.
        state.closed = true;
        ws.end(CLOSE_MESSAGE_RATE, 'Message rate limit exceeded');
        return;
      }
      let request: { method?: unknown; params?: unknown; signature?: unknown; id?: unknown };
      try {
        request = JSON.parse(Buffer.from(message).toString('utf8'));
      } catch {
        ws.send(errorFrame(null, 4000, 'Invalid JSON'));
        return;
      }
      if (typeof request !== 'object' || request === null) {
        ws.send(errorFrame(null, 4000, 'Invalid request'));
        return;
      }
      const method = request.method;
      if ((method !== 'SUBSCRIBE' && method !== 'UNSUBSCRIBE') || !Array.isArray(request.params)) {
        ws.send(errorFrame(request.id, 4000, 'Invalid method or params'));
        return;
      }
      if (request.params.length > MAX_SUBSCRIPTIONS) {
        ws.send(method === 'SUBSCRIBE'
          ? errorFrame(request.id, 4005, `Too many subscriptions (at most ${MAX_SUBSCRIPTIONS})`)
          : errorFrame(request.id, 4000, `Too many streams in one message (at most ${MAX_SUBSCRIPTIONS})`));
        return;
      }
      const subscriptions = state.subscriptions;
      const needsAccount = request.params.some((p) => typeof p === 'string' && p.startsWith('account.'));
      let accountId = 0;
      if (needsAccount && method === 'SUBSCRIBE') {
        // A signature check costs what an HTTP request's does: it is charged to the address first.
        const limited = limits?.takeAddress(state.address, Date.now());
        const verdict = limited ? null : subscriberAccount(request.signature, front, verifier, replayGuard, state.owner);
        if (limited) ws.send(errorFrame(request.id, CODE_RATE_LIMITED, limited.message));
        else if (typeof verdict === 'string') ws.send(errorFrame(request.id, 4001, verdict));
        else if (verdict !== null) accountId = verdict;
      }
      for (const name of request.params) {
        if (typeof name !== 'string') {
          ws.send(errorFrame(request.id, 4006, 'Invalid stream'));
          continue;
        }
        if (method === 'UNSUBSCRIBE') {
          const topic = subscriptions.get(name);
          if (topic !== undefined) {
            ws.unsubscribe(topic);
            subscriptions.delete(name);
          }
          continue;
        }
        if (subscriptions.has(name)) continue;
        const resolved = resolveStream(name, front.marketsBySymbol, accountId);
        if (!resolved.ok) {
          // A private stream whose signature failed was already answered with 4001.
          if (!(name.startsWith('account.') && needsAccount && accountId === 0)) ws.send(errorFrame(request.id, 4006, 'Invalid stream'));
          continue;
        }
        if (subscriptions.size >= MAX_SUBSCRIPTIONS) {
          ws.send(errorFrame(request.id, 4005, `Too many subscriptions (at most ${MAX_SUBSCRIPTIONS})`));
          break;
        }
        ws.subscribe(resolved.topic);
        subscriptions.set(name, resolved.topic);
        streams.onSubscribed(name, resolved.topic);
      }
    },
  });
}
