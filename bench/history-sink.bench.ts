// journalWithHistory: what the history sinks (account and market) cost the journal
// worker.
//
//   outbound records (pre-encoded, 256 B slots) ──► journal path: JournalWriter (output digest,
//                                                   crc32 chain, one record per command), each
//                                                   batch one synchronous LMDB transaction, then
//                                                   the flush (fsync)
//                                               └─► + AccountHistorySink and MarketHistorySink
//                                                   on every record (orders, fills, last price,
//                                                   trades, candles: puts in the same transaction)
//
// The stream is a trading workload where every command is a taker order that fills against one
// resting maker order: Stamped, orderAccepted, trade, two orderFill events, four balances, one
// depth change and the taker's Filled response (11 records, 1 journaled command). That is the
// account sink's busiest case: 2 + 2 × 2 puts per command (the last price does not change here),
// plus the market sink's trade and candles. Baseline (same run, same records, same batch size and
// flush): the journal path alone, exactly as engine/shell/journal-worker.ts does it.
// Reported: commands/s, median of RUNS runs each, and the ratio.
// Check: after the measured runs the history holds one fill per party per command.
//
// Run: `npx tsc -p tsconfig.json && node dist/bench/history-sink.bench.js`
// Env: HISTORY_BENCH_COMMANDS (50,000), HISTORY_BENCH_BATCH (1,000), HISTORY_BENCH_RUNS (5).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import {
  SLOT_BYTES, newBalanceRec, newDepthRec, newOrderRec, newStampedRec, newTradeRec, writeBalance, writeDepth, writeOrder,
  writeStamped, writeTrade,
} from '../engine/bus/codec.js';
import { LmdbJournalStore } from '../engine/store/journal-store.js';
import { JournalWriter } from '../engine/shell/journal-writer.js';
import { AccountHistorySink } from '../engine/store/history-account.js';
import { MarketHistorySink } from '../engine/store/history-market.js';
import { CommandKind, FRONT_ID_NONE, HeaderFlag, OrderEvent, OrderStatus } from '../engine/bus/types.js';

const COMMANDS = Number(process.env.HISTORY_BENCH_COMMANDS ?? 50_000);
const BATCH = Number(process.env.HISTORY_BENCH_BATCH ?? 1_000);
const RUNS = Number(process.env.HISTORY_BENCH_RUNS ?? 5);
const RECORDS_PER_COMMAND = 11;

/** Encodes the whole stream once: seq 1..COMMANDS, each a taker filling one maker. */
function encodeStream(): DataView {
  const view = new DataView(new ArrayBuffer(COMMANDS * RECORDS_PER_COMMAND * SLOT_BYTES));
  const stamped = newStampedRec();
  const order = newOrderRec();
  const trade = newTradeRec();
  const balance = newBalanceRec();
  const depth = newDepthRec();
  let slot = 0;
  const at = () => slot++ * SLOT_BYTES;
  for (let seq = 1; seq <= COMMANDS; seq++) {
    const timeUs = 1_763_000_000_000_000 + seq * 10;
    const makerId = seq * 2;
    const takerId = seq * 2 + 1;
    const makerAccount = 1 + (seq % 50);
    const takerAccount = 51 + (seq % 50);
    stamped.seq = seq;
    stamped.timeUs = timeUs;
    stamped.command.kind = CommandKind.PlaceOrder;
    stamped.command.placeOrder.accountId = takerAccount;
    writeStamped(view, at(), stamped);
    const orderAt = (orderId: number, accountId: number, event: OrderEvent, status: OrderStatus, frontId: number, flags: number) => {
      Object.assign(order, { seq, timeUs, orderId, accountId, event, status, frontId, flags, marketId: 0, priceTicks: 10_000, qtyLots: 100, createdAtUs: timeUs });
      if (event === OrderEvent.Fill) Object.assign(order, { tradeId: seq, lastFillQtyLots: 100, lastFillPriceTicks: 10_000, feeUnits: 5, executedQtyLots: 100 });
      writeOrder(view, at(), order);
    };
    orderAt(takerId, takerAccount, OrderEvent.Accepted, OrderStatus.New, FRONT_ID_NONE, 0);
    Object.assign(trade, { seq, timeUs, tradeId: seq, priceTicks: 10_000, qtyLots: 100, buyerOrderId: takerId, sellerOrderId: makerId, marketId: 0, buyerIsMaker: false });
    writeTrade(view, at(), trade);
    orderAt(makerId, makerAccount, OrderEvent.Fill, OrderStatus.Filled, FRONT_ID_NONE, 0);
    orderAt(takerId, takerAccount, OrderEvent.Fill, OrderStatus.Filled, FRONT_ID_NONE, 0);
    for (const accountId of [makerAccount, makerAccount, takerAccount, takerAccount]) {
      Object.assign(balance, { seq, timeUs, accountId, assetId: 0, availableUnits: 1, lockedUnits: 0 });
      writeBalance(view, at(), balance);
    }
    Object.assign(depth, { seq, timeUs, marketId: 0, priceTicks: 10_000, qtyLots: 0, updateId: seq });
    writeDepth(view, at(), depth);
    orderAt(takerId, takerAccount, OrderEvent.None, OrderStatus.Filled, 1, HeaderFlag.Last | HeaderFlag.CommandEnd);
  }
  return view;
}

