// The stream families a front thread serves, as the routes are listed in src/routes/index.ts.
// A stream name resolves through the first family that knows it, and each event reaches the
// families in this order (depth before the book ticker, so a market's depth message goes first).

import type { StreamFamily, StreamOutput } from './family.js';
import { DepthStreams } from './depth.js';
import { TickerStreams } from './tickers.js';
import { TradeStreams } from './trades.js';
import { KlineStreams } from './klines.js';
import { AccountStreams } from './account.js';
import { MarkPriceStreams } from './mark-prices.js';
import { LiquidationStreams } from './liquidations.js';
import { OpenInterestStreams } from './open-interest.js';

/** Makes the families of one thread; the order is the order they see each event in. */
export type FamilyTable = ReadonlyArray<(out: StreamOutput) => StreamFamily>;

export const STREAM_FAMILIES: FamilyTable = [
  (out) => new DepthStreams(out),
  (out) => new TickerStreams(out),
  (out) => new TradeStreams(out),
  (out) => new KlineStreams(out),
  (out) => new AccountStreams(out),
  (out) => new MarkPriceStreams(out),
  (out) => new LiquidationStreams(out),
  (out) => new OpenInterestStreams(out),
];
