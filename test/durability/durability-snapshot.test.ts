// The operator's snapshot trigger against the real server: `npm run admin -- snapshot` sequences
// a Snapshot command, the journal worker writes the file once it is durable, and a restart loads
// it and replays only the journal after it, reaching the same state hash as before the stop.
// Retention and compaction count only usable snapshots: a file that merely has a snapshot's name
// (a copy under a later sequence, a damaged file) never lets compaction drop the journal.

import { copyFileSync, existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { adminCli, createTestAccount, removeDir, signed, startServer, tempDataDir, waitUntil, type RunningServer } from '../helpers/server.js';

describe('operator snapshot and restart from it', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;

  afterAll(async () => {
    await server?.stop('SIGKILL');
    removeDir(dataDir);
  });

  it('snapshots on request, restarts from the snapshot with the same state', async () => {
    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '1', '--snapshot-every', '0'] });
    const account = await createTestAccount(server.adminPort, ['USDC=1000', 'SOL=10']);
    const placed = await signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', {
      symbol: 'SOL_USDC', side: 'Bid', orderType: 'Limit', price: '10', quantity: '1', postOnly: true,
    });
    expect(placed.status).toBe(200);
    const { snapshotSeq } = (await adminCli(server.adminPort, ['snapshot'])) as { snapshotSeq: number };
    expect(snapshotSeq).toBeGreaterThan(3);
    const written = await waitUntil(() => {
      const line = server.lines.find((l) => l.includes('"msg":"snapshot written"'));
      return line ? JSON.parse(line) : undefined;
    }, 'snapshot written');
    expect(written.seq).toBe(snapshotSeq);
    expect(existsSync(join(dataDir, 'snapshots', `${String(snapshotSeq).padStart(16, '0')}.snap`))).toBe(true);
    // One more command after the snapshot, so the restart replays the journal after it.
    const after = await signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', {
      symbol: 'SOL_USDC', side: 'Ask', orderType: 'Limit', price: '12', quantity: '1', postOnly: true,
    });
    expect(after.status).toBe(200);
    expect(await server.stop('SIGTERM')).toBe(0);
    const stopped = JSON.parse(server.lines.find((l) => l.includes('"msg":"stopped"'))!);

    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '1', '--snapshot-every', '0'] });
    const replayed = JSON.parse(server.lines.find((l) => l.includes('"msg":"journal replayed"'))!);
    expect(replayed.snapshotSeq).toBe(snapshotSeq);
    expect(replayed.replayed).toBe(stopped.seqDurable - snapshotSeq);
    expect(replayed.lastSeq).toBe(stopped.seqDurable);
    const orders = await signed(server.base, account, 'GET', '/api/v1/orders', 'orderQueryAll');
    expect(orders.body.map((o: any) => o.id).sort()).toEqual([placed.body.id, after.body.id].sort());
    expect(readdirSync(join(dataDir, 'snapshots')).filter((n) => n.endsWith('.snap'))).toHaveLength(1);
  });

  it('keeps and compacts by usable snapshots only, ignoring files that merely have a snapshot name', async () => {
    const dir = tempDataDir();
    let server: RunningServer | undefined; // this case's own: the suite's first server stays the afterAll's
    const args = ['--no-demo', '--front-threads', '1', '--snapshot-every', '0', '--snapshot-keep', '1'];
    const name = (seq: number) => join(dir, 'snapshots', `${String(seq).padStart(16, '0')}.snap`);
    try {
      server = await startServer({ dataDir: dir, args });
      const account = await createTestAccount(server.adminPort, ['USDC=1000', 'SOL=10']);
      const place = async (price: string) => (await signed(server!.base, account, 'POST', '/api/v1/order', 'orderExecute', {
        symbol: 'SOL_USDC', side: 'Bid', orderType: 'Limit', price, quantity: '1', postOnly: true,
      })).body.id as string;
      const snapshot = async () => {
        const { snapshotSeq } = (await adminCli(server!.adminPort, ['snapshot'])) as { snapshotSeq: number };
        return waitUntil(() => {
          const line = server!.lines.find((l) => l.includes('"msg":"snapshot written"') && JSON.parse(l).seq === snapshotSeq);
          return line ? JSON.parse(line) : undefined;
        }, `snapshot ${snapshotSeq} written`);
      };
      const ids = [await place('10')];
      const first = await snapshot();
      // A copy of it under a later sequence, and a damaged file under an earlier one.
      copyFileSync(name(first.seq), name(first.seq + 1000));
      writeFileSync(name(1), 'not a snapshot');
      ids.push(await place('11'));
      const second = await snapshot();
      expect(second.kept).toEqual([second.seq]);
      expect(second.compactedBefore).toBe(second.seq);
      expect(second.ignored.map((i: { seq: number }) => i.seq)).toEqual([first.seq + 1000, 1]);
      expect(existsSync(name(second.seq))).toBe(true);
      expect(existsSync(name(first.seq))).toBe(false); // superseded (keep 1)
      ids.push(await place('12'));
      expect(await server.stop('SIGTERM')).toBe(0);
      // What a crash in the middle of a snapshot write leaves: removed at the next start.
      writeFileSync(`${name(second.seq + 5)}.tmp`, 'half a snapshot');

      server = await startServer({ dataDir: dir, args });
      const replayed = JSON.parse(server.lines.find((l) => l.includes('"msg":"journal replayed"'))!);
      expect(replayed.snapshotSeq).toBe(second.seq);
      expect(existsSync(`${name(second.seq + 5)}.tmp`)).toBe(false);
      const orders = await signed(server.base, account, 'GET', '/api/v1/orders', 'orderQueryAll');
      expect(orders.body.map((o: any) => o.id).sort()).toEqual([...ids].sort());

      // Without its snapshots the compacted journal cannot be replayed: start-up halts, exit code
      // 3, and the log names the error.
      expect(await server.stop('SIGTERM')).toBe(0);
      for (const file of readdirSync(join(dir, 'snapshots'))) rmSync(join(dir, 'snapshots', file));
      const failed = await startServer({ dataDir: dir, args }).then(async (started) => {
        await started.stop('SIGKILL');
        return 'started';
      }, (error: Error) => error.message);
      expect(failed).toMatch(/^server exited with 3 before ready/);
      expect(failed).toContain('thread failed (JournalGapError)');
    } finally {
      await server?.stop('SIGKILL');
      removeDir(dir);
    }
  });
});
