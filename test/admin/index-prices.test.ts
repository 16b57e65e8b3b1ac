// Index prices end to end (engine/core/margin/index-prices.ts, src/admin/index-price-routes.ts,
// src/admin/feed.ts, src/front/index-default.ts): the default index follows a book's mid clamped
// to its band; the operator's CLI sets prices that the default leaves alone until they are stale;
// the admin endpoint refuses bad input whole; a feed file and standard input set prices with
// source Feed at their pacing or as fast as answered; prices survive kill -9 through the journal;
// with the default turned off no price appears by itself; an asset with update bounds answers
// the bounded price. Plus the pure parts: the clamp and the due rule of the default.

import { execFile, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IndexPriceSource } from '../../engine/bus/types.js';
import { DEFAULT_INDEX_MAX_AGE_US, INDEX_PRICE_DECIMALS as ENGINE_DECIMALS } from '../../engine/core/margin/index-prices.js';
import { DEFAULT_INDEX_MAX_AGE_MS, DEFAULT_MARKETS, buildMarket } from '../../src/config.js';
import { INDEX_PRICE_DECIMALS, defaultIndexDue, derivedIndexE9 } from '../../src/front/index-default.js';
import { ROOT, adminCli, createTestAccount, removeDir, signed, startServer, tempDataDir, waitUntil, type RunningServer, type TestAccount } from '../helpers/server.js';

const execFileAsync = promisify(execFile);
const MAX_AGE_MS = 1500;
const ARGS = ['--no-demo', '--front-threads', '1', '--speed-bump-ms', '0', '--index-max-age-ms', String(MAX_AGE_MS), '--index-default-interval-ms', '100'];

interface Row { symbol: string; price: string | null; source: string; updatedAt: number | null; ageMs: number | null; stale: boolean }

async function indexPrices(server: RunningServer): Promise<{ timestamp: number; maxAgeMs: number; prices: Row[] }> {
  const response = await fetch(`http://127.0.0.1:${server.adminPort}/admin/index-prices`);
  expect(response.status).toBe(200);
  return (await response.json()) as { timestamp: number; maxAgeMs: number; prices: Row[] };
}

async function rowOf(server: RunningServer, symbol: string): Promise<Row> {
  return (await indexPrices(server)).prices.find((row) => row.symbol === symbol)!;
}

