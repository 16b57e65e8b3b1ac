// A restart in the middle of a funding interval. SOL_USDC_PERP funds every 20 s here; two
// accounts hold opposite positions, the marks have been sampled in the open interval and a
// snapshot taken there, then the server is killed with SIGKILL (and, in the second case, stopped
// cleanly) before the interval ends, restarted on the same data directory, and the interval then
// settles in the restarted engine. Its positions, funding payments, GET /wapi/v1/history/funding
// and GET /api/v1/fundingRates must equal what an uninterrupted run gives.
//
// The engine clock across restarts: engine time is the wall clock in µs, never behind the last
// journaled command's time (engine/shell/engine-worker.ts nowUs: max(wall clock, the recovered
// lastTimeUs)); every command is journaled with the time the engine stamped on it, timer-driven
// work included (mark samples and funding ends run inside Tick commands the engine injects when a
// timer falls due). While the server is down no command exists; the first command after the
// restart runs every timer that fell due meanwhile in (due, seq) order, each at its own due time
// (the sampler samples each missed second, the index still fresh), exactly as an engine that had
// been running and received its next command then. So "an uninterrupted run" is one engine fed
// the journaled commands at their journaled times from sequence 1, without a snapshot or restart:
// the reference below replays the whole journal into a fresh Exchange in this process and its
// outputs and final state are compared with what the restarted server answered. A recovery that
// lost the open interval's samples (premium sums, sample count), a position's cumulative funding
// or the funding timer would pay a different amount, at a different time, or not at all.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { JOURNAL_RECORD_BYTES, commandFromSlot, newStampedRec } from '../../engine/bus/codec.js';
import { newCommandSlot } from '../../engine/bus/generated/records.js';
import { readStamped } from '../../engine/bus/generated/codec.js';
import { MARKET_ID_ALL } from '../../engine/core/catalog.js';
import { CommandKind, RecordType, type FundingPaymentRec, type FundingRateRec, type PositionRec } from '../../engine/bus/types.js';
import { Exchange } from '../../engine/core/exchange.js';
import { LmdbJournalStore } from '../../engine/store/journal-store.js';
import { DEFAULT_MARKETS, loadConfig } from '../../src/config.js';
import { formatDecimal } from '../../src/decimal.js';
import { CollectingSink, type Rec } from '../helpers/engine-harness.js';
import {
  createTestAccount, get, removeDir, signed, startServer, tempDataDir, waitUntil, type RunningServer, type TestAccount,
} from '../helpers/server.js';

const INTERVAL_MS = 20_000;
const PERP = 'SOL_USDC_PERP';
const dirs: string[] = [];

afterAll(() => {
  for (const dir of dirs) removeDir(dir);
});

interface Observed {
  payments: Record<string, unknown>[][];
  positions: Record<string, unknown>[][];
  rates: Record<string, unknown>[];
}

interface Reference {
  records: Rec[];
  exchange: Exchange;
  /** SOL units (10^-9) per lot of the perpetual. */
  baseUnitsPerLot: number;
}

/** The reference: the whole journal replayed into one fresh engine (no snapshot, no restart). */
function replayJournal(dataDir: string, args: string[]): Reference {
  const config = loadConfig(args, {}).engine;
  const exchange = new Exchange(config);
  const sink = new CollectingSink();
  const store = new LmdbJournalStore(dataDir);
  const rec = newStampedRec();
  try {
    for (const { value } of store.range(1)) {
      const view = new DataView(value.buffer, value.byteOffset, value.length);
      for (let at = 0; at < value.length; at += JOURNAL_RECORD_BYTES) {
        readStamped(view, at, rec);
        exchange.apply(rec.command, rec.seq, rec.timeUs, sink);
      }
    }
  } finally {
    store.close();
  }
  return { records: sink.records, exchange, baseUnitsPerLot: config.markets.find((m) => m.symbol === PERP)!.baseUnitsPerLot };
}

