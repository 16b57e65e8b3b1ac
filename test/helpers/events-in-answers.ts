// The outputs of format 5 (engine/core/output.ts eventsInAnswers) as a rewrite of the outputs
// before it: the reference model writes every order event in a record of its own, and this turns
// one command's records into what the engine writes with events in answers. An event (Accepted,
// Cancelled or Expired, addressed to no one) whose next Order record in the command is its
// order's answer (addressed, no event) with every order field equal is dropped, and that answer
// carries it. Records of other kinds may lie between them (a depth, a balance); another order's
// record may not (a self-trade cancel of a maker, say, keeps the taker's orderAccepted apart).

import { FRONT_ID_NONE, HeaderFlag, OrderEvent, RecordType, type OrderRec } from '../../engine/bus/types.js';
import type { Rec } from './engine-harness.js';

const CARRIED: ReadonlySet<number> = new Set([OrderEvent.Accepted, OrderEvent.Cancelled, OrderEvent.Expired]);
/** Fields an answer and its event may differ in. */
const ADDRESSING: ReadonlySet<string> = new Set(['frontId', 'requestId', 'flags', 'event']);

function sameOrderFields(a: OrderRec, b: OrderRec): boolean {
  for (const key of Object.keys(a) as (keyof OrderRec)[]) {
    if (!ADDRESSING.has(key) && a[key] !== b[key]) return false;
  }
  return true;
}

/** One command's records (in order) as the engine writes them with events in answers. */
export function withEventsInAnswers(records: readonly Rec[]): Rec[] {
  const out: (Rec | null)[] = records.slice();
  for (let i = 0; i < out.length; i++) {
    const event = out[i];
    if (event === null || event.type !== RecordType.Order || event.frontId !== FRONT_ID_NONE || !CARRIED.has(event.event)) continue;
    const j = out.findIndex((r, k) => k > i && r !== null && r.type === RecordType.Order);
    if (j < 0) continue;
    const answer = out[j] as OrderRec;
    if (answer.orderId !== event.orderId || answer.event !== OrderEvent.None || answer.frontId === FRONT_ID_NONE || !sameOrderFields(event, answer)) continue;
    out[i] = null;
    out[j] = { ...answer, event: event.event, flags: answer.flags | HeaderFlag.Event } as Rec;
  }
  return out.filter((r): r is Rec => r !== null);
}