async function post(server: RunningServer, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`http://127.0.0.1:${server.adminPort}/admin/index-prices`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const feedScript = join(ROOT, 'dist/src/admin/feed.js');

describe('the default index: pure rules', () => {
  const sol = buildMarket(DEFAULT_MARKETS.markets[0], 0, DEFAULT_MARKETS.assets);

  it('is the book mid in USDC × 10^9, clamped to the band around the last trade and to the price limits', () => {
    expect(INDEX_PRICE_DECIMALS).toBe(ENGINE_DECIMALS);
    expect(DEFAULT_INDEX_MAX_AGE_MS * 1000).toBe(DEFAULT_INDEX_MAX_AGE_US);
    expect(derivedIndexE9(sol, 14_900, 15_100, 0)).toBe(150_000_000_000);
    expect(derivedIndexE9(sol, 14_900, 15_000, 0)).toBe(149_500_000_000); // half a tick, exact
    expect(derivedIndexE9(sol, 15_000, 100_000, 15_000)).toBe(187_500_000_000); // 1.25 × last
    expect(derivedIndexE9(sol, 1_000, 1_100, 15_000)).toBe(112_500_000_000); // 0.75 × last
    expect(derivedIndexE9(sol, 1, 1, 0)).toBe(10_000_000); // minPrice 0.01
    expect(derivedIndexE9(sol, 0, 15_100, 0)).toBeNull();
    expect(derivedIndexE9(sol, 14_900, 0, 0)).toBeNull();
  });

  it('yields to a fresh operator or feed price and refreshes an unchanged default only after half the maximum age', () => {
    const row = (source: IndexPriceSource, priceE9: number, updatedUs: number, stale = false) => ({ assetId: 1, priceE9, updatedUs, source, stale });
    expect(defaultIndexDue(row(IndexPriceSource.Operator, 5, 0), 7, 10, 100)).toBe(false);
    expect(defaultIndexDue(row(IndexPriceSource.Feed, 5, 0), 7, 10, 100)).toBe(false);
    expect(defaultIndexDue(row(IndexPriceSource.Feed, 5, 0, true), 7, 200, 100)).toBe(true);
    expect(defaultIndexDue(row(IndexPriceSource.None, 0, 0, true), 7, 10, 100)).toBe(true);
    expect(defaultIndexDue(row(IndexPriceSource.Default, 5, 0), 7, 10, 100)).toBe(true);
    expect(defaultIndexDue(row(IndexPriceSource.Default, 7, 0), 7, 49, 100)).toBe(false);
    expect(defaultIndexDue(row(IndexPriceSource.Default, 7, 0), 7, 50, 100)).toBe(true);
  });
});

describe('index prices through the whole path', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let maker: TestAccount;
  let taker: TestAccount;
  const order = (account: TestAccount, body: Record<string, string>) =>
    signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { symbol: 'SOL_USDC', orderType: 'Limit', ...body });

  beforeAll(async () => {
    server = await startServer({ dataDir, args: ARGS });
    maker = await createTestAccount(server.adminPort, ['SOL=100', 'USDC=100000']);
    taker = await createTestAccount(server.adminPort, ['SOL=100', 'USDC=100000']);
  });

  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  it('derives SOL from its book mid, clamped to the band once it has traded; USDC is 1, BTC (no book) has none and is stale', async () => {
    expect((await order(maker, { side: 'Bid', price: '149', quantity: '1' })).status).toBe(200);
    expect((await order(maker, { side: 'Ask', price: '151', quantity: '1' })).status).toBe(200);
    // Before the first trade the market has no band: an ask far above rests behind the best one.
    expect((await order(maker, { side: 'Ask', price: '1000', quantity: '1' })).status).toBe(200);
    await waitUntil(async () => ((await rowOf(server, 'SOL')).price === '150' ? true : undefined), 'SOL default index 150');
    const all = await indexPrices(server);
    expect(all.maxAgeMs).toBe(MAX_AGE_MS);
    expect(all.prices.find((r) => r.symbol === 'SOL')).toMatchObject({ source: 'Default', stale: false });
    expect(all.prices.find((r) => r.symbol === 'USDC')).toEqual({ symbol: 'USDC', price: '1', source: 'Fixed', updatedAt: null, ageMs: null, stale: false });
    expect(all.prices.find((r) => r.symbol === 'BTC')).toEqual({ symbol: 'BTC', price: null, source: 'None', updatedAt: null, ageMs: null, stale: true });
    // A trade at 151 sets the band to 113.25..188.75; the ask at 1000 is now the best one, and
    // the mid (574.5) lies past the band.
    expect((await order(taker, { side: 'Bid', price: '151', quantity: '1' })).body.status).toBe('Filled');
    await waitUntil(async () => ((await rowOf(server, 'SOL')).price === '188.75' ? true : undefined), 'SOL default index clamped to 188.75');
  });

  it('sets prices from the operator CLI; the default leaves them alone until they are stale', async () => {
    const set = await adminCli(server.adminPort, ['set-index-price', 'SOL=160.5', 'BTC=97000.123456789']);
    const prices = set.prices as Array<{ symbol: string; price: string; source: string; timestamp: number }>;
    expect(prices.map((p) => [p.symbol, p.price, p.source])).toEqual([['SOL', '160.5', 'Operator'], ['BTC', '97000.123456789', 'Operator']]);
    const operatorAt = prices[0].timestamp;
    expect(await rowOf(server, 'BTC')).toMatchObject({ price: '97000.123456789', source: 'Operator', stale: false });
    // The first Default price seen after it is at least the maximum age later.
    const back = await waitUntil(async () => {
      const row = await rowOf(server, 'SOL');
      return row.source === 'Default' ? row : undefined;
    }, 'the default taking SOL back');
    expect(back.updatedAt! - operatorAt).toBeGreaterThanOrEqual(MAX_AGE_MS);
    expect(back.price).toBe('188.75');
    await waitUntil(async () => ((await rowOf(server, 'BTC')).stale ? true : undefined), 'BTC going stale');
    expect(await rowOf(server, 'BTC')).toMatchObject({ price: '97000.123456789', source: 'Operator', stale: true });
  });

  it('refuses bad input whole, with a JSON error, and changes nothing', async () => {
    const before = await rowOf(server, 'BTC');
    const cases: Array<[unknown, string, RegExp]> = [
      [{ prices: { BTC: '1', DOGE: '1' } }, 'INVALID_ASSET', /DOGE/],
      [{ prices: { BTC: '0' } }, 'INVALID_PRICE', /must be positive/],
      [{ prices: { BTC: '1.0000000001' } }, 'INVALID_PRICE', /decimal too long/],
      [{ prices: { BTC: 1.5 } }, 'INVALID_PRICE', /decimal string/],
      [{ prices: { BTC: '1', USDC: '1' } }, 'INVALID_ASSET', /fixed at 1/],
      [{ prices: { BTC: '1' }, source: 'Default' }, 'INVALID_CLIENT_REQUEST', /source/],
      [{ prices: {} }, 'INVALID_CLIENT_REQUEST', /1 to/],
      [{ prices: ['BTC'] }, 'INVALID_CLIENT_REQUEST', /prices/],
    ];
    for (const [body, code, message] of cases) {
      const answer = await post(server, body);
      expect([answer.status, answer.body.code], JSON.stringify(body)).toEqual([400, code]);
      expect(answer.body.message).toMatch(message);
    }
    expect((await rowOf(server, 'BTC')).updatedAt).toBe(before.updatedAt);
    expect((await rowOf(server, 'BTC')).price).toBe(before.price);
  });

  it('a feed file sets prices with source Feed at its pacing; a refused line is reported and the feed goes on', async () => {
    const file = join(dataDir, 'prices.jsonl');
    writeFileSync(file, [
      JSON.stringify({ t: 1_000, prices: { BTC: '96000' } }),
      JSON.stringify({ t: 1_300, prices: { DOGE: '1' } }),
      '',
      JSON.stringify({ t: 1_400, prices: { BTC: '96100.5', ETH: '3000' } }),
    ].join('\n'));
    const started = Date.now();
    const run = await execFileAsync(process.execPath, [feedScript, '--file', file, '--admin-port', String(server.adminPort)], { cwd: ROOT }).catch((error: { code: number; stdout: string; stderr: string }) => error);
    // The last line is due 400 ms after the first: the feed waited for it.
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect('code' in run ? run.code : 0).toBe(1);
    expect(JSON.parse(run.stdout)).toEqual({ lines: 4, sent: 2, refused: 1 });
    expect(run.stderr).toMatch(/line 2: INVALID_ASSET/);
    expect(await rowOf(server, 'BTC')).toMatchObject({ price: '96100.5', source: 'Feed', stale: false });
    expect(await rowOf(server, 'ETH')).toMatchObject({ price: '3000', source: 'Feed' });
  });

  it('a feed on standard input with --fast; a line that is not a feed line stops it with exit 2', async () => {
    const lines = `${JSON.stringify({ t: 0, prices: { BTC: '95000' } })}\n${JSON.stringify({ t: 60_000_000, prices: { BTC: '95001' } })}\n`;
    const child = spawn(process.execPath, [feedScript, '--fast', '--admin-port', String(server.adminPort)], { cwd: ROOT });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString(); });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.stdin.end(lines);
    expect(await exited).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ lines: 2, sent: 2, refused: 0 });
    expect((await rowOf(server, 'BTC')).price).toBe('95001');
    const bad = join(dataDir, 'bad.jsonl');
    writeFileSync(bad, '{"t": 1, "prices": {"BTC": 95000}}\n');
    const refused = await execFileAsync(process.execPath, [feedScript, '--file', bad, '--admin-port', String(server.adminPort)], { cwd: ROOT }).catch((error: { code: number; stderr: string }) => error);
    expect('code' in refused ? refused.code : 0).toBe(2);
    expect(refused.stderr).toMatch(/line 1: BTC: the price must be a decimal string/);
  });

  it('keeps the prices across a crash (kill -9), replayed from the journal', async () => {
    const before = await rowOf(server, 'ETH');
    await server.stop('SIGKILL');
    server = await startServer({ dataDir, args: ARGS });
    const after = await rowOf(server, 'ETH');
    expect([after.price, after.source, after.updatedAt]).toEqual([before.price, before.source, before.updatedAt]);
  });
});

