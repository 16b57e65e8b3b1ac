// The ceilings the end-to-end figures are compared with, measured in the same run on the same
// machine: ed25519 verifications per second with the server's library (sodium-native), on one
// thread and on every core at once (verify-worker.ts), and the latency of one durable LMDB commit
// (the floor under every durable acknowledgement).

import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { open } from 'lmdb';
import { LatencyHistogram, type HistogramSummary } from './histogram.js';

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

/**
 * The durability floor: latency of one LMDB commit of one 256-byte record, synchronous and
 * flushed to disk, as the journal worker makes it (transactionSync on the calling thread, then
 * `flushed`), in a fresh environment under `dir` (the same file system as the server's data
 * directory). Every durable acknowledgement waits for at least one of these.
 */
export async function measureDurableCommit(dir: string, commits: number): Promise<HistogramSummary> {
  const root = open({ path: join(dir, 'fsync-probe'), maxDbs: 2 });
  const db = root.openDB<Buffer, Buffer>({ name: 'probe', keyEncoding: 'binary', encoding: 'binary' });
  const value = Buffer.alloc(256, 7);
  const histogram = new LatencyHistogram();
  try {
    for (let i = 0; i < commits + 20; i++) {
      const key = Buffer.alloc(8);
      key.writeBigUInt64BE(BigInt(i + 1));
      const t0 = performance.now();
      root.transactionSync(() => {
        void db.put(key, value);
      });
      await db.flushed;
      if (i >= 20) histogram.record((performance.now() - t0) * 1e6);
    }
  } finally {
    await root.close();
  }
  return histogram.summary();
}
