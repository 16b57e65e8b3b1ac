// Request rate limits (src/front/rate-limits.ts) against the real server started with low limits:
// a burst from one address is refused with the venue's 429 body and a Retry-After header however
// its connections spread over the front threads, other addresses, other keys and the admin port
// are not, and requests pass again once the bucket has refilled. Junk sent under a victim's API
// key does not spend the victim's budget. WebSocket connections per address and messages per
// connection are bounded. The shared table itself: shared between attachments, safe when full,
// and not fooled by the clock stepping back.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import WebSocket from 'ws';
import { PROBE_LIMIT, RateTable, rateRule } from '../../src/front/rate-table.js';
import { ConnectionTable } from '../../src/front/connection-table.js';
import { DEFAULT_RATE_LIMITS, loadConfig } from '../../src/config.js';
import { StreamClient } from '../helpers/stream-client.js';
import {
  createTestAccount, removeDir, sign, signingString, startServer, tempDataDir, waitUntil, type RunningServer, type TestAccount,
} from '../helpers/server.js';

describe('RateTable', () => {
  const now = 1_763_000_000_000;
  const key = (n: number) => ({ keyA: n, keyB: ~n });

  it('allows a burst, then refuses until the bucket refills, across attachments', () => {
    const table = RateTable.create(1024);
    const other = RateTable.attach(table.sab); // another thread's view
    const rule = rateRule(10, 3); // one every 100 ms, bursts of 3
    expect([table.take(key(1), rule, now), other.take(key(1), rule, now), table.take(key(1), rule, now)]).toEqual([0, 0, 0]);
    expect(other.take(key(1), rule, now)).toBeCloseTo(100);
    expect(table.peek(key(1), rule, now + 50)).toBeCloseTo(50);
    expect(table.take(key(2), rule, now)).toBe(0); // another client has its own bucket
    expect(other.take(key(1), rule, now + 100)).toBe(0);
  });

  it('evicts the entry closest to full when a neighbourhood is full, refusing nobody', () => {
    const table = RateTable.create(PROBE_LIMIT);
    const rule = rateRule(1, 2);
    for (let n = 1; n <= PROBE_LIMIT; n++) expect(table.take(key(n), rule, now + n)).toBe(0);
    expect(table.take(key(PROBE_LIMIT + 1), rule, now + PROBE_LIMIT + 1)).toBe(0);
    // Key 1 (the least recent) lost its entry; the others still hold theirs.
    expect(table.peek(key(1), rule, now + PROBE_LIMIT + 1)).toBe(0);
    for (let n = 2; n <= PROBE_LIMIT; n++) expect(table.take(key(n), rule, now + PROBE_LIMIT + 1)).toBe(0);
    for (let n = 2; n <= PROBE_LIMIT; n++) expect(table.take(key(n), rule, now + PROBE_LIMIT + 1)).toBeGreaterThan(0);
  });

  it('holds a client no longer than its burst when the clock steps back', () => {
    const table = RateTable.create(64);
    const rule = rateRule(1, 2);
    table.take(key(1), rule, now);
    table.take(key(1), rule, now);
    const back = now - 3_600_000;
    expect(table.take(key(1), rule, back)).toBeLessThanOrEqual(rule.intervalMs);
    expect(table.take(key(1), rule, back + rule.intervalMs)).toBe(0);
  });

  it('counts connections per address and refuses when the table is full', () => {
    const table = ConnectionTable.create(PROBE_LIMIT);
    const other = ConnectionTable.attach(table.sab);
    expect([table.open(key(1), 2), other.open(key(1), 2), table.open(key(1), 2)]).toEqual(['ok', 'ok', 'limit']);
    other.close(key(1));
    expect(table.open(key(1), 2)).toBe('ok');
    for (let n = 2; n <= PROBE_LIMIT; n++) expect(table.open(key(n), 2)).toBe('ok');
    expect(table.open(key(PROBE_LIMIT + 1), 2)).toBe('full');
    table.close(key(5));
    expect(table.open(key(PROBE_LIMIT + 1), 2)).toBe('ok');
    expect(table.count(key(1))).toBe(2);
  });
});

