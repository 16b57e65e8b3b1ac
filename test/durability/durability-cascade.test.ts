// A kill -9 in the middle of a liquidation cascade: the real server, four borrowers that bought
// SOL with borrowed USDC, an operator index move (POST /admin/index-prices through the admin
// CLI) that pushes all four over the line, and the waterfall (engine/core/liquidation/
// waterfall.ts) selling their SOL into a market maker's bid step by step. One run is killed with
// SIGKILL while the first borrower is part way through its unwind (its USDC borrow below what it
// borrowed, still liquidating), restarted on the same data directory, and left to finish; another runs
// the same commands without interruption. Once no borrower is liquidating (each is healthy again
// or has nothing left to sell), both must be in the same state: every account's
// balances, borrow/lend positions and fills, and the insurance fund.
//
// Engine time across the restart. The engine's clock is the worker's wall clock in microseconds,
// which never goes backwards, not even across a restart (engine/shell/engine-worker.ts); the
// step timer is journaled state, due one step interval after the command that ran the last step,
// and a step's work depends only on the state it finds, not on how late it runs (a long quiet
// spell runs one step, not one per interval it spans). So after the restart the replayed journal
// leaves the same state and the same due step, the worker's injected Tick runs it, a few seconds
// later than in the uninterrupted run, and the steps that follow are the same steps. Nothing else
// in the state reads the time here: the index prices stay fresh (maximum age one day), the
// hourly interest falls due on the hours of the clock (a pair of runs that meets one is run
// again), the perpetuals are not used, and the book's
// guarded reference moves at most once a minute of engine time, which each run stays within.
// What differs is only when things happened: the comparison leaves out timestamps, and the ids of
// borrow/lend positions, which are the journal seq the position opened at: the worker injects
// Ticks on wall-clock time (the perpetuals' mark samples), so the same commands get different
// seqs in two runs, interrupted or not.

import { afterAll, describe, expect, it } from 'vitest';
import { adminCli, createTestAccount, removeDir, signed, startServer, tempDataDir, waitUntil, type RunningServer, type TestAccount } from '../helpers/server.js';

const ARGS = [
  '--no-demo', '--front-threads', '1', '--speed-bump-ms', '0', '--no-index-default', '--index-max-age-ms', '86400000',
  '--snapshot-every', '0', '--no-compact',
];
const BORROWS = ['1500', '1450', '1400', '1350'];

interface Actors { lender: TestAccount; maker: TestAccount; borrowers: TestAccount[] }

const dirs: string[] = [];
const servers: RunningServer[] = [];
afterAll(async () => {
  for (const server of servers) await server.stop('SIGKILL');
  for (const dir of dirs) removeDir(dir);
});

const call = (server: RunningServer, account: TestAccount, method: string, path: string, instruction: string, body?: Record<string, string | number | boolean>) =>
  signed(server.base, account, method, path, instruction, body);

async function ok(response: Promise<{ status: number; body: unknown }>, what: string): Promise<unknown> {
  const { status, body } = await response;
  if (status !== 200) throw new Error(`${what}: ${status} ${JSON.stringify(body)}`);
  return body;
}

/** The lender lends USDC and asks SOL at 100; the maker bids 95 for 1000 SOL; each borrower holds 10 SOL, borrows USDC and buys SOL with it. */
async function setUp(server: RunningServer): Promise<Actors> {
  const lender = await createTestAccount(server.adminPort, ['USDC=1000000', 'SOL=1000']);
  const maker = await createTestAccount(server.adminPort, ['USDC=1000000']);
  await adminCli(server.adminPort, ['set-index-price', 'SOL=100']);
  await ok(call(server, lender, 'POST', '/api/v1/borrowLend', 'borrowLendExecute', { quantity: '100000', side: 'Lend', symbol: 'USDC' }), 'lend');
  await ok(call(server, lender, 'POST', '/api/v1/order', 'orderExecute', { symbol: 'SOL_USDC', side: 'Ask', orderType: 'Limit', price: '100', quantity: '100', postOnly: true }), 'ask');
  await ok(call(server, maker, 'POST', '/api/v1/order', 'orderExecute', { symbol: 'SOL_USDC', side: 'Bid', orderType: 'Limit', price: '95', quantity: '1000', postOnly: true }), 'bid');
  const borrowers: TestAccount[] = [];
  for (const borrow of BORROWS) {
    const borrower = await createTestAccount(server.adminPort, ['SOL=10']);
    await ok(call(server, borrower, 'PATCH', '/api/v1/account', 'accountUpdate', { leverageLimit: '10' }), 'leverage');
    await ok(call(server, borrower, 'POST', '/api/v1/borrowLend', 'borrowLendExecute', { quantity: borrow, side: 'Borrow', symbol: 'USDC' }), 'borrow');
    await ok(call(server, borrower, 'POST', '/api/v1/order', 'orderExecute', { symbol: 'SOL_USDC', side: 'Bid', orderType: 'Market', quoteQuantity: borrow }), 'buy');
    borrowers.push(borrower);
  }
  return { lender, maker, borrowers };
}

