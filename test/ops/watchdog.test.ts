// The stall watchdog's verdicts on the shared memory it reads: work waiting with no thread moving
// counts towards a stall (reported from half the timeout, fatal at the timeout), any movement or an
// idle pipeline resets the count. Driven with real rings and control words and a fake clock.

import { describe, expect, it } from 'vitest';
import { InboundRing, OutboundRing } from '../../engine/bus/ring.js';
import { SLOT_BYTES } from '../../engine/bus/codec.js';
import { Control, JournalState } from '../../engine/bus/control.js';
import { Watchdog } from '../../src/watchdog.js';
import { createLogger } from '../../src/log.js';

function setup(stallTimeoutMs: number) {
  const inbound = InboundRing.create({ slotCount: 8, slotBytes: SLOT_BYTES });
  const outbound = OutboundRing.create({ slotCount: 8, slotBytes: SLOT_BYTES, consumerCount: 2 });
  const control = Control.create();
  let nowMs = 1_000;
  const stalls: Record<string, unknown>[] = [];
  const watchdog = new Watchdog({
    control, inbound, outbound, stallTimeoutMs, log: createLogger('watchdog-test'),
    onStall: (report) => stalls.push(report), now: () => nowMs,
  });
  return { inbound, outbound, control, watchdog, stalls, advance: (ms: number) => { nowMs += ms; } };
}

describe('stall watchdog', () => {
  it('never counts an idle pipeline', () => {
    const { watchdog, stalls, advance, control } = setup(1000);
    for (let i = 0; i < 10; i++) {
      advance(500);
      expect(watchdog.check()).toBe(0);
    }
    expect(stalls).toEqual([]);
    expect(control.stallMs()).toBe(0);
  });

  it('counts work that waits without progress, reports it from half the timeout and ends at the timeout', () => {
    const { watchdog, stalls, advance, control } = setup(1000);
    // A command was sequenced but the journal never makes it durable.
    control.setSeqLast(5);
    control.setSeqDurable(4);
    control.setJournalState(JournalState.Flushing);
    expect(watchdog.check()).toBe(0); // the first waiting reading starts the count
    advance(400);
    expect(watchdog.check()).toBe(400);
    expect(control.stallMs()).toBe(0); // under half the timeout: not reported yet
    advance(200);
    expect(watchdog.check()).toBe(600);
    expect(control.stallMs()).toBe(600);
    expect(stalls).toEqual([]);
    advance(400);
    expect(watchdog.check()).toBe(1000);
    expect(stalls).toHaveLength(1);
    expect(stalls[0]).toMatchObject({ stalledMs: 1000, pipeline: { journal: 'waiting for the disk flush', seqLast: 5, seqDurable: 4 } });
  });

  it('resets the count when any thread moves', () => {
    const { watchdog, stalls, advance, control } = setup(1000);
    control.setSeqLast(5);
    control.setSeqDurable(4);
    watchdog.check();
    advance(900);
    expect(watchdog.check()).toBe(900);
    control.bumpEngineProgress(); // the engine handled a batch: the pipeline moves
    advance(50);
    expect(watchdog.check()).toBe(0);
    expect(control.stallMs()).toBe(0);
    advance(900);
    expect(watchdog.check()).toBe(900);
    control.setSeqDurable(5); // durable, nothing else waiting: idle
    advance(900);
    expect(watchdog.check()).toBe(0);
    expect(stalls).toEqual([]);
  });

  it('counts records a front thread has not read while nothing moves', () => {
    const { watchdog, stalls, advance, outbound } = setup(1000);
    const s = outbound.tryClaim();
    outbound.publish(s);
    outbound.flush(); // published, unread by both consumers; nothing is pending durability
    watchdog.check();
    advance(1000);
    expect(watchdog.check()).toBe(1000);
    expect(stalls).toHaveLength(1);
    expect((stalls[0].pipeline as { frontsBehind: number[] }).frontsBehind).toEqual([1]);
  });
});
