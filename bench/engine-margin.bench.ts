// engineMarginMix: the engine core on a mix where a third of the accounts trade on margin, beside
// the spot mix, one thread, in the same run.
//
//   spot stream   ──► Exchange(benchConfig)          spot mix                  (the baseline)
//   spot stream   ──► Exchange(benchMarginConfig)    margin on, never used     (what having margin costs alone)
//   margin stream ──► Exchange(benchMarginConfig)    a third of the accounts borrow to trade
//        each: typed-array rows ──decodeCommand──► Command ──apply──► every record encoded into
//        1,024 × 256 B slots, as bench/engine.bench.ts does
//
//   margin stream, then probe cycles ──► Exchange(margin,   1,000 accounts)  ┐ the margin check's scale:
//   margin stream, then probe cycles ──► Exchange(margin, 100,000 accounts)  ┘ the same stream, 99,000
//                                          more funded idle accounts (1 in 10 lending, 1 in 10 borrowing)
//
// The streams (bench/engine-stream.ts) share the generator, the seed and exchange-core's mix
// (9 % GTC, 3 % IOC, 6 % cancel, 82 % move); in the margin one every third account holds little
// of one asset and orders with autoBorrow (half with autoBorrowRepay; those that lent at setup
// with autoLendRedeem, a quarter with autoLend), so its orders borrow, repay, redeem and lend.
//
// What is measured:
//   - commands/s of each of the three, median of RUNS timed runs after WARMUP, the three
//     interleaved in every round (their order rotating), each run on a fresh engine (setup
//     untimed); the ratios margin / spot and margin-unused / spot, of the medians and per round.
//     Beside wall time, commands per CPU-second (the process's user + system time over the timed
//     rows), which time spent preempted by other work on a shared machine does not inflate.
//   - the scale of the margin check: the margin stream on an engine with 1,000 accounts and on one
//     with 100,000, alternating in every round: commands/s of the whole stream; then, on the same
//     engine, PROBE_BATCHES × PROBE_CYCLES cycles of a probe account (engine-stream.ts
//     probeCycleCommands: an ask that borrows all it sells after the margin check, its cancel, the
//     repayment with its margin re-check), each batch timed, the median batch per cycle. A margin
//     check that walked accounts would cost ~100× more per cycle on the large engine; a check over
//     the account's own assets costs the same.
// Gate: no stream command refused while generating, the margin stream borrows; every variant's
// final stateHash identical in all runs; the spot stream ends in the same state with margin on
// and unused; the margin stream's hash on a prefix equals the reference model's
// (test/helpers/engine-model.ts with its pools); the 100,000-account engine writes the same trades
// and records as the 1,000-account one. Otherwise FAIL and a non-zero exit code.
//
// Run: `npx tsc -p tsconfig.json && node --expose-gc dist/bench/engine-margin.bench.js`
//      (writes its section of bench/RESULTS.md between the engine-margin markers; --no-write prints only)
// Env: ENGINE_MARGIN_BENCH_OPS (200,000 ≈ 364,000 commands), ENGINE_MARGIN_BENCH_RUNS (5),
//      ENGINE_MARGIN_BENCH_MODEL_PREFIX (2,000 commands), ENGINE_MARGIN_BENCH_ACCOUNTS (100,000).

import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SLOT_BYTES, recordType, slotFromCommand } from '../engine/bus/codec.js';
import { Exchange } from '../engine/core/exchange.js';
import { BorrowLendEvent, RecordType, type Command, type EngineConfig, type RecordSink } from '../engine/bus/types.js';
import { ModelExchange } from '../test/helpers/engine-model.js';
import { fmtRate, gc, median } from './engine.bench.js';
import { modelStateHash } from './engine-model-hash.js';
import {
  BENCH_ACCOUNTS, benchConfig, benchMarginConfig, decodeCommand, generateStream, idleAccountCommands, newStreamCommand, probeCycleCommands,
  probeSetupCommands, PROBE_LOTS, type EngineStream,
} from './engine-stream.js';
import { RefusalCount } from './slot-places.js';

