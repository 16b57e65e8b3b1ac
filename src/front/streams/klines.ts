// kline.<interval>.<symbol>: the current candle on change, at most once a second per stream, plus
// a final X: true message when its candle closes. Candles come from the LMDB history, which shows
// a batch when it commits, a moment before it is flushed: a candle is sent only once seqDurable
// covers every trade in it, else retried at the next tick.

import type { MarketInfo } from '../../config.js';
import { klineStreamJson } from '../../wire/market-json.js';
import { KLINE_INTERVALS, bucketStart, nextBucket } from '../market-history.js';
import { nowUs, type StreamFamily, type StreamOutput } from './family.js';

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

export class KlineStreams implements StreamFamily {
  /** Streams with subscribers, by topic; one that lost them all is dropped at the next tick. */
  private readonly streams = new Map<string, KlineStream>();

  constructor(private readonly out: StreamOutput) {}

  topicOf(name: string, markets: Map<string, MarketInfo>): string | null {
    const parts = name.split('.');
    return parts.length === 3 && parts[0] === 'kline' && KLINE_INTERVALS.has(parts[1]) && markets.has(parts[2]) ? name : null;
  }

  onSubscribed(name: string, topic: string): void {
    if (!name.startsWith('kline.') || this.streams.has(topic)) return;
    const [, interval, symbol] = name.split('.');
    const market = this.out.front.marketsBySymbol.get(symbol)!;
    const marketId = market.spec.marketId;
    this.streams.set(topic, {
      topic, marketId, interval,
      bucketS: bucketStart(interval, Math.floor(Date.now() / 1000)),
      finalDueS: null,
      sentTradeId: this.out.data.books[marketId].lastTradeId,
      sentMs: 0,
    });
  }

  onTick(_tickCount: number, nowMs: number): void {
    for (const stream of this.streams.values()) {
      if (!this.out.wanted(stream.topic)) this.streams.delete(stream.topic);
      else this.maybeKline(stream, nowMs);
    }
  }

  private maybeKline(k: KlineStream, nowMs: number): void {
    const market = this.out.front.config.markets[k.marketId];
    const lastTradeId = this.out.data.books[k.marketId].lastTradeId;
    const bucket = bucketStart(k.interval, Math.floor(nowMs / 1000));
    if (bucket !== k.bucketS) {
      if (k.finalDueS === null) k.finalDueS = k.bucketS;
      k.bucketS = bucket;
    }
    const durable = this.out.front.link.seqDurableNow();
    const candleOf = (startS: number) => this.out.front.history.klines(k.marketId, lastTradeId, k.interval, startS, nextBucket(k.interval, startS))[0];
    if (k.finalDueS !== null) {
      const closed = candleOf(k.finalDueS);
      if (closed !== undefined && closed.lastSeq > durable) return;
      k.finalDueS = null;
      if (closed !== undefined) this.out.publish(k.topic, k.topic, klineStreamJson(market, closed, true, nowUs()));
    }
    if (lastTradeId === k.sentTradeId || nowMs - k.sentMs < 1000) return;
    const current = candleOf(bucket);
    if (current !== undefined && current.lastSeq > durable) return;
    k.sentTradeId = lastTradeId;
    k.sentMs = nowMs;
    if (current !== undefined) this.out.publish(k.topic, k.topic, klineStreamJson(market, current, false, nowUs()));
  }
}
