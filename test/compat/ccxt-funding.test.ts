// Mark prices and funding through ccxt, against the real server: fetchFundingRate reads GET
// /api/v1/markPrices (the engine's mark, index and running estimate of the open interval),
// fetchFundingRateHistory reads GET /api/v1/fundingRates (each ended interval, from LMDB), and the
// markPrice.<symbol> stream pushes the same figures each second; GET /api/v1/position shows each
// position's cumulative funding. SOL_USDC_PERP funds every 2 s
// here (a markets file with fundingInterval 2000) so intervals end within the test; its book is
// empty, so its mark is the operator's index and a quiet interval's rate is exactly
// 0.01 % × 2000 / 28 800 000 = 6944 × 10^-12 (truncated), i.e. "0.000000006944".

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MARKETS } from '../../src/config.js';
import { ccxtRest } from '../helpers/ccxt.js';
import { createTestAccount, get, removeDir, signed, startServer, tempDataDir, waitUntil, type RunningServer } from '../helpers/server.js';
import { StreamClient } from '../helpers/stream-client.js';

const INTERVAL_MS = 2000;
const QUIET_RATE = '0.000000006944';

let server: RunningServer;
let dataDir: string;

async function setIndex(prices: Record<string, string>): Promise<void> {
  const response = await fetch(`http://127.0.0.1:${server.adminPort}/admin/index-prices`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ prices, source: 'Operator' }),
  });
  expect(response.status).toBe(200);
}

beforeAll(async () => {
  dataDir = tempDataDir();
  const markets = { ...DEFAULT_MARKETS, markets: DEFAULT_MARKETS.markets.map((m) => (m.symbol === 'SOL_USDC_PERP' ? { ...m, fundingInterval: INTERVAL_MS } : m)) };
  const configFile = join(dataDir, 'markets.json');
  writeFileSync(configFile, JSON.stringify(markets));
  server = await startServer({ dataDir, args: ['--no-demo', '--no-index-default', '--front-threads', '1', '--speed-bump-ms', '0', '--index-max-age-ms', '600000', '--config', configFile] });
  await setIndex({ SOL: '150.25' });
});

afterAll(async () => {
  await server?.stop();
  removeDir(dataDir);
});

