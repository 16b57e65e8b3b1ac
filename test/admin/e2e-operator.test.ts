// Operator commands, batch execution and the quote-quantity stream/REST agreement end to end: the
// real server as a child process (speed bump 0 so answers come at once), accounts and operator
// commands through the admin CLI as an operator runs them, signed requests over HTTP, and the
// account.orderUpdate stream over a WebSocket.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminCli,
  createTestAccount,
  get,
  removeDir,
  sign,
  signed,
  startServer,
  tempDataDir,
  waitUntil,
  type RunningServer,
  type TestAccount,
} from '../helpers/server.js';
import { StreamClient } from '../helpers/stream-client.js';

type Item = Record<string, string | number | boolean>;

/** The batch signing string (wire reference §2.3), built independently of the server's code. */
function batchSigningString(items: Item[], timestamp: number, window: number): string {
  const parts = items.map((item) => ['instruction=orderExecute', ...Object.keys(item).sort().map((k) => `${k}=${String(item[k])}`)].join('&'));
  return [...parts, `timestamp=${timestamp}`, `window=${window}`].join('&');
}

async function postBatch(base: string, account: TestAccount, items: unknown[], signedItems: Item[] = items as Item[]) {
  const timestamp = Date.now();
  const response = await fetch(`${base}/api/v1/orders`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'X-API-Key': account.publicKey,
      'X-Signature': sign(account.secretKey, batchSigningString(signedItems, timestamp, 5000)),
      'X-Timestamp': String(timestamp),
      'X-Window': '5000',
    },
    body: JSON.stringify(items),
  });
  return { status: response.status, body: (await response.json()) as any };
}

