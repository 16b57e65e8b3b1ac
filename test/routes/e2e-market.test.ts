// Market orders end to end: the real server as a child process (default fees: maker 2 bps, taker
// 5 bps; default 100 ms speed bump), accounts made through the admin CLI, signed market orders by
// quantity and by quote quantity against resting limit orders, the exact balances after fees, and
// the default price band (0.75–1.25 × the last trade price) on limit prices.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestAccount,
  removeDir,
  signed,
  startServer,
  tempDataDir,
  type RunningServer,
  type TestAccount,
} from '../helpers/server.js';

describe('market orders through the whole path', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let maker: TestAccount;
  let taker: TestAccount;

  const order = (account: TestAccount, body: Record<string, string>) =>
    signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { symbol: 'SOL_USDC', ...body });
  const capital = async (account: TestAccount) => (await signed(server.base, account, 'GET', '/api/v1/capital', 'balanceQuery')).body;

  beforeAll(async () => {
    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '1'] });
    maker = await createTestAccount(server.adminPort, ['SOL=100', 'USDC=1000']);
    taker = await createTestAccount(server.adminPort, ['SOL=10', 'USDC=10000']);
  });

  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  it('rests the maker book', async () => {
    for (const body of [
      { side: 'Ask', orderType: 'Limit', price: '20', quantity: '1', postOnly: 'true' },
      { side: 'Ask', orderType: 'Limit', price: '21', quantity: '1', postOnly: 'true' },
      { side: 'Bid', orderType: 'Limit', price: '19', quantity: '2', postOnly: 'true' },
    ]) {
      const placed = await order(maker, body);
      expect(placed.status).toBe(200);
      expect(placed.body.status).toBe('New');
    }
  });

  it('buys by quantity across two levels', async () => {
    const buy = await order(taker, { side: 'Bid', orderType: 'Market', quantity: '1.5' });
    expect(buy.status).toBe(200);
    expect(buy.body).toMatchObject({
      orderType: 'Market', side: 'Bid', quantity: '1.5', quoteQuantity: null, slippageTolerance: null, slippageToleranceType: null,
      executedQuantity: '1.5', executedQuoteQuantity: '30.5', status: 'Filled', expiryReason: null,
    });
    expect(buy.body).not.toHaveProperty('price');
    // 1 at 20 + 0.5 at 21 = 30.5 USDC; 1.5 SOL less the 5 bps taker fee (0.00075).
    const balances = await capital(taker);
    expect(balances.SOL).toEqual({ available: '11.49925', locked: '0', staked: '0' });
    expect(balances.USDC).toEqual({ available: '9969.5', locked: '0', staked: '0' });
  });

  it('sells by quote quantity: whole lots only, never more quote than asked', async () => {
    const sell = await order(taker, { side: 'Ask', orderType: 'Market', quoteQuantity: '10' });
    expect(sell.status).toBe(200);
    // A 0.01 SOL lot at 19 is 0.19 USDC: 52 lots make 9.88; the 0.12 left buys no whole lot.
    expect(sell.body).toMatchObject({
      orderType: 'Market', side: 'Ask', quantity: null, quoteQuantity: '10',
      executedQuantity: '0.52', executedQuoteQuantity: '9.88', status: 'Filled',
    });
    const balances = await capital(taker);
    // 9.88 USDC less the 5 bps taker fee (0.00494).
    expect(balances.USDC).toEqual({ available: '9979.37506', locked: '0', staked: '0' });
    expect(balances.SOL).toEqual({ available: '10.97925', locked: '0', staked: '0' });
  });

  it('expires the remainder when the book runs out', async () => {
    const sell = await order(taker, { side: 'Ask', orderType: 'Market', quantity: '2' });
    expect(sell.status).toBe(200);
    expect(sell.body).toMatchObject({
      executedQuantity: '1.48', executedQuoteQuantity: '28.12', status: 'Expired', expiryReason: 'InsufficientLiquidity',
    });
    const balances = await capital(taker);
    // 28.12 USDC less 0.01406; the unsold 0.52 SOL is released.
    expect(balances.USDC).toEqual({ available: '10007.481', locked: '0', staked: '0' });
    expect(balances.SOL).toEqual({ available: '9.49925', locked: '0', staked: '0' });
    // The maker paid 2 bps on what it received: 0.0061 USDC on 30.5, 0.0004 SOL on 2 SOL.
    const makerBalances = await capital(maker);
    expect(makerBalances.USDC).toEqual({ available: '992.4939', locked: '0', staked: '0' });
    expect(makerBalances.SOL).toEqual({ available: '99.9996', locked: '0.5', staked: '0' });
  });

  it('refuses a limit price beyond the band around the last trade price (19)', async () => {
    const far = await order(taker, { side: 'Bid', orderType: 'Limit', price: '14.24', quantity: '1' });
    expect([far.status, far.body]).toEqual([400, { code: 'INVALID_PRICE', message: 'Price is too far from the last active price' }]);
    const edge = await order(maker, { side: 'Bid', orderType: 'Limit', price: '14.25', quantity: '1' });
    expect([edge.status, edge.body.status]).toEqual([200, 'New']);
  });

  it('refuses malformed market orders before the engine', async () => {
    for (const [body, code] of [
      [{ side: 'Bid', orderType: 'Market' }, 'INVALID_QUANTITY'],
      [{ side: 'Bid', orderType: 'Market', quantity: '1', quoteQuantity: '5' }, 'INVALID_QUANTITY'],
      [{ side: 'Bid', orderType: 'Market', quoteQuantity: '0.0000001' }, 'INVALID_QUANTITY'],
      [{ side: 'Bid', orderType: 'Market', quantity: '1', price: '20' }, 'INVALID_ORDER'],
      [{ side: 'Bid', orderType: 'Market', quantity: '1', postOnly: 'true' }, 'INVALID_ORDER'],
      [{ side: 'Bid', orderType: 'Limit', price: '20', quantity: '1', quoteQuantity: '5' }, 'INVALID_ORDER'],
    ] as const) {
      const refused = await order(taker, body);
      expect([refused.status, refused.body.code]).toEqual([400, code]);
    }
  });
});
