// The kill -9 test: the real server, driven over HTTP by several concurrent clients, is killed
// with SIGKILL at a seeded random moment, restarted on the same data directory, and checked
// against everything it acknowledged before it died. Several rounds on one data directory.
//
// The workload is shaped so that the expected state can be derived from the acknowledgements
// alone, whatever the interleaving:
//   - two "lanes" (SOL_USDC and ETH_USDC), each one maker account and one taker account working
//     in lock step: a post-only Ask of 2 at a price one tick below the lane's previous one, then,
//     once acknowledged, an IOC Bid of 1 at exactly that price. Every older ask of the lane is
//     higher, so the taker can only ever fill against the maker it follows: a maker's executed
//     quantity is 1 if its taker was acknowledged, 0 or 1 if the kill caught its taker in flight,
//     0 if none was sent. Makers never fill completely, so every fill stays visible on an open
//     order (GET /api/v1/orders shows executedQuantity) after any number of restarts.
//   - two "resting" accounts placing non-crossing orders on BTC_USDC (bids far below the asks)
//     and cancelling every fourth one by clientId.
// Fees are configured to 0, so every asset's total over the accounts equals its deposits exactly.
//
// After each restart: every acknowledged order is open with its id, price, quantity and fills
// (and every acknowledged cancel is gone), no order id or clientId appears twice, each account's
// balances (total and locked) equal what its open orders imply, every asset's total equals its
// deposits, and the WebSocket streams continue in the restored id space: the next trade id of a
// lane is the number of its durable fills + 1, depth updates continue contiguously from the REST
// lastUpdateId. Trade ids seen on the stream before the kill never exceed the durable count.
//
// Seeded: DURABILITY_SEED=<n> replays a run (the seed is printed, and named in every failure);
// DURABILITY_ROUNDS overrides the number of rounds (default 6).

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DEFAULT_MARKETS } from '../../src/config.js';
import {
  createTestAccount,
  get,
  removeDir,
  signed,
  startServer,
  tempDataDir,
  waitUntil,
  type RunningServer,
  type TestAccount,
} from '../helpers/server.js';
import { prng } from '../helpers/engine-harness.js';

const SEED = Number(process.env.DURABILITY_SEED ?? Math.floor(Math.random() * 0x7fffffff));
const ROUNDS = Number(process.env.DURABILITY_ROUNDS ?? 6);
const TAG = `[durability seed=${SEED}; rerun with DURABILITY_SEED=${SEED}]`;

/** Exact decimal string → integer units at `decimals`. */
function units(text: string, decimals: number): bigint {
  const [whole, fraction = ''] = String(text).split('.');
  if (fraction.length > decimals) throw new Error(`${text} has more than ${decimals} decimals`);
  return BigInt(whole + fraction.padEnd(decimals, '0'));
}

const DECIMALS: Record<string, number> = { USDC: 6, SOL: 9, BTC: 8, ETH: 8 };
const DEPOSITS: Record<string, string> = { USDC: '10000000', SOL: '100000', BTC: '100', ETH: '100000' };
const LANE_MARKETS = ['SOL_USDC', 'ETH_USDC'] as const;
const LANE_START_CENTS = 2500; // 25.00; each step one tick (0.01) lower
const LANE_MIN_CENTS = 1900; // well inside the price band the lane's own trades set

interface LaneStep {
  priceCents: number;
  makerClientId: number;
  makerAcked: boolean;
  makerOrderId?: string;
  takerClientId: number;
  takerSent: boolean;
  takerAcked: boolean;
}

interface Lane {
  market: string;
  base: string;
  maker: TestAccount;
  taker: TestAccount;
  steps: LaneStep[];
}

interface RestingOrder {
  clientId: number;
  side: 'Bid' | 'Ask';
  price: string;
  quantity: string;
  acked: boolean;
  orderId?: string;
  cancelSent: boolean;
  cancelAcked: boolean;
}

interface RestingWorker {
  account: TestAccount;
  side: 'Bid' | 'Ask';
  orders: RestingOrder[];
}

