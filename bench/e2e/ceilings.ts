// The ceilings the end-to-end figures are compared with, measured in the same run on the same
// machine: ed25519 verifications per second with the server's library (sodium-native), on one
// thread and on every core at once (verify-worker.ts).

import { Worker } from 'node:worker_threads';

export interface VerifyCeiling {
  threads: number;
  /** Verifications per second of all threads together. */
  perSecond: number;
  perThreadPerSecond: number;
  microsPerVerify: number;
}

export async function measureVerify(threads: number, durationMs: number): Promise<VerifyCeiling> {
  const startAt = Date.now() + 300;
  const results = await Promise.all(Array.from({ length: threads }, () => new Promise<{ count: number; seconds: number }>((resolve, reject) => {
    const worker = new Worker(new URL('./verify-worker.js', import.meta.url), { workerData: { durationMs, startAt } });
    worker.once('message', (m: { count: number; seconds: number }) => {
      resolve(m);
      void worker.terminate();
    });
    worker.once('error', reject);
  })));
  const perSecond = results.reduce((sum, r) => sum + r.count / r.seconds, 0);
  return {
    threads,
    perSecond: Math.round(perSecond),
    perThreadPerSecond: Math.round(perSecond / threads),
    microsPerVerify: Math.round((1e6 / (perSecond / threads)) * 10) / 10,
  };
}
