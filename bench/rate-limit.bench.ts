// requestToRateLimitVerdict: what the request rate limits add to each request, next to the
// signature check they protect.
//
//   request (client address, X-API-Key)
//        │
//        ▼
//   ┌──────────────────────────┬───────────────────────────────┬─────────────────────────────┐
//   │ RateLimits.takeAddress   │ RateLimits.peekKey + takeKey  │ SignatureVerifier.verify    │
//   │ (hash 4 bytes, lock,     │ (hash a 44-char key twice,    │ (sodium backend)            │
//   │ probe, GCRA, unlock)     │ two table visits)             │ ← baseline: the cost saved  │
//   └──────────────────────────┴───────────────────────────────┴─────────────────────────────┘
//
// 10,000 distinct addresses and keys are cycled so the table is visited as a busy server would
// visit it; the limits are set too high to refuse, and every task checks its verdict, so the
// measured path is the allowed one a normal request takes. Run:
// `npx tsc -p tsconfig.json && node dist/bench/rate-limit.bench.js` (RATE_BENCH_TIME_MS sets the
// time per task, default 2000).

import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Bench } from 'tinybench';
import { SignatureVerifier } from '../src/auth.js';
import { RateLimits, createRateLimitTables } from '../src/front/rate-limits.js';

interface Sodium {
  crypto_sign_seed_keypair(pk: Uint8Array, sk: Uint8Array, seed: Uint8Array): void;
  crypto_sign_detached(sig: Uint8Array, m: Uint8Array, sk: Uint8Array): void;
}

const sodium = createRequire(import.meta.url)('sodium-native') as Sodium;
const CLIENTS = 10_000;
const MESSAGE = 'instruction=orderExecute&orderType=Limit&price=4000&quantity=0.001&side=Bid&symbol=ETH_USDC&timestamp=1750793021519&window=5000';

function check(ok: boolean, name: string): void {
  if (!ok) throw new Error(`${name}: unexpected verdict`);
}

export async function runRateLimitBench(): Promise<string> {
  const timeMs = Number(process.env.RATE_BENCH_TIME_MS ?? 2000);
  const limits = new RateLimits({
    addressRequestsPerS: 1_000_000, addressRequestBurst: 1_000_000, keyRequestsPerS: 1_000_000, keyRequestBurst: 1_000_000,
    wsConnectionsPerAddress: 0, wsMessagesPerS: 0,
  }, createRateLimitTables());
  const addresses = Array.from({ length: CLIENTS }, (_, i) => new Uint8Array([10, (i >> 16) & 255, (i >> 8) & 255, i & 255]).buffer);
  const keys = Array.from({ length: CLIENTS }, (_, i) => Buffer.alloc(32, 0).fill(i & 255, 0, 16).fill((i >> 8) & 255, 16).toString('base64'));
  const publicKey = Buffer.alloc(32);
  const secretKey = Buffer.alloc(64);
  sodium.crypto_sign_seed_keypair(publicKey, secretKey, Buffer.alloc(32, 7));
  const signature = Buffer.alloc(64);
  sodium.crypto_sign_detached(signature, Buffer.from(MESSAGE), secretKey);
  const verifier = new SignatureVerifier({ backend: 'sodium' });
  const publicKeyB64 = publicKey.toString('base64');
  const signatureB64 = signature.toString('base64');

  let i = 0;
  let now = Date.now();
  const next = (): number => {
    i = (i + 1) % CLIENTS;
    if (i === 0) now = Date.now();
    return i;
  };
  const bench = new Bench({ name: 'requestToRateLimitVerdict', time: timeMs, throws: true });
  bench
    .add('RateLimits.takeAddress (IPv4)', () => check(limits.takeAddress(addresses[next()], now) === null, 'address'))
    .add('RateLimits.peekKey + takeKey', () => {
      const key = keys[next()];
      check(limits.peekKey(key, now) === null && limits.takeKey(key, now) === null, 'key');
    })
    .add('SignatureVerifier.verify, sodium (baseline)', () => check(verifier.verify(publicKeyB64, signatureB64, MESSAGE), 'verify'));
  await bench.run();

  const lines = [
    `### requestToRateLimitVerdict (${CLIENTS.toLocaleString('en-US')} clients cycled, ${timeMs} ms per task)`,
    '',
    '| case | ops/s | mean µs | p99 µs | share of one verify |',
    '| --- | ---: | ---: | ---: | ---: |',
  ];
  const baseline = bench.tasks[bench.tasks.length - 1].result;
  if (baseline.state !== 'completed') throw new Error('baseline did not complete');
  for (const task of bench.tasks) {
    const result = task.result;
    if (result.state !== 'completed') throw new Error(`${task.name}: ${result.state}`);
    const meanUs = result.latency.mean * 1000;
    lines.push(
      `| ${task.name} | ${Math.round(1000 / result.latency.mean).toLocaleString('en-US')} | ${meanUs.toFixed(2)} | ` +
        `${((result.latency.p99 ?? Number.NaN) * 1000).toFixed(2)} | ${((100 * result.latency.mean) / baseline.latency.mean).toFixed(1)} % |`,
    );
  }
  return lines.join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(await runRateLimitBench());
}
