// The HTTP ceiling: a uWebSockets.js "hello world" POST server with the same threading as the
// exchange's front (N worker threads, one App each, sharing the port). It reads the whole body
// and answers a small JSON object, nothing else: what the exchange's front would cost without
// signature checks, JSON parsing, the engine and the journal. Run as a child process by the
// load generator:  node dist/bench/e2e/hello-server.js <port> <threads>   (prints "ready").

import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import uWS from 'uWebSockets.js';

if (isMainThread) {
  const port = Number(process.argv[2]);
  const threads = Number(process.argv[3] ?? 1);
  let ready = 0;
  for (let i = 0; i < threads; i++) {
    const worker = new Worker(new URL(import.meta.url), { workerData: { port } });
    worker.on('message', (m: string) => {
      if (m === 'fail') {
        process.stderr.write(`cannot listen on ${port}\n`);
        process.exit(1);
      }
      if (++ready === threads) process.stdout.write('ready\n');
    });
    worker.on('error', (error) => {
      process.stderr.write(`${String(error)}\n`);
      process.exit(1);
    });
  }
  process.on('SIGTERM', () => process.exit(0));
} else {
  const { port } = workerData as { port: number };
  uWS.App()
    .post('/*', (res) => {
      let aborted = false;
      res.onAborted(() => {
        aborted = true;
      });
      res.onData((_chunk, isLast) => {
        if (isLast && !aborted) res.cork(() => res.writeHeader('Content-Type', 'application/json').end('{"ok":true}'));
      });
    })
    .listen('127.0.0.1', port, (socket) => parentPort!.postMessage(socket ? 'ok' : 'fail'));
}