async function setIndex(server: RunningServer, price: string): Promise<void> {
  const response = await fetch(`http://127.0.0.1:${server.adminPort}/admin/index-prices`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ prices: { SOL: price }, source: 'Operator' }),
  });
  expect(response.status).toBe(200);
}

/** The open interval's end (engine ms) from GET /api/v1/markPrices. */
async function nextFundingMs(server: RunningServer): Promise<number> {
  const rows = (await get(server.base, `/api/v1/markPrices?symbol=${PERP}`)).body as Array<{ nextFundingTimestamp: number }>;
  return rows.length === 1 ? rows[0].nextFundingTimestamp : NaN;
}

async function observe(server: RunningServer, accounts: TestAccount[]): Promise<Observed> {
  const payments = [];
  const positions = [];
  for (const account of accounts) {
    payments.push((await signed(server.base, account, 'GET', '/wapi/v1/history/funding', 'fundingHistoryQueryAll', { symbol: PERP })).body as Record<string, unknown>[]);
    positions.push((await signed(server.base, account, 'GET', '/api/v1/position', 'positionQuery', {})).body as Record<string, unknown>[]);
  }
  const rates = (await get(server.base, `/api/v1/fundingRates?symbol=${PERP}`)).body as Record<string, unknown>[];
  return { payments, positions, rates };
}

async function restartInsideInterval(signal: NodeJS.Signals): Promise<void> {
  const dataDir = tempDataDir();
  dirs.push(dataDir);
  const markets = { ...DEFAULT_MARKETS, markets: DEFAULT_MARKETS.markets.map((m) => (m.symbol === PERP ? { ...m, fundingInterval: INTERVAL_MS } : m)) };
  const configFile = join(dataDir, 'markets.json');
  writeFileSync(configFile, JSON.stringify(markets));
  const args = ['--no-demo', '--no-index-default', '--front-threads', '1', '--speed-bump-ms', '0', '--index-max-age-ms', '600000', '--no-compact', '--config', configFile];
  let server = await startServer({ dataDir, args });
  try {
    await setIndex(server, '150');
    // Marks are sampled from the next whole second after the index is set, every second after.
    const sampledFromMs = Date.now();
    const [long, short] = [await createTestAccount(server.adminPort, ['USDC=100000']), await createTestAccount(server.adminPort, ['USDC=100000'])];
    const order = (account: TestAccount, body: Record<string, unknown>) => signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { symbol: PERP, orderType: 'Limit', ...body });
    expect((await order(short, { side: 'Ask', price: '151', quantity: '10', postOnly: true })).status).toBe(200);
    expect((await order(long, { side: 'Bid', price: '151', quantity: '10' })).body).toMatchObject({ status: 'Filled' });
    // The book is empty again: each mark sample is the index, so a different index makes a premium.
    await setIndex(server, '149.5');
    // An interval with at least 3 s sampled and at least 12 s still to run when the server goes down:
    // 3 s since the later of the interval's start and the index's, so that a server started just
    // before an interval began has sampled inside it too.
    const endMs = await waitUntil(async () => {
      const end = await nextFundingMs(server);
      return Date.now() - Math.max(end - INTERVAL_MS, sampledFromMs) >= 3000 && end - Date.now() >= 12_000 ? end : undefined;
    }, 'an interval with samples and time to run', 3 * INTERVAL_MS);
    const snapshot = await fetch(`http://127.0.0.1:${server.adminPort}/admin/snapshot`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    const { snapshotSeq } = (await snapshot.json()) as { snapshotSeq: number };
    await waitUntil(() => (server.lines.some((l) => l.includes('snapshot written') && l.includes(`"seq":${snapshotSeq}`)) ? true : undefined), 'the snapshot file');
    await server.stop(signal);
    server = await startServer({ dataDir, args });
    const replayed = JSON.parse(server.lines.find((l) => l.includes('"msg":"journal replayed"'))!) as { lastSeq: number; snapshotSeq: number };
    expect(replayed.snapshotSeq).toBeGreaterThanOrEqual(snapshotSeq);
    const intervalEnd = formatIsoSeconds(endMs);
    await waitUntil(async () => {
      const rows = (await signed(server.base, long, 'GET', '/wapi/v1/history/funding', 'fundingHistoryQueryAll', { symbol: PERP })).body as Array<{ intervalEndTimestamp: string }>;
      return rows.some((r) => r.intervalEndTimestamp === intervalEnd) ? true : undefined;
    }, 'the interval settled after the restart', 3 * INTERVAL_MS);
    const seen = await observe(server, [long, short]);
    await server.stop();

    const reference = replayJournal(dataDir, args);
    const endUs = endMs * 1000;
    // The premise: the interval has samples from before the stop and from after the restart, and
    // the restarted engine settled it.
    const samples = reference.records.filter((r) => r.type === RecordType.MarkPrice && r.frontId === 0xffff && r.timeUs > endUs - INTERVAL_MS * 1000 && r.timeUs <= endUs);
    expect(samples.some((r) => r.seq <= replayed.lastSeq)).toBe(true);
    expect(samples.some((r) => r.seq > replayed.lastSeq)).toBe(true);
    const rate = reference.records.find((r): r is FundingRateRec & { type: RecordType.FundingRate } => r.type === RecordType.FundingRate && r.intervalEndUs === endUs);
    expect(rate).toBeDefined();
    expect(rate!.seq).toBeGreaterThan(replayed.lastSeq);
    expect(rate!.fundingRateE12).not.toBe(0);
    expectSameAsReference(seen, reference, [long, short]);
  } finally {
    await server.stop();
  }
}

