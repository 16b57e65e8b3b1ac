// A deterministic engine driver for instruction counting: one seeded command stream, written to a
// file once, replayed in-process through the engine core of any built tree of this project.
//
//   node dist/bench/engine-drive.js write FILE ROWS
//     │  generates the engine benchmark's stream (bench/engine-stream.ts, seed 20240601) with this
//     │  tree's engine and writes its setup (JSON) and at least ROWS main-stream rows (float64 columns)
//     ▼
//   node dist/bench/engine-drive.js run TREE FILE WARM N
//        loads TREE/dist's Exchange, commands, benchConfig and record writers; warms up on a
//        first engine (setup + WARM rows), then a fresh engine runs setup + N rows, every record
//        encoded into one of 1,024 ring-slot-sized places as the engine benchmark does
//
// Run under `valgrind --tool=callgrind` twice with two values of N and the same WARM, the
// difference of the two instruction totals over the difference of N is the engine's instructions
// per command on rows N1..N2 of the stream, with start-up, loading, warm-up and setup cancelled.
// bench/layout-compare-callgrind.sh does that for two commits.
//
// One sink serves both record-sink shapes this project has had: the byte destination
// (view/claim/written: the core encodes through generated emitters) and the older one with one
// method per record kind (the sink encodes through the codec's writeX). A core calls only the
// shape it knows; both shapes put each record into the next slot of the same buffer.
// The file spells commands by slot position (CommandSlot), the form every tree can read. A tree whose
// engine takes a Command of per-kind payloads (its codec has commandFromSlot) gets its setup through
// commandFromSlot and its rows through its own decodeCommand, as its engine benchmark feeds them.
// Output: one JSON line (tree, rows, records written in the measured part, final state hash).

import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { baseCommand, generateStream, newStreamCommand } from './engine-stream.js';
import { newCommandSlot, type CommandSlot } from '../engine/bus/types.js';
import { slotFromCommand } from '../engine/bus/codec.js';
import { SlotPlaces } from './slot-places.js';

/** A command by slot position: what the file holds, and what trees before per-kind payloads apply. */
type Slot = CommandSlot;

const SEED = 20240601;
const SLOT_BYTES = 256;
const SINK_SLOTS = 1024;
/** Main-stream columns, in file order; each is ROWS float64 values. */
const COLUMNS = ['kind', 'side', 'tif', 'accountId', 'priceTicks', 'qtyLots', 'orderId', 'flags'] as const;
type Column = (typeof COLUMNS)[number];

interface StreamHeader {
  rows: number;
  /** The fields every main-stream command shares (newStreamCommand), numbers only. */
  base: Record<string, number>;
  /** Setup commands: their numeric fields that differ from a fresh command, and the key bytes. */
  setup: { fields: Record<string, number>; key: number[] }[];
}

interface LoadedStream { header: StreamHeader; columns: Record<Column, Float64Array> }

interface CoreLike {
  apply(cmd: unknown, seq: number, timeUs: number, sink: unknown): void;
  stateHash(): string;
}

interface Tree {
  Exchange: new (config: unknown) => CoreLike;
  newSlot: () => Slot;
  /** The command the tree's engine applies for a slot (the slot itself before per-kind payloads). */
  fromSlot: (slot: Slot) => unknown;
  /** The tree's benchmark row reader, where it has one: a reused command and the row copier. */
  rows: { newStreamCommand: () => unknown; decodeCommand: (s: Record<Column, ArrayLike<number>>, i: number, cmd: unknown) => void } | null;
  benchConfig: () => unknown;
  codec: Record<string, unknown>;
}

type Writer = (dv: DataView, at: number, rec: unknown) => void;

function numericFields(c: Slot, fresh: Slot): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, value] of Object.entries(c)) {
    if (typeof value === 'number' && value !== (fresh as unknown as Record<string, unknown>)[name]) out[name] = value;
  }
  return out;
}

