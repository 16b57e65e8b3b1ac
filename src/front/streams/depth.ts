// depth.<symbol> and its aggregated variants depth.200ms / 600ms / 1000ms.<symbol>.
//
// Every level change of one engine command shares one update id. Changes are collected per
// market during a drained batch and sent at the batch end as one message with U = first id and
// u = last id, levels at their absolute quantity (0 = removed), so consecutive messages satisfy
// U = previous u + 1. The aggregated variants merge the batches of their period the same way.
//
// Quiet books: clients wait for several depth messages before they fetch the REST snapshot
// (ccxt: 11), so a subscribed market that sent nothing during a tick gets an empty message
// (a: [], b: []) with U = L + 1 and u = L, L being the market's current update id. It consumes no
// id — ids come only from the engine — and keeps the documented contract for every client:
// U = previous u + 1 holds across it, and "apply if u > lastUpdateId" skips it. The aggregated
// variants send the same empty message when their period saw no change.

import { Side, type DepthRec } from '../../../engine/bus/types.js';
import type { MarketInfo } from '../../config.js';
import type { BookModel } from '../market-data.js';
import { priceTextFixed, qtyTextFixed } from '../../wire/market-codec.js';
import { nowUs, type StreamFamily, type StreamOutput } from './family.js';

const AGGREGATES = [
  { name: '200ms', ticks: 2 },
  { name: '600ms', ticks: 6 },
  { name: '1000ms', ticks: 10 },
] as const;
const AGGREGATE_NAMES = new Set<string>(AGGREGATES.map((a) => a.name));

interface DepthBatch {
  firstId: number;
  lastId: number;
  timeUs: number;
  bids: Set<number>;
  asks: Set<number>;
}

export class DepthStreams implements StreamFamily {
  private readonly batches: Array<DepthBatch | null>;
  /** [aggregate][market]: changes merged since the aggregate's last message. */
  private readonly aggregates: Array<Array<DepthBatch | null>>;
  private readonly sentThisTick: boolean[];

  constructor(private readonly out: StreamOutput) {
    const markets = out.front.config.markets;
    this.batches = markets.map(() => null);
    this.aggregates = AGGREGATES.map(() => markets.map(() => null));
    this.sentThisTick = markets.map(() => false);
  }

  topicOf(name: string, markets: Map<string, MarketInfo>): string | null {
    const parts = name.split('.');
    if (parts[0] !== 'depth') return null;
    if (parts.length === 2 && markets.has(parts[1])) return name;
    if (parts.length === 3 && AGGREGATE_NAMES.has(parts[1]) && markets.has(parts[2])) return name;
    return null;
  }

  onDepth(rec: DepthRec): void {
    let batch = this.batches[rec.marketId];
    if (batch === null) {
      batch = { firstId: rec.updateId, lastId: rec.updateId, timeUs: rec.timeUs, bids: new Set(), asks: new Set() };
      this.batches[rec.marketId] = batch;
    }
    batch.lastId = rec.updateId;
    batch.timeUs = rec.timeUs;
    (rec.side === Side.Bid ? batch.bids : batch.asks).add(rec.priceTicks);
  }

  onBatchEnd(): void {
    for (let marketId = 0; marketId < this.batches.length; marketId++) {
      const batch = this.batches[marketId];
      if (batch === null) continue;
      this.batches[marketId] = null;
      const market = this.out.front.config.markets[marketId];
      const topic = `depth.${market.symbol}`;
      if (this.out.wanted(topic)) {
        this.publish(topic, market, this.out.data.books[marketId], batch);
        this.sentThisTick[marketId] = true;
      }
      this.mergeIntoAggregates(market, batch);
    }
  }

  onTick(tickCount: number): void {
    const markets = this.out.front.config.markets;
    for (let marketId = 0; marketId < markets.length; marketId++) {
      const market = markets[marketId];
      const book = this.out.data.books[marketId];
      const topic = `depth.${market.symbol}`;
      if (!this.sentThisTick[marketId] && this.out.wanted(topic)) this.publishQuiet(topic, market, book);
      this.sentThisTick[marketId] = false;
      for (let a = 0; a < AGGREGATES.length; a++) {
        if (tickCount % AGGREGATES[a].ticks !== 0) continue;
        const aggregateTopic = `depth.${AGGREGATES[a].name}.${market.symbol}`;
        const merged = this.aggregates[a][marketId];
        this.aggregates[a][marketId] = null;
        if (!this.out.wanted(aggregateTopic)) continue;
        if (merged === null) this.publishQuiet(aggregateTopic, market, book);
        else this.publish(aggregateTopic, market, book, merged);
      }
    }
  }

  private mergeIntoAggregates(market: MarketInfo, batch: DepthBatch): void {
    const marketId = market.spec.marketId;
    for (let a = 0; a < AGGREGATES.length; a++) {
      if (!this.out.wanted(`depth.${AGGREGATES[a].name}.${market.symbol}`)) {
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
  }

  private publish(topic: string, market: MarketInfo, book: BookModel, batch: DepthBatch): void {
    const levels = (prices: Set<number>, map: Map<number, number>) =>
      [...prices].sort((a, b) => a - b).map((p) => [priceTextFixed(market, p), qtyTextFixed(market, map.get(p) ?? 0)]);
    this.out.publish(topic, topic, {
      e: 'depth', E: nowUs(), s: market.symbol,
      a: levels(batch.asks, book.asks), b: levels(batch.bids, book.bids),
      U: batch.firstId, u: batch.lastId, T: batch.timeUs,
    });
  }

  /** The no-change depth message of a quiet book: U = L + 1, u = L (see the header). */
  private publishQuiet(topic: string, market: MarketInfo, book: BookModel): void {
    this.out.publish(topic, topic, {
      e: 'depth', E: nowUs(), s: market.symbol, a: [], b: [], U: book.updateId + 1, u: book.updateId, T: book.timeUs,
    });
  }
}
