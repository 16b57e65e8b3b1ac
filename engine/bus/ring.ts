// The two SharedArrayBuffer rings that connect the threads of the exchange.
//
//   front threads                                           ┌─► journal worker  (consumer 0)
//   F0 ─┐                                                   │
//   F1 ─┼─► InboundRing ──► engine ──► OutboundRing ────────┼─► front thread 0  (consumer 1)
//   Fn ─┘   many producers,  (one      one producer,        │
//           one consumer     thread)   several gated        └─► front thread n  (consumer n+1)
//                                      consumers, each sees every record
//
// Vocabulary is the LMAX Disruptor's: a producer claims a sequence, writes the slot at
// `index = sequence & mask`, then publishes it; a consumer handles published slots in sequence
// order and, at endOfBatch, stores its own sequence, which is the gatingSequence that frees the
// slots for the producers. The waitStrategy is "park with a timeout": a parked thread sets a flag
// (or a waiter count) and the other side calls Atomics.notify only when it sees that flag, so the
// fast path costs one extra Atomics.load and no notify.
//
// Invariants:
// - Sequences are uint32 numbers (0 … 2^32-1) that wrap to 0; they are stored as Int32 bit
//   patterns and compared only through `(a - b) | 0`, which is exact while two live sequences are
//   less than 2^31 apart. Ring distances never exceed slotCount ≤ 2^30, so this holds forever.
//   Int32 is used because it is what Atomics.wait and the fastest Atomics paths take; at
//   10 M msg/s the sequence wraps every seven minutes, so wrap-around is an everyday path (the
//   tests start right below 2^32 to prove it), not a rare corner. -1 is never a sequence, so it is
//   free to mean "ring full".
// - A slot is written only between its claim and its publish, and read only between its publish
//   and the end of the consumer's batch that handled it (the gatingSequence store frees it).
// - Inbound: the consumer sees slots strictly in sequence order and never a half-written slot,
//   whatever order producers publish in: each slot carries an availability marker (the Int32 of
//   the sequence last published into it, like the Disruptor's availableBuffer), and the consumer
//   stops at the first slot whose marker is not its expected sequence.
// - Outbound: the producer never claims a slot that any consumer, started or not, has not yet
//   handled: every consumer's sequence starts at the initial sequence and gates the producer.
// - Every control word sits on its own 64-byte line, so a store to one never invalidates another
//   thread's cached copy of a different word (no false sharing between producers and consumers).
//   The inbound markers are packed, 16 to a line, as in the Disruptor's availableBuffer: each is
//   touched once per message and a line per slot would cost 64 bytes of cache per slot.
//
// Memory ordering: Atomics operations are sequentially consistent in JavaScript, so the plain
// DataView writes a producer makes into a slot happen-before a consumer's reads of it once the
// consumer has Atomics.load-ed the publish (the marker or the cursor) that followed them.
//
// SAB layout (every "line" is 64 bytes; words are Int32 indices into the whole buffer):
//   line 0      header: magic, layout version, slotCount, slotBytes, consumerCount,
//               initialSequence, markersOffset, slotsOffset, totalBytes
//   Inbound:  line 1 claim cursor · line 2 gatingSequence (consumer) · line 3 consumer parked flag
//             · line 4 producers waiting for space · lines 5… markers (slotCount Int32) · slots
//   Outbound: line 1 cursor (published) · line 2 doorbell · line 3 doorbell waiters
//             · line 4 producer waiting flag · lines 5 … 5+consumerCount-1 consumer sequences · slots
// Slots start on a 64-byte boundary and are slotBytes apart (a multiple of 8, so 8-byte fields
// inside a slot stay aligned).

const LINE_BYTES = 64;
const LINE_WORDS = LINE_BYTES / 4;

const INBOUND_MAGIC = 0x52494e31; // 'RIN1'
const OUTBOUND_MAGIC = 0x524f5531; // 'ROU1'
const LAYOUT_VERSION = 1;

// Header words (line 0).
const H_MAGIC = 0;
const H_VERSION = 1;
const H_SLOT_COUNT = 2;
const H_SLOT_BYTES = 3;
const H_CONSUMER_COUNT = 4;
const H_INITIAL_SEQUENCE = 5;
const H_MARKERS_OFFSET = 6;
const H_SLOTS_OFFSET = 7;
const H_TOTAL_BYTES = 8;