class Stream {
  readonly messages: any[] = [];
  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => this.messages.push(JSON.parse(data.toString())));
    socket.on('error', () => {});
  }
  static async open(port: number, streams: string[]): Promise<Stream> {
    const socket = new WebSocket(`ws://127.0.0.1:${port}/`);
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    const stream = new Stream(socket);
    socket.send(JSON.stringify({ method: 'SUBSCRIBE', params: streams }));
    // Subscriptions are handled in order on a connection: the error for an invalid stream proves
    // the real ones are in place.
    socket.send(JSON.stringify({ method: 'SUBSCRIBE', params: ['nonsense.stream'] }));
    await waitUntil(() => stream.messages.find((m) => m.error?.code === 4006), 'subscription round trip');
    return stream;
  }
  of(name: string): any[] {
    return this.messages.filter((m) => m.stream === name).map((m) => m.data);
  }
  close(): void {
    this.socket.terminate();
  }
}

describe(`kill -9 at a random moment, restart, check everything acknowledged ${TAG}`, () => {
  const dataDir = tempDataDir();
  const configFile = join(dataDir, '..', `${dataDir.split('/').pop()}-markets.json`);
  const random = prng(SEED);
  let server: RunningServer;
  let lanes: Lane[] = [];
  let workers: RestingWorker[] = [];
  let accounts: TestAccount[] = [];
  let nextClientId = 1;
  // Frequent snapshots (and compaction behind them), so restarts load a snapshot and replay the
  // journal after it, under the same checks.
  const serverArgs = () => ['--no-demo', '--front-threads', '2', '--speed-bump-ms', '0', '--config', configFile, '--snapshot-every', '40'];
  const recoveredFromSnapshot: number[] = [];

  beforeAll(async () => {
    console.log(`${TAG} rounds=${ROUNDS}`);
    writeFileSync(configFile, JSON.stringify({
      ...DEFAULT_MARKETS,
      makerFeeBps: 0,
      takerFeeBps: 0,
      limits: { maxOpenOrdersPerAccount: 5000 },
    }));
    server = await startServer({ dataDir, args: serverArgs() });
    const deposits = Object.entries(DEPOSITS).map(([asset, qty]) => `${asset}=${qty}`);
    for (let i = 0; i < 6; i++) accounts.push(await createTestAccount(server.adminPort, deposits));
    lanes = LANE_MARKETS.map((market, i) => ({
      market, base: market.split('_')[0], maker: accounts[2 * i], taker: accounts[2 * i + 1], steps: [],
    }));
    workers = [
      { account: accounts[4], side: 'Bid', orders: [] },
      { account: accounts[5], side: 'Ask', orders: [] },
    ];
  });

  afterAll(async () => {
    await server?.stop('SIGKILL');
    removeDir(dataDir);
    removeDir(configFile);
  });

  /** One lane's lock-step loop until `stop` is set or the server dies under it. */
  async function runLane(lane: Lane, stop: { done: boolean }, onAck: () => void): Promise<void> {
    while (!stop.done) {
      const previous = lane.steps[lane.steps.length - 1];
      const priceCents = (previous?.priceCents ?? LANE_START_CENTS + 1) - 1;
      if (priceCents < LANE_MIN_CENTS) return;
      const step: LaneStep = {
        priceCents, makerClientId: nextClientId++, makerAcked: false, takerClientId: nextClientId++, takerSent: false, takerAcked: false,
      };
      lane.steps.push(step);
      const price = (priceCents / 100).toFixed(2);
      const ask = await signed(server.base, lane.maker, 'POST', '/api/v1/order', 'orderExecute', {
        symbol: lane.market, side: 'Ask', orderType: 'Limit', price, quantity: '2', postOnly: true, clientId: step.makerClientId,
      });
      if (ask.status !== 200) throw new Error(`${TAG} maker order refused: ${ask.text}`);
      step.makerAcked = true;
      step.makerOrderId = ask.body.id;
      onAck();
      if (stop.done) return;
      step.takerSent = true;
      const bid = await signed(server.base, lane.taker, 'POST', '/api/v1/order', 'orderExecute', {
        symbol: lane.market, side: 'Bid', orderType: 'Limit', price, quantity: '1', timeInForce: 'IOC', clientId: step.takerClientId,
      });
      if (bid.status !== 200) throw new Error(`${TAG} taker order refused: ${bid.text}`);
      if (bid.body.status !== 'Filled' || bid.body.executedQuantity !== '1') throw new Error(`${TAG} taker did not fill: ${bid.text}`);
      step.takerAcked = true;
      onAck();
    }
  }

  /** A resting worker: non-crossing BTC_USDC orders, every fourth cancelled by clientId. */
  async function runResting(worker: RestingWorker, stop: { done: boolean }, onAck: () => void): Promise<void> {
    while (!stop.done) {
      const n = worker.orders.length;
      const order: RestingOrder = {
        clientId: nextClientId++,
        side: worker.side,
        price: worker.side === 'Bid' ? (1000 + (n % 5000) / 10).toFixed(1) : (900000 - (n % 5000) / 10).toFixed(1),
        quantity: '0.001',
        acked: false,
        cancelSent: false,
        cancelAcked: false,
      };
      worker.orders.push(order);
      const placed = await signed(server.base, worker.account, 'POST', '/api/v1/order', 'orderExecute', {
        symbol: 'BTC_USDC', side: order.side, orderType: 'Limit', price: order.price, quantity: order.quantity, clientId: order.clientId,
      });
      if (placed.status !== 200) throw new Error(`${TAG} resting order refused: ${placed.text}`);
      order.acked = true;
      order.orderId = placed.body.id;
      onAck();
      if (n % 4 === 3 && !stop.done) {
        order.cancelSent = true;
        const cancel = await signed(server.base, worker.account, 'DELETE', '/api/v1/order', 'orderCancel', {
          symbol: 'BTC_USDC', clientId: order.clientId,
        });
        if (cancel.status !== 200) throw new Error(`${TAG} cancel refused: ${cancel.text}`);
        order.cancelAcked = true;
        onAck();
      }
    }
  }

  async function openOrders(account: TestAccount): Promise<any[]> {
    const response = await signed(server.base, account, 'GET', '/api/v1/orders', 'orderQueryAll');
    expect(response.status, TAG).toBe(200);
    return response.body;
  }

  /** Every check against the restarted server; returns the durable fill count of each lane. */
  async function verify(round: number): Promise<Map<string, number>> {
    const where = `${TAG} round ${round}`;
    const open = new Map<TestAccount, any[]>();
    for (const account of accounts) open.set(account, await openOrders(account));

    // No order twice: unique order ids overall, unique clientIds per account.
    const allIds = [...open.values()].flat().map((o) => o.id);
    expect(new Set(allIds).size, `${where}: an order id appears twice`).toBe(allIds.length);
    for (const [account, orders] of open) {
      const clientIds = orders.map((o) => o.clientId);
      expect(new Set(clientIds).size, `${where}: a clientId appears twice for account ${account.accountId}`).toBe(clientIds.length);
    }

    const fills = new Map<string, number>();
    const expectedTotals = new Map<TestAccount, Map<string, bigint>>();
    const expectedLocked = new Map<TestAccount, Map<string, bigint>>();
    for (const account of accounts) {
      expectedTotals.set(account, new Map(Object.entries(DEPOSITS).map(([a, q]) => [a, units(q, DECIMALS[a])])));
      expectedLocked.set(account, new Map(Object.keys(DEPOSITS).map((a) => [a, 0n])));
    }
    const add = (map: Map<TestAccount, Map<string, bigint>>, account: TestAccount, asset: string, delta: bigint) =>
      map.get(account)!.set(asset, map.get(account)!.get(asset)! + delta);

    for (const lane of lanes) {
      const makerOrders = new Map(open.get(lane.maker)!.map((o) => [o.clientId, o]));
      expect(open.get(lane.taker), `${where}: an IOC taker rests`).toEqual([]);
      let laneFills = 0;
      for (const step of lane.steps) {
        const order = makerOrders.get(step.makerClientId);
        makerOrders.delete(step.makerClientId);
        if (step.makerAcked) {
          expect(order, `${where}: acknowledged maker ${step.makerOrderId} (${lane.market}) is missing`).toBeDefined();
          expect(order).toMatchObject({ id: step.makerOrderId, symbol: lane.market, side: 'Ask', quantity: '2' });
          expect(units(order.price, 2), `${where}: price of ${order.id}`).toBe(BigInt(step.priceCents));
        }
        if (order === undefined) continue; // an unacknowledged maker that never became durable
        const executed = Number(order.executedQuantity);
        if (step.takerAcked) expect(executed, `${where}: acknowledged fill of ${order.id} lost`).toBe(1);
        else if (step.takerSent) expect([0, 1], `${where}: in-flight taker`).toContain(executed);
        else expect(executed, `${where}: fill without a taker`).toBe(0);
        laneFills += executed;
        const baseUnits = units(order.executedQuantity, DECIMALS[lane.base]);
        const quoteUnits = BigInt(step.priceCents) * units(order.executedQuantity, DECIMALS.USDC) / 100n;
        add(expectedTotals, lane.maker, lane.base, -baseUnits);
        add(expectedTotals, lane.maker, 'USDC', quoteUnits);
        add(expectedTotals, lane.taker, lane.base, baseUnits);
        add(expectedTotals, lane.taker, 'USDC', -quoteUnits);
        add(expectedLocked, lane.maker, lane.base, units('2', DECIMALS[lane.base]) - baseUnits);
      }
      expect([...makerOrders.keys()], `${where}: open maker orders nobody sent`).toEqual([]);
      fills.set(lane.market, laneFills);
    }

    for (const worker of workers) {
      const orders = new Map(open.get(worker.account)!.map((o) => [o.clientId, o]));
      for (const order of worker.orders) {
        const found = orders.get(order.clientId);
        orders.delete(order.clientId);
        if (order.cancelAcked) {
          expect(found, `${where}: cancelled order ${order.orderId} is back`).toBeUndefined();
          continue;
        }
        if (order.acked && !order.cancelSent) {
          expect(found, `${where}: acknowledged order ${order.orderId} is missing`).toBeDefined();
          expect(found).toMatchObject({ id: order.orderId, side: order.side, executedQuantity: '0' });
        }
        if (found === undefined) continue;
        expect(units(found.price, 1)).toBe(units(order.price, 1));
        if (order.side === 'Bid') add(expectedLocked, worker.account, 'USDC', units(order.price, 1) * units(order.quantity, 8) / 1000n);
        else add(expectedLocked, worker.account, 'BTC', units(order.quantity, 8));
      }
      expect([...orders.keys()], `${where}: open orders nobody sent`).toEqual([]);
    }

    const assetTotals = new Map<string, bigint>();
    for (const account of accounts) {
      const capital = await signed(server.base, account, 'GET', '/api/v1/capital', 'balanceQuery');
      expect(capital.status, where).toBe(200);
      for (const asset of Object.keys(DEPOSITS)) {
        const available = units(capital.body[asset].available, DECIMALS[asset]);
        const locked = units(capital.body[asset].locked, DECIMALS[asset]);
        const what = `${where}: account ${account.accountId} ${asset}`;
        expect(available + locked, `${what} total`).toBe(expectedTotals.get(account)!.get(asset));
        expect(locked, `${what} locked`).toBe(expectedLocked.get(account)!.get(asset));
        assetTotals.set(asset, (assetTotals.get(asset) ?? 0n) + available + locked);
      }
    }
    for (const [asset, total] of assetTotals) {
      expect(total, `${where}: ${asset} not conserved`).toBe(units(DEPOSITS[asset], DECIMALS[asset]) * BigInt(accounts.length));
    }
    return fills;
  }

  it(`survives ${ROUNDS} rounds of kill -9 with every acknowledged order, fill and balance intact`, async () => {
    let lastSeenTrade = new Map<string, number>(LANE_MARKETS.map((m) => [m, 0]));
    let durableFills = new Map<string, number>(LANE_MARKETS.map((m) => [m, 0]));
    for (let round = 1; round <= ROUNDS; round++) {
      const where = `${TAG} round ${round}`;
      const streams = LANE_MARKETS.flatMap((m) => [`trade.${m}`, `depth.${m}`]);
      const stream = await Stream.open(server.port, streams);
      const lastUpdateIds = new Map<string, number>();
      for (const market of LANE_MARKETS) {
        const depth = await get(server.base, `/api/v1/depth?symbol=${market}`);
        lastUpdateIds.set(market, Number(depth.body.lastUpdateId));
      }

      // Drive the load; kill after a seeded number of acknowledgements.
      const killAfter = 20 + Math.floor(random() * 120);
      const stop = { done: false };
      let acks = 0;
      let killed!: () => void;
      const killedSignal = new Promise<void>((resolve) => (killed = resolve));
      const onAck = () => {
        acks++;
        if (acks === killAfter) {
          stop.done = true;
          server.child.kill('SIGKILL');
          killed();
        }
      };
      const loops = [...lanes.map((lane) => runLane(lane, stop, onAck)), ...workers.map((w) => runResting(w, stop, onAck))];
      const results = await Promise.allSettled(loops);
      for (const result of results) {
        if (result.status === 'rejected' && (String(result.reason).includes(TAG) || acks < killAfter)) throw result.reason;
      }
      if (acks < killAfter) throw new Error(`${where}: the load ended after ${acks} acknowledgements, before the kill`);
      await killedSignal;
      await server.stop('SIGKILL');

      // What the stream delivered before the kill: contiguous, and (checked below) durable.
      for (const market of LANE_MARKETS) {
        const trades = stream.of(`trade.${market}`).map((t) => t.t as number);
        for (let i = 0; i < trades.length; i++) {
          expect(trades[i], `${where}: trade ids before the kill (${market})`).toBe((i === 0 ? durableFills.get(market)! : trades[i - 1]) + 1);
        }
        if (trades.length > 0) lastSeenTrade.set(market, trades[trades.length - 1]);
        const depth = stream.of(`depth.${market}`);
        for (let i = 0; i < depth.length; i++) {
          expect(depth[i].U, `${where}: depth ids before the kill (${market})`).toBe((i === 0 ? lastUpdateIds.get(market)! : depth[i - 1].u) + 1);
        }
        if (depth.length > 0) lastUpdateIds.set(market, depth[depth.length - 1].u);
      }
      stream.close();

      server = await startServer({ dataDir, args: serverArgs() });
      const replayed = JSON.parse(server.lines.find((line) => line.includes('"msg":"journal replayed"'))!);
      if (replayed.snapshotSeq > 0) recoveredFromSnapshot.push(replayed.snapshotSeq);
      durableFills = await verify(round);
      for (const market of LANE_MARKETS) {
        expect(lastSeenTrade.get(market)!, `${where}: a streamed trade is not durable`).toBeLessThanOrEqual(durableFills.get(market)!);
        const depth = await get(server.base, `/api/v1/depth?symbol=${market}`);
        expect(Number(depth.body.lastUpdateId), `${where}: a streamed depth update is not durable`).toBeGreaterThanOrEqual(lastUpdateIds.get(market)!);
      }
    }

    // After the last restart: the streams continue in the restored id space. Each lane trades
    // twice more.
    const after = await Stream.open(server.port, LANE_MARKETS.flatMap((m) => [`trade.${m}`, `depth.${m}`]));
    const restored = new Map<string, number>();
    for (const market of LANE_MARKETS) restored.set(market, Number((await get(server.base, `/api/v1/depth?symbol=${market}`)).body.lastUpdateId));
    await Promise.all(lanes.map((lane) => {
      const stop = { done: false };
      let takers = 0;
      return runLane(lane, stop, () => {
        if (lane.steps[lane.steps.length - 1].takerAcked && ++takers === 2) stop.done = true;
      });
    }));
    for (const market of LANE_MARKETS) {
      const trades = await waitUntil(() => (after.of(`trade.${market}`).length >= 2 ? after.of(`trade.${market}`) : undefined), `trades on ${market} after the restart`);
      expect(trades.map((t) => t.t), `${TAG}: trade ids after the restart (${market})`).toEqual([durableFills.get(market)! + 1, durableFills.get(market)! + 2]);
      const depth = after.of(`depth.${market}`);
      expect(depth.length, `${TAG}: depth events after the restart (${market})`).toBeGreaterThan(0);
      expect(depth[0].U, `${TAG}: first depth id after the restart (${market})`).toBe(restored.get(market)! + 1);
      for (let i = 1; i < depth.length; i++) expect(depth[i].U).toBe(depth[i - 1].u + 1);
    }
    after.close();
    await verify(ROUNDS + 1);
    expect(recoveredFromSnapshot.length, `${TAG}: no restart started from a snapshot`).toBeGreaterThan(0);
  }, 240_000);
});
