// The hourly pauses. The interest's: the Tick that finds the borrow/lend interest timer due (every
// borrow accrues its hour; the lenders are paid and the borrowers' margins re-checked in steps of
// ENGINE_INTEREST_STEP accounts, the default's, margin/interest-pass.ts, then the pools are sampled
// and the throttle steps; 0: all of it in that command) and the Ticks 1 µs
// apart after it for as long as a review step stays due: the pass's longest command, the whole
// pass, the commands it took, against the same Tick once nothing is due (the baseline), in the
// same engine, hour after hour.
//
//   margin stream's setup (1,000 trading accounts, index prices, pool suppliers)
//   + idle accounts up to N: funded, every tenth lending both assets, every tenth (offset 5) borrowing SOL
//     │
//     ▼  for each of HOURS hours: the pass from a Tick at hour h + 1 µs (the timer is due), then a Tick with nothing due,
//        then an index move of SOL a second after the hour (it re-checks the borrowers whose trigger bands the hour dropped)
//   medians over the hours
//
// At N = 1,000 (the stream's own accounts only), 10,000 and 100,000 (ENGINE_HOURLY_ACCOUNTS).
//
// The funding settlement's pause: an engine whose N accounts all hold a position in the perpetual
// (perp-holders.ts), for each of HOURS hours an index move a minute (the mark samples accrue
// premiums), the samples due before the hour, then the Tick just after it (the interval's funding:
// a payment and a position event per holder, their re-checks) and the Ticks after it 1 µs apart
// for as long as a step of the pass stays due (perp/funding-passes.ts, in the default steps;
// ENGINE_FUNDING_STEP=0 times each pass in one command): the longest command of the pass, the whole
// pass, the commands it took, against the same Tick once nothing is due; then the Tick a second on
// that takes the perpetual's next mark sample, which re-checks every holder whose trigger bands the
// pass dropped (margin/trigger-index.ts). At N = 1,000, 10,000 and 100,000 (ENGINE_FUNDING_ACCOUNTS;
// empty skips a part).
//
// The realization's pause: the same holders under realization at mark every 10 s of engine time
// (perp/realize.ts, the default interval). Each interval an index move (every holder's unrealized
// PnL changes), the mark sample due before the multiple, then the Tick just after it, timed, and
// the Ticks after it 1 µs apart for as long as a realization step stays due (a pass larger than one
// step continues in the commands that follow): the longest command of the pass, the whole pass,
// the commands it took, against the same Tick once nothing is due (ENGINE_REALIZE_STEP=0: each
// pass in one command), and the next mark sample's Tick as for funding. At N = 1,000, 10,000 and
// 100,000 (ENGINE_REALIZE_ACCOUNTS; empty skips the part).
//
// The interest's pause when the position holders lend: the funding part's engine with funding every
// 8 hours, every holder lending 100 USDC and one more account borrowing 40 % of it against SOL, so
// that every lend earns whole units each hour; each hour timed as a pass from the Tick just after
// it, then the next mark sample (ENGINE_LENDER_ACCOUNTS; empty skips the part).
//
// A throwaway engine of the smallest size runs first in each part, so the measured ones run
// optimised code.
//
// Run: `npx tsc -p tsconfig.json && node dist/bench/engine-hourly.bench.js`

import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { SLOT_BYTES } from '../engine/bus/codec.js';
import { Exchange } from '../engine/core/exchange.js';
import { BorrowLendSide, CommandKind, type Command, type CommandSlot, type EngineConfig } from '../engine/bus/types.js';
import { HOUR_US } from '../engine/core/margin/borrow-lend.js';
import { BASE_ASSET, BENCH_ACCOUNTS, INDEX_PRICE_E9, QUOTE_ASSET, accountKey, benchMarginConfig, generateStream, idleAccountCommands } from './engine-stream.js';
import { median } from './engine.bench.js';
import { RefusalCount, SlotPlaces } from './slot-places.js';
import { benchCommand, perpBenchConfig, positionHolderCommands } from './perp-holders.js';
import { cmd } from '../test/helpers/engine-harness.js';
import { DEFAULT_FUNDING_STEP_POSITIONS, DEFAULT_INTEREST_STEP_ACCOUNTS, DEFAULT_REALIZE_STEP_POSITIONS } from '../src/config.js';

