// Online backup and restore against the real server: `npm run admin -- backup --to DIR` runs
// while signed orders and cancels keep arriving; an exchange started on DIR replays to the state
// the live exchange had at the backup's journal sequence. The reference for that state is the live
// journal itself after the stop, cut at the backup's sequence and replayed from its first record
// by a third exchange (no snapshot), so the restored state is compared with an independent replay.
// The live data directory also holds the clean-stop mark of an earlier stop, below the backup's
// sequence, which the restore passes over. A backup of a stopped exchange whose journal was
// compacted restores from its copied snapshot to the clean stop's state hash, and a target
// directory that is not empty is refused untouched.

import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { open } from 'lmdb';
import { JOURNAL_RECORD_BYTES } from '../../engine/bus/codec.js';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ROOT, createTestAccount, get, removeDir, signed, startServer, tempDataDir, waitUntil, type RunningServer, type TestAccount,
} from '../helpers/server.js';

const execFileAsync = promisify(execFile);
const ARGS = ['--no-demo', '--front-threads', '1', '--snapshot-every', '40', '--snapshot-keep', '2', '--no-compact'];
/** Operations each load lane sends before and after the backup (bounded load). */
const OPS_BEFORE = 40;
const OPS_AFTER = 25;

async function backupCli(dataDir: string, to: string): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, [join(ROOT, 'dist/src/admin/cli.js'), 'backup', '--data-dir', dataDir, '--to', to], { cwd: ROOT });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const failed = error as { stdout: string; stderr: string; code: number };
    return { stdout: failed.stdout, stderr: failed.stderr, code: failed.code };
  }
}

function logLine(server: RunningServer, msg: string): any {
  const line = server.lines.find((l) => l.includes(`"msg":"${msg}"`));
  return line === undefined ? undefined : JSON.parse(line);
}

function seqKey(seq: number): Buffer {
  const key = Buffer.alloc(8);
  key.writeBigUInt64BE(BigInt(seq));
  return key;
}

/** A copy of a stopped exchange's data directory holding only journal records 1..seq (no snapshot, no clean stop). */
async function journalCutAt(liveDir: string, dir: string, seq: number): Promise<void> {
  cpSync(liveDir, dir, { recursive: true });
  rmSync(join(dir, 'LOCK'), { force: true });
  rmSync(join(dir, 'snapshots'), { recursive: true, force: true });
  const root = open({ path: join(dir, 'journal'), maxDbs: 16 });
  const records = root.openDB<Buffer, Buffer>({ name: 'journal', keyEncoding: 'binary', encoding: 'binary' });
  const meta = root.openDB<string, string>({ name: 'meta', encoding: 'string' });
  const later = [...records.getKeys({ start: seqKey(seq + 1) })];
  for (const key of later) records.removeSync(key as Buffer);
  // A stored value is a run of records from its key's sequence: the run holding seq ends there.
  for (const { key, value } of records.getRange({ start: seqKey(seq), reverse: true, limit: 1 })) {
    const first = Number((key as Buffer).readBigUInt64BE(0));
    records.putSync(key as Buffer, value.subarray(0, (seq - first + 1) * JOURNAL_RECORD_BYTES));
  }
  meta.removeSync('cleanStop');
  await root.close();
}

/** The clean-stop mark a data directory's journal meta holds, if any. */
function readCleanStop(dataDir: string): unknown {
  const root = open({ path: join(dataDir, 'journal'), readOnly: true });
  try {
    const text = root.openDB<string, string>({ name: 'meta', encoding: 'string' }).get('cleanStop');
    return text === undefined ? undefined : JSON.parse(text);
  } finally {
    void root.close();
  }
}

/** Balances and open orders of each account, as the exchange answers them. */
async function accountViews(server: RunningServer, accounts: TestAccount[]): Promise<unknown[]> {
  const views: unknown[] = [];
  for (const account of accounts) {
    const balances = await signed(server.base, account, 'GET', '/api/v1/capital', 'balanceQuery');
    const orders = await signed(server.base, account, 'GET', '/api/v1/orders', 'orderQueryAll');
    expect(balances.status).toBe(200);
    expect(orders.status).toBe(200);
    views.push({ balances: balances.body, orders: [...orders.body].sort((a: any, b: any) => (a.id < b.id ? -1 : 1)) });
  }
  return views;
}

