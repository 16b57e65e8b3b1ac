// liquidationTrigger: what a SetIndexPrice costs the liquidation trigger (engine/core/margin/
// liquidating.ts, trigger-index.ts), the full walk over every borrower against the trigger index,
// in the same run, one thread, on bench/engine-stream.ts's margin config (SOL with a 0.5 haircut,
// IMF 0.2 and MMF 0.1 on its borrows; USDC IMF 0.1, MMF 0.05).
//
//   (a) quiet move: an engine with B borrowers (1,000, then 100,000), each holding 100 units of SOL
//       it deposited and what it bought with a USDC borrow of 10–60 % of that SOL's value (at
//       most 82 % of what its margin allows), then index moves of ±0.5 % that liquidate nobody:
//       the engine time (CPU) of one SetIndexPrice apply, median over the moves, the full walk and
//       the index alternating in rounds on the same engine (the index's first move, which draws
//       every band, is untimed and reported apart).
//   (b) cascade: 10,000 such borrowers, each at 60 %, and one SetIndexPrice to 75 % of the price
//       that pushes all of them over the line; then Ticks one step interval of engine time apart
//       (the LiquidationStep timer) until no account is liquidating. The waterfall sells their
//       SOL into a market maker's deep bid and repays. CPU of the move and of all the steps, median
//       of RUNS runs per mode, each on a fresh engine (setup untimed).
// Gate: both modes end every run with the same state hash (the index changes nothing); the quiet
// moves liquidate nobody; the cascade flips every one of the 10,000 and ends with none liquidating.
//
// Run: `npm run bench:liquidation-trigger` (= npx tsc -p tsconfig.json && node --expose-gc
//      dist/bench/liquidation-trigger.bench.js); writes its section of bench/RESULTS.md between the
//      liquidation-trigger markers (--no-write prints only).
// Env: LIQ_TRIGGER_BENCH_RUNS (3), LIQ_TRIGGER_BENCH_BORROWERS (100,000), LIQ_TRIGGER_BENCH_CASCADE (10,000).

import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { commandFromSlot, decodeRecord, SLOT_BYTES } from '../engine/bus/codec.js';
import { AccountSettingFlag, CommandKind, newCommandSlot, OrderType, RecordType, ResultCode, Side, type CommandSlot, type RecordSink } from '../engine/bus/types.js';
import { Exchange } from '../engine/core/exchange.js';
import { TRIGGER_SWITCH } from '../engine/core/margin/trigger-index.js';
import type { EngineState } from '../engine/core/state.js';
import { cmd } from '../test/helpers/engine-harness.js';
import { median } from './engine.bench.js';
import { BASE_ASSET, BENCH_MARKET_ID, benchMarginConfig, INDEX_PRICE_E9, QUOTE_ASSET, START_PRICE } from './engine-stream.js';

const RUNS = Number(process.env.LIQ_TRIGGER_BENCH_RUNS ?? 3);
const BORROWERS = Number(process.env.LIQ_TRIGGER_BENCH_BORROWERS ?? 100_000);
const CASCADE = Number(process.env.LIQ_TRIGGER_BENCH_CASCADE ?? 10_000);
const HELD_UNITS = 100;
const STEP_US = 1_000_000;
const RESULTS = fileURLToPath(new URL('../../bench/RESULTS.md', import.meta.url));
const BEGIN = '<!-- liquidation-trigger:begin -->';
const END = '<!-- liquidation-trigger:end -->';

/** Counts records; remembers the last result code and how many accounts flipped into the state. */
class CountingSink implements RecordSink {
  readonly view = new DataView(new ArrayBuffer(SLOT_BYTES));
  code = ResultCode.Ok;
  entered = 0;
  claim(): number {
    return 0;
  }
  written(offset: number): void {
    const record = decodeRecord(this.view, offset);
    if (record.type === RecordType.Result) this.code = record.code;
    if (record.type === RecordType.AccountSettings && record.frontId === 0xffff && (record.settings & AccountSettingFlag.Liquidating) !== 0) this.entered++;
  }
}

class Engine {
  readonly exchange: Exchange;
  readonly sink = new CountingSink();
  private seq = 0;
  private requestId = 0;
  timeUs = 1_000_000_000;

  constructor(accounts: number) {
    const config = benchMarginConfig({ maxAccounts: accounts + 10, maxOrdersPerBook: 64 });
    config.liquidation = { stepIntervalUs: STEP_US, chunkBps: 5_000, feeBps: 100 };
    this.exchange = new Exchange(config);
  }

  get state(): EngineState {
    return (this.exchange as unknown as { s: EngineState }).s;
  }

  apply(fields: Partial<CommandSlot>): ResultCode {
    const command: CommandSlot = { ...newCommandSlot(), frontId: 1, requestId: ++this.requestId, ...fields };
    this.exchange.apply(commandFromSlot(command), ++this.seq, this.timeUs, this.sink);
    return this.sink.code;
  }

