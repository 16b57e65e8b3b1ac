// The liquidation waterfall on the wire, against a real server: a borrower of USDC holding SOL is
// pushed over the line by the operator's index price (set-index-price), and its SOL is sold on the
// book into a maker's bids by system orders. Asserted by value: the public `liquidation` stream's
// message per fill; the fills history (systemOrderType, the fee with the 1 % liquidation fee, and
// each fillType filter); the order history's systemOrderType; the borrow/lend history's moves of
// source Liquidation; the insurance fund's fee line on the admin endpoint.
//
// The numbers (default configuration: SOL weight 0.85, USDC borrow MMF 0.0625, taker fee 5 bps,
// liquidation chunk 10 %, fee 1 %, slack 5 %): the borrower holds 139.95 SOL against 15 000 USDC
// borrowed. At an index of 130 its equity, 139.95 × 130 × 0.85 − 15 000 = 464.5, is below the
// maintenance margin 937.5. The first step sells for 10 % of the borrow plus the slack, 1 575 USDC,
// at the mark 130: ceil(1575 / 1.3) = 1212 lots, 12.12 SOL, filled at the maker's 130. It pays
// 1 575.6 USDC, less the taker fee 0.7878, less the liquidation fee floor(1 574.8122 × 1 %) =
// 15.748122: the fill's fee is 16.535922 and 1 559.064078 USDC repay the borrow.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OrderEvent, OrderFlag, SystemOrderType } from '../../engine/bus/types.js';
import { LiquidationStreams } from '../../src/front/streams/liquidations.js';
import type { StreamOutput } from '../../src/front/streams/family.js';
import { newOrderRec } from '../../engine/bus/codec.js';
import { loadConfig } from '../../src/config.js';
import { parseFillType, type FillFilter } from '../../src/wire/fill-type.js';
import { StreamClient } from '../helpers/stream-client.js';
import { adminCli, createTestAccount, removeDir, signed, startServer, tempDataDir, waitUntil, type RunningServer, type TestAccount } from '../helpers/server.js';

const ARGS = ['--no-demo', '--front-threads', '1', '--speed-bump-ms', '0', '--no-index-default', '--index-max-age-ms', '3600000'];
const USDC = 1_000_000n;

/** A decimal string of at most 6 decimals as integer micro-units. */
const micros = (text: string): bigint => {
  const [whole, fraction = ''] = text.split('.');
  return BigInt(whole) * USDC + BigInt(fraction.padEnd(6, '0'));
};

describe('fill types: what each fillType filter selects', () => {
  const config = loadConfig(['--no-demo'], {});
  const spot = config.markets.findIndex((m) => m.symbol === 'SOL_USDC');
  const perp = config.markets.findIndex((m) => m.symbol === 'SOL_USDC_PERP');
  const fill = (systemOrderType: SystemOrderType, marketId = spot) => ({ ...newOrderRec(), systemOrderType, marketId });
  const selects = (name: string) => {
    const filter = parseFillType(config, new URLSearchParams({ fillType: name })) as FillFilter;
    const all = [SystemOrderType.None, SystemOrderType.LiquidatePositionOnBook, SystemOrderType.LiquidatePositionOnBackstop, SystemOrderType.LiquidatePositionOnAdl,
      SystemOrderType.CollateralConversion, SystemOrderType.FutureExpiry, SystemOrderType.OrderBookClosed];
    return [all.filter((t) => filter(fill(t))), all.filter((t) => filter(fill(t, perp)))];
  };

  it('classifies by the order\'s system order type, liquidation groups included', () => {
    const { None, LiquidatePositionOnBook: Book, LiquidatePositionOnBackstop: Backstop, LiquidatePositionOnAdl: Adl, CollateralConversion } = SystemOrderType;
    expect(perp).toBeGreaterThan(0);
    expect(selects('User')).toEqual([[None], [None]]);
    expect(selects('BookLiquidation')).toEqual([[Book], [Book]]);
    expect(selects('Backstop')).toEqual([[Backstop], [Backstop]]);
    expect(selects('Adl')).toEqual([[Adl], [Adl]]);
    expect(selects('Liquidation')).toEqual([[Book, Backstop, Adl], [Book, Backstop, Adl]]);
    expect(selects('AllLiquidation')).toEqual([[Book, Backstop, Adl, CollateralConversion], [Book, Backstop, Adl, CollateralConversion]]);
    expect(selects('CollateralConversion')).toEqual([[CollateralConversion], [CollateralConversion]]);
    // Spot liquidation: the liquidation fills of spot markets only.
    expect(selects('CollateralConversionAndSpotLiquidation')).toEqual([[Book, Backstop, Adl, CollateralConversion], [CollateralConversion]]);
    expect(parseFillType(config, new URLSearchParams())).toBeNull();
    expect(parseFillType(config, new URLSearchParams({ fill_type: 'all_liquidation' }))).toBeTypeOf('function');
    expect(parseFillType(config, new URLSearchParams({ fillType: 'Settlement' }))).toMatchObject({ status: 400, code: 'INVALID_CLIENT_REQUEST' });
  });

  it('streams the liquidated half of an auto-deleveraging fill and not the counterparty\'s (the maker\'s)', () => {
    const published: Record<string, unknown>[] = [];
    const out = { wanted: () => true, publish: (_topic: string, _name: string, json: Record<string, unknown>) => published.push(json), front: { config } };
    const streams = new LiquidationStreams(out as unknown as StreamOutput);
    const adl = (side: number, flags: number) => ({ ...fill(SystemOrderType.LiquidatePositionOnAdl, perp), event: OrderEvent.Fill, side, orderFlags: flags, lastFillQtyLots: 1, lastFillPriceTicks: 1 });
    streams.onOrder(adl(0, OrderFlag.Liquidation | OrderFlag.Adl | OrderFlag.IsMaker));
    streams.onOrder(adl(1, OrderFlag.Liquidation | OrderFlag.Adl));
    expect(published.map((m) => [m.S, m.s])).toEqual([['Ask', 'SOL_USDC_PERP']]);
  });
});

