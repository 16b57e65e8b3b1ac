// The load generator's signing pool: a piscina pool of worker threads (sign-worker.ts) that signs
// the requests of a run before it starts, in batches, so that presigning tens of thousands of
// requests uses every core instead of one (bench/sign-pool.bench.ts measures it against signing
// in this thread).

import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { signedRequest, type SignedRequest, type UnsignedRequest } from './flow.js';
import type { SignTask } from './sign-worker.js';

/** Requests per task: large enough that the hand-off costs little, small enough to spread over the threads. */
const BATCH = 500;

export class SigningPool {
  private readonly pool: Piscina;

  constructor(threads = availableParallelism()) {
    this.pool = new Piscina({ filename: new URL('./sign-worker.js', import.meta.url).href, minThreads: threads, maxThreads: threads });
  }

  get threads(): number {
    return this.pool.threads.length;
  }

  /** Signs every request (each batch on some thread of the pool); the result keeps the order. */
  async sign(requests: UnsignedRequest[], host: string): Promise<SignedRequest[]> {
    const tasks: Promise<string[]>[] = [];
    for (let start = 0; start < requests.length; start += BATCH) tasks.push(this.pool.run(taskOf(requests.slice(start, start + BATCH))));
    const signatures = (await Promise.all(tasks)).flat();
    return requests.map((request, i) => signedRequest(request, host, signatures[i]));
  }

  private closed = false;

  /** Stops the threads (again: nothing). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.destroy();
  }
}

function taskOf(batch: UnsignedRequest[]): SignTask {
  const index = new Map<string, number>();
  const keys: Array<[string, string]> = [];
  const items: Array<[number, string]> = batch.map((request) => {
    const account = request.signer.account;
    let at = index.get(account.publicKey);
    if (at === undefined) {
      at = keys.length;
      index.set(account.publicKey, at);
      keys.push([account.publicKey, account.secretKey]);
    }
    return [at, request.message];
  });
  return { keys, items };
}
