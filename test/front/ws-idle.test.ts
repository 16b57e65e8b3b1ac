// WebSocket keep-alive: the server pings a silent connection before its idle timeout
// (--ws-idle-timeout-s, here the minimum, 8 s) and closes a peer that never answers, while a peer
// that answers the pings (as every WebSocket client does by default) stays connected.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { removeDir, startServer, tempDataDir, waitUntil, type RunningServer } from '../helpers/server.js';

describe('WebSocket idle timeout', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '1', '--ws-idle-timeout-s', '8'] });
  });
  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  it('pings silent connections, keeps the ones that answer and closes the ones that do not', async () => {
    const connect = async (autoPong: boolean) => {
      const socket = new WebSocket(`ws://127.0.0.1:${server.port}/`, { autoPong });
      const state = { pings: 0, closed: false, socket };
      socket.on('ping', () => state.pings++);
      socket.on('close', () => (state.closed = true));
      await new Promise((resolve, reject) => {
        socket.once('open', resolve);
        socket.once('error', reject);
      });
      return state;
    };
    const answering = await connect(true);
    const silent = await connect(false);
    await waitUntil(() => (silent.closed ? true : undefined), 'the silent peer to be closed', 60_000);
    expect(silent.pings).toBeGreaterThan(0);
    const pingsAtClose = answering.pings;
    await waitUntil(() => (answering.pings >= pingsAtClose + 2 ? true : undefined), 'two more pings to the answering peer', 60_000);
    expect(answering.closed).toBe(false);
    expect(answering.socket.readyState).toBe(WebSocket.OPEN);
    answering.socket.close();
  });
});
