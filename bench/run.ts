// `npm run bench`: runs the benchmark suites and writes bench/RESULTS.md.
//
//   ringHandoff      main thread ⇄ worker: SharedArrayBuffer rings against postMessage
//   codec            the codec generated from the schema against the hand-written one it replaced
//   signatureVerify  ed25519 verify: node:crypto (cached KeyObject) against sodium-native
//                    against @noble/ed25519
//   engineCore       the matching engine alone on exchange-core's command mix, against
//                    nodejs-order-book fed the same stream, with a state-hash check; then where
//                    its latency tail comes from (records written, collections)
//   journal          durable append rate, group-commit ack latency and replay rate, against raw
//                    lmdb puts and reads
//   journalWithAccountHistory  the journal worker's path with the account history sink,
//                    against the journal path alone
//
// Each suite measures its subject next to its baseline in the same run and reports medians of
// several runs and ratios, because these machines are shared and noisy.

import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { runRingBench } from './ring.bench.js';
import { runCodecBench } from './codec.bench.js';
import { runVerifyBench } from './verify.bench.js';
import { runEngineBench } from './engine.bench.js';
import { runEngineTailBench } from './engine-tail.bench.js';
import { runJournalBench } from './journal.bench.js';
// Stream fan-out
import { runFanoutBench } from './fanout.bench.js';
import { runHistorySinkBench } from './history-sink.bench.js';

const resultsPath = fileURLToPath(new URL('../../bench/RESULTS.md', import.meta.url));

async function main(): Promise<void> {
  const started = new Date();
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}, load average ${loadavg()[0].toFixed(2)} at start`;
  process.stdout.write('ring handoff…\n');
  const ring = await runRingBench();
  process.stdout.write('codec…\n');
  const codec = await runCodecBench();
  process.stdout.write('signature verification…\n');
  const verify = await runVerifyBench();
  process.stdout.write('engine core…\n');
  const engine = await runEngineBench();
  process.stdout.write('engine latency tail…\n');
  const engineTail = await runEngineTailBench();
  process.stdout.write('journal…\n');
  const journal = await runJournalBench();
  // Stream fan-out
  process.stdout.write('stream fan-out…\n');
  const fanout = await runFanoutBench();
  process.stdout.write('account history sink…\n');
  const historySink = await runHistorySinkBench();
  const text = `# Benchmark results

Written by \`npm run bench\` on ${started.toISOString().slice(0, 10)} (${machine}).
Figures are medians of several runs within one invocation; read them as ratios against the
baseline measured in the same run, not as absolute times.

## Ring handoff against postMessage (bench/ring.bench.ts)

${ring.trim()}

## Generated codec against the hand-written one (bench/codec.bench.ts)

${codec.trim()}

## ed25519 verification (bench/verify.bench.ts)

${verify.trim()}

## Engine core against nodejs-order-book (bench/engine.bench.ts)

${engine.trim()}

${engineTail.trim()}

## Durable journal against raw lmdb (bench/journal.bench.ts)

${journal.trim()}

## Stream fan-out against raw uWS publish (bench/fanout.bench.ts)

${fanout.trim()}

## Account history sink in the journal worker (bench/history-sink.bench.ts)

${historySink.trim()}
`;
  // The end-to-end section (npm run bench:e2e, bench/e2e/report.ts), the soak section
  // (npm run bench:soak, bench/soak.bench.ts) and the metrics cost section (measured by hand with
  // bench/metrics-cost.bench.ts and bench:e2e under METRICS=0), the engine layout comparison
  // (bench/layout-compare.sh, bench/layout-compare-callgrind.sh, and for the tick ladder of price
  // levels), the engine's cost per command against its floor (bench/engine-ceiling.bench.ts),
  // the codec's instruction counts
  // (bench/codec-callgrind.sh), front CPU per signed order (npm run bench:frontcpu) and the engine
  // on the margin mix (bench/engine-margin.bench.ts) and on a perpetual book (bench/engine-perp.bench.ts),
  // the liquidation trigger (npm run bench:liquidation-trigger), the restart from the newest
  // snapshot (npm run bench:restart), the unloaded durable acknowledgement (npm run bench:ack) and
  // the history sinks against the tree before them (bench/history-sink-callgrind.sh and alternating
  // runs of bench/history-sink.bench.ts), and the journal writer and trade encoder against the tree
  // before them (bench/journal-writer-callgrind.sh and alternating runs), and the record writers
  // through 32-bit words against the tree before (bench/layout-compare-callgrind.sh and
  // bench/layout-compare.sh), and the journal's run checksums against the tree before them
  // (bench/journal-writer-callgrind.sh, bench/replay-callgrind.sh and alternating runs), a
  // cheaper output digest measured on a copy of the build, the periodic pauses of interest, funding
  // and realization (bench/engine-hourly.bench.ts) and the snapshot's pause
  // (bench/snapshot-pause.bench.ts) are written elsewhere:
  // carry them over. So is the summary against the performance targets, written by hand from
  // those sections' same-run figures, which stays at the top.
  let carried = '';
  let targets = '';
  try {
    const previous = readFileSync(resultsPath, 'utf8');
    targets = namedSection(previous, 'targets');
    for (const name of ['e2e', 'soak', 'metrics-cost', 'layout', 'layout-callgrind', 'engine-ladder', 'engine-cost', 'codec-callgrind', 'front-cpu', 'engine-margin', 'engine-perp', 'sign-pool', 'liquidation-trigger', 'restart', 'ack', 'history-sink-ab', 'writer-encoder-ab', 'word-writers', 'run-checksums', 'digest-lanes', 'engine-hourly', 'snapshot-pause', 'engine-caches', 'history-pool']) {
      const section = namedSection(previous, name);
      if (section !== '') carried += `\n${section}\n`;
    }
  } catch {
    // no previous results
  }
  // The targets' summary (written by hand from the suites' same-run figures) stays first.
  const [head, suites] = [text.slice(0, text.indexOf('\n## ') + 1), text.slice(text.indexOf('\n## ') + 1)];
  writeFileSync(resultsPath, targets === '' ? text + carried : `${head}${targets}\n\n${suites}${carried}`);
  process.stdout.write(`wrote ${resultsPath}\n`);
}

/** The section of `text` marked `<!-- name:begin -->` … `<!-- name:end -->`, from its `## ` heading; '' when absent. */
function namedSection(text: string, name: string): string {
  const begin = text.indexOf(`<!-- ${name}:begin -->`);
  const end = text.indexOf(`<!-- ${name}:end -->`);
  if (begin < 0 || end <= begin) return '';
  const headingAt = text.lastIndexOf('\n## ', begin);
  return text.slice(headingAt >= 0 ? headingAt + 1 : begin, end + `<!-- ${name}:end -->`.length);
}

void main();
