// The stall watchdog, run by the main thread: the pipeline's threads wait on each other through
// shared memory (ring slots, seqDurable), so a thread that stops moving — a disk that never
// answers, a cycle of waits, a thread stuck in a loop — would otherwise leave the exchange
// answering 503 forever with nothing in the log. Every check reads what each thread is doing
// (engine/bus/pipeline-health.ts). While work waits (commands queued, records unread or not yet
// durable) and nothing moves, the watchdog counts; at half the stall timeout it logs a warning and
// the status endpoints report the stall (control.stallMs), at the full timeout it logs what each
// thread waits on and calls `onStall`, which ends the process so the supervisor restarts it
// through recovery. Any movement resets the count.
//
// The main thread runs nothing else on its event loop once the exchange serves, so the watchdog
// keeps running whatever the other threads do.

import type { InboundRing, OutboundRing } from '../engine/bus/ring.js';
import type { Control } from '../engine/bus/control.js';
import { describePipeline, progressed, readPipeline, threadsOk, workWaiting, type PipelineReading } from '../engine/bus/pipeline-health.js';
import type { SharedMetrics } from '../engine/bus/metrics.js';
import type { Logger } from './log.js';

export interface WatchdogOptions {
  control: Control;
  inbound: InboundRing;
  outbound: OutboundRing;
  stallTimeoutMs: number;
  log: Logger;
  onStall: (report: Record<string, unknown>) => void;
  now?: () => number;
  /** Where each thread's last progress time goes, for the health endpoint. */
  metrics?: SharedMetrics;
}

export class Watchdog {
  private last: PipelineReading;
  /** When the last reading found the pipeline moving or idle. */
  private lastMovedMs: number;
  private warned = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly now: () => number;

  constructor(private readonly options: WatchdogOptions) {
    this.now = options.now ?? Date.now;
    this.last = readPipeline(options.control, options.inbound, options.outbound);
    this.lastMovedMs = this.now();
    // Every thread has just started: the health endpoint counts from here.
    for (let thread = 0; thread < 2 + (options.metrics?.frontCount ?? 0); thread++) options.metrics?.markThreadOk(thread, this.lastMovedMs);
  }

  start(): void {
    const periodMs = Math.max(20, Math.min(1000, Math.floor(this.options.stallTimeoutMs / 8)));
    this.timer = setInterval(() => this.check(), periodMs);
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** One check; returns how long work has waited without progress (0: healthy). */
  check(): number {
    const { control, inbound, outbound, stallTimeoutMs, log } = this.options;
    const reading = readPipeline(control, inbound, outbound);
    const moved = progressed(this.last, reading);
    const now = this.now();
    this.markThreads(reading, now);
    this.last = reading;
    if (moved || !workWaiting(reading)) {
      if (this.warned) log.info({ pipeline: describePipeline(reading) }, 'pipeline moving again');
      this.lastMovedMs = now;
      this.warned = false;
      control.setStallMs(0);
      return 0;
    }
    const stalledMs = now - this.lastMovedMs;
    if (stalledMs * 2 < stallTimeoutMs) return stalledMs;
    control.setStallMs(Math.max(1, stalledMs));
    const report = { stalledMs, stallTimeoutMs, pipeline: describePipeline(reading) };
    if (stalledMs >= stallTimeoutMs) {
      log.fatal(report, 'pipeline stalled: no progress while work waits; stopping so the supervisor restarts the exchange');
      this.stop();
      this.options.onStall(report);
    } else if (!this.warned) {
      this.warned = true;
      log.warn(report, 'pipeline not moving while work waits');
    }
    return stalledMs;
  }

  private markThreads(reading: PipelineReading, now: number): void {
    const metrics = this.options.metrics;
    if (!metrics) return;
    threadsOk(this.last, reading).forEach((ok, thread) => {
      if (ok) metrics.markThreadOk(thread, now);
    });
  }
}