// Inbound control words, one per line.
const IN_CLAIM = 1 * LINE_WORDS;
const IN_GATING = 2 * LINE_WORDS;
const IN_CONSUMER_PARKED = 3 * LINE_WORDS;
const IN_PRODUCERS_WAITING = 4 * LINE_WORDS;
const IN_CONTROL_LINES = 5;

// Outbound control words, one per line.
const OUT_CURSOR = 1 * LINE_WORDS;
const OUT_DOORBELL = 2 * LINE_WORDS;
const OUT_DOORBELL_WAITERS = 3 * LINE_WORDS;
const OUT_PRODUCER_WAITING = 4 * LINE_WORDS;
const OUT_CONSUMER_LINE_FIRST = 5;

const SLOT_COUNT_MAX = 1 << 30;
const CONSUMER_COUNT_MAX = 256;

/** What ended a wait: woken by the other side, no wait needed, or the timeout. */
export type WaitResult = 'ok' | 'not-equal' | 'timed-out';

/** `a - b` for two sequences, exact across the 2^32 wrap while they are < 2^31 apart. */
export function sequenceDiff(a: number, b: number): number {
  return (a - b) | 0;
}

// Node 20 has Atomics.waitAsync, but lib ES2022 does not declare it.
type WaitAsyncResult =
  | { async: false; value: 'not-equal' | 'timed-out' }
  | { async: true; value: Promise<'ok' | 'timed-out'> };
const atomicsWithWaitAsync = Atomics as unknown as {
  waitAsync(array: Int32Array, index: number, value: number, timeoutMs: number): WaitAsyncResult;
};

interface Layout {
  slotCount: number;
  slotBytes: number;
  consumerCount: number;
  initialSequence: number;
  markersOffset: number;
  slotsOffset: number;
  totalBytes: number;
}

function alignLine(bytes: number): number {
  return Math.ceil(bytes / LINE_BYTES) * LINE_BYTES;
}

function checkShape(slotCount: number, slotBytes: number, initialSequence: number): void {
  if (!Number.isInteger(slotCount) || slotCount < 2 || slotCount > SLOT_COUNT_MAX || (slotCount & (slotCount - 1)) !== 0) {
    throw new RangeError(`slotCount must be a power of two between 2 and 2^30, got ${slotCount}`);
  }
  if (!Number.isInteger(slotBytes) || slotBytes <= 0 || slotBytes % 8 !== 0) {
    throw new RangeError(`slotBytes must be a positive multiple of 8, got ${slotBytes}`);
  }
  if (!Number.isInteger(initialSequence) || initialSequence < 0 || initialSequence > 0xffffffff) {
    throw new RangeError(`initialSequence must be an integer in [0, 2^32), got ${initialSequence}`);
  }
}

function writeHeader(words: Int32Array, magic: number, layout: Layout): void {
  words[H_MAGIC] = magic;
  words[H_VERSION] = LAYOUT_VERSION;
  words[H_SLOT_COUNT] = layout.slotCount;
  words[H_SLOT_BYTES] = layout.slotBytes;
  words[H_CONSUMER_COUNT] = layout.consumerCount;
  words[H_INITIAL_SEQUENCE] = layout.initialSequence | 0;
  words[H_MARKERS_OFFSET] = layout.markersOffset;
  words[H_SLOTS_OFFSET] = layout.slotsOffset;
  words[H_TOTAL_BYTES] = layout.totalBytes;
}

/** Reads and checks the header another thread wrote, so attach cannot misread a foreign buffer. */
function readHeader(sab: SharedArrayBuffer, magic: number, name: string): Layout {
  if (!(sab instanceof SharedArrayBuffer) || sab.byteLength < LINE_BYTES) {
    throw new TypeError(`${name}.attach needs the SharedArrayBuffer made by ${name}.create`);
  }
  const words = new Int32Array(sab, 0, LINE_WORDS);
  if (Atomics.load(words, H_MAGIC) !== magic || words[H_VERSION] !== LAYOUT_VERSION) {
    throw new TypeError(`${name}.attach: buffer is not a ${name} (magic or layout version differs)`);
  }
  const layout: Layout = {
    slotCount: words[H_SLOT_COUNT],
    slotBytes: words[H_SLOT_BYTES],
    consumerCount: words[H_CONSUMER_COUNT],
    initialSequence: words[H_INITIAL_SEQUENCE] >>> 0,
    markersOffset: words[H_MARKERS_OFFSET],
    slotsOffset: words[H_SLOTS_OFFSET],
    totalBytes: words[H_TOTAL_BYTES],
  };
  if (layout.totalBytes !== sab.byteLength) {
    throw new TypeError(`${name}.attach: header says ${layout.totalBytes} bytes, buffer has ${sab.byteLength}`);
  }
  return layout;
}

