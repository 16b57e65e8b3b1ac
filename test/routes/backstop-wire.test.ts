// The backstop liquidity providers on the wire, against a real server (default configuration:
// SOL_USDC_PERP, IMF 10 % at a 10× leverage limit, MMF about 1.5 % at this size, the Auto-Close MF
// max(MMF / 2, MMF − 0.006) about 0.95 %). A trader long 10 SOL at 150 with 160 USDC is pushed far
// below the Auto-Close MF by the operator's index (134.75: equity 6.75 against a notional of
// 1 347.5, a margin fraction of 0.5 %), and a provider named on the admin endpoint takes the whole
// position off the book at the mark. Asserted: the fills history of both (fill type Backstop,
// systemOrderType LiquidatePositionOnBackstop, a non-zero trade id, the liquidation fee on the
// trader's half only), the account stream's origin, the public trade stream and the trade history
// (the trade is there), the public liquidation stream (the trader's half only), and the klines
// (the trade is in none: their volume is the opening trade's alone).
// The file holds a perpetual position and asserts fills and fees to the unit, so it starts clear of
// the wall clock's next hour (the hour of engine time brings funding).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamClient } from '../helpers/stream-client.js';
import { adminCli, clearOfTheHour, createTestAccount, hourGuardTimeout, removeDir, signed, startServer, tempDataDir, waitUntil, type RunningServer, type TestAccount } from '../helpers/server.js';

/** A bound on this file's duration on a loaded machine (about 7 s alone). */
const FILE_SPAN_MS = 60_000;

const ARGS = ['--no-demo', '--front-threads', '1', '--speed-bump-ms', '0', '--no-index-default', '--index-max-age-ms', '3600000'];
const SYMBOL = 'SOL_USDC_PERP';

