// WebSocket subscribers of the load generator, in their own worker thread so that timestamping
// stream messages does not wait behind the HTTP driver's event loop (nor delay it).
//
// Each socket subscribes to depth.<m> and trade.<m> of every market; private sockets also
// subscribe to account.orderUpdate of one maker account each (signed `subscribe`). For every
// message it records, per stream kind:
//
//   engine → receive   now − data.T (the engine's time stamp of the command that caused the event)
//   front  → receive   now − data.E (the front thread's time when it built the message)
//
// Clock: both stamps come from the server's threads as (performance.timeOrigin + performance.now())
// in µs, i.e. wall-clock time of that process's start plus a monotonic offset; "now" here is taken
// the same way in this process. Same machine, so the clocks agree to within the wall-clock reading
// made at each process's start (µs); a clock step between the two starts would show as an offset.
// engine → receive includes the journal's group commit (events leave only once durable).
//
// Messages from the parent: {type:'reset'} clears the histograms (phase start),
// {type:'report'} answers with {type:'report', ...summaries, counts}.

import { parentPort, workerData } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { readlinkSync } from 'node:fs';
import WebSocket from 'ws';
import { LatencyHistogram } from './histogram.js';
import { Signer, type Account } from './flow.js';

export interface SubscriberData {
  url: string;
  symbols: string[];
  publicSockets: number;
  privateAccounts: Account[];
}

const KINDS = ['depth', 'trade', 'orderUpdate'] as const;

function nowUs(): number {
  return (performance.timeOrigin + performance.now()) * 1000;
}

function threadId(): number | null {
  try {
    return Number(readlinkSync('/proc/thread-self').split('/').pop());
  } catch {
    return null;
  }
}

async function main(): Promise<void> {
  const data = workerData as SubscriberData;
  const fromEngine = KINDS.map(() => new LatencyHistogram());
  const fromFront = KINDS.map(() => new LatencyHistogram());
  let errors: string[] = [];
  const sockets: WebSocket[] = [];

  const onMessage = (raw: WebSocket.RawData): void => {
    const now = nowUs();
    let message: { stream?: string; data?: { T?: number; E?: number }; error?: unknown };
    try {
      message = JSON.parse(raw.toString());
    } catch {
      return;
    }
    if (message.error !== undefined) {
      if (errors.length < 5) errors.push(JSON.stringify(message));
      return;
    }
    const stream = message.stream ?? '';
    const kind = stream.startsWith('depth.') ? 0 : stream.startsWith('trade.') ? 1 : stream.startsWith('account.orderUpdate') ? 2 : -1;
    if (kind < 0 || !message.data) return;
    if (typeof message.data.T === 'number') fromEngine[kind].record((now - message.data.T) * 1000);
    if (typeof message.data.E === 'number') fromFront[kind].record((now - message.data.E) * 1000);
  };

  const open = (params: string[], account?: Account): Promise<void> =>
    new Promise((resolve, reject) => {
      const ws = new WebSocket(data.url, { perMessageDeflate: false });
      sockets.push(ws);
      ws.once('error', reject);
      ws.once('open', () => {
        const request: Record<string, unknown> = { method: 'SUBSCRIBE', params };
        if (account) {
          const timestamp = Date.now();
          const signer = new Signer(account);
          request.signature = [account.publicKey, signer.signature(Signer.signingString('subscribe', {}, timestamp, 5000)), String(timestamp), '5000'];
        }
        ws.send(JSON.stringify(request));
        resolve();
      });
      ws.on('message', onMessage);
    });

  const publicStreams = data.symbols.flatMap((s) => [`depth.${s}`, `trade.${s}`]);
  for (let i = 0; i < data.publicSockets; i++) await open(publicStreams);
  for (const account of data.privateAccounts) await open(['account.orderUpdate'], account);

  parentPort!.on('message', (message: { type: string }) => {
    if (message.type === 'reset') {
      for (const h of [...fromEngine, ...fromFront]) h.reset();
      errors = [];
    } else if (message.type === 'report') {
      const report: Record<string, unknown> = { type: 'report', errors };
      KINDS.forEach((name, i) => {
        report[name] = { fromEngine: fromEngine[i].summary(), fromFront: fromFront[i].summary() };
      });
      parentPort!.postMessage(report);
    } else if (message.type === 'stop') {
      for (const ws of sockets) ws.terminate();
      parentPort!.close();
    }
  });
  parentPort!.postMessage({ type: 'ready', tid: threadId() });
}

main().catch((error: unknown) => {
  parentPort!.postMessage({ type: 'fatal', message: String(error) });
});
