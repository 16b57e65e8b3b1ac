// The worker side of bench/ring.bench.ts: one job per worker, chosen by workerData.kind. Each
// consumer does the same work per 64-byte message whatever the transport: it reads all 16 words
// and folds them into an order-sensitive checksum, which the main thread compares with the value
// it expects, so a transport that drops, reorders or tears messages cannot post a good figure.
//
// Consumers of the rings spin for a few empty polls and then park, like the engine's idle
// strategy; the round-trip jobs choose park or spin explicitly.

import { parentPort, workerData } from 'node:worker_threads';
import { InboundRing, OutboundRing } from '../engine/bus/ring.js';

export const MESSAGE_BYTES = 64;
export const MESSAGE_WORDS = MESSAGE_BYTES / 4;
const SPIN_POLLS = 256;
const PARK_MS = 100;
const BATCH_MAX = 256;

export type RingWorkerJob =
  | { kind: 'inbound-throughput'; sab: SharedArrayBuffer; count: number }
  | { kind: 'outbound-throughput'; sab: SharedArrayBuffer; count: number }
  | { kind: 'post-throughput'; count: number; ackEvery: number; perPost: number }
  | { kind: 'ring-echo'; inboundSab: SharedArrayBuffer; outboundSab: SharedArrayBuffer; count: number; park: boolean }
  | { kind: 'post-echo'; count: number };

export interface RingWorkerDone { type: 'done'; checksum: number; received: number }

/** The checksum both sides compute: order-sensitive over the first and last word of each message. */
export function foldChecksum(checksum: number, firstWord: number, lastWord: number): number {
  return (Math.imul(checksum, 31) + firstWord + lastWord) | 0;
}

/** Reads a whole message (all 16 words, as a real consumer would) and folds it in. */
function foldMessage(checksum: number, view: DataView, offset: number): number {
  let last = 0;
  for (let i = 0; i < MESSAGE_WORDS; i++) last = view.getUint32(offset + i * 4, true);
  return foldChecksum(checksum, view.getUint32(offset, true), last);
}

function inboundThroughput(sab: SharedArrayBuffer, count: number): RingWorkerDone {
  const ring = InboundRing.attach(sab);
  const view = ring.view;
  let checksum = 0;
  let received = 0;
  let idlePolls = 0;
  const onSlot = (offset: number): void => { checksum = foldMessage(checksum, view, offset); };
  parentPort!.postMessage({ type: 'ready' });
  while (received < count) {
    const n = ring.poll(onSlot, BATCH_MAX);
    received += n;
    if (n > 0) idlePolls = 0;
    else if (++idlePolls > SPIN_POLLS) ring.waitForPublish(PARK_MS);
  }
  return { type: 'done', checksum, received };
}

function outboundThroughput(sab: SharedArrayBuffer, count: number): RingWorkerDone {
  const ring = OutboundRing.attach(sab);
  const consumer = ring.consumer(0);
  const view = ring.view;
  let checksum = 0;
  let received = 0;
  let idlePolls = 0;
  const onRecord = (offset: number): boolean => { checksum = foldMessage(checksum, view, offset); return true; };
  parentPort!.postMessage({ type: 'ready' });
  while (received < count) {
    const seen = ring.signalValue();
    const n = consumer.poll(onRecord, BATCH_MAX);
    received += n;
    if (n > 0) idlePolls = 0;
    else if (++idlePolls > SPIN_POLLS) ring.waitSignal(seen, PARK_MS);
  }
  return { type: 'done', checksum, received };
}

/** postMessage receiver; acknowledges every `ackEvery` messages so the sender can bound what is in flight. */
function postThroughput(count: number, ackEvery: number, perPost: number): void {
  let checksum = 0;
  let received = 0;
  parentPort!.on('message', (message: Uint8Array) => {
    const view = new DataView(message.buffer, message.byteOffset, message.byteLength);
    for (let offset = 0; offset < perPost * MESSAGE_BYTES; offset += MESSAGE_BYTES) checksum = foldMessage(checksum, view, offset);
    received += perPost;
    if (received >= count) {
      parentPort!.postMessage({ type: 'done', checksum, received } satisfies RingWorkerDone);
      parentPort!.removeAllListeners('message');
    } else if (received % ackEvery === 0) {
      parentPort!.postMessage({ type: 'ack', received });
    }
  });
  parentPort!.postMessage({ type: 'ready' });
}

/** Ring echo: reads one message from the inbound ring, answers with word0 + 1 on the outbound ring. */
function ringEcho(inboundSab: SharedArrayBuffer, outboundSab: SharedArrayBuffer, count: number, park: boolean): RingWorkerDone {
  const inbound = InboundRing.attach(inboundSab);
  const outbound = OutboundRing.attach(outboundSab);
  const inView = inbound.view;
  const outView = outbound.view;
  let request = 0;
  let checksum = 0;
  const onSlot = (offset: number): void => {
    checksum = foldMessage(checksum, inView, offset);
    request = inView.getUint32(offset, true);
  };
  parentPort!.postMessage({ type: 'ready' });
  for (let received = 0; received < count;) {
    if (inbound.poll(onSlot, 1) === 0) {
      if (park) inbound.waitForPublish(PARK_MS);
      continue;
    }
    received++;
    const seq = outbound.tryClaim();
    if (seq < 0) throw new Error('ring echo: outbound ring full with one message in flight');
    outView.setUint32(outbound.offsetOf(seq), (request + 1) >>> 0, true);
    outbound.publish(seq);
    outbound.flush();
  }
  return { type: 'done', checksum, received: count };
}

function postEcho(count: number): void {
  let received = 0;
  let checksum = 0;
  parentPort!.on('message', (message: Uint8Array) => {
    const view = new DataView(message.buffer, message.byteOffset, message.byteLength);
    checksum = foldMessage(checksum, view, 0);
    view.setUint32(0, (view.getUint32(0, true) + 1) >>> 0, true);
    parentPort!.postMessage(message);
    if (++received === count) {
      parentPort!.postMessage({ type: 'done', checksum, received } satisfies RingWorkerDone);
      parentPort!.removeAllListeners('message');
    }
  });
  parentPort!.postMessage({ type: 'ready' });
}

function main(job: RingWorkerJob): void {
  switch (job.kind) {
    case 'inbound-throughput': parentPort!.postMessage(inboundThroughput(job.sab, job.count)); break;
    case 'outbound-throughput': parentPort!.postMessage(outboundThroughput(job.sab, job.count)); break;
    case 'post-throughput': postThroughput(job.count, job.ackEvery, job.perPost); break;
    case 'ring-echo': parentPort!.postMessage(ringEcho(job.inboundSab, job.outboundSab, job.count, job.park)); break;
    case 'post-echo': postEcho(job.count); break;
  }
}

if (parentPort !== null && workerData !== null && typeof workerData === 'object' && 'kind' in workerData) {
  main(workerData as RingWorkerJob);
}
