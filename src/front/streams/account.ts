// The private streams: account.orderUpdate (all markets, or .<symbol>), account.positionUpdate
// (every perpetual, or .<symbol> of one) and account.balanceUpdate.
// Their topic is prefixed with the account id (`7|account.orderUpdate`) while the envelope's
// `stream` stays the name the client subscribed to; they resolve only for a verified signer.
//
// account.balanceUpdate (no public source documents its keys; shape chosen here and in the
// README): {"e":"balanceUpdate","E":µs,"T":µs,"s":"<asset>","f":"<available>","l":"<locked>",
// "x":"<staked>"}, absolute quantities after each change; a taker's once its match ends (the
// engine writes its balances once per match, engine/core/book/matching.ts).
//
// account.positionUpdate: one message per position event the engine writes (a fill of either
// party, a funding payment), named positionOpened, positionAdjusted or positionClosed
// (src/wire/position.ts has the keys).

import { OrderEvent, type BalanceRec, type OrderRec, type PositionRec } from '../../../engine/bus/types.js';
import type { MarketInfo } from '../../config.js';
import { assetText } from '../../wire/market-codec.js';
import { orderUpdateJson } from '../../wire/orders.js';
import { positionUpdateJson } from '../../wire/position.js';
import { nowUs, type StreamFamily, type StreamOutput } from './family.js';

const ORDER_UPDATE = 'account.orderUpdate';
const BALANCE_UPDATE = 'account.balanceUpdate';
const POSITION_UPDATE = 'account.positionUpdate';

export class AccountStreams implements StreamFamily {
  constructor(private readonly out: StreamOutput) {}

  topicOf(name: string, markets: Map<string, MarketInfo>, accountId: number): string | null {
    const ours = name === ORDER_UPDATE || name === BALANCE_UPDATE || name === POSITION_UPDATE
      || (name.startsWith(`${ORDER_UPDATE}.`) && markets.has(name.slice(ORDER_UPDATE.length + 1)))
      || (name.startsWith(`${POSITION_UPDATE}.`) && markets.get(name.slice(POSITION_UPDATE.length + 1))?.marketType === 'PERP');
    return ours && accountId > 0 ? `${accountId}|${name}` : null;
  }

  onOrder(rec: OrderRec): void {
    // A state record without an event (the final state of a system order, which has no request to answer) is no update.
    if (rec.event === OrderEvent.None) return;
    const market = this.out.front.config.markets[rec.marketId];
    const all = `${rec.accountId}|${ORDER_UPDATE}`;
    const one = `${all}.${market.symbol}`;
    const wantAll = this.out.wanted(all);
    const wantOne = this.out.wanted(one);
    if (!wantAll && !wantOne) return;
    const feeAsset = this.out.front.config.assets[rec.feeAssetId];
    const data = orderUpdateJson(market, rec, nowUs(), feeAsset?.symbol ?? market.quoteSymbol);
    if (wantAll) this.out.publish(all, ORDER_UPDATE, data);
    if (wantOne) this.out.publish(one, `${ORDER_UPDATE}.${market.symbol}`, data);
  }

  onPosition(rec: PositionRec): void {
    const market = this.out.front.config.markets[rec.marketId];
    if (market === undefined) return;
    const all = `${rec.accountId}|${POSITION_UPDATE}`;
    const one = `${all}.${market.symbol}`;
    const wantAll = this.out.wanted(all);
    const wantOne = this.out.wanted(one);
    if (!wantAll && !wantOne) return;
    const data = positionUpdateJson(market, rec, nowUs());
    if (wantAll) this.out.publish(all, POSITION_UPDATE, data);
    if (wantOne) this.out.publish(one, `${POSITION_UPDATE}.${market.symbol}`, data);
  }

  onBalance(rec: BalanceRec): void {
    const topic = `${rec.accountId}|${BALANCE_UPDATE}`;
    if (!this.out.wanted(topic)) return;
    const asset = this.out.front.config.assets[rec.assetId];
    this.out.publish(topic, BALANCE_UPDATE, {
      e: 'balanceUpdate', E: nowUs(), T: rec.timeUs, s: asset.symbol,
      f: assetText(asset, rec.availableUnits), l: assetText(asset, rec.lockedUnits),
      // The engine has no staking: nothing is ever staked.
      x: '0',
    });
  }
}
