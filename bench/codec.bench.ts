// codec: the generated DataView codec (engine/bus/generated/codec.ts, written by schemas/gen.mjs
// from the schema) against the hand-written codec it replaced (bench/baseline/codec-handwritten.ts),
// in the same process, on the records the hot path moves most: commands (front → engine),
// Stamped records (engine → journal), orders, trades and balances (engine → fronts).
//
// Each case writes or reads one record at a varying slot of a SharedArrayBuffer, ITERATIONS
// times per run; runs alternate which codec goes first. Reported: nanoseconds per operation,
// median of RUNS runs each, and the ratio generated / hand-written (1.00 = as fast; below 1 is
// faster). A check first proves both write the same bytes for every case.
// Also, for scale: the flatc accessors reading an order, and crc32 over one journal record.
//
// Run: `npx tsc -p tsconfig.json && node dist/bench/codec.bench.js`
// Env: CODEC_BENCH_ITERATIONS (500,000), CODEC_BENCH_RUNS (21).
// Instruction counts: `node dist/bench/codec.bench.js count CASE gen|hand N` runs one case's loop
// with one codec N times after a warm-up and nothing else; bench/codec-callgrind.sh runs that
// under callgrind at two N for every case and codec and prints instructions per operation.

import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import * as flatbuffers from 'flatbuffers';
import { OrderRecord } from '../schemas/generated/exchange/schema.js';
import * as generated from '../engine/bus/codec.js';
import * as handwritten from './baseline/codec-handwritten.js';
import { CommandKind, newCommand, newCommandSlot } from '../engine/bus/types.js';

const ITERATIONS = Number(process.env.CODEC_BENCH_ITERATIONS ?? 500_000);
const RUNS = Number(process.env.CODEC_BENCH_RUNS ?? 21);
const SLOTS = 64;
const SLOT = generated.SLOT_BYTES;

/**
 * Either codec. They take the same records but for the command: the hand-written one writes the
 * slot by position (CommandSlot), the generated one a Command (header and payload of its kind);
 * each case's loop only hands a codec the records its own env made.
 */
type Codec = typeof handwritten;
const gen = generated as unknown as Codec;

type Env = ReturnType<typeof makeEnv>;
type Run = (codec: Codec, dv: DataView, n: number, e: Env) => number;

interface Case {
  name: string;
  /** Runs the case `n` times with one codec; returns a value that depends on every operation. */
  run: Run;
}

/** A limit order as the hand-written codec takes it (slot positions)… */
function sampleSlot() {
  const c = newCommandSlot();
  c.kind = CommandKind.PlaceOrder;
  c.priceTicks = 101_250;
  c.qtyLots = 3_000;
  c.accountId = 42;
  c.marketId = 3;
  c.requestId = 77;
  c.frontId = 1;
  return c;
}

/** …and the same order as the generated codec takes it (header and PlaceOrder payload). */
function sampleCommand() {
  const c = newCommand();
  c.kind = CommandKind.PlaceOrder;
  c.requestId = 77;
  c.frontId = 1;
  Object.assign(c.placeOrder, { priceTicks: 101_250, qtyLots: 3_000, accountId: 42, marketId: 3 });
  return c;
}

function sampleOrder(codec: Codec) {
  const r = codec.newOrderRec();
  r.seq = 123_456_789;
  r.timeUs = 1_735_689_600_000_000;
  r.orderId = 0x1_2345_6789;
  r.priceTicks = 101_250;
  r.qtyLots = 3_000;
  r.executedQtyLots = 1_000;
  r.accountId = 42;
  r.marketId = 3;
  return r;
}

/**
 * Everything a case's loop touches, passed in (the loops are recompiled per codec, see
 * `compiled`); each codec gets records made by its own newXRec, as on the hot path.
 */
function makeEnv(codec: Codec, which: 'gen' | 'hand') {
  const cmd = (which === 'gen' ? sampleCommand() : sampleSlot()) as ReturnType<typeof sampleSlot>;
  const stamped = codec.newStampedRec();
  Object.assign(stamped, { seq: 9_000_000_001, timeUs: 1_735_689_600_000_000, command: cmd });
  const trade = codec.newTradeRec();
  Object.assign(trade, { seq: 5, timeUs: 1_735_689_600_000_001, tradeId: 99, priceTicks: 101_250, qtyLots: 10, buyerOrderId: 7, sellerOrderId: 8, marketId: 3, buyerIsMaker: true });
  const balance = codec.newBalanceRec();
  Object.assign(balance, { seq: 5, timeUs: 1_735_689_600_000_001, availableUnits: 1_000_000_000_000, lockedUnits: 25_000, accountId: 42, assetId: 2 });
  return {
    cmd, stamped, order: sampleOrder(codec), trade, balance,
    readCommandInto: (which === 'gen' ? newCommand() : newCommandSlot()) as ReturnType<typeof sampleSlot>, readOrderInto: codec.newOrderRec(), readStampedInto: codec.newStampedRec(), SLOTS, SLOT,
  };
}
const envs = { gen: makeEnv(gen, 'gen'), hand: makeEnv(handwritten, 'hand') };
const env = envs.hand;

