// Collateral conversion on the wire, against a real server: an account holding only SOL trades the
// SOL perpetual, and each fee or loss its USDC cannot pay is covered by selling SOL into a maker's
// bid on SOL_USDC (engine/core/liquidation/conversion.ts). Asserted by value: the fills history
// (systemOrderType CollateralConversion, the fee, each fillType filter), the order history, the
// account stream's origin COLLATERAL_CONVERSION, and the balances.
//
// The numbers (default configuration: spot and futures taker fee 5 bps; realization at mark off,
// so PnL realizes when the position reduces): the account opens long 1 SOL at 150 and owes the fee
// 0.075; one lot, 0.01 SOL at the maker's 140, pays 1.4 − 0.0007 = 1.3993, so 1.3243 USDC is left.
// It closes at 130: the fee 0.065 and 1.2593 of the 20 loss are paid, 18.7407 is owed; a lot pays
// 1.3993, so 14 lots (0.14 SOL: 19.5902) cover it and 13 would not (18.1909); 0.8495 USDC is left.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamClient } from '../helpers/stream-client.js';
import { adminCli, createTestAccount, removeDir, signed, startServer, tempDataDir, type RunningServer, type TestAccount } from '../helpers/server.js';

const ARGS = ['--no-demo', '--front-threads', '1', '--speed-bump-ms', '0', '--no-index-default', '--index-max-age-ms', '3600000', '--realize-pnl-interval-ms', '0'];

describe('collateral conversion on the wire', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let client: StreamClient;
  let debtor: TestAccount;
  let counterparty: TestAccount;
  let maker: TestAccount;
  const order = (account: TestAccount, body: Record<string, string | boolean>) =>
    signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { orderType: 'Limit', ...body });
  const fills = (account: TestAccount, params: Record<string, string> = {}) =>
    signed(server.base, account, 'GET', '/wapi/v1/history/fills', 'fillHistoryQueryAll', { sortDirection: 'Asc', ...params });
  const balances = async (account: TestAccount) => (await signed(server.base, account, 'GET', '/api/v1/capital', 'balanceQuery')).body as Record<string, { available: string }>;

  beforeAll(async () => {
    server = await startServer({ dataDir, args: ARGS });
    debtor = await createTestAccount(server.adminPort, ['SOL=10']);
    counterparty = await createTestAccount(server.adminPort, ['USDC=100000']);
    maker = await createTestAccount(server.adminPort, ['USDC=100000']);
    client = await StreamClient.connect(server.port);
    client.subscribeSigned(debtor, ['account.orderUpdate']);
    await adminCli(server.adminPort, ['set-index-price', 'SOL=150']);
    expect((await order(maker, { symbol: 'SOL_USDC', side: 'Bid', price: '140', quantity: '5', postOnly: true })).status).toBe(200);
  });

  afterAll(async () => {
    client?.close();
    await server?.stop();
    removeDir(dataDir);
  });

  it('sells only the SOL that covers each debt, and lists the sales as CollateralConversion fills', async () => {
    expect((await order(counterparty, { symbol: 'SOL_USDC_PERP', side: 'Ask', price: '150', quantity: '1', postOnly: true })).status).toBe(200);
    expect((await order(debtor, { symbol: 'SOL_USDC_PERP', side: 'Bid', price: '150', quantity: '1' })).body.status).toBe('Filled');
    expect(await balances(debtor)).toMatchObject({ SOL: { available: '9.99' }, USDC: { available: '1.3243' } });
    expect((await order(counterparty, { symbol: 'SOL_USDC_PERP', side: 'Bid', price: '130', quantity: '1', postOnly: true })).status).toBe(200);
    expect((await order(debtor, { symbol: 'SOL_USDC_PERP', side: 'Ask', price: '130', quantity: '1' })).body.status).toBe('Filled');
    expect(await balances(debtor)).toMatchObject({ SOL: { available: '9.85' }, USDC: { available: '0.8495' } });

    const all = (await fills(debtor)).body as Array<Record<string, unknown>>;
    expect(all.map((f) => [f.symbol, f.side, f.price, f.quantity, f.systemOrderType])).toEqual([
      ['SOL_USDC_PERP', 'Bid', '150', '1', null],
      ['SOL_USDC', 'Ask', '140', '0.01', 'CollateralConversion'],
      ['SOL_USDC_PERP', 'Ask', '130', '1', null],
      ['SOL_USDC', 'Ask', '140', '0.14', 'CollateralConversion'],
    ]);
    const conversions = [all[1], all[3]];
    expect(conversions.map((f) => [f.fee, f.feeSymbol, f.isMaker])).toEqual([['0.0007', 'USDC', false], ['0.0098', 'USDC', false]]);
    for (const group of ['CollateralConversion', 'AllLiquidation', 'CollateralConversionAndSpotLiquidation', 'collateral_conversion']) {
      expect((await fills(debtor, { fillType: group })).body, group).toEqual(conversions);
    }
    for (const none of ['Liquidation', 'BookLiquidation', 'Adl', 'Backstop']) expect((await fills(debtor, { fillType: none })).body, none).toEqual([]);
    expect((await fills(debtor, { fillType: 'User' })).body).toEqual([all[0], all[2]]);
    // The maker's side of the same fills was its own bid.
    const makerFills = (await fills(maker)).body as Array<Record<string, unknown>>;
    expect(makerFills.map((f) => [f.quantity, f.systemOrderType])).toEqual([['0.01', null], ['0.14', null]]);
    expect((await fills(maker, { fillType: 'CollateralConversion' })).body).toEqual([]);
  });

  it('shows the conversion orders in the order history and their origin on the account stream', async () => {
    const orders = (await signed(server.base, debtor, 'GET', '/wapi/v1/history/orders', 'orderHistoryQueryAll', { sortDirection: 'Asc' })).body as Array<Record<string, unknown>>;
    const system = orders.filter((o) => o.systemOrderType !== null);
    expect(system.map((o) => [o.symbol, o.orderType, o.timeInForce, o.side, o.quantity, o.executedQuantity, o.status, o.systemOrderType])).toEqual([
      ['SOL_USDC', 'Market', 'IOC', 'Ask', '0.01', '0.01', 'Filled', 'CollateralConversion'],
      ['SOL_USDC', 'Market', 'IOC', 'Ask', '0.14', '0.14', 'Filled', 'CollateralConversion'],
    ]);
    const update = await client.waitFor((m) => m.stream === 'account.orderUpdate' && m.data.e === 'orderFill' && m.data.l === '0.14', 'the second conversion fill');
    expect(update.data).toMatchObject({ O: 'COLLATERAL_CONVERSION', s: 'SOL_USDC', S: 'Ask', o: 'MARKET', f: 'IOC', L: '140', n: '0.0098', N: 'USDC' });
  });
});
