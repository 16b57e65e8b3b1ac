// The open-loop scheduler's accounting: request i is *intended* to be sent at
// start + i / rate, whatever happened to the requests before it. The load generator sends a
// request only when it is due and a connection is free, and its latency is measured from the
// intended time, not from the moment it actually left. A server stall therefore shows up in full
// in the percentiles (every request that should have been sent during the stall waited for it)
// instead of silently slowing the client down, which is the "coordinated omission" a closed-loop
// client commits.
//
// Pure (the clock is passed in) so it is tested without sockets or timers.

export class OpenLoopSchedule {
  private next = 0;
  /** Largest lag between a request's intended and actual send time, in ns. */
  maxSendLagNs = 0;
  /** Requests that left later than `lateThresholdNs` after their intended time. */
  lateSends = 0;

  constructor(
    readonly startNs: number,
    readonly ratePerSec: number,
    readonly total: number,
    private readonly lateThresholdNs = 1_000_000,
  ) {
    if (!(ratePerSec > 0)) throw new Error('rate must be positive');
  }

  intendedNs(index: number): number {
    return this.startNs + Math.round((index * 1e9) / this.ratePerSec);
  }

  /** Index of the next request not yet taken. */
  get taken(): number {
    return this.next;
  }

  get done(): boolean {
    return this.next >= this.total;
  }

  /** Intended time of the next request not yet taken (Infinity when all are taken). */
  nextDueNs(): number {
    return this.done ? Infinity : this.intendedNs(this.next);
  }

  /** Number of requests due at `nowNs` and not yet taken. */
  backlog(nowNs: number): number {
    if (this.done || nowNs < this.intendedNs(this.next)) return 0;
    const due = Math.min(this.total, Math.floor(((nowNs - this.startNs) * this.ratePerSec) / 1e9) + 1);
    return Math.max(0, due - this.next);
  }

  /** Takes the next request if it is due at `nowNs` (it is being sent now): its index, else -1. */
  takeDue(nowNs: number): number {
    if (this.done || nowNs < this.intendedNs(this.next)) return -1;
    const index = this.next++;
    const lag = nowNs - this.intendedNs(index);
    if (lag > this.maxSendLagNs) this.maxSendLagNs = lag;
    if (lag > this.lateThresholdNs) this.lateSends += 1;
    return index;
  }

  /** Latency of request `index` completed at `completedNs`, measured from its intended send time. */
  latencyNs(index: number, completedNs: number): number {
    return completedNs - this.intendedNs(index);
  }
}
