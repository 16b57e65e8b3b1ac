// Fault injection for the journal: the real Sequencer (engine shell write side), JournalWriter
// and recover() run in-process over FaultyJournalStore (test/helpers), driven by a seeded random
// command stream with periodic Snapshot commands, snapshot files and compaction, as the journal
// worker does them; and the same stream over the LMDB store, whose batches are sealed runs with
// snapshots inside them. After each fault the restarted store must either recover to exactly a
// durable prefix (every sequence published as durable is there, and the state hash equals the
// live engine's at the recovered sequence) or halt with the named error of journal.ts's
// decision table.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Exchange } from '../../engine/core/exchange.js';
import { JOURNAL_CHECKSUM_OFFSET, JOURNAL_DIGEST_OFFSET, JOURNAL_RECORD_BYTES, SLOT_BYTES } from '../../engine/bus/codec.js';
import {
  JournalChecksumError,
  JournalGapError,
  JournalOutputDigestError,
  JournalWriteError,
  StateHashMismatchError,
  engineConfigFingerprint,
  recover,
  snapshotFile,
} from '../../engine/shell/journal.js';
import { CHECKSUMMED_BYTES, CLEAN_STOP_KEY, chainChecksum, recordChecksum, runChecksum, runSeed } from '../../engine/store/journal-layout.js';
import { JournalWriter } from '../../engine/shell/journal-writer.js';
import { Sequencer } from '../../engine/shell/sequencer.js';
import { commandFromSlot, crc32 } from '../../engine/bus/codec.js';
import { OutboundRing } from '../../engine/bus/ring.js';
import { CommandKind, newCommand, type Command, type EngineConfig } from '../../engine/bus/types.js';
import { FaultyJournalStore } from '../helpers/faulty-journal-store.js';
import { LmdbJournalStore, seqKey, type JournalStore } from '../../engine/store/journal-store.js';
import { EngineHarness, prng, randomInt } from '../helpers/engine-harness.js';
import { randomConfig, runRandomStream } from '../helpers/engine-random.js';

const SNAPSHOT_EVERY = 60;
const SNAPSHOT_KEEP = 2;

/** The live side: engine, sequencer, ring, journal writer, snapshots and compaction. */
class Live<S extends JournalStore = FaultyJournalStore> {
  readonly exchange: Exchange;
  readonly ring = OutboundRing.create({ slotCount: 1 << 14, slotBytes: SLOT_BYTES, consumerCount: 1 });
  private readonly consumer = this.ring.consumer(0);
  private readonly sequencer: Sequencer;
  readonly writer: JournalWriter;
  readonly fingerprint: string;
  seq = 0;
  /** stateHash after each sequence (index = seq). */
  readonly hashes: string[];
  private readonly pendingSnapshots: { seq: number; file: Uint8Array }[] = [];
  private sinceSnapshot = 0;

  constructor(readonly config: EngineConfig, readonly store: S) {
    this.exchange = new Exchange(config);
    this.fingerprint = engineConfigFingerprint(config);
    recover(store, config, this.fingerprint); // writes the identity marks, as start-up does
    this.hashes = [this.exchange.stateHash()];
    this.sequencer = new Sequencer(this.exchange, this.ring, () => {
      const s = this.ring.tryClaim();
      if (s < 0) throw new Error('test ring full');
      return s;
    });
    this.writer = new JournalWriter(store, 0, 0);
  }

  apply(command: Command, timeUs: number): void {
    if (command.kind >= CommandKind.QueryBalances) {
      this.sequencer.query(command, this.seq, timeUs);
    } else {
      this.seq++;
      this.sequencer.command(this.seq, timeUs, command, null, 0);
      this.hashes[this.seq] = this.exchange.stateHash();
      if (command.kind === CommandKind.Snapshot) {
        this.pendingSnapshots.push({ seq: this.seq, file: snapshotFile(this.exchange, this.seq, timeUs, this.fingerprint).file });
      }
      if (++this.sinceSnapshot === SNAPSHOT_EVERY) {
        this.sinceSnapshot = 0;
        this.apply({ ...newCommand(), kind: CommandKind.Snapshot }, timeUs);
      }
    }
    this.ring.flush();
    this.consumer.poll((offset) => {
      this.writer.onRecord(this.ring.view, offset);
      return true;
    }, 1 << 20);
  }