/** The USDC the account borrows (0 when none). */
async function usdcBorrowed(server: RunningServer, account: TestAccount): Promise<number> {
  const positions = (await ok(call(server, account, 'GET', '/api/v1/borrowLend/positions', 'borrowLendPositionQuery'), 'positions')) as Array<{ symbol: string; netQuantity: string }>;
  const usdc = positions.find((p) => p.symbol === 'USDC');
  return usdc === undefined ? 0 : -Number(usdc.netQuantity);
}

/** Everything the comparison covers, without timestamps. */
async function view(server: RunningServer, actors: Actors): Promise<unknown> {
  const accounts = [actors.lender, actors.maker, ...actors.borrowers];
  const strip = (rows: unknown, also = ''): unknown => JSON.parse(JSON.stringify(rows, (key, value) => (key !== '' && (key === 'timestamp' || key === also) ? undefined : value)));
  const insurance = strip(await (await fetch(`http://127.0.0.1:${server.adminPort}/admin/insurance`)).json());
  return {
    insurance,
    accounts: await Promise.all(accounts.map(async (account) => ({
      capital: await ok(call(server, account, 'GET', '/api/v1/capital', 'balanceQuery'), 'capital'),
      borrowLend: strip(await ok(call(server, account, 'GET', '/api/v1/borrowLend/positions', 'borrowLendPositionQuery'), 'positions'), 'id'),
      fills: strip(await ok(call(server, account, 'GET', '/wapi/v1/history/fills', 'fillHistoryQueryAll', { limit: 1000 }), 'fills')),
    }))),
  };
}

async function liquidating(server: RunningServer, account: TestAccount): Promise<boolean> {
  return ((await ok(call(server, account, 'GET', '/api/v1/account', 'accountQuery'), 'account')) as { liquidating: boolean }).liquidating;
}

/** How many borrowers are liquidating. */
async function liquidatingCount(server: RunningServer, actors: Actors): Promise<number> {
  let n = 0;
  for (const borrower of actors.borrowers) if (await liquidating(server, borrower)) n++;
  return n;
}

async function cascade(kill: boolean): Promise<{ view: unknown; killedAt: number }> {
  const dataDir = tempDataDir();
  dirs.push(dataDir);
  let server = await startServer({ dataDir, args: ARGS });
  servers.push(server);
  const actors = await setUp(server);
  await adminCli(server.adminPort, ['set-index-price', 'SOL=66']);
  // The move flips every borrower at once (the re-check runs in the SetIndexPrice command).
  expect(await liquidatingCount(server, actors)).toBe(BORROWS.length);
  let killedAt = 0;
  if (kill) {
    const first = actors.borrowers[0];
    killedAt = await waitUntil(async () => {
      const borrowed = await usdcBorrowed(server, first);
      return borrowed < Number(BORROWS[0]) && (await liquidating(server, first)) ? borrowed : undefined;
    }, 'the first borrower part way through its unwind', 60_000);
    await server.stop('SIGKILL');
    server = await startServer({ dataDir, args: ARGS });
    servers.push(server);
  }
  await waitUntil(async () => ((await liquidatingCount(server, actors)) === 0 ? true : undefined), 'every borrower out of the liquidating state', 90_000);
  const result = await view(server, actors);
  await server.stop('SIGTERM');
  return { view: result, killedAt };
}

describe('kill -9 during a liquidation cascade', () => {
  it('restarts mid-cascade, finishes the waterfall and ends in the state of an uninterrupted run', async () => {
    // The pools' interest falls due on the hours of engine time, that is of the wall clock: a pair
    // of runs with an hour inside one of them is run again (the next pair cannot meet the same hour).
    for (let attempt = 1; ; attempt++) {
      const uninterrupted = await cascade(false);
      const killed = await cascade(true);
      const interest = (v: unknown): boolean => /"cumulativeInterest":"-?0\.0*[1-9]/.test(JSON.stringify(v));
      if (attempt === 1 && (interest(uninterrupted.view) || interest(killed.view))) continue;
      expect(killed.killedAt).toBeGreaterThan(0);
      // The cascade did happen: every borrower sold SOL into the maker's bid.
      const accounts = (uninterrupted.view as { accounts: Array<{ fills: unknown[] }> }).accounts;
      for (const borrower of accounts.slice(2)) expect(borrower.fills.length).toBeGreaterThan(1);
      expect(killed.view).toEqual(uninterrupted.view);
      return;
    }
    // Room for the second pair when the first met an hour, on a loaded machine.
  }, 600_000);
});
