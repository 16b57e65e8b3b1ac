// The first price move after a start: the liquidation trigger bands (engine/core/margin/trigger-index.ts)
// are derived and start undrawn after a snapshot load, so that move re-checks every account at
// risk in one command unless the engine worker draws the bands first (Exchange.drawTriggerBands,
// before it serves). On an engine whose N accounts all hold a perpetual position (perp-holders.ts),
// snapshotted once, each of RUNS rounds loads it twice:
//
//   loaded, the first index move (0.1 %) timed: the baseline, the stall the drawing removes
//   loaded, the bands drawn (timed: the work moved into the start), then the same move timed
//
// At N = 10,000 and 100,000 (TRIGGER_START_ACCOUNTS). Medians of the rounds.
//
// Run: `npx tsc -p tsconfig.json && node dist/bench/trigger-start.bench.js`

import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { Exchange } from '../engine/core/exchange.js';
import { exportSnapshot, importSnapshot } from '../engine/core/snapshot.js';
import { cmd } from '../test/helpers/engine-harness.js';
import { BASE_ASSET, INDEX_PRICE_E9 } from './engine-stream.js';
import { median } from './engine.bench.js';
import { benchCommand, perpBenchConfig, positionHolderCommands } from './perp-holders.js';
import { RefusalCount } from './slot-places.js';

const SIZES = (process.env.TRIGGER_START_ACCOUNTS ?? '10000,100000').split(',').filter((size) => size !== '').map(Number);
const RUNS = 5;

interface Start { accounts: number; undrawnMoveMs: number; drawMs: number; drawnMoveMs: number }

function measure(accounts: number): Start {
  const config = perpBenchConfig(accounts);
  const ex = new Exchange(config);
  const refusals = new RefusalCount();
  let seq = 0;
  for (const c of positionHolderCommands(accounts)) { seq++; ex.apply(c, seq, seq, refusals); }
  // A first move on the live engine: every holder re-checked once and banded, as a running server's would be.
  ex.apply(benchCommand(cmd.setIndexPrice(BASE_ASSET, INDEX_PRICE_E9 + 10_000_000)), ++seq, 5_000_000, refusals);
  if (refusals.refused > 0) throw new Error(`${refusals.refused} setup commands refused at ${accounts} accounts`);
  const bytes = exportSnapshot(ex);
  const move = benchCommand(cmd.setIndexPrice(BASE_ASSET, INDEX_PRICE_E9 + 20_000_000));
  const undrawn: number[] = [];
  const draws: number[] = [];
  const drawn: number[] = [];
  const time = (body: () => void): number => {
    const t0 = performance.now();
    body();
    return performance.now() - t0;
  };
  for (let round = 0; round < RUNS; round++) {
    const plain = new Exchange(config);
    importSnapshot(plain, bytes);
    undrawn.push(time(() => plain.apply(move, seq + 1, 6_000_000, refusals)));
    const started = new Exchange(config);
    importSnapshot(started, bytes);
    draws.push(time(() => started.drawTriggerBands()));
    drawn.push(time(() => started.apply(move, seq + 1, 6_000_000, refusals)));
  }
  return { accounts, undrawnMoveMs: median(undrawn), drawMs: median(draws), drawnMoveMs: median(drawn) };
}

export function runTriggerStartBench(): string {
  if (SIZES.length === 0) return '';
  measure(Math.min(...SIZES)); // warm-up
  let text = `### The first price move after a snapshot load (bench/trigger-start.bench.ts; every account holds a perpetual position; median of ${RUNS} loads each way)\n\n`;
  text += '| accounts | the first move, bands undrawn (baseline) | drawing the bands after the load | the first move after drawing | drawn ÷ undrawn |\n| ---: | ---: | ---: | ---: | ---: |\n';
  for (const accounts of SIZES) {
    const r = measure(accounts);
    text += `| ${accounts.toLocaleString('en-US')} | ${r.undrawnMoveMs.toFixed(2)} ms | ${r.drawMs.toFixed(1)} ms | ${r.drawnMoveMs.toFixed(3)} ms | ${(r.drawnMoveMs / r.undrawnMoveMs).toFixed(4)} |\n`;
  }
  return text;
}

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  process.stdout.write(runTriggerStartBench());
}
