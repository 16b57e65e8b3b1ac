// The end-to-end benchmark's outputs: bench/e2e-results.json (everything measured), the
// "End-to-end" section of bench/RESULTS.md and the table under "End-to-end figures" in README.md.
// Both sections sit between marker comments and are replaced on each run; the rest of each file
// is left as it is (a missing section is appended).

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LoadResult } from './load.js';
import type { VerifyCeiling } from './ceilings.js';
import type { HistogramSummary } from './histogram.js';

export interface Phase {
  name: string;
  cpu: Record<string, number>;
  clientCpu: Record<string, number>;
  seconds: number;
}

export interface E2EResults {
  date: string;
  machine: string;
  cores: number;
  options: { frontThreads: number; connections: number; runs: number; openSeconds: number; quick: boolean; target: string | null };
  ceilings: {
    verify: { oneThread: VerifyCeiling; allCores: VerifyCeiling };
    durableCommit: HistogramSummary;
    hello: { median: LoadResult; runs: number[]; cpu: Record<string, number> };
  };
  unloaded: { runs: LoadResult[]; p50Us: number; p90Us: number; p99Us: number; p999Us: number; maxUs: number; throughputPerS: number };
  reads: Record<string, { throughputPerS: number; runs: number[]; perFrontThread: number; latency: HistogramSummary; statuses: Record<string, Record<string, number>> }>;
  closed: { median: LoadResult; runs: number[] };
  open: LoadResult;
  websocket: { closedLoop: Record<string, unknown>; openLoop: Record<string, unknown> };
  phases: Phase[];
  serverLogTail: string[];
}

const n = (x: number): string => Math.round(x).toLocaleString('en-US');
const us = (x: number): string => (x >= 1000 ? `${(x / 1000).toFixed(2)} ms` : `${x.toFixed(0)} µs`);
const pct = (x: number): string => `${(x * 100).toFixed(0)} %`;
const verdict = (ok: boolean): string => (ok ? 'met' : 'not met');

function latencyCells(s: HistogramSummary): string {
  return `${us(s.p50Us)} / ${us(s.p90Us)} / ${us(s.p99Us)} / ${us(s.p999Us)} / ${us(s.maxUs)}`;
}

function statusText(statuses: Record<string, Record<string, number>>): string {
  return Object.entries(statuses).map(([kind, m]) => `${kind}: ${Object.entries(m).map(([s, c]) => `${s}×${n(c)}`).join(', ')}`).join('; ');
}

interface WsKind { fromEngine: HistogramSummary; fromFront: HistogramSummary }

/** One figure: what was measured, what bounds it in the same run, and the goal set for it. */
interface Row {
  figure: string;
  measured: string;
  reference: string;
  ratio: string;
  target: string;
  verdict: string;
}

