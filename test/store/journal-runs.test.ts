// The LMDB journal stores a batch's records back to back in one value (a run, format 3), and still
// reads journals of format 2, one record per value: a journal written before runs, and one that
// an upgraded server continued with runs, replay to the live engine's state; reads, ranges and
// compaction work on records whatever run holds them.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { afterAll, describe, expect, it } from 'vitest';
import { JOURNAL_CHECKSUM_OFFSET, JOURNAL_DIGEST_OFFSET, JOURNAL_RECORD_BYTES } from '../../engine/bus/codec.js';
import type { EngineConfig } from '../../engine/bus/types.js';
import { JournalWriter } from '../../engine/shell/journal-writer.js';
import { JournalChecksumError, JournalFormatError, JournalOutputDigestError, engineConfigFingerprint, recover } from '../../engine/shell/journal.js';
import { CHECKSUMMED_BYTES, CONFIG_KEY, FORMAT_KEY, JOURNAL_FORMAT, chainChecksum } from '../../engine/store/journal-layout.js';
import { LmdbJournalStore, seqKey } from '../../engine/store/journal-store.js';
import { FaultyJournalStore } from '../helpers/faulty-journal-store.js';
import { prng, randomInt } from '../helpers/engine-harness.js';
import { randomConfig } from '../helpers/engine-random.js';
import { sequenceRandomStream } from '../helpers/sequenced-stream.js';

const SEED = 21;
const COMMANDS = 400;

/** The records the real writer makes of a random stream (in random batches), and the live state hash. */
async function liveJournal(config: EngineConfig): Promise<{ records: Map<number, Uint8Array>; stateHash: string }> {
  const store = new FaultyJournalStore();
  const writer = new JournalWriter(store, 0, 0);
  const random = prng(SEED);
  const { exchange } = await sequenceRandomStream(
    config,
    SEED,
    COMMANDS,
    (ring, offset) => writer.onRecord(ring.view, offset),
    async (_, last) => {
      if (randomInt(random, 0, 9) === 0 || last) await writer.commit();
    },
  );
  return { records: store.disk, stateHash: exchange.stateHash() };
}

/** A data directory whose journal holds records 1..upTo one per value, marked format 2 (as written before runs). */
async function formatTwoJournal(dir: string, records: Map<number, Uint8Array>, upTo: number, fingerprint: string): Promise<void> {
  const root = open({ path: join(dir, 'journal'), maxDbs: 16 });
  const db = root.openDB<Buffer, Buffer>({ name: 'journal', keyEncoding: 'binary', encoding: 'binary' });
  const meta = root.openDB<string, string>({ name: 'meta', encoding: 'string' });
  for (let seq = 1; seq <= upTo; seq++) db.putSync(seqKey(seq), Buffer.from(records.get(seq)!));
  meta.putSync(FORMAT_KEY, '2');
  meta.putSync(CONFIG_KEY, fingerprint);
  await root.close();
}

/** Records 1..last back to back, as one run holds them (copied: the tests damage them). */
function oneRun(records: Map<number, Uint8Array>, last: number): Buffer {
  return Buffer.concat(Array.from({ length: last }, (_, i) => records.get(i + 1)!));
}

/** Re-chains the checksums of records from..to of `run` (records from 1) from the stored one before `from`. */
function rechain(run: Buffer, from: number, to: number): void {
  let prev = from === 1 ? 0 : run.readUInt32LE((from - 2) * JOURNAL_RECORD_BYTES + JOURNAL_CHECKSUM_OFFSET);
  for (let seq = from; seq <= to; seq++) {
    const at = (seq - 1) * JOURNAL_RECORD_BYTES;
    prev = chainChecksum(run.subarray(at), CHECKSUMMED_BYTES, prev);
    run.writeUInt32LE(prev, at + JOURNAL_CHECKSUM_OFFSET);
  }
}

function storedValues(store: LmdbJournalStore): number {
  return [...store.records.getKeys()].length;
}

describe('journal runs (format 3) and one-record values (format 2)', async () => {
  const config = randomConfig(SEED);
  const fingerprint = engineConfigFingerprint(config);
  const { records, stateHash } = await liveJournal(config);
  const last = records.size;
  const dirs: string[] = [];
  const tempDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-runs-'));
    dirs.push(dir);
    return dir;
  };
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('replays a format 2 journal to the live state and marks it format 3', async () => {
    expect(last).toBeGreaterThan(300);
    const dir = tempDir();
    await formatTwoJournal(dir, records, last, fingerprint);
    const store = new LmdbJournalStore(dir);
    expect(storedValues(store)).toBe(last);
    const recovery = recover(store, config, fingerprint);
    expect(recovery.lastSeq).toBe(last);
    expect(recovery.exchange.stateHash()).toBe(stateHash);
    expect(store.getMeta(FORMAT_KEY)).toBe(JOURNAL_FORMAT);
    expect(JOURNAL_FORMAT).toBe('3');
    await store.close();
  });

  it('replays a format 2 journal continued in runs, and reads every record where its run keeps it', async () => {
    const dir = tempDir();
    const half = Math.floor(last / 2);
    await formatTwoJournal(dir, records, half, fingerprint);
    const store = new LmdbJournalStore(dir);
    recover(store, config, fingerprint);
    // Batches of 1 to 40 records, each one run.
    const random = prng(SEED + 1);
    for (let seq = half + 1; seq <= last; ) {
      for (let end = Math.min(last, seq + randomInt(random, 0, 39)); seq <= end; seq++) store.append(seq, records.get(seq)!);
      await store.commit();
    }
    expect(storedValues(store)).toBeLessThan(half + (last - half) / 4);
    expect([store.firstSeq(), store.lastSeq()]).toEqual([1, last]);
    for (let seq = 1; seq <= last; seq++) expect(Buffer.from(store.read(seq)!).equals(Buffer.from(records.get(seq)!))).toBe(true);
    expect(store.read(last + 1)).toBeUndefined();
    // A range from inside a run starts at that record.
    const from = half + 3;
    const ranged: number[] = [];
    for (const { seq, value } of store.range(from)) for (let k = 0; k < value.length / JOURNAL_RECORD_BYTES; k++) ranged.push(seq + k);
    expect(ranged).toEqual(Array.from({ length: last - from + 1 }, (_, i) => from + i));
    const recovery = recover(store, config, fingerprint);
    expect(recovery.lastSeq).toBe(last);
    expect(recovery.exchange.stateHash()).toBe(stateHash);
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
    expect(await store.deleteRecordsBefore(250)).toBe(200);
    expect(store.firstSeq()).toBe(201);
    expect(Buffer.from(store.read(250)!).equals(Buffer.from(records.get(250)!))).toBe(true);
    expect(store.read(200)).toBeUndefined();
    await store.close();
  });

  it('within one run, halts at the first damaged record, with what every record before it replayed checked', async () => {
    const dir = tempDir();
    const store = new LmdbJournalStore(dir);
    recover(store, config, fingerprint);
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

  it('refuses a journal of a format it does not read', async () => {
    const dir = tempDir();
    await formatTwoJournal(dir, records, 10, fingerprint);
    const store = new LmdbJournalStore(dir);
    store.putMetaSync(FORMAT_KEY, '4');
    expect(() => recover(store, config, fingerprint)).toThrow(JournalFormatError);
    await store.close();
  });
});
