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
// U = previous u + 1.
//
// Protocol: {"method":"SUBSCRIBE"|"UNSUBSCRIBE","params":[...],"signature":[key,sig,ts,window]}.
// An invalid stream answers {"id":null,"error":{"code":4006,"message":"Invalid stream"}}; a bad
// private-stream signature answers code 4001 (the public API documents no code for it; chosen
// here). Neither disturbs the connection's other streams.

import uWS, { type TemplatedApp, type WebSocket } from 'uWebSockets.js';
import type { MarketInfo } from '../config.js';
import { RecordType, Side } from '../../engine/types.js';
import { readAccount, readDepth, readMarket, readMarketState, readOrder, readTrade } from '../../engine/codec.js';
import { checkWindow, signingString, type SignatureVerifier } from '../auth.js';
import type { EventHandler } from './engine-link.js';
import type { MarketData } from './market-data.js';
import { scratch, type FrontContext } from './context.js';
import { priceTextFixed, qtyTextFixed } from '../wire/market-codec.js';
import { orderUpdateJson } from '../wire/orders.js';
import { performance } from 'node:perf_hooks';

export const MAX_SUBSCRIPTIONS = 64;
const MAX_MESSAGE_BYTES = 16 * 1024;
const MAX_BACKPRESSURE_BYTES = 1024 * 1024;
const IDLE_TIMEOUT_S = 120;

interface SocketData {
  /** stream name → uWS topic */
  subscriptions: Map<string, string>;
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

export class Streams implements EventHandler {
  private readonly depthBatches: Array<DepthBatch | null>;

  constructor(
    private readonly app: TemplatedApp,
    private readonly front: FrontContext,
    private readonly data: MarketData,
  ) {
    this.depthBatches = front.config.markets.map(() => null);
  }

  onEvent(type: RecordType, view: DataView, offset: number): void {
    switch (type) {
      case RecordType.Depth: return this.onDepth(view, offset);
      case RecordType.Trade: return this.onTrade(view, offset);
      case RecordType.Order: return this.onOrder(view, offset);
      case RecordType.Account: {
        readAccount(view, offset, scratch.account);
        this.data.registerKey(scratch.account.key, scratch.account.accountId);
        return;
      }
      // issue 3 (engine): the operator changed a market's order book state
      case RecordType.MarketState:
        return this.onMarketState(view, offset);
      default:
        // Balance events feed account.balanceUpdate, which comes with issue 5.
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
      const topic = `depth.${market.symbol}`;
      if (this.app.numSubscribers(topic) === 0) continue;
      const book = this.data.books[marketId];
      const levels = (prices: Set<number>, map: Map<number, number>) =>
        [...prices].sort((a, b) => a - b).map((p) => [priceTextFixed(market, p), qtyTextFixed(market, map.get(p) ?? 0)]);
      this.publish(topic, topic, {
        e: 'depth', E: nowUs(), s: market.symbol,
        a: levels(batch.asks, book.asks), b: levels(batch.bids, book.bids),
        U: batch.firstId, u: batch.lastId, T: batch.timeUs,
      });
    }
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

  private publish(topic: string, stream: string, data: Record<string, unknown>): void {
    this.app.publish(topic, JSON.stringify({ stream, data }), false, true);
  }
}

type Resolve = { ok: true; topic: string } | { ok: false };

/** Resolves a stream name to its topic; private names need the signer's account. */
function resolveStream(name: string, markets: Map<string, MarketInfo>, accountId: number): Resolve {
  if (name === 'account.orderUpdate') return accountId > 0 ? { ok: true, topic: `${accountId}|${name}` } : { ok: false };
  const dot = name.indexOf('.');
  if (dot < 0) return { ok: false };
  const kind = name.slice(0, dot);
  const rest = name.slice(dot + 1);
  if ((kind === 'depth' || kind === 'trade') && markets.has(rest)) return { ok: true, topic: name };
  if (name.startsWith('account.orderUpdate.') && markets.has(name.slice('account.orderUpdate.'.length))) {
    return accountId > 0 ? { ok: true, topic: `${accountId}|${name}` } : { ok: false };
  }
  return { ok: false };
}

function errorFrame(id: unknown, code: number, message: string): string {
  return JSON.stringify({ id: id ?? null, error: { code, message } });
}

/** Verifies a private subscription's signature array; returns the account id, 0 if invalid. */
function subscriberAccount(signature: unknown, front: FrontContext, verifier: SignatureVerifier): number {
  if (!Array.isArray(signature) || signature.length !== 4) return 0;
  const [key, sig, ts, win] = signature.map((v) => (typeof v === 'number' ? String(v) : v));
  if (typeof key !== 'string' || typeof sig !== 'string' || typeof ts !== 'string' || typeof win !== 'string') return 0;
  if (!checkWindow(ts, win, Date.now()).ok) return 0;
  const accountId = front.data.accountsByKey.get(key);
  if (accountId === undefined) return 0;
  return verifier.verify(key, sig, signingString('subscribe', [], ts, win, false)) ? accountId : 0;
}

export function mountWebSocket(app: TemplatedApp, front: FrontContext, verifier: SignatureVerifier): void {
  app.ws<SocketData>('/*', {
    compression: uWS.SHARED_COMPRESSOR,
    maxPayloadLength: MAX_MESSAGE_BYTES,
    maxBackpressure: MAX_BACKPRESSURE_BYTES,
    closeOnBackpressureLimit: true,
    idleTimeout: IDLE_TIMEOUT_S,
    sendPingsAutomatically: true,
    upgrade: (res, req, context) => {
      res.upgrade<SocketData>(
        { subscriptions: new Map() },
        req.getHeader('sec-websocket-key'),
        req.getHeader('sec-websocket-protocol'),
        req.getHeader('sec-websocket-extensions'),
        context,
      );
    },
    message: (ws: WebSocket<SocketData>, message: ArrayBuffer) => {
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
      const subscriptions = ws.getUserData().subscriptions;
      const needsAccount = request.params.some((p) => typeof p === 'string' && p.startsWith('account.'));
      let accountId = 0;
      if (needsAccount && method === 'SUBSCRIBE') {
        accountId = subscriberAccount(request.signature, front, verifier);
        if (accountId === 0) ws.send(errorFrame(request.id, 4001, 'Invalid signature'));
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
      }
    },
  });
}
