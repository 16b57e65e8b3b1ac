// Signed requests against the real server: a valid request passes; a wrong key, a tampered body,
// an expired window, a window above 60000 and a missing header are each refused with a JSON error
// {code, message} and change nothing (balances and open orders are compared before and after).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestAccount,
  removeDir,
  signed,
  startServer,
  tempDataDir,
  type RunningServer,
  type TestAccount,
} from '../helpers/server.js';

const ORDER = { symbol: 'SOL_USDC', side: 'Bid', orderType: 'Limit', price: '10', quantity: '1', postOnly: true } as const;

describe('request signing', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let alice: TestAccount;
  let mallory: TestAccount;

  const snapshot = async () => ({
    capital: (await signed(server.base, alice, 'GET', '/api/v1/capital', 'balanceQuery')).body,
    orders: (await signed(server.base, alice, 'GET', '/api/v1/orders', 'orderQueryAll')).body,
  });

  beforeAll(async () => {
    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '1'] });
    alice = await createTestAccount(server.adminPort, ['USDC=100']);
    mallory = await createTestAccount(server.adminPort, ['USDC=100']);
  });

  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  const expectRefused = async (
    response: { status: number; body: any },
    status: number,
    code: string,
  ): Promise<void> => {
    expect(response.status).toBe(status);
    expect(response.body).toEqual({ code, message: expect.any(String) });
  };

  it('accepts a valid signature, with and without X-Window', async () => {
    const ok = await signed(server.base, alice, 'POST', '/api/v1/order', 'orderExecute', { ...ORDER, clientId: 1 });
    expect(ok.status).toBe(200);
    expect(ok.body.status).toBe('New');
    const withoutWindow = await signed(server.base, alice, 'POST', '/api/v1/order', 'orderExecute', { ...ORDER, clientId: 2 }, { omitWindowHeader: true });
    expect(withoutWindow.status, withoutWindow.text).toBe(200);
    expect(withoutWindow.body).toMatchObject({ status: 'New', clientId: 2 });
    const capital = await signed(server.base, alice, 'GET', '/api/v1/capital', 'balanceQuery', {}, { omitWindowHeader: true });
    expect(capital.status).toBe(200);
    expect(capital.body.USDC).toEqual({ available: '80', locked: '20', staked: '0' });
  });

  it('refuses a signature made with another key, changing nothing', async () => {
    const before = await snapshot();
    const response = await signed(server.base, alice, 'POST', '/api/v1/order', 'orderExecute', ORDER, { signWith: mallory.secretKey });
    await expectRefused(response, 401, 'INVALID_SIGNATURE');
    expect(await snapshot()).toEqual(before);
  });

  it('refuses a body that differs from what was signed, changing nothing', async () => {
    const before = await snapshot();
    const tampered = JSON.stringify({ ...ORDER, quantity: '5' });
    const response = await signed(server.base, alice, 'POST', '/api/v1/order', 'orderExecute', ORDER, { bodyOverride: tampered });
    await expectRefused(response, 401, 'INVALID_SIGNATURE');
    expect(await snapshot()).toEqual(before);
  });

  it('refuses an expired window, changing nothing', async () => {
    const before = await snapshot();
    const response = await signed(server.base, alice, 'POST', '/api/v1/order', 'orderExecute', ORDER, {
      timestamp: Date.now() - 10_000,
      window: 5000,
    });
    await expectRefused(response, 401, 'UNAUTHORIZED');
    expect(response.body.message).toMatch(/expired/i);
    expect(await snapshot()).toEqual(before);
  });

  it('refuses a window above 60000, changing nothing', async () => {
    const before = await snapshot();
    const response = await signed(server.base, alice, 'POST', '/api/v1/order', 'orderExecute', ORDER, { window: 60_001 });
    await expectRefused(response, 400, 'INVALID_CLIENT_REQUEST');
    expect(await snapshot()).toEqual(before);
  });

  it('refuses a request without signature headers and an unknown key', async () => {
    const bare = await fetch(`${server.base}/api/v1/capital`);
    expect(bare.status).toBe(401);
    expect(await bare.json()).toEqual({ code: 'UNAUTHORIZED', message: expect.any(String) });
    const stranger = { accountId: 0, publicKey: Buffer.alloc(32, 7).toString('base64'), secretKey: mallory.secretKey };
    const unknown = await signed(server.base, stranger, 'GET', '/api/v1/capital', 'balanceQuery');
    await expectRefused(unknown, 401, 'UNAUTHORIZED');
  });

  it('answers bad input with JSON errors that change nothing', async () => {
    const before = await snapshot();
    const cases: Array<[Record<string, string | number | boolean>, number, string]> = [
      [{ ...ORDER, symbol: 'NOPE_USDC' }, 400, 'INVALID_MARKET'],
      [{ ...ORDER, price: '10.001' }, 400, 'INVALID_PRICE'],
      [{ ...ORDER, quantity: '-1' }, 400, 'INVALID_QUANTITY'],
      [{ ...ORDER, side: 'Buy' }, 400, 'INVALID_CLIENT_REQUEST'],
      [{ ...ORDER, quantity: '1000' }, 400, 'INSUFFICIENT_FUNDS'],
      [{ ...ORDER, triggerPrice: '5', triggerQuantity: '1' }, 501, 'NOT_IMPLEMENTED'],
      [{ ...ORDER, orderType: 'Market' }, 400, 'INVALID_ORDER'],
    ];
    for (const [body, status, code] of cases) {
      const response = await signed(server.base, alice, 'POST', '/api/v1/order', 'orderExecute', body);
      await expectRefused(response, status, code);
    }
    const malformed = await signed(server.base, alice, 'POST', '/api/v1/order', 'orderExecute', ORDER, { bodyOverride: '{"symbol":' });
    await expectRefused(malformed, 400, 'INVALID_CLIENT_REQUEST');
    const notFound = await fetch(`${server.base}/api/v1/nothing-here`);
    expect(notFound.status).toBe(404);
    expect(await notFound.json()).toEqual({ code: 'RESOURCE_NOT_FOUND', message: expect.any(String) });
    expect(await snapshot()).toEqual(before);
  });
});