/**
 * Multi-producer, single-consumer ring of fixed-size slots: front threads → engine.
 * Producers never block (tryClaim returns -1 when full); the consumer drains in batches.
 */
export class InboundRing {
  readonly sab: SharedArrayBuffer;
  readonly slotCount: number;
  readonly slotBytes: number;
  readonly view: DataView;
  readonly bytes: Uint8Array;
  private readonly words: Int32Array;
  private readonly mask: number;
  private readonly markerFirst: number;
  private readonly slotsOffset: number;

  static create(opts: { slotCount: number; slotBytes: number; initialSequence?: number }): InboundRing {
    const initialSequence = opts.initialSequence ?? 0;
    checkShape(opts.slotCount, opts.slotBytes, initialSequence);
    const markersOffset = IN_CONTROL_LINES * LINE_BYTES;
    const slotsOffset = alignLine(markersOffset + opts.slotCount * 4);
    const totalBytes = slotsOffset + opts.slotCount * opts.slotBytes;
    const layout: Layout = {
      slotCount: opts.slotCount, slotBytes: opts.slotBytes, consumerCount: 1,
      initialSequence, markersOffset, slotsOffset, totalBytes,
    };
    const sab = new SharedArrayBuffer(totalBytes);
    const words = new Int32Array(sab);
    writeHeader(words, INBOUND_MAGIC, layout);
    words[IN_CLAIM] = initialSequence | 0;
    words[IN_GATING] = initialSequence | 0;
    // Each slot starts marked with the sequence of the lap before its first use, which is exactly
    // what "not yet published" means for the first lap.
    const mask = opts.slotCount - 1;
    for (let k = 0; k < opts.slotCount; k++) {
      const seq = (initialSequence + k) | 0;
      words[markersOffset / 4 + (seq & mask)] = (seq - opts.slotCount) | 0;
    }
    return new InboundRing(sab, layout);
  }

  static attach(sab: SharedArrayBuffer): InboundRing {
    return new InboundRing(sab, readHeader(sab, INBOUND_MAGIC, 'InboundRing'));
  }

  private constructor(sab: SharedArrayBuffer, layout: Layout) {
    this.sab = sab;
    this.slotCount = layout.slotCount;
    this.slotBytes = layout.slotBytes;
    this.view = new DataView(sab);
    this.bytes = new Uint8Array(sab);
    this.words = new Int32Array(sab);
    this.mask = layout.slotCount - 1;
    this.markerFirst = layout.markersOffset / 4;
    this.slotsOffset = layout.slotsOffset;
  }

  /** Next sequence a producer will claim. */
  get cursor(): number {
    return Atomics.load(this.words, IN_CLAIM) >>> 0;
  }

  /** Whether the consumer is parked in waitForPublish now (tests and operators). */
  get consumerParked(): boolean {
    return Atomics.load(this.words, IN_CONSUMER_PARKED) !== 0;
  }

  /** Next sequence the consumer will handle; every slot before it is free. */
  get gatingSequence(): number {
    return Atomics.load(this.words, IN_GATING) >>> 0;
  }

  /**
   * Claims the next slot for this producer, or returns -1 when every slot is claimed and not yet
   * consumed. Never blocks. The gating sequence is read fresh on every call: a per-thread cache
   * (the Disruptor's gatingSequenceCache) could go stale by 2^31 sequences while other producers
   * run, and would then alias across the wrap.
   */
  tryClaim(): number {
    const words = this.words;
    for (;;) {
      const claim = Atomics.load(words, IN_CLAIM);
      const gating = Atomics.load(words, IN_GATING);
      // Negative only when other producers and the consumer moved on between the two loads;
      // the compareExchange below then fails and we retry with fresh values.
      if (((claim - gating) | 0) >= this.slotCount) return -1;
      if (Atomics.compareExchange(words, IN_CLAIM, claim, (claim + 1) | 0) === claim) return claim >>> 0;
    }
  }

