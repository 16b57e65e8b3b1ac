// `--port 0` (any free port) with several front threads: every front thread must share the one
// port the server reports in its "ready" line (uSockets does not share a kernel-chosen port, so
// the main thread picks one first).

import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { removeDir, startServer, tempDataDir, type RunningServer } from '../helpers/server.js';

/** How many TCP sockets listen on `port` (each front thread has its own, SO_REUSEPORT). */
function listenersOn(port: number): number {
  return readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((f) => f.length > 3 && f[3] === '0A' && parseInt(f[1].split(':')[1], 16) === port).length;
}

describe('port 0 with two front threads', () => {
  const dataDir = tempDataDir();
  let server: RunningServer | undefined;
  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  it('starts, reports the chosen port, listens on it from both fronts, and serves on it', async () => {
    server = await startServer({ dataDir, port: 0, args: ['--no-demo', '--front-threads', '2'] });
    const ready = JSON.parse(server.lines.find((line) => line.includes('"msg":"ready"'))!) as { port: number; frontThreads: number };
    expect(ready.frontThreads).toBe(2);
    expect(ready.port).toBeGreaterThan(0);
    // Both front threads listen on the reported port, not one of them on a port of its own.
    expect(listenersOn(ready.port)).toBe(2);
    for (let i = 0; i < 8; i++) {
      const response = await fetch(`http://127.0.0.1:${ready.port}/api/v1/ping`, { headers: { connection: 'close' } });
      expect(await response.text()).toBe('pong');
    }
  });
});
