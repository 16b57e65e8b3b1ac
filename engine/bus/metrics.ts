// Operating counters kept in shared memory: one SharedArrayBuffer that the main thread creates and
// every thread attaches, so that counting an event costs one atomic add and never a message. The
// admin endpoint (front thread 0) reads the whole buffer when it is scraped.
//
// Layout: 64-bit integer cells (BigInt64Array) in regions that each have exactly one writing
// thread — the engine's command counters, the journal worker's histograms and snapshot facts, the
// watchdog's per-thread progress times, and one region per front thread — each region starting on
// its own 64-byte line, so that no two writers share a cache line. Writers still use Atomics.add
// and Atomics.store: a reader on another thread then never sees a torn 64-bit value. Values are
// integers in the unit their name says (µs, bytes, ms since the epoch); exposition converts them.
//
// Histograms are stored as per-bucket counts (not cumulative), then the sum and the count; the
// reader accumulates them. Bucket bounds are fixed here so that every thread agrees on them.
//
// Disabled (METRICS=0): the counting calls return at once. The health words (progress times,
// front heartbeats and states) are written either way: the health endpoint needs them, and they
// are written a few times a second, not per event.

const LINE_CELLS = 8;

/** Command kinds and result codes are small enums (schemas/exchange.fbs); one cell per pair. */
export const KIND_SLOTS = 128;
export const CODE_SLOTS = 64;
/** The code cell of a result code beyond CODE_SLOTS (none is, today). */
export const CODE_NONE = CODE_SLOTS - 1;

/** Route cells per front thread; slot 0 counts requests no route matched, the last one overflow. */
export const ROUTE_SLOTS = 128;
/** The HTTP statuses counted on their own; any other lands in the last slot. */
export const STATUS_CODES = [200, 202, 400, 401, 403, 404, 405, 408, 413, 429, 500, 501, 502, 503, 504] as const;
const STATUS_SLOTS = STATUS_CODES.length + 1;

/** Latency bucket upper bounds in µs (acknowledgements, journal flushes). */
export const LATENCY_BOUNDS_US = [50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000, 2_500_000];
/** Journal batch size bucket upper bounds, in commands. */
export const BATCH_BOUNDS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192];

const histogramCells = (bounds: readonly number[]): number => bounds.length + 3; // + Inf bucket, sum, count

/** Indices of the per-thread progress times the watchdog writes: engine, journal, then fronts. */
export const THREAD_ENGINE = 0;
export const THREAD_JOURNAL = 1;
export const threadOfFront = (frontId: number): number => 2 + frontId;

/** What a front thread reports about itself. */
export const FrontState = { Starting: 0, Serving: 1, Stopped: 2 } as const;
export const FRONT_STATE_NAMES = ['starting', 'serving', 'stopped'];

/** Scalar cells of a front thread's region. */
const F = {
  ringFull: 0, tooManyPending: 1, rateLimited: 2, wsConnections: 3, wsSubscriptions: 4, wsMessagesSent: 5,
  wsSlowConsumers: 6, loopMeanUs: 7, loopP99Us: 8, loopMaxUs: 9, heartbeatMs: 10, state: 11,
  historyPoolReads: 12, historyPoolWaiting: 13, historyPoolAbandoned: 14,
} as const;
const FRONT_SCALARS = 15;

interface Layout {
  frontCount: number;
  commands: number;
  batch: number;
  flush: number;
  snapshot: number;
  lastOk: number;
  fronts: Array<{ http: number; ack: number; scalars: number }>;
  cells: number;
}

function layoutFor(frontCount: number): Layout {
  let next = LINE_CELLS; // line 0: frontCount, enabled
  const region = (cells: number): number => {
    const at = next;
    next += Math.ceil(cells / LINE_CELLS) * LINE_CELLS;
    return at;
  };
  const commands = region(KIND_SLOTS * CODE_SLOTS);
  const batch = region(histogramCells(BATCH_BOUNDS));
  const flush = region(histogramCells(LATENCY_BOUNDS_US));
  const snapshot = region(3);
  const lastOk = region(2 + frontCount);
  const fronts = [];
  for (let f = 0; f < frontCount; f++) {
    fronts.push({
      http: region(ROUTE_SLOTS * STATUS_SLOTS),
      ack: region(ROUTE_SLOTS * histogramCells(LATENCY_BOUNDS_US)),
      scalars: region(FRONT_SCALARS),
    });
  }
  return { frontCount, commands, batch, flush, snapshot, lastOk, fronts, cells: next };
}