  offsetOf(seq: number): number {
    return this.slotsOffset + (seq & this.mask) * this.slotBytes;
  }

  /**
   * Makes a claimed slot visible. Producers may publish in any order; the consumer still stops at
   * the first unpublished sequence. Call it in `finally` after the claim, or the consumer stalls.
   */
  publish(seq: number): void {
    this.publishQuietly(seq);
    // The consumer parks on the marker of the very sequence it needs, so waking it from any other
    // slot's publish would be wasted; notify on an address nobody waits on costs no syscall.
    if (Atomics.load(this.words, IN_CONSUMER_PARKED) !== 0) Atomics.notify(this.words, this.markerFirst + (seq & this.mask), 1);
  }

  /**
   * Publishes without waking a parked consumer: for a producer that publishes several slots in
   * one turn and then calls wakeConsumer once (a front thread wakes the engine once per turn of
   * its event loop, not once per request: each wake of a parked thread is a futex syscall).
   */
  publishQuietly(seq: number): void {
    const words = this.words;
    const marker = this.markerFirst + (seq & this.mask);
    const unpublished = (seq - this.slotCount) | 0;
    // Two cheap guards against a stray or double publish, which would stall or corrupt the
    // stream: the sequence lies in the window the consumer has freed, and the compareExchange
    // (as cheap as a sequentially consistent store) only fires if the slot still waits for it.
    if (((seq - Atomics.load(words, IN_GATING)) >>> 0) >= this.slotCount) {
      throw new Error(`InboundRing.publish(${seq >>> 0}): sequence is outside the claimable window`);
    }
    const previous = Atomics.compareExchange(words, marker, unpublished, seq | 0);
    if (previous !== unpublished) {
      throw new Error(`InboundRing.publish(${seq >>> 0}): slot was not claimed for that sequence (marker ${previous >>> 0})`);
    }
  }

  /**
   * Wakes the consumer if it is parked, after publishQuietly. It parks on the marker of its
   * gatingSequence, the one slot it needs next, and that sequence cannot move while it is parked,
   * so that marker is the one to notify. If that slot is another producer's and not yet published,
   * the consumer wakes, finds it unpublished and parks again; the other producer's own wake ends
   * that wait.
   */
  wakeConsumer(): void {
    const words = this.words;
    if (Atomics.load(words, IN_CONSUMER_PARKED) === 0) return;
    Atomics.notify(words, this.markerFirst + (Atomics.load(words, IN_GATING) & this.mask), 1);
  }

  /**
   * Consumer side: hands up to maxBatch published slots to the handler in sequence order, then
   * frees them with one store of the gatingSequence (endOfBatch). If the handler throws, the slots
   * handled before it are still freed and the failing one is offered again. Returns the count.
   */
  poll(handler: (offset: number, seq: number) => void, maxBatch: number): number {
    const words = this.words;
    const mask = this.mask;
    const start = Atomics.load(words, IN_GATING);
    let seq = start;
    try {
      while (((seq - start) | 0) < maxBatch && Atomics.load(words, this.markerFirst + (seq & mask)) === seq) {
        handler(this.slotsOffset + (seq & mask) * this.slotBytes, seq >>> 0);
        seq = (seq + 1) | 0;
      }
    } finally {
      if (seq !== start) this.release(seq);
    }
    return (seq - start) | 0;
  }

  private release(seq: number): void {
    const words = this.words;
    Atomics.store(words, IN_GATING, seq);
    if (Atomics.load(words, IN_PRODUCERS_WAITING) !== 0) Atomics.notify(words, IN_GATING);
  }

