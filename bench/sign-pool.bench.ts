// The load generator's signing: a piscina pool of worker threads (bench/e2e/sign-pool.ts) against
// signing in the generator's own thread (bench/e2e/flow.ts ConnectionFlow.next), in the same run.
//
// Both sign the same e2e market-maker flow (post-only bid and ask, a crossing IOC, two cancels)
// with node:crypto ed25519 over 24 accounts, REQUESTS requests per run; the two alternate, RUNS
// runs each after one warm-up of each. Measured: wall time to have every request's bytes ready,
// median of the runs, and the ratio in-thread / pool per round (the pool's gain), beside the
// process CPU time each used (a pool cannot lower it: it spreads it over the cores).
// Gate: the pool's bytes verify (a sample checked with node:crypto) and equal, request for
// request, what in-thread signing gives for the same signing strings.
//
// Run: `npx tsc -p tsconfig.json && node dist/bench/sign-pool.bench.js` (writes its section of
// bench/RESULTS.md between the sign-pool markers; --no-write prints only).
// Env: SIGN_POOL_BENCH_REQUESTS (20,000), SIGN_POOL_BENCH_RUNS (5).

import { createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ConnectionFlow, DEFAULT_FLOW_MARKETS, Signer, signedRequest, type Account, type UnsignedRequest } from './e2e/flow.js';
import { SigningPool } from './e2e/sign-pool.js';

const REQUESTS = Number(process.env.SIGN_POOL_BENCH_REQUESTS ?? 20_000);
const RUNS = Number(process.env.SIGN_POOL_BENCH_RUNS ?? 5);
const HOST = '127.0.0.1:8080';
const RESULTS = fileURLToPath(new URL('../../bench/RESULTS.md', import.meta.url));
const BEGIN = '<!-- sign-pool:begin -->';
const END = '<!-- sign-pool:end -->';

function account(accountId: number): Account {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const x = publicKey.export({ format: 'jwk' }).x!;
  const d = privateKey.export({ format: 'jwk' }).d!;
  return { accountId, publicKey: Buffer.from(x, 'base64url').toString('base64'), secretKey: Buffer.from(d, 'base64url').toString('base64') };
}

/** 64 connections' flows over 16 makers and 8 takers, as bench:e2e builds them. */
function flows(): ConnectionFlow[] {
  const signers = Array.from({ length: 24 }, (_, i) => new Signer(account(i + 1)));
  return Array.from({ length: 64 }, (_, i) => new ConnectionFlow(signers[i % 16], signers[16 + (i % 8)], DEFAULT_FLOW_MARKETS[i % 3], 1 + Math.floor(i / 3), HOST));
}

function unsignedBatch(all: ConnectionFlow[]): UnsignedRequest[] {
  return all.flatMap((flow) => flow.nextUnsigned(Math.ceil(REQUESTS / all.length)));
}

interface Timing { wallMs: number; cpuMs: number }

async function timed(run: () => Promise<unknown> | unknown): Promise<Timing> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await run();
  const used = process.cpuUsage(cpu);
  return { wallMs: performance.now() - started, cpuMs: (used.user + used.system) / 1000 };
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];

/** The pool's bytes for a batch equal in-thread signing's, and a sample verifies. */
async function check(pool: SigningPool, batch: UnsignedRequest[]): Promise<void> {
  const pooled = await pool.sign(batch, HOST);
  batch.forEach((request, i) => {
    const local = signedRequest(request, HOST, request.signer.signature(request.message));
    if (!local.bytes.equals(pooled[i].bytes)) throw new Error(`request ${i}: the pool's bytes differ from in-thread signing`);
  });
  for (const i of [0, Math.floor(batch.length / 2), batch.length - 1]) {
    const text = pooled[i].bytes.toString('utf8');
    const signature = /X-Signature: (\S+)\r\n/.exec(text)![1];
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(batch[i].signer.account.publicKey, 'base64').toString('base64url') }, format: 'jwk' });
    if (!verify(null, Buffer.from(batch[i].message), key, Buffer.from(signature, 'base64'))) throw new Error(`request ${i}: the pool's signature does not verify`);
  }
}

export async function runSignPoolBench(): Promise<string> {
  const all = flows();
  const pool = new SigningPool();
  try {
    await check(pool, unsignedBatch(all).slice(0, 500));
    const local: Timing[] = [];
    const pooled: Timing[] = [];
    for (let round = -1; round < RUNS; round++) {
      const order = round % 2 === 0 ? ['local', 'pool'] : ['pool', 'local'];
      for (const which of order) {
        const batch = unsignedBatch(all);
        const t = which === 'local'
          ? await timed(() => batch.map((r) => signedRequest(r, HOST, r.signer.signature(r.message))))
          : await timed(() => pool.sign(batch, HOST));
        if (round >= 0) (which === 'local' ? local : pooled).push(t);
      }
    }
    const ratios = local.map((t, i) => t.wallMs / pooled[i].wallMs);
    const perSecond = (t: number) => Math.round((REQUESTS / t) * 1000).toLocaleString('en-US');
    return [
      `${REQUESTS.toLocaleString('en-US')} requests per run, ${RUNS} runs each, alternating; pool of ${pool.threads} threads (availableParallelism ${availableParallelism()}).`,
      '',
      '| signing | wall ms, median (range) | requests/s | process CPU ms, median |',
      '| --- | --- | ---: | ---: |',
      `| in the generator's thread | ${median(local.map((t) => t.wallMs)).toFixed(0)} (${Math.min(...local.map((t) => t.wallMs)).toFixed(0)}–${Math.max(...local.map((t) => t.wallMs)).toFixed(0)}) | ${perSecond(median(local.map((t) => t.wallMs)))} | ${median(local.map((t) => t.cpuMs)).toFixed(0)} |`,
      `| piscina pool | ${median(pooled.map((t) => t.wallMs)).toFixed(0)} (${Math.min(...pooled.map((t) => t.wallMs)).toFixed(0)}–${Math.max(...pooled.map((t) => t.wallMs)).toFixed(0)}) | ${perSecond(median(pooled.map((t) => t.wallMs)))} | ${median(pooled.map((t) => t.cpuMs)).toFixed(0)} |`,
      '',
      `In-thread / pool wall time per round: ${ratios.map((r) => r.toFixed(2)).join(', ')} (median **${median(ratios).toFixed(2)}×**). Result: PASS (the pool's bytes equal in-thread signing's; sampled signatures verify).`,
    ].join('\n');
  } finally {
    await pool.close();
  }
}

function writeSection(body: string, machine: string): void {
  const section = `${BEGIN}\n\nMeasured ${new Date().toISOString().slice(0, 10)} (${machine}) with \`npx tsc -p tsconfig.json && node dist/bench/sign-pool.bench.js\`.\n\n${body.trim()}\n\n${END}`;
  let text = readFileSync(RESULTS, 'utf8');
  const begin = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (begin >= 0 && end > begin) text = text.slice(0, begin) + section + text.slice(end + END.length);
  else text = `${text.trimEnd()}\n\n## The load generator's signing: a piscina pool against one thread (bench/sign-pool.bench.ts)\n\n${section}\n`;
  writeFileSync(RESULTS, text);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}, load average ${loadavg()[0].toFixed(2)} at start`;
  const body = await runSignPoolBench();
  console.log(body);
  if (!process.argv.includes('--no-write')) writeSection(body, machine);
}
