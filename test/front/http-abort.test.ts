// The dispatcher (src/front/http.ts mountRoutes) tells a request that waits for its answer when
// the client goes away: `aborted` is set and the request's onAborted hook runs, once, so that a
// wait elsewhere (a history pool's queue) can drop the request instead of working for nobody.

import { connect } from 'node:net';
import uWS, { type us_listen_socket } from 'uWebSockets.js';
import { afterAll, describe, expect, it } from 'vitest';
import { mountRoutes, type RequestContext, type Route } from '../../src/front/http.js';
import { waitUntil } from '../helpers/server.js';

describe('a request whose client goes away', () => {
  const held: RequestContext[] = [];
  let told = 0;
  // A route that answers nothing yet: the request waits, as one queued for a pool thread does.
  const route: Route = {
    method: 'get',
    path: '/api/v1/held',
    handle: (ctx) => {
      ctx.onAborted = () => told++;
      held.push(ctx);
    },
  };
  const app = uWS.App();
  mountRoutes(app, [route], null, (error) => {
    throw error;
  });
  let listen: us_listen_socket | false = false;
  let port = 0;
  afterAll(() => {
    if (listen) uWS.us_listen_socket_close(listen);
  });

  it('is marked aborted and its onAborted hook runs once', async () => {
    await new Promise<void>((resolve, reject) => {
      app.listen('127.0.0.1', 0, (socket) => {
        if (!socket) return reject(new Error('no listen socket'));
        listen = socket;
        port = uWS.us_socket_local_port(socket);
        resolve();
      });
    });
    const client = connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => client.on('connect', () => resolve()));
    client.write('GET /api/v1/held HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await waitUntil(() => (held.length === 1 ? true : undefined), 'the request reaches its route');
    expect(held[0].aborted).toBe(false);
    expect(told).toBe(0);
    client.destroy();
    await waitUntil(() => (held[0].aborted ? true : undefined), 'the abort');
    expect(told).toBe(1);
  });
});
