// GET /admin/health: readiness and liveness of every thread of the exchange, read from shared
// memory. A thread counts as live while it keeps moving or has nothing to do: the stall watchdog
// (src/watchdog.ts), on the main thread, records per thread when it last saw that
// (engine/bus/metrics.ts); a front thread also writes a heartbeat from its own event loop, so a
// front whose loop is blocked goes stale even with nothing queued for it. A thread is reported not
// live once that age reaches half the stall timeout — the point at which the watchdog warns and
// GET /admin/status reports "stalled"; at the full timeout the watchdog ends the process.
//
// Ready: every thread live, every front thread listening, neither the engine nor the journal
// stopped. The answer is 200 when the exchange is live and ready, 503 otherwise, with the same
// body, so that a load balancer or orchestrator can use the status alone.

import { FRONT_STATE_NAMES, FrontState, THREAD_ENGINE, THREAD_JOURNAL, threadOfFront, type SharedMetrics } from '../../engine/bus/metrics.js';
import type { EngineLink } from '../front/engine-link.js';

export interface ThreadHealth {
  live: boolean;
  state: string;
  lastProgressAgeMs: number;
}

export interface HealthReport {
  ready: boolean;
  live: boolean;
  threads: Record<string, ThreadHealth>;
}

export function readHealth(shared: SharedMetrics, link: EngineLink, stallTimeoutMs: number, nowMs: number): HealthReport {
  const liveBelowMs = stallTimeoutMs / 2;
  const ageOf = (thread: number): number => Math.max(0, nowMs - shared.lastOkMs(thread));
  const { pipeline } = link.reading();
  const threads: Record<string, ThreadHealth> = {};
  const worker = (state: string, thread: number): ThreadHealth => {
    const lastProgressAgeMs = ageOf(thread);
    return { live: lastProgressAgeMs < liveBelowMs && state !== 'stopped', state, lastProgressAgeMs };
  };
  threads.engine = worker(pipeline.engine, THREAD_ENGINE);
  threads.journal = worker(pipeline.journal, THREAD_JOURNAL);
  let frontsServing = true;
  for (let f = 0; f < shared.frontCount; f++) {
    const state = shared.front(f, 'state');
    const heartbeatAgeMs = Math.max(0, nowMs - shared.front(f, 'heartbeatMs'));
    const lastProgressAgeMs = Math.max(ageOf(threadOfFront(f)), heartbeatAgeMs);
    frontsServing &&= state === FrontState.Serving;
    threads[`front-${f}`] = {
      live: lastProgressAgeMs < liveBelowMs && state !== FrontState.Stopped,
      state: FRONT_STATE_NAMES[state] ?? 'unknown',
      lastProgressAgeMs,
    };
  }
  const live = Object.values(threads).every((t) => t.live);
  return { ready: live && frontsServing, live, threads };
}
