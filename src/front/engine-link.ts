// A front thread's link to the engine: it writes commands into the inbound ring and drains the
// outbound ring as one of its gated consumers.
//
// Every outbound record carries the journal sequence it depends on. The drain stops at the first
// record whose sequence is above seqDurable and leaves it in the ring until the journal worker
// has flushed it (the journal rings the same doorbell when seqDurable advances), so no response
// and no stream event ever leaves this thread ahead of the disk. When the ring is at least half
// full, such records are copied out instead (held-records.ts) and released from there once
// durable: a command whose outputs outnumber the free slots could otherwise never complete, and
// so never become durable (the engine would wait for slots that only its durability frees).
//
// Records addressed to this thread (RecordHeader.frontId) go to the pending request with that
// requestId; records addressed to nobody are events for the read models and the streams; records
// addressed to another front thread are skipped.
//
// Submitting never blocks: a full inbound ring is reported at once (the caller answers 503), and
// the number of requests in flight on this thread is bounded.
//
// A parked engine is woken once per turn of this thread's event loop, after every request that
// turn read has been published (setImmediate runs once the loop's poll phase has handed every
// readable socket to its handler), not once per request: waking a parked thread is a futex
// syscall, and the engine parks again 50 µs after its work, well before this thread has spent
// its ~100 µs on the next request.

import { Control } from '../../engine/bus/control.js';
import { InboundRing, OutboundRing, type OutboundConsumer } from '../../engine/bus/ring.js';
import { SLOT_BYTES, readHeader, recordSeq, writeCommand } from '../../engine/bus/codec.js';
import { HeldRecords } from './held-records.js';
import { describePipeline, readPipeline, type PipelineReading } from '../../engine/bus/pipeline-health.js';
import type { FrontMetrics } from './front-metrics.js';
import {
  FRONT_ID_NONE,
  HeaderFlag,
  newCommand,
  resetCommand,
  type Command,
  type RecordHeaderFields,
  type RecordType,
} from '../../engine/bus/types.js';

/** Receives the records addressed to one request; the last one has HeaderFlag.Last. */
export interface PendingRequest {
  onRecord(type: RecordType, view: DataView, offset: number, header: RecordHeaderFields): void;
}

export interface EventHandler {
  onEvent(type: RecordType, view: DataView, offset: number, header: RecordHeaderFields): void;
  /** Called after each drained batch, to flush coalesced stream messages. */
  onBatchEnd(): void;
}

export type SubmitResult = 'ok' | 'ring_full' | 'too_many_pending';

const BATCH_MAX = 1024;
const IDLE_WAIT_MS = 1000;

export class EngineLink {
  private readonly inbound: InboundRing;
  private readonly outbound: OutboundRing;
  private readonly consumer: OutboundConsumer;
  private readonly control: Control;
  private readonly pending = new Map<number, PendingRequest>();
  private readonly header: RecordHeaderFields = { seq: 0, timeUs: 0, requestId: 0, frontId: 0, type: 0, flags: 0 };
  private readonly command: Command = newCommand();
  private nextRequestId = 1;
  private seqDurable = 0;
  /** Records taken out of the ring before they were durable (only while the ring is under pressure). */
  private readonly held = new HeldRecords(SLOT_BYTES);
  /** Ring occupancy, seen from this consumer, at which non-durable records are copied out. */
  private readonly pressureSlots: number;
  private running = false;
  private events: EventHandler | null = null;
  /** Whether a wake of the engine is queued for the end of this turn. */
  private wakeQueued = false;
  private readonly wakeEngine = (): void => {
    this.wakeQueued = false;
    this.inbound.wakeConsumer();
  };

  constructor(
    readonly frontId: number,
    inboundSab: SharedArrayBuffer,
    outboundSab: SharedArrayBuffer,
    consumerIndex: number,
    controlSab: SharedArrayBuffer,
    private readonly maxPending: number,
    private readonly onHandlerError: (error: unknown) => void = () => {},
    /** Counts refused submits (full ring, too many pending). */
    private readonly metrics: FrontMetrics | null = null,
  ) {
    this.inbound = InboundRing.attach(inboundSab);
    this.outbound = OutboundRing.attach(outboundSab);
    this.consumer = this.outbound.consumer(consumerIndex);
    this.control = Control.attach(controlSab);
    this.pressureSlots = Math.max(1, this.outbound.slotCount >>> 1);
  }

  /** How long the watchdog has seen work wait without progress (0: healthy). */
  stallMs(): number {
    return this.control.stallMs();
  }

  /** What each thread of the pipeline is doing now, as an operator reads it. */
  pipeline(): Record<string, unknown> {
    return { ...describePipeline(readPipeline(this.control, this.inbound, this.outbound)), frontHeldRecords: this.held.count };
  }

