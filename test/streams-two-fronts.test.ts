// Depth synchronisation with two front threads. Every front thread keeps its own copy of the
// books from the outbound ring and serves both REST depth and the depth stream from it, so a
// client may take its snapshot from one front and its stream from the other. This test opens
// eight WebSocket connections and takes every REST snapshot on a fresh TCP connection; the kernel
// spreads connections to the shared port over both fronts by their addresses (SO_REUSEPORT), so
// both fronts serve some of them (the chance that sixteen connections all land on one front is
// 2^-15). Every snapshot + stream pair must rebuild exactly the book every front reports at the end.

import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestAccount, removeDir, signed, startServer, tempDataDir, waitUntil, type RunningServer, type TestAccount,
} from './helpers/server.js';
import { placeOrder } from './helpers/market-trades.js';
import { BookReplica, StreamClient, assertContiguous } from './helpers/stream-client.js';

interface Depth { bids: string[][]; asks: string[][]; lastUpdateId: string }

/** GET depth on a new TCP connection (no keep-alive pool), so successive calls may reach either front. */
function depthOnFreshConnection(port: number): Promise<Depth> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/api/v1/depth?symbol=SOL_USDC', agent: false, headers: { connection: 'close' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { text += chunk; });
      res.on('end', () => {
        try {
          expect(res.statusCode).toBe(200);
          resolve(JSON.parse(text) as Depth);
        } catch (error) {
          reject(error);
        }
      });
    });
    req.on('error', reject);
    req.end();
  });
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

  it('rebuilds the same book from any front\'s snapshot and any front\'s stream', async () => {
    for (let i = 0; i < 8; i++) {
      const client = await StreamClient.connect(server.port, { compress: i % 2 === 1 });
      client.subscribe(['depth.SOL_USDC']);
      clients.push(client);
    }
    for (const client of clients) await client.waitFor((m) => m.stream === 'depth.SOL_USDC', 'first depth message');

    const ids: string[] = [];
    const snapshots: Depth[] = [];
    const prices = ['30', '31', '29.5', '32', '28', '30.5'];
    for (let i = 0; i < prices.length; i++) {
      const side = Number(prices[i]) >= 30 ? 'Ask' : 'Bid';
      const order = await placeOrder(server, maker, { side, orderType: 'Limit', price: prices[i], quantity: String(i + 1), postOnly: 'true' });
      ids.push(order.id);
      snapshots.push(await depthOnFreshConnection(server.port)); // one snapshot per step, mid-stream
    }
    const cancelled = await signed(server.base, maker, 'DELETE', '/api/v1/order', 'orderCancel', { symbol: 'SOL_USDC', orderId: ids[1] });
    expect(cancelled.status).toBe(200);
    await placeOrder(server, taker, { side: 'Bid', orderType: 'Limit', price: '30.5', quantity: '2', timeInForce: 'IOC' });
    await placeOrder(server, taker, { side: 'Ask', orderType: 'Market', quantity: '1.5' });

    // Every front reports the same final book once it has seen the last update.
    const reference = await depthOnFreshConnection(server.port);
    const finals: Depth[] = [];
    for (let i = 0; i < 8; i++) {
      finals.push(await waitUntil(async () => {
        const d = await depthOnFreshConnection(server.port);
        return Number(d.lastUpdateId) >= Number(reference.lastUpdateId) ? d : undefined;
      }, 'a front that has seen the last update'));
    }
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
