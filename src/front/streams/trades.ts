// trade.<symbol>: one message per engine trade, as it becomes durable.

import type { TradeRec } from '../../../engine/bus/types.js';
import type { MarketInfo } from '../../config.js';
import { priceTextFixed, qtyTextFixed } from '../../wire/market-codec.js';
import { nowUs, type StreamFamily, type StreamOutput } from './family.js';

export class TradeStreams implements StreamFamily {
  constructor(private readonly out: StreamOutput) {}

  topicOf(name: string, markets: Map<string, MarketInfo>): string | null {
    const parts = name.split('.');
    return parts.length === 2 && parts[0] === 'trade' && markets.has(parts[1]) ? name : null;
  }

  onTrade(rec: TradeRec): void {
    const market = this.out.front.config.markets[rec.marketId];
    const topic = `trade.${market.symbol}`;
    if (!this.out.wanted(topic)) return;
    this.out.publish(topic, topic, {
      e: 'trade', E: nowUs(), s: market.symbol,
      p: priceTextFixed(market, rec.priceTicks), q: qtyTextFixed(market, rec.qtyLots),
      b: String(rec.buyerOrderId), a: String(rec.sellerOrderId),
      t: rec.tradeId, T: rec.timeUs, m: rec.buyerIsMaker,
    });
  }
}
