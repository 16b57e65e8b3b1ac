// The engine's floor on this machine: what one command costs when nothing but its irreducible part
// runs, beside the engine itself on the same bytes, in the same process, alternating.
//
//   inbound slots (every command of the engine benchmark's stream, encoded once with writeCommand)
//     │ readCommand into one reused Command (what the engine worker does per ring slot)
//     ▼
//   ceiling: the Stamped record (header + the command's 160 bytes copied, as the sequencer does)
//            and ONE order record (its 25 fields filled from the command, then emitOrder)
//   engine:  the same Stamped record, then Exchange.apply (every record it writes encoded)
//
// Both write into 1,024 ring-slot-sized places (256 B), like the outbound ring with no consumer.
// The ceiling keeps no book, no balances and no ids: it is the cost of reading a command and
// writing the fewest records any accepted command has, so its rate bounds what any engine written
// this way (generated codec, records stored as 32-bit words, one thread) can reach here; the engine's rate over
// it says how much of a command is the matching itself and its other records.
// Each figure: median of RUNS timed passes over the whole stream after WARMUP passes, the two loops
// alternating pass by pass (the engine on a fresh engine with the stream's setup, untimed).
//
// Run: `npx tsc -p tsconfig.json && node --expose-gc dist/bench/engine-ceiling.bench.js`
// Env: CEILING_BENCH_OPS (100,000 ≈ 182,000 commands), CEILING_BENCH_RUNS (7).

import { pathToFileURL } from 'node:url';
import {
  COMMAND_BYTES,
  SLOT_BYTES,
  STAMPED_COMMAND_OFFSET,
  copyBytes,
  emitOrder,
  newOrderRec,
  readCommand,
  writeCommand,
  writeHeader,
} from '../engine/bus/codec.js';
import { Exchange } from '../engine/core/exchange.js';
import { RecordType, type Command, type OrderRec, type RecordHeaderFields, type RecordSink } from '../engine/bus/types.js';
import { benchConfig, decodeCommand, generateStream, newStreamCommand, type EngineStream } from './engine-stream.js';
import { gc, median } from './engine.bench.js';
import { SlotPlaces } from './slot-places.js';

const OPS = Number(process.env.CEILING_BENCH_OPS ?? 100_000);
const RUNS = Number(process.env.CEILING_BENCH_RUNS ?? 7);
const WARMUP = 2;
const SEED = 20240601;
const SINK_SLOTS = 1024;

/** The outbound ring's places with no consumer: the next of SINK_SLOTS 256-byte slots. */
class SlotSink extends SlotPlaces implements RecordSink {
  constructor() {
    super(SINK_SLOTS, SLOT_BYTES);
  }
}

/** The stream's rows as decodeCommand reads them (an EngineStream, or the driver's loaded columns). */
type Rows = Parameters<typeof decodeCommand>[0];

/** Every main-stream command in its own inbound slot, encoded as the front writes it. */
export function inboundSlots(stream: Rows, cmd: Command = newStreamCommand()): DataView {
  const view = new DataView(new ArrayBuffer(SLOT_BYTES * stream.count));
  for (let i = 0; i < stream.count; i++) {
    decodeCommand(stream, i, cmd);
    writeCommand(view, i * SLOT_BYTES, cmd);
  }
  return view;
}

/** The sequencer's Stamped record: header, then the command's bytes copied from its inbound slot. */
function stamp(sink: SlotSink, header: RecordHeaderFields, inBytes: Uint8Array, at: number, seq: number, cmd: Command): void {
  const off = sink.claim();
  header.seq = seq;
  header.timeUs = seq;
  header.requestId = cmd.requestId;
  header.frontId = cmd.frontId;
  writeHeader(sink.view, off, header);
  copyBytes(inBytes, at, sink.bytes, off + STAMPED_COMMAND_OFFSET, COMMAND_BYTES);
}

/** One order record's 25 fields from the command alone (no book: ids and prices as the command gives them). */
function orderRecord(sink: SlotSink, rec: OrderRec, cmd: Command, seq: number): void {
  const p = cmd.placeOrder;
  const place = cmd.kind === 3;
  rec.seq = seq;
  rec.timeUs = seq;
  rec.frontId = cmd.frontId;
  rec.requestId = cmd.requestId;
  rec.flags = 0;
  rec.orderId = place ? seq : cmd.cancelOrder.orderId;
  rec.priceTicks = p.priceTicks;
  rec.qtyLots = p.qtyLots;
  rec.quoteQtyUnits = 0;
  rec.executedQtyLots = 0;
  rec.executedQuoteUnits = 0;
  rec.lastFillQtyLots = 0;
  rec.lastFillPriceTicks = 0;
  rec.tradeId = 0;
  rec.feeUnits = 0;
  rec.createdAtUs = seq;
  rec.accountId = place ? p.accountId : cmd.cancelOrder.accountId;
  rec.clientId = p.clientId;
  rec.marketId = p.marketId;
  rec.feeAssetId = 0;
  rec.event = 0;
  rec.side = p.side;
  rec.orderType = p.orderType;
  rec.timeInForce = p.timeInForce;
  rec.selfTradePrevention = p.selfTradePrevention;
  rec.status = place ? 0 : 4;
  rec.expiryReason = 0;
  rec.orderFlags = 0;
  rec.systemOrderType = 0;
  emitOrder(sink, rec);
}

