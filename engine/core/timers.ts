// The engine-time timer queue: every rule that acts when engine time passes a point waits here,
// ordered by due time, then by kind (at one instant, orders whose speed bump ends activate before
// the hour's interest is charged), then by the order the timers were set (seq); perpetuals'
// interval ends due together run in market order (their ref). Kind comes before seq so that the
// order does not depend on when a timer was set: a snapshot import sets each kind's timers again,
// kind by kind.
//
// It carries the speed bump (book/pending.ts: a delayed order activates when its bump ends) and
// the hourly interest of the borrow/lend pools (margin/borrow-lend.ts), the perpetuals' mark
// sampling each second and their funding interval ends (perp/), the liquidation waterfall's steps
// (liquidation/waterfall.ts) and the realization of perpetual PnL at mark (perp/realize.ts);
// trigger checks, expiries and strategy slices join it as timer kinds. The engine has no clock: apply() runs, before each state-changing command, every timer due by that
// command's engine time, in (due, seq) order, and the shell's next wake-up is the head's due time
// (Exchange.nextWakeUs). The handler of a due timer removes it, as a cancel removes a timer that
// is not due yet.
//
// A binary min-heap of timer handles in typed arrays: add, remove and the head are O(log n) or
// better and allocate nothing. Handles come from a free list and stay stable while a timer waits,
// so its owner can remove it later. Bounded by `capacity` (one per open order, one for interest,
// and with perpetuals the sampler and one funding timer per perpetual).
//
// Not a part of the snapshot or the state hash by itself: each timer kind's owner exports and
// hashes its timers in (due, seq) order (inOrder) and sets them again on import in that order, so
// the order survives a restart.

import type { CommandHeader } from '../bus/types.js';
import { assert } from './assert.js';
import type { EngineState } from './state.js';

/** What a timer does when it is due. */
export const TimerKind = {
  /** A speed-bumped order activates (ref: its pool slot). */
  SpeedBump: 1,
  /** The borrow/lend pools accrue an hour of interest (margin/borrow-lend.ts; ref unused). */
  Interest: 2,
  /** Each perpetual's mark is sampled, once a second of engine time (perp/mark-price.ts; ref unused). */
  MarkSample: 3,
  /** A perpetual's funding interval ends (perp/funding.ts; ref: its market index). */
  Funding: 4,
  /** A perpetual's funding pass pays its next step of holders (perp/funding-passes.ts; ref: its market index). */
  FundingStep: 5,
  /** The hour's pass pays its next step of lenders and re-checks its borrowers (margin/interest-pass.ts; ref unused). */
  InterestStep: 6,
  /** A step of the liquidation waterfall for every liquidating account (liquidation/waterfall.ts; ref unused). */
  LiquidationStep: 8,
  /** Every perpetual position realizes its PnL at mark (perp/realize.ts; ref unused). */
  RealizePnl: 10,
} as const;
export type TimerKind = (typeof TimerKind)[keyof typeof TimerKind];

export const NO_TIMER = -1;

export class Timers {
  /** Timers waiting. */
  count = 0;
  private nextSeq = 0;
  private freeHead: number;
  private readonly dueUs: Float64Array;
  private readonly seq: Float64Array;
  private readonly kind: Uint8Array;
  private readonly ref: Int32Array;
  /** Handles in heap order: heap[0] is the next due. */
  private readonly heap: Int32Array;
  /** Heap position of each handle, NO_TIMER while free; a free handle's next free one in nextFree. */
  private readonly position: Int32Array;
  private readonly nextFree: Int32Array;

  constructor(readonly capacity: number) {
    this.dueUs = new Float64Array(capacity);
    this.seq = new Float64Array(capacity);
    this.kind = new Uint8Array(capacity);
    this.ref = new Int32Array(capacity);
    this.heap = new Int32Array(capacity);
    this.position = new Int32Array(capacity).fill(NO_TIMER);
    this.nextFree = new Int32Array(capacity);
    for (let handle = 0; handle < capacity; handle++) this.nextFree[handle] = handle + 1 < capacity ? handle + 1 : NO_TIMER;
    this.freeHead = capacity > 0 ? 0 : NO_TIMER;
  }

