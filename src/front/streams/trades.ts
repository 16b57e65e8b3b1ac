// trade.<symbol>: one message per engine trade, as it becomes durable.
//
// The hottest stream: one message per event, fanned out to every subscriber of the market. Each
// message is encoded once, as bytes into the market's reused buffer (message-writer.ts), which
// holds the envelope's opening from the start; the other fixed parts (the symbol, the key names)
// are encoded once per market too. It is published once to the topic; nothing is allocated per
// event. The bytes are exactly those of
// JSON.stringify({stream, data: {e, E, s, p, q, b, a, t, T, m}}).

import type { TradeRec } from '../../../engine/bus/types.js';
import type { MarketInfo } from '../../config.js';
import { nowUs, type StreamFamily, type StreamOutput } from './family.js';
import { MessageWriter, messageBytes } from './message-writer.js';

/** A market's trade stream: its topic and the fixed parts of its message. */
interface TradeStream {
  topic: Uint8Array;
  /** Holds `{"stream":"trade.SOL_USDC","data":{"e":"trade","E":` from the start. */
  writer: MessageWriter;
  /** `,"s":"SOL_USDC","p":` */
  symbolThenPrice: Uint8Array;
  priceDecimals: number;
  tickUnits: number;
  quantityDecimals: number;
  stepUnits: number;
}

const QTY = messageBytes(',"q":');
const BUYER = messageBytes(',"b":');
const SELLER = messageBytes(',"a":');
const TRADE_ID = messageBytes(',"t":');
const TIME = messageBytes(',"T":');
const MAKER = messageBytes(',"m":');
const CLOSING = messageBytes('}}');

function tradeStream(market: MarketInfo): TradeStream {
  const name = `trade.${market.symbol}`;
  return {
    topic: messageBytes(name),
    writer: new MessageWriter(messageBytes(`{"stream":${JSON.stringify(name)},"data":{"e":"trade","E":`)),
    symbolThenPrice: messageBytes(`,"s":${JSON.stringify(market.symbol)},"p":`),
    priceDecimals: market.priceDecimals,
    tickUnits: market.tickUnits,
    quantityDecimals: market.quantityDecimals,
    stepUnits: market.stepUnits,
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
    const subscriberCount = this.out.subscriberCount(stream.topic);
    if (subscriberCount === 0) return;
    const message = stream.writer.begin().int(nowUs())
      .raw(stream.symbolThenPrice).fixedText(rec.priceTicks * stream.tickUnits, stream.priceDecimals)
      .raw(QTY).fixedText(rec.qtyLots * stream.stepUnits, stream.quantityDecimals)
      .raw(BUYER).intText(rec.buyerOrderId)
      .raw(SELLER).intText(rec.sellerOrderId)
      .raw(TRADE_ID).int(rec.tradeId)
      .raw(TIME).int(rec.timeUs)
      .raw(MAKER).bool(rec.buyerIsMaker)
      .raw(CLOSING)
      .view();
    this.out.publishEncoded(stream.topic, message, subscriberCount);
  }
}
