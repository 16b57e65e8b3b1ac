// A front thread's read models, built from the outbound event stream: each market's aggregated
// book (absolute level quantities, stamped with the market's depth update id, the id space shared
// by REST depth.lastUpdateId and the depth stream's U/u) and the registry of API keys.
//
// A front thread starts with a QuerySnapshot that passes through the engine in order: the reply
// resets these models to the engine's state at that point of the stream, and every later event
// applies on top, so the models are always exactly the engine's state at the last record drained.

import type { MarketInfo, ServerConfig } from '../config.js';
import { Side } from '../../engine/types.js';

export class BookModel {
  readonly bids = new Map<number, number>();
  readonly asks = new Map<number, number>();
  updateId = 0;
  timeUs = 0;
  lastTradeId = 0;

  constructor(readonly market: MarketInfo) {}

  setLevel(side: Side, priceTicks: number, qtyLots: number): void {
    const levels = side === Side.Bid ? this.bids : this.asks;
    if (qtyLots === 0) levels.delete(priceTicks);
    else levels.set(priceTicks, qtyLots);
  }

  clear(): void {
    this.bids.clear();
    this.asks.clear();
    this.updateId = 0;
    this.timeUs = 0;
    this.lastTradeId = 0;
  }

  /** The best `limit` levels of a side as [priceTicks, qtyLots], in ascending price order. */
  levels(side: Side, limit: number): Array<[number, number]> {
    const map = side === Side.Bid ? this.bids : this.asks;
    const prices = [...map.keys()].sort((a, b) => a - b);
    const chosen = side === Side.Bid ? prices.slice(Math.max(0, prices.length - limit)) : prices.slice(0, limit);
    return chosen.map((price) => [price, map.get(price)!]);
  }
}

export class MarketData {
  readonly books: BookModel[];
  /** base64 ed25519 public key → account id. */
  readonly accountsByKey = new Map<string, number>();

  constructor(config: ServerConfig) {
    this.books = config.markets.map((market) => new BookModel(market));
  }

  reset(): void {
    for (const book of this.books) book.clear();
    this.accountsByKey.clear();
  }

  registerKey(key: Uint8Array, accountId: number): void {
    this.accountsByKey.set(Buffer.from(key).toString('base64'), accountId);
  }

  /** issue 4: true when the account id is registered (accounts are dense: 1 … count). */
  hasAccount(accountId: number): boolean {
    for (const id of this.accountsByKey.values()) if (id === accountId) return true;
    return false;
  }
}
