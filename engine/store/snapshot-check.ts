// Whether a snapshot file on disk can serve a restart, judged from the disk layouts alone (the
// file's header and checksum, the configuration it was written under, and the journal record of
// its own Snapshot command), without loading it into an engine. Recovery (engine/shell/journal.ts)
// also loads it and compares its state hash; the journal worker's retention and the operator's
// backup use this check as it is. A snapshot carries the fingerprint of the configuration in force
// at its sequence: at or below a recorded configuration change (the configuration gained margin
// parameters or perpetual markets: journal-layout.ts CONFIG_CHANGES_KEY), the one before the first
// change at or after it.

import { JOURNAL_RECORD_BYTES, newStampedRec, readStamped } from '../bus/codec.js';
import { CommandKind } from '../bus/types.js';
import type { JournalStore } from './journal-store.js';
import { decodeSnapshotFile, readConfigChanges, snapshotFingerprintAt, type ConfigChange, type SnapshotMeta } from './journal-layout.js';

/**
 * Snapshot `seq` on disk with its journal record, or why it cannot serve a restart, checked
 * without loading it into an engine (recover() also loads it and compares its state hash).
 * `fingerprint` is the configuration's; `changes` the configuration changes in force (by default
 * those the journal records; recovery adds the one it is accepting).
 */
export function checkSnapshot(
  store: JournalStore, seq: number, fingerprint: string, journalLast: number, rec = newStampedRec(),
  changes: readonly ConfigChange[] = readConfigChanges(store),
): { meta: SnapshotMeta; payload: Uint8Array; own: Uint8Array } | string {
  const bytes = store.readSnapshot(seq);
  const decoded = bytes === undefined ? 'unreadable' : decodeSnapshotFile(bytes);
  if (typeof decoded === 'string') return decoded;
  if (decoded.meta.seq !== seq) return 'sequence differs from its name';
  if (decoded.meta.configFingerprint !== snapshotFingerprintAt(seq, fingerprint, changes)) return 'written under another configuration';
  if (seq > journalLast) return `past the end of the journal (${journalLast})`;
  const own = store.read(seq);
  if (own === undefined || own.length !== JOURNAL_RECORD_BYTES) return 'its journal record is missing';
  readStamped(new DataView(own.buffer, own.byteOffset, own.length), 0, rec);
  if (rec.seq !== seq || rec.command.kind !== CommandKind.Snapshot) return 'its journal record is not a Snapshot command';
  return { ...decoded, own };
}
