// Replay protection: the shared table refuses a signature seen inside its window, frees
// it when the window has passed, answers 'full' instead of accepting unchecked, and is shared by
// threads (the same SharedArrayBuffer attached twice). Against the server, a signed request sent
// twice is refused the second time, whichever front thread receives it, and a re-signed one passes.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { PROBE_LIMIT, ReplayGuard } from '../src/front/replay-guard.js';
import { createTestAccount, removeDir, sign, signingString, startServer, tempDataDir, type RunningServer, type TestAccount } from './helpers/server.js';

describe('ReplayGuard', () => {
  const now = 1_763_000_000_000;

  it('refuses a signature until its window has passed', () => {
    const guard = ReplayGuard.create(1024);
    const other = ReplayGuard.attach(guard.sab); // another thread's view
    const signature = randomBytes(64);
    expect(guard.check(signature, now + 5000, now)).toBe('ok');
    expect(other.check(signature, now + 5000, now + 10)).toBe('replayed');
    expect(guard.check(randomBytes(64), now + 5000, now)).toBe('ok');
    expect(other.check(signature, now + 5000, now + 7000)).toBe('ok'); // expired: the slot is reused
  });

  it('answers full rather than forgetting a live signature', () => {
    const guard = ReplayGuard.create(PROBE_LIMIT);
    const signatures = Array.from({ length: PROBE_LIMIT }, () => randomBytes(64));
    for (const signature of signatures) expect(guard.check(signature, now + 60_000, now)).toBe('ok');
    expect(guard.check(randomBytes(64), now + 60_000, now)).toBe('full');
    for (const signature of signatures) expect(guard.check(signature, now + 60_000, now)).toBe('replayed');
    expect(guard.check(randomBytes(64), now + 60_000, now + 62_000)).toBe('ok');
  });
});

describe('replayed requests against the server', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let account: TestAccount;

  beforeAll(async () => {
    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '2', '--speed-bump-ms', '0'] });
    account = await createTestAccount(server.adminPort, ['USDC=100']);
  });
  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  /** One request on a fresh TCP connection (agent: false), so the kernel may pick either front thread. */
  const send = (timestamp: number, body: Record<string, string>) => new Promise<{ status: number; body: any }>((resolve, reject) => {
    const signature = sign(account.secretKey, signingString('orderExecute', body, timestamp, 5000));
    const text = JSON.stringify(body);
    const request = httpRequest({
      host: '127.0.0.1', port: server.port, path: '/api/v1/order', method: 'POST', agent: false,
      headers: { 'X-API-Key': account.publicKey, 'X-Signature': signature, 'X-Timestamp': String(timestamp), 'X-Window': '5000', 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) },
    }, (response) => {
      let data = '';
      response.on('data', (chunk) => (data += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(data) }));
    });
    request.on('error', reject);
    request.end(text);
  });

  it('refuses the second copy of a signed order, on any connection, and places the order once', async () => {
    const order = { symbol: 'SOL_USDC', side: 'Bid', orderType: 'Limit', price: '10', quantity: '1', postOnly: 'true' };
    const timestamp = Date.now();
    const first = await send(timestamp, order);
    expect(first.status).toBe(200);
    // Fresh connections: Linux spreads them over both front threads.
    const copies = [];
    for (let i = 0; i < 8; i++) copies.push(await send(timestamp, order));
    for (const copy of copies) expect(copy).toMatchObject({ status: 401, body: { code: 'UNAUTHORIZED' } });
    const resigned = await send(timestamp + 1, order);
    expect(resigned.status).toBe(200);
    expect(resigned.body.id).not.toBe(first.body.id);
  });
});
