// enginePerpMix: the engine core on a perpetual book beside the spot mix, one thread, in the same
// run; and the cost of one mark price tick with 100,000 accounts holding positions against 1,000.
//
//   spot stream ──► Exchange(benchConfig)              the spot mix on SOL_USDC (the baseline)
//   same stream ──► Exchange(perp configuration)       the same orders on SOL_USDC_PERP: margined
//        accounts (USDC and SOL collateral, 10× leverage, SOL's index set), positions from the
//        first fills on, every order admitted by the margin check and settled into positions
//   each: decodeCommand ──► Command ──apply──► every record encoded into 1,024 × 256 B slots
//
//   one mark tick = SetIndexPrice of the underlying + a Tick one second on (the MarkSample timer's
//   sampleMarks, and the funding timer when an interval ends), on an engine whose accounts all hold
//   a position (1,000 vs 100,000 accounts, opposite positions in pairs), alternating every round;
//   and at 100,000 the same ticks with the liquidation trigger index off (margin/trigger-index.ts
//   TRIGGER_SWITCH.fullWalk: every holder re-checked), the cost the index saves.
//
// Measured: commands per CPU-second (process user + system time over the timed rows) and per wall
// second of each mix, median of RUNS after WARMUP, interleaved; the ratio perp / spot of the
// medians. Ticks: the median per-tick CPU time over TICKS ticks, the ratio large / small.
// Gate: every run of a mix ends in the same state hash; the perp stream makes positions (trades on
// the perpetual); the two tick engines write the same mark records. Otherwise FAIL, exit code 1.
//
// Run: `npx tsc -p tsconfig.json && node --expose-gc dist/bench/engine-perp.bench.js`
// Env: ENGINE_PERP_BENCH_OPS (100,000), ENGINE_PERP_BENCH_RUNS (5), ENGINE_PERP_BENCH_ACCOUNTS (100,000),
//      ENGINE_PERP_BENCH_TICKS (300).

import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { SLOT_BYTES, decodeRecord, recordType } from '../engine/bus/codec.js';
import { Exchange } from '../engine/core/exchange.js';
import { RecordType, ResultCode, type Command, type EngineConfig, type RecordSink } from '../engine/bus/types.js';
import { TRIGGER_SWITCH } from '../engine/core/margin/trigger-index.js';
import { cmd } from '../test/helpers/engine-harness.js';
import { fmtRate, gc, median } from './engine.bench.js';
import {
  BASE_ASSET, BENCH_ACCOUNTS, INDEX_PRICE_E9, QUOTE_ASSET, benchConfig, decodeCommand, generateStream, newStreamCommand, type EngineStream,
} from './engine-stream.js';
import { benchCommand as command, perpBenchConfig, positionHolderCommands } from './perp-holders.js';

const OPS = Number(process.env.ENGINE_PERP_BENCH_OPS ?? 100_000);
const RUNS = Number(process.env.ENGINE_PERP_BENCH_RUNS ?? 5);
const SCALE_ACCOUNTS = Number(process.env.ENGINE_PERP_BENCH_ACCOUNTS ?? 100_000);
const TICKS = Number(process.env.ENGINE_PERP_BENCH_TICKS ?? 300);
const WARMUP = 2;
const SEED = 20240601;
const SINK_SLOTS = 1024;
const SECOND_US = 1_000_000;

class EncodingSink implements RecordSink {
  readonly view = new DataView(new ArrayBuffer(SLOT_BYTES * SINK_SLOTS));
  private next = 0;
  trades = 0;
  marks = 0;
  /** Results refusing a command (counted only on the runs that ask for it). */
  refused = 0;
  readonly refusedBy = new Map<string, number>();
  countRefusals = false;
  claim(): number {
    const offset = this.next * SLOT_BYTES;
    this.next = (this.next + 1) % SINK_SLOTS;
    return offset;
  }
  written(offset: number): void {
    const type = recordType(this.view, offset);
    if (type === RecordType.Trade) this.trades++;
    else if (type === RecordType.MarkPrice) this.marks++;
    else if (this.countRefusals && type === RecordType.Result) {
      const r = decodeRecord(this.view, offset);
      if (r.type === RecordType.Result && r.code !== ResultCode.Ok) {
        this.refused++;
        this.refusedBy.set(ResultCode[r.code], (this.refusedBy.get(ResultCode[r.code]) ?? 0) + 1);
      }
    }
  }
}