const CASES: Case[] = [
  {
    name: 'writeCommand',
    run: (codec, dv, n, e) => {
      for (let i = 0; i < n; i++) {
        e.cmd.requestId = i;
        codec.writeCommand(dv, (i & (e.SLOTS - 1)) * e.SLOT, e.cmd);
      }
      return dv.getUint32(e.SLOT, true);
    },
  },
  {
    name: 'readCommand',
    run: (codec, dv, n, e) => {
      let sum = 0;
      for (let i = 0; i < n; i++) {
        codec.readCommand(dv, (i & (e.SLOTS - 1)) * e.SLOT, e.readCommandInto);
        sum += e.readCommandInto.requestId;
      }
      return sum;
    },
  },
  {
    name: 'writeStamped',
    run: (codec, dv, n, e) => {
      for (let i = 0; i < n; i++) {
        e.stamped.seq = i;
        codec.writeStamped(dv, (i & (e.SLOTS - 1)) * e.SLOT, e.stamped);
      }
      return dv.getUint32(e.SLOT, true);
    },
  },
  {
    name: 'readStamped',
    run: (codec, dv, n, e) => {
      let sum = 0;
      for (let i = 0; i < n; i++) {
        codec.readStamped(dv, (i & (e.SLOTS - 1)) * e.SLOT, e.readStampedInto);
        sum += e.readStampedInto.seq;
      }
      return sum;
    },
  },
  {
    name: 'writeOrder',
    run: (codec, dv, n, e) => {
      for (let i = 0; i < n; i++) {
        e.order.executedQtyLots = i;
        codec.writeOrder(dv, (i & (e.SLOTS - 1)) * e.SLOT, e.order);
      }
      return dv.getUint32(e.SLOT + 56, true);
    },
  },
  {
    name: 'readOrder',
    run: (codec, dv, n, e) => {
      let sum = 0;
      for (let i = 0; i < n; i++) {
        codec.readOrder(dv, (i & (e.SLOTS - 1)) * e.SLOT, e.readOrderInto);
        sum += e.readOrderInto.executedQtyLots;
      }
      return sum;
    },
  },
  {
    name: 'writeTrade + writeBalance ×2',
    run: (codec, dv, n, e) => {
      for (let i = 0; i < n; i++) {
        const at = (i & (e.SLOTS - 4)) * e.SLOT;
        e.trade.tradeId = i;
        codec.writeTrade(dv, at, e.trade);
        e.balance.availableUnits = i;
        codec.writeBalance(dv, at + e.SLOT, e.balance);
        codec.writeBalance(dv, at + 2 * e.SLOT, e.balance);
      }
      return dv.getUint32(e.SLOT, true);
    },
  },
];

/**
 * The case's loop compiled anew for one codec, from its source: each codec then has its own copy
 * of the loop with its own type feedback, so every call in it stays monomorphic, as on the hot
 * path (one shared loop would see both codecs' functions at each call and measure neither).
 */
const compiledLoops = new Map<string, Run>();
function compiled(c: Case, which: 'gen' | 'hand'): Run {
  const key = `${c.name}/${which}`;
  let run = compiledLoops.get(key);
  if (run === undefined) {
    run = new Function(`return (${c.run.toString()});`)() as Run;
    compiledLoops.set(key, run);
  }
  return run;
}

function slab(): DataView {
  return new DataView(new SharedArrayBuffer(SLOT * SLOTS));
}