  /** One group commit; then the journal worker's snapshot writing and compaction. */
  async commit(): Promise<number> {
    const durable = await this.writer.commit();
    while (this.pendingSnapshots.length > 0 && this.pendingSnapshots[0].seq <= durable) {
      const { seq, file } = this.pendingSnapshots.shift()!;
      await this.store.writeSnapshot(seq, file);
      const kept = this.store.listSnapshots();
      for (const old of kept.slice(SNAPSHOT_KEEP)) this.store.deleteSnapshot(old);
      await this.store.deleteRecordsBefore(kept.slice(0, SNAPSHOT_KEEP).pop()!);
    }
    return durable;
  }
}

/** Runs `commands` of a seeded stream through a Live journal, committing in random batches. */
async function drive(seed: number, commands: number): Promise<{ live: Live; stream: EngineHarness['stream']; next: number }>;
async function drive<S extends JournalStore>(seed: number, commands: number, store: S): Promise<{ live: Live<S>; stream: EngineHarness['stream']; next: number }>;
async function drive(seed: number, commands: number, store: JournalStore = new FaultyJournalStore()): Promise<{ live: Live<JournalStore>; stream: EngineHarness['stream']; next: number }> {
  const config = randomConfig(seed);
  const harness = new EngineHarness(config);
  harness.checks = false;
  runRandomStream(harness, seed, commands);
  const live = new Live(config, store);
  const random = prng(seed * 31 + 7);
  let i = 0;
  while (i < harness.stream.length) {
    const batch = randomInt(random, 1, 12);
    for (let k = 0; k < batch && i < harness.stream.length; k++, i++) live.apply(commandFromSlot(harness.stream[i].command), harness.stream[i].timeUs);
    await live.commit();
  }
  return { live, stream: harness.stream, next: i };
}

function expectExactPrefix(live: Live<JournalStore>, store: FaultyJournalStore, durable: number, atMost: number): number {
  const result = recover(store, live.config, live.fingerprint);
  expect(result.lastSeq).toBeGreaterThanOrEqual(durable);
  expect(result.lastSeq).toBeLessThanOrEqual(atMost);
  expect(result.exchange.stateHash()).toBe(live.hashes[result.lastSeq]);
  result.exchange.validateInvariants();
  return result.lastSeq;
}

const SEEDS = [11, 12, 13, 14];