  /** Sets a timer of `kind` for `ref` at engine time `dueUs`; returns its handle. */
  add(dueUs: number, kind: TimerKind, ref: number): number {
    assert(this.freeHead !== NO_TIMER && Number.isSafeInteger(dueUs) && dueUs >= 0, 'timer queue full or a bad due time');
    const handle = this.freeHead;
    this.freeHead = this.nextFree[handle];
    this.dueUs[handle] = dueUs;
    this.seq[handle] = this.nextSeq++;
    this.kind[handle] = kind;
    this.ref[handle] = ref;
    this.heap[this.count] = handle;
    this.position[handle] = this.count;
    this.count++;
    this.siftUp(this.count - 1);
    return handle;
  }

  /** Removes a waiting timer (it ran, or its owner no longer needs it). */
  remove(handle: number): void {
    const at = this.position[handle];
    assert(handle >= 0 && handle < this.capacity && at !== NO_TIMER, 'removing a timer that does not wait');
    this.count--;
    const last = this.heap[this.count];
    this.position[handle] = NO_TIMER;
    this.nextFree[handle] = this.freeHead;
    this.freeHead = handle;
    if (last === handle) return;
    this.heap[at] = last;
    this.position[last] = at;
    this.siftDown(at);
    this.siftUp(this.position[last]);
  }

  /** The next timer due, or NO_TIMER when none waits. */
  head(): number {
    return this.count === 0 ? NO_TIMER : this.heap[0];
  }

  /** Engine time at which the next timer is due, or -1 when none waits. */
  headDueUs(): number {
    return this.count === 0 ? -1 : this.dueUs[this.heap[0]];
  }

  dueOf(handle: number): number {
    return this.dueUs[handle];
  }

  kindOf(handle: number): TimerKind {
    return this.kind[handle] as TimerKind;
  }

  refOf(handle: number): number {
    return this.ref[handle];
  }

  /** The refs of the waiting timers of one kind, in (due, seq) order (snapshots, hashes, walks; allocates). */
  inOrder(kind: TimerKind): number[] {
    const handles: number[] = [];
    for (let at = 0; at < this.count; at++) if (this.kind[this.heap[at]] === kind) handles.push(this.heap[at]);
    handles.sort((a, b) => (this.before(a, b) ? -1 : 1));
    return handles.map((handle) => this.ref[handle]);
  }

  /** Heap order holds, positions and the free list account for every handle. */
  validate(): void {
    for (let at = 0; at < this.count; at++) {
      const handle = this.heap[at];
      assert(this.position[handle] === at, 'a timer is not where its position says');
      assert(at === 0 || !this.before(handle, this.heap[(at - 1) >> 1]), 'timer heap out of order');
    }
    let free = 0;
    for (let handle = this.freeHead; handle !== NO_TIMER; handle = this.nextFree[handle]) {
      assert(this.position[handle] === NO_TIMER, 'a waiting timer on the free list');
      free++;
      assert(free <= this.capacity, 'timer free list has a cycle');
    }
    assert(free + this.count === this.capacity, 'free and waiting timers do not add up');
  }

  /** True when timer `a` runs before timer `b`: earlier due time, at the same time the lower kind, then (funding: the lower market) set earlier. */
  private before(a: number, b: number): boolean {
    if (this.dueUs[a] !== this.dueUs[b]) return this.dueUs[a] < this.dueUs[b];
    if (this.kind[a] !== this.kind[b]) return this.kind[a] < this.kind[b];
    // Interval ends of several perpetuals at one instant: in market order (the ref), however their
    // intervals made them be set, so that an import (which sets them in market order) keeps it.
    if (this.kind[a] === TimerKind.Funding && this.ref[a] !== this.ref[b]) return this.ref[a] < this.ref[b];
    return this.seq[a] < this.seq[b];
  }

  private siftUp(from: number): void {
    const heap = this.heap;
    let at = from;
    const handle = heap[at];
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!this.before(handle, heap[parent])) break;
      heap[at] = heap[parent];
      this.position[heap[at]] = at;
      at = parent;
    }
    heap[at] = handle;
    this.position[handle] = at;
  }

  private siftDown(from: number): void {
    const heap = this.heap;
    let at = from;
    const handle = heap[at];
    for (;;) {
      let child = 2 * at + 1;
      if (child >= this.count) break;
      if (child + 1 < this.count && this.before(heap[child + 1], heap[child])) child++;
      if (!this.before(heap[child], handle)) break;
      heap[at] = heap[child];
      this.position[heap[at]] = at;
      at = child;
    }
    heap[at] = handle;
    this.position[handle] = at;
  }
}

/**
 * Tick: its only work is apply()'s, which runs every timer due by the command's engine time before
 * any rule (the engine shell sends one when a timer falls due while no command arrives).
 */
export function tick(_s: EngineState, _cmd: CommandHeader): void {}
