// Helpers of the perpetual liquidation tests (test/engine/liquidation/): the perpetuals' test
// configuration with a long trader at 10× leverage, and readers of what the waterfall did.

import { expect } from 'vitest';
import { CommandKind, RecordType, ResultCode, type InsuranceRec, type OrderRec, type PositionRec } from '../../engine/bus/types.js';
import { MARKET_ID_ALL } from '../../engine/core/catalog.js';
import { EngineHarness, BASE, QUOTE, cmd, resultOf, type Rec } from './engine-harness.js';
import { PERP, perpConfig } from './perp-harness.js';

const SECOND_US = 1_000_000;
const WIDE = 2 ** 53;
/** SOL's index at `usdcPerUnit` USDC units per SOL unit: ×10^12 in priceE9. */
export const solIndex = (usdcPerUnit: number) => cmd.setIndexPrice(BASE, Math.round(usdcPerUnit * 1_000_000_000_000));
const insuranceIn = (records: Rec[]) => records.filter((r): r is InsuranceRec & { type: RecordType.Insurance } => r.type === RecordType.Insurance);

export const ordersIn = (records: Rec[]) => records.filter((r): r is OrderRec & { type: RecordType.Order } => r.type === RecordType.Order);

export function liquidating(h: EngineHarness, accountId: number): boolean {
  const rec = h.apply(cmd.queryAccountSettings(accountId)).find((r) => r.type === RecordType.AccountSettings);
  return rec?.type === RecordType.AccountSettings && (rec.settings & 16) !== 0;
}

export function positionOf(h: EngineHarness, accountId: number): PositionRec | undefined {
  const records = h.apply({ kind: CommandKind.QueryPositions, accountId, marketId: MARKET_ID_ALL });
  expect(resultOf(records).code).toBe(ResultCode.Ok);
  return records.find((r): r is PositionRec & { type: RecordType.Position } => r.type === RecordType.Position);
}

export const lotsOf = (h: EngineHarness, accountId: number): number => positionOf(h, accountId)?.netLots ?? 0;

export const wide = (high: number, low: number): number => high * WIDE + low;

/**
 * SOL indexed at 60; a maker with 10^7 USDC selling 100 lots at 200 ticks; a trader at 10×
 * leverage with `deposit` USDC that buys them (long 1 000 SOL units, notional 60 000, fee 30).
 */
export function longTrader(deposit = 7_000): { h: EngineHarness; maker: number; trader: number } {
  const h = new EngineHarness(perpConfig());
  h.apply(solIndex(60));
  const maker = h.createAccount(101);
  h.apply(cmd.deposit(maker, QUOTE, 10_000_000));
  h.apply(cmd.updateAccountSettings(maker, { leverageLimitHundredths: 1_000 }));
  h.apply(cmd.place(maker, 'ask', 200, 100, { market: PERP, postOnly: true }));
  const trader = h.createAccount(50);
  h.apply(cmd.updateAccountSettings(trader, { leverageLimitHundredths: 1_000 }));
  h.apply(cmd.deposit(trader, QUOTE, deposit));
  h.apply(cmd.market(trader, 'bid', { qtyLots: 100 }, { market: PERP }));
  expect(lotsOf(h, trader)).toBe(100);
  return { h, maker, trader };
}

/** Runs liquidation steps (one a second) while the account is liquidating, at most `steps`. */
export function runSteps(h: EngineHarness, accountId: number, steps: number): Rec[] {
  const out: Rec[] = [];
  for (let i = 0; i < steps && liquidating(h, accountId); i++) out.push(...h.apply(cmd.tick(), h.timeUs + SECOND_US));
  return out;
}

export function fundOf(h: EngineHarness, assetId: number): InsuranceRec {
  const row = insuranceIn(h.apply({ kind: CommandKind.QueryInsurance })).find((r) => r.assetId === assetId);
  if (row === undefined) throw new Error(`no insurance line of asset ${assetId}`);
  return row;
}