function bucketOf(bounds: readonly number[], value: number): number {
  let i = 0;
  while (i < bounds.length && value > bounds[i]) i++;
  return i;
}

function statusSlot(status: number): number {
  const i = STATUS_CODES.indexOf(status as (typeof STATUS_CODES)[number]);
  return i < 0 ? STATUS_CODES.length : i;
}

/** A histogram read back: cumulative bucket counts (one per bound, then +Inf), sum and count. */
export interface HistogramReading {
  cumulative: number[];
  sum: number;
  count: number;
}

export class SharedMetrics {
  readonly sab: SharedArrayBuffer;
  readonly enabled: boolean;
  private readonly cells: BigInt64Array;
  private readonly layout: Layout;

  private constructor(sab: SharedArrayBuffer) {
    this.sab = sab;
    this.cells = new BigInt64Array(sab);
    this.layout = layoutFor(Number(this.cells[0]));
    this.enabled = this.cells[1] === 1n;
  }

  static create(frontCount: number, enabled: boolean, nowMs: number): SharedMetrics {
    const layout = layoutFor(frontCount);
    const cells = new BigInt64Array(new SharedArrayBuffer(layout.cells * 8));
    cells[0] = BigInt(frontCount);
    cells[1] = enabled ? 1n : 0n;
    // Until the watchdog's first check, every thread counts as having just started.
    for (let t = 0; t < 2 + frontCount; t++) cells[layout.lastOk + t] = BigInt(nowMs);
    return new SharedMetrics(cells.buffer as SharedArrayBuffer);
  }

  static attach(sab: SharedArrayBuffer): SharedMetrics {
    return new SharedMetrics(sab);
  }

  get frontCount(): number {
    return this.layout.frontCount;
  }

  // Writers — engine worker

  /** One state-changing command or query applied, with the code of its result. */
  countCommand(kind: number, code: number): void {
    if (!this.enabled) return;
    const k = kind < KIND_SLOTS ? kind : 0;
    const c = code >= 0 && code < CODE_SLOTS ? code : CODE_NONE;
    Atomics.add(this.cells, this.layout.commands + k * CODE_SLOTS + c, 1n);
  }

  // Writers — journal worker

  /** One durable batch: how many commands it held and how long its commit and flush took. */
  observeJournalBatch(commandCount: number, flushUs: number): void {
    if (!this.enabled) return;
    this.observe(this.layout.batch, BATCH_BOUNDS, commandCount);
    this.observe(this.layout.flush, LATENCY_BOUNDS_US, flushUs);
  }

  snapshotWritten(seq: number, bytes: number, writtenAtMs: number): void {
    const at = this.layout.snapshot;
    Atomics.store(this.cells, at, BigInt(seq));
    Atomics.store(this.cells, at + 1, BigInt(bytes));
    Atomics.store(this.cells, at + 2, BigInt(Math.round(writtenAtMs)));
  }

  // Writers — watchdog (main thread)

  /** The thread was seen moving, or with nothing to do, at `nowMs`. */
  markThreadOk(thread: number, nowMs: number): void {
    Atomics.store(this.cells, this.layout.lastOk + thread, BigInt(Math.round(nowMs)));
  }

  // Writers — front threads

  countRequest(frontId: number, routeIndex: number, status: number): void {
    if (!this.enabled) return;
    const at = this.layout.fronts[frontId].http + this.routeSlot(routeIndex) * STATUS_SLOTS + statusSlot(status);
    Atomics.add(this.cells, at, 1n);
  }

  observeAck(frontId: number, routeIndex: number, latencyUs: number): void {
    if (!this.enabled) return;
    const at = this.layout.fronts[frontId].ack + this.routeSlot(routeIndex) * histogramCells(LATENCY_BOUNDS_US);
    this.observe(at, LATENCY_BOUNDS_US, latencyUs);
  }

