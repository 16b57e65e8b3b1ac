// What each thread of the pipeline is doing, read from shared memory by any thread: the engine's
// and the journal worker's state words and progress counters (control.ts), the rings' cursors and
// consumer sequences. The watchdog (src/watchdog.ts) compares two readings to detect a stall, and
// logs the reading with its verdict; the status endpoints report it.

import type { InboundRing, OutboundRing } from './ring.js';
import { ENGINE_STATE_NAMES, EngineState, JOURNAL_STATE_NAMES, type Control } from './control.js';

export interface PipelineReading {
  /** Commands in the inbound ring the engine has not taken yet. */
  inboundQueued: number;
  engine: string;
  engineProgress: number;
  journal: string;
  journalProgress: number;
  seqLast: number;
  seqDurable: number;
  /** Records each outbound consumer has not read yet: [journal, front 0, front 1, …]. */
  outboundBehind: number[];
  /** Every consumer's sequence, to tell movement from a reading to the next. */
  outboundSequences: number[];
  inboundGating: number;
}

export function readPipeline(control: Control, inbound: InboundRing, outbound: OutboundRing): PipelineReading {
  const cursor = outbound.cursor;
  const outboundSequences: number[] = [];
  const outboundBehind: number[] = [];
  for (let i = 0; i < outbound.consumerCount; i++) {
    const seq = outbound.consumerSequence(i);
    outboundSequences.push(seq);
    outboundBehind.push((cursor - seq) | 0);
  }
  const inboundGating = inbound.gatingSequence;
  return {
    inboundQueued: (inbound.cursor - inboundGating) | 0,
    engine: ENGINE_STATE_NAMES[control.engineState()] ?? 'unknown',
    engineProgress: control.engineProgress(),
    journal: JOURNAL_STATE_NAMES[control.journalState()] ?? 'unknown',
    journalProgress: control.journalProgress(),
    seqLast: control.seqLast(),
    seqDurable: control.seqDurable(),
    outboundBehind,
    outboundSequences,
    inboundGating,
  };
}

/** True when some thread has work it has not finished: commands queued, records unread or not durable. */
export function workWaiting(r: PipelineReading): boolean {
  return r.inboundQueued > 0 || r.seqLast > r.seqDurable || r.outboundBehind.some((behind) => behind > 0);
}

/** True when any thread moved between the two readings. */
export function progressed(before: PipelineReading, after: PipelineReading): boolean {
  return before.inboundGating !== after.inboundGating
    || before.engineProgress !== after.engineProgress
    || before.journalProgress !== after.journalProgress
    || before.seqDurable !== after.seqDurable
    || before.outboundSequences.some((seq, i) => seq !== after.outboundSequences[i]);
}

/** The reading as an operator reads it: what each thread waits on. */
export function describePipeline(r: PipelineReading): Record<string, unknown> {
  return {
    engine: r.engine,
    journal: r.journal,
    inboundQueued: r.inboundQueued,
    seqLast: r.seqLast,
    seqDurable: r.seqDurable,
    journalBehind: r.outboundBehind[0],
    frontsBehind: r.outboundBehind.slice(1),
  };
}

/**
 * Per thread (engine, journal, then each front), whether it moved between the two readings or has
 * nothing it could do: the health endpoint counts a thread's last progress from the last reading
 * where this held, so an idle thread is as healthy as a busy one that moves. A thread that waits
 * on another is not blamed for it: the engine waiting for outbound space waits on the consumers,
 * and a front thread behind while records are not yet durable waits on the journal.
 */
export function threadsOk(before: PipelineReading, after: PipelineReading): boolean[] {
  const engineWaitingSpace = after.engine === ENGINE_STATE_NAMES[EngineState.WaitingOutboundSpace];
  const engine = before.engineProgress !== after.engineProgress
    || before.inboundGating !== after.inboundGating
    || after.inboundQueued === 0 || engineWaitingSpace;
  const durabilityBehind = after.seqLast > after.seqDurable;
  const journal = before.journalProgress !== after.journalProgress
    || before.seqDurable !== after.seqDurable
    || (after.outboundBehind[0] === 0 && !durabilityBehind);
  const fronts = after.outboundSequences.slice(1).map((seq, i) => seq !== before.outboundSequences[i + 1]
    || after.outboundBehind[i + 1] === 0 || durabilityBehind);
  return [engine, journal, ...fronts];
}
