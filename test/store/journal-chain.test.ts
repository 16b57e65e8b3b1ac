// Upgrading a data directory through each version of the default configuration in turn: a server
// with spot markets only, then one that gained margin parameters (collateral parameters and
// borrow/lend pools), then one that also gained perpetual markets after the spot ones (today's
// default). Each upgrade is one accepted configuration change (engine/shell/journal.ts), and the
// journal records the two in order, each with the sequence after which it took effect. Later
// restarts, after a clean stop and after a kill, replay to the state hash the server stopped at,
// from the snapshot taken in each of the three eras (so replay crosses none, one or both
// boundaries) and from the first record. The file holds a borrow and a perpetual position open and
// compares balances to the unit across restarts, so it starts clear of the wall clock's next hour
// (the hour of engine time brings interest and funding).

import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MARKETS } from '../../src/config.js';
import { LmdbJournalStore } from '../../engine/store/journal-store.js';
import { CLEAN_STOP_KEY, readConfigChanges } from '../../engine/store/journal-layout.js';
import { adminCli, clearOfTheHour, createTestAccount, hourGuardTimeout, removeDir, signed, startServer, tempDataDir, waitUntil, type RunningServer, type TestAccount } from '../helpers/server.js';

const ARGS = [
  '--no-demo', '--front-threads', '1', '--speed-bump-ms', '0', '--no-index-default', '--index-max-age-ms', '86400000',
  '--snapshot-every', '0', '--snapshot-keep', '10', '--no-compact',
];

