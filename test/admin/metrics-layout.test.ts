// The shared metrics buffer without threads: every writer's cells are its own (no region overlaps
// another), histograms read back cumulative, a disabled buffer counts nothing but keeps the health
// words, and the watchdog's per-thread verdicts (threadsOk) tell a stuck thread from an idle one.

import { describe, expect, it } from 'vitest';
import {
  BATCH_BOUNDS, CODE_SLOTS, KIND_SLOTS, LATENCY_BOUNDS_US, ROUTE_SLOTS, STATUS_CODES, STATUS_SLOT_COUNT, SharedMetrics, THREAD_JOURNAL, threadOfFront,
  type FrontCounter,
} from '../../engine/bus/metrics.js';
import { threadsOk, type PipelineReading } from '../../engine/bus/pipeline-health.js';

const FRONT_COUNTERS: FrontCounter[] = ['ringFull', 'tooManyPending', 'rateLimited', 'wsConnections', 'wsSubscriptions', 'wsMessagesSent', 'wsSlowConsumers'];

function totalCommands(m: SharedMetrics): number {
  let total = 0;
  for (let kind = 0; kind < KIND_SLOTS; kind++) for (let code = 0; code < CODE_SLOTS; code++) total += m.commandCount(kind, code);
  return total;
}

describe('shared metrics layout', () => {
  it('keeps every writer in its own cells', () => {
    const m = SharedMetrics.create(3, true, 1000);
    m.countCommand(3, 0);
    m.countCommand(3, 5);
    m.countCommand(127, 63);
    m.observeJournalBatch(3, 120);
    m.countRequest(1, ROUTE_SLOTS - 1, 200);
    m.countRequest(1, 2, 418); // not listed: the "other" slot
    m.observeAck(2, 4, 2_000);
    for (const counter of FRONT_COUNTERS) m.addFront(1, counter, 2);
    const attached = SharedMetrics.attach(m.sab);
    expect(attached.frontCount).toBe(3);
    expect(attached.commandCount(3, 0)).toBe(1);
    expect(attached.commandCount(3, 5)).toBe(1);
    expect(attached.commandCount(127, 63)).toBe(1);
    expect(totalCommands(attached)).toBe(3);
    expect(attached.journalBatches().count).toBe(1);
    expect(attached.journalFlushes().sum).toBe(120);
    expect(attached.requestCount(1, ROUTE_SLOTS - 1, STATUS_CODES.indexOf(200))).toBe(1);
    expect(attached.requestCount(1, 2, STATUS_SLOT_COUNT - 1)).toBe(1);
    expect(attached.requestCount(0, ROUTE_SLOTS - 1, STATUS_CODES.indexOf(200))).toBe(0);
    expect(attached.acks(2, 4).count).toBe(1);
    expect(attached.acks(1, 4).count).toBe(0);
    for (const counter of FRONT_COUNTERS) {
      expect(attached.front(1, counter)).toBe(2);
      expect(attached.front(0, counter)).toBe(0);
      expect(attached.front(2, counter)).toBe(0);
    }
    expect(attached.lastOkMs(threadOfFront(2))).toBe(1000);
  });

  it('reads histograms back cumulative, with the +Inf bucket equal to the count', () => {
    const m = SharedMetrics.create(1, true, 0);
    for (const size of [1, 3, 3, 100, 1_000_000]) m.observeJournalBatch(size, LATENCY_BOUNDS_US[0]);
    const h = m.journalBatches();
    expect(h.cumulative).toHaveLength(BATCH_BOUNDS.length + 1);
    expect(h.cumulative[0]).toBe(1); // ≤ 1
    expect(h.cumulative[BATCH_BOUNDS.indexOf(4)]).toBe(3); // ≤ 4
    expect(h.cumulative[BATCH_BOUNDS.indexOf(128)]).toBe(4);
    expect(h.cumulative[BATCH_BOUNDS.length]).toBe(5);
    expect(h.count).toBe(5);
    expect(h.sum).toBe(1 + 3 + 3 + 100 + 1_000_000);
  });

  it('counts nothing when disabled but still writes the health words', () => {
    const m = SharedMetrics.create(1, false, 0);
    m.countCommand(3, 0);
    m.countRequest(0, 1, 200);
    m.addFront(0, 'wsConnections', 1);
    m.observeJournalBatch(1, 1);
    m.markThreadOk(THREAD_JOURNAL, 1234);
    m.frontHealth(0, { meanUs: 1, p99Us: 2, maxUs: 3 }, 5678, 1);
    expect(totalCommands(m)).toBe(0);
    expect(m.requestCount(0, 1, 0)).toBe(0);
    expect(m.front(0, 'wsConnections')).toBe(0);
    expect(m.journalBatches().count).toBe(0);
    expect(m.lastOkMs(THREAD_JOURNAL)).toBe(1234);
    expect(m.front(0, 'heartbeatMs')).toBe(5678);
    expect(m.front(0, 'loopMaxUs')).toBe(3);
  });
});

describe('per-thread progress verdicts', () => {
  const idle: PipelineReading = {
    inboundQueued: 0, engine: 'idle', engineProgress: 5, journal: 'idle', journalProgress: 7, seqLast: 10, seqDurable: 10,
    outboundBehind: [0, 0, 0], outboundSequences: [40, 40, 40], inboundGating: 12,
  };

  it('counts idle threads as fine', () => {
    expect(threadsOk(idle, idle)).toEqual([true, true, true, true]);
  });

  it('flags only the thread that has work and did not move', () => {
    const stuckEngine = { ...idle, inboundQueued: 3, engine: 'applying commands' };
    expect(threadsOk(stuckEngine, stuckEngine)).toEqual([false, true, true, true]);
    const moved = { ...stuckEngine, engineProgress: 6 };
    expect(threadsOk(stuckEngine, moved)[0]).toBe(true);
    const stuckFront = { ...idle, outboundBehind: [0, 0, 9] };
    expect(threadsOk(stuckFront, stuckFront)).toEqual([true, true, true, false]);
    const stuckJournal = { ...idle, seqLast: 11, outboundBehind: [2, 0, 0] };
    expect(threadsOk(stuckJournal, stuckJournal)).toEqual([true, false, true, true]);
    // Waiting on another thread is not being stuck: the one waited on is flagged instead.
    const frontsWaitDurable = { ...idle, seqLast: 11, outboundBehind: [0, 3, 3] };
    expect(threadsOk(frontsWaitDurable, frontsWaitDurable)).toEqual([true, false, true, true]);
    const engineWaitsSpace = { ...idle, inboundQueued: 5, engine: 'waiting for outbound ring space', outboundBehind: [0, 0, 9] };
    expect(threadsOk(engineWaitsSpace, engineWaitsSpace)).toEqual([true, true, true, false]);
  });
});
