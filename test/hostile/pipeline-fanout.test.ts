// Liveness of the pipeline under the largest outputs a command can produce. A command's outputs
// must all be in the outbound ring before the journal can make it durable, and front threads may
// release a record only once durable: a command whose outputs outnumber the ring's slots must still
// complete. The server runs here with the smallest rings the configuration allows (2 inbound and 2
// outbound slots) and with book and account limits small enough to reach each command kind's
// largest fan-out quickly: a cancel-all of an account's every order, a speed-bumped market order
// (activated by a Tick) sweeping a full book, closing a market with a full book, the open-orders
// query, the depth snapshot, and the commands whose outputs are few (account, deposit, fee rates
// and their query, single cancel and order query, withdrawal and its confirmation, dust
// conversion, snapshot). A second server with the default inbound ring and 512
// outbound slots takes concurrent cancel-alls of many accounts at once.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_MARKETS } from '../../src/config.js';
import {
  adminCli, createTestAccount, get, waitUntil, removeDir, signed, startServer, tempDataDir, type RunningServer, type TestAccount,
} from '../helpers/server.js';

const ORDERS_PER_ACCOUNT = 40;
/** Resting orders of a full book: the limit less the one slot an incoming taker order takes. */
const ORDERS_PER_BOOK = 2 * ORDERS_PER_ACCOUNT;

/**
 * Sends a request until the engine takes it: a 2-slot inbound ring is often full (the engine's own
 * timer commands take slots too), and a refusal (503, engine busy) changes nothing, so a client retries.
 */
async function taken<T extends { status: number }>(send: () => Promise<T>): Promise<T> {
  for (;;) {
    const response = await send();
    if (response.status !== 503) return response;
  }
}

/** An admin request through the same retry, its body parsed. */
async function admin(server: RunningServer, method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: any }> {
  return taken(async () => {
    const response = await fetch(`http://127.0.0.1:${server.adminPort}${path}`, body === undefined ? { method } : {
      method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  });
}

/** The admin command line through the same retry (it reports a refusal as TOO_MANY_REQUESTS and exits 1). */
async function cliTaken<T>(run: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await run();
    } catch (error) {
      if (!String((error as { stderr?: string }).stderr ?? error).includes('TOO_MANY_REQUESTS')) throw error;
    }
  }
}

/** Places `count` resting post-only orders for `account`, a few requests at a time. */
async function placeResting(server: RunningServer, account: TestAccount, side: 'Bid' | 'Ask', count: number, bidBase = 50): Promise<void> {
  const symbol = 'SOL_USDC';
  const indices = Array.from({ length: count }, (_, i) => i);
  const inFlight = 4;
  for (let start = 0; start < count; start += inFlight) {
    await Promise.all(indices.slice(start, start + inFlight).map(async (i) => {
      const price = side === 'Bid' ? String(bidBase + (i % 20)) : String(150 + (i % 20));
      const response = await taken(() => signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', {
        symbol, side, orderType: 'Limit', price, quantity: '0.1', postOnly: true,
      }));
      expect(response.status, response.text).toBe(200);
    }));
  }
}

async function openOrders(server: RunningServer, account: TestAccount, symbol = 'SOL_USDC'): Promise<unknown[]> {
  const response = await taken(() => signed(server.base, account, 'GET', '/api/v1/orders', 'orderQueryAll', { symbol }));
  expect(response.status, response.text).toBe(200);
  return response.body as unknown[];
}