/** The default markets file as an earlier version had it: spot markets only, with or without margin parameters. */
function spotMarkets(dir: string, margin: boolean): string {
  const path = join(dir, margin ? 'spot-margin.json' : 'spot.json');
  const assets = margin ? DEFAULT_MARKETS.assets : DEFAULT_MARKETS.assets.map(({ collateral: _c, borrowLend: _b, ...asset }) => asset);
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

/** A bound on this file's duration on a loaded machine (about a minute alone). */
const FILE_SPAN_MS = 240_000;

const snapshotPath = (dir: string, seq: number) => join(dir, 'snapshots', `${String(seq).padStart(16, '0')}.snap`);

describe('a data directory upgraded through spot, spot with margin, and spot with margin and perpetuals', () => {
  const dataDir = tempDataDir();
  const configDir = tempDataDir();
  let server: RunningServer | undefined;
  beforeAll(() => clearOfTheHour(FILE_SPAN_MS), hourGuardTimeout(FILE_SPAN_MS));
  afterAll(async () => {
    await server?.stop('SIGKILL');
    removeDir(dataDir);
    removeDir(configDir);
  });

  const call = (account: TestAccount, method: string, path: string, instruction: string, body?: Record<string, unknown>) =>
    signed(server!.base, account, method, path, instruction, body);
  const order = (account: TestAccount, body: Record<string, unknown>) => call(account, 'POST', '/api/v1/order', 'orderExecute', body);
  const borrowLend = (account: TestAccount, side: string, symbol: string, quantity: string) =>
    call(account, 'POST', '/api/v1/borrowLend', 'borrowLendExecute', { quantity, side, symbol });
  const view = async (accounts: TestAccount[]) => Promise.all(accounts.map(async (account) => ({
    capital: (await call(account, 'GET', '/api/v1/capital', 'balanceQuery')).body,
    orders: ((await call(account, 'GET', '/api/v1/orders', 'orderQueryAll')).body as Array<{ id: string }>).map((o) => o.id).sort(),
    borrowLend: (await call(account, 'GET', '/api/v1/borrowLend/positions', 'borrowLendPositionQuery')).body,
    positions: (await call(account, 'GET', '/api/v1/position', 'positionQuery')).body,
  })));
  const start = async (args: string[]) => {
    server = await startServer({ dataDir, args });
    return { replayed: logged(server, 'journal replayed')!, gained: logged(server, 'configuration gained margin parameters') };
  };

  let lender: TestAccount;
  let borrower: TestAccount;
  let snapshots: { spot: number; margin: number; perp: number };
  let state: Awaited<ReturnType<typeof view>>;

  it('records each change in order, with the sequence after which it took effect', async () => {
    // Era 1: spot markets only. An order rests; a borrow/lend request is refused (no pool).
    let step = await start(['--config', spotMarkets(configDir, false), ...ARGS]);
    expect(step.gained).toBeUndefined();
    lender = await createTestAccount(server!.adminPort, ['USDC=100000', 'SOL=100']);
    borrower = await createTestAccount(server!.adminPort, ['USDC=10000']);
    expect((await order(lender, { symbol: 'SOL_USDC', side: 'Bid', orderType: 'Limit', price: '90', quantity: '1', postOnly: true })).status).toBe(200);
    const spot = await snapshot(server!);
    expect((await borrowLend(lender, 'Lend', 'USDC', '5')).body.code).toBe('INVALID_ASSET');
    await server!.stop('SIGTERM');

    // Era 2: the same markets with margin parameters: the first change. Index prices, a lend and a borrow.
    step = await start(['--config', spotMarkets(configDir, true), ...ARGS]);
    const firstChange = step.replayed.lastSeq as number;
    expect(step.replayed.snapshotSeq).toBe(spot);
    expect(step.gained).toMatchObject({ level: 40, seq: firstChange });
    await adminCli(server!.adminPort, ['set-index-price', 'SOL=100']);
    expect((await borrowLend(lender, 'Lend', 'SOL', '10')).status).toBe(200);
    expect((await call(borrower, 'PATCH', '/api/v1/account', 'accountUpdate', { leverageLimit: '10' })).status).toBe(200);
    expect((await borrowLend(borrower, 'Borrow', 'SOL', '2')).status).toBe(200);
    const margin = await snapshot(server!);
    expect((await borrowLend(lender, 'Lend', 'USDC', '500')).status).toBe(200);
    await server!.stop('SIGKILL');

    // Era 3: today's default, with perpetual markets after the spot ones: the second change. A perpetual trade.
    step = await start(ARGS);
    const secondChange = step.replayed.lastSeq as number;
    expect(secondChange).toBeGreaterThan(firstChange);
    expect(step.replayed.snapshotSeq).toBe(margin);
    expect(step.gained).toMatchObject({ level: 40, seq: secondChange });
    expect((await order(lender, { symbol: 'SOL_USDC_PERP', side: 'Ask', orderType: 'Limit', price: '100', quantity: '2', postOnly: true })).status).toBe(200);
    expect((await order(borrower, { symbol: 'SOL_USDC_PERP', side: 'Bid', orderType: 'Market', quantity: '2' })).body.status).toBe('Filled');
    await adminCli(server!.adminPort, ['set-index-price', 'SOL=110']);
    expect((await order(lender, { symbol: 'SOL_USDC_PERP', side: 'Ask', orderType: 'Limit', price: '120', quantity: '1', postOnly: true })).status).toBe(200);
    snapshots = { spot, margin, perp: await snapshot(server!) };
    expect((await order(borrower, { symbol: 'SOL_USDC', side: 'Bid', orderType: 'Limit', price: '95', quantity: '1', postOnly: true })).status).toBe(200);
    state = await view([lender, borrower]);
    expect(state[1].positions).toMatchObject([{ symbol: 'SOL_USDC_PERP', netQuantity: '2' }]);
    expect(state[1].borrowLend).toMatchObject([{ symbol: 'SOL', netQuantity: '-2' }]);
    await server!.stop('SIGTERM');
    server = undefined;

    const store = new LmdbJournalStore(dataDir);
    const changes = readConfigChanges(store);
    await store.close();
    expect(changes.map((change) => change.seq)).toEqual([firstChange, secondChange]);
  });

  it('replays to the same state hash after a clean stop and a kill, from each era\'s snapshot and from the first record', async () => {
    // The perpetual's index stays fresh (a day's maximum age), so a running server samples its mark
    // each second of engine time and journals those ticks: the state moves on while a server runs.
    // Each start is therefore checked against the state its predecessor stopped cleanly at (the
    // clean stop's seq and hash, which recovery itself also checks).
    const cleanStop = async (): Promise<{ seq: number; stateHash: string }> => {
      const store = new LmdbJournalStore(dataDir);
      const text = store.getMeta(CLEAN_STOP_KEY);
      await store.close();
      return JSON.parse(text!) as { seq: number; stateHash: string };
    };
    let stopped = await cleanStop();
    // A clean restart from the snapshot of era 3, then a kill and a reopen from it.
    let step = await start(ARGS);
    expect(step.gained).toBeUndefined();
    expect(step.replayed.snapshotSeq).toBe(snapshots.perp);
    expect([step.replayed.lastSeq, step.replayed.stateHash]).toEqual([stopped.seq, stopped.stateHash]);
    expect(await view([lender, borrower])).toEqual(state);
    await server!.stop('SIGKILL');
    step = await start(ARGS);
    expect(step.replayed.snapshotSeq).toBe(snapshots.perp);
    expect(step.replayed.lastSeq).toBeGreaterThanOrEqual(stopped.seq);
    expect(await view([lender, borrower])).toEqual(state);
    await server!.stop('SIGTERM');
    // Without the newer snapshots, replay crosses the second boundary, then both, then starts at 1.
    for (const from of [snapshots.perp, snapshots.margin, snapshots.spot, 0]) {
      stopped = await cleanStop();
      step = await start(ARGS);
      expect(step.gained).toBeUndefined();
      expect(step.replayed.snapshotSeq).toBe(from);
      expect([step.replayed.lastSeq, step.replayed.stateHash]).toEqual([stopped.seq, stopped.stateHash]);
      expect(await view([lender, borrower])).toEqual(state);
      await server!.stop('SIGTERM');
      server = undefined;
      if (from > 0) rmSync(snapshotPath(dataDir, from));
    }

    // Each earlier configuration is refused now.
    for (const margin of [true, false]) {
      await expect(startServer({ dataDir, args: ['--config', spotMarkets(configDir, margin), ...ARGS] })).rejects.toThrow(/exited with 3[\s\S]*EngineConfigChangedError/);
    }
  });
});
