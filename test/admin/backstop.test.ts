// The backstop liquidity providers on the admin endpoint and the CLI (src/admin/backstop-routes.ts;
// the rules are engine/core/liquidation/backstop.ts): the list is empty on a fresh exchange;
// providers set from the endpoint and from `npm run admin -- set-backstop-provider` are listed in
// ascending account id with their ranks, and removed the same two ways; bad input (and what the
// engine refuses) answers 400 {code, message} and changes nothing; the list survives a restart
// (the commands are journaled).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCli, removeDir, startServer, tempDataDir, type RunningServer } from '../helpers/server.js';

const ARGS = ['--no-demo', '--front-threads', '1'];

interface Provider { accountId: number; rank: number }

async function providers(server: RunningServer): Promise<Provider[]> {
  const response = await fetch(`http://127.0.0.1:${server.adminPort}/admin/backstop`);
  expect(response.status).toBe(200);
  const body = (await response.json()) as { timestamp: number; providers: Provider[] };
  expect(Number.isInteger(body.timestamp)).toBe(true);
  return body.providers;
}

async function post(server: RunningServer, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`http://127.0.0.1:${server.adminPort}/admin/backstop`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('the backstop liquidity providers on the admin endpoint', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  const accounts: number[] = [];

  beforeAll(async () => {
    server = await startServer({ dataDir, args: ARGS });
    for (let i = 0; i < 3; i++) accounts.push(Number((await adminCli(server.adminPort, ['create-account'])).accountId));
  });

  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  it('lists none on a fresh exchange', async () => {
    expect(await providers(server)).toEqual([]);
  });

  it('sets from the endpoint and the CLI, lists in ascending account id, and removes both ways', async () => {
    const [a, b, c] = accounts;
    const posted = await post(server, { action: 'set', accountId: c });
    expect(posted.status).toBe(200);
    expect(posted.body.providers).toEqual([{ accountId: c, rank: 1 }]);
    const cli = await adminCli(server.adminPort, ['set-backstop-provider', '--account', String(a)]);
    expect(cli.providers).toEqual([{ accountId: a, rank: 1 }, { accountId: c, rank: 2 }]);
    expect((await adminCli(server.adminPort, ['get-backstop'])).providers).toEqual([{ accountId: a, rank: 1 }, { accountId: c, rank: 2 }]);
    const removed = await adminCli(server.adminPort, ['remove-backstop-provider', '--account', String(c)]);
    expect(removed.providers).toEqual([{ accountId: a, rank: 1 }]);
    expect((await post(server, { action: 'set', accountId: b })).body.providers).toEqual([{ accountId: a, rank: 1 }, { accountId: b, rank: 2 }]);
    expect((await post(server, { action: 'remove', accountId: a })).body.providers).toEqual([{ accountId: b, rank: 1 }]);
    expect(await providers(server)).toEqual([{ accountId: b, rank: 1 }]);
  });

  it('refuses bad input and what the engine refuses with 400 {code, message}, and changes nothing', async () => {
    const before = await providers(server);
    const [a, b] = accounts;
    const cases: unknown[] = [
      { action: 'add', accountId: a },
      { accountId: a },
      { action: 'set' },
      { action: 'set', accountId: 0 },
      { action: 'set', accountId: -3 },
      { action: 'set', accountId: 1.5 },
      { action: 'set', accountId: '2' },
      { action: 'set', accountId: 2 ** 32 },
      // The engine's refusals: an unknown account, a provider set twice, removing one that is not a provider.
      { action: 'set', accountId: 999 },
      { action: 'set', accountId: b },
      { action: 'remove', accountId: a },
      // A body that is no JSON object is refused before the route reads it.
      [],
    ];
    for (const body of cases) {
      const refused = await post(server, body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.code, JSON.stringify(body)).toBe('INVALID_CLIENT_REQUEST');
      expect(typeof refused.body.message).toBe('string');
    }
    expect(await providers(server)).toEqual(before);
  });

  it('keeps the list across a restart', async () => {
    const before = await providers(server);
    expect(before.length).toBeGreaterThan(0);
    expect(await server.stop()).toBe(0);
    server = await startServer({ dataDir, args: ARGS });
    expect(await providers(server)).toEqual(before);
  });
});
