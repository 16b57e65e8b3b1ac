// The LMDB journal stores a batch's records back to back in one value (a run), sealed with one
// checksum for the run, chained from the run before (formats 4 to 6), and still reads journals of
// format 3 (runs whose records each carry a checksum chained from the record before) and 2 (one
// such record per value): journals written in the older formats, and ones an upgraded server
// continued in sealed runs, replay to the live engine's state, each command's outputs digested as
// the engine of its format wrote them (format 5: orders' events carried in their answers; format 6:
// a taker's balances once per match); a
// sealed run is checked whole before any of its records is applied; reads, ranges and compaction
// work on records whatever run holds them.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { afterAll, describe, expect, it } from 'vitest';
import { JOURNAL_CHECKSUM_OFFSET, JOURNAL_DIGEST_OFFSET, JOURNAL_RECORD_BYTES, newStampedRec, readStamped } from '../../engine/bus/codec.js';
import type { EngineConfig } from '../../engine/bus/types.js';
import { JournalWriter } from '../../engine/shell/journal-writer.js';
import { DigestSink, JournalChecksumError, JournalFormatError, JournalOutputDigestError, engineConfigFingerprint, recover } from '../../engine/shell/journal.js';
import { CHECKSUMMED_BYTES, CONFIG_KEY, FORMAT_5_FROM_KEY, FORMAT_6_FROM_KEY, FORMAT_KEY, JOURNAL_FORMAT, RUN_CHECKSUMS_FROM_KEY, chainChecksum, runChecksum, sealRun } from '../../engine/store/journal-layout.js';
import { LmdbJournalStore, seqKey } from '../../engine/store/journal-store.js';
import { FaultyJournalStore } from '../helpers/faulty-journal-store.js';
import { prng, randomInt } from '../helpers/engine-harness.js';
import { randomConfig } from '../helpers/engine-random.js';
import { sequenceRandomStream } from '../helpers/sequenced-stream.js';

const SEED = 21;
const COMMANDS = 400;

/**
 * The records the real writer makes of a random stream (in random batches), and the live state
 * hash; the commands before `format5From` as a server of journal format 4 wrote them (events
 * apart from their answers, outputs digested in one murmur chain), and those before `format6From`
 * as one of format 5 or before did (a taker's balances after each of its fills).
 */
async function liveJournal(config: EngineConfig, format5From = 1, format6From = format5From): Promise<{ records: Map<number, Uint8Array>; stateHash: string }> {
  const store = new FaultyJournalStore();
  const writer = new JournalWriter(store, 0, 0);
  writer.format5From = format5From;
  const random = prng(SEED);
  const { exchange } = await sequenceRandomStream(
    config,
    SEED,
    COMMANDS,
    (ring, offset) => writer.onRecord(ring.view, offset),
    async (_, last) => {
      if (randomInt(random, 0, 9) === 0 || last) await writer.commit();
    },
    format5From,
    format6From,
  );
  return { records: store.disk, stateHash: exchange.stateHash() };
}

/**
 * A data directory whose journal holds records 1..upTo as an older server wrote them: one per
 * value (format 2), or in runs of `runLength` back to back (format 3); each record's checksum
 * chained from the record before (the records of liveJournal are, stored as runs of one).
 */
async function olderJournal(dir: string, records: Map<number, Uint8Array>, upTo: number, fingerprint: string, format: '2' | '3', runLength = 1): Promise<void> {
  const root = open({ path: join(dir, 'journal'), maxDbs: 16 });
  const db = root.openDB<Buffer, Buffer>({ name: 'journal', keyEncoding: 'binary', encoding: 'binary' });
  const meta = root.openDB<string, string>({ name: 'meta', encoding: 'string' });
  for (let seq = 1; seq <= upTo; seq += runLength) {
    const run = Array.from({ length: Math.min(runLength, upTo - seq + 1) }, (_, k) => records.get(seq + k)!);
    db.putSync(seqKey(seq), Buffer.concat(run));
  }
  meta.putSync(FORMAT_KEY, format);
  meta.putSync(CONFIG_KEY, fingerprint);
  await root.close();
}

/** Records 1..last back to back, as one run holds them (copied: the tests damage them). */
function oneRun(records: Map<number, Uint8Array>, last: number): Buffer {
  return Buffer.concat(Array.from({ length: last }, (_, i) => records.get(i + 1)!));
}

