// The operator's snapshot trigger against the real server: `npm run admin -- snapshot` sequences
// a Snapshot command, the journal worker writes the file once it is durable, and a restart loads
// it and replays only the journal after it, reaching the same state hash as before the stop.

import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { adminCli, createTestAccount, removeDir, signed, startServer, tempDataDir, waitUntil, type RunningServer } from './helpers/server.js';

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
});
