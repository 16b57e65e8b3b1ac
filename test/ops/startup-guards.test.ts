// Start-up refuses what would let two exchanges collide: a data directory another running
// exchange holds (two writers would corrupt its journal), and a public or admin port already
// in use (uWS sets SO_REUSEPORT, so a second exchange would silently share the port). Both exit
// with code 3, which the supervisor does not retry. A lock left by a killed process is taken over.

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { removeDir, startServer, tempDataDir, type RunningServer } from '../helpers/server.js';

const refusal = (options: Parameters<typeof startServer>[0]) =>
  startServer(options).then(async (started) => {
    await started.stop('SIGKILL');
    return 'started';
  }, (error: Error) => error.message);

describe('start-up guards', () => {
  const dataDir = tempDataDir();
  const otherDir = tempDataDir();
  let server: RunningServer | undefined;
  afterAll(async () => {
    await server?.stop('SIGKILL');
    removeDir(dataDir);
    removeDir(otherDir);
  });

  it('refuses a data directory in use and ports in use, and takes over a stale lock', async () => {
    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '1'] });
    expect(existsSync(join(dataDir, 'LOCK'))).toBe(true);

    const sameDir = await refusal({ dataDir, args: ['--no-demo', '--front-threads', '1'] });
    expect(sameDir).toMatch(/^server exited with 3 before ready/);
    expect(sameDir).toContain(`data directory ${dataDir} is in use by process`);

    const samePort = await refusal({ dataDir: otherDir, port: server.port, args: ['--no-demo', '--front-threads', '1'] });
    expect(samePort).toMatch(/^server exited with 3 before ready/);
    expect(samePort).toContain(`public port 127.0.0.1:${server.port} is in use`);

    const sameAdmin = await refusal({ dataDir: otherDir, adminPort: server.adminPort, args: ['--no-demo', '--front-threads', '1'] });
    expect(sameAdmin).toMatch(/^server exited with 3 before ready/);
    expect(sameAdmin).toContain(`admin port 127.0.0.1:${server.adminPort} is in use`);

    // A killed exchange leaves its lock behind; the next start takes it over.
    await server.stop('SIGKILL');
    expect(existsSync(join(dataDir, 'LOCK'))).toBe(true);
    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '1'] });
    // A clean stop removes it.
    expect(await server.stop('SIGTERM')).toBe(0);
    expect(existsSync(join(dataDir, 'LOCK'))).toBe(false);
    server = undefined;
  });

  it('refuses an unreadable markets file and an unknown LOG_LEVEL as configuration errors (exit 2)', () => {
    const run = (args: string[], env: Record<string, string> = {}) => spawnSync(process.execPath, [join('dist', 'src', 'main.js'), '--data-dir', otherDir, ...args], {
      env: { ...process.env, LOG_PRETTY: '0', ...env }, encoding: 'utf8', timeout: 60_000,
    });
    const missing = run(['--config', join(otherDir, 'no-such-markets.json')]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/^configuration error: .*ENOENT/);
    const level = run([], { LOG_LEVEL: 'verbose' });
    expect(level.status).toBe(2);
    expect(level.stderr).toContain('configuration error: LOG_LEVEL must be one of');
  });
});
