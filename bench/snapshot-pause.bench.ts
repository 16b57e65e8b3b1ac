// The engine's pause for a snapshot: after a Snapshot command the engine thread computes the state
// hash and exports the state (engine/shell/journal.ts snapshotFile) before it takes the next
// command. Measured on an engine whose N accounts all hold a perpetual position
// (perp-holders.ts), each the median of RUNS:
//
//   the state hash with the shell's native SHA-256 (what the engine worker runs)
//   the state hash with the core's own SHA-256 (@noble/hashes; the same hash): its baseline
//   the export (the snapshot's bytes)
//   a copy of as many bytes: the floor of writing them
//
// At N = 10,000 and 100,000 (SNAPSHOT_PAUSE_ACCOUNTS).
//
// Run: `npx tsc -p tsconfig.json && node dist/bench/snapshot-pause.bench.js`

import { createHash } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { sha256 } from '@noble/hashes/sha2.js';
import { Exchange } from '../engine/core/exchange.js';
import { useSha256 } from '../engine/core/parts.js';
import { exportSnapshot } from '../engine/core/snapshot.js';
import { median } from './engine.bench.js';
import { perpBenchConfig, positionHolderCommands } from './perp-holders.js';
import { RefusalCount } from './slot-places.js';

const SIZES = (process.env.SNAPSHOT_PAUSE_ACCOUNTS ?? '10000,100000').split(',').filter((size) => size !== '').map(Number);
const RUNS = 7;

interface Pause { accounts: number; nativeMs: number; nobleMs: number; exportMs: number; copyMs: number; bytes: number }

function timeMs(body: () => void): number {
  const started = performance.now();
  body();
  return performance.now() - started;
}

function measure(accounts: number): Pause {
  const ex = new Exchange(perpBenchConfig(accounts));
  const refusals = new RefusalCount();
  let seq = 0;
  for (const c of positionHolderCommands(accounts)) { seq++; ex.apply(c, seq, seq, refusals); }
  if (refusals.refused > 0) throw new Error(`${refusals.refused} position holder setup commands refused at ${accounts} accounts`);
  const native: number[] = [];
  const noble: number[] = [];
  const exports: number[] = [];
  const copies: number[] = [];
  let bytes: Uint8Array = new Uint8Array(0);
  const hashes = new Set<string>();
  for (let run = 0; run < RUNS; run++) {
    useSha256(() => createHash('sha256'));
    native.push(timeMs(() => hashes.add(ex.stateHash())));
    useSha256(() => sha256.create());
    noble.push(timeMs(() => hashes.add(ex.stateHash())));
    exports.push(timeMs(() => { bytes = exportSnapshot(ex); }));
    const target = new Uint8Array(bytes.length);
    copies.push(timeMs(() => target.set(bytes)));
  }
  useSha256(() => createHash('sha256'));
  if (hashes.size !== 1) throw new Error('the two SHA-256s gave different state hashes');
  return { accounts, nativeMs: median(native), nobleMs: median(noble), exportMs: median(exports), copyMs: median(copies), bytes: bytes.length };
}

export function runSnapshotPauseBench(): string {
  let text = `### The engine's pause for a snapshot: every account holds a perpetual position (median of ${RUNS} runs each)\n\n`;
  text += '| accounts | state hash, native SHA-256 | state hash, @noble SHA-256 (baseline) | native ÷ baseline | export | a copy of its bytes (floor) | export ÷ floor | snapshot bytes |\n| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n';
  for (const accounts of SIZES) {
    const r = measure(accounts);
    text += `| ${accounts.toLocaleString('en-US')} | ${r.nativeMs.toFixed(1)} ms | ${r.nobleMs.toFixed(1)} ms | ${(r.nativeMs / r.nobleMs).toFixed(2)} | ${r.exportMs.toFixed(1)} ms | ${r.copyMs.toFixed(2)} ms | ${(r.exportMs / r.copyMs).toFixed(0)}× | ${r.bytes.toLocaleString('en-US')} |\n`;
  }
  return text;
}

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  process.stdout.write(runSnapshotPauseBench());
}
