// Every documented endpoint answers, never 404: the ones this exchange serves with their own
// answers, the ones of product families it does not offer yet with 501 and the JSON error
// `{code: "NOT_IMPLEMENTED", message}`. A 404 (or a 501 without that body) is what ccxt reads as
// "exchange down" (ExchangeNotAvailable), so a bot would retry a venue that is up. The list below
// is the REST surface of the wire reference (paths, methods) and the API specification; ccxt's
// own endpoint table is checked as well, through ccxt.

import ccxt from 'ccxt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notBuiltPaths } from '../../src/routes/not-built/index.js';
import { createTestAccount, removeDir, startServer, tempDataDir, type RunningServer, type TestAccount } from '../helpers/server.js';
import { ccxtRest } from '../helpers/ccxt.js';

type Method = 'GET' | 'POST' | 'DELETE' | 'PATCH';

const SERVED: Array<[Method, string]> = [
  // public market data and system
  ['GET', '/api/v1/assets'], ['GET', '/api/v1/markets'], ['GET', '/api/v1/market'],
  ['GET', '/api/v1/ticker'], ['GET', '/api/v1/tickers'], ['GET', '/api/v1/depth'],
  ['GET', '/api/v1/klines'], ['GET', '/api/v1/trades'], ['GET', '/api/v1/trades/history'],
  ['GET', '/api/v1/status'], ['GET', '/api/v1/ping'], ['GET', '/api/v1/time'], ['GET', '/api/v1/wallets'],
  ['GET', '/api/v1/collateral'],
  // account, limits and capital
  ['GET', '/api/v1/account'], ['PATCH', '/api/v1/account'],
  ['GET', '/api/v1/account/limits/order'], ['GET', '/api/v1/account/limits/withdrawal'],
  ['POST', '/api/v1/account/convertDust'], ['GET', '/api/v1/capital'], ['GET', '/api/v1/capital/collateral'],
  ['GET', '/wapi/v1/capital/deposits'], ['GET', '/wapi/v1/capital/deposit/address'],
  ['GET', '/wapi/v1/capital/withdrawals'], ['POST', '/wapi/v1/capital/withdrawals'],
  // orders and history
  ['GET', '/api/v1/order'], ['POST', '/api/v1/order'], ['DELETE', '/api/v1/order'],
  ['GET', '/api/v1/orders'], ['POST', '/api/v1/orders'], ['DELETE', '/api/v1/orders'],
  ['GET', '/wapi/v1/history/fills'], ['GET', '/wapi/v1/history/orders'], ['GET', '/wapi/v1/history/dust'],
  // borrow and lend
  ['GET', '/api/v1/borrowLend/markets'], ['GET', '/api/v1/borrowLend/positions'], ['POST', '/api/v1/borrowLend'],
  ['GET', '/wapi/v1/history/borrowLend'], ['GET', '/wapi/v1/history/interest'],
  ['GET', '/api/v1/borrowLend/markets/history'], ['GET', '/api/v1/borrowLend/position/liquidationPrice'],
  ['GET', '/wapi/v1/history/borrowLend/positions'],
  // perpetuals: mark prices and funding rates
  ['GET', '/api/v1/markPrices'], ['GET', '/api/v1/fundingRates'], ['GET', '/wapi/v1/history/funding'],
  // perpetuals: position and settlement history
  ['GET', '/wapi/v1/history/position'], ['GET', '/wapi/v1/history/settlement'],
];