function headlineRows(r: E2EResults): Row[] {
  const fronts = r.options.frontThreads;
  const verifyCores = Math.min(fronts, r.cores);
  const verifyCeiling = r.ceilings.verify.oneThread.perSecond * verifyCores;
  const closed = r.closed.median;
  const hello = r.ceilings.hello.median.throughputPerS;
  const engineIdle = r.phases.find((p) => p.name === 'idle')?.cpu.engine;
  // Other processes on this shared machine take CPU from the server and the client: say how much.
  const foreign = (name: string): string => {
    const f = r.phases.find((p) => p.name.startsWith(name))?.cpu['machine foreign'];
    return f === undefined ? '' : ` (other processes used ${f} % of a core meanwhile)`;
  };
  const rows: Row[] = [
    { figure: `signed orders/s, closed loop, ${closed.connections} connections (median of ${r.closed.runs.length}: ${r.closed.runs.map(n).join(', ')})`,
      measured: `**${n(closed.throughputPerS)}/s**${foreign('closed loop')}`,
      reference: `verification ceiling of the ${verifyCores} core(s) the ${fronts} front threads can use: ${n(verifyCeiling)}/s (${n(r.ceilings.verify.oneThread.perSecond)}/s per core)`,
      ratio: pct(closed.throughputPerS / verifyCeiling),
      target: '≥ 90 % of the verification ceiling', verdict: verdict(closed.throughputPerS >= 0.9 * verifyCeiling) },
    { figure: 'the same, against an unsigned uWebSockets.js hello-world POST server (same client, same bytes)',
      measured: `${n(closed.throughputPerS)}/s`, reference: `${n(hello)} req/s (${fronts} threads)`, ratio: pct(closed.throughputPerS / hello),
      target: '—', verdict: '—' },
    { figure: 'unloaded durable ack latency, 1 connection, 1 order at a time: p50 / p99',
      measured: `**${us(r.unloaded.p50Us)} / ${us(r.unloaded.p99Us)}**${foreign('unloaded')}`,
      reference: `floor: one durable LMDB commit ${us(r.ceilings.durableCommit.p50Us)} / ${us(r.ceilings.durableCommit.p99Us)} + one verify ${us(r.ceilings.verify.oneThread.microsPerVerify)}`,
      ratio: '—', target: '≤ 200 µs / ≤ 600 µs', verdict: `${verdict(r.unloaded.p50Us <= 200)} / ${verdict(r.unloaded.p99Us <= 600)}` },
    { figure: `open loop at 70 % (${n(r.open.targetRatePerS ?? 0)}/s, ${r.open.connections} connections; achieved ${n(r.open.throughputPerS)}/s): p50 / p90 / p99 / p99.9 / max from intended send time`,
      measured: `**${latencyCells(r.open.latency)}**${foreign('open loop')}`, reference: '—', ratio: '—',
      target: 'p99 ≤ 5 ms', verdict: verdict(r.open.latency.p99Us <= 5000) },
  ];
  Object.entries(r.reads).forEach(([name, v], i) => {
    const rate = `${n(v.perFrontThread)}/s`;
    rows.push({ figure: `public reads, ${name}, per front thread`, measured: `${i === 0 ? `**${rate}**` : rate} (${n(v.throughputPerS)}/s total)`,
      reference: '—', ratio: '—', target: '≥ 30,000/s per front thread', verdict: verdict(v.perFrontThread >= 30_000) });
  });
  if (engineIdle !== undefined) {
    rows.push({ figure: 'engine thread CPU while idle', measured: `${engineIdle} % of a core`, reference: '—', ratio: '—',
      target: 'must not burn a core', verdict: verdict(engineIdle < 20) });
  }
  const ws = r.websocket.openLoop as Record<string, WsKind>;
  for (const kind of ['depth', 'trade', 'orderUpdate']) {
    const k = ws[kind];
    if (!k || k.fromEngine.count === 0) continue;
    rows.push({ figure: `WebSocket ${kind} delivery in the open-loop run, engine time T → received (p50 / p99; ${n(k.fromEngine.count)} messages)`,
      measured: `${us(k.fromEngine.p50Us)} / ${us(k.fromEngine.p99Us)}`, reference: `front time E → received: ${us(k.fromFront.p50Us)} / ${us(k.fromFront.p99Us)}`,
      ratio: '—', target: '—', verdict: '—' });
  }
  return rows;
}

/**
 * The figures against what bounds them in the same run; with `targets`, also the goal set for
 * each and whether it was met (bench/RESULTS.md only: the README keeps figures and ceilings).
 */