/** Re-chains the checksums of records from..to of `run` (records from 1) from the stored one before `from` (format 3). */
function rechain(run: Buffer, from: number, to: number): void {
  let prev = from === 1 ? 0 : run.readUInt32LE((from - 2) * JOURNAL_RECORD_BYTES + JOURNAL_CHECKSUM_OFFSET);
  for (let seq = from; seq <= to; seq++) {
    const at = (seq - 1) * JOURNAL_RECORD_BYTES;
    prev = chainChecksum(run.subarray(at), CHECKSUMMED_BYTES, prev);
    run.writeUInt32LE(prev, at + JOURNAL_CHECKSUM_OFFSET);
  }
}

/** Records from..to back to back, sealed as one run of format 4 chained from `seed`; returns it and its checksum. */
function sealedRun(records: Map<number, Uint8Array>, from: number, to: number, seed: number): { run: Buffer; checksum: number } {
  const run = Buffer.concat(Array.from({ length: to - from + 1 }, (_, i) => records.get(from + i)!));
  return { run, checksum: sealRun(run, to - from + 1, seed) };
}

/** The stamped command and digest of each record are the live one's (the checksum fields are the run's). */
function sameRecord(stored: Uint8Array | undefined, live: Uint8Array): boolean {
  return stored !== undefined && Buffer.from(stored).subarray(0, CHECKSUMMED_BYTES).equals(Buffer.from(live).subarray(0, CHECKSUMMED_BYTES));
}

/**
 * Every run the store holds from `from` is sealed as format 4 and chained to the one before: the
 * first record's checksum field the seed (runs of two or more), the others' 0 but the last's, which
 * is the run's checksum. Returns the last run's checksum.
 */
function expectSealedRuns(store: LmdbJournalStore, from: number, seed: number): number {
  let chain = seed;
  for (const { value } of store.runs(from)) {
    const run = Buffer.from(value);
    const count = run.length / JOURNAL_RECORD_BYTES;
    const fields = Array.from({ length: count }, (_, k) => run.readUInt32LE(k * JOURNAL_RECORD_BYTES + JOURNAL_CHECKSUM_OFFSET));
    const checksum = runChecksum(run, count, chain);
    expect(fields).toEqual(count === 1 ? [checksum] : [chain, ...Array<number>(count - 2).fill(0), checksum]);
    chain = checksum;
  }
  return chain;
}

function storedValues(store: LmdbJournalStore): number {
  return [...store.records.getKeys()].length;
}

/** Records 1..upTo of `records` as sealed runs of 50 of an older server, marked with its `format`. */
async function olderSealedJournal(store: LmdbJournalStore, records: Map<number, Uint8Array>, upTo: number, format: string, fingerprint: string): Promise<void> {
  for (let seq = 1; seq <= upTo; seq++) {
    store.append(seq, records.get(seq)!);
    if (seq % 50 === 0) store.endBatch();
  }
  await store.commit();
  store.putMetaSync(FORMAT_KEY, format);
  store.putMetaSync(CONFIG_KEY, fingerprint);
}

/** The first sequence in from..to whose stored output digest differs between `a` and `b`, or -1. */
function firstDifferentDigest(a: Map<number, Uint8Array>, b: Map<number, Uint8Array>, from: number, to: number): number {
  for (let seq = from; seq <= to; seq++) if (Buffer.from(a.get(seq)!).readUInt32LE(JOURNAL_DIGEST_OFFSET) !== Buffer.from(b.get(seq)!).readUInt32LE(JOURNAL_DIGEST_OFFSET)) return seq;
  return -1;
}

/**
 * A journal upgraded at `half` whose marker `key` says where the later format begins: replayed with
 * the marker at 1 it halts at `firstOld`, with the marker past `last` at `firstNew` (each side
 * replayed the other's way halts on its first differing digest).
 */
function expectHaltsEachWay(store: LmdbJournalStore, replay: () => unknown, key: string, last: number, firstOld: number, firstNew: number): void {
  store.putMetaSync(key, '1');
  expect(replay).toThrow(`journal record ${firstOld}: replayed outputs`);
  store.putMetaSync(key, String(last + 1));
  expect(replay).toThrow(`journal record ${firstNew}: replayed outputs`);
}