function formatIsoSeconds(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19);
}

/** What the restarted server answered equals the uninterrupted engine's records and state, field by field. */
function expectSameAsReference(seen: Observed, reference: Reference, accounts: TestAccount[]): void {
  const usdc = (units: number) => formatDecimal(units, 6);
  const rates = reference.records.filter((r): r is FundingRateRec & { type: RecordType.FundingRate } => r.type === RecordType.FundingRate).reverse();
  expect(seen.rates.map((r) => [r.intervalEndTimestamp, r.fundingRate])).toEqual(rates.map((r) => [formatIsoSeconds(r.intervalEndUs / 1000), formatDecimal(r.fundingRateE12, 12)]));
  accounts.forEach((account, i) => {
    const paid = reference.records
      .filter((r): r is FundingPaymentRec & { type: RecordType.FundingPayment } => r.type === RecordType.FundingPayment && r.accountId === account.accountId)
      .reverse();
    expect(paid.length, `account ${i} funding payments`).toBeGreaterThan(0);
    expect(seen.payments[i].map((p) => [p.intervalEndTimestamp, p.quantity, p.fundingRate]))
      .toEqual(paid.map((p) => [formatIsoSeconds(p.intervalEndUs / 1000), usdc(p.quantityUnits), formatDecimal(p.fundingRateE12, 12)]));
    const sink = new CollectingSink();
    reference.exchange.apply(commandFromSlot({ ...newCommandSlot(), kind: CommandKind.QueryPositions, accountId: account.accountId, marketId: MARKET_ID_ALL, frontId: 1, requestId: 1 }), 0, 0, sink);
    const [position] = sink.records.filter((r): r is PositionRec & { type: RecordType.Position } => r.type === RecordType.Position);
    expect(seen.positions[i]).toHaveLength(1);
    expect([seen.positions[i][0].netQuantity, seen.positions[i][0].cumulativeFundingPayment])
      .toEqual([formatDecimal(position.netLots * reference.baseUnitsPerLot, 9), usdc(position.cumulativeFundingUnits)]);
    expect(seen.positions[i][0].netQuantity).toBe(i === 0 ? '10' : '-10');
  });
}

describe('durability: a restart inside a funding interval', () => {
  it('killed with SIGKILL mid-interval, restarted: the interval settles exactly as without the restart', async () => {
    await restartInsideInterval('SIGKILL');
  });

  it('stopped cleanly mid-interval, restarted: the interval settles exactly as without the restart', async () => {
    await restartInsideInterval('SIGTERM');
  });
});