describe('pipeline liveness at the largest fan-out', () => {
  const dirs: string[] = [];
  const servers: RunningServer[] = [];
  afterAll(async () => {
    for (const server of servers) await server.stop();
    for (const dir of dirs) removeDir(dir);
  });

  it('every command kind completes through 2-slot rings at its largest fan-out', async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    const configFile = join(dataDir, 'markets.json');
    writeFileSync(configFile, JSON.stringify({
      ...DEFAULT_MARKETS,
      limits: { maxOpenOrdersPerAccount: ORDERS_PER_ACCOUNT, maxOrdersPerBook: ORDERS_PER_BOOK + 1 },
    }));
    const server = await startServer({
      dataDir: join(dataDir, 'data'),
      args: ['--no-demo', '--inbound-slots', '2', '--outbound-slots', '2', '--config', configFile],
    });
    servers.push(server);
    const makerA = await cliTaken(() => createTestAccount(server.adminPort, ['USDC=100000', 'SOL=1000']));
    const makerB = await cliTaken(() => createTestAccount(server.adminPort, ['USDC=100000', 'SOL=1000']));
    const taker = await cliTaken(() => createTestAccount(server.adminPort, ['USDC=1000000']));
    const dusty = await cliTaken(() => createTestAccount(server.adminPort, ['SOL=0.001']));

    // Cancel-all of an account's every order: one command, ORDERS_PER_ACCOUNT cancellations.
    await placeResting(server, makerA, 'Bid', ORDERS_PER_ACCOUNT);
    expect((await openOrders(server, makerA)).length).toBe(ORDERS_PER_ACCOUNT);
    const cancelled = await taken(() => signed(server.base, makerA, 'DELETE', '/api/v1/orders', 'orderCancelAll', { symbol: 'SOL_USDC' }));
    expect(cancelled.status, cancelled.text).toBe(200);
    expect((cancelled.body as unknown[]).length).toBe(ORDERS_PER_ACCOUNT);
    expect((await openOrders(server, makerA)).length).toBe(0);

    // A full book of asks, swept by one market order that the speed bump delays (a Tick activates it).
    await placeResting(server, makerA, 'Ask', ORDERS_PER_ACCOUNT);
    await placeResting(server, makerB, 'Ask', ORDERS_PER_ACCOUNT);
    const depth = await taken(() => get(server.base, '/api/v1/depth?symbol=SOL_USDC'));
    expect(depth.status).toBe(200);
    expect((depth.body.asks as unknown[]).length).toBe(20);
    const sweep = await taken(() => signed(server.base, taker, 'POST', '/api/v1/order', 'orderExecute', {
      symbol: 'SOL_USDC', side: 'Bid', orderType: 'Market', quantity: String(ORDERS_PER_BOOK * 0.1),
    }));
    expect(sweep.status, sweep.text).toBe(200);
    expect(sweep.body.executedQuantity).toBe(String(ORDERS_PER_BOOK * 0.1));
    expect((await openOrders(server, makerA)).length + (await openOrders(server, makerB)).length).toBe(0);

    // Closing a market with a full book cancels every order in one command (bids inside the price
    // band around the sweep's last price).
    await placeResting(server, makerA, 'Bid', ORDERS_PER_ACCOUNT, 130);
    await placeResting(server, makerB, 'Ask', ORDERS_PER_ACCOUNT);
    const close = await admin(server, 'POST', '/admin/markets/state', { symbol: 'SOL_USDC', orderBookState: 'Closed' });
    expect(close.status).toBe(200);
    expect(close.body.cancelledOrders).toBe(ORDERS_PER_BOOK);

    // Commands with few outputs pass the same rings.
    const fees = await admin(server, 'POST', '/admin/accounts/fees', { accountId: makerA.accountId, makerFeeBps: 1, takerFeeBps: 3 });
    expect(fees.status).toBe(200);
    const snapshot = await admin(server, 'POST', '/admin/snapshot');
    expect(snapshot.status).toBe(200);
    // Dust valued at the guarded reference (the sweep's first trade, 150): 0.001 × 150 × 95 %,
    // paid from the makers' fees of the sweep.
    const dust = await taken(() => signed(server.base, dusty, 'POST', '/api/v1/account/convertDust', 'convertDust', { symbol: 'SOL' }));
    expect(dust.status, dust.text).toBe(200);
    const dustBalances = (await taken(() => signed(server.base, dusty, 'GET', '/api/v1/capital', 'balanceQuery'))).body;
    expect([Number(dustBalances.SOL.available), Number(dustBalances.USDC.available)]).toEqual([0, 0.1425]);
    // One order placed, queried and cancelled by id; an account's fee rates queried.
    const reopen = await admin(server, 'POST', '/admin/markets/state', { symbol: 'SOL_USDC', orderBookState: 'Open' });
    expect(reopen.status).toBe(200);
    const one = await taken(() => signed(server.base, makerA, 'POST', '/api/v1/order', 'orderExecute', {
      symbol: 'SOL_USDC', side: 'Bid', orderType: 'Limit', price: '140', quantity: '0.1', postOnly: true,
    }));
    expect(one.status, one.text).toBe(200);
    const queried = await taken(() => signed(server.base, makerA, 'GET', '/api/v1/order', 'orderQuery', { symbol: 'SOL_USDC', orderId: one.body.id }));
    expect(queried.body.id).toBe(one.body.id);
    const single = await taken(() => signed(server.base, makerA, 'DELETE', '/api/v1/order', 'orderCancel', { symbol: 'SOL_USDC', orderId: one.body.id }));
    expect(single.body.status).toBe('Cancelled');
    const rates = await admin(server, 'GET', `/admin/accounts/fees?accountId=${makerA.accountId}`);
    expect(rates.body).toEqual({ accountId: makerA.accountId, makerFeeBps: 1, takerFeeBps: 3 });
    // A withdrawal to a two-factor-exempt address, confirmed by the simulated chain (a second command).
    const address = 'So1anaDestinationAddress1111111111111111111';
    await cliTaken(() => adminCli(server.adminPort, ['add-withdrawal-address', '--account', String(taker.accountId), '--blockchain', 'Solana', '--address', address]));
    const withdrawal = await taken(() => signed(server.base, taker, 'POST', '/wapi/v1/capital/withdrawals', 'withdraw', { symbol: 'SOL', blockchain: 'Solana', address, quantity: '1' }));
    expect(withdrawal.status, withdrawal.text).toBe(200);
    await waitUntil(async () => {
      const list = await taken(() => signed(server.base, taker, 'GET', '/wapi/v1/capital/withdrawals', 'withdrawalQueryAll', {}));
      return list.body.length === 1 && list.body[0].status === 'confirmed' ? true : undefined;
    }, 'the withdrawal confirmed');

    const balances = await taken(() => signed(server.base, taker, 'GET', '/api/v1/capital', 'balanceQuery'));
    expect(balances.status).toBe(200);
    // The sweep bought the whole book, less the 5 bp taker fee on what it received; 1 SOL withdrawn.
    expect(Number(balances.body.SOL.available)).toBe(6.996);
  });

  it('many accounts cancelling hundreds of orders at once through a 512-slot outbound ring all get their answer', async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    const server = await startServer({ dataDir, args: ['--no-demo', '--outbound-slots', '512'] });
    servers.push(server);
    const accounts: TestAccount[] = [];
    for (let i = 0; i < 4; i++) accounts.push(await createTestAccount(server.adminPort, ['USDC=100000']));
    for (const account of accounts) await placeResting(server, account, 'Bid', 300);
    const answers = await Promise.all(accounts.map((account) =>
      signed(server.base, account, 'DELETE', '/api/v1/orders', 'orderCancelAll', { symbol: 'SOL_USDC' })));
    for (const answer of answers) {
      expect(answer.status, answer.text).toBe(200);
      expect((answer.body as unknown[]).length).toBe(300);
    }
    // The pipeline still serves afterwards.
    const after = await signed(server.base, accounts[0], 'POST', '/api/v1/order', 'orderExecute', {
      symbol: 'SOL_USDC', side: 'Bid', orderType: 'Limit', price: '10', quantity: '1', postOnly: true,
    });
    expect(after.status, after.text).toBe(200);
  });
});
