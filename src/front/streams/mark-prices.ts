// markPrice.<symbol>: a perpetual's mark price, index and running funding estimate, pushed on each
// MarkPrice event the engine writes, once a second of engine time while the perpetual's index is
// fresh (engine/core/perp/mark-price.ts). `n` (the end of the open funding interval) is in ms, `E`
// and `T` in µs, as the venue writes them.

import type { MarkPriceRec } from '../../../engine/bus/types.js';
import type { MarketInfo } from '../../config.js';
import { priceE9Text, rateE12Text } from '../../wire/funding.js';
import { nowUs, type StreamFamily, type StreamOutput } from './family.js';

const KIND = 'markPrice';

export class MarkPriceStreams implements StreamFamily {
  constructor(private readonly out: StreamOutput) {}

  topicOf(name: string, markets: Map<string, MarketInfo>): string | null {
    const parts = name.split('.');
    return parts.length === 2 && parts[0] === KIND && markets.get(parts[1])?.marketType === 'PERP' ? name : null;
  }

  onMarkPrice(rec: MarkPriceRec): void {
    const market = this.out.front.config.markets[rec.marketId];
    if (market === undefined) return;
    const topic = `${KIND}.${market.symbol}`;
    if (!this.out.wanted(topic)) return;
    this.out.publish(topic, topic, {
      e: KIND, E: nowUs(), s: market.symbol,
      p: priceE9Text(rec.markPriceE9),
      f: rateE12Text(rec.fundingRateE12),
      i: priceE9Text(rec.indexPriceE9),
      n: Math.floor(rec.nextFundingUs / 1000),
      T: rec.timeUs,
    });
  }
}
