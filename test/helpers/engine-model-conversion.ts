// The reference model's collateral conversion (engine/core/liquidation/conversion.ts), written the
// obvious way: the accounts left owing in a command in a Set; at its end, each in ascending id pays
// what it can from its USDC, then, while it owes, sells its collateral lowest weight first with one
// system market IOC ask per asset of the fewest lots that cover the debt, found by walking the
// sorted bids one maker at a time and trying every lot count from 0 up.

import { OrderBookState, OrderFlag, Side, type EngineConfig, type MarketSpec } from '../../engine/bus/types.js';
import type { ModelLending } from './engine-model-margin.js';
import type { ModelPerp } from './engine-model-perp.js';

/** The flags of a conversion order on a spot market. */
export const CONVERSION_FLAGS = OrderFlag.Liquidation | OrderFlag.Adl;

/** A resting bid as the walk needs it. */
interface Bid {
  accountId: number;
  priceTicks: number;
  remainingLots: number;
}

/** What the conversion reads and writes of the rest of the model. */
export interface ConversionHost {
  lending(): ModelLending;
  perp(): ModelPerp;
  bal(accountId: number, assetId: number): { available: number; locked: number };
  balanceRec(accountId: number, assetId: number): void;
  /** Resting bids of the market, best first, then time priority. */
  bids(market: MarketSpec): Bid[];
  lastPriceTicks(market: MarketSpec): number;
  bookState(market: MarketSpec): OrderBookState;
  /** Open orders in the market's book (pending and resting). */
  bookOrders(market: MarketSpec): number;
  /** Open orders in every book. */
  openOrders(): number;
  takerFeeBps(accountId: number): number;
  placeSystem(accountId: number, market: MarketSpec, side: Side, lots: number, quoteLimit: number, flags: number): void;
}

export class ModelConversion {
  private readonly marked = new Set<number>();

  constructor(private readonly config: EngineConfig, private readonly host: ConversionHost) {}

  owes(accountId: number): void {
    this.marked.add(accountId);
  }

  /** The end of a command: every marked account converts, ascending. */
  run(): void {
    const accounts = [...this.marked].sort((a, b) => a - b);
    this.marked.clear();
    for (const accountId of accounts) this.convert(accountId);
  }

  private convert(accountId: number): void {
    const usdc = this.config.margin?.valuationAssetId;
    if (usdc === undefined) return;
    this.pay(accountId, usdc);
    const weighted = this.config.margin!.collateral.filter((c) => c.assetId !== usdc)
      .map((c) => ({ assetId: c.assetId, weight: c.haircut.weight, index: this.config.assets.findIndex((a) => a.assetId === c.assetId) }))
      .sort((a, b) => (a.weight !== b.weight ? (a.weight < b.weight ? -1 : 1) : a.index - b.index));
    for (const { assetId } of weighted) {
      const owed = this.host.perp().owedUnits(accountId, usdc);
      if (owed === 0n) return;
      if (this.sell(accountId, assetId, usdc, owed)) this.pay(accountId, usdc);
    }
  }

  private pay(accountId: number, usdc: number): void {
    if (this.host.bal(accountId, usdc).available === 0 || this.host.perp().owedUnits(accountId, usdc) === 0n) return;
    this.host.perp().deposited(accountId, usdc);
    this.host.balanceRec(accountId, usdc);
  }

  private sell(accountId: number, assetId: number, usdc: number, owed: bigint): boolean {
    if (this.host.lending().borrowedOf(accountId, assetId) > 0) return false;
    const market = this.config.markets.find((m) => m.baseAssetId === assetId && m.quoteAssetId === usdc && m.perp === undefined);
    if (!market) return false;
    const held = Math.floor(this.host.bal(accountId, assetId).available / market.baseUnitsPerLot);
    if (held < market.minQtyLots) return false;
    if (this.host.bookState(market) !== OrderBookState.Open || this.host.bookOrders(market) >= this.config.limits.maxOrdersPerBook || this.poolFull()) return false;
    const lots = this.covering(accountId, market, owed, Math.min(held, market.maxQtyLots));
    if (lots === 0) return false;
    this.host.placeSystem(accountId, market, Side.Ask, Math.max(lots, market.minQtyLots), Number.MAX_SAFE_INTEGER, CONVERSION_FLAGS);
    return true;
  }

  /** Every slot of the engine's order pool holds an open order. */
  private poolFull(): boolean {
    const limits = this.config.limits;
    const capacity = Math.min(Math.max(1, this.config.markets.length) * limits.maxOrdersPerBook, limits.maxAccounts * limits.maxOpenOrdersPerAccount);
    return this.host.openOrders() >= capacity;
  }

  /** Lots of an ask that cover `owed` after the taker fee, walking the bids as a market ask fills. */
  private covering(accountId: number, market: MarketSpec, owed: bigint, cap: number): number {
    const bps = BigInt(this.host.takerFeeBps(accountId));
    if (bps >= 10_000n) return 0;
    const bids = this.host.bids(market);
    const reference = market.maxMultiplierBps === undefined ? 0 : this.host.lastPriceTicks(market) || (bids[0]?.priceTicks ?? 0);
    let lots = 0;
    let left = owed;
    for (const bid of bids) {
      if (reference !== 0 && BigInt(bid.priceTicks) * 10_000n < BigInt(reference) * BigInt(market.minMultiplierBps!)) return lots;
      if (bid.accountId === accountId) return lots;
      const room = Math.min(bid.remainingLots, cap - lots);
      const net = (k: number): bigint => {
        const quote = BigInt(bid.priceTicks) * BigInt(k) * BigInt(market.quoteUnitsPerTickLot);
        return quote - (quote * bps) / 10_000n;
      };
      let k = 0;
      while (k < room && net(k) < left) k++;
      lots += k;
      left -= net(k);
      if (left <= 0n || lots === cap) return lots;
    }
    return lots;
  }
}