describe('ccxt: funding rates of a perpetual', () => {
  it('fetchFundingRate reads the mark, the index, the running estimate and the next interval end', async () => {
    const exchange = ccxtRest(server);
    const rate = await exchange.fetchFundingRate('SOL/USDC:USDC');
    expect([rate.symbol, rate.markPrice, rate.indexPrice, rate.fundingRate]).toEqual(['SOL/USDC:USDC', 150.25, 150.25, Number(QUIET_RATE)]);
    expect(rate.info).toMatchObject({ symbol: 'SOL_USDC_PERP', markPrice: '150.25', indexPrice: '150.25', fundingRate: QUIET_RATE });
    expect(rate.nextFundingTimestamp! % INTERVAL_MS).toBe(0);
    expect(Math.abs(rate.nextFundingTimestamp! - Date.now())).toBeLessThan(10 * INTERVAL_MS);
    // BTC has no index and an empty book: no mark, no row; a spot symbol lists nothing.
    expect((await get(server.base, '/api/v1/markPrices')).body).toEqual([rate.info]);
    expect((await get(server.base, '/api/v1/markPrices?symbol=SOL_USDC')).body).toEqual([]);
  });

  it('fetchFundingRateHistory reads each ended interval with its rate, at the interval end', async () => {
    const exchange = ccxtRest(server);
    const history = await waitUntil(async () => {
      const rows = await exchange.fetchFundingRateHistory('SOL/USDC:USDC');
      return rows.length >= 2 ? rows : undefined;
    }, 'two funding intervals ended');
    for (const row of history) {
      expect([row.symbol, row.fundingRate]).toEqual(['SOL/USDC:USDC', Number(QUIET_RATE)]);
      expect(row.timestamp! % INTERVAL_MS).toBe(0);
      expect(row.info).toEqual({ symbol: 'SOL_USDC_PERP', intervalEndTimestamp: row.datetime, fundingRate: QUIET_RATE });
      expect(row.datetime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    }
    // Newest first on the wire, one interval apart.
    const wire = (await get(server.base, '/api/v1/fundingRates?symbol=SOL_USDC_PERP&limit=2')).body as Array<{ intervalEndTimestamp: string }>;
    expect(wire).toHaveLength(2);
    expect(Date.parse(`${wire[0].intervalEndTimestamp}Z`) - Date.parse(`${wire[1].intervalEndTimestamp}Z`)).toBe(INTERVAL_MS);
  });

  it('refuses what is not a perpetual or not a number, and publishes markPrice each second', async () => {
    for (const path of ['/api/v1/fundingRates?symbol=SOL_USDC', '/api/v1/fundingRates', '/api/v1/fundingRates?symbol=SOL_USDC_PERP&limit=0', '/api/v1/markPrices?symbol=NOPE', '/api/v1/markPrices?marketType=FOO']) {
      const response = await get(server.base, path);
      expect(response.status, path).toBe(400);
      expect(Object.keys(response.body as object).sort(), path).toEqual(['code', 'message']);
    }
    const client = await StreamClient.connect(server.port);
    client.send({ method: 'SUBSCRIBE', params: ['markPrice.SOL_USDC_PERP'] });
    const messages = await waitUntil(() => (client.messages.length >= 2 ? client.messages : undefined), 'two markPrice messages');
    for (const message of messages) {
      expect(message.stream).toBe('markPrice.SOL_USDC_PERP');
      expect(message.data).toMatchObject({ e: 'markPrice', s: 'SOL_USDC_PERP', p: '150.25', i: '150.25', f: QUIET_RATE });
      expect(message.data.n % INTERVAL_MS).toBe(0);
    }
    client.socket.close();
  });

  it('fetchFundingHistory reads each payment of the signer: the long pays (rounded up), the short receives (rounded down)', async () => {
    const [short, long] = [await createTestAccount(server.adminPort, ['USDC=1000']), await createTestAccount(server.adminPort, ['USDC=1000'])];
    const order = { symbol: 'SOL_USDC_PERP', orderType: 'Limit', price: '150.25', quantity: '1' };
    expect((await signed(server.base, short, 'POST', '/api/v1/order', 'orderExecute', { ...order, side: 'Ask', postOnly: true })).status).toBe(200);
    expect((await signed(server.base, long, 'POST', '/api/v1/order', 'orderExecute', { ...order, side: 'Bid' })).status).toBe(200);
    // 1 SOL at 150.25 × 0.000000006944 = 0.00000104334 USDC an interval: the long pays 2 units, the short gets 1.
    const paid = await waitUntil(async () => {
      const rows = await ccxtRest(server, long).fetchFundingHistory('SOL/USDC:USDC');
      return rows.length >= 2 ? rows : undefined;
    }, 'two funding payments of the long');
    for (const row of paid) {
      expect([row.symbol, row.amount, row.rate, row.id]).toEqual(['SOL/USDC:USDC', -0.000002, Number(QUIET_RATE), String(long.accountId)]);
      expect(row.timestamp! % INTERVAL_MS).toBe(0);
    }
    const received = await ccxtRest(server, short).fetchFundingHistory('SOL/USDC:USDC', undefined, 1);
    expect(received.map((r) => [r.amount, r.info.userId, r.info.subaccountId, r.info.intervalEndTimestamp.length])).toEqual([[0.000001, short.accountId, null, 19]]);
    // GET /api/v1/position shows the position's funding since it opened (what its history sums
    // to, both read between two interval ends), and its break-even price carries it beside the fee.
    const units = (decimal: string | number): number => Math.round(Number(decimal) * 1e6);
    const position = await waitUntil(async () => {
      const [shown] = (await signed(server.base, long, 'GET', '/api/v1/position', 'positionQuery', { symbol: 'SOL_USDC_PERP' })).body as Array<Record<string, string>>;
      const rows = await ccxtRest(server, long).fetchFundingHistory('SOL/USDC:USDC');
      const sum = rows.reduce((total, row) => total + units(row.amount!), 0);
      return units(shown.cumulativeFundingPayment) === sum ? { shown, sum } : undefined;
    }, 'the position and its funding history read between two interval ends');
    expect(position.sum).toBeLessThanOrEqual(-4);
    expect(position.shown.cumulativeFundingPayment).toBe(`-${(-position.sum / 1e6).toFixed(6)}`);
    // Entry 150.25 plus the taker fee (0.075125) and the funding paid, per SOL.
    expect(units(position.shown.breakEvenPrice)).toBe(150_325_125 - position.sum);
    // A symbol that is not a perpetual is refused; a subaccount lists nothing.
    expect((await signed(server.base, long, 'GET', '/wapi/v1/history/funding', 'fundingHistoryQueryAll', { symbol: 'SOL_USDC' })).status).toBe(400);
    expect((await signed(server.base, long, 'GET', '/wapi/v1/history/funding', 'fundingHistoryQueryAll', { subaccountId: 1 })).body).toEqual([]);
  });
});