export interface Pass { seconds: number; records: number }

export function ceilingPass(inbound: DataView, count: number): Pass {
  const sink = new SlotSink();
  const inBytes = new Uint8Array(inbound.buffer);
  const header: RecordHeaderFields = { seq: 0, timeUs: 0, requestId: 0, frontId: 0, type: RecordType.Stamped, flags: 0 };
  const cmd = newStreamCommand();
  const rec = newOrderRec();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < count; i++) {
    const at = i * SLOT_BYTES;
    readCommand(inbound, at, cmd);
    stamp(sink, header, inBytes, at, i + 1, cmd);
    orderRecord(sink, rec, cmd, i + 1);
  }
  return { seconds: Number(process.hrtime.bigint() - t0) / 1e9, records: sink.records };
}

function enginePass(inbound: DataView, stream: EngineStream): Pass {
  const config = benchConfig();
  const ex = new Exchange(config);
  const sink = new SlotSink();
  let seq = 0;
  for (const c of stream.setup) { seq++; ex.apply(c, seq, seq, sink); }
  const before = sink.records;
  const inBytes = new Uint8Array(inbound.buffer);
  const header: RecordHeaderFields = { seq: 0, timeUs: 0, requestId: 0, frontId: 0, type: RecordType.Stamped, flags: 0 };
  const cmd = newStreamCommand();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < stream.count; i++) {
    const at = i * SLOT_BYTES;
    readCommand(inbound, at, cmd);
    seq++;
    stamp(sink, header, inBytes, at, seq, cmd);
    ex.apply(cmd, seq, seq, sink);
  }
  return { seconds: Number(process.hrtime.bigint() - t0) / 1e9, records: sink.records - before };
}

const rate = (n: number, seconds: number) => n / seconds;
const fmt = (r: number) => (r >= 1e6 ? `${(r / 1e6).toFixed(2)} M` : `${(r / 1e3).toFixed(0)} k`);

export async function runCeilingBench(): Promise<string> {
  const log = (line: string) => process.stderr.write(`ceiling bench: ${line}\n`);
  const stream = generateStream(SEED, OPS, benchConfig());
  const inbound = inboundSlots(stream);
  const n = stream.count;
  log(`${n.toLocaleString('en-US')} commands in inbound slots`);
  const ceiling: number[] = [];
  const engine: number[] = [];
  let records = { ceiling: 0, engine: 0 };
  for (let r = 0; r < WARMUP + RUNS; r++) {
    gc();
    const c = ceilingPass(inbound, n);
    gc();
    const e = enginePass(inbound, stream);
    records = { ceiling: c.records, engine: e.records };
    log(`pass ${r + 1}/${WARMUP + RUNS}${r < WARMUP ? ' (warm-up)' : ''}: ceiling ${fmt(rate(n, c.seconds))} cmds/s, engine ${fmt(rate(n, e.seconds))} cmds/s`);
    if (r >= WARMUP) { ceiling.push(rate(n, c.seconds)); engine.push(rate(n, e.seconds)); }
  }
  const c = median(ceiling);
  const e = median(engine);
  return [
    `Engine floor, one thread: ${n.toLocaleString('en-US')} commands of the engine benchmark's stream read from 256-byte inbound slots; median of ${RUNS} passes after ${WARMUP}, the two loops alternating.`,
    '',
    '| loop | commands/s | ns/command | records/command |',
    '|---|---:|---:|---:|',
    `| ceiling: readCommand, Stamped, one order record | ${fmt(c)} (${fmt(Math.min(...ceiling))}–${fmt(Math.max(...ceiling))}) | ${(1e9 / c).toFixed(0)} | ${(records.ceiling / n).toFixed(2)} |`,
    `| engine: readCommand, Stamped, Exchange.apply | ${fmt(e)} (${fmt(Math.min(...engine))}–${fmt(Math.max(...engine))}) | ${(1e9 / e).toFixed(0)} | ${(records.engine / n).toFixed(2)} |`,
    `| engine / ceiling | ${(e / c).toFixed(3)} | | |`,
    '',
  ].join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(await runCeilingBench());
}
