// Upgrading a data directory whose configuration had no margin parameters to today's default,
// which has them (collateral parameters and borrow/lend pools): a configuration change a
// journal accepts (engine/shell/journal.ts). A server runs with a markets file without margin
// parameters (orders rest, a borrow/lend request is refused because there is no pool, an operator
// snapshot is taken), stops (cleanly, or killed), and restarts with the default configuration: it
// starts, warns that the configuration gained margin parameters at the journal's last sequence,
// shows the same orders and balances, and lends. Restarts after that start from the snapshot taken
// before the change or the one taken after it, and a restart without margin parameters is refused.

import { writeFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_MARKETS } from '../../src/config.js';
import { adminCli, createTestAccount, removeDir, signed, startServer, tempDataDir, waitUntil, type RunningServer, type TestAccount } from '../helpers/server.js';

const ARGS = ['--no-demo', '--front-threads', '1', '--snapshot-every', '0', '--snapshot-keep', '2'];

/** The default markets file without any asset's collateral parameters or borrow/lend pool (and so without its perpetuals). */
function marketsWithoutMargin(dir: string): string {
  const path = join(dir, 'markets-without-margin.json');
  const assets = DEFAULT_MARKETS.assets.map(({ collateral: _collateral, borrowLend: _borrowLend, ...asset }) => asset);
  const markets = DEFAULT_MARKETS.markets.filter((market) => market.marketType !== 'PERP');
  writeFileSync(path, JSON.stringify({ ...DEFAULT_MARKETS, assets, markets }));
  return path;
}

function logged(server: RunningServer, msg: string): Record<string, unknown> | undefined {
  const line = server.lines.find((l) => l.includes(`"msg":"${msg}`));
  return line === undefined ? undefined : (JSON.parse(line) as Record<string, unknown>);
}

async function snapshot(server: RunningServer): Promise<number> {
  const { snapshotSeq } = (await adminCli(server.adminPort, ['snapshot'])) as { snapshotSeq: number };
  await waitUntil(() => server.lines.find((l) => l.includes('"msg":"snapshot written"') && JSON.parse(l).seq === snapshotSeq), `snapshot ${snapshotSeq} written`);
  return snapshotSeq;
}

const snapshotPath = (dir: string, seq: number) => join(dir, 'snapshots', `${String(seq).padStart(16, '0')}.snap`);

describe.each(['SIGTERM', 'SIGKILL'] as const)('a data directory without margin parameters, stopped with %s, under the default configuration', (signal) => {
  const dataDir = tempDataDir();
  const configDir = tempDataDir();
  let server: RunningServer | undefined;
  afterAll(async () => {
    await server?.stop('SIGKILL');
    removeDir(dataDir);
    removeDir(configDir);
  });

  const order = (account: TestAccount, side: string, price: string) => signed(server!.base, account, 'POST', '/api/v1/order', 'orderExecute', {
    symbol: 'SOL_USDC', side, orderType: 'Limit', price, quantity: '1', postOnly: true,
  });
  const lend = (account: TestAccount, quantity: string) =>
    signed(server!.base, account, 'POST', '/api/v1/borrowLend', 'borrowLendExecute', { quantity, side: 'Lend', symbol: 'USDC' });
  const orderIds = async (account: TestAccount) =>
    ((await signed(server!.base, account, 'GET', '/api/v1/orders', 'orderQueryAll')).body as Array<{ id: string }>).map((o) => o.id).sort();
  const balances = async (account: TestAccount) => (await signed(server!.base, account, 'GET', '/api/v1/capital', 'balanceQuery')).body;
  const positions = async (account: TestAccount) =>
    (await signed(server!.base, account, 'GET', '/api/v1/borrowLend/positions', 'borrowLendPositionQuery')).body as Array<Record<string, unknown>>;

  it('starts, keeps the state, lends, and restarts from snapshots taken before and after the change', async () => {
    const withoutMargin = ['--config', marketsWithoutMargin(configDir), ...ARGS];
    server = await startServer({ dataDir, args: withoutMargin });
    const account = await createTestAccount(server.adminPort, ['USDC=1000', 'SOL=10']);
    const ids = [(await order(account, 'Bid', '10')).body.id as string];
    const before = await snapshot(server);
    // Journaled after the snapshot, so every restart here replays it, and refused: there is no
    // pool. Replayed under today's configuration, which has one, it would lend (and the output
    // digest check would halt recovery); under the configuration it was written with it is
    // refused again.
    expect((await lend(account, '5')).body.code).toBe('INVALID_ASSET');
    ids.push((await order(account, 'Ask', '12')).body.id as string);
    const heldBefore = await balances(account);
    expect(heldBefore.USDC).toEqual({ available: '990', locked: '10', staked: '0' });
    await server.stop(signal);

    // The upgrade: the default configuration, with margin parameters.
    server = await startServer({ dataDir, args: ARGS });
    const replayed = logged(server, 'journal replayed')!;
    const gained = logged(server, 'configuration gained margin parameters')!;
    expect(gained).toMatchObject({ level: 40, seq: replayed.lastSeq });
    expect(gained.msg).toContain(`configuration gained margin parameters at seq ${replayed.lastSeq as number}`);
    expect(replayed.snapshotSeq).toBe(before); // the snapshot written before the change loads
    expect(await orderIds(account)).toEqual(ids.sort());
    expect(await balances(account)).toEqual(heldBefore);
    expect((await lend(account, '5')).status).toBe(200);
    expect(await positions(account)).toMatchObject([{ symbol: 'USDC', netQuantity: '5' }]);
    const after = await snapshot(server);
    expect(after).toBeGreaterThan(replayed.lastSeq as number);
    await server.stop(signal);

    // Later restarts: from the snapshot after the change, then, without it, from the one before.
    for (const expected of [after, before]) {
      server = await startServer({ dataDir, args: ARGS });
      expect(logged(server, 'journal replayed')!.snapshotSeq).toBe(expected);
      expect(logged(server, 'configuration gained margin parameters')).toBeUndefined();
      expect(await orderIds(account)).toEqual(ids.sort());
      expect((await balances(account)).USDC).toEqual({ available: '985', locked: '10', staked: '0' });
      expect(await positions(account)).toMatchObject([{ symbol: 'USDC', netQuantity: '5' }]);
      await server.stop(signal);
      server = undefined;
      if (expected === after) rmSync(snapshotPath(dataDir, after));
    }
    expect(readdirSync(join(dataDir, 'snapshots')).filter((n) => n.endsWith('.snap'))).toEqual([`${String(before).padStart(16, '0')}.snap`]);

    // The journal's configuration is today's now: the one without margin parameters is refused.
    await expect(startServer({ dataDir, args: withoutMargin })).rejects.toThrow(/exited with 3[\s\S]*EngineConfigChangedError/);
  });
});
