// Depth synchronisation with two front threads. Every front thread keeps its own copy of the
// books from the outbound ring and serves both REST depth and the depth stream from it, so a
// client may take its snapshot from one front and its stream from the other. The kernel spreads
// connections to the shared port over both fronts (SO_REUSEPORT); the test reads which front
// serves each connection (test/helpers/front-threads.ts) and opens WebSocket connections until
// both fronts serve some, and takes each mid-stream REST snapshot from each front. Every
// snapshot + stream pair must rebuild exactly the book that both fronts report at the end.

import { Agent, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestAccount, removeDir, signed, startServer, tempDataDir, waitUntil, type RunningServer, type TestAccount,
} from '../helpers/server.js';
import { placeOrder } from '../helpers/market-trades.js';
import { BookReplica, StreamClient, assertContiguous } from '../helpers/stream-client.js';
import { frontOf } from '../helpers/front-threads.js';

interface Depth { bids: string[][]; asks: string[][]; lastUpdateId: string }

/** Connections tried before concluding that the kernel never picks one of the fronts. */
const MAX_TRIES = 40;

/** GET depth on a new TCP connection, and the front that answered it (read while it is open). */
function depthOnFreshConnection(server: RunningServer): Promise<{ depth: Depth; front: string }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  return new Promise<{ depth: Depth; front: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, path: '/api/v1/depth?symbol=SOL_USDC', agent }, (res) => {
      const clientPort = res.socket.localPort!;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { text += chunk; });
      res.on('end', () => {
        try {
          expect(res.statusCode).toBe(200);
          resolve({ depth: JSON.parse(text) as Depth, front: frontOf(server.child.pid!, server.port, clientPort) });
        } catch (error) {
          reject(error);
        }
      });
    });
    req.on('error', reject);
    req.end();
  }).finally(() => agent.destroy());
}

/** One depth snapshot from each of the two fronts (fresh connections until both answered). */
async function depthFromBothFronts(server: RunningServer): Promise<Depth[]> {
  const byFront = new Map<string, Depth>();
  for (let i = 0; i < MAX_TRIES && byFront.size < 2; i++) {
    const { depth, front } = await depthOnFreshConnection(server);
    if (!byFront.has(front)) byFront.set(front, depth);
  }
  expect(byFront.size, 'depth answered by both fronts').toBe(2);
  return [...byFront.values()];
}

describe('depth synchronisation across two front threads', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let maker: TestAccount;
  let taker: TestAccount;
  const clients: StreamClient[] = [];

  beforeAll(async () => {
    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '2', '--speed-bump-ms', '0'] });
    maker = await createTestAccount(server.adminPort, ['SOL=1000', 'USDC=100000']);
    taker = await createTestAccount(server.adminPort, ['SOL=1000', 'USDC=100000']);
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await server?.stop();
    removeDir(dataDir);
  });

  it('rebuilds the same book from either front\'s snapshot and either front\'s stream', async () => {
    const streamFronts = new Set<string>();
    for (let i = 0; (i < 8 || streamFronts.size < 2) && i < MAX_TRIES; i++) {
      const client = await StreamClient.connect(server.port, { compress: i % 2 === 1 });
      streamFronts.add(frontOf(server.child.pid!, server.port, client.localPort));
      client.subscribe(['depth.SOL_USDC']);
      clients.push(client);
    }
    expect(streamFronts.size, 'streams served by both fronts').toBe(2);
    for (const client of clients) await client.waitFor((m) => m.stream === 'depth.SOL_USDC', 'first depth message');

    const ids: string[] = [];
    const snapshots: Depth[] = [];
    const prices = ['30', '31', '29.5', '32', '28', '30.5'];
    for (let i = 0; i < prices.length; i++) {
      const side = Number(prices[i]) >= 30 ? 'Ask' : 'Bid';
      const order = await placeOrder(server, maker, { side, orderType: 'Limit', price: prices[i], quantity: String(i + 1), postOnly: 'true' });
      ids.push(order.id);
      snapshots.push(...await depthFromBothFronts(server)); // one snapshot per step from each front, mid-stream
    }
    const cancelled = await signed(server.base, maker, 'DELETE', '/api/v1/order', 'orderCancel', { symbol: 'SOL_USDC', orderId: ids[1] });
    expect(cancelled.status).toBe(200);
    await placeOrder(server, taker, { side: 'Bid', orderType: 'Limit', price: '30.5', quantity: '2', timeInForce: 'IOC' });
    await placeOrder(server, taker, { side: 'Ask', orderType: 'Market', quantity: '1.5' });

    // Both fronts report the same final book once they have seen the last update.
    const reference = (await depthOnFreshConnection(server)).depth;
    const finals = await waitUntil(async () => {
      const both = await depthFromBothFronts(server);
      return both.every((d) => Number(d.lastUpdateId) >= Number(reference.lastUpdateId)) ? both : undefined;
    }, 'both fronts having seen the last update');
    for (const d of finals) expect(d).toMatchObject({ lastUpdateId: reference.lastUpdateId, bids: reference.bids, asks: reference.asks });
    expect(reference.asks.length + reference.bids.length).toBeGreaterThan(0);

    // Every stream, rebuilt from every snapshot, gives that book.
    for (const [c, client] of clients.entries()) {
      const messages = await waitUntil(() => {
        const got = client.on('depth.SOL_USDC');
        return got.length > 0 && got[got.length - 1].u >= Number(reference.lastUpdateId) ? got : undefined;
      }, `client ${c} up to ${reference.lastUpdateId}`);
      assertContiguous(messages);
      for (const snapshot of snapshots) {
        const replica = new BookReplica(snapshot);
        for (const m of messages) replica.apply(m);
        expect(replica.lastId, `client ${c}, snapshot ${snapshot.lastUpdateId}`).toBe(Number(reference.lastUpdateId));
        expect(replica.levels(), `client ${c}, snapshot ${snapshot.lastUpdateId}`).toEqual({ bids: reference.bids, asks: reference.asks });
      }
    }
  });
});
