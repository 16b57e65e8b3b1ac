// The stream core: the front thread's EventHandler for the engine's durable event records.
//
// Each record is decoded once, applied to the read models first (books, last trade ids, the key
// registry, order book states, the system state), then handed to the stream families of the table in table.ts,
// which fan it out through uWS pub/sub. The core also runs the streams' clock (TICK_MS) and tells
// the families when a drained batch ends, with the markets whose book it changed.

import type { TemplatedApp } from 'uWebSockets.js';
import { RecordType } from '../../../engine/bus/types.js';
import { newMarkPriceRec, newOpenInterestRec, newPositionRec, readAccount, readOpenInterest, readPosition, readBalance, readDepth, readMarket, readMarketState, readMarkPrice, readOrder, readSystemState, readTrade } from '../../../engine/bus/codec.js';
import type { MarketInfo } from '../../config.js';
import type { EventHandler } from '../engine-link.js';
import type { MarketData } from '../market-data.js';
import { scratch, type FrontContext } from '../context.js';
import { StreamOutput, TICK_MS, type StreamFamily } from './family.js';
import { STREAM_FAMILIES, type FamilyTable } from './table.js';

export class Streams implements EventHandler {
  private readonly out: StreamOutput;
  private readonly families: StreamFamily[];
  private readonly depthFamilies: StreamFamily[];
  private readonly tradeFamilies: StreamFamily[];
  private readonly orderFamilies: StreamFamily[];
  private readonly balanceFamilies: StreamFamily[];
  private readonly markPriceFamilies: StreamFamily[];
  private readonly positionFamilies: StreamFamily[];
  private readonly openInterestFamilies: StreamFamily[];
  private readonly markPrice = newMarkPriceRec();
  private readonly position = newPositionRec();
  private readonly openInterest = newOpenInterestRec();
  /** Markets whose book the current batch changed. */
  private readonly changed: boolean[];
  private changedAny = false;
  private tickCount = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(app: TemplatedApp, front: FrontContext, private readonly data: MarketData, table: FamilyTable = STREAM_FAMILIES) {
    const out = new StreamOutput(app, front, data);
    this.out = out;
    this.families = table.map((make) => make(out));
    this.depthFamilies = this.families.filter((f) => f.onDepth);
    this.tradeFamilies = this.families.filter((f) => f.onTrade);
    this.orderFamilies = this.families.filter((f) => f.onOrder);
    this.balanceFamilies = this.families.filter((f) => f.onBalance);
    this.markPriceFamilies = this.families.filter((f) => f.onMarkPrice);
    this.positionFamilies = this.families.filter((f) => f.onPosition);
    this.openInterestFamilies = this.families.filter((f) => f.onOpenInterest);
    this.changed = front.config.markets.map(() => false);
    this.timer = setInterval(() => this.tick(), TICK_MS);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The topic of a stream name, from the first family that serves it; null for none. */
  topicOf(name: string, markets: Map<string, MarketInfo>, accountId: number): string | null {
    for (const family of this.families) {
      const topic = family.topicOf(name, markets, accountId);
      if (topic !== null) return topic;
    }
    return null;
  }

  /** A connection subscribed to `name` (topic `topic`): families that keep per-stream state start it. */
  onSubscribed(name: string, topic: string): void {
    for (const family of this.families) family.onSubscribed?.(name, topic);
  }

  onEvent(type: RecordType, view: DataView, offset: number): void {
    switch (type) {
      case RecordType.Depth: return this.onDepth(view, offset);
      case RecordType.Trade: return this.onTrade(view, offset);
      case RecordType.Order: {
        readOrder(view, offset, scratch.order);
        for (const family of this.orderFamilies) family.onOrder!(scratch.order);
        return;
      }
      case RecordType.Balance: {
        readBalance(view, offset, scratch.balance);
        for (const family of this.balanceFamilies) family.onBalance!(scratch.balance);
        return;
      }
      case RecordType.MarkPrice: {
        readMarkPrice(view, offset, this.markPrice);
        for (const family of this.markPriceFamilies) family.onMarkPrice!(this.markPrice);
        return;
      }
      case RecordType.Position: {
        readPosition(view, offset, this.position);
        for (const family of this.positionFamilies) family.onPosition!(this.position);
        return;
      }
      case RecordType.OpenInterest: {
        readOpenInterest(view, offset, this.openInterest);
        for (const family of this.openInterestFamilies) family.onOpenInterest!(this.openInterest);
        return;
      }
      case RecordType.Account: return this.onAccount(view, offset);
      // The operator changed a market's order book state
      case RecordType.MarketState: return this.onMarketState(view, offset);
      // The operator started or ended maintenance
      case RecordType.SystemState: return this.onSystemState(view, offset);
      default: return;
    }
  }

  /** Applies the snapshot part of a QuerySnapshot reply (addressed to this thread). */
  onSnapshotRecord(type: RecordType, view: DataView, offset: number): void {
    if (type === RecordType.Account) {
      this.onAccount(view, offset);
    } else if (type === RecordType.Market) {
      readMarket(view, offset, scratch.market);
      const book = this.data.books[scratch.market.marketId];
      book.updateId = scratch.market.updateId;
      book.lastTradeId = scratch.market.lastTradeId;
      book.timeUs = scratch.market.timeUs;
    } else if (type === RecordType.MarketState) {
      this.onMarketState(view, offset);
    } else if (type === RecordType.SystemState) {
      this.onSystemState(view, offset);
    } else if (type === RecordType.Depth) {
      readDepth(view, offset, scratch.depth);
      this.data.books[scratch.depth.marketId].setLevel(scratch.depth.side, scratch.depth.priceTicks, scratch.depth.qtyLots);
    }
  }

  onBatchEnd(): void {
    this.out.endBatch();
    if (!this.changedAny) return;
    for (const family of this.families) family.onBatchEnd?.(this.changed);
    this.changed.fill(false);
    this.changedAny = false;
  }

  private onDepth(view: DataView, offset: number): void {
    const rec = scratch.depth;
    readDepth(view, offset, rec);
    const book = this.data.books[rec.marketId];
    book.setLevel(rec.side, rec.priceTicks, rec.qtyLots);
    book.updateId = rec.updateId;
    book.timeUs = rec.timeUs;
    this.changed[rec.marketId] = true;
    this.changedAny = true;
    for (const family of this.depthFamilies) family.onDepth!(rec);
  }

  private onTrade(view: DataView, offset: number): void {
    readTrade(view, offset, scratch.trade);
    this.data.books[scratch.trade.marketId].lastTradeId = scratch.trade.tradeId;
    for (const family of this.tradeFamilies) family.onTrade!(scratch.trade);
  }

  private onAccount(view: DataView, offset: number): void {
    readAccount(view, offset, scratch.account);
    this.data.registerKey(scratch.account.key, scratch.account.accountId);
  }

  private onMarketState(view: DataView, offset: number): void {
    readMarketState(view, offset, scratch.marketState);
    this.data.books[scratch.marketState.marketId].orderBookState = scratch.marketState.state;
  }

  private onSystemState(view: DataView, offset: number): void {
    readSystemState(view, offset, scratch.systemState);
    this.data.systemState = scratch.systemState.state;
  }

  private tick(): void {
    this.tickCount++;
    const nowMs = Date.now();
    for (const family of this.families) family.onTick?.(this.tickCount, nowMs);
  }
}
