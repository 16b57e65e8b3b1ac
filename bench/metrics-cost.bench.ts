// `node dist/bench/metrics-cost.bench.js`: what the engine's command counters cost.
//
//   stream commands ──► Sequencer (stamp, Exchange.apply, count kind × result) ──► outbound ring ──► drain
//
// The same seeded command stream (exchange-core's mix, bench/engine-stream.ts) runs through the
// engine shell's write side three ways, interleaved run by run so that a noisy neighbour hurts all
// three alike (the order rotates from run to run, so none always follows the same one): no metrics object at all, a SharedMetrics with counting disabled (METRICS=0), and
// counting enabled (one Atomics.add on a BigInt64 cell per command). Each way must end in the same
// state hash, and the enabled way must have counted every command, so a fast wrong run cannot win.
// Reports the median commands per second of each way over RUNS runs, and the enabled way's cost as
// the median of its per-run ratio to the run's no-metrics figure (paired, so that a slow patch of
// the machine cancels out).

import { performance } from 'node:perf_hooks';
import { Exchange } from '../engine/core/exchange.js';
import { SLOT_BYTES } from '../engine/bus/codec.js';
import { OutboundRing } from '../engine/bus/ring.js';
import { Sequencer } from '../engine/shell/sequencer.js';
import { SharedMetrics, CODE_SLOTS, KIND_SLOTS } from '../engine/bus/metrics.js';
import { CommandKind } from '../engine/bus/types.js';
import { benchConfig, decodeCommand, generateStream, newStreamCommand, type EngineStream } from './engine-stream.js';

const OPS = Number(process.env.METRICS_BENCH_OPS ?? 300_000);
const RUNS = Number(process.env.METRICS_BENCH_RUNS ?? 15);
const WAYS = ['none', 'disabled', 'enabled'] as const;

type Way = 'none' | 'disabled' | 'enabled';

interface RunResult {
  commandsPerS: number;
  stateHash: string;
  counted: number;
  commands: number;
}

function totalCounted(metrics: SharedMetrics): number {
  let total = 0;
  for (let kind = 0; kind < KIND_SLOTS; kind++) for (let code = 0; code < CODE_SLOTS; code++) total += metrics.commandCount(kind, code);
  return total;
}

function runOnce(stream: EngineStream, way: Way): RunResult {
  const exchange = new Exchange(benchConfig());
  const ring = OutboundRing.create({ slotCount: 1 << 16, slotBytes: SLOT_BYTES, consumerCount: 1 });
  const consumer = ring.consumer(0);
  const metrics = way === 'none' ? null : SharedMetrics.create(1, way === 'enabled', Date.now());
  const sequencer = new Sequencer(exchange, ring, () => {
    const s = ring.tryClaim();
    if (s >= 0) return s;
    ring.flush();
    consumer.poll(() => true, 1 << 20);
    return ring.tryClaim();
  }, metrics);
  const cmd = newStreamCommand();
  let seq = 0;
  let commands = 0;
  const started = performance.now();
  for (const c of stream.setup) sequencer.command(++seq, seq, c, null, 0);
  for (let i = 0; i < stream.count; i++) {
    decodeCommand(stream, i, cmd);
    if (cmd.kind >= CommandKind.QueryBalances) sequencer.query(cmd, seq, seq);
    else sequencer.command(++seq, seq, cmd, null, 0);
    commands++;
  }
  const elapsedS = (performance.now() - started) / 1000;
  ring.flush();
  consumer.poll(() => true, 1 << 20);
  return { commandsPerS: commands / elapsedS, stateHash: exchange.stateHash(), counted: metrics ? totalCounted(metrics) : 0, commands: commands + stream.setup.length };
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

export interface MetricsCostResult {
  ops: number;
  runs: number;
  medianCommandsPerS: Record<Way, number>;
  enabledCostPct: number;
  disabledCostPct: number;
}

export function runMetricsCostBench(): MetricsCostResult {
  const stream = generateStream(42, OPS);
  const results: Record<Way, RunResult[]> = { none: [], disabled: [], enabled: [] };
  runOnce(stream, 'enabled'); // warm-up: JIT for every path
  for (let run = 0; run < RUNS; run++) {
    for (let i = 0; i < WAYS.length; i++) {
      const way = WAYS[(run + i) % WAYS.length];
      results[way].push(runOnce(stream, way));
    }
  }
  const hashes = new Set(Object.values(results).flat().map((r) => r.stateHash));
  if (hashes.size !== 1) throw new Error(`state hashes differ between runs: ${[...hashes].join(', ')}`);
  for (const r of results.enabled) if (r.counted !== r.commands) throw new Error(`counted ${r.counted} of ${r.commands} commands`);
  const medianCommandsPerS = {
    none: median(results.none.map((r) => r.commandsPerS)),
    disabled: median(results.disabled.map((r) => r.commandsPerS)),
    enabled: median(results.enabled.map((r) => r.commandsPerS)),
  };
  const pairedCostPct = (way: Way): number => median(results[way].map((r, i) => (1 - r.commandsPerS / results.none[i].commandsPerS) * 100));
  return { ops: OPS, runs: RUNS, medianCommandsPerS, enabledCostPct: pairedCostPct('enabled'), disabledCostPct: pairedCostPct('disabled') };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = runMetricsCostBench();
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
