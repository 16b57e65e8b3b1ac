// HTTP and WebSocket edges against the real server: bodies the server will not read close the
// connection instead of being read to their end, conflicting Content-Length headers are refused,
// a repeated query key is refused the same way on every route, filters and order fields follow the
// wire reference's enums, an oversized WebSocket message is closed with 1009 and a reason, and an
// oversized deposit says it is too large and what the maximum is.

import { connect, type Socket } from 'node:net';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestAccount, get, removeDir, signed, startServer, tempDataDir, type RunningServer, type TestAccount,
} from '../helpers/server.js';

/** Far more than the 64 KiB body limit, and far more than the kernel buffers on a loopback socket. */
const FLOOD_BYTES = 64 * 1024 * 1024;

interface RawExchange {
  /** 'closed' when the server closed the connection before the client finished writing. */
  outcome: 'closed' | 'wrote-everything';
  received: string;
}

/**
 * Sends `head`, then up to `floodBytes` of `chunk`s as fast as the server reads them, and reports
 * which came first: the server closing the connection, or the client writing everything.
 */
function sendAndFlood(port: number, head: string, chunk: Buffer, floodBytes: number): Promise<RawExchange> {
  return new Promise((resolve) => {
    let received = '';
    let written = 0;
    let settled = false;
    const socket: Socket = connect(port, '127.0.0.1');
    const settle = (outcome: RawExchange['outcome']) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve({ outcome, received });
    };
    socket.on('data', (data) => (received += data.toString('latin1')));
    socket.on('end', () => settle('closed'));
    socket.on('close', () => settle('closed'));
    socket.on('error', () => settle('closed')); // EPIPE / ECONNRESET: the server closed it
    const pump = () => {
      while (!settled && written < floodBytes) {
        written += chunk.length;
        const last = written >= floodBytes;
        const more = socket.write(chunk, last ? () => settle('wrote-everything') : undefined);
        if (!more && !last) {
          socket.once('drain', pump);
          return;
        }
      }
    };
    socket.once('connect', () => {
      socket.write(head);
      pump();
    });
  });
}

