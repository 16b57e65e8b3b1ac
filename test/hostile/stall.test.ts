// A pipeline that stops moving is seen, reported and ended. The failpoint
// EXCHANGE_FAILPOINT=journal-hang:1 makes the journal's first commit never complete, as a disk that
// stops answering would: commands then wait for durability with no thread moving. The watchdog
// must report the stall on /api/v1/status ("Maintenance") and /admin/status (what each thread
// waits on), log it, and end the process with code 1, which the supervisor restarts; a SIGTERM
// while the journal hangs must still stop the process within the shutdown timeout.

import { generateKeyPairSync } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { get, removeDir, startServer, tempDataDir, waitUntil, type RunningServer } from '../helpers/server.js';

const HANG_FIRST_COMMIT = { EXCHANGE_FAILPOINT: 'journal-hang:1' };

function newPublicKey(): string {
  const { publicKey } = generateKeyPairSync('ed25519');
  return publicKey.export({ format: 'der', type: 'spki' }).subarray(12).toString('base64');
}

/** Starts a command that the hung journal never makes durable (an account creation). */
function sendUnansweredCommand(server: RunningServer): void {
  const publicKey = newPublicKey();
  void fetch(`http://127.0.0.1:${server.adminPort}/admin/accounts`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ publicKey }),
  }).catch(() => undefined);
}

async function adminStatus(server: RunningServer): Promise<any> {
  const response = await fetch(`http://127.0.0.1:${server.adminPort}/admin/status`);
  return response.json();
}

function exitCode(server: RunningServer): Promise<number | null> {
  return new Promise((resolve) => {
    if (server.child.exitCode !== null) resolve(server.child.exitCode);
    else server.child.once('exit', (code) => resolve(code));
  });
}

describe('stalled pipeline', () => {
  const dirs: string[] = [];
  const servers: RunningServer[] = [];
  afterAll(async () => {
    for (const server of servers) await server.stop('SIGKILL');
    for (const dir of dirs) removeDir(dir);
  });

  it('is reported by both status endpoints, logged with what each thread waits on, and ends the process', async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    const server = await startServer({ dataDir, args: ['--no-demo', '--stall-timeout-ms', '6000'], env: HANG_FIRST_COMMIT });
    servers.push(server);
    const healthy = await get(server.base, '/api/v1/status');
    expect(healthy.body).toEqual({ status: 'Ok', message: null });
    expect((await adminStatus(server)).status).toBe('ok');
    const exited = exitCode(server);

    sendUnansweredCommand(server);
    const reported = await waitUntil(async () => {
      const status = await get(server.base, '/api/v1/status');
      return status.body.status === 'Maintenance' ? status.body : undefined;
    }, 'the public status to report the stall');
    expect(reported.message).toMatch(/no progress/);
    const admin = await adminStatus(server);
    expect(admin.status).toBe('stalled');
    expect(admin.stallMs).toBeGreaterThan(0);
    expect(admin.pipeline.journal).toBe('waiting for the disk flush');
    expect(admin.pipeline.seqLast).toBeGreaterThan(admin.pipeline.seqDurable);

    expect(await exited).toBe(1);
    const fatal = server.lines.find((line) => line.includes('pipeline stalled'));
    expect(fatal).toBeDefined();
    const logged = JSON.parse(fatal!);
    expect(logged.pipeline.journal).toBe('waiting for the disk flush');
    expect(logged.pipeline.engine).toBeDefined();
  });

  it('does not keep a SIGTERM waiting on a journal that never flushes', async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    const server = await startServer({
      dataDir, args: ['--no-demo', '--stall-timeout-ms', '600000', '--shutdown-timeout-ms', '2000'], env: HANG_FIRST_COMMIT,
    });
    servers.push(server);
    const exited = exitCode(server);
    sendUnansweredCommand(server);
    await waitUntil(async () => {
      const admin = await adminStatus(server);
      return admin.pipeline.journal === 'waiting for the disk flush' ? true : undefined;
    }, 'the journal to hang in its flush');
    server.child.kill('SIGTERM');
    expect(await exited).toBe(1);
    expect(server.lines.some((line) => line.includes('stop did not finish in time'))).toBe(true);
  });

  it('is restarted by the supervisor through recovery', async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    const server = await startServer({
      dataDir, entry: 'dist/src/supervisor.js', args: ['--no-demo', '--stall-timeout-ms', '2000'], env: HANG_FIRST_COMMIT,
    });
    servers.push(server);
    sendUnansweredCommand(server);
    await waitUntil(() => (server.lines.filter((line) => line.includes('"msg":"ready"')).length >= 2 ? true : undefined), 'the restarted exchange', 60_000);
    expect(server.lines.some((line) => line.includes('pipeline stalled'))).toBe(true);
    // The failpoint is given to the first exchange only: the restarted one makes commands durable.
    const publicKey = newPublicKey();
    const created = await fetch(`http://127.0.0.1:${server.adminPort}/admin/accounts`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ publicKey }),
    });
    expect(created.status).toBe(200);
    expect((await get(server.base, '/api/v1/status')).body.status).toBe('Ok');
    expect(await server.stop('SIGTERM')).toBe(0);
  });
});
