// Online backup of a data directory (`npm run admin -- backup --to DIR`): a copy that an exchange
// started with `--data-dir DIR` recovers from, taken while the exchange keeps running.
//
// What is copied, and why it is consistent:
//   - journal/: the whole LMDB environment (journal records, journal meta, trade and candle
//     history, account history, account settings and two-factor records) through LMDB's own copy
//     (lmdb-js backup → mdb_env_copy2), which writes every page as of one read transaction. The
//     journal worker commits a batch's records and the history it derived from them in one
//     transaction, so the copy holds a whole prefix 1..E of the journal (or s..E after compaction)
//     with the history of exactly those commands.
//   - snapshots/: the snapshot files recovery may start from, i.e. those with sequence ≤ E. A
//     snapshot file is written to a temp file, synced and renamed, so a copied file is whole; one
//     past E is left out, since recovery would skip it anyway ("past the end of the journal").
//   - backup.json: the manifest (journal sequence E, the state hash at E when known, the usable
//     snapshots), written last: a directory without it is not a finished backup.
//
// Who copies: this process (the admin command line), opening the environment read-only, as
// LMDB's mdb_copy tool does; LMDB allows any number of reader processes next to the writer. The
// exchange's threads do no work for it (its only cost there is that pages freed during the copy
// are reused only after it), the copy needs no long-lived admin request, and it also works on a
// stopped exchange.
//
// Snapshot files are copied before and after the journal copy: compaction may delete a snapshot
// and the records before its successor while the copy runs, and a snapshot that existed before
// the copy's transaction, or one written after it with a sequence ≤ E, is what the copied journal
// can start from. The copy is then checked as recovery would check it (each snapshot's checksum,
// configuration and journal record; a journal that starts at 1 or at a usable snapshot), and
// refused if it could not be restored.

