// Start-up halts on a journal it cannot trust: the real server is stopped cleanly, its LMDB journal
// is opened with lmdb-js and damaged, and the next start must stop before serving with exit code 3
// and the named error in its log (engine/shell/journal.ts, recovery decision table):
//   - a record value of the wrong size: JournalRecordSizeError;
//   - a journal format marker that is missing (a journal written before output digests) or names
//     another format: JournalFormatError.
// Once the damage is undone the same data directory starts again, so it was the damage that
// halted start-up.

import { join } from 'node:path';
import { open } from 'lmdb';
import { afterAll, describe, expect, it } from 'vitest';
import { seqKey } from '../../engine/store/journal-store.js';
import { JOURNAL_FORMAT } from '../../engine/store/journal-layout.js';
import { JOURNAL_RECORD_BYTES } from '../../engine/bus/codec.js';
import { createTestAccount, removeDir, startServer, tempDataDir, type RunningServer } from '../helpers/server.js';

const ARGS = ['--no-demo', '--front-threads', '1'];

/** Opens the stopped server's journal as the journal store does, runs `change`, closes it. */
async function editJournal(dataDir: string, change: (journal: { records: any; meta: any }) => void): Promise<void> {
  const root = open({ path: join(dataDir, 'journal'), maxDbs: 16 });
  const records = root.openDB<Buffer, Buffer>({ name: 'journal', keyEncoding: 'binary', encoding: 'binary' });
  const meta = root.openDB<string, string>({ name: 'meta', encoding: 'string' });
  try {
    change({ records, meta });
  } finally {
    await root.close();
  }
}

/** Starts the server, expecting start-up to halt: returns the failure text (exit code and log). */
async function haltedStart(dataDir: string): Promise<string> {
  let started: RunningServer | undefined;
  try {
    started = await startServer({ dataDir, args: ARGS });
  } catch (error) {
    return (error as Error).message;
  }
  await started.stop('SIGKILL');
  throw new Error('the server started on a damaged journal');
}

describe('journal damage halts start-up', () => {
  const dataDir = tempDataDir();
  afterAll(() => removeDir(dataDir));

  it('halts with JournalRecordSizeError and JournalFormatError (exit 3), and starts once repaired', async () => {
    const server = await startServer({ dataDir, args: ARGS });
    await createTestAccount(server.adminPort, ['USDC=1000']);
    expect(await server.stop('SIGTERM')).toBe(0);

    // A stored value (a run of records) one byte longer than its records.
    let seq = 0;
    let original: Buffer | undefined;
    await editJournal(dataDir, ({ records }) => {
      for (const key of records.getKeys({ reverse: true, limit: 1 })) seq = Number((key as Buffer).readBigUInt64BE(0));
      original = Buffer.from(records.get(seqKey(seq))!);
      records.putSync(seqKey(seq), Buffer.concat([original, Buffer.alloc(1)]));
    });
    expect(seq).toBeGreaterThan(0);
    const size = await haltedStart(dataDir);
    expect(size).toMatch(/^server exited with 3 before ready/);
    expect(size).toContain('thread failed (JournalRecordSizeError)');
    expect(size).toContain(`journal records from ${seq}: the stored value has ${original!.length + 1} bytes, not a whole number of ${JOURNAL_RECORD_BYTES}-byte records`);
    await editJournal(dataDir, ({ records }) => records.putSync(seqKey(seq), original!));

    // No format marker (a journal from before output digests), then a format this server does not read.
    await editJournal(dataDir, ({ meta }) => {
      expect(meta.get('journalFormat')).toBe(JOURNAL_FORMAT);
      meta.removeSync('journalFormat');
    });
    const unmarked = await haltedStart(dataDir);
    expect(unmarked).toMatch(/^server exited with 3 before ready/);
    expect(unmarked).toContain('thread failed (JournalFormatError)');
    expect(unmarked).toContain(`the journal has format 1 (no output digests), this server reads formats 2, 3, 4, 5 and ${JOURNAL_FORMAT}`);
    await editJournal(dataDir, ({ meta }) => meta.putSync('journalFormat', '7'));
    const newer = await haltedStart(dataDir);
    expect(newer).toMatch(/^server exited with 3 before ready/);
    expect(newer).toContain('thread failed (JournalFormatError)');
    expect(newer).toContain(`the journal has format 7, this server reads formats 2, 3, 4, 5 and ${JOURNAL_FORMAT}`);

    await editJournal(dataDir, ({ meta }) => meta.putSync('journalFormat', JOURNAL_FORMAT));
    const repaired = await startServer({ dataDir, args: ARGS });
    expect(await repaired.stop('SIGTERM')).toBe(0);
  });
});