describe('the backstop on the wire', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let client: StreamClient;
  let trader: TestAccount;
  let provider: TestAccount;
  const fills = (account: TestAccount, params: Record<string, string> = {}) =>
    signed(server.base, account, 'GET', '/wapi/v1/history/fills', 'fillHistoryQueryAll', { sortDirection: 'Asc', ...params });
  const liquidating = async () => (await signed(server.base, trader, 'GET', '/api/v1/account', 'accountQuery')).body.liquidating as boolean;

  beforeAll(async () => {
    await clearOfTheHour(FILE_SPAN_MS);
    server = await startServer({ dataDir, args: ARGS });
    const seller = await createTestAccount(server.adminPort, ['USDC=100000']);
    trader = await createTestAccount(server.adminPort, ['USDC=160']);
    provider = await createTestAccount(server.adminPort, ['USDC=100000']);
    client = await StreamClient.connect(server.port);
    client.subscribe(['liquidation', `trade.${SYMBOL}`]);
    client.subscribeSigned(trader, ['account.orderUpdate']);
    await adminCli(server.adminPort, ['set-index-price', 'SOL=150']);
    expect((await signed(server.base, trader, 'PATCH', '/api/v1/account', 'accountUpdate', { leverageLimit: '10' })).status).toBe(200);
    const ask = await signed(server.base, seller, 'POST', '/api/v1/order', 'orderExecute', { symbol: SYMBOL, orderType: 'Limit', side: 'Ask', price: '150', quantity: '10', postOnly: true });
    expect(ask.status).toBe(200);
    const bid = await signed(server.base, trader, 'POST', '/api/v1/order', 'orderExecute', { symbol: SYMBOL, orderType: 'Market', side: 'Bid', quantity: '10' });
    expect(bid.body.status).toBe('Filled');
    await client.waitFor((m) => m.stream === `trade.${SYMBOL}`, 'the opening trade');
    const named = await adminCli(server.adminPort, ['set-backstop-provider', '--account', String(provider.accountId)]);
    expect(named.providers).toEqual([{ accountId: provider.accountId, rank: 1 }]);
  }, hourGuardTimeout(FILE_SPAN_MS));

  afterAll(async () => {
    client?.close();
    await server?.stop();
    removeDir(dataDir);
  });

  it('fills the position off the book against the provider, with trade ids, the Backstop fill type and the provider origin', async () => {
    await adminCli(server.adminPort, ['set-index-price', 'SOL=134.75']);
    await waitUntil(async () => ((await liquidating()) ? undefined : true), 'the trader out of liquidation');
    const message = (await client.waitFor((m) => m.stream === 'liquidation', 'a liquidation message')).data;
    expect(message).toMatchObject({ e: 'liquidation', q: '10.00', p: '134.75', S: 'Ask', s: SYMBOL });

    const own = (await fills(trader, { fillType: 'Backstop' })).body as Array<Record<string, unknown>>;
    expect(own).toEqual([expect.objectContaining({
      symbol: SYMBOL, side: 'Ask', price: '134.75', quantity: '10', isMaker: false, systemOrderType: 'LiquidatePositionOnBackstop', feeSymbol: 'USDC',
    })]);
    const tradeId = own[0].tradeId as number;
    expect(tradeId).toBe(2);
    // The liquidation fee (1 % of 1 347.5, as far as the 6.75 USDC left after the loss go), no trading fee.
    expect(own[0].fee).toBe('6.75');
    const theirs = (await fills(provider, { fillType: 'Backstop' })).body as Array<Record<string, unknown>>;
    expect(theirs).toEqual([expect.objectContaining({ side: 'Bid', price: '134.75', quantity: '10', isMaker: true, fee: '0', tradeId, systemOrderType: 'LiquidatePositionOnBackstop' })]);
    expect((await fills(trader, { fillType: 'Liquidation' })).body).toEqual(own);
    for (const none of ['BookLiquidation', 'Adl']) expect((await fills(trader, { fillType: none })).body, none).toEqual([]);

    const update = client.on('account.orderUpdate').find((u) => u.e === 'orderFill' && u.S === 'Ask');
    expect(update).toMatchObject({ O: 'BACKSTOP_LIQUIDITY_PROVIDER', l: '10', L: '134.75', t: tradeId });
    // One liquidation message: the trader's half (the provider's, the maker's, sends none).
    expect(client.on('liquidation')).toHaveLength(1);
    const trade = await client.waitFor((m) => m.stream === `trade.${SYMBOL}` && m.data.t === tradeId, 'the backstop trade');
    expect(trade.data).toMatchObject({ p: '134.75', q: '10.00', m: true });
  });

  it('keeps the trade in the trade history and out of the klines', async () => {
    const trades = await waitUntil(async () => {
      const response = await fetch(`${server.base}/api/v1/trades?symbol=${SYMBOL}`);
      const body = (await response.json()) as Array<Record<string, unknown>>;
      return body.some((t) => t.id === 2) ? body : undefined;
    }, 'the backstop trade in the trade history');
    expect(trades.map((t) => [t.id, t.price, t.quantity])).toEqual(expect.arrayContaining([[1, '150', '10'], [2, '134.75', '10']]));
    // Buckets that start from five minutes back (one-second klines span a bounded window from
    // their start), hours from the start of the one before.
    const startS = Math.floor(Date.now() / 1000) - 300;
    for (const interval of ['1s', '1m', '1h']) {
      const from = interval === '1h' ? startS - 3600 - (startS % 3600) : startS;
      const response = await fetch(`${server.base}/api/v1/klines?symbol=${SYMBOL}&interval=${interval}&startTime=${from}`);
      const klines = (await response.json()) as Array<Record<string, string>>;
      expect(klines.reduce((sum, k) => sum + Number(k.volume), 0), interval).toBe(10);
      expect(klines.reduce((sum, k) => sum + Number(k.trades), 0), interval).toBe(1);
      expect(klines.every((k) => k.low === '150' && k.high === '150'), interval).toBe(true);
    }
  });
});