describe('operator commands, batches and market order streams through the whole path', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let maker: TestAccount;
  let taker: TestAccount;

  const order = (account: TestAccount, body: Item) =>
    signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { symbol: 'SOL_USDC', ...body });
  const openOrders = async (account: TestAccount) => (await signed(server.base, account, 'GET', '/api/v1/orders', 'orderQueryAll', { symbol: 'SOL_USDC' })).body;
  const bookState = async (symbol: string) => (await get(server.base, `/api/v1/market?symbol=${symbol}`)).body.orderBookState;

  beforeAll(async () => {
    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '2', '--speed-bump-ms', '0'] });
    maker = await createTestAccount(server.adminPort, ['SOL=100', 'USDC=10000']);
    taker = await createTestAccount(server.adminPort, ['SOL=100', 'USDC=10000']);
  });

  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  it('the operator changes a market\'s order book state; markets shows it; orders are refused as it says', async () => {
    expect(await bookState('SOL_USDC')).toBe('Open');
    const resting = await order(maker, { side: 'Bid', orderType: 'Limit', price: '10', quantity: '1', postOnly: true });
    expect(resting.body.status).toBe('New');

    expect(await adminCli(server.adminPort, ['set-market-state', '--symbol', 'SOL_USDC', '--state', 'PostOnly']))
      .toEqual({ symbol: 'SOL_USDC', orderBookState: 'PostOnly', cancelledOrders: 0 });
    // Each front thread learns it from the engine's event and answers from its own read model;
    // this reads the one front that serves the client's keep-alive connection.
    await waitUntil(async () => ((await bookState('SOL_USDC')) === 'PostOnly' ? true : undefined), 'PostOnly on GET market');
    const markets = (await get(server.base, '/api/v1/markets')).body;
    expect(markets.map((m: any) => [m.symbol, m.orderBookState])).toEqual([['SOL_USDC', 'PostOnly'], ['BTC_USDC', 'Open'], ['ETH_USDC', 'Open'], ['SOL_USDC_PERP', 'Open'], ['BTC_USDC_PERP', 'Open'], ['ETH_USDC_PERP', 'Open']]);
    const taking = await order(taker, { side: 'Ask', orderType: 'Limit', price: '10', quantity: '1' });
    expect([taking.status, taking.body]).toEqual([400, { code: 'INVALID_ORDER', message: 'Order book accepts post-only orders only' }]);

    await adminCli(server.adminPort, ['set-market-state', '--symbol', 'SOL_USDC', '--state', 'CancelOnly']);
    const refused = await order(maker, { side: 'Bid', orderType: 'Limit', price: '9', quantity: '1', postOnly: true });
    expect([refused.status, refused.body.code, refused.body.message]).toEqual([400, 'INVALID_ORDER', 'Order book is cancel-only']);
    expect((await openOrders(maker)).map((o: any) => o.id)).toEqual([resting.body.id]);

    const closed = await adminCli(server.adminPort, ['set-market-state', '--symbol', 'SOL_USDC', '--state', 'Closed']);
    expect(closed).toEqual({ symbol: 'SOL_USDC', orderBookState: 'Closed', cancelledOrders: 1 });
    expect(await openOrders(maker)).toEqual([]);
    const capital = (await signed(server.base, maker, 'GET', '/api/v1/capital', 'balanceQuery')).body;
    expect(capital.USDC).toEqual({ available: '10000', locked: '0', staked: '0' });
    const whileClosed = await order(taker, { side: 'Ask', orderType: 'Market', quantity: '1' });
    expect([whileClosed.status, whileClosed.body.code]).toEqual([400, 'INVALID_ORDER']);

    await expect(adminCli(server.adminPort, ['set-market-state', '--symbol', 'SOL_USDC', '--state', 'Paused'])).rejects.toThrow(/orderBookState must be one of/);
    await expect(adminCli(server.adminPort, ['set-market-state', '--symbol', 'NOPE_USDC', '--state', 'Open'])).rejects.toThrow(/INVALID_MARKET/);
    await adminCli(server.adminPort, ['set-market-state', '--symbol', 'SOL_USDC', '--state', 'Open']);
    await waitUntil(async () => ((await bookState('SOL_USDC')) === 'Open' ? true : undefined), 'Open again');
  });

  it('create-account with a deposit the server refuses still shows the created account and its secret', async () => {
    const failure = await adminCli(server.adminPort, ['create-account', '--deposit', 'USDC=5', '--deposit', 'FOO=1']).then(() => null, (error: Error) => error.message);
    expect(failure).toContain('account created, but the deposit FOO=1 failed');
    const account = JSON.parse(failure!.slice(failure!.indexOf('account: {') + 'account: '.length).split('\n')[0]);
    expect(account).toMatchObject({ accountId: expect.any(Number), publicKey: expect.any(String), secretKey: expect.any(String), deposits: [{ asset: 'USDC', quantity: '5' }] });
    // The account is real: its fee rates can be read.
    expect(await adminCli(server.adminPort, ['get-fee-rates', '--account', String(account.accountId)])).toMatchObject({ accountId: account.accountId });
  });

  it('the operator sets an account\'s fee rates; later fills use them', async () => {
    expect(await adminCli(server.adminPort, ['get-fee-rates', '--account', String(taker.accountId)]))
      .toEqual({ accountId: taker.accountId, makerFeeBps: 2, takerFeeBps: 5 });
    expect(await adminCli(server.adminPort, ['set-fee-rates', '--account', String(taker.accountId), '--maker-bps', '0', '--taker-bps', '100']))
      .toEqual({ accountId: taker.accountId, makerFeeBps: 0, takerFeeBps: 100 });
    await expect(adminCli(server.adminPort, ['set-fee-rates', '--account', '999', '--maker-bps', '0', '--taker-bps', '1'])).rejects.toThrow(/UNAUTHORIZED/);
    await expect(adminCli(server.adminPort, ['set-fee-rates', '--account', '1', '--maker-bps', '10001', '--taker-bps', '1'])).rejects.toThrow(/basis points/);

    expect((await order(maker, { side: 'Ask', orderType: 'Limit', price: '20', quantity: '1', postOnly: true })).body.status).toBe('New');
    const before = (await signed(server.base, taker, 'GET', '/api/v1/capital', 'balanceQuery')).body.SOL.available;
    const buy = await order(taker, { side: 'Bid', orderType: 'Limit', price: '20', quantity: '1' });
    expect(buy.body.status).toBe('Filled');
    const after = (await signed(server.base, taker, 'GET', '/api/v1/capital', 'balanceQuery')).body.SOL.available;
    // 1 SOL less 1% taker fee.
    expect([before, after]).toEqual(['100', '100.99']);
  });

  it('a quote-quantity market order: its last stream event and the REST answer both say Filled', async () => {
    const stream = await StreamClient.connect(server.port);
    try {
      stream.subscribeSigned(taker, ['account.orderUpdate.SOL_USDC']);
      stream.send({ method: 'SUBSCRIBE', params: ['nonsense.stream'] });
      await waitUntil(() => stream.find((m) => m.error?.code === 4006), 'subscription round trip');
      // Prices inside the band around the last trade (20).
      for (const [price, quantity] of [['21', '1'], ['22', '5']]) {
        expect((await order(maker, { side: 'Ask', orderType: 'Limit', price, quantity, postOnly: true })).body.status).toBe('New');
      }
      // 1 SOL at 21 costs 21; the 29 left buy 1.31 SOL at 22 (28.82); 0.18 USDC buys no 0.01 lot.
      const buy = await order(taker, { side: 'Bid', orderType: 'Market', quoteQuantity: '50' });
      expect(buy.body).toMatchObject({ status: 'Filled', executedQuantity: '2.31', executedQuoteQuantity: '49.82' });
      const events = await waitUntil(() => {
        const mine = stream.messages.filter((m) => m.data?.i === buy.body.id);
        return mine.length >= 3 ? mine.map((m) => [m.data.e, m.data.X]) : undefined;
      }, 'the order\'s stream events');
      expect(events).toEqual([['orderAccepted', 'New'], ['orderFill', 'PartiallyFilled'], ['orderFill', 'Filled']]);
    } finally {
      stream.close();
    }
  });

  it('executes a batch: one entry per item in item order, Ok orders and Err entries', async () => {
    const items: Item[] = [
      { symbol: 'SOL_USDC', side: 'Bid', orderType: 'Limit', price: '17', quantity: '1', postOnly: true, clientId: 11 },
      { symbol: 'SOL_USDC', side: 'Bid', orderType: 'Limit', price: '17.001', quantity: '1' },
      { symbol: 'NOPE_USDC', side: 'Bid', orderType: 'Limit', price: '17', quantity: '1' },
      { symbol: 'SOL_USDC', side: 'Bid', orderType: 'Limit', price: '17', quantity: '100000' },
      { symbol: 'SOL_USDC', side: 'Ask', orderType: 'Limit', price: '23', quantity: '2', postOnly: true },
    ];
    const batch = await postBatch(server.base, maker, items);
    expect(batch.status).toBe(200);
    expect(batch.body).toHaveLength(5);
    expect(batch.body[0]).toMatchObject({ operation: 'Ok', orderType: 'Limit', side: 'Bid', price: '17', quantity: '1', clientId: 11, status: 'New' });
    expect(batch.body[1]).toEqual({ operation: 'Err', code: 'INVALID_PRICE', message: expect.stringMatching(/decimal/i) });
    expect(batch.body[2]).toMatchObject({ operation: 'Err', code: 'INVALID_MARKET' });
    expect(batch.body[3]).toEqual({ operation: 'Err', code: 'INSUFFICIENT_FUNDS', message: 'Insufficient funds' });
    expect(batch.body[4]).toMatchObject({ operation: 'Ok', side: 'Ask', price: '23', status: 'New' });
    const open = (await openOrders(maker)).map((o: any) => o.id);
    expect(open).toEqual(expect.arrayContaining([batch.body[0].id, batch.body[4].id]));
    const openBefore = open.length;

    // A signature over other items, an empty batch and an oversized one are refused whole.
    const tampered = await postBatch(server.base, maker, items.slice(0, 1), [{ ...items[0], price: '16' }]);
    expect([tampered.status, tampered.body.code]).toEqual([401, 'INVALID_SIGNATURE']);
    expect((await postBatch(server.base, maker, [])).status).toBe(400);
    const tooMany = Array.from({ length: 51 }, () => items[0]);
    expect((await postBatch(server.base, maker, tooMany)).body).toEqual({ code: 'INVALID_CLIENT_REQUEST', message: 'A batch holds 1 to 50 orders' });
    const notObjects = await postBatch(server.base, maker, [items[0], 7] as unknown[], [items[0]]);
    expect([notObjects.status, notObjects.body.code]).toEqual([401, 'INVALID_SIGNATURE']);
    expect((await openOrders(maker)).length).toBe(openBefore);
  });

  it('order book states and fee rates survive a restart (journaled commands, replayed)', async () => {
    await adminCli(server.adminPort, ['set-market-state', '--symbol', 'ETH_USDC', '--state', 'LimitOnly']);
    await server.stop();
    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '2', '--speed-bump-ms', '0'] });
    expect(await bookState('ETH_USDC')).toBe('LimitOnly');
    expect(await bookState('SOL_USDC')).toBe('Open');
    expect(await adminCli(server.adminPort, ['get-fee-rates', '--account', String(taker.accountId)]))
      .toEqual({ accountId: taker.accountId, makerFeeBps: 0, takerFeeBps: 100 });
    const refused = await signed(server.base, taker, 'POST', '/api/v1/order', 'orderExecute', { symbol: 'ETH_USDC', side: 'Bid', orderType: 'Market', quantity: '0.01' });
    expect([refused.status, refused.body.message]).toEqual([400, 'Order book accepts limit orders only']);
  });
});
