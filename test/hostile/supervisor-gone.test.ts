// The exchange does not outlive its supervisor: when `npm start`'s supervisor is killed outright
// (SIGKILL: no signal forwarded to the child), the exchange notices the channel to it closing,
// stops in order and releases its data directory, so that a new supervisor can start one.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { removeDir, startServer, tempDataDir, waitUntil, type RunningServer } from '../helpers/server.js';

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

describe('an exchange whose supervisor is killed', () => {
  const dataDir = tempDataDir();
  let server: RunningServer | undefined;
  let exchangePid = 0;
  afterAll(async () => {
    await server?.stop('SIGKILL');
    if (exchangePid > 0 && processAlive(exchangePid)) process.kill(exchangePid, 'SIGKILL');
    removeDir(dataDir);
  });

  it('stops in order and releases the data directory lock', async () => {
    server = await startServer({ dataDir, entry: 'dist/src/supervisor.js', args: ['--no-demo', '--front-threads', '1'] });
    const lockPath = join(dataDir, 'LOCK');
    exchangePid = Number(readFileSync(lockPath, 'utf8').trim());
    expect(exchangePid).toBeGreaterThan(0);
    expect(exchangePid).not.toBe(server.child.pid);

    expect(await server.stop('SIGKILL')).toBe(null);
    await waitUntil(() => (processAlive(exchangePid) ? undefined : true), 'the exchange to exit', 60_000);
    expect(existsSync(lockPath)).toBe(false);
    expect(server.lines.some((line) => line.includes('"signal":"supervisor gone"'))).toBe(true);
  });
});
