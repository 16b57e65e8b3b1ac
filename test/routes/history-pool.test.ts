// Account history served by the front threads' history pools (--history-threads, piscina) against
// the same history served on the front threads themselves (--history-threads 0): the same data
// directory, read by one server of each kind in turn, gives the same answers for every history
// route (the signer's, the lend pools' public samples, the public trades and klines), refusals of bad parameters (checked on the pool's side) included, and stays visible to
// reads right after a new order is acknowledged.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, get, removeDir, signed, startServer, tempDataDir, type RunningServer, type TestAccount } from '../helpers/server.js';

const BASE_ARGS = ['--no-demo', '--front-threads', '2', '--speed-bump-ms', '0'];

/** The history requests the server's pools have answered (the admin endpoint's counter). */
async function poolReads(server: RunningServer): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${server.adminPort}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('exchange_history_pool_reads_total '));
  if (line === undefined) throw new Error('no exchange_history_pool_reads_total in the metrics');
  return Number(line.split(' ')[1]);
}

/** [path, instruction, query] of every history route this test reads. */
const READS: Array<[string, string, Record<string, unknown>]> = [
  ['/wapi/v1/history/fills', 'fillHistoryQueryAll', {}],
  ['/wapi/v1/history/fills', 'fillHistoryQueryAll', { sortDirection: 'Asc', limit: 2, offset: 1 }],
  ['/wapi/v1/history/fills', 'fillHistoryQueryAll', { symbol: 'SOL_USDC', fillType: 'User' }],
  ['/wapi/v1/history/orders', 'orderHistoryQueryAll', {}],
  ['/wapi/v1/history/orders', 'orderHistoryQueryAll', { symbol: 'BTC_USDC' }],
  ['/wapi/v1/history/dust', 'dustHistoryQueryAll', {}],
  ['/wapi/v1/history/borrowLend', 'borrowHistoryQueryAll', {}],
  ['/wapi/v1/history/interest', 'interestHistoryQueryAll', {}],
  ['/wapi/v1/history/borrowLend/positions', 'borrowPositionHistoryQueryAll', {}],
  ['/wapi/v1/history/funding', 'fundingHistoryQueryAll', {}],
  ['/wapi/v1/history/position', 'positionHistoryQueryAll', {}],
  ['/wapi/v1/history/settlement', 'settlementHistoryQueryAll', {}],
  // Refused parameters: a limit over the maximum, an unknown market, an unknown fill type.
  ['/wapi/v1/history/fills', 'fillHistoryQueryAll', { limit: 1001 }],
  ['/wapi/v1/history/orders', 'orderHistoryQueryAll', { symbol: 'NOPE_USDC' }],
  ['/wapi/v1/history/fills', 'fillHistoryQueryAll', { fillType: 'Sometimes' }],
];

describe('account history on the history pool', () => {
  const dataDir = tempDataDir();
  let server: RunningServer | undefined;
  let maker: TestAccount;
  let taker: TestAccount;

  const readAll = async (account: TestAccount): Promise<Array<{ status: number; body: unknown }>> => {
    const answers = [];
    for (const [path, instruction, query] of READS) {
      const r = await signed(server!.base, account, 'GET', path, instruction, query);
      answers.push({ status: r.status, body: r.body });
    }
    return answers;
  };
  /**
   * The public history routes: the lend pools' samples, and a refused interval; the market's
   * trades, newest and paged, and a refused limit; its klines of the trades, and a refused interval.
   */
  const PUBLIC_READS = [
    '/api/v1/borrowLend/markets/history?interval=1year', '/api/v1/borrowLend/markets/history?interval=1y',
    '/api/v1/trades?symbol=SOL_USDC', '/api/v1/trades/history?symbol=SOL_USDC&offset=1&limit=2', '/api/v1/trades?symbol=SOL_USDC&limit=1001',
    '/api/v1/klines?symbol=SOL_USDC&interval=1m&startTime=0', '/api/v1/klines?symbol=SOL_USDC&interval=7m&startTime=0',
  ];
  const readPublic = async (): Promise<Array<{ status: number; body: unknown }>> => {
    const answers = [];
    for (const path of PUBLIC_READS) {
      const r = await get(server!.base, path);
      answers.push({ status: r.status, body: r.body });
    }
    return answers;
  };

  beforeAll(async () => {
    server = await startServer({ dataDir, args: [...BASE_ARGS, '--history-threads', '0'] });
    maker = await createTestAccount(server.adminPort, ['USDC=10000', 'SOL=100']);
    taker = await createTestAccount(server.adminPort, ['USDC=10000']);
    for (const price of ['100', '101', '102']) {
      const placed = await signed(server.base, maker, 'POST', '/api/v1/order', 'orderExecute', { symbol: 'SOL_USDC', side: 'Ask', orderType: 'Limit', price, quantity: '2', postOnly: true });
      expect(placed.status).toBe(200);
    }
    const take = await signed(server.base, taker, 'POST', '/api/v1/order', 'orderExecute', { symbol: 'SOL_USDC', side: 'Bid', orderType: 'Limit', price: '102', quantity: '7' });
    expect(take.body.status).toBe('PartiallyFilled');
  });
  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  it('answers every history route as the front thread does, refusals included, and sees an order as soon as it is acknowledged', async () => {
    const onFront = { maker: await readAll(maker), taker: await readAll(taker), pools: await readPublic() };
    expect(onFront.pools.map((a) => a.status)).toEqual([200, 400, 200, 200, 400, 200, 400]);
    // The trades and klines read found the three trades (two of them on the paged read) and their candle.
    expect((onFront.pools[2].body as unknown[]).length).toBe(3);
    expect((onFront.pools[3].body as unknown[]).length).toBe(2);
    expect(onFront.pools[5].body).toMatchObject([{ trades: '3' }]);
    // The reads found something to compare: fills for both sides, and the three refusals.
    expect((onFront.taker[0].body as unknown[]).length).toBe(3);
    expect((onFront.maker[0].body as unknown[]).length).toBe(3);
    expect(onFront.taker.slice(-3).map((a) => a.status)).toEqual([400, 400, 400]);
    expect(await poolReads(server!)).toBe(0);
    await server!.stop();

    server = await startServer({ dataDir, args: [...BASE_ARGS, '--history-threads', '2'] });
    expect(await readAll(maker)).toEqual(onFront.maker);
    expect(await readAll(taker)).toEqual(onFront.taker);
    expect(await readPublic()).toEqual(onFront.pools);
    // Every one of those reads was answered by a pool, the refusals too.
    expect(await poolReads(server)).toBe(2 * READS.length + PUBLIC_READS.length);

    // Read right after the acknowledgement: the pool's thread sees what was durable when it was sent.
    const placed = await signed(server.base, taker, 'POST', '/api/v1/order', 'orderExecute', { symbol: 'SOL_USDC', side: 'Bid', orderType: 'Limit', price: '90', quantity: '1', clientId: 42 });
    expect(placed.status).toBe(200);
    const orders = await signed(server.base, taker, 'GET', '/wapi/v1/history/orders', 'orderHistoryQueryAll', {});
    expect(orders.body[0]).toMatchObject({ id: placed.body.id, clientId: 42 });
  });
});
