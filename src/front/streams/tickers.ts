// bookTicker.<symbol> and ticker.<symbol>.
//
// bookTicker is sent at a batch end when the best bid or ask (price or quantity) changed; ticker
// (24-hour window) once a second per subscribed market. Ticker values come from the LMDB history,
// which shows a batch when it commits, a moment before it is flushed: a ticker is sent only once
// seqDurable covers every trade in it, else retried at the next tick.

import type { MarketInfo } from '../../config.js';
import type { BookModel } from '../market-data.js';
import { priceTextFixed, qtyTextFixed } from '../../wire/market-codec.js';
import { tickerStreamJson } from '../../wire/market-json.js';
import { nowUs, type StreamFamily, type StreamOutput } from './family.js';

const TICKER_WINDOW_S = 86_400;
const KINDS = new Set(['bookTicker', 'ticker']);

export class TickerStreams implements StreamFamily {
  /** The best bid and ask last seen per market ("bid:qty:ask:qty"). */
  private readonly bookTickerSent: string[];
  private readonly tickerSentMs: number[];

  constructor(private readonly out: StreamOutput) {
    const markets = out.front.config.markets;
    this.bookTickerSent = markets.map(() => '');
    this.tickerSentMs = markets.map(() => 0);
  }

  topicOf(name: string, markets: Map<string, MarketInfo>): string | null {
    const parts = name.split('.');
    return parts.length === 2 && KINDS.has(parts[0]) && markets.has(parts[1]) ? name : null;
  }

  onBatchEnd(changed: readonly boolean[]): void {
    const markets = this.out.front.config.markets;
    for (let marketId = 0; marketId < markets.length; marketId++) {
      if (changed[marketId]) this.maybeBookTicker(markets[marketId], this.out.data.books[marketId]);
    }
  }

  onTick(_tickCount: number, nowMs: number): void {
    for (const market of this.out.front.config.markets) this.maybeTicker(market, nowMs);
  }

  private maybeBookTicker(market: MarketInfo, book: BookModel): void {
    const marketId = market.spec.marketId;
    const bidQty = book.bestBid === 0 ? 0 : book.bids.get(book.bestBid)!;
    const askQty = book.bestAsk === 0 ? 0 : book.asks.get(book.bestAsk)!;
    const top = `${book.bestBid}:${bidQty}:${book.bestAsk}:${askQty}`;
    if (top === this.bookTickerSent[marketId]) return;
    this.bookTickerSent[marketId] = top;
    const topic = `bookTicker.${market.symbol}`;
    if (!this.out.wanted(topic)) return;
    this.out.publish(topic, topic, {
      e: 'bookTicker', E: nowUs(), s: market.symbol,
      // An empty side shows price and quantity 0 (the official Rust client requires decimals).
      a: priceTextFixed(market, book.bestAsk), A: qtyTextFixed(market, askQty),
      b: priceTextFixed(market, book.bestBid), B: qtyTextFixed(market, bidQty),
      u: book.updateId, T: book.timeUs,
    });
  }

  private maybeTicker(market: MarketInfo, nowMs: number): void {
    const marketId = market.spec.marketId;
    if (nowMs - this.tickerSentMs[marketId] < 1000) return;
    const topic = `ticker.${market.symbol}`;
    if (!this.out.wanted(topic)) return;
    const nowS = Math.floor(nowMs / 1000);
    const history = this.out.front.history;
    const window = history.window(marketId, nowS - TICKER_WINDOW_S, nowS);
    if (window.lastSeq > this.out.front.link.seqDurableNow()) return; // not flushed yet: next tick
    const last = window.tradeCount === 0 ? history.lastTrade(marketId, this.out.data.books[marketId].lastTradeId) : null;
    this.tickerSentMs[marketId] = nowMs;
    this.out.publish(topic, topic, tickerStreamJson(market, window, last, nowUs()));
  }
}
