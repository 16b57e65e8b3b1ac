// liquidation: the public stream of liquidation fills, every market on one stream (venue
// mechanics §4.1: "the public liquidation stream is emitted per fill").
//
// One message per fill of a liquidation's system order (LiquidatePositionOnBook, and the
// liquidated half of LiquidatePositionOnAdl's and LiquidatePositionOnBackstop's), as it becomes durable:
//   {"e":"liquidation","E":<µs, sent>,"q":"<quantity>","p":"<price>","S":"Bid"|"Ask",
//    "s":"<symbol>","T":<µs, engine time of the fill>}
// S is the side of the liquidation's order (Ask: the liquidated account sold), q and p the fill's
// quantity and price, padded to the market's precision as the trade stream writes them. The
// counterparty's half of the same fill is a client's order and sends nothing; in auto-deleveraging
// and on the backstop the counterparty's half (an opposite holder's, a provider's) is a system order
// too, the maker's (IsMaker), and sends nothing either.
// The account is not named: the stream is public.

import { OrderEvent, OrderFlag, SystemOrderType, type OrderRec } from '../../../engine/bus/types.js';
import { priceTextFixed, qtyTextFixed } from '../../wire/market-codec.js';
import { SIDE } from '../../wire/enums.js';
import { nowUs, type StreamFamily, type StreamOutput } from './family.js';

const LIQUIDATION = 'liquidation';

/** Whether an order of this system order type is a liquidation's (its fills go to the stream). */
export function isLiquidationOrder(systemOrderType: SystemOrderType): boolean {
  return systemOrderType === SystemOrderType.LiquidatePositionOnBook
    || systemOrderType === SystemOrderType.LiquidatePositionOnBackstop
    || systemOrderType === SystemOrderType.LiquidatePositionOnAdl;
}

/** The message of one liquidation fill (header). */
export function liquidationJson(out: StreamOutput, rec: OrderRec, sentUs: number): Record<string, unknown> {
  const market = out.front.config.markets[rec.marketId];
  return {
    e: 'liquidation',
    E: sentUs,
    q: qtyTextFixed(market, rec.lastFillQtyLots),
    p: priceTextFixed(market, rec.lastFillPriceTicks),
    S: SIDE.name(rec.side),
    s: market.symbol,
    T: rec.timeUs,
  };
}

export class LiquidationStreams implements StreamFamily {
  constructor(private readonly out: StreamOutput) {}

  topicOf(name: string): string | null {
    return name === LIQUIDATION ? LIQUIDATION : null;
  }

  onOrder(rec: OrderRec): void {
    if (rec.event !== OrderEvent.Fill || !isLiquidationOrder(rec.systemOrderType)) return;
    const offBook = rec.systemOrderType === SystemOrderType.LiquidatePositionOnAdl || rec.systemOrderType === SystemOrderType.LiquidatePositionOnBackstop;
    if (offBook && (rec.orderFlags & OrderFlag.IsMaker) !== 0) return;
    if (!this.out.wanted(LIQUIDATION)) return;
    this.out.publish(LIQUIDATION, LIQUIDATION, liquidationJson(this.out, rec, nowUs()));
  }
}