describe('with the default index turned off', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;

  beforeAll(async () => {
    server = await startServer({ dataDir, args: [...ARGS, '--no-index-default'] });
  });

  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  it('no price appears by itself while engine time passes many default intervals; the operator still sets them', async () => {
    const maker = await createTestAccount(server.adminPort, ['SOL=100', 'USDC=100000']);
    const place = (side: string, price: string) =>
      signed(server.base, maker, 'POST', '/api/v1/order', 'orderExecute', { symbol: 'SOL_USDC', orderType: 'Limit', side, price, quantity: '1' });
    expect((await place('Bid', '149')).status).toBe(200);
    expect((await place('Ask', '151')).status).toBe(200);
    const start = (await indexPrices(server)).timestamp;
    await waitUntil(async () => ((await indexPrices(server)).timestamp - start >= 20 * 100 ? true : undefined), 'twenty default intervals of engine time');
    expect(await rowOf(server, 'SOL')).toMatchObject({ price: null, source: 'None', stale: true });
    const set = await adminCli(server.adminPort, ['set-index-price', 'SOL=150']);
    expect((set.prices as Array<{ price: string }>)[0].price).toBe('150');
    expect(await rowOf(server, 'SOL')).toMatchObject({ price: '150', source: 'Operator', stale: false });
  });
});