const sizes = (text: string): number[] => text.split(',').filter((size) => size !== '').map(Number);
const SIZES = sizes(process.env.ENGINE_HOURLY_ACCOUNTS ?? '1000,10000,100000');
const HOLDER_SIZES = sizes(process.env.ENGINE_FUNDING_ACCOUNTS ?? '1000,10000,100000');
const REALIZE_SIZES = sizes(process.env.ENGINE_REALIZE_ACCOUNTS ?? '1000,10000,100000');
const LENDER_SIZES = sizes(process.env.ENGINE_LENDER_ACCOUNTS ?? '1000,10000,100000');
/** Realization at mark every 10 s of engine time (the default interval), the intervals timed. */
const REALIZE_INTERVAL_US = 10 * 1_000_000;
const REALIZE_INTERVALS = 12;
const REALIZE_STEP = Number(process.env.ENGINE_REALIZE_STEP ?? DEFAULT_REALIZE_STEP_POSITIONS);
const FUNDING_STEP = Number(process.env.ENGINE_FUNDING_STEP ?? DEFAULT_FUNDING_STEP_POSITIONS);
const INTEREST_STEP = Number(process.env.ENGINE_INTEREST_STEP ?? DEFAULT_INTEREST_STEP_ACCOUNTS);
const stepsOf = (step: number, what = 'positions'): string => (step > 0 ? `in steps of ${step} ${what}` : 'each pass in one command');
const SECOND_US = 1_000_000;
const MINUTE_US = 60 * SECOND_US;
const HOURS = 12;
const SEED = 20240601;

/** The interest's pause (header). */
function measure(accounts: number): Pass {
  const config = benchMarginConfig({ maxAccounts: Math.max(accounts, BENCH_ACCOUNTS) });
  if (INTEREST_STEP > 0) config.interestStepAccounts = INTEREST_STEP;
  const ex = new Exchange(config);
  const places = new SlotPlaces(1024, SLOT_BYTES);
  let seq = 0;
  const setup = generateStream(SEED, 2_000, config, 'margin').setup;
  for (const c of setup) { seq++; ex.apply(c, seq, seq, places); }
  // No setup command may be refused: an unfunded account borrows nothing.
  const refusals = new RefusalCount();
  for (const c of idleAccountCommands(BENCH_ACCOUNTS + 1, accounts)) { seq++; ex.apply(c, seq, seq, refusals); }
  if (refusals.refused > 0) throw new Error(`${refusals.refused} idle account setup commands refused at ${accounts} accounts`);
  const passes = new PassTimes(ex, seq);
  for (let h = 1; h <= HOURS; h++) {
    passes.timePass(h * HOUR_US + 1);
    passes.timeNextMove(h * HOUR_US + SECOND_US, benchCommand(cmd.setIndexPrice(BASE_ASSET, INDEX_PRICE_E9 + (h % 2 === 0 ? 1 : -1) * 1_000_000)));
  }
  return passes.result(accounts);
}

interface Pass { accounts: number; longestMs: number; passMs: number; commands: number; plainMs: number; records: number; nextSampleMs: number | null }

/**
 * Each interval's pass on one engine: the Tick that finds it due, then the Ticks 1 µs apart for as
 * long as a step of it stays due (a pass in steps goes on in the commands after it), each timed;
 * then the same Tick with nothing due, timed: the baseline. Medians over the intervals of the
 * pass's longest command, its sum, its commands and records.
 */
class PassTimes {
  private readonly longest: number[] = [];
  private readonly pass: number[] = [];
  private readonly commands: number[] = [];
  private readonly plain: number[] = [];
  private readonly records: number[] = [];
  private readonly nextSample: number[] = [];
  private readonly places = new SlotPlaces(1024, SLOT_BYTES);
  private readonly tick = benchCommand(cmd.tick());

  constructor(private readonly ex: Exchange, private seq: number) {}

  /** Applies `command` untimed at `timeUs` (the interval's other commands). */
  apply(command: Command, timeUs: number): void {
    this.ex.apply(command, ++this.seq, timeUs, this.places);
  }

  /** Times the pass that falls due by `timeUs` and the baseline Tick after it. */
  timePass(timeUs: number): void {
    const before = this.places.records;
    let most = 0;
    let sum = 0;
    let n = 0;
    do {
      const t0 = performance.now();
      this.ex.apply(this.tick, ++this.seq, timeUs, this.places);
      const ms = performance.now() - t0;
      most = Math.max(most, ms);
      sum += ms;
      n++;
      timeUs++;
    } while (this.ex.nextWakeUs() >= 0 && this.ex.nextWakeUs() <= timeUs);
    this.longest.push(most);
    this.pass.push(sum);
    this.commands.push(n);
    this.records.push(this.places.records - before);
    const t0 = performance.now();
    this.ex.apply(this.tick, ++this.seq, timeUs, this.places);
    this.plain.push(performance.now() - t0);
  }

