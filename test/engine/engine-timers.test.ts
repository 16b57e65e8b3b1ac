// The engine-time timer queue: timers run in (due time, kind, set order) order (perpetuals' interval
// ends due together: market order) whatever order they were set and removed in, its head is the next due, and it refuses more timers than it holds.
import { describe, expect, it } from 'vitest';
import { NO_TIMER, TimerKind, Timers } from '../../engine/core/timers.js';
import { prng, randomInt } from '../helpers/engine-harness.js';

describe('timers', () => {
  it('runs timers by due time, and timers due together in the order they were set', () => {
    const timers = new Timers(8);
    timers.add(50, TimerKind.SpeedBump, 1);
    timers.add(20, TimerKind.SpeedBump, 2);
    timers.add(50, TimerKind.SpeedBump, 3);
    timers.add(20, TimerKind.SpeedBump, 4);
    expect(timers.headDueUs()).toBe(20);
    expect(timers.inOrder(TimerKind.SpeedBump)).toEqual([2, 4, 1, 3]);
    const ran: number[] = [];
    while (timers.head() !== NO_TIMER) {
      ran.push(timers.refOf(timers.head()));
      timers.remove(timers.head());
      timers.validate();
    }
    expect(ran).toEqual([2, 4, 1, 3]);
    expect(timers.headDueUs()).toBe(-1);
  });

  it('runs interval ends due together in market order, however their intervals set them', () => {
    const timers = new Timers(8);
    // A two-hour perpetual (market 3) set before an hourly one (market 1) re-set itself: both end at 2 h.
    timers.add(7_200, TimerKind.Funding, 3);
    timers.add(7_200, TimerKind.Funding, 1);
    timers.add(7_200, TimerKind.MarkSample, 0);
    expect(timers.refOf(timers.head())).toBe(0);
    expect(timers.inOrder(TimerKind.Funding)).toEqual([1, 3]);
  });

  it('agrees with a sorted list under random sets and removals', () => {
    const random = prng(7);
    const timers = new Timers(64);
    const model: { due: number; seq: number; ref: number; handle: number }[] = [];
    let seq = 0;
    for (let step = 0; step < 4000; step++) {
      if (model.length < 64 && (model.length === 0 || randomInt(random, 0, 2) > 0)) {
        const due = randomInt(random, 0, 40);
        const ref = step;
        model.push({ due, seq: seq++, ref, handle: timers.add(due, TimerKind.SpeedBump, ref) });
      } else {
        const [gone] = model.splice(randomInt(random, 0, model.length - 1), 1);
        timers.remove(gone.handle);
      }
      model.sort((a, b) => a.due - b.due || a.seq - b.seq);
      timers.validate();
      expect(timers.count).toBe(model.length);
      expect(timers.headDueUs()).toBe(model.length === 0 ? -1 : model[0].due);
      if (step % 97 === 0) expect(timers.inOrder(TimerKind.SpeedBump)).toEqual(model.map((t) => t.ref));
    }
  });

  it('refuses a timer past its capacity and the removal of one that does not wait', () => {
    const timers = new Timers(1);
    const handle = timers.add(5, TimerKind.SpeedBump, 0);
    expect(() => timers.add(6, TimerKind.SpeedBump, 1)).toThrow(/timer queue full/);
    timers.remove(handle);
    expect(() => timers.remove(handle)).toThrow(/does not wait/);
  });
});