/** The perpetual's setup: SOL's index, then each account's leverage limit at 10× and a USDC margin of 10^6 USDC. */
function perpSetup(first: number, last: number): Command[] {
  const out = [command(cmd.setIndexPrice(BASE_ASSET, INDEX_PRICE_E9))];
  for (let a = first; a <= last; a++) {
    out.push(command(cmd.updateAccountSettings(a, { leverageLimitHundredths: 1_000 })));
    out.push(command(cmd.deposit(a, QUOTE_ASSET, 1_000_000_000_000)));
  }
  return out;
}

interface Timed { cpuS: number; wallS: number; hash: string; trades: number; refused: number; refusedBy?: Map<string, number> }

function runStream(config: EngineConfig, s: EngineStream, extraSetup: Command[], countRefusals = false): Timed {
  const ex = new Exchange(config);
  const sink = new EncodingSink();
  sink.countRefusals = countRefusals;
  let seq = 0;
  // The underlying's index before the stream's setup: its first resting orders need a mark (a
  // refused one would shift the order numbers every later cancel names).
  if (extraSetup.length > 0) ex.apply(extraSetup[0], ++seq, seq, sink);
  for (const c of s.setup) ex.apply(c, ++seq, seq, sink);
  for (const c of extraSetup.slice(1)) ex.apply(c, ++seq, seq, sink);
  const c = newStreamCommand();
  gc();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < s.count; i++) {
    decodeCommand(s, i, c);
    ex.apply(c, ++seq, seq, sink);
  }
  const wallS = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { cpuS: (cpu.user + cpu.system) / 1e6, wallS, hash: ex.stateHash(), trades: sink.trades, refused: sink.refused, refusedBy: sink.refusedBy };
}

/** An engine whose `accounts` accounts all hold a position (perp-holders.ts); throws on a refused setup command. */
function tickEngine(accounts: number): { ex: Exchange; sink: EncodingSink; seq: number; timeUs: number } {
  const ex = new Exchange(perpBenchConfig(accounts));
  const sink = new EncodingSink();
  sink.countRefusals = true;
  let seq = 0;
  for (const c of positionHolderCommands(accounts)) ex.apply(c, ++seq, seq, sink);
  if (sink.refused > 0) throw new Error(`${sink.refused} position holder setup commands refused at ${accounts} accounts: ${[...sink.refusedBy].join(', ')}`);
  sink.countRefusals = false;
  return { ex, sink, seq, timeUs: seq };
}

/** `count` mark ticks (an index move, then the next second's sample); returns the CPU µs of each. */
function ticks(e: ReturnType<typeof tickEngine>, count: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const price = INDEX_PRICE_E9 + ((i % 20) - 10) * 10_000_000;
    const cpu0 = process.cpuUsage();
    e.timeUs += SECOND_US;
    e.ex.apply(command(cmd.setIndexPrice(BASE_ASSET, price)), ++e.seq, e.timeUs, e.sink);
    e.ex.apply(command(cmd.tick()), ++e.seq, e.timeUs + SECOND_US / 2, e.sink);
    const cpu = process.cpuUsage(cpu0);
    out.push(cpu.user + cpu.system);
  }
  return out;
}

