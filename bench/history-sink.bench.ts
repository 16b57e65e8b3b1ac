// journalWithHistory: what the history sinks (account and market) cost the journal
// worker, against the LMDB puts they make.
//
//   outbound records (pre-encoded, 256 B slots) ──► journal path: JournalWriter (output digest,
//                                                   crc32 chain, one record per command), each
//                                                   batch one synchronous LMDB transaction, then
//                                                   the flush (fsync)
//                                               ├─► + the same puts, raw: for each command the keys
//                                               │   and value sizes the sinks store, from reused
//                                               │   buffers (the floor for this storage format)
//                                               └─► + AccountHistorySink and MarketHistorySink
//                                                   on every record (orders, fills, last price,
//                                                   trades, candles: puts in the same transaction)
//
// The stream is a trading workload where every command is a taker order that fills against one
// resting maker order: Stamped, orderAccepted, trade, two orderFill events, four balances, one
// depth change and the taker's Filled response (11 records, 1 journaled command). That is the
// account sink's busiest case: the taker's and the maker's order rows (the taker's accepted and
// filled states in one put), the taker's order index entry and one fill per party (5 puts; the
// last price does not change here), plus the market sink's trade (1 put) and, once per batch, its
// two candles. Baseline (same run, same records, same batch size and flush): the journal path
// alone, exactly as engine/shell/journal-worker.ts does it.
// Reported: commands/s, median of RUNS runs each (the three paths alternate), and the ratios.
// Check: after the measured runs the history holds one fill per party per command.
//
// Run: `npx tsc -p tsconfig.json && node dist/bench/history-sink.bench.js`; instructions per command
// of two trees under callgrind: bench/history-sink-callgrind.sh OLD NEW.
// Env: HISTORY_BENCH_COMMANDS (50,000), HISTORY_BENCH_BATCH (1,000), HISTORY_BENCH_RUNS (5).

import { createHash } from 'node:crypto';
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
import { AccountHistorySink, openHistoryDbs } from '../engine/store/history-account.js';
import { CandleResolution, MarketHistorySink, candleKey, openMarketHistoryDbs, tradeKey } from '../engine/store/history-market.js';
import { CommandKind, FRONT_ID_NONE, HeaderFlag, OrderEvent, OrderStatus } from '../engine/bus/types.js';

const COMMANDS = Number(process.env.HISTORY_BENCH_COMMANDS ?? 50_000);
const BATCH = Number(process.env.HISTORY_BENCH_BATCH ?? 1_000);
const RUNS = Number(process.env.HISTORY_BENCH_RUNS ?? 5);
const RECORDS_PER_COMMAND = 11;
const TIME_US = 1_763_000_000_000_000;

/** The command's parties: maker and taker order ids and accounts, and its time. */
function partiesOf(seq: number): { timeUs: number; makerId: number; takerId: number; makerAccount: number; takerAccount: number } {
  return { timeUs: TIME_US + seq * 10, makerId: seq * 2, takerId: seq * 2 + 1, makerAccount: 1 + (seq % 50), takerAccount: 51 + (seq % 50) };
}

/** Encodes the whole stream once: seq 1..commands, each a taker filling one maker. */
function encodeStream(commands = COMMANDS): DataView {
  const view = new DataView(new ArrayBuffer(commands * RECORDS_PER_COMMAND * SLOT_BYTES));
  const stamped = newStampedRec();
  const order = newOrderRec();
  const trade = newTradeRec();
  const balance = newBalanceRec();
  const depth = newDepthRec();
  let slot = 0;
  const at = () => slot++ * SLOT_BYTES;
  for (let seq = 1; seq <= commands; seq++) {
    const { timeUs, makerId, takerId, makerAccount, takerAccount } = partiesOf(seq);
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

type Path = 'journal' | 'raw' | 'sinks';

/**
 * The puts the sinks make for this stream, made directly: per command the two order rows, the
 * taker's index entry, two fills (136-byte values) and the trade (48 bytes) with the same keys,
 * and per batch the trade candles (72 bytes), from buffers allocated once.
 */
function rawPutter(root: LmdbJournalStore['root']): { command(seq: number): void; endBatch(): void } {
  const { history } = openHistoryDbs(root);
  const market = openMarketHistoryDbs(root);
  const order = Buffer.alloc(136, 1);
  const trade = Buffer.alloc(48, 2);
  const candle = Buffer.alloc(72, 3);
  const empty = Buffer.alloc(0);
  let lastTimeUs = 0;
  return {
    command(seq: number): void {
      const { timeUs, makerId, takerId, makerAccount, takerAccount } = partiesOf(seq);
      history.putSync(['om', takerAccount, 0, timeUs, takerId], empty);
      history.putSync(['fm', makerAccount, 0, timeUs, seq, 0], order);
      history.putSync(['fm', takerAccount, 0, timeUs, seq, 1], order);
      history.putSync(['o', takerAccount, takerId], order);
      history.putSync(['o', makerAccount, makerId], order);
      market.trades.putSync(tradeKey(0, seq), trade);
      lastTimeUs = timeUs;
    },
    endBatch(): void {
      const timeS = Math.floor(lastTimeUs / 1_000_000);
      market.candles.putSync(candleKey(0, CandleResolution.Minute, timeS - (timeS % 60)), candle);
      market.candles.putSync(candleKey(0, CandleResolution.Hour, timeS - (timeS % 3600)), candle);
    },
  };
}

/**
 * One run on a fresh data directory: commands/s through the journal worker's path (JournalWriter
 * over LmdbJournalStore, each batch one synchronous LMDB transaction, then the flush), alone, with
 * the sinks' puts made raw, or with the history sinks in the same transaction, exactly as
 * engine/shell/journal-worker.ts.
 */
async function run(view: DataView, path: Path, commands = COMMANDS, digest = false): Promise<{ perSecond: number; cpuUs: number; fills: number; digest: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'history-bench-'));
  const store = new LmdbJournalStore(dir);
  const writer = new JournalWriter(store, 0, 0);
  const account = path === 'sinks' ? new AccountHistorySink(store.root) : null;
  const market = path === 'sinks' ? new MarketHistorySink(store.root) : null;
  const raw = path === 'raw' ? rawPutter(store.root) : null;
  const started = performance.now();
  const cpu = process.cpuUsage();
  for (let first = 0; first < commands; first += BATCH) {
    const last = Math.min(commands, first + BATCH);
    store.root.transactionSync(() => {
      for (let slot = first * RECORDS_PER_COMMAND; slot < last * RECORDS_PER_COMMAND; slot++) {
        const offset = slot * SLOT_BYTES;
        market?.onRecord(view, offset);
        account?.onRecord(view, offset);
        writer.onRecord(view, offset);
      }
      if (raw !== null) {
        for (let seq = first + 1; seq <= last; seq++) raw.command(seq);
        raw.endBatch();
      }
      market?.endBatch();
      store.endBatch(); // the journal records, in the same transaction as the worker writes them
    });
    await writer.commit();
  }
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  let fills = 0;
  if (path === 'sinks') {
    const history = store.root.openDB({ name: 'history-account', encoding: 'binary' });
    for (const _ of history.getKeys({ start: ['fm'], end: ['fn'] })) fills++;
  }
  const stored = digest ? storedDigest(store) : '';
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  return { perSecond: commands / seconds, cpuUs: (used.user + used.system) / commands, fills, digest: stored };
}