/** One load lane: limit orders around 10 USDC (some cross and trade), every third one's predecessor cancelled. */
async function runLane(
  server: RunningServer, account: TestAccount, side: 'Bid' | 'Ask', count: number, offset: number, onAck: () => void = () => {},
): Promise<void> {
  let previousId: string | undefined;
  for (let i = 0; i < count; i++) {
    const cents = 1000 + (side === 'Bid' ? -1 : 1) * (((i + offset) * 7) % 12) - (side === 'Bid' ? -4 : 4);
    const placed = await signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', {
      symbol: 'SOL_USDC', side, orderType: 'Limit', price: (cents / 100).toFixed(2), quantity: '0.5',
    });
    expect(placed.status, placed.text).toBe(200);
    onAck();
    if (i % 3 === 2 && previousId !== undefined) {
      const cancel = await signed(server.base, account, 'DELETE', '/api/v1/order', 'orderCancel', { symbol: 'SOL_USDC', orderId: previousId });
      const filledMeanwhile = cancel.status === 400 && cancel.body?.message === 'Order not found';
      expect(cancel.status === 200 || filledMeanwhile, cancel.text).toBe(true);
    }
    previousId = placed.body.id;
  }
}

describe('online backup and restore', () => {
  const liveDir = tempDataDir();
  const work = tempDataDir();
  const servers: RunningServer[] = [];
  const start = async (dataDir: string): Promise<RunningServer> => {
    const server = await startServer({ dataDir, args: ARGS });
    servers.push(server);
    return server;
  };

  afterAll(async () => {
    for (const server of servers) await server.stop('SIGKILL');
    removeDir(liveDir);
    removeDir(work);
  });

  it('a backup taken under load restores to the live state hash at its sequence', async () => {
    // An earlier clean stop leaves its mark in the journal's meta.
    let live = await start(liveDir);
    const buyer = await createTestAccount(live.adminPort, ['USDC=100000']);
    const seller = await createTestAccount(live.adminPort, ['SOL=10000']);
    await runLane(live, buyer, 'Bid', 3, 0);
    expect(await live.stop('SIGTERM')).toBe(0);
    const cleanStopSeq = logLine(live, 'stopped').seqDurable as number;

    live = await start(liveDir);
    let acked = 0;
    const onAck = () => { acked++; };
    const lanes = (count: number, offset: number) => Promise.all([
      runLane(live, buyer, 'Bid', count, offset, onAck), runLane(live, seller, 'Ask', count, offset + 5, onAck),
    ]);
    const before = lanes(OPS_BEFORE, 0);
    await waitUntil(() => (acked >= OPS_BEFORE / 2 ? true : undefined), 'load under way');
    const status = await get(`http://127.0.0.1:${live.adminPort}`, '/admin/status');
    const seqDurableAtStart = status.body.pipeline.seqDurable as number;
    const backupDir = join(work, 'backup');
    const backup = await backupCli(liveDir, backupDir);
    expect(backup.code, backup.stderr).toBe(0);
    await before;
    await lanes(OPS_AFTER, 100); // the live journal goes on past the backup
    expect(await live.stop('SIGTERM')).toBe(0);
    const liveEnd = logLine(live, 'stopped').seqDurable as number;

    const manifest = JSON.parse(backup.stdout);
    expect(JSON.parse(readFileSync(join(backupDir, 'backup.json'), 'utf8'))).toEqual(manifest);
    expect(manifest.seq).toBeGreaterThanOrEqual(seqDurableAtStart);
    expect(manifest.seq).toBeGreaterThan(cleanStopSeq);
    expect(manifest.seq).toBeLessThan(liveEnd);
    expect(manifest.snapshots.length).toBeGreaterThan(0);
    const copiedSnapshots = readdirSync(join(backupDir, 'snapshots')).map((name) => Number(name.slice(0, 16)));
    expect(copiedSnapshots.sort((a, b) => b - a)).toEqual(manifest.snapshots.map((s: { seq: number }) => s.seq));
    expect(Math.max(...copiedSnapshots)).toBeLessThanOrEqual(manifest.seq);
    expect(readCleanStop(backupDir)).toEqual({ seq: cleanStopSeq, stateHash: expect.any(String) });

    // The reference: the live journal cut at the backup's sequence, replayed from its first record.
    const referenceDir = join(work, 'reference');
    await journalCutAt(liveDir, referenceDir, manifest.seq);
    const reference = await start(referenceDir);
    const referenceReplay = logLine(reference, 'journal replayed');
    expect(referenceReplay).toMatchObject({ lastSeq: manifest.seq, snapshotSeq: 0, replayed: manifest.seq });
    const referenceViews = await accountViews(reference, [buyer, seller]);
    await reference.stop('SIGTERM');

    const restored = await start(backupDir);
    const restoredReplay = logLine(restored, 'journal replayed');
    expect(restoredReplay.lastSeq).toBe(manifest.seq);
    expect(restoredReplay.snapshotSeq).toBe(manifest.snapshots[0].seq);
    expect(restoredReplay.stateHash).toBe(referenceReplay.stateHash);
    if (manifest.stateHash !== null) expect(manifest.stateHash).toBe(referenceReplay.stateHash);
    expect(await accountViews(restored, [buyer, seller])).toEqual(referenceViews);
    expect(await restored.stop('SIGTERM')).toBe(0);
  });

  it('backs up a stopped exchange whose journal was compacted: the restore starts from the copied snapshot', async () => {
    const dir = join(work, 'compacted');
    const args = ['--no-demo', '--front-threads', '1', '--snapshot-every', '10', '--snapshot-keep', '1'];
    const live = await startServer({ dataDir: dir, args });
    servers.push(live);
    const buyer = await createTestAccount(live.adminPort, ['USDC=100000']);
    const seller = await createTestAccount(live.adminPort, ['SOL=10000']);
    await Promise.all([runLane(live, buyer, 'Bid', 12, 0), runLane(live, seller, 'Ask', 12, 5)]);
    await waitUntil(() => (live.lines.some((l) => l.includes('"msg":"snapshot written"') && JSON.parse(l).removed > 0) ? true : undefined), 'compaction');
    expect(await live.stop('SIGTERM')).toBe(0);
    const cleanStop = readCleanStop(dir) as { seq: number; stateHash: string };

    const backupDir = join(work, 'compacted-backup');
    const backup = await backupCli(dir, backupDir);
    expect(backup.code, backup.stderr).toBe(0);
    const manifest = JSON.parse(backup.stdout);
    expect(manifest.firstSeq).toBeGreaterThan(1);
    expect(manifest).toMatchObject({ seq: cleanStop.seq, stateHash: cleanStop.stateHash });
    expect(manifest.snapshots[0].seq).toBeGreaterThanOrEqual(manifest.firstSeq);

    const restored = await start(backupDir);
    expect(logLine(restored, 'journal replayed')).toMatchObject({
      lastSeq: cleanStop.seq, stateHash: cleanStop.stateHash, snapshotSeq: manifest.snapshots[0].seq,
    });
    expect(await restored.stop('SIGTERM')).toBe(0);
  });

  it('refuses a directory that is not empty and leaves it as it was', async () => {
    const target = join(work, 'occupied');
    mkdirSync(target);
    writeFileSync(join(target, 'keep.txt'), 'operator file');
    const refused = await backupCli(liveDir, target);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('is not empty');
    expect(readdirSync(target)).toEqual(['keep.txt']);

    const nothing = await backupCli(join(work, 'no-such-data-dir'), join(work, 'fresh'));
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toContain('no exchange data');
    expect(existsSync(join(work, 'fresh'))).toBe(false);
  });
});