  must(fields: Partial<CommandSlot>): void {
    const code = this.apply(fields);
    if (code !== ResultCode.Ok) throw new Error(`setup command ${CommandKind[fields.kind!]} of account ${fields.accountId} (${fields.amountUnits}) refused: ${ResultCode[code]}`);
  }

  liquidatingCount(): number {
    const flags = this.state.accountSettings.flags;
    let n = 0;
    for (let id = 1; id <= this.state.accounts.count; id++) if ((flags[id] & AccountSettingFlag.Liquidating) !== 0) n++;
    return n;
  }
}

const place = (accountId: number, side: Side, priceTicks: number, qtyLots: number): Partial<CommandSlot> =>
  ({ kind: CommandKind.PlaceOrder, accountId, marketId: BENCH_MARKET_ID, side, priceTicks, qtyLots, orderType: OrderType.Limit });

/**
 * An engine with a lender (account 1), a market maker (2: asks at the start price, a deep bid at
 * 79 % of it) and `borrowers` borrowers (3, 4, …) whose USDC borrow is `fraction(i)` of their
 * SOL's value, spent on SOL at the start price (leverage limit 10×).
 */
function build(borrowers: number, fraction: (i: number) => number): Engine {
  const e = new Engine(borrowers + 2);
  for (let seed = 1; seed <= borrowers + 2; seed++) e.must({ kind: CommandKind.CreateAccount, key: keyOf(seed) });
  e.must({ kind: CommandKind.SetIndexPrice, assetId: BASE_ASSET, priceTicks: INDEX_PRICE_E9, amountUnits: 1 });
  e.must({ kind: CommandKind.Deposit, accountId: 1, assetId: QUOTE_ASSET, amountUnits: 1e12 });
  e.must({ kind: CommandKind.BorrowLend, accountId: 1, assetId: QUOTE_ASSET, side: 1, amountUnits: 1e12 });
  e.must({ kind: CommandKind.Deposit, accountId: 2, assetId: BASE_ASSET, amountUnits: 8e6 });
  e.must({ kind: CommandKind.Deposit, accountId: 2, assetId: QUOTE_ASSET, amountUnits: 2e12 });
  for (let k = 0; k < 8; k++) e.must(place(2, Side.Ask, START_PRICE, 1_000_000));
  e.must(place(2, Side.Bid, Math.floor(START_PRICE * 0.79), 1_000_000));
  e.must(place(2, Side.Bid, Math.floor(START_PRICE * 0.79), 1_000_000));
  for (let i = 0; i < borrowers; i++) {
    const accountId = i + 3;
    const borrow = Math.floor(fraction(i) * HELD_UNITS * START_PRICE);
    e.must({ kind: CommandKind.Deposit, accountId, assetId: BASE_ASSET, amountUnits: HELD_UNITS });
    e.must(cmd.updateAccountSettings(accountId, { leverageLimitHundredths: 1_000 }));
    e.must({ kind: CommandKind.BorrowLend, accountId, assetId: QUOTE_ASSET, side: 0, amountUnits: borrow });
    e.must({ ...place(accountId, Side.Bid, 0, 0), orderType: OrderType.Market, quoteQtyUnits: borrow });
  }
  return e;
}

function keyOf(seed: number): Uint8Array {
  const key = new Uint8Array(32);
  new DataView(key.buffer).setUint32(0, seed);
  key[31] = 0x5a;
  return key;
}

function cpuMicros(fn: () => void): number {
  const before = process.cpuUsage();
  fn();
  const used = process.cpuUsage(before);
  return used.user + used.system;
}

interface QuietResult { borrowers: number; walkUs: number; indexUs: number; firstIndexUs: number; indexRechecks: number; walkRechecks: number }

/** (a): moves of ±0.5 % that liquidate nobody, the full walk and the index alternating in rounds. */
function quiet(borrowers: number): QuietResult {
  const e = build(borrowers, (i) => 0.1 + 0.5 * (((i * 7919) % 1000) / 1000));
  let up = true;
  const move = (): number => {
    up = !up;
    e.timeUs += 1;
    return cpuMicros(() => e.apply({ kind: CommandKind.SetIndexPrice, assetId: BASE_ASSET, priceTicks: Math.round(INDEX_PRICE_E9 * (up ? 1.005 : 0.995)), amountUnits: 1 }));
  };
  TRIGGER_SWITCH.fullWalk = false;
  const firstIndexUs = move();
  const walk: number[] = [];
  const index: number[] = [];
  let walkRechecks = 0;
  let indexRechecks = 0;
  const rounds = borrowers > 10_000 ? 3 : 10;
  for (let round = 0; round < rounds; round++) {
    TRIGGER_SWITCH.fullWalk = true;
    TRIGGER_SWITCH.rechecks = 0;
    for (let k = 0; k < 2; k++) walk.push(move());
    walkRechecks = TRIGGER_SWITCH.rechecks / 2;
    TRIGGER_SWITCH.fullWalk = false;
    TRIGGER_SWITCH.rechecks = 0;
    for (let k = 0; k < 20; k++) index.push(move());
    indexRechecks = TRIGGER_SWITCH.rechecks / 20;
  }
  if (e.sink.entered !== 0) throw new Error(`FAIL: a quiet move liquidated ${e.sink.entered} accounts`);
  return { borrowers, walkUs: median(walk), indexUs: median(index), firstIndexUs, indexRechecks, walkRechecks };
}