function writeStreamFile(file: string, rows: number): void {
  // generateStream gives about 1.82 commands per operation.
  const s = generateStream(SEED, Math.ceil(rows / 1.8) + 16);
  if (s.count < rows) throw new Error(`engine drive: ${s.count} rows generated, ${rows} asked`);
  if (s.rejected !== 0) throw new Error(`engine drive: ${s.rejected} stream commands rejected`);
  const fresh = newCommandSlot();
  const header: StreamHeader = {
    rows,
    base: numericFields(baseCommand(), fresh),
    setup: s.setup.map((c) => slotFromCommand(c)).map((c) => ({ fields: numericFields(c, fresh), key: c.key.some((b) => b !== 0) ? [...c.key] : [] })),
  };
  const json = Buffer.from(JSON.stringify(header));
  const start = Math.ceil((8 + json.length) / 8) * 8;
  const out = Buffer.alloc(start + COLUMNS.length * rows * 8);
  out.writeUInt32LE(json.length, 0);
  json.copy(out, 8);
  const source: Record<Column, ArrayLike<number>> = {
    kind: s.kind, side: s.side, tif: s.tif, accountId: s.accountId, priceTicks: s.priceTicks, qtyLots: s.qtyLots, orderId: s.orderId, flags: s.flags,
  };
  COLUMNS.forEach((name, k) => {
    const col = new Float64Array(out.buffer, out.byteOffset + start + k * rows * 8, rows);
    for (let i = 0; i < rows; i++) col[i] = source[name][i];
  });
  writeFileSync(file, out);
}

function readStreamFile(file: string): LoadedStream {
  const raw = readFileSync(file);
  const jsonLength = raw.readUInt32LE(0);
  const header = JSON.parse(raw.subarray(8, 8 + jsonLength).toString()) as StreamHeader;
  const start = Math.ceil((8 + jsonLength) / 8) * 8;
  const bytes = new Uint8Array(raw.length - start);
  bytes.set(raw.subarray(start));
  const columns = {} as Record<Column, Float64Array>;
  COLUMNS.forEach((name, k) => { columns[name] = new Float64Array(bytes.buffer, k * header.rows * 8, header.rows); });
  return { header, columns };
}

async function loadTree(root: string): Promise<Tree> {
  const load = (path: string) => import(pathToFileURL(resolve(root, 'dist', path)).href) as Promise<Record<string, unknown>>;
  const [exchange, types, stream, codec] = await Promise.all([
    load('engine/core/exchange.js'), load('engine/bus/types.js'), load('bench/engine-stream.js'), load('engine/bus/codec.js'),
  ]);
  const fromSlot = typeof codec.commandFromSlot === 'function' ? codec.commandFromSlot as (slot: Slot) => unknown : null;
  const hasRows = fromSlot !== null && typeof stream.decodeCommand === 'function' && typeof stream.newStreamCommand === 'function';
  return {
    Exchange: exchange.Exchange as Tree['Exchange'],
    newSlot: (types.newCommandSlot ?? types.newCommand) as Tree['newSlot'],
    fromSlot: fromSlot ?? ((slot) => slot),
    rows: hasRows ? { newStreamCommand: stream.newStreamCommand, decodeCommand: stream.decodeCommand } as Tree['rows'] : null,
    benchConfig: stream.benchConfig as Tree['benchConfig'],
    codec,
  };
}

/** Takes every record into the next of SINK_SLOTS ring-slot-sized places, in either sink shape. */
class SlotSink extends SlotPlaces {
  private readonly writers: Record<string, Writer>;

  constructor(codec: Record<string, unknown>) {
    super(SINK_SLOTS, SLOT_BYTES);
    const pick = (name: string): Writer => (typeof codec[name] === 'function' ? codec[name] as Writer : () => {
      throw new Error(`engine drive: the codec has no ${name}`);
    });
    this.writers = {
      result: pick('writeResult'), order: pick('writeOrder'), trade: pick('writeTrade'), balance: pick('writeBalance'),
      depth: pick('writeDepth'), account: pick('writeAccount'), market: pick('writeMarket'),
      marketState: pick('writeMarketState'), feeRates: pick('writeFeeRates'),
    };
  }

  result(r: unknown): void { this.writers.result(this.view, this.claim(), r); }
  order(r: unknown): void { this.writers.order(this.view, this.claim(), r); }
  trade(r: unknown): void { this.writers.trade(this.view, this.claim(), r); }
  balance(r: unknown): void { this.writers.balance(this.view, this.claim(), r); }
  depth(r: unknown): void { this.writers.depth(this.view, this.claim(), r); }
  account(r: unknown): void { this.writers.account(this.view, this.claim(), r); }
  market(r: unknown): void { this.writers.market(this.view, this.claim(), r); }
  marketState(r: unknown): void { this.writers.marketState(this.view, this.claim(), r); }
  feeRates(r: unknown): void { this.writers.feeRates(this.view, this.claim(), r); }
}

