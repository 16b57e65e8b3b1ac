// A front thread's operating counters and access log: the thread's writer into the shared metrics
// buffer (engine/bus/metrics.ts), the observer the HTTP dispatcher (http.ts) calls once per
// answered request, and the periodic health words (event-loop delay, heartbeat, state).
//
// Route indices: each route gets the next index when it is mounted, index 0 being requests no
// route matched. Every front thread mounts the same public routes in the same order (one routes
// table), so an index names the same route on every thread; thread 0 mounts the admin routes after
// them, and only it serves those. The admin endpoint, on thread 0, therefore reads every thread's
// counters with its own list of names.
//
// The access log writes one line per answered request: at debug level, or at info when the
// request was refused (status 400 and above). It names the route (the path template, never the
// query), the method, the status, the latency in µs and the signer's account when the request
// was signed — never headers, signatures, keys or bodies.

import { monitorEventLoopDelay, performance, type IntervalHistogram } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { FrontState, type FrontCounter, type SharedMetrics } from '../../engine/bus/metrics.js';
import type { RequestContext, RequestObserver } from './http.js';

/**
 * A connection's subscriptions (stream name → topic) that keep the thread's subscription gauge in
 * step as streams are added, removed and cleared.
 */
export class CountedSubscriptions extends Map<string, string> {
  constructor(private readonly metrics: FrontMetrics | undefined) {
    super();
  }

  override set(name: string, topic: string): this {
    if (!this.has(name)) this.metrics?.add('wsSubscriptions');
    return super.set(name, topic);
  }

  override delete(name: string): boolean {
    const had = super.delete(name);
    if (had) this.metrics?.add('wsSubscriptions', -1);
    return had;
  }

  override clear(): void {
    this.metrics?.add('wsSubscriptions', -this.size);
    super.clear();
  }
}

/** How often a front thread writes its heartbeat and event-loop delay. */
export const HEALTH_PERIOD_MS = 500;
/**
 * The delay monitor's sampling period: it records the time between its timer's runs, so each
 * sample includes this period, which writeHealth takes off again.
 */
const LOOP_RESOLUTION_MS = 10;

export class FrontMetrics implements RequestObserver {
  /** Route names by index, in mount order. */
  readonly routeNames: string[] = ['unmatched'];
  private readonly loop: IntervalHistogram;
  private timer: NodeJS.Timeout | null = null;
  private state: number = FrontState.Starting;

  constructor(readonly shared: SharedMetrics, readonly frontId: number, private readonly log: Logger) {
    this.loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
    this.start();
  }

  routeIndex(name: string): number {
    this.routeNames.push(name);
    return this.routeNames.length - 1;
  }

  add(counter: FrontCounter, delta = 1): void {
    this.shared.addFront(this.frontId, counter, delta);
  }

  /** A WebSocket connection closed: it and its remaining subscriptions no longer count. */
  socketClosed(subscriptions: Map<string, string>): void {
    this.add('wsConnections', -1);
    subscriptions.clear();
  }

  answered(ctx: RequestContext, status: number): void {
    const latencyUs = Math.round((performance.now() - (ctx.startedAtMs ?? 0)) * 1000);
    const routeIndex = ctx.routeIndex ?? 0;
    this.shared.countRequest(this.frontId, routeIndex, status);
    if (ctx.engineBound) this.shared.observeAck(this.frontId, routeIndex, latencyUs);
    if (status === 429) this.add('rateLimited');
    if (status < 400 && !this.log.isLevelEnabled('debug')) return;
    const line = {
      route: this.routeNames[routeIndex] ?? 'unmatched', method: ctx.method.toUpperCase(), status, latencyUs,
      accountId: ctx.accountId || undefined,
    };
    if (status >= 400) this.log.info(line, 'request refused');
    else this.log.debug(line, 'request');
  }

  /** Starts the periodic health words; `serving` marks the thread ready. */
  private start(): void {
    this.loop.enable();
    this.writeHealth();
    this.timer = setInterval(() => this.writeHealth(), HEALTH_PERIOD_MS);
    this.timer.unref();
  }

  serving(): void {
    this.state = FrontState.Serving;
    this.writeHealth();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.loop.disable();
    this.state = FrontState.Stopped;
    this.writeHealth();
  }

  /** Event-loop delay of the last period (the histogram's nanoseconds as µs), then a fresh period. */
  private writeHealth(): void {
    const loop = this.loop;
    const delayUs = (ns: number): number => (loop.count > 0 ? Math.max(0, ns / 1000 - LOOP_RESOLUTION_MS * 1000) : 0);
    this.shared.frontHealth(this.frontId, {
      meanUs: delayUs(loop.mean),
      p99Us: delayUs(loop.percentile(99)),
      maxUs: delayUs(loop.max),
    }, Date.now(), this.state);
    loop.reset();
  }
}