describe('rate limit configuration', () => {
  it('takes flags over environment over defaults, and refuses a burst of 0', () => {
    const config = loadConfig(['--address-requests-per-s', '5', '--key-request-burst', '7'], { WS_MESSAGES_PER_S: '3', ADDRESS_REQUESTS_PER_S: '9' });
    expect(config.rateLimits).toEqual({ ...DEFAULT_RATE_LIMITS, addressRequestsPerS: 5, keyRequestBurst: 7, wsMessagesPerS: 3 });
    expect(() => loadConfig(['--address-request-burst', '0'], {})).toThrow(/request burst per address must be from 1/);
    expect(loadConfig(['--key-requests-per-s', '0'], {}).rateLimits?.keyRequestsPerS).toBe(0);
  });
});

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** One request on its own connection from `localAddress` (connections spread over the front threads). */
function call(port: number, localAddress: string, path: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, localAddress, path, method: options.method ?? 'GET', headers: options.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = null;
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
      });
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

let lastTimestamp = 0;

function signedHeaders(account: TestAccount, instruction: string): Record<string, string> {
  lastTimestamp = Math.max(Date.now(), lastTimestamp + 1);
  return {
    'X-API-Key': account.publicKey,
    'X-Signature': sign(account.secretKey, signingString(instruction, {}, lastTimestamp, 5000)),
    'X-Timestamp': String(lastTimestamp),
    'X-Window': '5000',
  };
}

const ADDRESS_LIMITED = { code: 'TOO_MANY_REQUESTS', message: 'Rate limit exceeded: too many requests from this address' };
const KEY_LIMITED = { code: 'TOO_MANY_REQUESTS', message: 'Rate limit exceeded: too many requests for this API key' };
const ADDRESS_BURST = 40;
const KEY_BURST = 5;

function expectRateLimited(reply: Reply, body: unknown): void {
  expect(reply.status).toBe(429);
  expect(reply.body).toEqual(body);
  expect(String(reply.headers['retry-after'])).toMatch(/^[1-9]\d*$/);
}

