// Maintenance end to end: the operator turns it on with the admin CLI; orders, cancels, batches
// and withdrawals then answer 503 MAINTENANCE while market data, balances and order queries keep
// working and GET /api/v1/status reports Maintenance; the state survives a clean stop (SIGTERM)
// and a crash (kill -9), since it is a journaled engine command; turning it off with
// POST /admin/maintenance lets orders trade again.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminCli,
  createTestAccount,
  get,
  removeDir,
  signed,
  startServer,
  tempDataDir,
  waitUntil,
  type RunningServer,
  type TestAccount,
} from '../helpers/server.js';

const MAINTENANCE = { code: 'MAINTENANCE', message: 'System under maintenance' };
const ARGS = ['--no-demo', '--front-threads', '2', '--speed-bump-ms', '0'];

describe('maintenance mode through the whole path', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let maker: TestAccount;
  let taker: TestAccount;
  let restingId = '';

  const order = (account: TestAccount, body: Record<string, string>) =>
    signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { symbol: 'SOL_USDC', orderType: 'Limit', ...body });
  const status = async () => (await get(server.base, '/api/v1/status')).body as { status: string; message: string | null };
  const waitForStatus = (wanted: string) =>
    waitUntil(async () => ((await status()).status === wanted ? true : undefined), `status ${wanted}`);

  /** What a client sees while in maintenance: refusals for what trades or moves funds out, answers for the rest. */
  async function expectMaintenance(): Promise<void> {
    await waitForStatus('Maintenance');
    expect((await status()).message).toMatch(/maintenance/i);
    const place = await order(taker, { side: 'Ask', price: '10', quantity: '1' });
    expect([place.status, place.body]).toEqual([503, MAINTENANCE]);
    const cancel = await signed(server.base, maker, 'DELETE', '/api/v1/order', 'orderCancel', { symbol: 'SOL_USDC', orderId: restingId });
    expect([cancel.status, cancel.body]).toEqual([503, MAINTENANCE]);
    const cancelAll = await signed(server.base, maker, 'DELETE', '/api/v1/orders', 'orderCancelAll', { symbol: 'SOL_USDC' });
    expect([cancelAll.status, cancelAll.body]).toEqual([503, MAINTENANCE]);
    const withdrawal = await signed(server.base, maker, 'POST', '/wapi/v1/capital/withdrawals', 'withdraw', {
      symbol: 'USDC', quantity: '1', blockchain: 'Solana', address: 'So11111111111111111111111111111111111111112',
    });
    expect([withdrawal.status, withdrawal.body]).toEqual([503, MAINTENANCE]);

    expect((await get(server.base, '/api/v1/markets')).status).toBe(200);
    const depth = await get(server.base, '/api/v1/depth?symbol=SOL_USDC');
    expect(depth.status).toBe(200);
    expect(depth.body.bids).toEqual([['10.00', '1.00']]);
    const balances = await signed(server.base, maker, 'GET', '/api/v1/capital', 'balanceQuery');
    expect(balances.status).toBe(200);
    expect(balances.body.USDC.locked).not.toBe('0');
    const open = await signed(server.base, maker, 'GET', '/api/v1/orders', 'orderQueryAll', { symbol: 'SOL_USDC' });
    expect([open.status, open.body.map((o: { id: string }) => o.id)]).toEqual([200, [restingId]]);
  }

  beforeAll(async () => {
    server = await startServer({ dataDir, args: ARGS });
    maker = await createTestAccount(server.adminPort, ['SOL=100', 'USDC=10000']);
    taker = await createTestAccount(server.adminPort, ['SOL=100', 'USDC=10000']);
    const resting = await order(maker, { side: 'Bid', price: '10', quantity: '1' });
    expect(resting.status).toBe(200);
    restingId = resting.body.id;
  });

  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  it('the operator turns maintenance on: trading and withdrawals answer 503, reads answer, status says Maintenance', async () => {
    expect((await status()).status).toBe('Ok');
    expect(await adminCli(server.adminPort, ['maintenance', 'on'])).toEqual({ maintenance: true });
    await expectMaintenance();
  });

  it('keeps maintenance across a clean stop (SIGTERM)', async () => {
    expect(await server.stop('SIGTERM')).toBe(0);
    server = await startServer({ dataDir, args: ARGS });
    await expectMaintenance();
  });

  it('keeps maintenance across a crash (kill -9), replayed from the journal', async () => {
    // Off and on again after the restart, so the state comes from journal records, not the stop's snapshot.
    expect(await adminCli(server.adminPort, ['maintenance', 'off'])).toEqual({ maintenance: false });
    expect(await adminCli(server.adminPort, ['maintenance', 'on'])).toEqual({ maintenance: true });
    await server.stop('SIGKILL');
    server = await startServer({ dataDir, args: ARGS });
    await expectMaintenance();
  });

  it('turned off through POST /admin/maintenance, orders trade again', async () => {
    const off = await fetch(`http://127.0.0.1:${server.adminPort}/admin/maintenance`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ enabled: false }),
    });
    expect([off.status, await off.json()]).toEqual([200, { maintenance: false }]);
    await waitForStatus('Ok');
    const take = await order(taker, { side: 'Ask', price: '10', quantity: '1' });
    expect([take.status, take.body.status]).toEqual([200, 'Filled']);
    const bad = await fetch(`http://127.0.0.1:${server.adminPort}/admin/maintenance`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ enabled: 'yes' }),
    });
    expect(bad.status).toBe(400);
  });
});