export function headlineTable(r: E2EResults, targets: boolean): string {
  const head = ['figure', 'measured', 'ceiling, floor or reference (same run)', 'ratio', ...(targets ? ['target', 'verdict'] : [])];
  const cells = (row: Row): string[] => [row.figure, row.measured, row.reference, row.ratio, ...(targets ? [row.target, row.verdict] : [])];
  const line = (values: string[]): string => `| ${values.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...headlineRows(r).map((row) => line(cells(row)))].join('\n');
}

function cpuTable(r: E2EResults): string {
  const serverCols = new Set<string>();
  const clientCols = new Set<string>();
  for (const p of r.phases) {
    Object.keys(p.cpu).forEach((k) => serverCols.add(k));
    Object.keys(p.clientCpu).forEach((k) => clientCols.add(k));
  }
  const s = [...serverCols];
  const c = [...clientCols];
  const head = `| phase | ${s.map((k) => (k.startsWith('machine') ? k : `server ${k}`)).join(' | ')} | ${c.map((k) => (k.startsWith('client') ? k : `client ${k}`)).join(' | ')} |`;
  const sep = `| --- | ${s.map(() => '---:').join(' | ')} | ${c.map(() => '---:').join(' | ')} |`;
  const rows = r.phases.map((p) => `| ${p.name} | ${s.map((k) => (p.cpu[k] === undefined ? '' : `${p.cpu[k]}`)).join(' | ')} | ${c.map((k) => (p.clientCpu[k] === undefined ? '' : `${p.clientCpu[k]}`)).join(' | ')} |`);
  return [head, sep, ...rows].join('\n');
}

export function resultsSection(r: E2EResults): string {
  const v = r.ceilings.verify;
  const hello = r.ceilings.hello;
  const closed = r.closed.median;
  const lines: string[] = [];
  lines.push(`Written by \`npm run bench:e2e\` on ${r.date.slice(0, 10)} (${r.machine}). Server: ${r.options.frontThreads} front threads, speed bump 0, durable acks (LMDB fsync before every response), loopback; the client runs on the same ${r.cores} cores.${r.options.quick ? ' **Quick mode: short phases, not for quoting.**' : ''}`);
  lines.push('');
  lines.push(headlineTable(r, true));
  lines.push('');
  lines.push('Ceilings measured in the same run, before the server started:');
  lines.push('');
  lines.push(`- ed25519 verify with sodium-native: ${n(v.oneThread.perSecond)}/s on one thread (${v.oneThread.microsPerVerify} µs each); ${n(v.allCores.perSecond)}/s with ${v.allCores.threads} threads at once (${n(v.allCores.perThreadPerSecond)}/s per thread).`);
  lines.push(`- one durable LMDB commit of one 256-byte record (transactionSync + flushed, as the journal worker commits a batch), ${n(r.ceilings.durableCommit.count)} commits: p50 / p90 / p99 / p99.9 / max ${latencyCells(r.ceilings.durableCommit)}. Every durable acknowledgement waits for at least one.`);
  lines.push(`- uWebSockets.js hello-world POST, ${r.options.frontThreads} threads, ${hello.median.connections} connections: ${n(hello.median.throughputPerS)} req/s (runs ${hello.runs.map(n).join(', ')}); p50 ${us(hello.median.latency.p50Us)}, p99 ${us(hello.median.latency.p99Us)}; its CPU ${JSON.stringify(hello.cpu)} % of a core; client CPU ${(hello.median.clientCpuS / hello.median.elapsedS * 100).toFixed(0)} % of a core.`);
  lines.push('');
  lines.push('Signed-order latencies (p50 / p90 / p99 / p99.9 / max):');
  lines.push('');
  lines.push('| run | requests | throughput | all | by kind | statuses |');
  lines.push('| --- | ---: | ---: | --- | --- | --- |');
  const byKind = (x: LoadResult) => Object.entries(x.byKind).map(([k, s]) => `${k} ${us(s.p50Us)} / ${us(s.p99Us)}`).join('; ');
  r.unloaded.runs.forEach((x, i) => lines.push(`| unloaded ${i + 1} (1 connection, serial) | ${n(x.completed)} | ${n(x.throughputPerS)}/s | ${latencyCells(x.latency)} | ${byKind(x)} | ${statusText(x.statuses)} |`));
  lines.push(`| closed loop, median run (${closed.connections} connections; saturation: latency ≈ connections / throughput) | ${n(closed.completed)} | ${n(closed.throughputPerS)}/s | ${latencyCells(closed.latency)} | ${byKind(closed)} | ${statusText(closed.statuses)} |`);
  lines.push(`| open loop, ${n(r.open.targetRatePerS ?? 0)}/s target | ${n(r.open.completed)} | ${n(r.open.throughputPerS)}/s | ${latencyCells(r.open.latency)} | ${byKind(r.open)} | ${statusText(r.open.statuses)} |`);
  lines.push('');
  lines.push(`Open loop: latency counts from each request's intended send time (start + i / rate); ${n(r.open.lateSends ?? 0)} requests left more than 1 ms after their intended time (largest lag ${us(r.open.maxSendLagUs ?? 0)}), and that wait is included. Cancels answered 400 "Order not found" are orders another connection's taker filled first (expected in this flow).`);
  lines.push('');
  lines.push('WebSocket delivery (clock: wall-clock µs = performance.timeOrigin + performance.now() in both processes; T = engine time of the command, E = front thread time when the message was built; events leave only once durable):');
  lines.push('');
  lines.push('| run | stream | messages | engine T → received p50 / p90 / p99 / p99.9 / max | front E → received p50 / p99 |');
  lines.push('| --- | --- | ---: | --- | --- |');
  for (const [run, data] of [['closed loop (last run)', r.websocket.closedLoop], ['open loop', r.websocket.openLoop]] as const) {
    for (const kind of ['depth', 'trade', 'orderUpdate']) {
      const k = (data as Record<string, WsKind>)[kind];
      if (!k) continue;
      lines.push(`| ${run} | ${kind} | ${n(k.fromEngine.count)} | ${latencyCells(k.fromEngine)} | ${us(k.fromFront.p50Us)} / ${us(k.fromFront.p99Us)} |`);
    }
  }
  lines.push('');
  lines.push('CPU per thread, % of one core over the phase (server threads from /proc/<pid>/task/<tid>/stat, ids from the server\'s ready log line; "other" = V8/libuv/lmdb helper threads; machine busy = all processes on all cores from /proc/stat, foreign = busy − server − client, i.e. other processes sharing the machine, steal = taken by the hypervisor):');
  lines.push('');
  lines.push(cpuTable(r));
  lines.push('');
  lines.push('Full data: `bench/e2e-results.json`.');
  return lines.join('\n');
}