import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { copyFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { open } from 'lmdb';
import { LmdbJournalStore, listSnapshotFiles, snapshotFileName } from '../../engine/store/journal-store.js';
import { CLEAN_STOP_KEY, CONFIG_KEY } from '../../engine/store/journal-layout.js';
import { checkSnapshot } from '../../engine/store/snapshot-check.js';

export const MANIFEST_FILE = 'backup.json';

export interface BackupManifest {
  /** Layout of this manifest. */
  format: 1;
  /** The last journal sequence in the backup: a restored exchange resumes at seq + 1. */
  seq: number;
  /** The first journal record kept (above 1 when the live journal was compacted). */
  firstSeq: number;
  /** Engine state hash at `seq` when the backup holds it (a snapshot or a clean stop at `seq`), else null. */
  stateHash: string | null;
  /** Usable snapshots in the backup, newest first: a restore starts from the first. */
  snapshots: { seq: number; stateHash: string }[];
  /** Fingerprint of the engine configuration a restore must be started with. */
  engineConfigSha256: string | null;
  sourceDataDir: string;
  createdAt: string;
}

export class BackupError extends Error {
  override name = 'BackupError';
}

/** Copies `dataDir` into `target` (absent or an empty directory) and returns the manifest. */
export async function backupDataDir(dataDir: string, target: string): Promise<BackupManifest> {
  const liveJournal = join(dataDir, 'journal');
  if (!existsSync(join(liveJournal, 'data.mdb'))) throw new BackupError(`no exchange data in ${dataDir} (${join(liveJournal, 'data.mdb')} is missing)`);
  const created = prepareTarget(target);
  try {
    return await copyInto(dataDir, target);
  } catch (error) {
    removeCopy(target, created);
    throw error;
  }
}

/** Creates `target` or accepts an empty directory there; returns whether it was created. */
function prepareTarget(target: string): boolean {
  if (!existsSync(target)) {
    mkdirSync(target, { recursive: true });
    return true;
  }
  if (!statSync(target).isDirectory()) throw new BackupError(`${target} exists and is not a directory`);
  if (readdirSync(target).length > 0) throw new BackupError(`${target} is not empty: a backup goes into a new or empty directory`);
  return false;
}

function removeCopy(target: string, created: boolean): void {
  if (created) {
    rmSync(target, { recursive: true, force: true });
    return;
  }
  for (const name of ['journal', 'snapshots', MANIFEST_FILE]) rmSync(join(target, name), { recursive: true, force: true });
}

async function copyInto(dataDir: string, target: string): Promise<BackupManifest> {
  const liveSnapshots = join(dataDir, 'snapshots');
  const copySnapshots = join(target, 'snapshots');
  mkdirSync(join(target, 'journal'));
  mkdirSync(copySnapshots);
  const copied = new Set<number>();
  await copySnapshotFiles(liveSnapshots, copySnapshots, copied, Number.MAX_SAFE_INTEGER);
  await copyEnvironment(join(dataDir, 'journal'), join(target, 'journal'));
  return verifyCopy(target, dataDir, async (seq) => copySnapshotFiles(liveSnapshots, copySnapshots, copied, seq));
}

/** Copies the snapshot files with sequence ≤ `maxSeq` not copied yet; one deleted meanwhile is skipped. */
async function copySnapshotFiles(from: string, to: string, copied: Set<number>, maxSeq: number): Promise<void> {
  if (!existsSync(from)) return;
  for (const seq of listSnapshotFiles(from)) {
    if (seq > maxSeq || copied.has(seq)) continue;
    try {
      await copyFile(join(from, snapshotFileName(seq)), join(to, snapshotFileName(seq)));
      copied.add(seq);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
}

/** LMDB's copy of the live environment at one read transaction, opened read-only here. */
async function copyEnvironment(liveJournal: string, copyJournal: string): Promise<void> {
  const env = open({ path: liveJournal, readOnly: true });
  try {
    await env.backup(copyJournal, false);
  } finally {
    await env.close();
  }
}

/**
 * Completes the snapshot files for the copied journal's end, drops those recovery could not use,
 * refuses a copy that would not restore, syncs everything and writes the manifest last.
 */
async function verifyCopy(target: string, dataDir: string, copyUpTo: (seq: number) => Promise<void>): Promise<BackupManifest> {
  const store = new LmdbJournalStore(target);
  let manifest: BackupManifest;
  try {
    const seq = store.lastSeq();
    await copyUpTo(seq);
    manifest = describeCopy(store, seq, dataDir);
  } finally {
    await store.close();
  }
  rmSync(join(target, 'journal', 'lock.mdb'), { force: true }); // LMDB recreates it when opened
  syncTree(target);
  syncPath(dirname(target));
  writeDurably(join(target, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

function describeCopy(store: LmdbJournalStore, seq: number, dataDir: string): BackupManifest {
  const firstSeq = store.firstSeq();
  const fingerprint = store.getMeta(CONFIG_KEY) ?? null;
  const snapshots: { seq: number; stateHash: string }[] = [];
  for (const snapshotSeq of store.listSnapshots()) {
    const checked = fingerprint === null ? 'no configuration fingerprint' : checkSnapshot(store, snapshotSeq, fingerprint, seq);
    if (typeof checked === 'string') store.deleteSnapshot(snapshotSeq); // recovery would skip it
    else snapshots.push({ seq: snapshotSeq, stateHash: checked.meta.stateHash });
  }
  if (firstSeq > 1 && snapshots.length === 0) {
    throw new BackupError(`the copied journal starts at ${firstSeq} and no copied snapshot covers what came before ` +
      '(compaction ran during the copy); run the backup again');
  }
  const cleanStop = readCleanStop(store);
  if (cleanStop !== null && cleanStop.seq > seq) {
    throw new BackupError(`the copied journal ends at ${seq}, before the clean stop it records at ${cleanStop.seq}`);
  }
  const stateHash = snapshots[0]?.seq === seq ? snapshots[0].stateHash : cleanStop?.seq === seq ? cleanStop.stateHash : null;
  return {
    format: 1, seq, firstSeq, stateHash, snapshots, engineConfigSha256: fingerprint, sourceDataDir: dataDir, createdAt: new Date().toISOString(),
  };
}

function readCleanStop(store: LmdbJournalStore): { seq: number; stateHash: string } | null {
  const text = store.getMeta(CLEAN_STOP_KEY);
  return text === undefined ? null : (JSON.parse(text) as { seq: number; stateHash: string });
}

/** fsync of every file and directory under `dir` (LMDB's copy and copyFile do not sync). */
function syncTree(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) syncTree(path);
    else syncPath(path);
  }
  syncPath(dir);
}

function syncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function writeDurably(path: string, text: string): void {
  const temp = `${path}.tmp`;
  writeFileSync(temp, text);
  syncPath(temp);
  renameSync(temp, path);
  syncPath(dirname(path));
}