const NOT_BUILT: Array<[Method, string]> = [
  // borrow and lend
  ['GET', '/api/v1/borrowLend/apy'],
  // RFQ and quotes
  ['GET', '/api/v1/rfqs'], ['POST', '/api/v1/rfq'], ['POST', '/api/v1/rfq/accept'], ['POST', '/api/v1/rfq/refresh'],
  ['POST', '/api/v1/rfq/cancel'], ['POST', '/api/v1/rfq/quote'], ['GET', '/wapi/v1/history/rfq'],
  ['GET', '/wapi/v1/history/quote'], ['GET', '/wapi/v1/history/rfq/fill'], ['GET', '/wapi/v1/history/quote/fill'],
  // scheduled strategies
  ['GET', '/api/v1/strategy'], ['POST', '/api/v1/strategy'], ['DELETE', '/api/v1/strategy'],
  ['GET', '/api/v1/strategies'], ['DELETE', '/api/v1/strategies'], ['GET', '/wapi/v1/history/strategies'],
  // prediction markets
  ['GET', '/api/v1/prediction'], ['GET', '/api/v1/prediction/tags'],
  // tokenized securities
  ['GET', '/api/v1/market-sessions'], ['GET', '/api/v1/market-holidays'], ['GET', '/api/v1/securities'],
  // vaults
  ['GET', '/api/v1/vaults'], ['POST', '/api/v1/vault/mint'], ['POST', '/api/v1/vault/redeem'], ['DELETE', '/api/v1/vault/redeem'],
  // the withdrawal delay setting
  ['GET', '/wapi/v1/capital/withdrawals/delay'], ['POST', '/wapi/v1/capital/withdrawals/delay'],
  ['PATCH', '/wapi/v1/capital/withdrawals/delay'],
];

async function call(base: string, method: Method, path: string): Promise<{ status: number; type: string | null; text: string }> {
  const init: RequestInit = method === 'GET' ? { method } : { method, body: '{}', headers: { 'Content-Type': 'application/json' } };
  const response = await fetch(`${base}${path}`, init);
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
}

describe('documented endpoints answer, never 404', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let account: TestAccount;

  beforeAll(async () => {
    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '1', '--speed-bump-ms', '0'] });
    account = await createTestAccount(server.adminPort, ['USDC=100']);
  });
  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  it('answers every endpoint of a family not offered yet with 501 and the JSON error', async () => {
    for (const [method, path] of NOT_BUILT) {
      const answer = await call(server.base, method, path);
      expect(answer.status, `${method} ${path}`).toBe(501);
      expect(answer.type, `${method} ${path}`).toMatch(/^application\/json/);
      expect(JSON.parse(answer.text), `${method} ${path}`).toEqual({ code: 'NOT_IMPLEMENTED', message: `${method} ${path} is not implemented yet` });
    }
  });

  it('serves every other documented endpoint (its own answer, not 404, 405 or 501)', async () => {
    for (const [method, path] of SERVED) {
      const answer = await call(server.base, method, path);
      expect([404, 405, 501], `${method} ${path}: ${answer.status} ${answer.text}`).not.toContain(answer.status);
    }
  });

  it('registers exactly the documented endpoints it does not serve, each once', () => {
    const registered = notBuiltPaths.map(([method, path]) => `${method.toUpperCase()} ${path}`);
    expect(new Set(registered).size).toBe(registered.length);
    expect([...registered].sort()).toEqual(NOT_BUILT.map(([method, path]) => `${method} ${path}`).sort());
    const served = new Set(SERVED.map(([method, path]) => `${method} ${path}`));
    expect(registered.filter((key) => served.has(key))).toEqual([]);
  });

  it('still answers 404 for a path the API does not have', async () => {
    const answer = await call(server.base, 'GET', '/api/v1/no-such-endpoint');
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.text).code).toBe('RESOURCE_NOT_FOUND');
  });

  it('never gives ccxt "exchange down" on any endpoint of its table; the ones not offered yet fail as OperationFailed', async () => {
    const exchange = ccxtRest(server, account);
    const notBuilt = new Set(NOT_BUILT.map(([method, path]) => `${method} ${path}`));
    const table = exchange.api as Record<string, Record<string, Record<string, unknown>>>;
    let checked = 0;
    for (const [api, byMethod] of Object.entries(table)) {
      for (const [method, paths] of Object.entries(byMethod)) {
        for (const path of Object.keys(paths)) {
          const key = `${method.toUpperCase()} /${path}`;
          const error = await exchange.request(path, api, method.toUpperCase(), {}).then(() => null, (e: unknown) => e);
          expect(error instanceof ccxt.ExchangeNotAvailable, `${key}: ${String(error)}`).toBe(false);
          if (notBuilt.has(key)) expect(error instanceof ccxt.OperationFailed, `${key}: ${String(error)}`).toBe(true);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(60);
  });
});
