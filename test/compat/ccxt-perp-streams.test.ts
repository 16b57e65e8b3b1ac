// The perpetuals' streams. ccxt pro watchPositions (account.positionUpdate.<symbol> and
// account.positionUpdate): ccxt's
// backpack class, unchanged except for its URLs, receives the position events of a perpetual fill
// (positionOpened, positionAdjusted, positionClosed) and parses them; asserted by value: ccxt
// reads `b` (the break-even price) as its entryPrice, `Q` as contracts, `q`'s sign as the side.
// openInterest.<symbol> (ccxt has no watcher for it; a plain WebSocket client): a message with each
// mark sample whose open interest changed, none repeating an unchanged value within a minute.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCli, createTestAccount, removeDir, startServer, tempDataDir, type RunningServer, type TestAccount } from '../helpers/server.js';
import { ccxtPro, ccxtRest } from '../helpers/ccxt.js';
import { StreamClient } from '../helpers/stream-client.js';
import { waitUntil } from '../helpers/server.js';

const PERP = 'SOL/USDC:USDC';

describe('ccxt pro watchPositions against our server', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let makerAccount: TestAccount;
  let takerAccount: TestAccount;

  beforeAll(async () => {
    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '1', '--speed-bump-ms', '0', '--no-index-default', '--index-max-age-ms', '86400000'] });
    makerAccount = await createTestAccount(server.adminPort, ['USDC=10000']);
    takerAccount = await createTestAccount(server.adminPort, ['USDC=10000']);
    await adminCli(server.adminPort, ['set-index-price', 'SOL=100']);
  });
  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  it('opened, adjusted and closed by fills, with the figures of the position', async () => {
    const maker = ccxtRest(server, makerAccount);
    const taker = ccxtRest(server, takerAccount);
    await maker.loadMarkets();
    await taker.loadMarkets();
    const one = await ccxtPro(server, takerAccount);
    const all = await ccxtPro(server, makerAccount);
    try {
      let takerEvents = one.watchPositions([PERP]);
      let makerEvents = all.watchPositions();
      // A book watched after them on the same connections: their subscriptions are in place once it resolves.
      await one.watchOrderBook(PERP);
      await all.watchOrderBook(PERP);

      await maker.createOrder(PERP, 'limit', 'sell', 3, 100, { postOnly: true });
      await taker.createOrder(PERP, 'market', 'buy', 2);
      const [opened] = await takerEvents;
      // Taker fee 0.05 % of 200: break-even (200 + 0.1) / 2; exposure 2 at mark 100; IMF 1 at the default leverage limit 1.
      expect(opened).toMatchObject({
        symbol: PERP, side: 'long', contracts: '2', entryPrice: '100.05', markPrice: '100', notional: '200',
        unrealizedPnl: '0', realizedPnl: '0', initialMarginPercentage: 1, maintenanceMarginPercentage: 0.0125,
      });
      expect(opened.info).toMatchObject({ e: 'positionOpened', s: 'SOL_USDC_PERP', q: '2', Q: '2', B: '100', n: '200', l: '0' });
      expect(opened.info.i).toBe(opened.id);
      const [makerOpened] = await makerEvents;
      // The maker's open ask of 1 more makes its worst-side exposure 3; maker fee 0.02 % of 200.
      expect(makerOpened).toMatchObject({ symbol: PERP, side: 'short', contracts: '3', entryPrice: '99.98', notional: '300' });
      expect(makerOpened.info).toMatchObject({ e: 'positionOpened', q: '-2', B: '100' });

      takerEvents = one.watchPositions([PERP]);
      makerEvents = all.watchPositions();
      await taker.createOrder(PERP, 'market', 'buy', 1);
      const [adjusted] = await takerEvents;
      expect(adjusted).toMatchObject({ side: 'long', contracts: '3', entryPrice: '100.05', notional: '300' });
      expect(adjusted.info).toMatchObject({ e: 'positionAdjusted', q: '3', i: opened.id });
      expect((await makerEvents)[0].info).toMatchObject({ e: 'positionAdjusted', q: '-3', Q: '3' });

      // The index moves; the taker sells all 3 to the maker's bid at 110: a profit of 30 realized.
      await adminCli(server.adminPort, ['set-index-price', 'SOL=110']);
      await maker.createOrder(PERP, 'limit', 'buy', 3, 110, { postOnly: true });
      takerEvents = one.watchPositions([PERP]);
      makerEvents = all.watchPositions();
      await taker.createOrder(PERP, 'market', 'sell', 3);
      const [closed] = await takerEvents;
      expect(closed.info).toMatchObject({ e: 'positionClosed', q: '0', Q: '0', n: '0', p: '30', P: '0', M: '110', i: opened.id });
      expect((await makerEvents)[0].info).toMatchObject({ e: 'positionClosed', q: '0', p: '-30' });
    } finally {
      await one.close();
      await all.close();
    }
  });

  it('openInterest.<symbol>: the open interest when it changes, at the mark samples', async () => {
    const client = await StreamClient.connect(server.port);
    try {
      client.subscribe(['openInterest.SOL_USDC']);
      // A spot market has no open interest stream.
      await client.waitFor((m) => m.error?.code === 4006, 'the spot symbol refused');
      client.subscribe(['openInterest.SOL_USDC_PERP', 'markPrice.SOL_USDC_PERP']);
      await client.waitFor((m) => m.stream === 'openInterest.SOL_USDC_PERP', 'the first open interest');
      expect(client.on('openInterest.SOL_USDC_PERP')[0]).toMatchObject({ e: 'openInterest', s: 'SOL_USDC_PERP', o: '0' });
      const maker = ccxtRest(server, makerAccount);
      const taker = ccxtRest(server, takerAccount);
      await maker.loadMarkets();
      await taker.loadMarkets();
      await maker.createOrder(PERP, 'limit', 'sell', 2.5, 110, { postOnly: true });
      await taker.createOrder(PERP, 'market', 'buy', 2.5);
      await client.waitFor((m) => m.data?.o === '2.5', 'the open interest after the trade');
      // Three more samples: the unchanged value is not sent again.
      const samples = client.on('markPrice.SOL_USDC_PERP').length;
      await waitUntil(() => client.on('markPrice.SOL_USDC_PERP').length >= samples + 3 || undefined, 'three more mark samples');
      expect(client.on('openInterest.SOL_USDC_PERP').map((d) => d.o)).toEqual(['0', '2.5']);
      const [first, second] = client.on('openInterest.SOL_USDC_PERP');
      expect(Object.keys(second).sort()).toEqual(['E', 'e', 'o', 's']);
      expect(second.E).toBeGreaterThan(first.E);
    } finally {
      client.close();
    }
  });
});