  /** Adds `delta` to one of a front thread's scalar counters or gauges (see FrontCounter). */
  addFront(frontId: number, counter: FrontCounter, delta: number): void {
    if (!this.enabled || delta === 0) return;
    Atomics.add(this.cells, this.layout.fronts[frontId].scalars + F[counter], BigInt(delta));
  }

  /** The front thread's periodic health words: event-loop delay (µs), heartbeat time, state. */
  frontHealth(frontId: number, loop: { meanUs: number; p99Us: number; maxUs: number }, nowMs: number, state: number): void {
    const at = this.layout.fronts[frontId].scalars;
    Atomics.store(this.cells, at + F.loopMeanUs, BigInt(Math.round(loop.meanUs)));
    Atomics.store(this.cells, at + F.loopP99Us, BigInt(Math.round(loop.p99Us)));
    Atomics.store(this.cells, at + F.loopMaxUs, BigInt(Math.round(loop.maxUs)));
    Atomics.store(this.cells, at + F.heartbeatMs, BigInt(Math.round(nowMs)));
    Atomics.store(this.cells, at + F.state, BigInt(state));
  }

  // Readers

  commandCount(kind: number, code: number): number {
    return this.load(this.layout.commands + kind * CODE_SLOTS + code);
  }

  journalBatches(): HistogramReading {
    return this.readHistogram(this.layout.batch, BATCH_BOUNDS);
  }

  journalFlushes(): HistogramReading {
    return this.readHistogram(this.layout.flush, LATENCY_BOUNDS_US);
  }

  snapshot(): { seq: number; bytes: number; writtenAtMs: number } {
    const at = this.layout.snapshot;
    return { seq: this.load(at), bytes: this.load(at + 1), writtenAtMs: this.load(at + 2) };
  }

  lastOkMs(thread: number): number {
    return this.load(this.layout.lastOk + thread);
  }

  requestCount(frontId: number, routeIndex: number, statusIndex: number): number {
    return this.load(this.layout.fronts[frontId].http + routeIndex * STATUS_SLOTS + statusIndex);
  }

  acks(frontId: number, routeIndex: number): HistogramReading {
    return this.readHistogram(this.layout.fronts[frontId].ack + routeIndex * histogramCells(LATENCY_BOUNDS_US), LATENCY_BOUNDS_US);
  }

  front(frontId: number, counter: FrontCounter | 'loopMeanUs' | 'loopP99Us' | 'loopMaxUs' | 'heartbeatMs' | 'state'): number {
    return this.load(this.layout.fronts[frontId].scalars + F[counter]);
  }

  private routeSlot(routeIndex: number): number {
    return routeIndex < ROUTE_SLOTS ? routeIndex : ROUTE_SLOTS - 1;
  }

  private observe(at: number, bounds: readonly number[], value: number): void {
    const cells = this.cells;
    Atomics.add(cells, at + bucketOf(bounds, value), 1n);
    Atomics.add(cells, at + bounds.length + 1, BigInt(Math.round(value)));
    Atomics.add(cells, at + bounds.length + 2, 1n);
  }

  private readHistogram(at: number, bounds: readonly number[]): HistogramReading {
    const cumulative: number[] = [];
    let running = 0;
    for (let i = 0; i <= bounds.length; i++) {
      running += this.load(at + i);
      cumulative.push(running);
    }
    return { cumulative, sum: this.load(at + bounds.length + 1), count: this.load(at + bounds.length + 2) };
  }

  private load(index: number): number {
    return Number(Atomics.load(this.cells, index));
  }
}

/** The counters and gauges of a front thread's region that its code adds to. */
export type FrontCounter = 'ringFull' | 'tooManyPending' | 'rateLimited' | 'wsConnections' | 'wsSubscriptions' | 'wsMessagesSent' | 'wsSlowConsumers' | 'historyPoolReads' | 'historyPoolWaiting' | 'historyPoolAbandoned';

/** Status label of a status slot (the last one: any other status). */
export function statusLabel(statusIndex: number): string {
  return statusIndex < STATUS_CODES.length ? String(STATUS_CODES[statusIndex]) : 'other';
}

export const STATUS_SLOT_COUNT = STATUS_SLOTS;
