// The outputs of format 5 (engine/core/output.ts eventsInAnswers) as a rewrite of the outputs
// before it: the reference model writes every order event in a record of its own, and this turns
// one command's records into what the engine writes with events in answers. An event (Accepted,
// Cancelled or Expired, addressed to no one) whose next Order record in the command is its
// order's answer (addressed, no event) with every order field equal is dropped, and that answer
// carries it. Records of other kinds may lie between them (a depth, a balance); another order's
// record may not (a self-trade cancel of a maker, say, keeps the taker's orderAccepted apart).
// With `fillsOn` (journal format 6: engine/core/output.ts takerSummary), a taker's Fill on one
// of those spot markets that ends it Filled (an order by lots: one by quote quantity never carries
// its fill), whose next Order record is its Filled answer equal in every field but the fill's own,
// is dropped too, and the answer carries it (its fill's quantity, price, trade id and fee).

import { FRONT_ID_NONE, HeaderFlag, OrderEvent, OrderFlag, OrderStatus, RecordType, type OrderRec } from '../../engine/bus/types.js';
import type { Rec } from './engine-harness.js';

const CARRIED: ReadonlySet<number> = new Set([OrderEvent.Accepted, OrderEvent.Cancelled, OrderEvent.Expired]);
/** Fields an answer and its event may differ in. */
const ADDRESSING: ReadonlySet<string> = new Set(['frontId', 'requestId', 'flags', 'event']);
/** Fields a carried fill's answer may differ in besides the addressing: the fill's own. */
const FILL_FIELDS: ReadonlySet<string> = new Set([...ADDRESSING, 'lastFillQtyLots', 'lastFillPriceTicks', 'tradeId', 'feeUnits']);

function sameOrderFields(a: OrderRec, b: OrderRec, ignored = ADDRESSING): boolean {
  for (const key of Object.keys(a) as (keyof OrderRec)[]) {
    if (!ignored.has(key) && a[key] !== b[key]) return false;
  }
  return true;
}

/** Whether `event` is a taker's Fill that its answer would carry (format 6, on a market of `fillsOn`). */
function carriedFill(event: OrderRec, fillsOn: ReadonlySet<number> | null): boolean {
  return fillsOn !== null && event.event === OrderEvent.Fill && (event.orderFlags & OrderFlag.IsMaker) === 0 && event.status === OrderStatus.Filled
    && event.quoteQtyUnits === 0 && fillsOn.has(event.marketId);
}

/**
 * One command's records (in order) as the engine writes them with events in answers; with
 * `fillsOn` (the spot markets' ids), also with a taker's last fill in its answer (format 6).
 */
export function withEventsInAnswers(records: readonly Rec[], fillsOn: ReadonlySet<number> | null = null): Rec[] {
  const out: (Rec | null)[] = records.slice();
  for (let i = 0; i < out.length; i++) {
    const event = out[i];
    if (event === null || event.type !== RecordType.Order || event.frontId !== FRONT_ID_NONE) continue;
    const fill = carriedFill(event, fillsOn);
    if (!fill && !CARRIED.has(event.event)) continue;
    const j = out.findIndex((r, k) => k > i && r !== null && r.type === RecordType.Order);
    if (j < 0) continue;
    const answer = out[j] as OrderRec;
    if (answer.orderId !== event.orderId || answer.event !== OrderEvent.None || answer.frontId === FRONT_ID_NONE || !sameOrderFields(event, answer, fill ? FILL_FIELDS : ADDRESSING)) continue;
    out[i] = null;
    const flags = answer.flags | HeaderFlag.Event;
    out[j] = (fill ? { ...event, frontId: answer.frontId, requestId: answer.requestId, flags } : { ...answer, event: event.event, flags }) as Rec;
  }
  return out.filter((r): r is Rec => r !== null);
}
