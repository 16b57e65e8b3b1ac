// The control block shared by every thread: one SharedArrayBuffer with the durable sequence the
// journal worker publishes (seqDurable), the engine's last sequence, and a shutdown flag.
//
// Each word sits on its own 64-byte line so that the journal's stores to seqDurable do not
// invalidate the line the engine writes. Sequences are 64-bit (BigInt64Array, Atomics) so they
// never wrap; readers convert them to numbers once per batch, exact up to 2^53.

const LINE_BYTES = 64;
const SEQ_DURABLE = 0; // BigInt64 index (line 0)
const SEQ_LAST = LINE_BYTES / 8; // BigInt64 index (line 1)
const SHUTDOWN = (2 * LINE_BYTES) / 4; // Int32 index (line 2)
const BYTES = 3 * LINE_BYTES;

export class Control {
  readonly sab: SharedArrayBuffer;
  private readonly big: BigInt64Array;
  private readonly i32: Int32Array;

  private constructor(sab: SharedArrayBuffer) {
    this.sab = sab;
    this.big = new BigInt64Array(sab);
    this.i32 = new Int32Array(sab);
  }

  static create(): Control {
    return new Control(new SharedArrayBuffer(BYTES));
  }

  static attach(sab: SharedArrayBuffer): Control {
    return new Control(sab);
  }

  /** Highest journal sequence flushed to disk: nothing that depends on a later one may leave. */
  seqDurable(): number {
    return Number(Atomics.load(this.big, SEQ_DURABLE));
  }

  setSeqDurable(seq: number): void {
    Atomics.store(this.big, SEQ_DURABLE, BigInt(seq));
  }

  /** Last sequence the engine assigned (for operators and tests; the engine owns it). */
  seqLast(): number {
    return Number(Atomics.load(this.big, SEQ_LAST));
  }

  setSeqLast(seq: number): void {
    Atomics.store(this.big, SEQ_LAST, BigInt(seq));
  }

  shuttingDown(): boolean {
    return Atomics.load(this.i32, SHUTDOWN) !== 0;
  }

  requestShutdown(): void {
    Atomics.store(this.i32, SHUTDOWN, 1);
    Atomics.notify(this.i32, SHUTDOWN);
  }
}