  /**
   * Times the next price move after the pass at `timeUs`: the Tick that takes the perpetual's next
   * mark sample, or `command` (an index move). It re-checks the accounts whose trigger bands the
   * pass dropped and did not draw again.
   */
  timeNextMove(timeUs: number, command: Command = this.tick): void {
    const t0 = performance.now();
    this.ex.apply(command, ++this.seq, timeUs, this.places);
    this.nextSample.push(performance.now() - t0);
  }

  result(accounts: number): Pass {
    const nextSampleMs = this.nextSample.length > 0 ? median(this.nextSample) : null;
    return { accounts, longestMs: median(this.longest), passMs: median(this.pass), commands: median(this.commands), plainMs: median(this.plain), records: median(this.records), nextSampleMs };
  }
}

/** An engine whose `accounts` accounts all hold a position in the perpetual (perp-holders.ts), under `config`. */
function holdersEngine(config: EngineConfig, accounts: number): { ex: Exchange; seq: number } {
  const ex = new Exchange(config);
  const refusals = new RefusalCount();
  let seq = 0;
  for (const c of positionHolderCommands(accounts)) { seq++; ex.apply(c, seq, seq, refusals); }
  if (refusals.refused > 0) throw new Error(`${refusals.refused} position holder setup commands refused at ${accounts} accounts`);
  return { ex, seq };
}

/**
 * The funding settlement's pause (header): each hour an index move a minute up to its last second
 * (the mark samples accrue premiums), a Tick just before the hour (the samples due), then the pass
 * from the Tick just after it (a payment and a position event per holder, their re-checks).
 */
function measureFunding(accounts: number): Pass {
  const config = perpBenchConfig(accounts);
  if (FUNDING_STEP > 0) config.fundingStepPositions = FUNDING_STEP;
  const { ex, seq } = holdersEngine(config, accounts);
  const passes = new PassTimes(ex, seq);
  for (let h = 1; h <= HOURS; h++) {
    for (let t = (h - 1) * HOUR_US + MINUTE_US; t < h * HOUR_US; t += MINUTE_US) {
      passes.apply(benchCommand(cmd.setIndexPrice(BASE_ASSET, INDEX_PRICE_E9 + (((t / MINUTE_US) % 7) - 3) * 10_000_000)), t - SECOND_US);
    }
    passes.apply(benchCommand(cmd.tick()), h * HOUR_US - SECOND_US / 2);
    passes.timePass(h * HOUR_US + SECOND_US / 2);
    passes.timeNextMove(h * HOUR_US + (3 * SECOND_US) / 2);
  }
  return passes.result(accounts);
}

/**
 * The interest's pause when the position holders lend (header): every holder lends 100 USDC and one
 * more account borrows 40 % of it against SOL; funding every 8 hours, so that the hour is the
 * interest alone. Each hour an index move and the mark sample before it, then the pass from the
 * Tick just after the hour, then the next mark sample.
 */
function measureLenders(accounts: number): Pass {
  const config: EngineConfig = { ...perpBenchConfig(accounts + 1) };
  config.markets = config.markets.map((m) => (m.perp === undefined ? m : { ...m, perp: { ...m.perp, fundingIntervalMs: 8 * 3_600_000 } }));
  if (INTEREST_STEP > 0) config.interestStepAccounts = INTEREST_STEP;
  if (FUNDING_STEP > 0) config.fundingStepPositions = FUNDING_STEP;
  const { ex, seq } = holdersEngine(config, accounts);
  const borrower = accounts + 1;
  const moves: Partial<CommandSlot>[] = [{ kind: CommandKind.CreateAccount, key: accountKey(borrower) }, cmd.deposit(borrower, BASE_ASSET, accounts * 8_000_000_000)];
  for (let a = 1; a <= accounts; a++) moves.push({ kind: CommandKind.BorrowLend, accountId: a, assetId: QUOTE_ASSET, side: BorrowLendSide.Lend as number, amountUnits: 100_000_000 });
  moves.push({ kind: CommandKind.BorrowLend, accountId: borrower, assetId: QUOTE_ASSET, side: BorrowLendSide.Borrow as number, amountUnits: accounts * 40_000_000 });
  const refusals = new RefusalCount();
  let n = seq;
  for (const fields of moves) ex.apply(benchCommand(fields), ++n, n, refusals);
  if (refusals.refused > 0) throw new Error(`${refusals.refused} lend or borrow setup commands refused at ${accounts} accounts`);
  const lending = new PassTimes(ex, n);
  for (let h = 1; h <= HOURS; h++) {
    lending.apply(benchCommand(cmd.setIndexPrice(BASE_ASSET, INDEX_PRICE_E9 + (h % 2) * 1_000_000)), h * HOUR_US - 2 * SECOND_US);
    lending.apply(benchCommand(cmd.tick()), h * HOUR_US - SECOND_US / 2);
    lending.timePass(h * HOUR_US + 1);
    lending.timeNextMove(h * HOUR_US + (3 * SECOND_US) / 2);
  }
  return lending.result(accounts);
}

