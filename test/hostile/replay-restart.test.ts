// Replay protection across a crash: a signed order acknowledged before `kill -9`, resent byte for
// byte after the restart while still inside its validity window, must be refused and must not
// place a second order; so must a private WebSocket subscription's signature. A request signed
// after the restart is accepted as usual.
//
// The server restarts on the same data directory and the same port, so the resent HTTP request is
// the very same bytes (the Host header included) as the acknowledged one.

import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestAccount,
  removeDir,
  sign,
  signed,
  signingString,
  startServer,
  tempDataDir,
  type RunningServer,
  type TestAccount,
} from '../helpers/server.js';
import { StreamClient } from '../helpers/stream-client.js';
import { ReplayGuard } from '../../src/front/replay-guard.js';

interface RawResponse {
  status: number;
  body: any;
}

/** The exact bytes of a signed POST /api/v1/order, as a client would put them on the wire. */
function signedOrderBytes(port: number, account: TestAccount, order: Record<string, string>, timestamp: number, window: number): Buffer {
  const signature = sign(account.secretKey, signingString('orderExecute', order, timestamp, window));
  const body = JSON.stringify(order);
  const head = [
    'POST /api/v1/order HTTP/1.1',
    `Host: 127.0.0.1:${port}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-API-Key: ${account.publicKey}`,
    `X-Signature: ${signature}`,
    `X-Timestamp: ${timestamp}`,
    `X-Window: ${window}`,
  ].join('\r\n');
  return Buffer.from(`${head}\r\n\r\n${body}`, 'utf8');
}

/** Writes `bytes` on a fresh connection and reads one response (its Content-Length bounds the body). */
function sendRaw(port: number, bytes: Buffer): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = Buffer.alloc(0);
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const headEnd = received.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const head = received.subarray(0, headEnd).toString('latin1');
      const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
      if (received.length < headEnd + 4 + length) return;
      socket.destroy();
      const body = received.subarray(headEnd + 4, headEnd + 4 + length).toString('utf8');
      resolve({ status: Number(head.split(' ')[1]), body: JSON.parse(body) });
    });
    socket.write(bytes);
  });
}

/** The subscribe message of a private stream, signed once (timestamp and window as strings, as ccxt sends them). */
function signedSubscribe(account: TestAccount, id: number, timestamp: number, window: number): Record<string, unknown> {
  const signature = sign(account.secretKey, `instruction=subscribe&timestamp=${timestamp}&window=${window}`);
  return { method: 'SUBSCRIBE', id, params: ['account.orderUpdate'], signature: [account.publicKey, signature, String(timestamp), String(window)] };
}

/**
 * Sends `message` and then a subscribe to an invalid stream: messages on one connection are
 * handled in order, so once the 4006 answer arrives, any error for `message` has arrived too.
 * Returns that error, or undefined when the subscription was accepted.
 */
async function subscribeOutcome(client: StreamClient, message: Record<string, unknown>): Promise<any> {
  const probeId = (message.id as number) + 1000;
  client.send(message);
  client.send({ method: 'SUBSCRIBE', id: probeId, params: ['nonsense.stream'] });
  await client.waitFor((m) => m.id === probeId && m.error?.code === 4006, 'the round trip after a subscribe');
  return client.find((m) => m.id === message.id && m.error)?.error;
}

const ORDER = { symbol: 'SOL_USDC', side: 'Bid', orderType: 'Limit', price: '10', quantity: '1', postOnly: 'true' };
const SKEWED_ORDER = { ...ORDER, price: '11' };

describe('the restart floor of the replay guard', () => {
  it('refuses timestamps up to and including the floor, on every thread that attaches the table', () => {
    const guard = ReplayGuard.create(1024);
    expect(guard.signedBeforeRestart(Date.now())).toBe(false); // no floor until one is set
    guard.setRestartFloor(1_700_000_005_000);
    const attached = ReplayGuard.attach(guard.sab);
    expect(attached.signedBeforeRestart(1_700_000_005_000)).toBe(true);
    expect(attached.signedBeforeRestart(1_700_000_005_001)).toBe(false);
  });
});

describe('replay protection survives kill -9 and restart', () => {
  const dataDir = tempDataDir();
  const args = ['--no-demo', '--front-threads', '2', '--speed-bump-ms', '0'];
  let server: RunningServer;
  let account: TestAccount;
  let port: number;
  let adminPort: number;

  beforeAll(async () => {
    server = await startServer({ dataDir, args });
    port = server.port;
    adminPort = server.adminPort;
    account = await createTestAccount(adminPort, ['USDC=1000']);
  });
  afterAll(async () => {
    await server?.stop('SIGKILL');
    removeDir(dataDir);
  });

  it('refuses the bytes of a signed order and a subscribe signature that were accepted before the crash', async () => {
    // One order stamped now, one stamped 4 s ahead (inside the 5 s a fast client clock is allowed):
    // the second one stays valid furthest into the new process's life.
    const now = Date.now();
    const orderBytes = signedOrderBytes(port, account, ORDER, now, 60_000);
    const skewedBytes = signedOrderBytes(port, account, SKEWED_ORDER, now + 4000, 60_000);
    const placed = await sendRaw(port, orderBytes);
    expect(placed.status).toBe(200);
    const skewed = await sendRaw(port, skewedBytes);
    expect(skewed.status).toBe(200);

    const subscribe = signedSubscribe(account, 1, Date.now(), 60_000);
    const before = await StreamClient.connect(port);
    expect(await subscribeOutcome(before, subscribe)).toBeUndefined();
    before.socket.terminate();

    await server.stop('SIGKILL');
    server = await startServer({ dataDir, args, port, adminPort });

    for (const bytes of [orderBytes, skewedBytes]) {
      const again = await sendRaw(port, bytes);
      expect(again).toMatchObject({ status: 401, body: { code: 'UNAUTHORIZED', message: expect.stringMatching(/restarted/) } });
    }
    const open = await signed(server.base, account, 'GET', '/api/v1/orders', 'orderQueryAll');
    expect(open.status).toBe(200);
    expect(open.body.map((o: any) => o.id).sort()).toEqual([placed.body.id, skewed.body.id].sort());

    // The signature replayed from the client's own address and from another one.
    for (const localAddress of ['127.0.0.1', '127.0.0.2']) {
      const replayer = await StreamClient.connect(port, { localAddress });
      expect(await subscribeOutcome(replayer, subscribe)).toMatchObject({ code: 4001, message: expect.stringMatching(/restarted/) });
      replayer.socket.terminate();
    }
  });

  it('accepts requests and subscriptions signed after the restart', async () => {
    const client = await StreamClient.connect(port);
    expect(await subscribeOutcome(client, signedSubscribe(account, 7, Date.now(), 5000))).toBeUndefined();
    const fresh = await signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { ...ORDER, price: '12' });
    expect(fresh.status).toBe(200);
    const update = await client.waitFor((m) => m.stream === 'account.orderUpdate' && m.data.i === fresh.body.id, 'the new order on the fresh subscription');
    expect(update.data.e).toBe('orderAccepted');
    const open = await signed(server.base, account, 'GET', '/api/v1/orders', 'orderQueryAll');
    expect(open.body.map((o: any) => o.id)).toContain(fresh.body.id);
    client.socket.terminate();
  });
});