/** Both codecs write the same bytes for every case: the comparison is of equals. */
function checkSameBytes(): void {
  for (const c of CASES) {
    const a = slab();
    const b = slab();
    c.run(handwritten, a, SLOTS * 3, env);
    c.run(gen, b, SLOTS * 3, envs.gen);
    const x = new Uint8Array(a.buffer);
    const y = new Uint8Array(b.buffer);
    for (let i = 0; i < x.length; i++) {
      if (x[i] !== y[i]) throw new Error(`codec bench: ${c.name} writes different bytes at ${i}`);
    }
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((p, q) => p - q);
  return s[s.length >> 1];
}

function timeRun(c: Case, codec: Codec, which: 'gen' | 'hand', dv: DataView): number {
  const run = compiled(c, which);
  const start = performance.now();
  const sink = run(codec, dv, ITERATIONS, envs[which]);
  const ns = ((performance.now() - start) * 1e6) / ITERATIONS;
  if (Number.isNaN(sink)) throw new Error('unreachable');
  return ns;
}

/** Prepared bytes for the readers: every slot holds a record of each case's own writer. */
function prepared(c: Case): DataView {
  const dv = slab();
  const writer = CASES.find((w) => w.name === c.name.replace('read', 'write'));
  writer?.run(handwritten, dv, SLOTS, env);
  return dv;
}

function flatcReadOrder(): number {
  const dv = slab();
  generated.writeOrder(dv, SLOT, sampleOrder(handwritten));
  const bb = new flatbuffers.ByteBuffer(new Uint8Array(dv.buffer));
  const o = new OrderRecord();
  let sink = 0;
  const n = ITERATIONS / 4;
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    o.__init(SLOT, bb);
    const h = o.header()!;
    sink += Number(h.seq()) + Number(h.timeUs()) + Number(o.orderId()) + Number(o.priceTicks()) + Number(o.qtyLots())
      + Number(o.quoteQtyUnits()) + Number(o.executedQtyLots()) + Number(o.executedQuoteUnits())
      + Number(o.lastFillQtyLots()) + Number(o.lastFillPriceTicks()) + Number(o.tradeId()) + Number(o.feeUnits())
      + Number(o.createdAtUs()) + o.accountId();
  }
  const ns = ((performance.now() - start) * 1e6) / n;
  return Number.isNaN(sink) ? 0 : ns;
}

function crcOne(): number {
  const bytes = new Uint8Array(generated.JOURNAL_RECORD_BYTES);
  let sink = 0;
  const n = ITERATIONS / 20;
  const start = performance.now();
  for (let i = 0; i < n; i++) sink ^= generated.crc32(bytes, 0, generated.JOURNAL_CHECKSUM_OFFSET, sink >>> 0);
  return ((performance.now() - start) * 1e6) / n + (sink & 0);
}

export async function runCodecBench(): Promise<string> {
  checkSameBytes();
  const times = new Map(CASES.map((c) => [c.name, { gen: [] as number[], hand: [] as number[] }]));
  const views = new Map(CASES.map((c) => [c.name, prepared(c)]));
  for (let run = 0; run < RUNS + 1; run++) {
    for (const c of CASES) {
      const dv = views.get(c.name)!;
      const order: [Codec, 'gen' | 'hand'][] = run % 2 === 0 ? [[gen, 'gen'], [handwritten, 'hand']] : [[handwritten, 'hand'], [gen, 'gen']];
      for (const [codec, key] of order) {
        const ns = timeRun(c, codec, key, dv);
        if (run > 0) times.get(c.name)![key].push(ns); // run 0 warms both up
      }
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  let table = `### Generated codec against the hand-written one (${ITERATIONS.toLocaleString('en-US')} operations per run, median of ${RUNS} runs, alternating)\n\n`;
  table += '| operation | hand-written (ns/op) | generated (ns/op) | generated / hand-written |\n|---|---:|---:|---:|\n';
  const ratios: number[] = [];
  for (const c of CASES) {
    const t = times.get(c.name)!;
    const hand = median(t.hand);
    const gen = median(t.gen);
    ratios.push(gen / hand);
    table += `| ${c.name} | ${hand.toFixed(1)} | ${gen.toFixed(1)} | ${(gen / hand).toFixed(2)} |\n`;
  }
  table += `\nMedian ratio over the cases: ${median(ratios).toFixed(2)}. Both codecs wrote identical bytes in every case (checked first).\n`;
  table += `For scale, in the same process: flatc's generated accessors read an order in ${flatcReadOrder().toFixed(1)} ns `
    + `(a bigint per 64-bit field), crc32 over one ${generated.JOURNAL_CHECKSUM_OFFSET}-byte journal record takes ${crcOne().toFixed(1)} ns.\n`;
  return table;
}

/** Warm-up calls before a counted run: enough for the loop to be compiled as a whole function. */
const COUNT_WARM_CALLS = 10;
const COUNT_WARM_ITERATIONS = 20_000;

/** One case with one codec, `n` operations after the warm-up; prints what the loop returned. */
function countCase(caseIndex: number, which: string, n: number): void {
  const c = CASES[caseIndex];
  if (c === undefined || (which !== 'gen' && which !== 'hand') || !Number.isSafeInteger(n) || n < 0) throw new Error('usage: codec.bench.js count CASE-INDEX gen|hand N');
  const codec = which === 'gen' ? gen : handwritten;
  const dv = c.name.startsWith('read') ? prepared(c) : slab();
  const run = compiled(c, which);
  for (let k = 0; k < COUNT_WARM_CALLS; k++) run(codec, dv, COUNT_WARM_ITERATIONS, envs[which]);
  const result = run(codec, dv, n, envs[which]);
  process.stdout.write(`${JSON.stringify({ case: c.name, codec: which, n, result })}\n`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [mode, caseIndex, which, n] = process.argv.slice(2);
  if (mode === 'count') countCase(Number(caseIndex), which, Number(n));
  else process.stdout.write(await runCodecBench());
}
