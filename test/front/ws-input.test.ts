// WebSocket request handling against hostile or careless clients (src/front/streams/connection.ts): a private
// subscribe signature replayed from another address is refused while the same client may reuse it,
// a message naming more streams than a connection may hold gets one error frame and changes
// nothing, and `id` is echoed only when it is a short string or a number.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestAccount, removeDir, sign, startServer, tempDataDir, type RunningServer, type TestAccount,
} from '../helpers/server.js';
import { placeOrder } from '../helpers/market-trades.js';
import { StreamClient } from '../helpers/stream-client.js';

describe('WebSocket requests', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let account: TestAccount;
  const clients: StreamClient[] = [];
  const connect = async (localAddress?: string) => {
    const client = await StreamClient.connect(server.port, { localAddress });
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    // Two front threads: the replayed signature may arrive on either.
    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '2', '--speed-bump-ms', '0'] });
    account = await createTestAccount(server.adminPort, ['SOL=100', 'USDC=10000']);
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await server?.stop();
    removeDir(dataDir);
  });

  it('refuses a subscribe signature replayed from another address; the same address may reuse it', async () => {
    const timestamp = Date.now();
    const signature = [account.publicKey, sign(account.secretKey, `instruction=subscribe&timestamp=${timestamp}&window=60000`), String(timestamp), '60000'];
    const subscribe = { method: 'SUBSCRIBE', params: ['account.orderUpdate', 'depth.SOL_USDC'], signature };
    const owner = await connect('127.0.0.1');
    owner.send(subscribe);
    await owner.waitFor((m) => m.stream === 'depth.SOL_USDC', 'the owner subscribed');
    // Several connections from the same address (ccxt's same-millisecond subscribes) are fine.
    const sameHost = await Promise.all([connect('127.0.0.1'), connect('127.0.0.1'), connect('127.0.0.1')]);
    for (const c of sameHost) c.send(subscribe);
    // From another address the private stream is refused; its public stream still subscribes.
    const eavesdropper = await connect('127.0.0.2');
    eavesdropper.send(subscribe);
    const refused = await eavesdropper.waitFor((m) => m.error, 'the replay refused');
    expect(refused).toEqual({ id: null, error: { code: 4001, message: 'Signature already used from another address' } });
    await eavesdropper.waitFor((m) => m.stream === 'depth.SOL_USDC', 'the public stream of the same message');

    const order = await placeOrder(server, account, { side: 'Bid', orderType: 'Limit', price: '20', quantity: '1', postOnly: 'true' });
    const accepted = (m: any) => m.stream === 'account.orderUpdate' && m.data.e === 'orderAccepted' && m.data.i === order.id;
    for (const c of [owner, ...sameHost]) await c.waitFor(accepted, 'orderAccepted on a connection of the owner address');
    // Once the order shows on the eavesdropper's depth stream, its private update would have too.
    await eavesdropper.waitFor((m) => m.stream === 'depth.SOL_USDC' && m.data.b.some(([price]: string[]) => price === '20.00'), 'the order on depth');
    expect(eavesdropper.messages.some((m) => m.stream?.startsWith('account.'))).toBe(false);
    expect(eavesdropper.messages.filter((m) => m.error)).toHaveLength(1);
  });

  it('answers a message naming more streams than a connection may hold with one error frame, subscribing none', async () => {
    const client = await connect();
    const tooMany = ['depth.ETH_USDC', ...Array.from({ length: 99 }, (_, i) => `nope.${i}`), 1, null, { a: 1 }];
    client.send({ method: 'SUBSCRIBE', params: tooMany });
    client.send({ method: 'UNSUBSCRIBE', params: tooMany });
    // A valid subscription afterwards: its quiet-book messages arrive every tick, and ETH_USDC's
    // would arrive on the same ticks had the first message subscribed it.
    client.subscribe(['depth.BTC_USDC']);
    await client.waitFor((m) => client.on('depth.BTC_USDC').length >= 3, 'three depth.BTC_USDC messages');
    expect(client.on('depth.ETH_USDC')).toEqual([]);
    expect(client.messages.filter((m) => m.error)).toEqual([
      { id: null, error: { code: 4005, message: 'Too many subscriptions (at most 64)' } },
      { id: null, error: { code: 4000, message: 'Too many streams in one message (at most 64)' } },
    ]);
  });

  it('echoes a numeric or short string id, and null for anything else', async () => {
    const client = await connect();
    const ids = [7, 'req-1', 'x'.repeat(65), { nested: [[[1]]] }, [1, 2], true];
    for (const id of ids) client.send({ method: 'SUBSCRIBE', params: ['nope'], id });
    const errors = await client.waitFor(() => client.messages.filter((m) => m.error).length === ids.length, 'one error per request')
      .then(() => client.messages.filter((m) => m.error));
    expect(errors.map((m) => m.id)).toEqual([7, 'req-1', null, null, null, null]);
    expect(errors.every((m) => m.error.code === 4006)).toBe(true);
  });
});
