// The engine shell's write side of the outbound ring: stamps each state-changing command, applies
// it, and marks the end of its outputs for the journal's output digest.
//
//   Stamped(seq) → outputs of apply(seq) … → the last of them carries HeaderFlag.CommandEnd
//
// Every record is claimed and written as the core emits it, but published one record late: the
// shell holds back the latest record until it knows whether it is the command's last, and then
// sets CommandEnd on it before publishing. The journal worker closes the command's digest there
// (digest.ts) without waiting for the next command, and consumers never see a flag change under
// them (a record is only read after its publish). Holding one record back cannot deadlock a full
// ring: consumers still drain everything before it. Queries get no stamp and no CommandEnd.
//
// The engine worker drives this over the shared ring; the journal tests drive it in-process.

import {
  COMMAND_BYTES,
  STAMPED_COMMAND_OFFSET,
  addRecordFlags,
  copyBytes,
  newResultRec,
  readResult,
  recordType,
  writeCommand,
  writeHeader,
} from '../bus/codec.js';
import type { Exchange } from '../core/exchange.js';
import type { OutboundRing } from '../bus/ring.js';
import type { SharedMetrics } from '../bus/metrics.js';
import { HeaderFlag, RecordType, ResultCode, type Command, type RecordHeaderFields, type RecordSink } from '../bus/types.js';

export class Sequencer {
  /** The claimed, written, not yet published slot (-1: none). */
  private held = -1;
  private readonly header: RecordHeaderFields = { seq: 0, timeUs: 0, requestId: 0, frontId: 0, type: RecordType.Stamped, flags: 0 };
  readonly sink: RecordSink;
  /**
   * The code of the first Result record the current command produced. The core reports every
   * rejection as a Result record, while a success may be reported by other records alone (an
   * accepted order by its Order record), so a command without one counts as Ok.
   */
  private resultCode: number = ResultCode.Ok;
  private resultSeen = false;

  /**
   * `claim` returns a claimed outbound sequence, waiting for consumers while the ring is full;
   * `metrics`, when given, counts every command by kind and result code.
   */
  constructor(
    private readonly exchange: Exchange,
    private readonly outbound: OutboundRing,
    private readonly claim: () => number,
    private readonly metrics: SharedMetrics | null = null,
  ) {
    const next = (): number => {
      const s = this.claim();
      if (this.held >= 0) this.outbound.publish(this.held);
      this.held = s;
      return outbound.offsetOf(s);
    };
    // Each record is published when the next one is claimed (next), so nothing is left to do
    // once it is written. The command's first Result record is its result code for the metrics
    // (a command without one was accepted).
    const view = outbound.view;
    const result = newResultRec();
    this.sink = {
      view,
      claim: next,
      written: (offset: number) => {
        if (this.resultSeen || recordType(view, offset) !== RecordType.Result) return;
        readResult(view, offset, result);
        this.resultCode = result.code;
        this.resultSeen = true;
      },
    };
  }

  /**
   * Stamps and applies a state-changing command: the Stamped record (the command's raw bytes
   * copied from `srcBytes` when given, else encoded), its outputs, CommandEnd on the last.
   */
  command(seq: number, timeUs: number, cmd: Command, srcBytes: Uint8Array | null, srcOffset: number): void {
    const s = this.claim();
    if (this.held >= 0) this.outbound.publish(this.held);
    this.held = s;
    const off = this.outbound.offsetOf(s);
    const header = this.header;
    header.seq = seq;
    header.timeUs = timeUs;
    header.requestId = cmd.requestId;
    header.frontId = cmd.frontId;
    writeHeader(this.outbound.view, off, header);
    if (srcBytes) copyBytes(srcBytes, srcOffset, this.outbound.bytes, off + STAMPED_COMMAND_OFFSET, COMMAND_BYTES);
    else writeCommand(this.outbound.view, off + STAMPED_COMMAND_OFFSET, cmd);
    this.resultCode = ResultCode.Ok;
    this.resultSeen = false;
    this.exchange.apply(cmd, seq, timeUs, this.sink);
    this.metrics?.countCommand(cmd.kind, this.resultCode);
    addRecordFlags(this.outbound.view, this.outbound.offsetOf(this.held), HeaderFlag.CommandEnd);
    this.outbound.publish(this.held);
    this.held = -1;
  }

  /** Applies a query (no seq of its own, no stamp, no CommandEnd). */
  query(cmd: Command, lastSeq: number, timeUs: number): void {
    this.resultCode = ResultCode.Ok;
    this.resultSeen = false;
    this.exchange.apply(cmd, lastSeq, timeUs, this.sink);
    this.metrics?.countCommand(cmd.kind, this.resultCode);
    if (this.held >= 0) this.outbound.publish(this.held);
    this.held = -1;
  }
}
