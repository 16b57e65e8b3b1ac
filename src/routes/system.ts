// GET /api/v1/ping, /api/v1/time, /api/v1/status: liveness and clock. ping and time answer
// text/plain as the public API does; status reports "Ok" while the server serves requests.

import { sendJson, type Route } from '../front/http.js';

const TEXT = 'text/plain; charset=utf-8';

export const systemRoutes: Route[] = [
  { method: 'get', path: '/api/v1/ping', handle: (ctx) => sendJson(ctx, 200, 'pong', TEXT) },
  { method: 'get', path: '/api/v1/time', handle: (ctx) => sendJson(ctx, 200, String(Date.now()), TEXT) },
  {
    method: 'get',
    path: '/api/v1/status',
    handle: (ctx) => sendJson(ctx, 200, JSON.stringify({ status: 'Ok', message: null })),
  },
];
