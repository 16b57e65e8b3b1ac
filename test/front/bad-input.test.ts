// Bad input: every rejection is a JSON {code, message} with the status of the one error
// table (src/errors.ts), and changes nothing — balances and open orders are compared before and
// after. Covers malformed JSON, an oversized body, unknown symbols and assets, invalid enums,
// negative and off-grid decimals, numbers where strings belong, the reverse where real clients
// send them (clientId as a string, orderId as a number), and missing fields.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResultCode } from '../../engine/bus/types.js';
import { resultError } from '../../src/errors.js';
import { batchSigningString, paramsFromBody } from '../../src/auth.js';
import {
  createTestAccount, removeDir, sign, signed, signingString, startServer, tempDataDir, waitUntil, type RunningServer, type TestAccount,
} from '../helpers/server.js';

describe('the error table', () => {
  it('maps every engine rejection to an API error code and a 4xx status, maintenance to 503', () => {
    const codes = Object.values(ResultCode).filter((v): v is number => typeof v === 'number' && v !== ResultCode.Ok);
    expect(codes.length).toBeGreaterThan(20);
    for (const code of codes) {
      const error = resultError(code);
      expect(error.code, ResultCode[code]).toMatch(/^[A-Z_]+$/);
      if (code === ResultCode.SystemMaintenance) {
        // The one refusal that is the exchange's state, not the request's fault (the venue's 503).
        expect([error.status, error.code]).toEqual([503, 'MAINTENANCE']);
        continue;
      }
      expect(error.status, ResultCode[code]).toBeGreaterThanOrEqual(400);
      expect(error.status, ResultCode[code]).toBeLessThan(500);
    }
  });
});