const OPS = Number(process.env.ENGINE_MARGIN_BENCH_OPS ?? 200_000);
const RUNS = Number(process.env.ENGINE_MARGIN_BENCH_RUNS ?? 5);
const WARMUP = 2;
const MODEL_PREFIX = Number(process.env.ENGINE_MARGIN_BENCH_MODEL_PREFIX ?? 2_000);
const SCALE_ACCOUNTS = Number(process.env.ENGINE_MARGIN_BENCH_ACCOUNTS ?? 100_000);
const SEED = 20240601;
const SINK_SLOTS = 1024;
const PROBE_BATCHES = 200;
const PROBE_CYCLES = 50;
/** The probe account: the first after the stream's accounts, in both scale engines. */
const PROBE_ACCOUNT = BENCH_ACCOUNTS + 1;
const RESULTS = fileURLToPath(new URL('../../bench/RESULTS.md', import.meta.url));
const BEGIN = '<!-- engine-margin:begin -->';
const END = '<!-- engine-margin:end -->';

/** Takes every record into the next of SINK_SLOTS ring-slot-sized places; counts trades and borrow/lend moves. */
class EncodingSink implements RecordSink {
  readonly view = new DataView(new ArrayBuffer(SLOT_BYTES * SINK_SLOTS));
  private off = 0;
  records = 0;
  trades = 0;
  moves = 0;

  claim(): number {
    const off = this.off;
    this.off = (off + SLOT_BYTES) % (SLOT_BYTES * SINK_SLOTS);
    this.records++;
    return off;
  }
  written(at: number): void {
    const type = recordType(this.view, at);
    if (type === RecordType.Trade) this.trades++;
    else if (type === RecordType.BorrowLend) this.moves++;
  }
}

/** One engine variant: its configuration, the stream it replays, extra setup after the stream's, and its probe account (0: none). */
interface Variant {
  name: string;
  config: EngineConfig;
  stream: EngineStream;
  extraSetup: Command[];
  probe: number;
}

interface Run {
  seconds: number;
  /** CPU time of the process over the timed rows (user + system): what preemption by other work on the machine does not inflate. */
  cpuSeconds: number;
  hash: string;
  trades: number;
  records: number;
  moves: number;
  /** Probe runs: ns per cycle (the median batch), and the cycle commands refused. */
  cycleNs: number;
  cycleRefused: number;
  /** Commands of the variant's extra setup (idle accounts, the probe) refused: none may be. */
  setupRefused: number;
}

/** PROBE_BATCHES batches of PROBE_CYCLES probe cycles from `seq`; ns per cycle of the median batch, and the refusals. */
function probeCycles(ex: Exchange, accountId: number, seq: number): { cycleNs: number; cycleRefused: number } {
  const cycle = probeCycleCommands(accountId);
  const sink = new RefusalCount();
  const batches: number[] = [];
  for (let b = 0; b < PROBE_BATCHES; b++) {
    const t0 = process.hrtime.bigint();
    for (let n = 0; n < PROBE_CYCLES; n++) {
      for (const c of cycle) { seq++; ex.apply(c, seq, seq, sink); }
    }
    batches.push(Number(process.hrtime.bigint() - t0) / PROBE_CYCLES);
  }
  return { cycleNs: median(batches), cycleRefused: sink.refused };
}

/** A fresh engine with the variant's setup (untimed), its stream's rows timed, then its probe cycles. */
function runOnce(v: Variant): Run {
  const sink = new EncodingSink();
  const ex = new Exchange(v.config);
  let seq = 0;
  for (const c of v.stream.setup) { seq++; ex.apply(c, seq, seq, sink); }
  const setupSink = new RefusalCount();
  for (const c of v.extraSetup) { seq++; ex.apply(c, seq, seq, setupSink); }
  const before = { trades: sink.trades, records: sink.records, moves: sink.moves };
  const s = v.stream;
  const cmd = newStreamCommand();
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < s.count; i++) {
    decodeCommand(s, i, cmd);
    seq++;
    ex.apply(cmd, seq, seq, sink);
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  const counts = { trades: sink.trades - before.trades, records: sink.records - before.records, moves: sink.moves - before.moves };
  const probe = v.probe > 0 ? probeCycles(ex, v.probe, seq) : { cycleNs: 0, cycleRefused: 0 };
  return { seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, hash: ex.stateHash(), ...counts, ...probe, setupRefused: setupSink.refused };
}

/** WARMUP + RUNS rounds, every variant once per round in an order rotating by round; the timed runs by variant. */
function interleaved(variants: Variant[], log: (line: string) => void): Run[][] {
  const runs: Run[][] = variants.map(() => []);
  for (let r = 0; r < WARMUP + RUNS; r++) {
    for (let j = 0; j < variants.length; j++) {
      const at = (r + j) % variants.length;
      gc();
      const run = runOnce(variants[at]);
      if (r >= WARMUP) runs[at].push(run);
      log(`${variants[at].name} ${r + 1}/${WARMUP + RUNS}${r < WARMUP ? ' (warm-up)' : ''}: ${fmtRate(variants[at].stream.count / run.seconds)} cmds/s` +
        (variants[at].probe > 0 ? `, probe cycle ${run.cycleNs.toFixed(0)} ns` : ''));
    }
  }
  return runs;
}

