// The insurance fund on the admin endpoint and the CLI (src/admin/insurance-routes.ts; the fund is
// engine/core/liquidation/fund.ts): every asset's lines read zero on a fresh exchange; a deposit
// from the endpoint and one from `npm run admin -- deposit-insurance` grow the asset's fund and
// deposited lines by exactly the quantity; bad input answers 400 {code, message} and changes no
// line; the lines survive a restart (DepositInsurance is journaled).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCli, removeDir, startServer, tempDataDir, type RunningServer } from '../helpers/server.js';

const ARGS = ['--no-demo', '--front-threads', '1'];

interface Line { symbol: string; fund: string; fees: string; covered: string; socialized: string; deposited: string }

const zero = (symbol: string): Line => ({ symbol, fund: '0', fees: '0', covered: '0', socialized: '0', deposited: '0' });

async function lines(server: RunningServer): Promise<Line[]> {
  const response = await fetch(`http://127.0.0.1:${server.adminPort}/admin/insurance`);
  expect(response.status).toBe(200);
  const body = (await response.json()) as { timestamp: number; insurance: Line[] };
  expect(Number.isInteger(body.timestamp)).toBe(true);
  return body.insurance;
}

async function post(server: RunningServer, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`http://127.0.0.1:${server.adminPort}/admin/insurance`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('the insurance fund on the admin endpoint', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;

  beforeAll(async () => {
    server = await startServer({ dataDir, args: ARGS });
  });

  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  it('lists every asset with empty lines on a fresh exchange', async () => {
    expect(await lines(server)).toEqual([zero('USDC'), zero('SOL'), zero('BTC'), zero('ETH')]);
  });

  it('takes a deposit from the endpoint and one from the CLI, each answered with the asset\'s lines', async () => {
    const posted = await post(server, { asset: 'USDC', quantity: '1000.5' });
    expect(posted.status).toBe(200);
    expect(posted.body.insurance).toEqual([{ ...zero('USDC'), fund: '1000.5', deposited: '1000.5' }]);
    const again = await post(server, { asset: 'USDC', quantity: '0.000001' });
    expect(again.body.insurance).toEqual([{ ...zero('USDC'), fund: '1000.500001', deposited: '1000.500001' }]);
    const cli = await adminCli(server.adminPort, ['deposit-insurance', '--asset', 'SOL', '--quantity', '2.25']);
    expect(cli.insurance).toEqual([{ ...zero('SOL'), fund: '2.25', deposited: '2.25' }]);
    const listed = await adminCli(server.adminPort, ['get-insurance']);
    expect(listed.insurance).toEqual([
      { ...zero('USDC'), fund: '1000.500001', deposited: '1000.500001' }, { ...zero('SOL'), fund: '2.25', deposited: '2.25' }, zero('BTC'), zero('ETH'),
    ]);
  });

  it('refuses bad input with 400 {code, message} and changes nothing', async () => {
    const before = await lines(server);
    const cases: Array<[unknown, string]> = [
      [{ asset: 'DOGE', quantity: '1' }, 'INVALID_ASSET'],
      [{ quantity: '1' }, 'INVALID_ASSET'],
      [{ asset: 'USDC', quantity: '0' }, 'INVALID_QUANTITY'],
      [{ asset: 'USDC', quantity: '-5' }, 'INVALID_QUANTITY'],
      [{ asset: 'USDC', quantity: '0.0000001' }, 'INVALID_QUANTITY'],
      [{ asset: 'USDC', quantity: 'lots' }, 'INVALID_QUANTITY'],
      [{ asset: 'USDC' }, 'INVALID_QUANTITY'],
      [{ asset: 'USDC', quantity: '99999999999' }, 'INVALID_QUANTITY'],
      // A body that is no JSON object is refused before the route reads it.
      [[], 'INVALID_CLIENT_REQUEST'],
    ];
    for (const [body, code] of cases) {
      const refused = await post(server, body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.code, JSON.stringify(body)).toBe(code);
      expect(typeof refused.body.message).toBe('string');
    }
    expect(await lines(server)).toEqual(before);
  });

  it('keeps the lines across a restart', async () => {
    const before = await lines(server);
    expect(await server.stop()).toBe(0);
    server = await startServer({ dataDir, args: ARGS });
    expect(await lines(server)).toEqual(before);
  });
});
