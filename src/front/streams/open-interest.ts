// openInterest.<symbol>: a perpetual's open interest (Σ long positions in base units of its
// underlying), `{"e":"openInterest","E":µs,"s":"SOL_USDC_PERP","o":"100"}`.
//
// Source: the OpenInterest event the engine writes beside each mark sample, once a second of
// engine time while the underlying's index is fresh (engine/core/perp/funding.ts sampleMarks).
// Cadence: the venue pushes every 60 s; here a market's message goes out when its open interest
// differs from the last one this thread sent, and otherwise once 60 s of engine time have passed
// since it (a client that subscribed meanwhile hears within a minute).

import type { OpenInterestRec } from '../../../engine/bus/types.js';
import type { MarketInfo } from '../../config.js';
import { formatDecimal } from '../../decimal.js';
import { nowUs, type StreamFamily, type StreamOutput } from './family.js';

const KIND = 'openInterest';
/** An unchanged open interest is sent again after this much engine time. */
export const OPEN_INTEREST_REPEAT_US = 60_000_000;

export class OpenInterestStreams implements StreamFamily {
  /** Per market id: the last value sent and its engine time (µs); -1 before any. */
  private readonly lastUnits = new Map<number, number>();
  private readonly lastTimeUs = new Map<number, number>();

  constructor(private readonly out: StreamOutput) {}

  topicOf(name: string, markets: Map<string, MarketInfo>): string | null {
    const parts = name.split('.');
    return parts.length === 2 && parts[0] === KIND && markets.get(parts[1])?.marketType === 'PERP' ? name : null;
  }

  onOpenInterest(rec: OpenInterestRec): void {
    const market = this.out.front.config.markets[rec.marketId];
    if (market === undefined) return;
    const same = this.lastUnits.get(rec.marketId) === rec.openInterestUnits;
    if (same && rec.timeUs - (this.lastTimeUs.get(rec.marketId) ?? -Infinity) < OPEN_INTEREST_REPEAT_US) return;
    const topic = `${KIND}.${market.symbol}`;
    if (!this.out.wanted(topic)) return;
    this.lastUnits.set(rec.marketId, rec.openInterestUnits);
    this.lastTimeUs.set(rec.marketId, rec.timeUs);
    this.out.publish(topic, topic, { e: KIND, E: nowUs(), s: market.symbol, o: formatDecimal(rec.openInterestUnits, market.baseDecimals) });
  }
}