/** A digest of every key and value of the history databases (two trees must store the same bytes). */
function storedDigest(store: LmdbJournalStore): string {
  const hash = createHash('sha256');
  for (const name of ['history-account', 'market-trades', 'market-candles', 'market-off-book']) {
    const db = store.root.openDB<Buffer, Buffer>({ name, keyEncoding: 'binary', encoding: 'binary' });
    for (const { key, value } of db.getRange({})) hash.update(`${key.length}:${value.length};`).update(key).update(value);
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * `drive PATH N WARM [digest]`: one warm-up run of WARM commands, then one of N on PATH, printing
 * its fill count, and with `digest` the stored history's digest, as JSON
 * (bench/history-sink-callgrind.sh counts the instructions of such runs under callgrind, and
 * checks the digests outside it).
 */
async function drive(path: Path, commands: number, warm: number, digest: boolean): Promise<void> {
  const view = encodeStream(Math.max(commands, warm));
  if (warm > 0) await run(view, path, warm);
  const result = await run(view, path, commands, digest);
  console.log(JSON.stringify({ path, commands, fills: result.fills, ...(digest ? { digest: result.digest } : {}) }));
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
  const paths: Path[] = ['journal', 'raw', 'sinks'];
  for (const path of paths) await run(view, path); // warm-up
  const rates: Record<Path, number[]> = { journal: [], raw: [], sinks: [] };
  const cpu: Record<Path, number[]> = { journal: [], raw: [], sinks: [] };
  let fills = 0;
  for (let i = 0; i < RUNS; i++) {
    for (const path of paths) {
      const result = await run(view, path);
      rates[path].push(result.perSecond);
      cpu[path].push(result.cpuUs);
      if (path === 'sinks') fills = result.fills;
    }
  }
  const ok = fills === COMMANDS * 2;
  if (!ok) process.exitCode = 1;
  const b = median(rates.journal);
  const added = (path: Path) => path === 'journal' ? '' : `${(1e6 / median(rates[path]) - 1e6 / b).toFixed(1)} µs`;
  const row = (name: string, path: Path) =>
    `| ${name} | ${rate(median(rates[path]))} | ${rate(Math.min(...rates[path]))}–${rate(Math.max(...rates[path]))} | ${(median(rates[path]) / b).toFixed(2)}x | ${added(path)} | ${median(cpu[path]).toFixed(1)} µs |`;
  return `### Journal worker path with the history sinks (median of ${RUNS} runs, alternating)

${COMMANDS.toLocaleString('en-US')} commands per run, each a taker filling one maker (${RECORDS_PER_COMMAND} outbound records,
1 journaled), batches of ${BATCH.toLocaleString('en-US')} commands, each batch committed and flushed to disk.
Check: ${ok ? 'PASS' : 'FAIL'} (${fills.toLocaleString('en-US')} fills in history, expected ${(COMMANDS * 2).toLocaleString('en-US')}).
"Added" is wall time per command over the journal alone; CPU is the process's user and system time per command (the flush's wait for the disk is not CPU).

| Path | commands/s (median) | range | ratio | added per command | CPU per command (median) |
|---|---|---|---|---|---|
${row('journal only (baseline: JournalWriter in one synchronous transaction per batch, as the journal worker)', 'journal')}
${row('journal + the sinks\' puts made raw (6 per command and 2 candles per batch, same keys and value sizes, reused buffers)', 'raw')}
${row('journal + account and market history sinks (order states, fills, trades, candles)', 'sinks')}
`;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [mode, path, commands, warm, digest] = process.argv.slice(2);
  if (mode === 'drive') await drive(path as Path, Number(commands), Number(warm ?? 0), digest === 'digest');
  else console.log(await runHistorySinkBench());
}
