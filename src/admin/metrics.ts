// The Prometheus exposition of GET /metrics (admin port): a prom-client registry whose collectors
// read, at scrape time, the shared counters every thread writes (engine/bus/metrics.ts), the
// control block and rings (durable lag, ring occupancy), the replay guard's table and the data
// directory. Nothing is counted here: a scrape only reads, so its cost falls on the scraping thread
// (front 0) and never on the engine.
//
// Counters and gauges are prom-client Counter and Gauge objects with collect callbacks. The
// histograms are kept as bucket counts in shared memory, which prom-client's Histogram cannot be
// loaded from, so they are small collector objects that return the same shape prom-client's own
// histograms do.

import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Counter, Gauge, Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import { COMMAND_KIND_NAMES, RESULT_CODE_NAMES } from '../../engine/bus/types.js';
import {
  BATCH_BOUNDS, CODE_NONE, CODE_SLOTS, KIND_SLOTS, LATENCY_BOUNDS_US, STATUS_SLOT_COUNT, statusLabel,
  type FrontCounter, type HistogramReading, type SharedMetrics,
} from '../../engine/bus/metrics.js';
import type { EngineLink } from '../front/engine-link.js';
import type { ReplayGuard } from '../front/replay-guard.js';
import { readHealth } from './health.js';

export interface MetricsSources {
  shared: SharedMetrics;
  link: EngineLink;
  replayGuard: ReplayGuard;
  /** Route names by counting index (front 0's list, the same indices on every thread). */
  routeNames: readonly string[];
  dataDir: string;
  stallTimeoutMs: number;
}

type Labels = Record<string, string | number>;

const kindName = (kind: number): string => COMMAND_KIND_NAMES[kind] ?? `kind_${kind}`;
const resultName = (code: number): string => (code === CODE_NONE ? 'other' : RESULT_CODE_NAMES[code] ?? `code_${code}`);
/** ResultCode.Ok and CommandKind.None, by their names in the generated tables. */
const RESULT_OK = 0;
const KIND_NONE = 0;

/** Bytes of every file under `dir` (the journal, history and snapshot files). */
export function directoryBytes(dir: string): number {
  let bytes = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    try {
      if (entry.isDirectory()) bytes += directoryBytes(path);
      else if (entry.isFile()) bytes += statSync(path).size;
    } catch {
      // A snapshot temp file renamed between the listing and the stat: not counted.
    }
  }
  return bytes;
}

/** A histogram collector over shared bucket counts; `read` gives one reading per label set. */
function sharedHistogram(name: string, help: string, bounds: readonly number[], scale: number, read: () => Array<[Labels, HistogramReading]>): Metric {
  const get = async () => {
    const values: Array<{ metricName: string; labels: Labels; value: number }> = [];
    for (const [labels, h] of read()) {
      bounds.forEach((bound, i) => values.push({ metricName: `${name}_bucket`, labels: { ...labels, le: bound / scale }, value: h.cumulative[i] }));
      values.push({ metricName: `${name}_bucket`, labels: { ...labels, le: '+Inf' }, value: h.cumulative[bounds.length] });
      values.push({ metricName: `${name}_sum`, labels, value: h.sum / scale });
      values.push({ metricName: `${name}_count`, labels, value: h.count });
    }
    return { name, help, type: 'histogram', values, aggregator: 'sum' };
  };
  return { name, help, type: 'histogram', get } as unknown as Metric;
}

function sumFronts(shared: SharedMetrics, counter: FrontCounter): number {
  let total = 0;
  for (let f = 0; f < shared.frontCount; f++) total += shared.front(f, counter);
  return total;
}

function engineMetrics(registry: Registry, { shared }: MetricsSources): void {
  new Counter({
    name: 'exchange_engine_commands_total', help: 'Commands and queries the engine applied, by kind and result code', labelNames: ['kind', 'result'], registers: [registry],
    collect() {
      this.reset();
      for (let kind = 0; kind < KIND_SLOTS; kind++) {
        for (let code = 0; code < CODE_SLOTS; code++) {
          const count = shared.commandCount(kind, code);
          if (count > 0 || (code === RESULT_OK && kind !== KIND_NONE && COMMAND_KIND_NAMES[kind] !== undefined)) this.inc({ kind: kindName(kind), result: resultName(code) }, count);
        }
      }
    },
  });
  registry.registerMetric(sharedHistogram('exchange_journal_batch_commands', 'Commands per durable journal batch (group commit)', BATCH_BOUNDS, 1,
    () => [[{}, shared.journalBatches()]]));
  registry.registerMetric(sharedHistogram('exchange_journal_flush_seconds', 'Time to commit and flush one journal batch to disk', LATENCY_BOUNDS_US, 1e6,
    () => [[{}, shared.journalFlushes()]]));
}