describe('with update bounds on an asset (maxPriceUpdateMultiplier, minPriceUpdateMultiplier)', () => {
  const dataDir = tempDataDir();
  const configDir = tempDataDir();
  let server: RunningServer;

  beforeAll(async () => {
    const assets = DEFAULT_MARKETS.assets.map((a) => (a.symbol === 'SOL' ? { ...a, maxPriceUpdateMultiplier: '1.5', minPriceUpdateMultiplier: '0.5' } : a));
    const config = join(configDir, 'markets.json');
    writeFileSync(config, JSON.stringify({ ...DEFAULT_MARKETS, assets }));
    server = await startServer({ dataDir, args: [...ARGS, '--no-index-default', '--config', config] });
  });

  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
    removeDir(configDir);
  });

  it('answers and shows the price the engine set: capped at the previous × max, floored at the previous × min', async () => {
    const set = async (price: string) => ((await post(server, { prices: { SOL: price }, source: 'Operator' })).body.prices as Array<{ price: string }>)[0].price;
    expect(await set('100')).toBe('100');
    expect(await set('1000')).toBe('150');
    expect(await set('1')).toBe('75');
    expect(await rowOf(server, 'SOL')).toMatchObject({ price: '75', source: 'Operator' });
    // BTC has no bounds.
    expect([await post(server, { prices: { BTC: '100' } }), await post(server, { prices: { BTC: '90000' } })].map((r) => (r.body.prices as Array<{ price: string }>)[0].price)).toEqual(['100', '90000']);
  });
});