function setupCommands(tree: Tree, header: StreamHeader): unknown[] {
  return header.setup.map(({ fields, key }) => {
    const c = tree.newSlot();
    assignFields(c, fields);
    c.key.set(key);
    return tree.fromSlot(c);
  });
}

function assignFields(c: Slot, fields: Record<string, number>): void {
  const target = c as unknown as Record<string, unknown>;
  for (const [name, value] of Object.entries(fields)) {
    if (!(name in target)) throw new Error(`engine drive: this tree's Command has no ${name}`);
    target[name] = value;
  }
}

/** A fresh engine, the setup, then the first `rows` main-stream rows; returns the engine and sink. */
function replay(tree: Tree, s: LoadedStream, rows: number): { ex: CoreLike; sink: SlotSink; records: number } {
  const ex = new tree.Exchange(tree.benchConfig());
  const sink = new SlotSink(tree.codec);
  let seq = 0;
  for (const c of setupCommands(tree, s.header)) { seq++; ex.apply(c, seq, seq, sink); }
  const before = sink.records;
  if (tree.rows !== null) {
    const row = tree.rows.newStreamCommand();
    for (let i = 0; i < rows; i++) {
      tree.rows.decodeCommand(s.columns, i, row);
      seq++;
      ex.apply(row, seq, seq, sink);
    }
    return { ex, sink, records: sink.records - before };
  }
  const cmd = tree.newSlot();
  assignFields(cmd, s.header.base);
  const { kind, side, tif, accountId, priceTicks, qtyLots, orderId, flags } = s.columns;
  for (let i = 0; i < rows; i++) {
    cmd.kind = kind[i];
    cmd.side = side[i];
    cmd.timeInForce = tif[i];
    cmd.accountId = accountId[i];
    cmd.priceTicks = priceTicks[i];
    cmd.qtyLots = qtyLots[i];
    cmd.orderId = orderId[i];
    cmd.flags = flags[i];
    seq++;
    ex.apply(cmd, seq, seq, sink);
  }
  return { ex, sink, records: sink.records - before };
}

async function run(root: string, file: string, warm: number, rows: number): Promise<void> {
  const tree = await loadTree(root);
  const s = readStreamFile(file);
  if (Math.max(warm, rows) > s.header.rows) throw new Error(`engine drive: the stream file holds ${s.header.rows} rows`);
  if (warm > 0) replay(tree, s, warm);
  const measured = replay(tree, s, rows);
  process.stdout.write(`${JSON.stringify({ tree: root, rows, warm, records: measured.records, hash: measured.ex.stateHash() })}\n`);
}

/**
 * The floor of bench/engine-ceiling.bench.ts, countable the same way: the first `rows` rows
 * encoded into 256-byte inbound slots (untimed), then per row readCommand, the Stamped record
 * (header, the command's bytes copied) and one order record filled from the command. This tree's
 * codec only: it needs no engine.
 */
async function ceiling(file: string, warm: number, rows: number): Promise<void> {
  const { ceilingPass, inboundSlots } = await import('./engine-ceiling.bench.js');
  const s = readStreamFile(file);
  const n = Math.max(warm, rows);
  if (n > s.header.rows) throw new Error(`engine drive: the stream file holds ${s.header.rows} rows`);
  const cmd = newStreamCommand();
  const columns = { count: n, ...s.columns, tif: s.columns.tif } as unknown as Parameters<typeof inboundSlots>[0];
  const inbound = inboundSlots(columns, cmd);
  if (warm > 0) ceilingPass(inbound, warm);
  const pass = ceilingPass(inbound, rows);
  process.stdout.write(`${JSON.stringify({ tree: 'ceiling', rows, warm, records: pass.records })}\n`);
}

async function main(argv: string[]): Promise<void> {
  const [mode, ...rest] = argv;
  if (mode === 'write' && rest.length === 2) return writeStreamFile(rest[0], Number(rest[1]));
  if (mode === 'run' && rest.length === 4) return run(rest[0], rest[1], Number(rest[2]), Number(rest[3]));
  if (mode === 'ceiling' && rest.length === 3) return ceiling(rest[0], Number(rest[1]), Number(rest[2]));
  throw new Error('usage: engine-drive.js write FILE ROWS | run TREE FILE WARM N | ceiling FILE WARM N');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main(process.argv.slice(2));
}
