// The signature ceiling: one thread verifying ed25519 signatures with the library the server
// uses (sodium-native crypto_sign_verify_detached) for a fixed time, on a ~200-byte orderExecute
// signing string like the load generator's. Started 1× (per core) and N× at once (all cores)
// by ceilings.ts. Every result is checked, so a failing verifier cannot look fast.

import { parentPort, workerData } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';

interface Sodium {
  crypto_sign_seed_keypair(pk: Uint8Array, sk: Uint8Array, seed: Uint8Array): void;
  crypto_sign_detached(sig: Uint8Array, m: Uint8Array, sk: Uint8Array): void;
  crypto_sign_verify_detached(sig: Uint8Array, m: Uint8Array, pk: Uint8Array): boolean;
}

const sodium = createRequire(import.meta.url)('sodium-native') as Sodium;
const { durationMs, startAt } = workerData as { durationMs: number; startAt: number };

const message = Buffer.from(
  'instruction=orderExecute&clientId=1234567&orderType=Limit&postOnly=true&price=149.99&quantity=0.10' +
  '&side=Bid&symbol=SOL_USDC&timeInForce=GTC&timestamp=1795330667967&window=60000', 'utf8');
const publicKey = Buffer.alloc(32);
const secretKey = Buffer.alloc(64);
sodium.crypto_sign_seed_keypair(publicKey, secretKey, Buffer.alloc(32, 3));
const signature = Buffer.alloc(64);
sodium.crypto_sign_detached(signature, message, secretKey);

// Start together with the sibling threads (a shared wall-clock instant), so they overlap.
while (Date.now() < startAt) { /* wait for the common start */ }
const t0 = performance.now();
let count = 0;
while (performance.now() - t0 < durationMs) {
  for (let i = 0; i < 100; i++) {
    if (!sodium.crypto_sign_verify_detached(signature, message, publicKey)) throw new Error('verification failed');
  }
  count += 100;
}
parentPort!.postMessage({ count, seconds: (performance.now() - t0) / 1000 });
