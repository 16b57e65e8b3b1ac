// trade.<symbol>: one message per engine trade, as it becomes durable.
//
// The hottest stream: one message per event, fanned out to every subscriber of the market. Each
// message is encoded once, as bytes into the market's reused buffer (message-writer.ts), which
// holds the envelope's opening from the start; the other fixed parts (the symbol, the key names
// with the quotes around them) are encoded once per market too. The encoder checks the values
// once, up front, then writes straight through with its offset in a local. It is published once
// to the topic; nothing is allocated per event. The bytes are exactly those of
// JSON.stringify({stream, data: {e, E, s, p, q, b, a, t, T, m}}).

import type { TradeRec } from '../../../engine/bus/types.js';
import type { MarketInfo } from '../../config.js';
import type { StreamFamily, StreamOutput } from './family.js';
import { INT_BYTES_MAX, fixedBytesMax, messageBytes, putFixed, putInt, putPart, viewOf } from './message-writer.js';

/** A market's trade stream: its topic, its message buffer and the fixed parts of its message. */
interface TradeStream {
  topic: Uint8Array;
  /** Holds `{"stream":"trade.SOL_USDC","data":{"e":"trade","E":` from the start; long enough for any message. */
  bytes: Uint8Array;
  dv: DataView;
  /** views[n]: the first n bytes of `bytes`. */
  views: Uint8Array[];
  openingBytes: number;
  /** `,"s":"SOL_USDC","p":"` */
  symbolThenPrice: Uint8Array;
  priceDecimals: number;
  tickUnits: number;
  quantityDecimals: number;
  stepUnits: number;
  /**
   * partAt[k]: where fixed part k (SYMBOL_PART to CLOSING_PART) starts in the last message (-1:
   * not there). The buffer still holds the last message and a message is written front to back,
   * so a part that falls where it fell last time is still in place and is not copied again.
   */
  partAt: Int32Array;
  /** The closing (MAKER_CLOSING or TAKER_CLOSING) that partAt[CLOSING_PART] refers to. */
  closing: Uint8Array;
  /** The topic's subscriber count, read in batch `countedBatch` of the output. */
  subscriberCount: number;
  countedBatch: number;
}

// The fixed parts after the opening, each with the quotes of the values around it.
const QTY = messageBytes('","q":"');
const BUYER = messageBytes('","b":"');
const SELLER = messageBytes('","a":"');
const TRADE_ID = messageBytes('","t":');
const TIME = messageBytes(',"T":');
const MAKER_CLOSING = messageBytes(',"m":true}}');
const TAKER_CLOSING = messageBytes(',"m":false}}');
// Their numbers in TradeStream.partAt.
const SYMBOL_PART = 0;
const QTY_PART = 1;
const BUYER_PART = 2;
const SELLER_PART = 3;
const TRADE_ID_PART = 4;
const TIME_PART = 5;
const CLOSING_PART = 6;

function tradeStream(market: MarketInfo): TradeStream {
  const name = `trade.${market.symbol}`;
  const opening = messageBytes(`{"stream":${JSON.stringify(name)},"data":{"e":"trade","E":`);
  const symbolThenPrice = messageBytes(`,"s":${JSON.stringify(market.symbol)},"p":"`);
  const fixedBytes = opening.length + symbolThenPrice.length + QTY.length + BUYER.length + SELLER.length
    + TRADE_ID.length + TIME.length + TAKER_CLOSING.length;
  const valueBytes = 5 * INT_BYTES_MAX + fixedBytesMax(market.priceDecimals) + fixedBytesMax(market.quantityDecimals);
  const bytes = new Uint8Array(fixedBytes + valueBytes);
  bytes.set(opening);
  return {
    topic: messageBytes(name),
    bytes,
    dv: new DataView(bytes.buffer),
    views: [],
    openingBytes: opening.length,
    symbolThenPrice,
    priceDecimals: market.priceDecimals,
    tickUnits: market.tickUnits,
    quantityDecimals: market.quantityDecimals,
    stepUnits: market.stepUnits,
    partAt: new Int32Array(CLOSING_PART + 1).fill(-1),
    closing: TAKER_CLOSING,
    subscriberCount: 0,
    countedBatch: -1,
  };
}

export class TradeStreams implements StreamFamily {
  private readonly streams: TradeStream[];

  constructor(private readonly out: StreamOutput) {
    this.streams = out.front.config.markets.map(tradeStream);
  }

  topicOf(name: string, markets: Map<string, MarketInfo>): string | null {
    const parts = name.split('.');
    return parts.length === 2 && parts[0] === 'trade' && markets.has(parts[1]) ? name : null;
  }

  onTrade(rec: TradeRec): void {
    const stream = this.streams[rec.marketId];
    const out = this.out;
    if (stream.countedBatch !== out.batch) {
      stream.subscriberCount = out.subscriberCount(stream.topic);
      stream.countedBatch = out.batch;
    }
    if (stream.subscriberCount === 0) return;
    const length = encodeTrade(stream, rec, out.eventTimeUs());
    out.publishEncoded(stream.topic, viewOf(stream.bytes, stream.views, length), stream.subscriberCount);
  }
}

/** Writes the message of `rec` emitted at `eventUs` into the stream's buffer; returns its length. */
function encodeTrade(stream: TradeStream, rec: TradeRec, eventUs: number): number {
  const priceUnits = rec.priceTicks * stream.tickUnits;
  const qtyUnits = rec.qtyLots * stream.stepUnits;
  const { buyerOrderId, sellerOrderId, tradeId, timeUs } = rec;
  // Checked before the first byte is written: a message is either written whole or not at all.
  if (!(Number.isSafeInteger(eventUs) && Number.isSafeInteger(priceUnits) && Number.isSafeInteger(qtyUnits)
    && Number.isSafeInteger(buyerOrderId) && Number.isSafeInteger(sellerOrderId) && Number.isSafeInteger(tradeId)
    && Number.isSafeInteger(timeUs))) {
    throw new RangeError(`trade stream values must be safe integers, trade ${tradeId}`);
  }
  const dv = stream.dv;
  let at = putInt(dv, stream.openingBytes, eventUs);
  at = placePart(stream, SYMBOL_PART, at, stream.symbolThenPrice);
  at = putFixed(dv, at, priceUnits, stream.priceDecimals);
  at = placePart(stream, QTY_PART, at, QTY);
  at = putFixed(dv, at, qtyUnits, stream.quantityDecimals);
  at = placePart(stream, BUYER_PART, at, BUYER);
  at = putInt(dv, at, buyerOrderId);
  at = placePart(stream, SELLER_PART, at, SELLER);
  at = putInt(dv, at, sellerOrderId);
  at = placePart(stream, TRADE_ID_PART, at, TRADE_ID);
  at = putInt(dv, at, tradeId);
  at = placePart(stream, TIME_PART, at, TIME);
  at = putInt(dv, at, timeUs);
  const closing = rec.buyerIsMaker ? MAKER_CLOSING : TAKER_CLOSING;
  if (stream.closing !== closing) {
    stream.closing = closing;
    stream.partAt[CLOSING_PART] = -1;
  }
  return placePart(stream, CLOSING_PART, at, closing);
}

/** Fixed part `part` (number `index`) at `at`, copied unless still in place; returns the offset after it. */
function placePart(stream: TradeStream, index: number, at: number, part: Uint8Array): number {
  if (stream.partAt[index] !== at) {
    stream.partAt[index] = at;
    putPart(stream.dv, at, part);
  }
  return at + part.length;
}