describe('bad input against the server changes nothing', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let account: TestAccount;
  let state: () => Promise<unknown>;

  beforeAll(async () => {
    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '1', '--speed-bump-ms', '0'] });
    account = await createTestAccount(server.adminPort, ['USDC=1000', 'SOL=10']);
    await signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { symbol: 'SOL_USDC', side: 'Bid', orderType: 'Limit', price: '10', quantity: '1', postOnly: true });
    state = async () => ({
      balances: (await signed(server.base, account, 'GET', '/api/v1/capital', 'balanceQuery')).body,
      open: (await signed(server.base, account, 'GET', '/api/v1/orders', 'orderQueryAll')).body.map((o: any) => o.id),
      withdrawals: (await signed(server.base, account, 'GET', '/wapi/v1/capital/withdrawals', 'withdrawalQueryAll')).body,
    });
  });
  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  /** A body signed as its top-level keys, but sent as the given raw text. */
  async function raw(method: string, path: string, instruction: string, text: string, params: Record<string, string | number | boolean> = {}) {
    const timestamp = Date.now();
    const response = await fetch(`${server.base}${path}`, {
      method,
      headers: {
        'X-API-Key': account.publicKey, 'X-Signature': sign(account.secretKey, signingString(instruction, params, timestamp, 5000)),
        'X-Timestamp': String(timestamp), 'X-Window': '5000', 'Content-Type': 'application/json',
      },
      body: text,
    });
    return { status: response.status, body: await response.json() as any };
  }

  const ORDER = { symbol: 'SOL_USDC', side: 'Bid', orderType: 'Limit', price: '10', quantity: '1' };
  const WITHDRAWAL = { symbol: 'USDC', blockchain: 'Solana', address: 'So1anaDestinationAddress1111111111111111111', quantity: '1' };

  const cases: Array<[string, () => Promise<{ status: number; body: any }>, number, string]> = [
    ['malformed JSON', () => raw('POST', '/api/v1/order', 'orderExecute', '{"symbol": "SOL_USDC",'), 400, 'INVALID_CLIENT_REQUEST'],
    ['a JSON array where an object belongs', () => raw('POST', '/api/v1/order', 'orderExecute', '[1,2]'), 400, 'INVALID_CLIENT_REQUEST'],
    ['an oversized body', () => raw('POST', '/api/v1/order', 'orderExecute', JSON.stringify({ ...ORDER, pad: 'x'.repeat(70_000) })), 413, 'INVALID_CLIENT_REQUEST'],
    ['an unknown symbol', () => signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { ...ORDER, symbol: 'DOGE_USDC' }), 400, 'INVALID_MARKET'],
    ['an unknown asset', () => signed(server.base, account, 'POST', '/wapi/v1/capital/withdrawals', 'withdraw', { ...WITHDRAWAL, symbol: 'DOGE' }), 400, 'INVALID_ASSET'],
    ['an invalid side', () => signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { ...ORDER, side: 'Buy' }), 400, 'INVALID_CLIENT_REQUEST'],
    ['an invalid time in force', () => signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { ...ORDER, timeInForce: 'GTD' }), 400, 'INVALID_CLIENT_REQUEST'],
    ['an invalid sortDirection', () => signed(server.base, account, 'GET', '/wapi/v1/history/fills', 'fillHistoryQueryAll', { sortDirection: 'Up' }), 400, 'INVALID_CLIENT_REQUEST'],
    ['an invalid fillType', () => signed(server.base, account, 'GET', '/wapi/v1/history/fills', 'fillHistoryQueryAll', { fillType: 'Robot' }), 400, 'INVALID_CLIENT_REQUEST'],
    ['a limit above 1000', () => signed(server.base, account, 'GET', '/wapi/v1/history/orders', 'orderHistoryQueryAll', { limit: 1001 }), 400, 'INVALID_CLIENT_REQUEST'],
    ['a negative offset', () => signed(server.base, account, 'GET', '/wapi/v1/capital/deposits', 'depositQueryAll', { offset: -1 }), 400, 'INVALID_CLIENT_REQUEST'],
    ['from after to', () => signed(server.base, account, 'GET', '/wapi/v1/history/fills', 'fillHistoryQueryAll', { from: 2000, to: 1000 }), 400, 'INVALID_CLIENT_REQUEST'],
    ['a negative price', () => signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { ...ORDER, price: '-10' }), 400, 'INVALID_PRICE'],
    ['an off-grid price', () => signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { ...ORDER, price: '10.001' }), 400, 'INVALID_PRICE'],
    ['an off-grid quantity', () => signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { ...ORDER, quantity: '0.001' }), 400, 'INVALID_QUANTITY'],
    ['a negative withdrawal', () => signed(server.base, account, 'POST', '/wapi/v1/capital/withdrawals', 'withdraw', { ...WITHDRAWAL, quantity: '-1' }), 400, 'INVALID_QUANTITY'],
    ['a withdrawal below the asset precision', () => signed(server.base, account, 'POST', '/wapi/v1/capital/withdrawals', 'withdraw', { ...WITHDRAWAL, quantity: '0.0000001' }), 400, 'INVALID_QUANTITY'],
    ['a number where the symbol string belongs', () => signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { ...ORDER, symbol: 5 }), 400, 'INVALID_CLIENT_REQUEST'],
    ['a number where the side string belongs', () => signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { ...ORDER, side: 0 }), 400, 'INVALID_CLIENT_REQUEST'],
    ['a number where the address belongs', () => signed(server.base, account, 'POST', '/wapi/v1/capital/withdrawals', 'withdraw', { ...WITHDRAWAL, address: 1234567890123456 }), 400, 'INVALID_CLIENT_REQUEST'],
    ['a string where the postOnly boolean belongs', () => signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { ...ORDER, postOnly: 'yes' }), 400, 'INVALID_CLIENT_REQUEST'],
    ['a missing quantity', () => signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { symbol: 'SOL_USDC', side: 'Bid', orderType: 'Limit', price: '10' }), 400, 'INVALID_QUANTITY'],
    ['a missing symbol', () => signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { side: 'Bid', orderType: 'Limit', price: '10', quantity: '1' }), 400, 'INVALID_CLIENT_REQUEST'],
    ['a missing withdrawal address', () => signed(server.base, account, 'POST', '/wapi/v1/capital/withdrawals', 'withdraw', { symbol: 'USDC', blockchain: 'Solana', quantity: '1' }), 400, 'INVALID_CLIENT_REQUEST'],
    ['a withdrawal on another chain', () => signed(server.base, account, 'POST', '/wapi/v1/capital/withdrawals', 'withdraw', { ...WITHDRAWAL, blockchain: 'Ethereum' }), 400, 'INVALID_CLIENT_REQUEST'],
    ['a withdrawal clientId over 255 characters', () => signed(server.base, account, 'POST', '/wapi/v1/capital/withdrawals', 'withdraw', { ...WITHDRAWAL, clientId: 'c'.repeat(256) }), 400, 'INVALID_CLIENT_REQUEST'],
    ['a missing deposit blockchain', () => signed(server.base, account, 'GET', '/wapi/v1/capital/deposit/address', 'depositAddressQuery'), 400, 'INVALID_CLIENT_REQUEST'],
    ['an unknown deposit blockchain', () => signed(server.base, account, 'GET', '/wapi/v1/capital/deposit/address', 'depositAddressQuery', { blockchain: 'Narnia' }), 400, 'INVALID_CLIENT_REQUEST'],
    ['an insufficient balance', () => signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { ...ORDER, quantity: '1000' }), 400, 'INSUFFICIENT_FUNDS'],
    ['a cancel of an unknown order', () => signed(server.base, account, 'DELETE', '/api/v1/order', 'orderCancel', { symbol: 'SOL_USDC', orderId: '123' }), 400, 'INVALID_CLIENT_REQUEST'],
    ['a bad signature', () => signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', ORDER, { bodyOverride: JSON.stringify({ ...ORDER, quantity: '2' }) }), 401, 'INVALID_SIGNATURE'],
    // Names that Object.prototype carries must not pass for enum values.
    ['a side named constructor', () => signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { ...ORDER, side: 'constructor' }), 400, 'INVALID_CLIENT_REQUEST'],
    ['a side named __proto__', () => signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { ...ORDER, side: '__proto__' }), 400, 'INVALID_CLIENT_REQUEST'],
    ['a time in force named valueOf', () => signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { ...ORDER, timeInForce: 'valueOf' }), 400, 'INVALID_CLIENT_REQUEST'],
    ['a self-trade prevention named hasOwnProperty', () => signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { ...ORDER, selfTradePrevention: 'hasOwnProperty' }), 400, 'INVALID_CLIENT_REQUEST'],
    ['a body nested 30,000 levels deep', () => raw('POST', '/api/v1/order', 'orderExecute', `{"symbol":${'['.repeat(30_000)}${']'.repeat(30_000)}}`), 400, 'INVALID_CLIENT_REQUEST'],
    ['a batch item nested 30,000 levels deep', () => raw('POST', '/api/v1/orders', 'orderExecute', `[{"x":${'['.repeat(30_000)}${']'.repeat(30_000)}}]`), 400, 'INVALID_CLIENT_REQUEST'],
    ['an order field the API does not have (ccxt passes its unified stopLossPrice through)', () => signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { ...ORDER, stopLossPrice: '5' }), 400, 'INVALID_CLIENT_REQUEST'],
    ['an unknown marketType on open orders', () => signed(server.base, account, 'GET', '/api/v1/orders', 'orderQueryAll', { marketType: 'GARBAGE' }), 400, 'INVALID_CLIENT_REQUEST'],
    ['an unknown marketType on order history', () => signed(server.base, account, 'GET', '/wapi/v1/history/orders', 'orderHistoryQueryAll', { marketType: 'GARBAGE' }), 400, 'INVALID_CLIENT_REQUEST'],
    ['an unknown path', () => signed(server.base, account, 'GET', '/wapi/v1/history/nothing', 'x'), 404, 'RESOURCE_NOT_FOUND'],
  ];

  for (const [what, send, status, code] of cases) {
    it(`answers ${what} with ${status} ${code} and changes nothing`, async () => {
      const before = await state();
      const response = await send();
      expect(response.status).toBe(status);
      expect(response.body).toEqual({ code, message: expect.any(String) });
      expect(await state()).toEqual(before);
    });
  }

  it('refuses a batch item whose side is an Object.prototype name, placing nothing', async () => {
    const before = await state();
    const items = [{ ...ORDER, side: 'constructor', postOnly: true }];
    const timestamp = Date.now();
    const response = await fetch(`${server.base}/api/v1/orders`, {
      method: 'POST',
      headers: {
        'X-API-Key': account.publicKey, 'X-Timestamp': String(timestamp), 'X-Window': '5000', 'Content-Type': 'application/json',
        'X-Signature': sign(account.secretKey, batchSigningString('orderExecute', items.map(paramsFromBody), String(timestamp), '5000', false)),
      },
      body: JSON.stringify(items),
    });
    const batch = { status: response.status, body: await response.json() as any };
    expect(batch.status).toBe(200);
    expect(batch.body).toEqual([{ operation: 'Err', code: 'INVALID_CLIENT_REQUEST', message: expect.any(String) }]);
    expect(await state()).toEqual(before);
  });

  it('matches marketType without regard to case: spot lists the open orders, PERP none', async () => {
    const all = (await signed(server.base, account, 'GET', '/api/v1/orders', 'orderQueryAll')).body;
    expect(all.length).toBeGreaterThan(0);
    expect((await signed(server.base, account, 'GET', '/api/v1/orders', 'orderQueryAll', { marketType: 'spot' })).body).toEqual(all);
    expect((await signed(server.base, account, 'GET', '/api/v1/orders', 'orderQueryAll', { marketType: 'PERP' })).body).toEqual([]);
  });

  it('answers endpoints of product families not offered yet with 501 NOT_IMPLEMENTED (ccxt: OperationFailed, not "exchange down")', async () => {
    for (const [method, path] of [['GET', '/wapi/v1/history/rfq'], ['POST', '/api/v1/rfq'], ['DELETE', '/api/v1/strategies'], ['GET', '/api/v1/borrowLend/apy']]) {
      const response = await fetch(`${server.base}${path}`, { method, body: method === 'GET' ? undefined : '{}' });
      expect(response.status, path).toBe(501);
      expect(await response.json(), path).toEqual({ code: 'NOT_IMPLEMENTED', message: `${method} ${path} is not implemented yet` });
    }
    expect((await fetch(`${server.base}/api/v1/no-such-endpoint`)).status).toBe(404);
  });

  it('answers HEAD without a body, so a pipelined request after it is read correctly', async () => {
    const { connect } = await import('node:net');
    const socket = connect(server.port, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk) => { text += chunk.toString('latin1'); });
    socket.write('HEAD /api/v1/ping HTTP/1.1\r\nHost: x\r\n\r\nGET /api/v1/ping HTTP/1.1\r\nHost: x\r\n\r\n');
    await waitUntil(() => (text.endsWith('pong') ? true : undefined), 'the GET answer after the HEAD answer');
    socket.destroy();
    const responses = text.split(/(?=HTTP\/1\.1 )/);
    expect(responses).toHaveLength(2);
    expect(responses[0]).toMatch(/^HTTP\/1\.1 405 [^\r]*\r\n[\s\S]*\r\n\r\n$/);
    expect(responses[1]).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('accepts what real clients send: clientId as a string, orderId as a number, decimals as numbers', async () => {
    const placed = await signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { ...ORDER, clientId: '123', postOnly: true });
    expect(placed.status).toBe(200);
    expect(placed.body.clientId).toBe(123);
    const numeric = await signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { ...ORDER, price: 9.5, quantity: 2, postOnly: true });
    expect(numeric.body).toMatchObject({ price: '9.5', quantity: '2' });
    const cancelled = await signed(server.base, account, 'DELETE', '/api/v1/order', 'orderCancel', { symbol: 'SOL_USDC', orderId: Number(placed.body.id) });
    expect(cancelled.body.status).toBe('Cancelled');
    const history = await signed(server.base, account, 'GET', '/wapi/v1/history/orders', 'orderHistoryQueryAll', { orderId: placed.body.id });
    expect(history.body[0].status).toBe('Cancelled');
  });
});