  /**
   * Consumer waitStrategy: parks until the next sequence is published or the timeout passes.
   * Returns at once ('not-equal') when it already is. Blocks the calling thread (engine worker).
   */
  waitForPublish(timeoutMs: number): WaitResult {
    const words = this.words;
    const seq = Atomics.load(words, IN_GATING);
    const marker = this.markerFirst + (seq & this.mask);
    // Flag first, then wait: a producer that publishes after our flag store sees the flag and
    // notifies; one that published before it changed the marker, so the wait returns 'not-equal'.
    Atomics.store(words, IN_CONSUMER_PARKED, 1);
    const result = Atomics.wait(words, marker, (seq - this.slotCount) | 0, timeoutMs);
    Atomics.store(words, IN_CONSUMER_PARKED, 0);
    return result;
  }

  /**
   * Producer waitStrategy for callers that may block (tests, benchmarks, batch loaders): parks
   * until the consumer frees a slot or the timeout passes. Front threads never call it; they
   * answer "ring full" at once.
   */
  waitForSpace(timeoutMs: number): WaitResult {
    const words = this.words;
    const gating = Atomics.load(words, IN_GATING);
    if (((Atomics.load(words, IN_CLAIM) - gating) | 0) < this.slotCount) return 'not-equal';
    // A count, not a flag: several producers may wait at once and each leaves on its own.
    Atomics.add(words, IN_PRODUCERS_WAITING, 1);
    const result = Atomics.wait(words, IN_GATING, gating, timeoutMs);
    Atomics.sub(words, IN_PRODUCERS_WAITING, 1);
    return result;
  }
}

/** One gated reader of the OutboundRing; it sees every record. */
export interface OutboundConsumer {
  /**
   * Handles published records in order. The handler returns false to stop BEFORE consuming that
   * record (it is offered again on the next poll), e.g. to hold records until they are durable.
   * Frees the consumed slots at end of batch and returns how many were consumed.
   */
  poll(handler: (offset: number, seq: number) => boolean, maxBatch: number): number;
  /** Next sequence this consumer will read. */
  readonly sequence: number;
}

/**
 * Single-producer ring with several gated consumers, each seeing every record: engine → journal
 * worker and front threads. The producer publishes locally and makes a whole batch visible with
 * one cursor store in flush().
 */
export class OutboundRing {
  readonly sab: SharedArrayBuffer;
  readonly slotCount: number;
  readonly slotBytes: number;
  readonly consumerCount: number;
  readonly view: DataView;
  readonly bytes: Uint8Array;
  private readonly words: Int32Array;
  private readonly mask: number;
  private readonly slotsOffset: number;
  private readonly consumers: (GatedConsumer | undefined)[];
  // Producer-local state (only the one producer thread uses it).
  private claimNext: number;
  private publishedNext: number;
  private flushedNext: number;
  private gatingCache: number;

  static create(opts: { slotCount: number; slotBytes: number; consumerCount: number; initialSequence?: number }): OutboundRing {
    const initialSequence = opts.initialSequence ?? 0;
    checkShape(opts.slotCount, opts.slotBytes, initialSequence);
    const consumerCount = opts.consumerCount;
    if (!Number.isInteger(consumerCount) || consumerCount < 1 || consumerCount > CONSUMER_COUNT_MAX) {
      throw new RangeError(`consumerCount must be an integer between 1 and ${CONSUMER_COUNT_MAX}, got ${consumerCount}`);
    }
    const slotsOffset = (OUT_CONSUMER_LINE_FIRST + consumerCount) * LINE_BYTES;
    const totalBytes = slotsOffset + opts.slotCount * opts.slotBytes;
    const layout: Layout = {
      slotCount: opts.slotCount, slotBytes: opts.slotBytes, consumerCount,
      initialSequence, markersOffset: 0, slotsOffset, totalBytes,
    };
    const sab = new SharedArrayBuffer(totalBytes);
    const words = new Int32Array(sab);
    writeHeader(words, OUTBOUND_MAGIC, layout);
    words[OUT_CURSOR] = initialSequence | 0;
    // Consumers that have not started yet still gate the producer from the first sequence on.
    for (let i = 0; i < consumerCount; i++) words[(OUT_CONSUMER_LINE_FIRST + i) * LINE_WORDS] = initialSequence | 0;
    return new OutboundRing(sab, layout);
  }

  static attach(sab: SharedArrayBuffer): OutboundRing {
    return new OutboundRing(sab, readHeader(sab, OUTBOUND_MAGIC, 'OutboundRing'));
  }