describe('journal runs: sealed (formats 4 and 5), per-record chained runs (format 3) and one-record values (format 2)', async () => {
  const config = randomConfig(SEED);
  const fingerprint = engineConfigFingerprint(config);
  const { records, stateHash } = await liveJournal(config);
  const last = records.size;
  const half = Math.floor(last / 2);
  // The same stream as an engine of format 4 or before journaled it, whole and up to its half.
  const { records: older } = await liveJournal(config, Number.MAX_SAFE_INTEGER);
  const { records: upgradedAtHalf } = await liveJournal(config, half + 1);
  const dirs: string[] = [];
  const tempDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-runs-'));
    dirs.push(dir);
    return dir;
  };
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  for (const [format, runLength] of [['2', 1], ['3', 7]] as const) {
    it(`replays a format ${format} journal to the live state and marks it format 6, its sealed runs and outputs of formats 5 and 6 after its last record`, async () => {
      expect(last).toBeGreaterThan(300);
      const dir = tempDir();
      await olderJournal(dir, older, last, fingerprint, format, runLength);
      const store = new LmdbJournalStore(dir);
      expect(storedValues(store)).toBe(Math.ceil(last / runLength));
      const recovery = recover(store, config, fingerprint);
      expect(recovery.lastSeq).toBe(last);
      expect(recovery.exchange.stateHash()).toBe(stateHash);
      expect(recovery.lastChecksum).toBe(Buffer.from(older.get(last)!).readUInt32LE(JOURNAL_CHECKSUM_OFFSET));
      expect(store.getMeta(FORMAT_KEY)).toBe(JOURNAL_FORMAT);
      expect(JOURNAL_FORMAT).toBe('6');
      expect(store.getMeta(RUN_CHECKSUMS_FROM_KEY)).toBe(String(last + 1));
      expect(store.getMeta(FORMAT_5_FROM_KEY)).toBe(String(last + 1));
      expect(store.getMeta(FORMAT_6_FROM_KEY)).toBe(String(last + 1));
      await store.close();
    });

    it(`replays a format ${format} journal continued in sealed runs, chained across the two, and reads every record where its run keeps it`, async () => {
      const dir = tempDir();
      const records = upgradedAtHalf;
      await olderJournal(dir, records, half, fingerprint, format, runLength);
      const store = new LmdbJournalStore(dir);
      const upgraded = recover(store, config, fingerprint);
      expect(store.getMeta(RUN_CHECKSUMS_FROM_KEY)).toBe(String(half + 1));
      expect(store.getMeta(FORMAT_5_FROM_KEY)).toBe(String(half + 1));
      expect(store.getMeta(FORMAT_6_FROM_KEY)).toBe(String(half + 1));
      // The writer starts the store's chain where recovery ended, as the journal worker does.
      store.chainFrom(upgraded.lastChecksum);
      // Batches of 1 to 40 records, each one run.
      const random = prng(SEED + 1);
      for (let seq = half + 1; seq <= last; ) {
        for (let end = Math.min(last, seq + randomInt(random, 0, 39)); seq <= end; seq++) store.append(seq, records.get(seq)!);
        await store.commit();
      }
      expect(storedValues(store)).toBeLessThan(Math.ceil(half / runLength) + (last - half) / 4);
      expect([store.firstSeq(), store.lastSeq()]).toEqual([1, last]);
      for (let seq = 1; seq <= half; seq++) expect(Buffer.from(store.read(seq)!).equals(Buffer.from(records.get(seq)!))).toBe(true);
      for (let seq = half + 1; seq <= last; seq++) expect(sameRecord(store.read(seq), records.get(seq)!)).toBe(true);
      expect(store.read(last + 1)).toBeUndefined();
      const lastChecksum = expectSealedRuns(store, half + 1, upgraded.lastChecksum);
      // A range from inside a run starts at that record; runs() gives that run whole.
      const from = half + 3;
      const ranged: number[] = [];
      for (const { seq, value } of store.range(from)) for (let k = 0; k < value.length / JOURNAL_RECORD_BYTES; k++) ranged.push(seq + k);
      expect(ranged).toEqual(Array.from({ length: last - from + 1 }, (_, i) => from + i));
      const [holding] = store.runs(from);
      expect(holding.seq).toBeLessThanOrEqual(from);
      expect(holding.seq + holding.value.length / JOURNAL_RECORD_BYTES).toBeGreaterThan(from);
      const recovery = recover(store, config, fingerprint);
      expect(recovery.lastSeq).toBe(last);
      expect(recovery.exchange.stateHash()).toBe(stateHash);
      expect(recovery.lastChecksum).toBe(lastChecksum);
      await store.close();
    });
  }

  it('halts where the sealed runs do not chain from the records before them', async () => {
    const dir = tempDir();
    const records = upgradedAtHalf;
    await olderJournal(dir, records, half, fingerprint, '3', 5);
    const store = new LmdbJournalStore(dir);
    recover(store, config, fingerprint);
    // Not chained from recovery's last checksum: the store starts from 0.
    for (let seq = half + 1; seq <= last; seq++) store.append(seq, records.get(seq)!);
    await store.commit();
    const run = Buffer.from(store.runs(half + 1)[Symbol.iterator]().next().value!.value);
    const expected = runChecksum(run, last - half, Buffer.from(records.get(half)!).readUInt32LE(JOURNAL_CHECKSUM_OFFSET));
    expect(() => recover(store, config, fingerprint)).toThrow(
      new JournalChecksumError(`journal records ${half + 1}–${last}: checksum ${run.readUInt32LE(run.length - 4)} does not chain (expected ${expected})`),
    );
    await store.close();
  });

  it('replays a format 4 journal continued under format 6: each command\'s outputs as the engine of its format wrote them', async () => {
    const store = new LmdbJournalStore(tempDir());
    // Sealed runs of format 4, as that server wrote them (it recorded no runChecksumsFrom: sealed from 1).
    await olderSealedJournal(store, upgradedAtHalf, half, '4', fingerprint);
    const upgraded = recover(store, config, fingerprint);
    expect(upgraded.lastSeq).toBe(half);
    expect(store.getMeta(FORMAT_KEY)).toBe('6');
    expect(store.getMeta(RUN_CHECKSUMS_FROM_KEY)).toBeUndefined();
    expect(store.getMeta(FORMAT_5_FROM_KEY)).toBe(String(half + 1));
    expect(store.getMeta(FORMAT_6_FROM_KEY)).toBe(String(half + 1));
    // The engine recovery hands on writes what the journal now says it holds: format 6's outputs.
    const sink = new DigestSink();
    const stamped = newStampedRec();
    for (let seq = half + 1; seq <= last; seq++) {
      const bytes = Buffer.from(upgradedAtHalf.get(seq)!);
      readStamped(new DataView(bytes.buffer, bytes.byteOffset, bytes.length), 0, stamped);
      sink.begin();
      upgraded.exchange.apply(stamped.command, seq, stamped.timeUs, sink.sink);
      expect(sink.finish(), `the digest of command ${seq}`).toBe(bytes.readUInt32LE(JOURNAL_DIGEST_OFFSET));
    }
    store.chainFrom(upgraded.lastChecksum);
    for (let seq = half + 1; seq <= last; seq++) store.append(seq, upgradedAtHalf.get(seq)!);
    await store.commit();
    const recovery = recover(store, config, fingerprint);
    expect(recovery.lastSeq).toBe(last);
    expect(recovery.exchange.stateHash()).toBe(stateHash);
    // The two formats' outputs differ (after the half, events carried in answers and digested in
    // two lanes; before it, apart and in one murmur chain), so replaying either side in the other's
    // way halts on its first differing digest.
    const firstOld = firstDifferentDigest(upgradedAtHalf, records, 1, half);
    const firstNew = firstDifferentDigest(upgradedAtHalf, older, half + 1, last);
    expect(firstOld).toBeGreaterThan(0);
    expect(firstNew).toBeGreaterThan(half);
    expectHaltsEachWay(store, () => recover(store, config, fingerprint), FORMAT_5_FROM_KEY, last, firstOld, firstNew);
    await store.close();
  });

  it('replays a format 5 journal continued under format 6: a taker\'s balances after each fill before the upgrade, once per match after it', async () => {
    const { records: format6AtHalf } = await liveJournal(config, 1, half + 1);
    const store = new LmdbJournalStore(tempDir());
    await olderSealedJournal(store, format6AtHalf, half, '5', fingerprint);
    const upgraded = recover(store, config, fingerprint);
    expect(upgraded.lastSeq).toBe(half);
    expect(store.getMeta(FORMAT_KEY)).toBe('6');
    // A journal of format 5 keeps where its records of format 5 began (here: unset, from the first).
    expect(store.getMeta(FORMAT_5_FROM_KEY)).toBeUndefined();
    expect(store.getMeta(FORMAT_6_FROM_KEY)).toBe(String(half + 1));
    store.chainFrom(upgraded.lastChecksum);
    for (let seq = half + 1; seq <= last; seq++) store.append(seq, format6AtHalf.get(seq)!);
    await store.commit();
    const recovery = recover(store, config, fingerprint);
    expect(recovery.lastSeq).toBe(last);
    expect(recovery.exchange.stateHash()).toBe(stateHash);
    // The stream has takers that filled more than once: the two formats' digests differ on both
    // sides of the upgrade, so replaying either side in the other's way halts.
    const { records: format5 } = await liveJournal(config, 1, Number.MAX_SAFE_INTEGER);
    const firstOld = firstDifferentDigest(format6AtHalf, records, 1, half);
    const firstNew = firstDifferentDigest(format6AtHalf, format5, half + 1, last);
    expect(firstOld).toBeGreaterThan(0);
    expect(firstNew).toBeGreaterThan(half);
    expectHaltsEachWay(store, () => recover(store, config, fingerprint), FORMAT_6_FROM_KEY, last, firstOld, firstNew);
    await store.close();
  });

  it('compacts whole runs only: the run holding the kept sequence stays', async () => {
    const dir = tempDir();
    const store = new LmdbJournalStore(dir);
    recover(store, config, fingerprint);
    for (let seq = 1; seq <= last; seq++) {
      store.append(seq, records.get(seq)!);
      if (seq % 100 === 0) store.endBatch(); // runs 1-100, 101-200, ...
    }
    await store.commit();
    expect(storedValues(store)).toBe(Math.ceil(last / 100));
    expectSealedRuns(store, 1, 0);
    expect(await store.deleteRecordsBefore(250)).toBe(200);
    expect(store.firstSeq()).toBe(201);
    expect(sameRecord(store.read(250), records.get(250)!)).toBe(true);
    expect(store.read(200)).toBeUndefined();
    await store.close();
  });

  it('checks a sealed run whole before applying any of its records, and its records as they replay', async () => {
    const dir = tempDir();
    const store = new LmdbJournalStore(dir);
    recover(store, config, fingerprint);
    const put = (run: Buffer): void => store.records.putSync(seqKey(1), run);
    const broken = Math.floor(last / 2);
    const brokenAt = (broken - 1) * JOURNAL_RECORD_BYTES;
    const digestAt = (broken - 10 - 1) * JOURNAL_RECORD_BYTES;
    const withDigestChanged = (run: Buffer): Buffer => {
      run.writeUInt32LE((run.readUInt32LE(digestAt + JOURNAL_DIGEST_OFFSET) ^ 1) >>> 0, digestAt + JOURNAL_DIGEST_OFFSET);
      return run;
    };
    // A flipped bit in one record, and an output digest changed in an earlier one, not resealed:
    // the run's checksum halts before any record is applied, so the earlier digest is never reached.
    const flipped = withDigestChanged(sealedRun(records, 1, last, 0).run);
    flipped[brokenAt + 17] ^= 4;
    put(flipped);
    expect(() => recover(store, config, fingerprint)).toThrow(
      new JournalChecksumError(`journal records 1–${last}: checksum ${flipped.readUInt32LE(flipped.length - 4)} does not chain (expected ${runChecksum(flipped, last, 0)})`),
    );
    // The same digest change, the run sealed again: only the digest check can see it.
    const { run: resealed } = sealedRun(records, 1, last, 0);
    withDigestChanged(resealed);
    sealRun(resealed, last, 0);
    put(resealed);
    expect(() => recover(store, config, fingerprint)).toThrow(JournalOutputDigestError);
    expect(() => recover(store, config, fingerprint)).toThrow(`journal record ${broken - 10}: replayed outputs`);
    // The seed a run stores, changed: it is covered by the run's checksum.
    const seeded = sealedRun(records, 1, last, 0).run;
    seeded.writeUInt32LE(1, JOURNAL_CHECKSUM_OFFSET);
    put(seeded);
    expect(() => recover(store, config, fingerprint)).toThrow(`journal records 1–${last}: checksum`);
    // Two runs, the second sealed from another seed than the first's checksum.
    const split = Math.floor(last / 3);
    const first = sealedRun(records, 1, split, 0);
    put(first.run);
    store.records.putSync(seqKey(split + 1), sealedRun(records, split + 1, last, (first.checksum ^ 1) >>> 0).run);
    expect(() => recover(store, config, fingerprint)).toThrow(`journal records ${split + 1}–${last}: checksum`);
    // Chained, the two runs replay to the live state.
    const second = sealedRun(records, split + 1, last, first.checksum);
    store.records.putSync(seqKey(split + 1), second.run);
    const recovery = recover(store, config, fingerprint);
    expect(recovery.exchange.stateHash()).toBe(stateHash);
    expect(recovery.lastChecksum).toBe(second.checksum);
    await store.close();
  });

  it('within a run of format 3, halts at the first damaged record, with what every record before it replayed checked', async () => {
    const dir = tempDir();
    const records = older;
    await olderJournal(dir, records, last, fingerprint, '3', last);
    const store = new LmdbJournalStore(dir);
    const put = (run: Buffer): void => store.records.putSync(seqKey(1), run);
    const broken = Math.floor(last / 2);
    const brokenAt = (broken - 1) * JOURNAL_RECORD_BYTES;
    // A flipped bit in one record of the run: its checksum no longer chains, named as it is stored.
    const flipped = oneRun(records, last);
    flipped[brokenAt + 17] ^= 4;
    put(flipped);
    const stored = flipped.readUInt32LE(brokenAt + JOURNAL_CHECKSUM_OFFSET);
    const expected = chainChecksum(flipped.subarray(brokenAt), CHECKSUMMED_BYTES, flipped.readUInt32LE(brokenAt - JOURNAL_RECORD_BYTES + JOURNAL_CHECKSUM_OFFSET));
    expect(() => recover(store, config, fingerprint)).toThrow(new JournalChecksumError(`journal record ${broken}: checksum ${stored} does not chain (expected ${expected})`));
    // A digest changed earlier in the same run, its checksums re-chained up to the flipped record:
    // that record is replayed first, so the digest is what halts.
    const digestAt = (broken - 10 - 1) * JOURNAL_RECORD_BYTES;
    flipped.writeUInt32LE((flipped.readUInt32LE(digestAt + JOURNAL_DIGEST_OFFSET) ^ 1) >>> 0, digestAt + JOURNAL_DIGEST_OFFSET);
    rechain(flipped, broken - 10, broken - 1);
    put(flipped);
    expect(() => recover(store, config, fingerprint)).toThrow(JournalOutputDigestError);
    expect(() => recover(store, config, fingerprint)).toThrow(`journal record ${broken - 10}: replayed outputs`);
    // The first record of the run, chained from nothing before it.
    const first = oneRun(records, last);
    first[3] ^= 1;
    put(first);
    expect(() => recover(store, config, fingerprint)).toThrow(`journal record 1: checksum ${first.readUInt32LE(JOURNAL_CHECKSUM_OFFSET)} does not chain`);
    // Undamaged, the one run replays to the live state.
    put(oneRun(records, last));
    expect(recover(store, config, fingerprint).exchange.stateHash()).toBe(stateHash);
    await store.close();
  });

  it('refuses a journal of a format it does not read, or one that does not say where its sealed runs or records of format 5 or 6 begin', async () => {
    const dir = tempDir();
    await olderJournal(dir, older, 10, fingerprint, '2');
    const store = new LmdbJournalStore(dir);
    expect(recover(store, config, fingerprint).lastSeq).toBe(10);
    for (const damaged of ['', '0', '-1', '1.5', '11x', '99999999999999999']) {
      store.putMetaSync(RUN_CHECKSUMS_FROM_KEY, damaged);
      expect(() => recover(store, config, fingerprint)).toThrow(new JournalFormatError(`the journal's runChecksumsFrom is ${JSON.stringify(damaged)}, not a sequence: where its runs of format 4 begin is unknown`));
    }
    store.putMetaSync(RUN_CHECKSUMS_FROM_KEY, '11');
    expect(recover(store, config, fingerprint).lastSeq).toBe(10);
    for (const damaged of ['', '0', '2e3']) {
      store.putMetaSync(FORMAT_5_FROM_KEY, damaged);
      expect(() => recover(store, config, fingerprint)).toThrow(new JournalFormatError(`the journal's format5From is ${JSON.stringify(damaged)}, not a sequence: where its records of format 5 begin is unknown`));
    }
    store.putMetaSync(FORMAT_5_FROM_KEY, '11');
    expect(recover(store, config, fingerprint).lastSeq).toBe(10);
    for (const damaged of ['', '0', 'x']) {
      store.putMetaSync(FORMAT_6_FROM_KEY, damaged);
      expect(() => recover(store, config, fingerprint)).toThrow(new JournalFormatError(`the journal's format6From is ${JSON.stringify(damaged)}, not a sequence: where its records of format 6 begin is unknown`));
    }
    store.putMetaSync(FORMAT_6_FROM_KEY, '11');
    expect(recover(store, config, fingerprint).lastSeq).toBe(10);
    store.putMetaSync(FORMAT_KEY, '7');
    expect(() => recover(store, config, fingerprint)).toThrow(JournalFormatError);
    await store.close();
  });
});