/**
 * One run on a fresh data directory: commands/s through the journal worker's path (JournalWriter
 * over LmdbJournalStore, each batch one synchronous LMDB transaction, then the flush), with or
 * without the history sinks in the same transaction, exactly as engine/shell/journal-worker.ts.
 */
async function run(view: DataView, withSinks: boolean): Promise<{ perSecond: number; fills: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'history-bench-'));
  const store = new LmdbJournalStore(dir);
  const writer = new JournalWriter(store, 0, 0);
  const account = withSinks ? new AccountHistorySink(store.root) : null;
  const market = withSinks ? new MarketHistorySink(store.root) : null;
  const started = performance.now();
  for (let first = 0; first < COMMANDS; first += BATCH) {
    const end = Math.min(COMMANDS, first + BATCH) * RECORDS_PER_COMMAND;
    store.root.transactionSync(() => {
      for (let slot = first * RECORDS_PER_COMMAND; slot < end; slot++) {
        const offset = slot * SLOT_BYTES;
        market?.onRecord(view, offset);
        account?.onRecord(view, offset);
        writer.onRecord(view, offset);
      }
      market?.endBatch();
      store.endBatch(); // the journal records, in the same transaction as the worker writes them
    });
    await writer.commit();
  }
  const seconds = (performance.now() - started) / 1000;
  let fills = 0;
  if (withSinks) {
    const history = store.root.openDB({ name: 'history-account', encoding: 'binary' });
    for (const _ of history.getKeys({ start: ['fm'], end: ['fn'] })) fills++;
  }
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  return { perSecond: COMMANDS / seconds, fills };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function rate(perSecond: number): string {
  return perSecond >= 1e6 ? `${(perSecond / 1e6).toFixed(2)} M` : `${Math.round(perSecond / 1000)} k`;
}

export async function runHistorySinkBench(): Promise<string> {
  const view = encodeStream();
  await run(view, false); // warm-up
  await run(view, true);
  const baseline: number[] = [];
  const measured: number[] = [];
  let fills = 0;
  for (let i = 0; i < RUNS; i++) {
    baseline.push((await run(view, false)).perSecond);
    const result = await run(view, true);
    measured.push(result.perSecond);
    fills = result.fills;
  }
  const ok = fills === COMMANDS * 2;
  if (!ok) process.exitCode = 1;
  const b = median(baseline);
  const m = median(measured);
  return `### Journal worker path with the history sinks (median of ${RUNS} runs, alternating)

${COMMANDS.toLocaleString('en-US')} commands per run, each a taker filling one maker (${RECORDS_PER_COMMAND} outbound records,
1 journaled), batches of ${BATCH.toLocaleString('en-US')} commands, each batch committed and flushed to disk.
Check: ${ok ? 'PASS' : 'FAIL'} (${fills.toLocaleString('en-US')} fills in history, expected ${(COMMANDS * 2).toLocaleString('en-US')}).

| Path | commands/s (median) | range | ratio |
|---|---|---|---|
| journal only (baseline: JournalWriter in one synchronous transaction per batch, as the journal worker) | ${rate(b)} | ${rate(Math.min(...baseline))}–${rate(Math.max(...baseline))} | 1.00x |
| journal + account and market history (order states, fills, trades, candles) | ${rate(m)} | ${rate(Math.min(...measured))}–${rate(Math.max(...measured))} | ${(m / b).toFixed(2)}x |
`;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(await runHistorySinkBench());
}
