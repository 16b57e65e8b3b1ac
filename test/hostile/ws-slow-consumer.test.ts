// A WebSocket client that subscribes to busy streams and then never reads again is cut off by the
// server, while a client that keeps reading receives every trade before and after. The slow
// client is a raw TCP socket speaking just enough WebSocket (handshake without compression,
// masked text frames out); after its subscription is confirmed it stops reading for good, so
// nothing ever drains on its side: the server must close it on its own (the grace period for a
// peer that reads nothing), not on a drain. Whether the server closed it is read from the kernel's
// socket table: the server's end of that connection leaves ESTABLISHED (a client that does not
// read cannot see the close itself). The idle timeout is set far beyond the test, so it is not
// what closes the connection. Load is bounded: rounds of 400 resting asks swept by one
// market order, until the server reports the slow consumer, at most MAX_ROUNDS.

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestAccount, removeDir, sign, startServer, tempDataDir, waitUntil, type RunningServer, type TestAccount,
} from '../helpers/server.js';
import { placeOrder } from '../helpers/market-trades.js';
import { StreamClient } from '../helpers/stream-client.js';

const MAX_ROUNDS = 40;
const ASKS_PER_ROUND = 400;

/** A WebSocket client on a bare socket, which can stop reading for good. */
class RawWebSocket {
  private received = Buffer.alloc(0);
  private reading = true;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      if (this.reading) this.received = Buffer.concat([this.received, chunk]);
    });
  }

  static async open(port: number): Promise<RawWebSocket> {
    const socket = connect({ host: '127.0.0.1', port });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const client = new RawWebSocket(socket);
    socket.write([
      'GET / HTTP/1.1', `Host: 127.0.0.1:${port}`, 'Upgrade: websocket', 'Connection: Upgrade',
      `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`, 'Sec-WebSocket-Version: 13', '', '',
    ].join('\r\n'));
    await waitUntil(() => (client.text().includes('\r\n\r\n') ? true : undefined), 'the WebSocket handshake answer');
    expect(client.text().split('\r\n')[0]).toBe('HTTP/1.1 101 Switching Protocols');
    expect(client.text().toLowerCase()).not.toContain('permessage-deflate');
    return client;
  }

  /** Everything read so far, as latin1 text (frames unparsed: enough to look for a stream name). */
  text(): string {
    return this.received.toString('latin1');
  }

  /** Sends one masked text frame, as a client must. */
  sendText(message: string): void {
    const payload = Buffer.from(message, 'utf8');
    const length = payload.length < 126 ? Buffer.from([0x80 | payload.length]) : Buffer.from([0x80 | 126, payload.length >> 8, payload.length & 0xff]);
    const mask = randomBytes(4);
    const masked = Buffer.from(payload.map((byte, i) => byte ^ mask[i % 4]));
    this.socket.write(Buffer.concat([Buffer.from([0x81]), length, mask, masked]));
  }

  /** Never reads again: the socket stays paused, so the kernel's buffers fill, then the server's. */
  stopReading(): void {
    this.reading = false;
    this.socket.removeAllListeners('data');
    this.socket.pause();
  }
}

/** The kernel's state (hex, '01' is ESTABLISHED) of the TCP socket localPort → remotePort, if any. */
function tcpState(localPort: number, remotePort: number): string | undefined {
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 4) continue;
    const local = parseInt(fields[1].split(':')[1], 16);
    const remote = parseInt(fields[2].split(':')[1], 16);
    if (local === localPort && remote === remotePort) return fields[3];
  }
  return undefined;
}

describe('a WebSocket consumer that never reads again', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let maker: TestAccount;
  let taker: TestAccount;
  let slow: RawWebSocket | undefined;
  let fast: StreamClient | undefined;

  beforeAll(async () => {
    // The longest idle timeout, so that a close within the test is the slow-consumer cut-off and
    // not the idle timeout of a peer that answers no ping.
    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '1', '--speed-bump-ms', '0', '--ws-idle-timeout-s', '900'] });
    maker = await createTestAccount(server.adminPort, ['SOL=1000', 'USDC=100000']);
    taker = await createTestAccount(server.adminPort, ['SOL=1000', 'USDC=100000']);
  });
  afterAll(async () => {
    slow?.socket.destroy();
    fast?.close();
    await server?.stop();
    removeDir(dataDir);
  });

  it('is closed by the server while a reading subscriber gets every trade', { timeout: 600_000 }, async () => {
    slow = await RawWebSocket.open(server.port);
    const timestamp = Date.now();
    const signature = sign(maker.secretKey, `instruction=subscribe&timestamp=${timestamp}&window=5000`);
    slow.sendText(JSON.stringify({
      method: 'SUBSCRIBE',
      params: ['trade.SOL_USDC', 'depth.SOL_USDC', 'depth.200ms.SOL_USDC', 'bookTicker.SOL_USDC', 'account.orderUpdate', 'account.balanceUpdate'],
      signature: [maker.publicKey, signature, String(timestamp), '5000'],
    }));
    fast = await StreamClient.connect(server.port);
    fast.subscribe(['trade.SOL_USDC', 'depth.SOL_USDC']);
    // Quiet-book depth messages come every tick: one on the raw socket confirms the subscription.
    await waitUntil(() => (slow!.text().includes('"stream":"depth.SOL_USDC"') ? true : undefined), 'the slow client subscribed');
    await fast.waitFor((m) => m.stream === 'depth.SOL_USDC', 'the fast client subscribed');
    const clientPort = slow.socket.localPort!;
    expect(tcpState(server.port, clientPort)).toBe('01');
    slow.stopReading();

    const reported = () => server.lines.some((l) => l.includes('closing slow WebSocket consumer'));
    let traded = 0;
    for (let round = 0; round < MAX_ROUNDS && !reported(); round++) {
      for (let chunk = 0; chunk < ASKS_PER_ROUND; chunk += 50) {
        await Promise.all(Array.from({ length: 50 }, (_, i) => placeOrder(server, maker, {
          side: 'Ask', orderType: 'Limit', price: (22 + (chunk + i) / 100).toFixed(2), quantity: '0.01', postOnly: 'true',
        })));
      }
      const sweep = await placeOrder(server, taker, { side: 'Bid', orderType: 'Market', quantity: String(ASKS_PER_ROUND / 100) });
      expect(sweep.executedQuantity).toBe(String(ASKS_PER_ROUND / 100));
      traded += ASKS_PER_ROUND;
    }
    expect(reported(), `no slow consumer after ${MAX_ROUNDS} rounds`).toBe(true);
    await waitUntil(() => (fast!.on('trade.SOL_USDC').length === traded ? true : undefined), 'every trade on the reading client');

    // The client never reads again, so only the server can end the connection.
    await waitUntil(() => (tcpState(server.port, clientPort) !== '01' ? true : undefined), 'the server closing the connection that never reads', 180_000);

    // The reading client is unaffected and still served.
    await placeOrder(server, taker, { side: 'Bid', orderType: 'Limit', price: '21', quantity: '0.1', postOnly: 'true' });
    await placeOrder(server, maker, { side: 'Ask', orderType: 'Market', quantity: '0.1' });
    await waitUntil(() => (fast!.on('trade.SOL_USDC').length === traded + 1 ? true : undefined), 'a later trade on the reading client');
    expect(fast.closeCode).toBeNull();
  });
});
