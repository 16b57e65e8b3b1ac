// What every stream family shares: the output (uWS pub/sub, through which every message leaves)
// and the hooks a family may take from the stream core (streams.ts). The core decodes each event
// record once, updates the read models, then hands the typed record to the families that want it.

import type { TemplatedApp } from 'uWebSockets.js';
import { performance } from 'node:perf_hooks';
import type { MarketInfo } from '../../config.js';
import type { BalanceRec, DepthRec, MarkPriceRec, OpenInterestRec, OrderRec, PositionRec, TradeRec } from '../../../engine/bus/types.js';
import type { FrontContext } from '../context.js';
import type { MarketData } from '../market-data.js';

/** The streams' clock: quiet-book depth, aggregated depth, ticker and kline all run on it. */
export const TICK_MS = 100;

// Read once: the getter costs as much as the clock itself, and the origin never changes.
const TIME_ORIGIN_MS = performance.timeOrigin;

export function nowUs(): number {
  return Math.floor((TIME_ORIGIN_MS + performance.now()) * 1000);
}

/**
 * How many per-event messages of one batch share a clock reading as their emit time (E). A
 * reading costs about as much as encoding a trade message; messages this close together leave
 * within a few µs of each other, so E stays the emit time to within that.
 */
export const EMIT_TIME_MESSAGES = 16;

/** Where families publish, and what they read: the thread's context and its read models. */
export class StreamOutput {
  /**
   * Counts the drained batches (endBatch). Subscriptions change only in uWS's callbacks, which do
   * not run while a batch is drained (publish closes no socket: closeOnBackpressureLimit is off,
   * connection.ts), so a family may read a topic's subscriber count once per batch (a native call
   * per event would cost as much as the message's encoding).
   */
  batch = 0;
  private emitTimeUs = 0;
  /** Messages that may still share emitTimeUs. */
  private emitTimeLeft = 0;

  constructor(
    private readonly app: TemplatedApp,
    readonly front: FrontContext,
    readonly data: MarketData,
  ) {}

  /** A drained batch ended: per-batch readings (subscriber counts, the emit time) are read again. */
  endBatch(): void {
    this.batch++;
    this.emitTimeLeft = 0;
  }

  /**
   * The emit time (E, µs) of a per-event message: the clock, read afresh for the first message of
   * each batch and then once per EMIT_TIME_MESSAGES messages. Never earlier than the records of
   * the batch, which were all written before it was drained.
   */
  eventTimeUs(): number {
    if (this.emitTimeLeft === 0) {
      this.emitTimeUs = nowUs();
      this.emitTimeLeft = EMIT_TIME_MESSAGES;
    }
    this.emitTimeLeft--;
    return this.emitTimeUs;
  }

  /** Whether anyone listens on `topic` (payloads are built only when someone does). */
  wanted(topic: string): boolean {
    return this.app.numSubscribers(topic) > 0;
  }

  /** How many connections listen on `topic` (its UTF-8 bytes, read in place by uWS). */
  subscriberCount(topic: Uint8Array): number {
    return this.app.numSubscribers(topic);
  }

  /** Sends `{stream, data}` to the topic's subscribers; `stream` is the name they subscribed to. */
  publish(topic: string, stream: string, data: Record<string, unknown>): void {
    this.front.metrics?.add('wsMessagesSent', this.app.numSubscribers(topic));
    this.app.publish(topic, JSON.stringify({ stream, data }), false, true);
  }

  /**
   * Sends a message already encoded as a whole `{stream, data}` envelope (message-writer.ts) to
   * the `subscriberCount` connections on `topic`; uWS copies it before returning.
   *
   * Uncompressed, also to connections that negotiated permessage-deflate (RFC 7692 lets a sender
   * leave any message uncompressed; clients read the same text): uWS deflates a published message
   * once per subscriber, some µs each, where sending it costs a fraction of one, and a small
   * per-event message such as a trade (about 200 bytes) only shrinks by about a third.
   */
  publishEncoded(topic: Uint8Array, message: Uint8Array, subscriberCount: number): void {
    this.front.metrics?.add('wsMessagesSent', subscriberCount);
    this.app.publish(topic, message, false, false);
  }
}

/** One family of streams (depth, trades, tickers, klines, account): its names and its events. */
export interface StreamFamily {
  /**
   * The uWS topic of a stream name this family serves, or null when the name is not one of its
   * (or is private and `accountId` is 0: no verified signer).
   */
  topicOf(name: string, markets: Map<string, MarketInfo>, accountId: number): string | null;
  onDepth?(rec: DepthRec): void;
  onTrade?(rec: TradeRec): void;
  onOrder?(rec: OrderRec): void;
  onBalance?(rec: BalanceRec): void;
  /** A perpetual's mark sampled (once a second while its index is fresh). */
  onMarkPrice?(rec: MarkPriceRec): void;
  /** A perpetual position changed (a fill or a funding payment; engine/core/perp/position-events.ts). */
  onPosition?(rec: PositionRec): void;
  /** A perpetual's open interest, with each mark sample (engine/core/perp/mark-price.ts). */
  onOpenInterest?(rec: OpenInterestRec): void;
  /** After each drained batch; `changed[marketId]` is true for each book the batch changed. */
  onBatchEnd?(changed: readonly boolean[]): void;
  /** Every TICK_MS; `tickCount` counts the ticks since start. */
  onTick?(tickCount: number, nowMs: number): void;
  /** A connection subscribed to `name` (topic `topic`). */
  onSubscribed?(name: string, topic: string): void;
}