/** The realization's pause (header): each interval an index move, the mark sample before the multiple, then the pass from the Tick after it. */
function measureRealization(accounts: number): Pass {
  const config: EngineConfig = { ...perpBenchConfig(accounts), realizePnlIntervalUs: REALIZE_INTERVAL_US };
  if (REALIZE_STEP > 0) config.realizeStepPositions = REALIZE_STEP;
  const { ex, seq } = holdersEngine(config, accounts);
  const passes = new PassTimes(ex, seq);
  for (let k = 1; k <= REALIZE_INTERVALS; k++) {
    const dueUs = k * REALIZE_INTERVAL_US;
    passes.apply(benchCommand(cmd.setIndexPrice(BASE_ASSET, INDEX_PRICE_E9 + ((k % 5) - 2) * 20_000_000)), dueUs - 2 * SECOND_US);
    passes.apply(benchCommand(cmd.tick()), dueUs - SECOND_US / 2);
    passes.timePass(dueUs + SECOND_US / 2);
    passes.timeNextMove(dueUs + (3 * SECOND_US) / 2);
  }
  return passes.result(accounts);
}

function passTable(sizes: number[], measureAt: (accounts: number) => Pass): string {
  let text = '| accounts | the pass\'s longest command | the whole pass | commands in the pass | a Tick with nothing due (baseline) | longest ÷ baseline | records written by the pass | the next price move (interest: an index move; else the mark sample\'s Tick) |\n| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n';
  for (const accounts of sizes) {
    const r = measureAt(accounts);
    const next = r.nextSampleMs === null ? 'no perpetual' : `${r.nextSampleMs.toFixed(3)} ms`;
    text += `| ${accounts.toLocaleString('en-US')} | ${r.longestMs.toFixed(3)} ms | ${r.passMs.toFixed(3)} ms | ${r.commands} | ${(r.plainMs * 1000).toFixed(1)} µs | ${(r.longestMs / r.plainMs).toFixed(0)}× | ${r.records.toLocaleString('en-US')} | ${next} |\n`;
  }
  return text;
}

export function runEngineHourlyBench(): string {
  let text = '';
  if (SIZES.length > 0) {
    measure(Math.min(...SIZES)); // warm-up
    text += `### The hourly interest's pause, the lenders paid and the borrowers re-checked ${stepsOf(INTEREST_STEP, 'accounts')} (bench/engine-hourly.bench.ts; median of ${HOURS} hours each)\n\n${passTable(SIZES, measure)}`;
  }
  if (HOLDER_SIZES.length > 0) {
    measureFunding(Math.min(...HOLDER_SIZES)); // warm-up
    text += `\n### The funding settlement's pause: every account holds a perpetual position, ${stepsOf(FUNDING_STEP)} (median of ${HOURS} hours each)\n\n${passTable(HOLDER_SIZES, measureFunding)}`;
  }
  if (LENDER_SIZES.length > 0) {
    measureLenders(Math.min(...LENDER_SIZES)); // warm-up
    text += `\n### The hourly interest's pause when every position holder lends USDC, ${stepsOf(INTEREST_STEP, 'accounts')} (median of ${HOURS} hours each)\n\n${passTable(LENDER_SIZES, measureLenders)}`;
  }
  if (REALIZE_SIZES.length > 0) {
    measureRealization(Math.min(...REALIZE_SIZES)); // warm-up
    text += `\n### The realization's pause: every account holds a perpetual position, realized at mark every 10 s, ${stepsOf(REALIZE_STEP)} (median of ${REALIZE_INTERVALS} intervals each)\n\n${passTable(REALIZE_SIZES, measureRealization)}`;
  }
  return text;
}

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  process.stdout.write(runEngineHourlyBench());
}