/** Engine and reference model on the margin stream's setup and first `rows` commands. */
function modelGate(config: EngineConfig, stream: EngineStream, rows: number): { engine: string; model: string } {
  const sink = new EncodingSink();
  const ex = new Exchange(config);
  const model = new ModelExchange(config);
  let seq = 0;
  for (const c of stream.setup) { seq++; ex.apply(c, seq, seq, sink); model.apply(slotFromCommand(c), seq, seq); }
  const cmd = newStreamCommand();
  for (let i = 0; i < rows; i++) {
    decodeCommand(stream, i, cmd);
    seq++;
    ex.apply(cmd, seq, seq, sink);
    model.apply(slotFromCommand(cmd), seq, seq);
  }
  return { engine: ex.stateHash(), model: modelStateHash(model) };
}

const rates = (v: Variant, runs: Run[]) => runs.map((r) => v.stream.count / r.seconds);
const cpuRates = (v: Variant, runs: Run[]) => runs.map((r) => v.stream.count / r.cpuSeconds);
const span = (xs: number[]) => `${fmtRate(Math.min(...xs))}–${fmtRate(Math.max(...xs))}`;
/** Median of the per-round ratios a[i] / b[i] (rates of the same round). */
const roundRatio = (a: number[], b: number[]) => median(a.map((x, i) => x / b[i]));

/** Every variant's hash the same in all its runs; the failures otherwise. */
function sameHashes(variants: Variant[], runs: Run[][], failures: string[]): void {
  variants.forEach((v, i) => {
    const hashes = new Set(runs[i].map((r) => r.hash));
    if (hashes.size !== 1) failures.push(`${v.name}: final stateHash differs between runs`);
    if (runs[i].some((r) => r.trades !== v.stream.trades)) failures.push(`${v.name}: trade count differs from generation (${v.stream.trades})`);
  });
}

function streamChecks(spot: EngineStream, margin: EngineStream, failures: string[]): void {
  if (spot.rejected !== 0 || margin.rejected !== 0) failures.push(`stream commands refused while generating: spot ${spot.rejected}, margin ${margin.rejected}`);
  if (margin.marginMoves[BorrowLendEvent.Borrow] === 0) failures.push('the margin stream never borrows');
}

interface MixResult { variants: Variant[]; runs: Run[][]; gate: { engine: string; model: string }; prefix: number }

function measureMixes(spot: EngineStream, margin: EngineStream, failures: string[], log: (line: string) => void): MixResult {
  const prefix = Math.min(MODEL_PREFIX, margin.count);
  const gate = modelGate(benchMarginConfig(), margin, prefix);
  log(`model gate on ${prefix} margin commands: ${gate.engine === gate.model ? 'equal' : 'DIFFERENT'}`);
  if (gate.engine !== gate.model) failures.push(`margin stateHash after ${prefix} commands: engine ${gate.engine} ≠ model ${gate.model}`);
  const variants: Variant[] = [
    { name: 'spot', config: benchConfig(), stream: spot, extraSetup: [], probe: 0 },
    { name: 'spot, margin on and unused', config: benchMarginConfig(), stream: spot, extraSetup: [], probe: 0 },
    { name: 'margin mix', config: benchMarginConfig(), stream: margin, extraSetup: [], probe: 0 },
  ];
  const runs = interleaved(variants, log);
  sameHashes(variants, runs, failures);
  if (runs[0][0].hash !== runs[1][0].hash) failures.push('the spot stream ends in another state with margin on and unused');
  if (runs[2][0].moves === 0) failures.push('the margin mix wrote no borrow/lend record when replayed');
  return { variants, runs, gate, prefix };
}