describe('liquidation on the wire', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let client: StreamClient;
  let borrower: TestAccount;
  let maker: TestAccount;
  const order = (account: TestAccount, body: Record<string, string | boolean>) =>
    signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { symbol: 'SOL_USDC', orderType: 'Limit', ...body });
  const fills = (account: TestAccount, params: Record<string, string> = {}) =>
    signed(server.base, account, 'GET', '/wapi/v1/history/fills', 'fillHistoryQueryAll', { sortDirection: 'Asc', ...params });
  const liquidating = async () => (await signed(server.base, borrower, 'GET', '/api/v1/account', 'accountQuery')).body.liquidating as boolean;

  beforeAll(async () => {
    server = await startServer({ dataDir, args: ARGS });
    const lender = await createTestAccount(server.adminPort, ['USDC=100000']);
    const seller = await createTestAccount(server.adminPort, ['SOL=200']);
    maker = await createTestAccount(server.adminPort, ['USDC=100000']);
    borrower = await createTestAccount(server.adminPort, ['SOL=40']);
    client = await StreamClient.connect(server.port);
    client.subscribe(['liquidation', 'trade.SOL_USDC']);
    client.subscribeSigned(borrower, ['account.orderUpdate']);
    await adminCli(server.adminPort, ['set-index-price', 'SOL=150']);
    expect((await signed(server.base, lender, 'POST', '/api/v1/borrowLend', 'borrowLendExecute', { symbol: 'USDC', side: 'Lend', quantity: '50000' })).status).toBe(200);
    expect((await order(seller, { side: 'Ask', price: '150', quantity: '100', postOnly: true })).status).toBe(200);
    expect((await signed(server.base, borrower, 'PATCH', '/api/v1/account', 'accountUpdate', { leverageLimit: '10' })).status).toBe(200);
    expect((await signed(server.base, borrower, 'POST', '/api/v1/borrowLend', 'borrowLendExecute', { symbol: 'USDC', side: 'Borrow', quantity: '15000' })).status).toBe(200);
    expect((await order(borrower, { side: 'Bid', price: '150', quantity: '100' })).body.status).toBe('Filled');
    // The trade's message and the borrower's own update show the subscriptions are in place.
    await client.waitFor((m) => m.stream === 'trade.SOL_USDC', 'the trade message');
    await client.waitFor((m) => m.stream === 'account.orderUpdate' && m.data.e === 'orderFill', 'the borrower\'s fill update');
    expect((await order(maker, { side: 'Bid', price: '130', quantity: '50', postOnly: true })).status).toBe(200);
  });

  afterAll(async () => {
    client?.close();
    await server?.stop();
    removeDir(dataDir);
  });

  it('streams each liquidation fill and lists it in the fills history by fill type', async () => {
    expect(client.on('liquidation')).toEqual([]);
    await adminCli(server.adminPort, ['set-index-price', 'SOL=130']);
    expect(await liquidating()).toBe(true);
    const first = (await client.waitFor((m) => m.stream === 'liquidation', 'a liquidation message')).data;
    expect(first).toEqual({ e: 'liquidation', E: first.E, q: '12.12', p: '130.00', S: 'Ask', s: 'SOL_USDC', T: first.T });
    expect(Number.isSafeInteger(first.T) && first.E >= first.T).toBe(true);
    await waitUntil(async () => ((await liquidating()) ? undefined : true), 'the borrower out of liquidation');
    // The account stream names who placed each order: the borrower's own bid, then the liquidation's.
    const updates = client.on('account.orderUpdate').filter((u) => u.e === 'orderFill');
    expect(updates[0]).toMatchObject({ O: 'USER', S: 'Bid', l: '100' });
    expect(updates[1]).toMatchObject({ O: 'LIQUIDATION_AUTOCLOSE', S: 'Ask', o: 'MARKET', f: 'IOC', l: '12.12', L: '130', n: '16.535922', N: 'USDC' });

    const system = (await fills(borrower, { fillType: 'BookLiquidation' })).body as Array<Record<string, unknown>>;
    expect(system.length).toBeGreaterThan(1);
    expect(system[0]).toMatchObject({
      symbol: 'SOL_USDC', side: 'Ask', price: '130', quantity: '12.12', fee: '16.535922', feeSymbol: 'USDC', isMaker: false,
      clientId: null, systemOrderType: 'LiquidatePositionOnBook',
    });
    expect(system.every((f) => f.systemOrderType === 'LiquidatePositionOnBook' && f.side === 'Ask' && f.price === '130')).toBe(true);
    // One stream message per liquidation fill, in the same order, with the same quantities.
    const messages = client.on('liquidation');
    expect(messages.map((m) => [m.q, m.S, m.s])).toEqual(system.map((f) => [Number(f.quantity).toFixed(2), 'Ask', 'SOL_USDC']));
    expect(messages.map((m) => m.p)).toEqual(system.map(() => '130.00'));

    const user = (await fills(borrower, { fillType: 'User' })).body as Array<Record<string, unknown>>;
    expect(user).toEqual([expect.objectContaining({ side: 'Bid', price: '150', quantity: '100', fee: '0.05', feeSymbol: 'SOL', systemOrderType: null })]);
    expect((await fills(borrower)).body).toEqual([...user, ...system]);
    for (const group of ['Liquidation', 'AllLiquidation', 'CollateralConversionAndSpotLiquidation', 'book_liquidation']) {
      expect((await fills(borrower, { fillType: group })).body, group).toEqual(system);
    }
    for (const none of ['Adl', 'Backstop', 'CollateralConversion']) expect((await fills(borrower, { fillType: none })).body, none).toEqual([]);
    // The filter is applied before the page: the second liquidation fill is at offset 1.
    expect((await fills(borrower, { fillType: 'Liquidation', offset: '1', limit: '1' })).body).toEqual([system[1]]);
    const bad = await fills(borrower, { fillType: 'Everything' });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('INVALID_CLIENT_REQUEST');
    // The maker's side of the same fills was its own order.
    const makerFills = (await fills(maker)).body as Array<Record<string, unknown>>;
    expect(makerFills.map((f) => [f.quantity, f.systemOrderType])).toEqual(system.map((f) => [f.quantity, null]));
    expect((await fills(maker, { fillType: 'BookLiquidation' })).body).toEqual([]);
  });

  it('shows the system orders, the liquidation\'s repayments and the fund\'s fees by value', async () => {
    const system = (await fills(borrower, { fillType: 'BookLiquidation' })).body as Array<Record<string, string>>;
    const orders = (await signed(server.base, borrower, 'GET', '/wapi/v1/history/orders', 'orderHistoryQueryAll', { sortDirection: 'Asc' })).body as Array<Record<string, unknown>>;
    const systemOrders = orders.filter((o) => o.systemOrderType !== null);
    expect(systemOrders.map((o) => o.id)).toEqual(system.map((f) => f.orderId));
    expect(systemOrders[0]).toMatchObject({
      orderType: 'Market', timeInForce: 'IOC', side: 'Ask', quantity: '12.12', executedQuantity: '12.12', status: 'Filled', systemOrderType: 'LiquidatePositionOnBook',
    });
    expect(orders[0]).toMatchObject({ side: 'Bid', systemOrderType: null });

    // Each fill's proceeds, less the taker fee (5 bps) and the liquidation fee (1 % of the rest, into the fund), repay the borrow.
    const parts = system.map((f) => {
      const proceeds = micros(f.quantity) * 130n;
      const received = proceeds - (proceeds * 5n) / 10_000n;
      const liquidationFee = received / 100n;
      expect(micros(f.fee)).toBe(proceeds - received + liquidationFee);
      return { repaid: received - liquidationFee, liquidationFee };
    });
    expect(parts[0]).toEqual({ repaid: 1_559_064_078n, liquidationFee: 15_748_122n });
    const moves = (await signed(server.base, borrower, 'GET', '/wapi/v1/history/borrowLend', 'borrowHistoryQueryAll', { sources: 'Liquidation', sortDirection: 'Asc' })).body as Array<Record<string, string>>;
    expect(moves.map((m) => [m.eventType, m.source, m.symbol, micros(m.quantity)])).toEqual(parts.map((p) => ['BorrowRepay', 'Liquidation', 'USDC', p.repaid]));
    const manual = (await signed(server.base, borrower, 'GET', '/wapi/v1/history/borrowLend', 'borrowHistoryQueryAll', { sources: 'Manual' })).body as Array<Record<string, string>>;
    expect(manual.map((m) => [m.eventType, m.quantity])).toEqual([['Borrow', '15000']]);

    const fees = parts.reduce((sum, p) => sum + p.liquidationFee, 0n);
    const insurance = (await adminCli(server.adminPort, ['get-insurance'])).insurance as Array<Record<string, string>>;
    const usdc = insurance.find((line) => line.symbol === 'USDC')!;
    expect([micros(usdc.fund), micros(usdc.fees), usdc.covered, usdc.socialized, usdc.deposited]).toEqual([fees, fees, '0', '0', '0']);
  });
});
