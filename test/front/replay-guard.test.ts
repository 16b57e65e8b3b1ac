// Replay protection: the shared table refuses a signature seen inside its window, frees
// it when the window has passed, answers 'full' instead of accepting unchecked, and is shared by
// threads (the same SharedArrayBuffer attached twice). Against the server, a signed request sent
// twice is refused the second time, whichever front thread receives it, and a re-signed one passes.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { Agent, request as httpRequest } from 'node:http';
import { PROBE_LIMIT, ReplayGuard } from '../../src/front/replay-guard.js';
import { createTestAccount, removeDir, sign, signingString, startServer, tempDataDir, type RunningServer, type TestAccount } from '../helpers/server.js';
import { frontOf } from '../helpers/front-threads.js';

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

  /**
   * One request on a fresh TCP connection, so the kernel may pick either front thread; also says
   * which front answered (read while the connection is still open).
   */
  const send = (timestamp: number, body: Record<string, string>) => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    return new Promise<{ status: number; body: any; front: string }>((resolve, reject) => {
      const signature = sign(account.secretKey, signingString('orderExecute', body, timestamp, 5000));
      const text = JSON.stringify(body);
      const request = httpRequest({
        host: '127.0.0.1', port: server.port, path: '/api/v1/order', method: 'POST', agent,
        headers: { 'X-API-Key': account.publicKey, 'X-Signature': signature, 'X-Timestamp': String(timestamp), 'X-Window': '5000', 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) },
      }, (response) => {
        const clientPort = response.socket.localPort!;
        let data = '';
        response.on('data', (chunk) => (data += chunk));
        response.on('end', () => {
          try {
            resolve({ status: response.statusCode ?? 0, body: JSON.parse(data), front: frontOf(server.child.pid!, server.port, clientPort) });
          } catch (error) {
            reject(error);
          }
        });
      });
      request.on('error', reject);
      request.end(text);
    }).finally(() => agent.destroy());
  };

  it('refuses the second copy of a signed order on either front thread, and places the order once', async () => {
    const order = { symbol: 'SOL_USDC', side: 'Bid', orderType: 'Limit', price: '10', quantity: '1', postOnly: 'true' };
    const timestamp = Date.now();
    const first = await send(timestamp, order);
    expect(first.status).toBe(200);
    // Fresh connections, until copies have reached both front threads (the one that placed the
    // order and the other): every copy is refused.
    const copies = [];
    for (let i = 0; i < 8 || (new Set(copies.map((c) => c.front)).size < 2 && i < 40); i++) copies.push(await send(timestamp, order));
    expect(new Set(copies.map((c) => c.front)).size, 'copies reached both fronts').toBe(2);
    for (const copy of copies) expect(copy).toMatchObject({ status: 401, body: { code: 'UNAUTHORIZED' } });
    const resigned = await send(timestamp + 1, order);
    expect(resigned.status).toBe(200);
    expect(resigned.body.id).not.toBe(first.body.id);
  });
});