function pipelineMetrics(registry: Registry, { shared, link, dataDir }: MetricsSources): void {
  new Gauge({
    name: 'exchange_durable_lag_commands', help: 'Commands the engine applied that are not on disk yet (seqLast - seqDurable)', registers: [registry],
    collect() {
      const { pipeline } = link.reading();
      this.set(pipeline.seqLast - pipeline.seqDurable);
    },
  });
  new Gauge({
    name: 'exchange_seq_durable', help: 'Highest journal sequence flushed to disk', registers: [registry],
    collect() { this.set(link.reading().pipeline.seqDurable); },
  });
  new Gauge({
    name: 'exchange_ring_occupancy_slots', help: 'Slots in use: inbound commands not taken by the engine, outbound records not read by the slowest consumer', labelNames: ['ring'], registers: [registry],
    collect() {
      const { pipeline } = link.reading();
      this.set({ ring: 'inbound' }, pipeline.inboundQueued);
      this.set({ ring: 'outbound' }, Math.max(0, ...pipeline.outboundBehind));
    },
  });
  new Gauge({
    name: 'exchange_ring_capacity_slots', help: 'Slots of each ring', labelNames: ['ring'], registers: [registry],
    collect() {
      const r = link.reading();
      this.set({ ring: 'inbound' }, r.inboundSlots);
      this.set({ ring: 'outbound' }, r.outboundSlots);
    },
  });
  new Gauge({
    name: 'exchange_ring_consumer_behind_slots', help: 'Outbound records each consumer has not read yet', labelNames: ['consumer'], registers: [registry],
    collect() {
      this.reset();
      link.reading().pipeline.outboundBehind.forEach((behind, i) => this.set({ consumer: i === 0 ? 'journal' : `front-${i - 1}` }, behind));
    },
  });
  new Gauge({
    name: 'exchange_snapshot_bytes', help: 'Size of the newest snapshot, the one recovery loaded or this process wrote since (0: none)', registers: [registry],
    collect() { this.set(shared.snapshot().bytes); },
  });
  new Gauge({
    name: 'exchange_snapshot_age_seconds', help: 'Time since the newest snapshot was written (0: none)', registers: [registry],
    collect() {
      this.reset();
      const { writtenAtMs } = shared.snapshot();
      if (writtenAtMs > 0) this.set((Date.now() - writtenAtMs) / 1000);
    },
  });
  new Gauge({
    name: 'exchange_commands_since_snapshot', help: 'Commands sequenced after the newest snapshot', registers: [registry],
    collect() {
      const { seq } = shared.snapshot();
      this.set(seq > 0 ? link.reading().pipeline.seqLast - seq : 0);
    },
  });
  new Gauge({
    name: 'exchange_data_dir_bytes', help: 'Bytes of the files in the data directory', registers: [registry],
    collect() { this.set(directoryBytes(dataDir)); },
  });
}

function frontCounter(registry: Registry, shared: SharedMetrics, name: string, help: string, counter: FrontCounter): void {
  new Counter({ name, help, registers: [registry], collect() {
    this.reset();
    this.inc(sumFronts(shared, counter));
  } });
}

function frontGauge(registry: Registry, shared: SharedMetrics, name: string, help: string, counter: FrontCounter): void {
  new Gauge({ name, help, registers: [registry], collect() { this.set(sumFronts(shared, counter)); } });
}

