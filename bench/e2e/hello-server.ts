// The HTTP ceiling: a uWebSockets.js "hello world" POST server with the same threading as the
// exchange's front (N worker threads, one App each, sharing the port). It reads the whole body
// and answers a small JSON object, nothing else: what the exchange's front would cost without
// signature checks, JSON parsing, the engine and the journal. Run as a child process by the
// load generator:  node dist/bench/e2e/hello-server.js <port> <threads> [relay]   (prints "ready").
//
// With `relay` it answers the way the exchange's front must, and still does nothing else: each
// front thread hands every request to a thread of its own (the engine's place) through a shared
// counter, waking it once per turn of its event loop (Atomics.notify at setImmediate, as the
// exchange's front wakes its engine), and answers only when that thread says the request is done
// (Atomics.waitAsync, as the exchange's front waits for its outbound ring), one turn later, with a
// body the size of an order's answer. That thread parks until woken and answers at once. It prints
// one JSON line, {"ready":true,"fronts":[OS thread ids]}, so that a benchmark can read each front
// thread's CPU apart from its relay thread's.

import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import uWS from 'uWebSockets.js';
import { osThreadId } from '../../engine/bus/thread-id.js';

/** Words of a relay's shared counters, a cache line apart: requests handed over, requests done. */
const HANDED = 0;
const DONE = 16;
/** The length of an order's answer on the exchange (a resting post-only order's JSON). */
const RELAY_BODY = JSON.stringify({
  id: '1234567890123', clientId: 10000001, createdAt: 1764300000000, executedQuantity: '0', executedQuoteQuantity: '0',
  orderType: 'Limit', postOnly: true, price: '149.99', quantity: '0.10', reduceOnly: null, selfTradePrevention: 'RejectTaker',
  side: 'Bid', status: 'New', symbol: 'SOL_USDC', timeInForce: 'GTC', triggerPrice: null, quoteQuantity: null,
  relatedOrderId: null, stopLossTriggerPrice: null, stopLossLimitPrice: null, takeProfitTriggerPrice: null, takeProfitLimitPrice: null,
});

// Node 20 has Atomics.waitAsync, but lib ES2022 does not declare it.
const atomics = Atomics as unknown as {
  waitAsync(array: Int32Array, index: number, value: number, timeoutMs: number):
    { async: false; value: 'not-equal' | 'timed-out' } | { async: true; value: Promise<'ok' | 'timed-out'> };
};

type Role = { role: 'front'; port: number; relay: SharedArrayBuffer | null } | { role: 'relay'; relay: SharedArrayBuffer };

if (isMainThread) {
  const port = Number(process.argv[2]);
  const threads = Number(process.argv[3] ?? 1);
  const relay = process.argv[4] === 'relay';
  const fronts: number[] = [];
  for (let i = 0; i < threads; i++) {
    const sab = relay ? new SharedArrayBuffer(32 * 4) : null;
    if (sab) startWorker({ role: 'relay', relay: sab });
    startWorker({ role: 'front', port, relay: sab }, (tid) => {
      fronts.push(tid);
      if (fronts.length === threads) process.stdout.write(relay ? `${JSON.stringify({ ready: true, fronts })}\n` : 'ready\n');
    });
  }
  process.on('SIGTERM', () => process.exit(0));
} else {
  const data = workerData as Role;
  if (data.role === 'relay') relayLoop(new Int32Array(data.relay));
  else serve(data.port, data.relay === null ? null : new Int32Array(data.relay));
}

function startWorker(role: Role, onListening?: (tid: number) => void): void {
  const worker = new Worker(new URL(import.meta.url), { workerData: role });
  worker.on('message', (m: string) => {
    if (m === 'fail') {
      process.stderr.write(`cannot listen on ${role.role === 'front' ? role.port : 0}\n`);
      process.exit(1);
    }
    onListening?.(Number(m));
  });
  worker.on('error', (error) => {
    process.stderr.write(`${String(error)}\n`);
    process.exit(1);
  });
}

/** The relay thread: parks until requests are handed over, marks them done at once, wakes the front. */
function relayLoop(words: Int32Array): void {
  let seen = 0;
  for (;;) {
    Atomics.wait(words, HANDED, seen);
    seen = Atomics.load(words, HANDED);
    Atomics.store(words, DONE, seen);
    Atomics.notify(words, DONE);
  }
}

function serve(port: number, words: Int32Array | null): void {
  const app = uWS.App();
  if (words === null) {
    app.post('/*', (res) => {
      let aborted = false;
      res.onAborted(() => {
        aborted = true;
      });
      res.onData((_chunk, isLast) => {
        if (isLast && !aborted) res.cork(() => res.writeHeader('Content-Type', 'application/json').end('{"ok":true}'));
      });
    });
  } else {
    const waiting: Array<{ res: uWS.HttpResponse; n: number; aborted: boolean }> = [];
    let handed = 0;
    let wakeQueued = false;
    const wake = (): void => {
      wakeQueued = false;
      Atomics.notify(words, HANDED, 1);
    };
    app.post('/*', (res) => {
      const request = { res, n: 0, aborted: false };
      res.onAborted(() => {
        request.aborted = true;
      });
      res.onData((_chunk, isLast) => {
        if (!isLast || request.aborted) return;
        request.n = ++handed;
        waiting.push(request);
        Atomics.store(words, HANDED, handed);
        if (!wakeQueued) {
          wakeQueued = true;
          setImmediate(wake);
        }
      });
    });
    void answerLoop(words, waiting);
  }
  app.listen('127.0.0.1', port, (socket) => parentPort!.postMessage(socket ? String(osThreadId() ?? 0) : 'fail'));
}

/** Answers every waiting request the relay thread has marked done, each time it says so. */
async function answerLoop(words: Int32Array, waiting: Array<{ res: uWS.HttpResponse; n: number; aborted: boolean }>): Promise<void> {
  let done = 0;
  for (;;) {
    const wait = atomics.waitAsync(words, DONE, done, 1000);
    if (wait.async) await wait.value;
    done = Atomics.load(words, DONE);
    while (waiting.length > 0 && waiting[0].n <= done) {
      const { res, aborted } = waiting.shift()!;
      if (!aborted) res.cork(() => res.writeHeader('Content-Type', 'application/json').end(RELAY_BODY));
    }
  }
}