  private constructor(sab: SharedArrayBuffer, layout: Layout) {
    this.sab = sab;
    this.slotCount = layout.slotCount;
    this.slotBytes = layout.slotBytes;
    this.consumerCount = layout.consumerCount;
    this.view = new DataView(sab);
    this.bytes = new Uint8Array(sab);
    this.words = new Int32Array(sab);
    this.mask = layout.slotCount - 1;
    this.slotsOffset = layout.slotsOffset;
    this.consumers = new Array<GatedConsumer | undefined>(layout.consumerCount).fill(undefined);
    const cursor = Atomics.load(this.words, OUT_CURSOR);
    this.claimNext = cursor;
    this.publishedNext = cursor;
    this.flushedNext = cursor;
    this.gatingCache = cursor;
  }

  /** Next sequence the producer will make visible (the shared cursor, as of the last flush). */
  get cursor(): number {
    return Atomics.load(this.words, OUT_CURSOR) >>> 0;
  }

  /**
   * Claims the next sequence, or returns -1 while the slowest consumer still holds that slot.
   * The producer caches the slowest consumer's sequence and rereads the consumer lines only when
   * the cache says "full". With one producer the cache can never be more than slotCount behind
   * the claim (it is refreshed the moment it reaches that distance), so it cannot alias across
   * the wrap.
   */
  tryClaim(): number {
    if (((this.claimNext - this.gatingCache) | 0) >= this.slotCount && this.refreshGating() >= this.slotCount) return -1;
    const seq = this.claimNext;
    this.claimNext = (seq + 1) | 0;
    return seq >>> 0;
  }

  /** Rereads every consumer sequence; returns how far the slowest is behind the next claim. */
  private refreshGating(): number {
    const words = this.words;
    const next = this.claimNext;
    let lag = 0;
    for (let i = 0; i < this.consumerCount; i++) {
      const behind = (next - Atomics.load(words, (OUT_CONSUMER_LINE_FIRST + i) * LINE_WORDS)) | 0;
      if (behind > lag) lag = behind;
    }
    this.gatingCache = (next - lag) | 0;
    return lag;
  }

  offsetOf(seq: number): number {
    return this.slotsOffset + (seq & this.mask) * this.slotBytes;
  }

  /** Marks a claimed slot written. Local only: consumers see it after the next flush(). */
  publish(seq: number): void {
    if ((seq | 0) !== this.publishedNext || ((this.claimNext - this.publishedNext) | 0) <= 0) {
      throw new Error(`OutboundRing.publish(${seq >>> 0}): expected the claimed sequence ${this.publishedNext >>> 0}`);
    }
    this.publishedNext = (seq + 1) | 0;
  }

  /** endOfBatch: one store of the shared cursor for everything published, then the doorbell. */
  flush(): void {
    if (this.publishedNext === this.flushedNext) return;
    Atomics.store(this.words, OUT_CURSOR, this.publishedNext);
    this.flushedNext = this.publishedNext;
    this.signal();
  }

  /**
   * Producer waitStrategy when tryClaim returned -1: flushes (consumers cannot free slots they
   * cannot see), then parks on the slowest consumer's sequence until it moves or the timeout
   * passes. Returns 'not-equal' at once when a slot is already free.
   */
  waitForConsumers(timeoutMs: number): WaitResult {
    this.flush();
    const words = this.words;
    // Flag before reading the consumer sequences: a consumer that advances after this store sees
    // the flag and notifies; one that advanced before it is seen by the reads below.
    Atomics.store(words, OUT_PRODUCER_WAITING, 1);
    let slowestWord = -1;
    let slowestSeq = 0;
    let lag = -1;
    for (let i = 0; i < this.consumerCount; i++) {
      const word = (OUT_CONSUMER_LINE_FIRST + i) * LINE_WORDS;
      const seq = Atomics.load(words, word);
      const behind = (this.claimNext - seq) | 0;
      if (behind > lag) { lag = behind; slowestWord = word; slowestSeq = seq; }
    }
    // Every slowest consumer must move before a slot frees, so waiting on any one of them is enough.
    const result = lag >= this.slotCount ? Atomics.wait(words, slowestWord, slowestSeq, timeoutMs) : 'not-equal';
    Atomics.store(words, OUT_PRODUCER_WAITING, 0);
    return result;
  }