describe('journal fault injection', () => {
  it('the native and the table crc32 agree (the chain may use either)', () => {
    const random = prng(5);
    const bytes = Uint8Array.from({ length: 300 }, () => randomInt(random, 0, 255));
    for (const prev of [0, 1, 0xdeadbeef, 0xffffffff]) expect(chainChecksum(bytes, 257, prev)).toBe(crc32(bytes, 0, 257, prev));
    // The per-record checksum the writer and replay compute in place is the same chain.
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    for (const at of [0, 1, 7, 100]) {
      for (const prev of [0, 0xdeadbeef]) expect(recordChecksum(view, at, prev)).toBe(chainChecksum(bytes.subarray(at, at + CHECKSUMMED_BYTES), CHECKSUMMED_BYTES, prev));
    }
  });

  for (const seed of SEEDS) {
    it(`seed ${seed}: a clean journal recovers exactly, from a snapshot and from the start`, async () => {
      const { live } = await drive(seed, 400);
      const disk = live.store;
      expect(disk.listSnapshots().length).toBeGreaterThan(0);
      expect(disk.firstSeq()).toBeGreaterThan(1); // compacted
      const result = recover(disk.crash(false), live.config, live.fingerprint);
      expect(result.snapshotSeq).toBe(disk.listSnapshots()[0]);
      expect(result.lastSeq).toBe(live.seq);
      expect(result.exchange.stateHash()).toBe(live.hashes[live.seq]);
    });

    it(`seed ${seed}: a crash after a random number of committed batches recovers exactly the durable prefix`, async () => {
      const random = prng(seed);
      for (let trial = 0; trial < 4; trial++) {
        const { live } = await drive(seed + 100 * trial, randomInt(random, 50, 300));
        const durable = live.writer.durableSeq;
        expectExactPrefix(live, live.store.crash(false), durable, durable);
      }
    });

    it(`seed ${seed}: lost unflushed transaction (the process dies in the flush)`, async () => {
      const { live, stream } = await drive(seed, 200);
      const durable = live.writer.durableSeq;
      for (let i = 0; i < 5; i++) live.apply(commandFromSlot(stream[i].command), stream[stream.length - 1].timeUs);
      live.store.hangNextFlush = true;
      void live.commit();
      await Promise.resolve();
      expect(live.writer.durableSeq).toBe(durable); // nothing published past the disk
      expect(expectExactPrefix(live, live.store.crash(false), durable, durable)).toBe(durable);
      expect(expectExactPrefix(live, live.store.crash(true), durable, live.seq)).toBe(live.seq);
    });

    it(`seed ${seed}: a failed flush stops the writer without publishing`, async () => {
      const { live, stream } = await drive(seed, 200);
      const durable = live.writer.durableSeq;
      for (let i = 0; i < 5; i++) live.apply(commandFromSlot(stream[i].command), stream[stream.length - 1].timeUs);
      live.store.failNextFlush = true;
      await expect(live.commit()).rejects.toThrow(JournalWriteError);
      expect(live.writer.durableSeq).toBe(durable);
      expectExactPrefix(live, live.store.crash(false), durable, durable);
      expectExactPrefix(live, live.store.crash(true), durable, live.seq);
    });

    it(`seed ${seed}: a flipped bit halts with JournalChecksumError, or is survived where it is not needed`, async () => {
      const { live, stream } = await drive(seed, 300);
      // The record flips need a record after the newest snapshot: a stream that ended exactly on
      // one gets a journaled tick more.
      if (live.store.listSnapshots()[0] === live.writer.durableSeq) {
        live.apply({ ...newCommand(), kind: CommandKind.Tick }, stream[stream.length - 1].timeUs);
        await live.commit();
      }
      const random = prng(seed + 1);
      const newestSnapshot = live.store.listSnapshots()[0];
      for (let trial = 0; trial < 6; trial++) {
        // In a record after the newest snapshot: replay reads it, the chain breaks.
        const disk = live.store.crash(false);
        const seq = randomInt(random, newestSnapshot + 1, live.writer.durableSeq);
        disk.flipBit(seq, randomInt(random, 0, JOURNAL_RECORD_BYTES * 8 - 1));
        expect(() => recover(disk, live.config, live.fingerprint)).toThrow(JournalChecksumError);
      }
      // In the newest snapshot file: it is skipped, the older one and the journal after it rebuild
      // exactly the same state.
      const disk = live.store.crash(false);
      const blob = disk.snapshots.get(newestSnapshot)!;
      blob[randomInt(random, 0, blob.length - 1)] ^= 1 << randomInt(random, 0, 7);
      const result = recover(disk, live.config, live.fingerprint);
      expect(result.skippedSnapshots.map((s) => s.seq)).toEqual([newestSnapshot]);
      expect(result.snapshotSeq).toBeLessThan(newestSnapshot);
      expect(result.exchange.stateHash()).toBe(live.hashes[live.writer.durableSeq]);
    });
  }

  it('over the LMDB store (a sealed run per batch, snapshots inside runs, compaction): a restart from the newest snapshot checks its run whole and rebuilds the live state', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-faults-'));
    const store = new LmdbJournalStore(dir);
    try {
      const { live } = await drive(32, 400, store);
      const newest = store.listSnapshots()[0];
      expect(store.firstSeq()).toBeGreaterThan(1); // compacted
      // The run holding the first record replay applies also holds the snapshot's own: replay checks
      // it whole, chained from the seed it stores (the run before it may be compacted away).
      const [holding] = [...store.runs(newest + 1)];
      const count = holding.value.length / JOURNAL_RECORD_BYTES;
      expect(holding.seq).toBeLessThan(newest);
      expect(holding.seq + count - 1).toBeGreaterThan(newest);
      const result = recover(store, live.config, live.fingerprint);
      expect(result.snapshotSeq).toBe(newest);
      expect(result.lastSeq).toBe(live.seq);
      expect(result.exchange.stateHash()).toBe(live.hashes[live.seq]);
      // A flipped bit in that run, in a record before the snapshot's: the run does not check, and
      // recovery halts rather than apply the records after the snapshot from a damaged run.
      const original = Buffer.from(holding.value);
      const damaged = Buffer.from(original);
      damaged[(newest - holding.seq - 1) * JOURNAL_RECORD_BYTES + 9] ^= 2;
      store.records.putSync(seqKey(holding.seq), damaged);
      expect(() => recover(store, live.config, live.fingerprint)).toThrow(
        new JournalChecksumError(`journal records ${holding.seq}–${holding.seq + count - 1}: checksum ${damaged.readUInt32LE(damaged.length - 4)} does not chain (expected ${runChecksum(damaged, count, runSeed(damaged))})`),
      );
      store.records.putSync(seqKey(holding.seq), original);
      expect(recover(store, live.config, live.fingerprint).exchange.stateHash()).toBe(live.hashes[live.seq]);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a record whose outputs replay differently halts with JournalOutputDigestError', async () => {
    const { live } = await drive(21, 200);
    const disk = live.store.crash(false);
    const target = disk.lastSeq() - 5;
    // Recovery must replay the target: no snapshot at or after it (the stream may end on one).
    for (const seq of disk.listSnapshots()) if (seq >= target) disk.deleteSnapshot(seq);
    expect(disk.listSnapshots().length).toBeGreaterThan(0);
    // Change the stored digest and re-chain every checksum from there: only the digest check can see it.
    const value = Buffer.from(disk.read(target)!);
    value.writeUInt32LE((value.readUInt32LE(JOURNAL_DIGEST_OFFSET) ^ 1) >>> 0, JOURNAL_DIGEST_OFFSET);
    disk.disk.set(target, value);
    let prev = Buffer.from(disk.read(target - 1)!).readUInt32LE(JOURNAL_CHECKSUM_OFFSET);
    for (let seq = target; seq <= disk.lastSeq(); seq++) {
      const v = Buffer.from(disk.read(seq)!);
      prev = chainChecksum(v, CHECKSUMMED_BYTES, prev);
      v.writeUInt32LE(prev, JOURNAL_CHECKSUM_OFFSET);
      disk.disk.set(seq, v);
    }
    expect(() => recover(disk, live.config, live.fingerprint)).toThrow(JournalOutputDigestError);
  });

  it('a missing record halts with JournalGapError; a compacted journal without a usable snapshot too', async () => {
    const { live } = await drive(22, 300);
    const gap = live.store.crash(false);
    // Recovery must replay across the missing record: no snapshot taken at or after it is left.
    const missing = gap.lastSeq() - 3;
    for (const seq of gap.listSnapshots()) if (seq >= missing) gap.snapshots.delete(seq);
    gap.disk.delete(missing);
    expect(() => recover(gap, live.config, live.fingerprint)).toThrow(JournalGapError);
    const noSnapshot = live.store.crash(false);
    noSnapshot.snapshots.clear();
    expect(() => recover(noSnapshot, live.config, live.fingerprint)).toThrow(JournalGapError);
  });

  it('a journal that lost its tail after a clean stop, or all its records, halts with JournalGapError', async () => {
    const { live } = await drive(24, 200);
    const durable = live.writer.durableSeq;
    const tailLost = live.store.crash(false);
    tailLost.meta.set(CLEAN_STOP_KEY, JSON.stringify({ seq: durable, stateHash: live.hashes[durable] }));
    tailLost.disk.delete(durable);
    tailLost.disk.delete(durable - 1);
    expect(() => recover(tailLost, live.config, live.fingerprint)).toThrow(/stopped cleanly at/);
    const emptied = live.store.crash(false);
    expect(emptied.snapshots.size).toBeGreaterThan(0);
    emptied.disk.clear();
    expect(() => recover(emptied, live.config, live.fingerprint)).toThrow(JournalGapError);
    // A truly fresh store (no records, no snapshot files) starts empty.
    const fresh = live.store.crash(false);
    fresh.disk.clear();
    fresh.snapshots.clear();
    expect(recover(fresh, live.config, live.fingerprint).lastSeq).toBe(0);
  });

  it('a clean-stop state hash that does not match halts with StateHashMismatchError', async () => {
    const { live } = await drive(23, 150);
    const good = live.store.crash(false);
    good.meta.set(CLEAN_STOP_KEY, JSON.stringify({ seq: live.writer.durableSeq, stateHash: live.hashes[live.writer.durableSeq] }));
    expect(recover(good, live.config, live.fingerprint).lastSeq).toBe(live.writer.durableSeq);
    const bad = live.store.crash(false);
    // The last earlier sequence whose state differs (the last commands may have changed nothing).
    let earlier = live.writer.durableSeq - 1;
    while (live.hashes[earlier] === live.hashes[live.writer.durableSeq]) earlier--;
    bad.meta.set(CLEAN_STOP_KEY, JSON.stringify({ seq: earlier, stateHash: live.hashes[live.writer.durableSeq] }));
    expect(() => recover(bad, live.config, live.fingerprint)).toThrow(StateHashMismatchError);
  });
});