  /** The pipeline reading itself and the rings' sizes, for the metrics endpoint. */
  reading(): { pipeline: PipelineReading; inboundSlots: number; outboundSlots: number } {
    return { pipeline: readPipeline(this.control, this.inbound, this.outbound), inboundSlots: this.inbound.slotCount, outboundSlots: this.outbound.slotCount };
  }

  /** Records held out of the ring until durable (for operators and tests). */
  get heldCount(): number {
    return this.held.count;
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  /** The journal's durable sequence now (timer-driven streams check it before sending). */
  seqDurableNow(): number {
    return this.control.seqDurable();
  }

  /**
   * Fills a command (the callback writes its fields into a reused object) and publishes it.
   * Never blocks. On 'ok' the request's records will reach `request`.
   */
  submit(fill: (cmd: Command) => void, request: PendingRequest): SubmitResult {
    if (this.pending.size >= this.maxPending) {
      this.metrics?.add('tooManyPending');
      return 'too_many_pending';
    }
    const cmd = this.command;
    resetCommand(cmd);
    fill(cmd); // may throw: nothing is claimed yet
    const seq = this.inbound.tryClaim();
    if (seq < 0) {
      this.metrics?.add('ringFull');
      return 'ring_full';
    }
    const requestId = this.nextRequestId;
    this.nextRequestId = requestId >= 0xfffffffe ? 1 : requestId + 1;
    cmd.requestId = requestId;
    cmd.frontId = this.frontId;
    this.pending.set(requestId, request);
    const offset = this.inbound.offsetOf(seq);
    try {
      writeCommand(this.inbound.view, offset, cmd);
    } catch {
      // A claimed slot must always be published, or the consumer would stall behind it. The
      // fields were out of range for the slot: publish a None command instead, which the engine
      // answers with InvalidCommand, so the request still gets its answer.
      resetCommand(cmd);
      cmd.requestId = requestId;
      cmd.frontId = this.frontId;
      writeCommand(this.inbound.view, offset, cmd);
    }
    this.inbound.publishQuietly(seq);
    if (!this.wakeQueued) {
      this.wakeQueued = true;
      setImmediate(this.wakeEngine);
    }
    return 'ok';
  }

  /** Starts draining the outbound ring on this thread's event loop. */
  start(events: EventHandler): void {
    this.events = events;
    this.running = true;
    void this.loop();
  }

  stop(): void {
    this.running = false;
    this.outbound.signal();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const seen = this.outbound.signalValue();
      const count = this.drain();
      if (count === BATCH_MAX) {
        await new Promise<void>((resolve) => setImmediate(resolve));
      } else {
        await this.outbound.waitSignalAsync(seen, IDLE_WAIT_MS);
      }
    }
  }

  /** Polled from the ring: delivers a durable record, or holds it back (see the file header). */
  private readonly onRecord = (offset: number, ringSeq: number): boolean => {
    const view = this.outbound.view;
    const seq = recordSeq(view, offset);
    if (seq > this.seqDurable || this.held.count > 0) {
      this.seqDurable = this.control.seqDurable();
      if (seq > this.seqDurable || this.held.count > 0) {
        // Ring order must be kept: once one record is held, every later one queues behind it.
        if (this.held.count === 0 && ((this.outbound.cursor - ringSeq) | 0) < this.pressureSlots) return false;
        this.held.push(this.outbound.bytes, offset, seq);
        return true;
      }
    }
    this.deliver(view, offset);
    return true;
  };

  private readonly deliver = (view: DataView, offset: number): void => {
    const header = this.header;
    readHeader(view, offset, header);
    // A handler bug (formatting one response or one stream message) is reported and the record
    // consumed: retrying it would fail the same way and stall every later record behind it. An
    // answer that carries its order's event (HeaderFlag.Event) is also an event on every front;
    // a bug in either part does not keep the record from the other.
    if (header.frontId === this.frontId) {
      try {
        const request = this.pending.get(header.requestId);
        if ((header.flags & HeaderFlag.Last) !== 0) this.pending.delete(header.requestId);
        request?.onRecord(header.type, view, offset, header);
      } catch (error) {
        this.onHandlerError(error);
      }
    }
    if (header.frontId === FRONT_ID_NONE || (header.flags & HeaderFlag.Event) !== 0) {
      try {
        this.events!.onEvent(header.type, view, offset, header);
      } catch (error) {
        this.onHandlerError(error);
      }
    }
  };

  private drain(): number {
    this.seqDurable = this.control.seqDurable();
    const released = this.held.count > 0 ? this.held.release(this.seqDurable, this.deliver) : 0;
    const count = this.consumer.poll(this.onRecord, BATCH_MAX);
    if (count > 0 || released > 0) this.events!.onBatchEnd();
    return count;
  }
}
