// The load generator's drivers, all on one thread over raw keep-alive connections
// (http-conn.ts), each connection with its own queue of pre-built requests sent in order, one in
// flight:
//
//   runClosedLoop  every connection sends its next request as soon as the previous one is
//                  answered: the maximum throughput (its latencies are saturation figures that
//                  follow Little's law, not service times);
//   runOpenLoop    requests are due at a constant rate (OpenLoopSchedule), request i goes to
//                  connection i mod C, and its latency is measured from its intended send time,
//                  so a stall is charged to everything queued behind it (no coordinated omission).
//                  The schedule is checked after every response and on a 1 ms timer; a send later
//                  than its intended time is counted (sendLag) and is part of the latency.
//   runSerial      one connection, one request at a time: unloaded latency.
//
// Latency is taken with performance.now() (monotonic) in this process: from the write of the
// request (closed loop, serial) or its intended time (open loop) to the last byte of the response.

import { performance } from 'node:perf_hooks';
import { HttpConnection } from './http-conn.js';
import { LatencyHistogram, type HistogramSummary } from './histogram.js';
import { OpenLoopSchedule } from './schedule.js';

export interface Request {
  kind: number;
  bytes: Buffer;
}

export interface LoadResult {
  mode: 'closed' | 'open' | 'serial';
  connections: number;
  completed: number;
  elapsedS: number;
  throughputPerS: number;
  latency: HistogramSummary;
  byKind: Record<string, HistogramSummary>;
  /** status → count, per kind name. */
  statuses: Record<string, Record<string, number>>;
  /** A few non-2xx bodies, for the reader. */
  errorSamples: string[];
  /** Open loop only. */
  targetRatePerS?: number;
  maxSendLagUs?: number;
  lateSends?: number;
  /** CPU time of this process (client), user + system, over the run. */
  clientCpuS: number;
}

const nowNs = (): number => performance.now() * 1e6;

class Recorder {
  readonly all = new LatencyHistogram();
  readonly kinds: LatencyHistogram[];
  readonly statuses: Array<Map<number, number>>;
  readonly errorSamples: string[] = [];
  completed = 0;

  constructor(private readonly kindNames: string[]) {
    this.kinds = kindNames.map(() => new LatencyHistogram());
    this.statuses = kindNames.map(() => new Map());
  }

  record(kind: number, latencyNs: number, status: number, body: Buffer): void {
    this.completed += 1;
    this.all.record(latencyNs);
    this.kinds[kind].record(latencyNs);
    const map = this.statuses[kind];
    map.set(status, (map.get(status) ?? 0) + 1);
    if ((status < 200 || status > 299) && this.errorSamples.length < 5) {
      this.errorSamples.push(`${this.kindNames[kind]} ${status} ${body.toString('utf8').slice(0, 200)}`);
    }
  }

  result(mode: LoadResult['mode'], connections: number, elapsedNs: number, cpuS: number): LoadResult {
    const byKind: Record<string, HistogramSummary> = {};
    const statuses: Record<string, Record<string, number>> = {};
    this.kindNames.forEach((name, i) => {
      if (this.kinds[i].count === 0) return;
      byKind[name] = this.kinds[i].summary();
      statuses[name] = Object.fromEntries([...this.statuses[i]].map(([s, c]) => [String(s), c]));
    });
    const elapsedS = elapsedNs / 1e9;
    return {
      mode, connections, completed: this.completed, elapsedS: round(elapsedS, 3),
      throughputPerS: Math.round(this.completed / elapsedS), latency: this.all.summary(), byKind, statuses,
      errorSamples: this.errorSamples, clientCpuS: round(cpuS, 3),
    };
  }
}

function round(value: number, places: number): number {
  const f = 10 ** places;
  return Math.round(value * f) / f;
}

function cpuSeconds(since: NodeJS.CpuUsage): number {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1e6;
}

/** Every connection sends its queue back to back until all queues are empty or `maxMs` passes. */
export function runClosedLoop(conns: HttpConnection[], queues: Request[][], kindNames: string[], maxMs: number): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const rec = new Recorder(kindNames);
    const cpu = process.cpuUsage();
    const start = nowNs();
    const deadline = start + maxMs * 1e6;
    let active = conns.length;
    let lastDone = start;
    const finish = () => {
      if (--active === 0) resolve(rec.result('closed', conns.length, lastDone - start, cpuSeconds(cpu)));
    };
    conns.forEach((conn, c) => {
      conn.onError = reject;
      const queue = queues[c];
      let next = 0;
      const sendNext = (): void => {
        if (next >= queue.length || nowNs() > deadline) {
          finish();
          return;
        }
        const req = queue[next++];
        const sent = nowNs();
        conn.request(req.bytes, (status, body) => {
          const done = nowNs();
          lastDone = done;
          rec.record(req.kind, done - sent, status, body);
          sendNext();
        });
      };
      sendNext();
    });
  });
}

/** One request at a time on one connection. */
export function runSerial(conn: HttpConnection, queue: Request[], kindNames: string[]): Promise<LoadResult> {
  return runClosedLoop([conn], [queue], kindNames, 600_000).then((r) => ({ ...r, mode: 'serial' as const }));
}

/**
 * Constant rate: `ratePerS` requests per second for `durationMs`, request i on connection
 * i mod C (taking that connection's next queued request). Latency from the intended send time.
 */
export function runOpenLoop(
  conns: HttpConnection[], queues: Request[][], kindNames: string[], ratePerS: number, durationMs: number,
): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const total = Math.min(
      Math.floor((ratePerS * durationMs) / 1000),
      Math.min(...queues.map((q) => q.length)) * conns.length,
    );
    const rec = new Recorder(kindNames);
    const cpu = process.cpuUsage();
    const start = nowNs() + 1e6;
    const schedule = new OpenLoopSchedule(start, ratePerS, total);
    const backlog: number[][] = conns.map(() => []); // schedule indices waiting per connection
    const nextInQueue = conns.map(() => 0);
    let completed = 0;
    let finished = false;
    let timer: NodeJS.Timeout | null = null;

    const send = (c: number): void => {
      const index = backlog[c].shift()!;
      const req = queues[c][nextInQueue[c]++];
      conns[c].request(req.bytes, (status, body) => {
        const done = nowNs();
        rec.record(req.kind, schedule.latencyNs(index, done), status, body);
        completed += 1;
        if (backlog[c].length > 0) send(c);
        pump();
        if (completed === total && !finished) {
          finished = true;
          if (timer !== null) clearTimeout(timer);
          resolve({
            ...rec.result('open', conns.length, done - start, cpuSeconds(cpu)),
            targetRatePerS: ratePerS,
            maxSendLagUs: round(schedule.maxSendLagNs / 1000, 1),
            lateSends: schedule.lateSends,
          });
        }
      });
    };

    const pump = (): void => {
      const now = nowNs();
      for (let index = schedule.takeDue(now); index >= 0; index = schedule.takeDue(now)) {
        const c = index % conns.length;
        backlog[c].push(index);
        if (!conns[c].busy) send(c);
      }
    };

    const tick = (): void => {
      pump();
      if (!schedule.done) timer = setTimeout(tick, Math.max(0, Math.min(1, (schedule.nextDueNs() - nowNs()) / 1e6)));
      else timer = null;
    };
    for (const conn of conns) conn.onError = reject;
    if (total === 0) {
      resolve(rec.result('open', conns.length, 1, 0));
      return;
    }
    timer = setTimeout(tick, 1);
  });
}