  /** Consumer `index`'s sequence (the next one it will read), from any thread: for health reports. */
  consumerSequence(index: number): number {
    return Atomics.load(this.words, (OUT_CONSUMER_LINE_FIRST + index) * LINE_WORDS) >>> 0;
  }

  /** The gated reader for consumer `index`; each index must be polled by one thread only. */
  consumer(index: number): OutboundConsumer {
    if (!Number.isInteger(index) || index < 0 || index >= this.consumerCount) {
      throw new RangeError(`OutboundRing.consumer(${index}): index must be in [0, ${this.consumerCount})`);
    }
    let consumer = this.consumers[index];
    if (consumer === undefined) {
      consumer = new GatedConsumer(this.words, this.mask, this.slotsOffset, this.slotBytes, (OUT_CONSUMER_LINE_FIRST + index) * LINE_WORDS);
      this.consumers[index] = consumer;
    }
    return consumer;
  }

  /**
   * Rings the doorbell: bumps its value and wakes its waiters, if any. The producer rings it in
   * flush(); anyone else (the journal worker, after seqDurable moves) may ring it too.
   */
  signal(): void {
    const words = this.words;
    Atomics.add(words, OUT_DOORBELL, 1);
    if (Atomics.load(words, OUT_DOORBELL_WAITERS) !== 0) Atomics.notify(words, OUT_DOORBELL);
  }

  /** The doorbell's value; read it BEFORE polling, then wait on it, so no ring is missed. */
  signalValue(): number {
    return Atomics.load(this.words, OUT_DOORBELL);
  }

  /** Blocks until the doorbell differs from `seen` or the timeout passes (worker threads). */
  waitSignal(seen: number, timeoutMs: number): WaitResult {
    const words = this.words;
    Atomics.add(words, OUT_DOORBELL_WAITERS, 1);
    const result = Atomics.wait(words, OUT_DOORBELL, seen, timeoutMs);
    Atomics.sub(words, OUT_DOORBELL_WAITERS, 1);
    return result;
  }

  /**
   * Like waitSignal, without blocking the event loop (front threads, journal worker). The pending
   * Atomics.waitAsync does not keep a Node event loop alive by itself; in the server the uWS app
   * or the worker's parent port does.
   */
  waitSignalAsync(seen: number, timeoutMs: number): Promise<WaitResult> {
    const words = this.words;
    Atomics.add(words, OUT_DOORBELL_WAITERS, 1);
    const wait = atomicsWithWaitAsync.waitAsync(words, OUT_DOORBELL, seen, timeoutMs);
    if (!wait.async) {
      Atomics.sub(words, OUT_DOORBELL_WAITERS, 1);
      return Promise.resolve(wait.value);
    }
    return wait.value.then((result) => {
      Atomics.sub(words, OUT_DOORBELL_WAITERS, 1);
      return result;
    });
  }
}

class GatedConsumer implements OutboundConsumer {
  constructor(
    private readonly words: Int32Array,
    private readonly mask: number,
    private readonly slotsOffset: number,
    private readonly slotBytes: number,
    private readonly sequenceWord: number,
  ) {}

  get sequence(): number {
    return Atomics.load(this.words, this.sequenceWord) >>> 0;
  }

  poll(handler: (offset: number, seq: number) => boolean, maxBatch: number): number {
    const words = this.words;
    const start = Atomics.load(words, this.sequenceWord);
    const available = (Atomics.load(words, OUT_CURSOR) - start) | 0;
    const end = available < maxBatch ? available : maxBatch;
    let count = 0;
    try {
      while (count < end) {
        const seq = (start + count) | 0;
        // Only an explicit false holds the record; a handler that returns nothing consumes it.
        if (handler(this.slotsOffset + (seq & this.mask) * this.slotBytes, seq >>> 0) === false) break;
        count++;
      }
    } finally {
      if (count > 0) this.release((start + count) | 0);
    }
    return count;
  }

  private release(seq: number): void {
    const words = this.words;
    Atomics.store(words, this.sequenceWord, seq);
    if (Atomics.load(words, OUT_PRODUCER_WAITING) !== 0) Atomics.notify(words, this.sequenceWord, 1);
  }
}
