// The operator's routes are reachable only on the admin port, and the admin port only from the
// machine itself. Every admin route (listed from src/admin/routes.ts, so a new one is covered or
// this test asks for its probe) is sent, with a body the admin port accepts, to the public port:
// each answers exactly what an unknown path answers, and nothing changes (no engine command is
// sequenced, no account appears, no address becomes two-factor exempt). The public port listens
// on 127.0.0.2 here, so an admin port that followed --host, or listened on every address, shows:
// the kernel's socket table must list the admin port on 127.0.0.1 alone, and a connection to it
// through 127.0.0.2 or ::1 is refused.

import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as ed from '@noble/ed25519';
import { adminRoutes } from '../../src/admin/routes.js';
import type { FrontContext } from '../../src/front/context.js';
import {
  createTestAccount, removeDir, signed, startServer, tempDataDir, type RunningServer, type TestAccount,
} from '../helpers/server.js';

const PUBLIC_HOST = '127.0.0.2';
const ADDRESS = 'AdminProbeAddress1111111111111111';

/** Every admin route as "method path", read from the route table the admin app mounts. */
const ADMIN_ROUTES = adminRoutes({} as FrontContext).map((r) => `${r.method} ${r.path}`);

/** A request each admin route accepts on the admin port (account 1 exists, SOL_USDC is a market). */
function probes(publicKey: string): Record<string, { query?: string; body?: unknown }> {
  return {
    'post /admin/accounts': { body: { publicKey } },
    'post /admin/deposits': { body: { accountId: 1, asset: 'USDC', quantity: '5' } },
    'get /admin/status': {},
    'post /admin/snapshot': { body: {} },
    'post /admin/markets/state': { body: { symbol: 'SOL_USDC', orderBookState: 'Closed' } },
    'post /admin/accounts/fees': { body: { accountId: 1, makerFeeBps: 77, takerFeeBps: 88 } },
    'get /admin/accounts/fees': { query: 'accountId=1' },
    'post /admin/address-book': { body: { accountId: 1, blockchain: 'Solana', address: ADDRESS } },
    'post /admin/two-factor': { body: { accountId: 1 } },
    'post /admin/maintenance': { body: { enabled: false } },
    'post /admin/index-prices': { body: { prices: { SOL: '150.25' } } },
    'get /admin/index-prices': {},
    'post /admin/insurance': { body: { asset: 'USDC', quantity: '5' } },
    'get /admin/insurance': {},
    'post /admin/backstop': { body: { action: 'set', accountId: 1 } },
    'get /admin/backstop': {},
  };
}

async function send(base: string, route: string, probe: { query?: string; body?: unknown }, pathOf = (p: string) => p) {
  const [method, path] = route.split(' ');
  const url = `${base}${pathOf(path)}${probe.query ? `?${probe.query}` : ''}`;
  const response = await fetch(url, {
    method: method.toUpperCase(),
    headers: method === 'get' ? {} : { 'Content-Type': 'application/json' },
    body: method === 'get' ? undefined : JSON.stringify(probe.body),
  });
  const text = await response.text();
  return { status: response.status, text };
}

/** Local addresses (hex, as /proc shows them) of the listening TCP sockets on `port`. */
function listeners(port: number): { v4: string[]; v6: string[] } {
  const scan = (file: string): string[] => readFileSync(file, 'utf8').split('\n').slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((f) => f.length > 3 && f[3] === '0A' && parseInt(f[1].split(':')[1], 16) === port)
    .map((f) => f[1].split(':')[0]);
  return { v4: scan('/proc/net/tcp'), v6: scan('/proc/net/tcp6') };
}

/** 'connected' or the error code of a TCP connection attempt. */
function tryConnect(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
  });
}

describe('admin routes stay off the public port', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let account: TestAccount;
  const adminBase = () => `http://127.0.0.1:${server.adminPort}`;
  const snapshotSeq = async (): Promise<number> => {
    const response = await fetch(`${adminBase()}/admin/snapshot`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect(response.status).toBe(200);
    return ((await response.json()) as { snapshotSeq: number }).snapshotSeq;
  };

  beforeAll(async () => {
    // One front thread: thread 0, the one that also serves the admin app, answers every public
    // request (with more, a keep-alive client may only ever reach another thread).
    server = await startServer({ dataDir, host: PUBLIC_HOST, args: ['--no-demo', '--front-threads', '1'] });
    account = await createTestAccount(server.adminPort, ['USDC=1000']);
    expect(account.accountId).toBe(1);
  });
  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  it('has a probe for every admin route', () => {
    expect(ADMIN_ROUTES.length).toBeGreaterThan(5);
    const known = Object.keys(probes(''));
    expect(ADMIN_ROUTES.filter((route) => !known.includes(route))).toEqual([]);
  });

  it('answers every admin route on the public port as an unknown path, and changes nothing', async () => {
    const unknown = await send(server.base, 'get /admin/no-such-route', {});
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.text)).toMatchObject({ code: 'RESOURCE_NOT_FOUND' });
    const newKey = Buffer.from(ed.getPublicKey(ed.utils.randomSecretKey())).toString('base64');
    const requests = probes(newKey);
    const before = await snapshotSeq();
    // Each route as listed, and as spelled with the slashes the dispatcher normalises away.
    const spellings = [(p: string) => p, (p: string) => `${p}/`, (p: string) => `/${p}`];
    for (const route of ADMIN_ROUTES) {
      for (const spell of spellings) {
        const answer = await send(server.base, route, requests[route], spell);
        expect({ route, path: spell(route.split(' ')[1]), ...answer }).toEqual({ route, path: spell(route.split(' ')[1]), ...unknown });
      }
    }
    // No engine command was sequenced in between: the next snapshot is the very next command.
    expect(await snapshotSeq()).toBe(before + 1);
    // The address did not become two-factor exempt.
    const withdraw = await signed(server.base, account, 'POST', '/wapi/v1/capital/withdrawals', 'withdraw', {
      symbol: 'USDC', blockchain: 'Solana', address: ADDRESS, quantity: '1',
    });
    expect(withdraw.status).toBe(400);
    expect(withdraw.body).toMatchObject({ code: 'INVALID_TWO_FACTOR_CODE' });
    // The probes are ones the admin port accepts, so the public port's 404 is not a bad body's;
    // and the key sent to the public port was still free: the admin port registers it as account 2.
    for (const route of ADMIN_ROUTES) {
      const answer = await send(adminBase(), route, requests[route]);
      expect({ route, status: answer.status }).toEqual({ route, status: 200 });
      if (route === 'post /admin/accounts') expect(JSON.parse(answer.text)).toMatchObject({ accountId: 2, publicKey: newKey });
    }
  });

  it('binds the admin port to 127.0.0.1 only, whatever --host says', async () => {
    const admin = listeners(server.adminPort);
    expect(admin.v4).toEqual(['0100007F']);
    expect(admin.v6).toEqual([]);
    // The public port follows --host (127.0.0.2 here).
    expect(listeners(server.port).v4).toEqual(['0200007F']);
    expect(await tryConnect('127.0.0.1', server.adminPort)).toBe('connected');
    expect(await tryConnect(PUBLIC_HOST, server.port)).toBe('connected');
    expect(await tryConnect(PUBLIC_HOST, server.adminPort)).toBe('ECONNREFUSED');
    expect(await tryConnect('::1', server.adminPort)).not.toBe('connected');
  });
});
