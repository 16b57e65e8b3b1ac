// The perpetual part of the LMDB history (engine/store/history-account.ts holds the database and
// documents every key): each account's positions, open and closed, and its settlements, kept from
// the engine's position events (engine/core/perp/position-events.ts).
//
//   ['pr', account, positionId]               → PositionRecord bytes of the position's latest event
//   ['pp', account, positionId]               → JSON PerpPositionValue: when it opened and closed,
//                                               the lots its fills closed, its funding, its
//                                               liquidation fills, the price that closed it
//   ['st', account, timeUs, seq, ordinal]     → JSON PerpSettlementValue: one settlement
//
// Settlements are the differences between a position's consecutive events: the realized PnL a
// fill added (RealizePnl), the futures fee it charged (TradingFees, negative), and the funding
// payment that came just before the event (FundingPayment, from its FundingPayment record). A
// position's previous event is read back from 'pr', so nothing is kept in memory across batches.

import type { Database } from 'lmdb';
import { newPositionRec, readPosition } from '../bus/codec.js';
import { PositionEvent, SystemOrderType, type PositionRec } from '../bus/types.js';
import { perpPositionValueJson, parsePerpPositionValue, perpSettlementValueJson, type PerpPositionValue, type PerpSettlementSource } from './generated/values.js';

type HistoryKey = Array<string | number>;

const WIDE = 2n ** 53n;

function wide(high: number, low: number): bigint {
  return BigInt(high) * WIDE + BigInt(low);
}

/** The last fill of an account in the current command (the fill that caused a position event). */
export interface LastFill {
  marketId: number;
  priceTicks: number;
  systemOrderType: SystemOrderType;
}

/** What the sink knows of the command beside the position event. */
export interface PositionEventContext {
  fill: LastFill | undefined;
  /** The funding payment written just before the event for the same account and market, in units. */
  fundingUnits: number | null;
  /** The command's sequence and the ordinal of the account's next settlement row under it. */
  seq: number;
  nextOrdinal: () => number;
}

/** Lots a change of size from `before` to `after` closed: a reduction, or the whole size a flip or close ended. */
function closedLots(before: number, after: number): number {
  if (before === 0) return 0;
  if (Math.sign(after) !== Math.sign(before)) return Math.abs(before);
  return Math.max(Math.abs(before) - Math.abs(after), 0);
}

/** Keeps one position event (an event, front_id 0xFFFF): the position's rows and its settlements. */
export function keepPositionEvent(history: Database<Buffer, HistoryKey>, bytes: Buffer, rec: Readonly<PositionRec>, context: PositionEventContext): void {
  const account = rec.accountId;
  const previousBytes = history.get(['pr', account, rec.positionId]);
  const previous = newPositionRec();
  if (previousBytes !== undefined) readPosition(new DataView(previousBytes.buffer, previousBytes.byteOffset, previousBytes.byteLength), 0, previous);
  const storedMeta = history.get(['pp', account, rec.positionId]);
  const meta: PerpPositionValue = storedMeta !== undefined ? parsePerpPositionValue(storedMeta.toString()) : {
    positionId: rec.positionId, accountId: account, marketId: rec.marketId, openedUs: rec.timeUs, closedUs: null,
    closedLots: 0, fundingUnits: 0, liquidationFills: 0, closingPriceTicks: null,
  };
  const fill = context.fill !== undefined && context.fill.marketId === rec.marketId && context.fundingUnits === null ? context.fill : undefined;
  if (fill !== undefined) {
    meta.closedLots += closedLots(previous.netLots, rec.netLots);
    if (fill.systemOrderType === SystemOrderType.LiquidatePositionOnBook || fill.systemOrderType === SystemOrderType.LiquidatePositionOnBackstop || fill.systemOrderType === SystemOrderType.LiquidatePositionOnAdl) meta.liquidationFills++;
    if (rec.event === PositionEvent.Closed) meta.closingPriceTicks = fill.priceTicks;
  }
  if (context.fundingUnits !== null) meta.fundingUnits += context.fundingUnits;
  if (rec.event === PositionEvent.Closed) meta.closedUs = rec.timeUs;
  history.put(['pr', account, rec.positionId], bytes);
  history.put(['pp', account, rec.positionId], Buffer.from(perpPositionValueJson(meta)));
  const settle = (source: PerpSettlementSource, quantityUnits: number): void => {
    if (quantityUnits === 0) return;
    history.put(['st', account, rec.timeUs, context.seq, context.nextOrdinal()], Buffer.from(perpSettlementValueJson({
      accountId: account, marketId: rec.marketId, positionId: rec.positionId, source, quantityUnits, timeUs: rec.timeUs, seq: context.seq,
    })));
  };
  if (context.fundingUnits !== null) return settle('FundingPayment', context.fundingUnits);
  if (fill === undefined) return;
  settle('RealizePnl', Number(wide(rec.realizedHigh, rec.realizedLow) - wide(previous.realizedHigh, previous.realizedLow)));
  settle('TradingFees', -Number(wide(rec.feesHigh, rec.feesLow) - wide(previous.feesHigh, previous.feesLow)));
}
