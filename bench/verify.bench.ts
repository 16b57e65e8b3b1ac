// signingStringToEd25519Verify: what one signed request costs in signature checking, per library.
//
//   signing string (~200 B, an orderExecute like ccxt sends)
//        │  UTF-8 bytes + 64-byte signature + 32-byte public key
//        ▼
//   ┌───────────────────────────────┬────────────────────────┬──────────────────────────┐
//   │ node:crypto verify            │ sodium-native          │ @noble/ed25519 verify    │
//   │ (OpenSSL, KeyObject cached)   │ crypto_sign_verify_    │ (pure JS, sync, sha512   │
//   │ ← baseline                    │ detached (libsodium)   │ from @noble/hashes)      │
//   └───────────────────────────────┴────────────────────────┴──────────────────────────┘
//        plus the server's own path: SignatureVerifier.verify (base64 strings in, key cache,
//        canonical base64 check, message encoding) with each native backend.
//
// Why: signature checking is ~90 % of the CPU of a signed order (research/performance-anchors.md),
// so the library choice in src/auth.ts is made from this table. Every task checks that its
// verification returned true, so a fast wrong verifier cannot win. Timings live here, never in
// tests. Run: `npx tsc -p tsconfig.json && node dist/bench/verify.bench.js` (VERIFY_BENCH_TIME_MS
// sets the time per task, default 2000).

import { createPublicKey, verify as cryptoVerify } from 'node:crypto';
import { createRequire } from 'node:module';
import { cpus } from 'node:os';
import { pathToFileURL } from 'node:url';
import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import { Bench } from 'tinybench';
import { SignatureVerifier } from '../src/auth.js';

ed.hashes.sha512 = sha512;

interface Sodium {
  crypto_sign_seed_keypair(pk: Uint8Array, sk: Uint8Array, seed: Uint8Array): void;
  crypto_sign_detached(sig: Uint8Array, m: Uint8Array, sk: Uint8Array): void;
  crypto_sign_verify_detached(sig: Uint8Array, m: Uint8Array, pk: Uint8Array): boolean;
}

const require = createRequire(import.meta.url);
const sodium = require('sodium-native') as Sodium;

const SIGNING_STRING =
  'instruction=orderExecute&clientId=55555&orderType=Limit&postOnly=true&price=4000&quantity=0.001' +
  '&selfTradePrevention=RejectTaker&side=Bid&symbol=ETH_USDC&timeInForce=GTC&timestamp=1750793021519&window=5000';

const NODE_CRYPTO = 'node:crypto verify (KeyObject cached)';

function check(ok: boolean, name: string): void {
  if (!ok) throw new Error(`${name}: verification returned false`);
}

export async function runVerifyBench(): Promise<string> {
  const timeMs = Number(process.env.VERIFY_BENCH_TIME_MS ?? 2000);
  const publicKey = Buffer.alloc(32);
  const secretKey = Buffer.alloc(64);
  sodium.crypto_sign_seed_keypair(publicKey, secretKey, Buffer.alloc(32, 7));
  const message = Buffer.from(SIGNING_STRING, 'utf8');
  const signature = Buffer.alloc(64);
  sodium.crypto_sign_detached(signature, message, secretKey);
  const publicKeyB64 = publicKey.toString('base64');
  const signatureB64 = signature.toString('base64');
  const keyObject = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: publicKey.toString('base64url') }, format: 'jwk' });
  const verifierSodium = new SignatureVerifier({ backend: 'sodium' });
  const verifierNode = new SignatureVerifier({ backend: 'node' });

  const bench = new Bench({ name: 'signingStringToEd25519Verify', time: timeMs, throws: true });
  bench
    .add(NODE_CRYPTO, () => check(cryptoVerify(null, message, keyObject, signature), NODE_CRYPTO))
    .add('sodium-native crypto_sign_verify_detached', () =>
      check(sodium.crypto_sign_verify_detached(signature, message, publicKey), 'sodium-native'),
    )
    .add('@noble/ed25519 verify (sync)', () => check(ed.verify(signature, message, publicKey), '@noble/ed25519'))
    .add('SignatureVerifier.verify, sodium backend', () =>
      check(verifierSodium.verify(publicKeyB64, signatureB64, SIGNING_STRING), 'SignatureVerifier sodium'),
    )
    .add('SignatureVerifier.verify, node backend', () =>
      check(verifierNode.verify(publicKeyB64, signatureB64, SIGNING_STRING), 'SignatureVerifier node'),
    );
  await bench.run();

  const rows: Array<{ name: string; opsPerSec: number; meanUs: number; p50Us: number; p99Us: number; samples: number }> = [];
  for (const task of bench.tasks) {
    const result = task.result;
    if (result.state !== 'completed') throw new Error(`${task.name}: ${result.state}`);
    rows.push({
      name: task.name,
      opsPerSec: 1000 / result.latency.mean,
      meanUs: result.latency.mean * 1000,
      p50Us: (result.latency.p50 ?? Number.NaN) * 1000,
      p99Us: (result.latency.p99 ?? Number.NaN) * 1000,
      samples: result.latency.samplesCount,
    });
  }
  const baseline = rows.find((row) => row.name === NODE_CRYPTO);
  if (baseline === undefined) throw new Error('baseline missing');

  const lines = [
    `### signingStringToEd25519Verify (${SIGNING_STRING.length}-byte message, ${timeMs} ms per task)`,
    '',
    `Node ${process.version}, OpenSSL ${process.versions.openssl}, ${cpus()[0]?.model ?? 'unknown CPU'} × ${cpus().length}`,
    '',
    '| case | ops/s | mean µs | p50 µs | p99 µs | samples | speed vs node:crypto |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const row of rows) {
    lines.push(
      `| ${row.name} | ${Math.round(row.opsPerSec).toLocaleString('en-US')} | ${row.meanUs.toFixed(1)} | ${row.p50Us.toFixed(1)} | ` +
        `${row.p99Us.toFixed(1)} | ${row.samples} | ${(row.opsPerSec / baseline.opsPerSec).toFixed(2)}x |`,
    );
  }
  return lines.join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(await runVerifyBench());
}
