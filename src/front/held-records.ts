// Records a front thread has taken out of the outbound ring before they were durable.
//
// Why: a front thread may release a record to a client only once the journal has flushed its
// sequence, and the journal closes a batch only at a command boundary, after the command's last
// output. A command with more outputs than the outbound ring has free slots (a cancel-all of
// hundreds of orders, a taker order sweeping a deep book, a tick activating many orders) would
// then wait for slots that only its own durability could free: the engine waits for ring space,
// the journal waits for the rest of the command, the fronts wait for the journal — a cycle that
// never ends. So when the ring is under pressure a front thread copies the records it may not
// release yet into this queue, which frees their slots, and releases them from here, in ring
// order, once seqDurable reaches them. Nothing leaves the thread earlier than before.
//
// Bounded: a record enters only after the engine published it, and the journal commits every
// command as soon as its last output is published, so the queue holds at most the journal's open
// batch plus one ring of records (the largest command's outputs are bounded by the engine's
// configured limits: open orders per account, orders per book).
//
// Order: ring order is sequence order (each record carries the sequence of the command it belongs
// to, queries the last one assigned), so the queue's head always has the lowest sequence.

export class HeldRecords {
  private bytes: Uint8Array;
  private view: DataView;
  private head = 0;
  private length = 0;
  /** The sequence each held record depends on, by position in the queue. */
  private seqs: Float64Array;

  constructor(private readonly recordBytes: number, initialCapacity = 64) {
    this.bytes = new Uint8Array(recordBytes * initialCapacity);
    this.view = new DataView(this.bytes.buffer);
    this.seqs = new Float64Array(initialCapacity);
  }

  get count(): number {
    return this.length;
  }

  private get capacity(): number {
    return this.seqs.length;
  }

  /** Copies one record (recordBytes at `offset` of `source`) to the tail. */
  push(source: Uint8Array, offset: number, seq: number): void {
    if (this.length === this.capacity) this.grow();
    const index = (this.head + this.length) % this.capacity;
    this.bytes.set(source.subarray(offset, offset + this.recordBytes), index * this.recordBytes);
    this.seqs[index] = seq;
    this.length++;
  }

  /**
   * Hands every record whose sequence is at most `seqDurable` to `handler`, oldest first, and
   * drops it; stops at the first one that is not durable yet. Returns how many it released.
   */
  release(seqDurable: number, handler: (view: DataView, offset: number) => void): number {
    let released = 0;
    while (this.length > 0 && this.seqs[this.head] <= seqDurable) {
      const offset = this.head * this.recordBytes;
      this.head = (this.head + 1) % this.capacity;
      this.length--;
      released++;
      handler(this.view, offset);
    }
    if (this.length === 0) this.head = 0;
    return released;
  }

  private grow(): void {
    const capacity = this.capacity * 2;
    const bytes = new Uint8Array(capacity * this.recordBytes);
    const seqs = new Float64Array(capacity);
    for (let i = 0; i < this.length; i++) {
      const from = (this.head + i) % this.capacity;
      bytes.set(this.bytes.subarray(from * this.recordBytes, (from + 1) * this.recordBytes), i * this.recordBytes);
      seqs[i] = this.seqs[from];
    }
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer);
    this.seqs = seqs;
    this.head = 0;
  }
}
