// GET /api/v1/ping, /api/v1/time, /api/v1/status: liveness and clock. ping and time answer
// text/plain as the public API does. status reports "Ok" while the pipeline moves, and
// "Maintenance" (the wire's only other status) with a message while the watchdog sees it stalled
// (work waiting and no thread moving; if that lasts, the process ends and its supervisor restarts
// it) or while the operator has put the exchange in maintenance (SetSystemState).

import { sendJson, type Route } from '../front/http.js';
import type { FrontContext } from '../front/context.js';

const TEXT = 'text/plain; charset=utf-8';
const MAINTENANCE_MESSAGE = 'System under maintenance: orders, cancels and withdrawals are refused; market data and reads go on';

/** A stall says more (the process is about to restart), so its message wins over maintenance's. */
function statusOf(front: FrontContext): { status: string; message: string | null } {
  const stallMs = front.link.stallMs();
  if (stallMs > 0) return { status: 'Maintenance', message: `The exchange has made no progress for ${stallMs} ms and will restart` };
  if (front.data.inMaintenance()) return { status: 'Maintenance', message: MAINTENANCE_MESSAGE };
  return { status: 'Ok', message: null };
}

export function systemRoutes(front: FrontContext): Route[] {
  return [
    { method: 'get', path: '/api/v1/ping', handle: (ctx) => sendJson(ctx, 200, 'pong', TEXT) },
    { method: 'get', path: '/api/v1/time', handle: (ctx) => sendJson(ctx, 200, String(Date.now()), TEXT) },
    {
      method: 'get',
      path: '/api/v1/status',
      handle: (ctx) => {
        sendJson(ctx, 200, JSON.stringify(statusOf(front)));
      },
    },
  ];
}
