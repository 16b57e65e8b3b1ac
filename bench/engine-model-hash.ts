// The reference model's state in the engine's stateHash format, for the benchmark's gate.
//
//   ModelExchange (test/helpers/engine-model.ts, naive arrays and maps)
//     └─ modelStateHash ── the canonical walk of engine/core/stateHash.ts ──► SHA-256 hex
//   Exchange.stateHash() ─────────────────────────────────────────────────► SHA-256 hex  (must be equal)
//
// The model has no hash of its own, so this walks the state the model exports (exportState) in
// the order hashState walks the engine: counts, accounts with keys and balances, supplies, per market the
// counters and both book sides best level first with orders in time priority, the pending queue,
// each account's open order ids in placement order, then the parts that appear only once used
// (margin): the borrow/lend pools and positions, the system state while in maintenance, the index
// prices, the accounts off the default settings. Every number goes in as two little-endian
// 32-bit words, keys as raw bytes, exactly like the engine's Digest. Nothing here is timed.
// Limits: one rest counter for the whole model, so only single-market configs hash alike (the
// benchmark has one market); a change to either walk shows up as a FAIL, not as a silent pass.

import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { Side, SystemState } from '../engine/bus/types.js';
import type { ModelExchange, ModelOrderState, ModelState } from '../test/helpers/engine-model.js';

/** Tags the index price part (engine/core/margin/index-prices.ts). */
const INDEX_HASH_TAG = 0x494e4458;
/** The default leverage limit in hundredths (1×). */
const DEFAULT_LEVERAGE = 100;

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
  const m = model.exportState();
  const d = new Words();
  const { assets, markets } = m.config;
  d.number(assets.length);
  d.number(markets.length);
  d.number(m.orderNumber);
  d.number(m.keys.length);
  const bal = (accountId: number, assetId: number) => m.balances.get(accountId)?.get(assetId) ?? { available: 0, locked: 0 };
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
    d.number(m.feeUnits.get(asset.assetId) ?? 0);
  }
  const marketIndex = (marketId: number) => markets.findIndex((spec) => spec.marketId === marketId);
  const hashOrder = (o: ModelOrderState): void => {
    for (const v of [o.orderId, o.accountId, marketIndex(o.marketId), o.side, o.orderType, o.quoteQtyUnits, o.quoteLimitUnits, o.priceTicks, o.qtyLots, o.remainingLots, o.executedLots,
      o.executedQuoteUnits, o.createdAtUs, o.restNumber, o.clientId, o.flags, o.timeInForce, o.stp,
      o.state === 'pending' ? STATE_PENDING : STATE_RESTING, o.frontId, o.requestId]) d.number(v);
  };
  for (const market of markets) {
    const state = m.markets.get(market.marketId)!;
    const mine = m.orders.filter((o) => o.marketId === market.marketId);
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
      const levels = new Map<number, ModelOrderState[]>();
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
  hashPools(d, m);
  if (m.maintenance) d.number(SystemState.Maintenance);
  hashIndexPrices(d, m);
  hashAccountSettings(d, m);
  return d.hex();
}

/** The pools part (engine/core/margin/pools.ts hashInto): only once anything happened in a pool. */
function hashPools(d: Words, m: ModelState): void {
  const { assets, margin } = m.config;
  const { positions, fees, rounding, interestDueUs } = m.lending;
  const lines = [...fees.values(), ...rounding.values()];
  if (interestDueUs < 0 && positions.length === 0 && lines.every((v) => v === 0n)) return;
  const assetIndex = (assetId: number) => assets.findIndex((a) => a.assetId === assetId);
  assets.forEach((asset, index) => {
    if (!margin?.lendPools.some((p) => p.assetId === asset.assetId)) return;
    const mine = positions.filter((p) => p.assetId === asset.assetId);
    d.number(index);
    d.number(mine.reduce((sum, p) => sum + p.lent, 0));
    d.number(mine.reduce((sum, p) => sum + p.borrowed, 0));
    d.number(Number(fees.get(asset.assetId) ?? 0n));
    d.number(Number(rounding.get(asset.assetId) ?? 0n));
  });
  const cells = positions.map((p) => ({ ...p, cell: p.accountId * assets.length + assetIndex(p.assetId) })).sort((a, b) => a.cell - b.cell);
  for (const p of cells) for (const v of [p.cell, p.lent, p.borrowed, p.interest, p.positionId]) d.number(v);
  d.number(interestDueUs + 1);
}

/** The index price part (index-prices.ts hashInto): only once some asset has a price. */
function hashIndexPrices(d: Words, m: ModelState): void {
  const priced = m.config.assets.map((a, index) => ({ index, price: m.indexPrices.get(a.assetId) })).filter((p) => p.price !== undefined);
  if (priced.length === 0) return;
  d.number(INDEX_HASH_TAG);
  d.number(priced.length);
  for (const { index, price } of priced) for (const v of [index, price!.priceE9, price!.timeUs, price!.source]) d.number(v);
}

/** The account settings part (account-settings.ts hashInto): the accounts off the defaults, if any. */
function hashAccountSettings(d: Words, m: ModelState): void {
  const changed: number[] = [];
  for (let accountId = 1; accountId <= m.keys.length; accountId++) {
    const settings = m.accountSettings.get(accountId);
    if (settings !== undefined && (settings.flags !== 0 || settings.leverage !== DEFAULT_LEVERAGE)) changed.push(accountId);
  }
  if (changed.length === 0) return;
  d.number(changed.length);
  for (const accountId of changed) {
    const settings = m.accountSettings.get(accountId)!;
    for (const v of [accountId, settings.flags, settings.leverage]) d.number(v);
  }
}
