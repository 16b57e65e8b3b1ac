// The operator's admin client never waits for ever: an endpoint that accepts the connection and
// then stays silent (or stops half-way through its answer) is reported as wedged.

import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { AdminError, adminRequest } from '../../src/admin/client.js';

let server: Server | undefined;
const sockets: Socket[] = [];

/** A TCP listener on 127.0.0.1 that does `onConnection` with each socket; resolves its port. */
function listen(onConnection: (socket: Socket) => void): Promise<number> {
  return new Promise((resolve) => {
    server = createServer((socket) => {
      sockets.push(socket);
      onConnection(socket);
    });
    server.listen(0, '127.0.0.1', () => {
      const address = server!.address();
      resolve(typeof address === 'object' && address ? address.port : 0);
    });
  });
}

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

describe('admin client', () => {
  it('reports an endpoint that accepts the connection and never answers', async () => {
    const port = await listen(() => {});
    const failure = await adminRequest(port, 'POST', '/admin/accounts', { publicKey: 'x' }, 300).catch((error) => error);
    expect(failure).toBeInstanceOf(AdminError);
    expect(String(failure.message)).toMatch(/gave no answer to POST \/admin\/accounts within 300 ms/);
  });

  it('reports an answer that stops half-way', async () => {
    const port = await listen((socket) => {
      socket.once('data', () => socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"acc'));
    });
    const failure = await adminRequest(port, 'GET', '/admin/status', undefined, 300).catch((error) => error);
    expect(failure).toBeInstanceOf(AdminError);
    expect(String(failure.message)).toMatch(/did not finish its answer to GET \/admin\/status within 300 ms/);
  });

  it('still returns a prompt answer', async () => {
    const port = await listen((socket) => {
      socket.once('data', () => socket.end('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\nConnection: close\r\n\r\n{"ok":true}'));
    });
    expect(await adminRequest(port, 'GET', '/admin/status', undefined, 5_000)).toEqual({ ok: true });
  });
});