const RESULTS_BEGIN = '<!-- e2e:begin -->';
const RESULTS_END = '<!-- e2e:end -->';
const README_BEGIN = '<!-- e2e-table:begin -->';
const README_END = '<!-- e2e-table:end -->';

function replaceBetween(text: string, begin: string, end: string, body: string, heading: string): string {
  const a = text.indexOf(begin);
  const b = text.indexOf(end);
  const block = `${begin}\n${body}\n${end}`;
  if (a >= 0 && b > a) return text.slice(0, a) + block + text.slice(b + end.length);
  return `${text.replace(/\n*$/, '\n')}\n${heading}\n\n${block}\n`;
}

export function writeReport(root: string, r: E2EResults, write: boolean): void {
  const section = resultsSection(r);
  process.stdout.write(`\n${section}\n\n`);
  if (!write) return;
  writeFileSync(join(root, 'bench/e2e-results.json'), `${JSON.stringify(r, null, 2)}\n`);
  const resultsPath = join(root, 'bench/RESULTS.md');
  const results = readFileSync(resultsPath, 'utf8');
  writeFileSync(resultsPath, replaceBetween(results, RESULTS_BEGIN, RESULTS_END, section, '## End-to-end: signed orders over HTTP against the ceilings (bench/e2e)'));
  const readmePath = join(root, 'README.md');
  const readme = readFileSync(readmePath, 'utf8');
  const table = `Latest \`npm run bench:e2e\` (${r.date.slice(0, 10)}, ${r.machine}; ${r.options.frontThreads} front threads, client on the same machine):\n\n${headlineTable(r, false)}`;
  writeFileSync(readmePath, replaceBetween(readme, README_BEGIN, README_END, table, '## End-to-end figures'));
}