function main(): void {
  const failures: string[] = [];
  const stream = generateStream(SEED, OPS, benchConfig());
  const setup = perpSetup(1, BENCH_ACCOUNTS);
  const spot: Timed[] = [];
  const perp: Timed[] = [];
  for (let round = 0; round < WARMUP + RUNS; round++) {
    const pair = round % 2 === 0
      ? [runStream(benchConfig(), stream, []), runStream(perpBenchConfig(), stream, setup)]
      : [runStream(perpBenchConfig(), stream, setup), runStream(benchConfig(), stream, [])].reverse();
    if (round < WARMUP) continue;
    spot.push(pair[0]);
    perp.push(pair[1]);
  }
  for (const [name, runs] of [['spot', spot], ['perp', perp]] as const) {
    if (new Set(runs.map((r) => r.hash)).size !== 1) failures.push(`${name}: state hashes differ between runs`);
  }
  if (perp[0].trades === 0) failures.push('perp: no trade on the perpetual');
  // Untimed: how many stream commands each mix refuses (the perpetual's margin check among them).
  const perpRefusals = runStream(perpBenchConfig(), stream, setup, true);
  const refused = { spot: runStream(benchConfig(), stream, [], true).refused, perp: perpRefusals.refused, perpBy: JSON.stringify([...perpRefusals.refusedBy!]) };
  const rate = (runs: Timed[], by: 'cpuS' | 'wallS') => median(runs.map((r) => stream.count / r[by]));

  const small = tickEngine(BENCH_ACCOUNTS);
  const large = tickEngine(SCALE_ACCOUNTS);
  ticks(small, 50);
  ticks(large, 50);
  const smallUs: number[] = [];
  const largeUs: number[] = [];
  const walkUs: number[] = [];
  const WALK_TICKS = Math.max(3, Math.floor(TICKS / 30));
  let indexedRechecks = 0;
  for (let round = 0; round < RUNS; round++) {
    smallUs.push(median(ticks(small, TICKS)));
    TRIGGER_SWITCH.rechecks = 0;
    largeUs.push(median(ticks(large, TICKS)));
    indexedRechecks += TRIGGER_SWITCH.rechecks;
    // The same ticks with the trigger index switched off: every holder re-checked at each tick.
    // (the small engine takes as many, so the two still write the same mark records)
    TRIGGER_SWITCH.fullWalk = true;
    walkUs.push(median(ticks(large, WALK_TICKS)));
    ticks(small, WALK_TICKS);
    TRIGGER_SWITCH.fullWalk = false;
  }
  if (small.sink.marks === 0 || small.sink.marks !== large.sink.marks) failures.push(`ticks: mark records ${small.sink.marks} vs ${large.sink.marks}`);

  console.log(`engine-perp: ${cpus().length} × ${cpus()[0]?.model ?? '?'}, Node ${process.version}, load average ${loadavg()[0].toFixed(2)} at end`);
  console.log(`${stream.count} commands (${OPS} operations, seed ${SEED}), median of ${RUNS} after ${WARMUP} warm-ups, interleaved`);
  console.log(`spot mix:  ${fmtRate(rate(spot, 'wallS'))} cmds/s wall, ${fmtRate(rate(spot, 'cpuS'))} per CPU-s; ${spot[0].trades} trades`);
  console.log(`perp mix:  ${fmtRate(rate(perp, 'wallS'))} cmds/s wall, ${fmtRate(rate(perp, 'cpuS'))} per CPU-s; ${perp[0].trades} trades`);
  console.log(`refused stream commands: spot ${refused.spot}, perp ${refused.perp} ${refused.perpBy} (untimed count)`);
  console.log(`perp / spot per CPU-second: ${(rate(perp, 'cpuS') / rate(spot, 'cpuS')).toFixed(3)}`);
  console.log(`mark tick (SetIndexPrice + sampleMarks), median CPU per tick: ${median(smallUs).toFixed(1)} µs with ${BENCH_ACCOUNTS} accounts in positions, ${median(largeUs).toFixed(1)} µs with ${SCALE_ACCOUNTS}; ratio ${(median(largeUs) / median(smallUs)).toFixed(3)}`);
  console.log(`mark tick with ${SCALE_ACCOUNTS} accounts, every holder re-checked (the trigger index off): ${median(walkUs).toFixed(1)} µs; indexed / full walk ${(median(largeUs) / median(walkUs)).toFixed(4)}; re-checks per indexed tick ${(indexedRechecks / (RUNS * TICKS)).toFixed(2)}`);
  if (failures.length > 0) {
    console.log(`FAIL: ${failures.join('; ')}`);
    process.exitCode = 1;
  }
}

main();
