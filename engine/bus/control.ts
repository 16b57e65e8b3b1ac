// The control block shared by every thread: one SharedArrayBuffer with the durable sequence the
// journal worker publishes (seqDurable), the engine's last sequence, a shutdown flag, and the
// liveness words the watchdog reads (what each thread is doing, and counters that move whenever
// it makes progress).
//
// Each word sits on its own 64-byte line so that the journal's stores to seqDurable do not
// invalidate the line the engine writes. Sequences are 64-bit (BigInt64Array, Atomics) so they
// never wrap; readers convert them to numbers once per batch, exact up to 2^53. Progress counters
// are Int32 and only compared for change, so their wrap is harmless.
//
// Liveness: the engine and the journal worker each store a state (what they wait on) and bump a
// progress counter per batch; the main thread's watchdog (src/watchdog.ts) compares them between
// checks. The stall word is written by the watchdog and read by the front threads, so the status
// endpoints can report a stall before the process ends.

const LINE_BYTES = 64;
const LINE_WORDS = LINE_BYTES / 4;
const SEQ_DURABLE = 0; // BigInt64 index (line 0)
const SEQ_LAST = LINE_BYTES / 8; // BigInt64 index (line 1)
const SHUTDOWN = 2 * LINE_WORDS; // Int32 index (line 2)
const ENGINE_STATE = 3 * LINE_WORDS;
const ENGINE_PROGRESS = 4 * LINE_WORDS;
const JOURNAL_STATE = 5 * LINE_WORDS;
const JOURNAL_PROGRESS = 6 * LINE_WORDS;
/** Milliseconds without progress while work waits, as last seen by the watchdog (0: healthy). */
const STALL_MS = 7 * LINE_WORDS;
const BYTES = 8 * LINE_BYTES;

/** What the engine thread is doing. */
export const EngineState = {
  /** Parked on the inbound ring, or spinning for the next command. */
  Idle: 0,
  Applying: 1,
  /** Every outbound slot is held by a consumer that has not handled it yet. */
  WaitingOutboundSpace: 2,
  Stopped: 3,
} as const;

/** What the journal worker is doing. */
export const JournalState = {
  Idle: 0,
  Draining: 1,
  /** Inside a command whose remaining outputs the engine has not published yet. */
  WaitingCommandTail: 2,
  /** Waiting for the disk to flush a committed batch. */
  Flushing: 3,
  Stopped: 4,
} as const;

export const ENGINE_STATE_NAMES = ['idle', 'applying commands', 'waiting for outbound ring space', 'stopped'];
export const JOURNAL_STATE_NAMES = ['idle', 'draining the outbound ring', 'waiting for the rest of a command', 'waiting for the disk flush', 'stopped'];

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

  engineState(): number {
    return Atomics.load(this.i32, ENGINE_STATE);
  }

  setEngineState(state: number): void {
    Atomics.store(this.i32, ENGINE_STATE, state);
  }

  engineProgress(): number {
    return Atomics.load(this.i32, ENGINE_PROGRESS);
  }

  /** One bump per handled batch of commands (not per command: the hot loop stays cheap). */
  bumpEngineProgress(): void {
    Atomics.add(this.i32, ENGINE_PROGRESS, 1);
  }

  journalState(): number {
    return Atomics.load(this.i32, JOURNAL_STATE);
  }

  setJournalState(state: number): void {
    Atomics.store(this.i32, JOURNAL_STATE, state);
  }

  journalProgress(): number {
    return Atomics.load(this.i32, JOURNAL_PROGRESS);
  }

  bumpJournalProgress(): void {
    Atomics.add(this.i32, JOURNAL_PROGRESS, 1);
  }

  /** How long work has waited without progress, as the watchdog last saw it (0: healthy). */
  stallMs(): number {
    return Atomics.load(this.i32, STALL_MS);
  }

  setStallMs(ms: number): void {
    Atomics.store(this.i32, STALL_MS, ms);
  }
}