interface CascadeRun { moveUs: number; stepsUs: number; steps: number; entered: number; hash: string }

/** (b): one move pushes every borrower over the line; Ticks drive the waterfall to its end. */
function cascade(fullWalk: boolean): CascadeRun {
  const e = build(CASCADE, () => 0.6);
  TRIGGER_SWITCH.fullWalk = fullWalk;
  e.timeUs += 1;
  const moveUs = cpuMicros(() => e.apply({ kind: CommandKind.SetIndexPrice, assetId: BASE_ASSET, priceTicks: Math.round(INDEX_PRICE_E9 * 0.75), amountUnits: 1 }));
  const entered = e.sink.entered;
  let stepsUs = 0;
  let steps = 0;
  while (e.liquidatingCount() > 0) {
    if (++steps > 1000) throw new Error('FAIL: the cascade does not end');
    e.timeUs += STEP_US;
    stepsUs += cpuMicros(() => e.apply({ kind: CommandKind.Tick }));
  }
  TRIGGER_SWITCH.fullWalk = false;
  return { moveUs, stepsUs, steps, entered, hash: e.exchange.stateHash() };
}

const fmtMs = (us: number): string => `${(us / 1000).toFixed(us < 10_000 ? 3 : 1)} ms`;

function main(): void {
  const lines: string[] = [];
  const started = new Date().toISOString().slice(0, 10);
  lines.push(`Measured ${started} (${cpus().length} × ${cpus()[0]?.model.trim() ?? 'cpu'}, Node ${process.version}, load average ${loadavg()[0].toFixed(2)} at start) with \`npm run bench:liquidation-trigger\` (RUNS=${RUNS}). CPU time (user + system) of the engine's apply.`);
  lines.push('', '(a) One SetIndexPrice of ±0.5 % that liquidates nobody (per run the median over its moves, then the median of the runs):', '');
  lines.push('| borrowers | full walk | index | index, first move (draws every band) | re-checks per move: walk / index |', '|---:|---:|---:|---:|---:|');
  for (const borrowers of [1_000, BORROWERS]) {
    const results = Array.from({ length: RUNS }, () => quiet(borrowers));
    const m = (f: (r: QuietResult) => number): number => median(results.map(f));
    lines.push(`| ${borrowers.toLocaleString('en-US')} | ${fmtMs(m((r) => r.walkUs))} | ${fmtMs(m((r) => r.indexUs))} | ${fmtMs(m((r) => r.firstIndexUs))} | ${m((r) => r.walkRechecks).toLocaleString('en-US')} / ${m((r) => r.indexRechecks).toLocaleString('en-US')} |`);
    console.log(lines.at(-1));
  }
  lines.push('', `(b) Cascade: ${CASCADE.toLocaleString('en-US')} borrowers pushed over the line by one SetIndexPrice, then the waterfall's steps (median of ${RUNS} runs):`, '');
  lines.push('| trigger | the move | the steps | steps | accounts entered | total |', '|---|---:|---:|---:|---:|---:|');
  const hashes = new Set<string>();
  for (const fullWalk of [true, false]) {
    const runs = Array.from({ length: RUNS }, () => cascade(fullWalk));
    for (const r of runs) {
      hashes.add(r.hash);
      if (r.entered !== CASCADE) throw new Error(`FAIL: ${r.entered} of ${CASCADE} accounts entered the state`);
    }
    const m = (f: (r: CascadeRun) => number): number => median(runs.map(f));
    lines.push(`| ${fullWalk ? 'full walk' : 'index'} | ${fmtMs(m((r) => r.moveUs))} | ${fmtMs(m((r) => r.stepsUs))} | ${m((r) => r.steps)} | ${m((r) => r.entered).toLocaleString('en-US')} | ${fmtMs(m((r) => r.moveUs + r.stepsUs))} |`);
    console.log(lines.at(-1));
  }
  if (hashes.size !== 1) throw new Error('FAIL: the cascade ends in different states with the full walk and the index');
  lines.push('', 'Gate: both triggers end every cascade run with the same state hash; no quiet move liquidated anyone.');
  const section = lines.join('\n');
  console.log(section);
  if (process.argv.includes('--no-write')) return;
  const text = readFileSync(RESULTS, 'utf8');
  const heading = '## Liquidation trigger: full walk against the trigger index (bench/liquidation-trigger.bench.ts)';
  const block = `${BEGIN}\n\n${section}\n\n${END}`;
  const next = text.includes(BEGIN) ? text.slice(0, text.indexOf(BEGIN)) + block + text.slice(text.indexOf(END) + END.length) : `${text.trimEnd()}\n\n${heading}\n\n${block}\n`;
  writeFileSync(RESULTS, next);
}

try {
  main();
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
}