describe('rate limits against the server', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let heavy: TestAccount;
  let other: TestAccount;
  let victim: TestAccount;

  beforeAll(async () => {
    // Two front threads, so that one address's connections land on both; one request per second
    // refills, so a burst sent at once cannot refill its way past the limit.
    server = await startServer({
      dataDir,
      args: [
        '--no-demo', '--front-threads', '2',
        '--address-requests-per-s', '1', '--address-request-burst', String(ADDRESS_BURST),
        '--key-requests-per-s', '1', '--key-request-burst', String(KEY_BURST),
        '--ws-connections-per-address', '2', '--ws-messages-per-s', '1',
      ],
    });
    heavy = await createTestAccount(server.adminPort, ['USDC=1000']);
    other = await createTestAccount(server.adminPort, ['USDC=1000']);
    victim = await createTestAccount(server.adminPort, ['USDC=1000']);
  });
  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  it('refuses a burst from one address with 429 and Retry-After, on every front thread; other addresses pass; it refills', async () => {
    const started = Date.now();
    const burst = await Promise.all(Array.from({ length: ADDRESS_BURST + 20 }, () => call(server.port, '127.0.0.10', '/api/v1/markets')));
    const elapsedS = (Date.now() - started) / 1000;
    const passed = burst.filter((r) => r.status === 200).length;
    const refused = burst.filter((r) => r.status === 429);
    expect(passed + refused.length).toBe(burst.length);
    expect(passed).toBeGreaterThanOrEqual(ADDRESS_BURST);
    // One budget for both threads: at most the burst plus what refilled meanwhile.
    expect(passed).toBeLessThanOrEqual(ADDRESS_BURST + Math.ceil(elapsedS) + 1);
    for (const reply of refused) expectRateLimited(reply, ADDRESS_LIMITED);
    // A body is refused unread, with the same answer.
    expectRateLimited(await call(server.port, '127.0.0.10', '/api/v1/order', { method: 'POST', body: '{"symbol":"SOL_USDC"}' }), ADDRESS_LIMITED);

    expect((await call(server.port, '127.0.0.11', '/api/v1/markets')).status).toBe(200);
    await waitUntil(async () => ((await call(server.port, '127.0.0.10', '/api/v1/markets')).status === 200 ? true : undefined), 'the bucket to refill', 30_000);
  });

  it('refuses a key over its limit while another key from the same address passes', async () => {
    const burst = await Promise.all(Array.from({ length: KEY_BURST + 10 }, () =>
      call(server.port, '127.0.0.12', '/api/v1/capital', { headers: signedHeaders(heavy, 'balanceQuery') })));
    expect(burst.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(KEY_BURST);
    const refused = burst.filter((r) => r.status !== 200);
    expect(refused.length).toBeGreaterThan(0);
    for (const reply of refused) expectRateLimited(reply, KEY_LIMITED);

    const otherKey = await call(server.port, '127.0.0.12', '/api/v1/capital', { headers: signedHeaders(other, 'balanceQuery') });
    expect(otherKey.status).toBe(200);
    await waitUntil(async () => {
      const reply = await call(server.port, '127.0.0.12', '/api/v1/capital', { headers: signedHeaders(heavy, 'balanceQuery') });
      return reply.status === 200 ? true : undefined;
    }, 'the key bucket to refill', 30_000);
  });

  it("does not let unsigned junk under a victim's API key spend the victim's budget", async () => {
    const junk = await Promise.all(Array.from({ length: KEY_BURST * 5 }, () => {
      const headers = { ...signedHeaders(victim, 'balanceQuery'), 'X-Signature': randomBytes(64).toString('base64') };
      return call(server.port, '127.0.0.14', '/api/v1/capital', { headers });
    }));
    for (const reply of junk) expect(reply.body).toEqual({ code: 'INVALID_SIGNATURE', message: 'Invalid signature' });
    for (let i = 0; i < KEY_BURST; i++) {
      const reply = await call(server.port, '127.0.0.15', '/api/v1/capital', { headers: signedHeaders(victim, 'balanceQuery') });
      expect(reply.status).toBe(200);
    }
  });

  it('does not limit the admin port', async () => {
    // Empty the budget of 127.0.0.1 on the public port first: the admin port must not share it.
    const burst = await Promise.all(Array.from({ length: ADDRESS_BURST + 10 }, () => call(server.port, '127.0.0.1', '/api/v1/markets')));
    expect(burst.some((r) => r.status === 429)).toBe(true);
    const admin = await Promise.all(Array.from({ length: ADDRESS_BURST * 2 }, () => call(server.adminPort, '127.0.0.1', '/admin/status')));
    expect(admin.map((r) => r.status)).toEqual(admin.map(() => 200));
  });

  it('bounds WebSocket connections per address, and messages per connection', async () => {
    const open = (localAddress: string) => new Promise<{ socket?: WebSocket; status?: number; retryAfter?: string; body?: string }>((resolve, reject) => {
      const socket = new WebSocket(`ws://127.0.0.1:${server.port}/`, { localAddress });
      socket.once('open', () => resolve({ socket }));
      socket.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode, body }));
      });
      socket.once('error', reject);
    });
    const first = await open('127.0.0.16');
    const second = await open('127.0.0.16');
    const third = await open('127.0.0.16');
    expect(first.socket && second.socket).toBeTruthy();
    expect(third.status).toBe(429);
    expect(JSON.parse(third.body!)).toEqual({ code: 'TOO_MANY_REQUESTS', message: 'Too many WebSocket connections from this address' });
    expect((await open('127.0.0.17')).socket).toBeTruthy();
    first.socket!.close();
    const again = await waitUntil(async () => {
      const attempt = await open('127.0.0.16');
      return attempt.socket;
    }, 'a connection slot to free', 30_000);

    // One message a second, bursts of four: a flood closes the connection with 1008.
    const closed = new Promise<number>((resolve) => again.once('close', (code) => resolve(code)));
    for (let i = 0; i < 20; i++) again.send(JSON.stringify({ method: 'SUBSCRIBE', params: ['depth.SOL_USDC'] }));
    expect(await closed).toBe(1008);
    second.socket!.close();
  });

  it('charges a signed subscribe to its address before checking the signature', async () => {
    const client = await StreamClient.connect(server.port, { localAddress: '127.0.0.18' });
    const burst = await Promise.all(Array.from({ length: ADDRESS_BURST + 10 }, () => call(server.port, '127.0.0.18', '/api/v1/markets')));
    expect(burst.some((r) => r.status === 429)).toBe(true);
    client.subscribeSigned(other, ['account.orderUpdate']);
    const refused = await client.waitFor((m) => m.error, 'the subscribe refused');
    expect(refused).toEqual({ id: null, error: { code: 4029, message: ADDRESS_LIMITED.message } });
    client.close();
  });
});