function frontMetrics(registry: Registry, { shared, routeNames, replayGuard }: MetricsSources): void {
  new Counter({
    name: 'exchange_http_requests_total', help: 'HTTP requests answered, by route and status', labelNames: ['route', 'status'], registers: [registry],
    collect() {
      this.reset();
      routeNames.forEach((route, routeIndex) => {
        for (let s = 0; s < STATUS_SLOT_COUNT; s++) {
          let count = 0;
          for (let f = 0; f < shared.frontCount; f++) count += shared.requestCount(f, routeIndex, s);
          if (count > 0) this.inc({ route, status: statusLabel(s) }, count);
        }
      });
    },
  });
  registry.registerMetric(sharedHistogram('exchange_ack_latency_seconds', 'From a request reaching a front thread to its answer, for requests the engine handled, by route',
    LATENCY_BOUNDS_US, 1e6, () => routeNames.flatMap((route, routeIndex): Array<[Labels, HistogramReading]> => {
      const readings = Array.from({ length: shared.frontCount }, (_, f) => shared.acks(f, routeIndex));
      const merged = readings.reduce((a, b) => ({ cumulative: a.cumulative.map((c, i) => c + b.cumulative[i]), sum: a.sum + b.sum, count: a.count + b.count }));
      return merged.count > 0 ? [[{ route }, merged]] : [];
    })));
  frontCounter(registry, shared, 'exchange_ring_full_refusals_total', 'Requests refused with 503 because the inbound ring was full', 'ringFull');
  frontCounter(registry, shared, 'exchange_too_many_pending_refusals_total', 'Requests refused with 503 because a front thread had too many in flight', 'tooManyPending');
  frontCounter(registry, shared, 'exchange_rate_limited_total', 'Requests, WebSocket upgrades and signed subscribes refused by a rate limit', 'rateLimited');
  frontGauge(registry, shared, 'exchange_ws_connections', 'Open WebSocket connections', 'wsConnections');
  frontGauge(registry, shared, 'exchange_ws_subscriptions', 'Active WebSocket stream subscriptions', 'wsSubscriptions');
  frontCounter(registry, shared, 'exchange_ws_messages_sent_total', 'Stream messages sent to subscribers', 'wsMessagesSent');
  frontCounter(registry, shared, 'exchange_ws_slow_consumers_dropped_total', 'WebSocket connections closed for not reading fast enough', 'wsSlowConsumers');
  frontCounter(registry, shared, 'exchange_history_pool_reads_total', 'History requests answered by the front threads\' history pools', 'historyPoolReads');
  frontCounter(registry, shared, 'exchange_history_pool_abandoned_total', 'History requests whose client went away while they waited for a history pool thread, not read', 'historyPoolAbandoned');
  frontGauge(registry, shared, 'exchange_history_pool_waiting', 'History requests handed to a history pool and not yet answered', 'historyPoolWaiting');
  new Gauge({
    name: 'exchange_replay_guard_live_slots', help: 'Signatures the replay guard holds whose window has not ended', registers: [registry],
    collect() { this.set(replayGuard.liveCount(Date.now())); },
  });
  new Gauge({
    name: 'exchange_replay_guard_capacity_slots', help: 'Slots of the replay guard table', registers: [registry],
    collect() { this.set(replayGuard.capacity); },
  });
}

function threadMetrics(registry: Registry, sources: MetricsSources): void {
  const { shared } = sources;
  new Gauge({
    name: 'exchange_event_loop_delay_seconds', help: 'Event-loop delay of each front thread over its last half second', labelNames: ['front', 'stat'], registers: [registry],
    collect() {
      for (let f = 0; f < shared.frontCount; f++) {
        this.set({ front: f, stat: 'mean' }, shared.front(f, 'loopMeanUs') / 1e6);
        this.set({ front: f, stat: 'p99' }, shared.front(f, 'loopP99Us') / 1e6);
        this.set({ front: f, stat: 'max' }, shared.front(f, 'loopMaxUs') / 1e6);
      }
    },
  });
  const healthGauge = (name: string, help: string, pick: (t: { live: boolean; lastProgressAgeMs: number }) => number): void => {
    new Gauge({ name, help, labelNames: ['thread'], registers: [registry], collect() {
      const health = readHealth(shared, sources.link, sources.stallTimeoutMs, Date.now());
      for (const [thread, t] of Object.entries(health.threads)) this.set({ thread }, pick(t));
    } });
  };
  healthGauge('exchange_thread_live', 'Whether each thread moved (or had nothing to do) recently: 1 live, 0 not', (t) => (t.live ? 1 : 0));
  healthGauge('exchange_thread_last_progress_age_seconds', 'Time since each thread last moved or was seen with nothing to do', (t) => t.lastProgressAgeMs / 1000);
  new Gauge({
    name: 'exchange_pipeline_stall_seconds', help: 'How long work has waited without progress, as the stall watchdog last saw it (0: healthy)', registers: [registry],
    collect() { this.set(sources.link.stallMs() / 1000); },
  });
}

/** The registry behind GET /metrics. */
export function createMetricsRegistry(sources: MetricsSources): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  engineMetrics(registry, sources);
  pipelineMetrics(registry, sources);
  frontMetrics(registry, sources);
  threadMetrics(registry, sources);
  return registry;
}
