// The reference model's state in the engine's stateHash format, for the benchmark's gate.
//
//   ModelExchange (test/helpers/engine-model.ts, naive arrays and maps)
//     └─ modelStateHash ── the canonical walk of engine/core/stateHash.ts ──► SHA-256 hex
//   Exchange.stateHash() ─────────────────────────────────────────────────► SHA-256 hex  (must be equal)
//
// The model has no hash of its own, so this walks its (TypeScript-private) fields in the order
// hashState walks the engine: counts, accounts with keys and balances, supplies, per market the
// counters and both book sides best level first with orders in time priority, the pending queue,
// each account's open order ids in placement order. Every number goes in as two little-endian
// 32-bit words, keys as raw bytes, exactly like the engine's Digest. Nothing here is timed.
// Limits: one rest counter for the whole model, so only single-market configs hash alike (the
// benchmark has one market); a change to either walk shows up as a FAIL, not as a silent pass.

import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { OrderType, Side, type EngineConfig, type MarketSpec } from '../engine/bus/types.js';
import type { ModelExchange } from '../test/helpers/engine-model.js';

interface ModelOrderView {
  orderId: number;
  accountId: number;
  market: MarketSpec;
  side: number;
  priceTicks: number;
  qtyLots: number;
  remainingLots: number;
  executedLots: number;
  executedQuoteUnits: number;
  createdAtUs: number;
  clientId: number;
  flags: number;
  timeInForce: number;
  stp: number;
  frontId: number;
  requestId: number;
  orderType?: number;
  state: 'pending' | 'active' | 'resting';
  restNumber: number;
}

interface ModelView {
  config: EngineConfig;
  keys: Uint8Array[];
  balances: Map<string, { available: number; locked: number }>;
  supply: Map<number, number>;
  orders: ModelOrderView[];
  marketState: Map<number, { updateId: number; lastTradeId: number; orderBookState: number }>;
  /** Fee rates set by SetFeeRates, by account id; absent: the config's defaults. */
  feeRates: Map<number, { maker: number; taker: number }>;
  orderNumber: number;
  restCounter: number;
  /** Collected fees per asset, if the model keeps them (it did not when this was written). */
  feeUnits?: Map<number, number>;
}

/** Engine pool states (engine/core/book/orders.ts OrderState). */
const STATE_PENDING = 1;
const STATE_RESTING = 3;

class Words {
  private readonly hash = sha256.create();
  private readonly chunk = new Uint8Array(4096);
  private readonly view = new DataView(this.chunk.buffer);
  private used = 0;

  number(value: number): void {
    if (!Number.isSafeInteger(value) || value < 0) throw new Error(`model hash: ${value} is not a safe non-negative integer`);
    const low = value % 0x100000000;
    this.word(low);
    this.word((value - low) / 0x100000000);
  }
  bytes(bytes: Uint8Array): void {
    this.flush();
    this.hash.update(bytes);
  }
  hex(): string {
    this.flush();
    return bytesToHex(this.hash.digest());
  }
  private word(value: number): void {
    if (this.used === this.chunk.length) this.flush();
    this.view.setUint32(this.used, value >>> 0, true);
    this.used += 4;
  }
  private flush(): void {
    if (this.used > 0) this.hash.update(this.chunk.subarray(0, this.used));
    this.used = 0;
  }
}

export function modelStateHash(model: ModelExchange): string {
  const m = model as unknown as ModelView;
  const d = new Words();
  const { assets, markets } = m.config;
  d.number(assets.length);
  d.number(markets.length);
  d.number(m.orderNumber);
  d.number(m.keys.length);
  const bal = (accountId: number, assetId: number) => m.balances.get(`${accountId}:${assetId}`) ?? { available: 0, locked: 0 };
  for (let accountId = 1; accountId <= m.keys.length; accountId++) {
    d.bytes(m.keys[accountId - 1]);
    for (const asset of assets) {
      d.number(bal(accountId, asset.assetId).available);
      d.number(bal(accountId, asset.assetId).locked);
    }
    const rates = m.feeRates.get(accountId);
    d.number(rates?.maker ?? m.config.makerFeeBps ?? 0);
    d.number(rates?.taker ?? m.config.takerFeeBps ?? 0);
  }
  for (const asset of assets) {
    d.number(m.supply.get(asset.assetId) ?? 0);
    d.number(m.feeUnits?.get(asset.assetId) ?? 0);
  }
  const hashOrder = (o: ModelOrderView): void => {
    // The model has limit orders only: order type Limit, no quote quantity, no quote limit.
    for (const v of [o.orderId, o.accountId, markets.indexOf(o.market), o.side, o.orderType ?? OrderType.Limit, 0, 0, o.priceTicks, o.qtyLots, o.remainingLots, o.executedLots,
      o.executedQuoteUnits, o.createdAtUs, o.restNumber, o.clientId, o.flags, o.timeInForce, o.stp,
      o.state === 'pending' ? STATE_PENDING : STATE_RESTING, o.frontId, o.requestId]) d.number(v);
  };
  for (const market of markets) {
    const state = m.marketState.get(market.marketId)!;
    const mine = m.orders.filter((o) => o.market === market);
    d.number(state.updateId);
    d.number(state.lastTradeId);
    d.number(m.restCounter);
    d.number(mine.filter((o) => o.state === 'resting').length);
    d.number(mine.filter((o) => o.state === 'pending').length);
    d.number(state.orderBookState);
    for (const side of [Side.Bid, Side.Ask]) {
      const resting = mine
        .filter((o) => o.state === 'resting' && o.side === side)
        .sort((a, b) => (side === Side.Bid ? b.priceTicks - a.priceTicks : a.priceTicks - b.priceTicks) || a.restNumber - b.restNumber);
      const levels = new Map<number, ModelOrderView[]>();
      for (const o of resting) {
        const level = levels.get(o.priceTicks);
        if (level) level.push(o);
        else levels.set(o.priceTicks, [o]);
      }
      d.number(levels.size);
      for (const [price, orders] of levels) {
        d.number(price);
        d.number(orders.reduce((sum, o) => sum + o.remainingLots, 0));
        d.number(orders.length);
        orders.forEach(hashOrder);
      }
    }
  }
  const pending = m.orders.filter((o) => o.state === 'pending');
  d.number(pending.length);
  pending.forEach(hashOrder);
  for (let accountId = 1; accountId <= m.keys.length; accountId++) {
    const open = m.orders.filter((o) => o.accountId === accountId);
    d.number(open.length);
    for (const o of open) d.number(o.orderId);
  }
  return d.hex();
}
