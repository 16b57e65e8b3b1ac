// A front thread's read models, built from the outbound event stream: each market's aggregated
// book (absolute level quantities, its order book state, stamped with the market's depth update id, the id space shared
// by REST depth.lastUpdateId and the depth stream's U/u), the registry of API keys, and the
// exchange's system state (maintenance).
//
// A front thread starts with a QuerySnapshot that passes through the engine in order: the reply
// resets these models to the engine's state at that point of the stream, and every later event
// applies on top, so the models are always exactly the engine's state at the last record drained.

import type { MarketInfo, ServerConfig } from '../config.js';
import { OrderBookState, Side, SystemState } from '../../engine/bus/types.js';

export class BookModel {
  readonly bids = new Map<number, number>();
  readonly asks = new Map<number, number>();
  updateId = 0;
  timeUs = 0;
  lastTradeId = 0;
  /** Best prices in ticks, 0 when the side is empty (kept on every change, for bookTicker). */
  bestBid = 0;
  bestAsk = 0;
  /** The engine's OrderBookState of this market (MarketState records). */
  orderBookState: OrderBookState = OrderBookState.Open;

  constructor(readonly market: MarketInfo) {}

  setLevel(side: Side, priceTicks: number, qtyLots: number): void {
    if (side === Side.Bid) {
      if (qtyLots === 0) {
        this.bids.delete(priceTicks);
        if (priceTicks === this.bestBid) this.bestBid = bestOf(this.bids, 1);
      } else {
        this.bids.set(priceTicks, qtyLots);
        if (priceTicks > this.bestBid) this.bestBid = priceTicks;
      }
    } else if (qtyLots === 0) {
      this.asks.delete(priceTicks);
      if (priceTicks === this.bestAsk) this.bestAsk = bestOf(this.asks, -1);
    } else {
      this.asks.set(priceTicks, qtyLots);
      if (this.bestAsk === 0 || priceTicks < this.bestAsk) this.bestAsk = priceTicks;
    }
  }

  clear(): void {
    this.bids.clear();
    this.asks.clear();
    this.updateId = 0;
    this.timeUs = 0;
    this.lastTradeId = 0;
    this.bestBid = 0;
    this.bestAsk = 0;
    this.orderBookState = OrderBookState.Open;
  }

  /** The best `limit` levels of a side as [priceTicks, qtyLots], in ascending price order. */
  levels(side: Side, limit: number): Array<[number, number]> {
    const map = side === Side.Bid ? this.bids : this.asks;
    const prices = [...map.keys()].sort((a, b) => a - b);
    const chosen = side === Side.Bid ? prices.slice(Math.max(0, prices.length - limit)) : prices.slice(0, limit);
    return chosen.map((price) => [price, map.get(price)!]);
  }
}

/** The highest (direction 1) or lowest (-1) price of a side, 0 when empty: a scan, run only when
 * the best level itself goes away. */
function bestOf(levels: Map<number, number>, direction: 1 | -1): number {
  let best = 0;
  for (const price of levels.keys()) {
    if (best === 0 || (direction === 1 ? price > best : price < best)) best = price;
  }
  return best;
}

export class MarketData {
  readonly books: BookModel[];
  /** base64 ed25519 public key → account id. */
  readonly accountsByKey = new Map<string, number>();
  /** The engine's SystemState (SystemState records): in Maintenance, trading and withdrawals are refused. */
  systemState: SystemState = SystemState.Ok;

  constructor(config: ServerConfig) {
    this.books = config.markets.map((market) => new BookModel(market));
  }

  reset(): void {
    for (const book of this.books) book.clear();
    this.accountsByKey.clear();
    this.systemState = SystemState.Ok;
  }

  inMaintenance(): boolean {
    return this.systemState === SystemState.Maintenance;
  }

  registerKey(key: Uint8Array, accountId: number): void {
    this.accountsByKey.set(Buffer.from(key).toString('base64'), accountId);
  }

  /** True when the account id is registered (accounts are dense: 1 … count). */
  hasAccount(accountId: number): boolean {
    for (const id of this.accountsByKey.values()) if (id === accountId) return true;
    return false;
  }
}