/** Sends `text` and collects everything the server answers until it closes the connection. */
function exchangeUntilClosed(port: number, text: string): Promise<string> {
  return new Promise((resolve) => {
    let received = '';
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    socket.on('data', (data) => (received += data.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(received));
  });
}

describe('HTTP and WebSocket edges', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let account: TestAccount;

  beforeAll(async () => {
    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '1', '--speed-bump-ms', '0'] });
    account = await createTestAccount(server.adminPort, ['USDC=1000', 'SOL=10']);
  });
  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  it('closes a connection whose announced body is too large instead of reading it', async () => {
    const head = 'POST /api/v1/order HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 9000000000000\r\n\r\n';
    const result = await sendAndFlood(server.port, head, Buffer.alloc(64 * 1024, 0x20), FLOOD_BYTES);
    expect(result.outcome).toBe('closed');
    if (result.received !== '') expect(result.received).toMatch(/^HTTP\/1\.1 413 /);
  });

  it('closes a connection whose chunked body passes the limit', async () => {
    const head = 'POST /api/v1/order HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n';
    const chunk = Buffer.from(`8000\r\n${' '.repeat(0x8000)}\r\n`, 'latin1');
    const result = await sendAndFlood(server.port, head, chunk, FLOOD_BYTES);
    expect(result.outcome).toBe('closed');
    if (result.received !== '') expect(result.received).toMatch(/^HTTP\/1\.1 413 /);
  });

  it('closes a connection whose body a GET route does not read, and keeps one whose body was read', async () => {
    const head = 'GET /api/v1/markets HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n';
    const chunk = Buffer.from(`8000\r\n${' '.repeat(0x8000)}\r\n`, 'latin1');
    const result = await sendAndFlood(server.port, head, chunk, FLOOD_BYTES);
    expect(result.outcome).toBe('closed');
    // Two pipelined requests with small bodies that are read: both answered on one connection.
    const request = 'POST /api/v1/order HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}';
    const received = await exchangeUntilClosed(server.port, `${request}${request.replace('HTTP/1.1\r\n', 'HTTP/1.1\r\nConnection: close\r\n')}`);
    expect(received.match(/HTTP\/1\.1 401 /g)).toHaveLength(2);
  });

  it('refuses two different Content-Length headers with 400 and closes the connection', async () => {
    const conflicting = 'POST /api/v1/order HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 44\r\n\r\n{}';
    const received = await exchangeUntilClosed(server.port, conflicting);
    expect(received).toMatch(/^HTTP\/1\.1 400 /);
    expect(received).toContain('{"code":"INVALID_CLIENT_REQUEST","message":"Conflicting Content-Length headers"}');
    // A request smuggled behind the shorter length is never served.
    const smuggled = await exchangeUntilClosed(server.port, `${conflicting}GET /api/v1/markets HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(smuggled).not.toMatch(/HTTP\/1\.1 (200|401) /);
  });

  it('refuses a repeated query key with 400 on every route, public and signed', async () => {
    for (const path of [
      '/api/v1/depth?symbol=SOL_USDC&symbol=BTC_USDC',
      '/api/v1/market?symbol=SOL_USDC&symbol=BTC_USDC',
      '/api/v1/order?symbol=SOL_USDC&orderId=1&orderId=2',
      '/wapi/v1/history/orders?limit=1&limit=1000',
    ]) {
      const response = await get(server.base, path);
      expect(response.status, path).toBe(400);
      expect(response.body.code, path).toBe('INVALID_CLIENT_REQUEST');
      expect(response.body.message, path).toMatch(/^Query parameter (symbol|orderId|limit) is given more than once$/);
    }
  });

  it('accepts marketType repeated, and in any case, on /api/v1/markets as on other routes', async () => {
    const all = await get(server.base, '/api/v1/markets');
    expect(all.body.length).toBeGreaterThan(0);
    for (const path of ['/api/v1/markets?marketType=perp&marketType=SPOT', '/api/v1/markets?marketType=Perp&market_type=spot']) {
      const response = await get(server.base, path);
      expect(response.status, path).toBe(200);
      expect(response.body, path).toEqual(all.body);
    }
    const spot = all.body.filter((m: { marketType: string }) => m.marketType === 'SPOT');
    const perp = all.body.filter((m: { marketType: string }) => m.marketType === 'PERP');
    expect(spot.length).toBeGreaterThan(0);
    expect(perp.length).toBeGreaterThan(0);
    for (const path of ['/api/v1/markets?marketType=spot', '/api/v1/markets?marketType=Spot']) expect((await get(server.base, path)).body, path).toEqual(spot);
    expect((await get(server.base, '/api/v1/markets?marketType=perp')).body).toEqual(perp);
    expect((await get(server.base, '/api/v1/markets?marketType=DATED')).body).toEqual([]);
    expect((await get(server.base, '/api/v1/markets?marketType=nonsense')).status).toBe(400);
  });

  it('refuses DELETE /api/v1/orders with an unknown orderType and cancels nothing', async () => {
    const placed = await signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', {
      symbol: 'SOL_USDC', side: 'Bid', orderType: 'Limit', price: '10', quantity: '1', postOnly: true,
    });
    expect(placed.status, placed.text).toBe(200);
    for (const orderType of ['Bogus', 'restinglimitorder', 7]) {
      const refused = await signed(server.base, account, 'DELETE', '/api/v1/orders', 'orderCancelAll', { symbol: 'SOL_USDC', orderType });
      expect(refused.status, String(orderType)).toBe(400);
      expect(refused.body).toEqual({ code: 'INVALID_CLIENT_REQUEST', message: 'orderType must be RestingLimitOrder or ConditionalOrder' });
    }
    const open = await signed(server.base, account, 'GET', '/api/v1/orders', 'orderQueryAll', { symbol: 'SOL_USDC' });
    expect(open.body.map((o: any) => o.id)).toContain(placed.body.id);
    const cancelled = await signed(server.base, account, 'DELETE', '/api/v1/orders', 'orderCancelAll', { symbol: 'SOL_USDC', orderType: 'RestingLimitOrder' });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.map((o: any) => o.id)).toContain(placed.body.id);
  });

  it('refuses excludePlatform=true as not implemented and accepts false', async () => {
    const refused = await signed(server.base, account, 'GET', '/wapi/v1/capital/deposits', 'depositQueryAll', { excludePlatform: true });
    expect(refused.status).toBe(501);
    expect(refused.body.code).toBe('NOT_IMPLEMENTED');
    const listed = await signed(server.base, account, 'GET', '/wapi/v1/capital/deposits', 'depositQueryAll', { excludePlatform: false });
    expect(listed.status).toBe(200);
    expect(listed.body.length).toBe(2);
    const bad = await signed(server.base, account, 'GET', '/wapi/v1/capital/deposits', 'depositQueryAll', { excludePlatform: 'yes' });
    expect(bad.status).toBe(400);
  });

  it('validates triggerBy, slippageToleranceType and brokerId against the wire reference; a bad one places nothing', async () => {
    const order = { symbol: 'SOL_USDC', side: 'Bid', orderType: 'Limit', price: '11', quantity: '1', postOnly: true };
    const bad: Array<[Record<string, string | number>, string]> = [
      [{ triggerBy: 'Bogus' }, 'triggerBy must be MarkPrice, LastPrice or IndexPrice'],
      [{ stopLossTriggerBy: 'lastprice' }, 'stopLossTriggerBy must be MarkPrice, LastPrice or IndexPrice'],
      [{ takeProfitTriggerBy: 3 }, 'takeProfitTriggerBy must be MarkPrice, LastPrice or IndexPrice'],
      [{ slippageToleranceType: 'Ticks' }, 'slippageToleranceType must be TickSize or Percent'],
      [{ brokerId: 70000 }, 'brokerId must be an integer from 0 to 65535'],
      [{ brokerId: 'abc' }, 'brokerId must be an integer from 0 to 65535'],
      [{ brokerId: -1 }, 'brokerId must be an integer from 0 to 65535'],
    ];
    for (const [extra, message] of bad) {
      const response = await signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { ...order, ...extra });
      expect(response.status, JSON.stringify(extra)).toBe(400);
      expect(response.body).toEqual({ code: 'INVALID_CLIENT_REQUEST', message });
    }
    const open = await signed(server.base, account, 'GET', '/api/v1/orders', 'orderQueryAll', { symbol: 'SOL_USDC' });
    expect(open.body.filter((o: any) => o.price === '11.00' || o.price === '11')).toEqual([]);
    const good = await signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', {
      ...order, triggerBy: 'LastPrice', slippageToleranceType: 'Percent', brokerId: 7,
    });
    expect(good.status, good.text).toBe(200);
  });

  it('refuses a deposit beyond the exact range saying it is too large and what the maximum is', async () => {
    const deposit = async (quantity: string) => {
      const response = await fetch(`http://127.0.0.1:${server.adminPort}/admin/deposits`, {
        method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ accountId: account.accountId, asset: 'SOL', quantity }),
      });
      return { status: response.status, body: await response.json() as any };
    };
    const refused = await deposit('9007199.254740992');
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ code: 'INVALID_QUANTITY', message: 'Quantity is too large: at most 9007199.254740991 SOL' });
    expect((await deposit('100000000000000')).body.message).toBe('Quantity is too large: at most 9007199.254740991 SOL');
    expect((await deposit('0.0000000001')).body.message).toBe('Quantity must be a positive decimal with at most 9 decimals');
  });

  it('closes a WebSocket whose message is too large with 1009 and a reason naming the limit', async () => {
    const socket = new WebSocket(`ws://127.0.0.1:${server.port}/`, { perMessageDeflate: false });
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    const closed = new Promise<{ code: number; reason: string }>((resolve) => {
      socket.once('close', (code, reason) => resolve({ code, reason: reason.toString('utf8') }));
    });
    socket.send(JSON.stringify({ method: 'SUBSCRIBE', params: ['x'.repeat(20 * 1024)] }));
    expect(await closed).toEqual({ code: 1009, reason: 'Message too large (at most 16384 bytes)' });
  });
});