function measureScale(margin: EngineStream, failures: string[], log: (line: string) => void): { variants: Variant[]; runs: Run[][]; setupCommands: number } {
  const t = performance.now();
  const probe = probeSetupCommands(PROBE_ACCOUNT);
  const idle = [...probe, ...idleAccountCommands(PROBE_ACCOUNT + 1, SCALE_ACCOUNTS)];
  log(`built ${idle.length.toLocaleString('en-US')} setup commands for ${(SCALE_ACCOUNTS - BENCH_ACCOUNTS).toLocaleString('en-US')} more accounts in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const variants: Variant[] = [
    { name: `${BENCH_ACCOUNTS.toLocaleString('en-US')} accounts`, config: benchMarginConfig({ maxAccounts: PROBE_ACCOUNT }), stream: margin, extraSetup: probe, probe: PROBE_ACCOUNT },
    { name: `${SCALE_ACCOUNTS.toLocaleString('en-US')} accounts`, config: benchMarginConfig({ maxAccounts: SCALE_ACCOUNTS }), stream: margin, extraSetup: idle, probe: PROBE_ACCOUNT },
  ];
  const runs = interleaved(variants, log);
  sameHashes(variants, runs, failures);
  if (runs.some((byRun) => byRun.some((r) => r.cycleRefused > 0))) failures.push('a probe cycle command was refused');
  if (runs.some((byRun) => byRun.some((r) => r.setupRefused > 0))) failures.push('an idle account\'s setup command was refused (unfunded accounts would not load the check)');
  const [small, large] = [runs[0][0], runs[1][0]];
  if (small.records !== large.records || small.moves !== large.moves) {
    failures.push(`the margin stream writes other records with ${SCALE_ACCOUNTS} accounts (${large.records} against ${small.records}, moves ${large.moves} against ${small.moves})`);
  }
  return { variants, runs, setupCommands: idle.length };
}

function mixLines(spot: EngineStream, margin: EngineStream, mix: MixResult): string[] {
  const wall = mix.variants.map((v, i) => rates(v, mix.runs[i]));
  const cpu = mix.variants.map((v, i) => cpuRates(v, mix.runs[i]));
  const moves = margin.marginMoves;
  const vs = (xs: number[], base: number[]) => `${(median(xs) / median(base)).toFixed(3)} (${roundRatio(xs, base).toFixed(3)})`;
  const row = (name: string, i: number) => `| ${name} | ${fmtRate(median(wall[i]))} (${span(wall[i])}) | ${fmtRate(median(cpu[i]))} | ` +
    (i === 0 ? '1 | 1 |' : `${vs(wall[i], wall[0])} | **${vs(cpu[i], cpu[0])}** |`);
  return [
    `Engine core alone, one thread, ${spot.count.toLocaleString('en-US')} spot and ${margin.count.toLocaleString('en-US')} margin commands ` +
      `(${spot.ops.toLocaleString('en-US')} operations each, exchange-core's mix, seed ${SEED}), every record encoded into 256-byte slots. ` +
      `Median of ${RUNS} runs after ${WARMUP} warm-ups, the three interleaved in every round. Commands per CPU-second divide by the process's ` +
      'CPU time over the timed rows, which time spent preempted on a shared machine does not inflate; ratios: of the medians (median of per-round ratios).',
    '',
    '| Engine and stream | commands/s, wall (range) | commands per CPU-second | against spot, wall | against spot, CPU |',
    '|---|---|---|---|---|',
    row('spot mix, margin off', 0),
    row('spot mix, margin on and unused (pools, collateral, an index price)', 1),
    row('margin mix: a third of the accounts on margin', 2),
    '',
    `- Margin mix: ${margin.marginPlaces.toLocaleString('en-US')} places by margin accounts, ${margin.borrowingCommands.toLocaleString('en-US')} of them borrowed ` +
      `(${(100 * margin.borrowingCommands / margin.count).toFixed(1)} % of all commands); borrow/lend records: ${moves[BorrowLendEvent.Borrow]} borrow, ` +
      `${moves[BorrowLendEvent.BorrowRepay]} repay, ${moves[BorrowLendEvent.LendRedeem]} redeem, ${moves[BorrowLendEvent.Lend]} lend; ` +
      `${margin.trades.toLocaleString('en-US')} trades (spot ${spot.trades.toLocaleString('en-US')}).`,
    `- Gate: no command refused in either stream; each variant's final stateHash identical in all runs; the spot stream's equal with margin on and off ` +
      `(${mix.runs[0][0].hash.slice(0, 12)}…); the margin stream on its first ${mix.prefix.toLocaleString('en-US')} commands engine ${mix.gate.engine.slice(0, 12)}… vs ` +
      `reference model ${mix.gate.model.slice(0, 12)}… (${mix.gate.engine === mix.gate.model ? 'equal' : 'DIFFERENT'}).`,
  ];
}

function scaleLines(scale: { variants: Variant[]; runs: Run[][]; setupCommands: number }): string[] {
  const [smallRates, largeRates] = scale.variants.map((v, i) => rates(v, scale.runs[i]));
  const [smallCpu, largeCpu] = scale.variants.map((v, i) => cpuRates(v, scale.runs[i]));
  const [smallNs, largeNs] = scale.runs.map((runs) => runs.map((r) => r.cycleNs));
  const ratio = (large: number[], small: number[]) => `${(median(large) / median(small)).toFixed(3)} (${roundRatio(large, small).toFixed(3)})`;
  return [
    '',
    `The margin check's scale: the same margin stream on an engine with ${BENCH_ACCOUNTS.toLocaleString('en-US')} trading accounts and on one with ` +
      `${SCALE_ACCOUNTS.toLocaleString('en-US')} (${scale.setupCommands.toLocaleString('en-US')} more setup commands: idle accounts funded with both assets, ` +
      '1 in 10 lending both, 1 in 10 borrowing SOL), alternating in every round. After the stream, on the same engine, a probe account holding USDC and no SOL ' +
      `runs ${PROBE_BATCHES} × ${PROBE_CYCLES} cycles of three commands: an ask of ${PROBE_LOTS} lots far above the book with autoBorrow (borrows all ${PROBE_LOTS} after the ` +
      'margin check), its cancel, and the repayment (BorrowLend, which values the account again); ns per cycle of the median batch.',
    '',
    `| Measure | ${scale.variants[0].name} | ${scale.variants[1].name} | ratio large / small (median of per-round ratios) |`,
    '|---|---|---|---|',
    `| commands/s, whole margin stream, wall | ${fmtRate(median(smallRates))} | ${fmtRate(median(largeRates))} | ${ratio(largeRates, smallRates)} |`,
    `| commands per CPU-second, whole margin stream | ${fmtRate(median(smallCpu))} | ${fmtRate(median(largeCpu))} | ${ratio(largeCpu, smallCpu)} |`,
    `| probe cycle (borrowing place, cancel, repayment), ns | ${median(smallNs).toFixed(0)} | ${median(largeNs).toFixed(0)} | **${ratio(largeNs, smallNs)}** |`,
    '',
    '- Gate: both engines write the same records and borrow/lend moves over the stream; no probe command refused; each engine\'s final stateHash identical in all runs.',
  ];
}

export async function runEngineMarginBench(): Promise<string> {
  const log = (line: string) => process.stderr.write(`engine margin bench: ${line}\n`);
  const failures: string[] = [];
  let t = performance.now();
  const spot = generateStream(SEED, OPS, benchConfig());
  const margin = generateStream(SEED, OPS, benchMarginConfig(), 'margin');
  log(`generated ${spot.count.toLocaleString('en-US')} spot and ${margin.count.toLocaleString('en-US')} margin commands in ${((performance.now() - t) / 1000).toFixed(1)} s; ` +
    `${margin.borrowingCommands} borrowing places`);
  streamChecks(spot, margin, failures);
  const mix = measureMixes(spot, margin, failures, log);
  t = performance.now();
  const scale = measureScale(margin, failures, log);
  log(`scale runs in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const lines = [...mixLines(spot, margin, mix), ...scaleLines(scale), ''];
  if (failures.length > 0) {
    lines.push(`**FAIL**: ${failures.join('; ')}`, '');
    process.exitCode = 1;
  } else {
    lines.push('Result: PASS (state hashes agree).', '');
  }
  return lines.join('\n');
}

/** Replaces the section between the markers (or appends it with its heading). */
function writeSection(body: string, machine: string): void {
  const env = Object.entries(process.env).filter(([name]) => name.startsWith('ENGINE_MARGIN_BENCH_')).map(([name, value]) => `${name}=${value} `).join('');
  const section = `${BEGIN}\n\nMeasured ${new Date().toISOString().slice(0, 10)} (${machine}) with ` +
    `\`npx tsc -p tsconfig.json && ${env}node --expose-gc dist/bench/engine-margin.bench.js\`.\n\n${body.trim()}\n\n${END}`;
  let text = readFileSync(RESULTS, 'utf8');
  const begin = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (begin >= 0 && end > begin) text = text.slice(0, begin) + section + text.slice(end + END.length);
  else text = `${text.trimEnd()}\n\n## Engine core on a margin mix against the spot mix (bench/engine-margin.bench.ts)\n\n${section}\n`;
  writeFileSync(RESULTS, text);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}, load average ${loadavg()[0].toFixed(2)} at start`;
  const body = await runEngineMarginBench();
  console.log(body);
  if (!process.argv.includes('--no-write')) writeSection(body, machine);
}
