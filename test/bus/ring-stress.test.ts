// Multi-thread stress tests for engine/bus/ring.ts, with small rings so they wrap many times and
// sequences that cross a wrap point mid-run:
// - inbound: 4 producer workers × 500,000 messages into a 1,024-slot ring, one consumer worker
//   checking each producer's stream arrives whole and in order (2 M messages, ~2,000 laps);
// - a front thread's link wakes a parked engine once per turn of its event loop, after the turn's
//   commands are all published;
// - outbound: one producer worker, 1,000,000 records into a 256-slot ring, three consumer
//   workers (journal, blocking, durability-gated on the event loop) each checking the full stream.
//
// Workers run the compiled ring from dist/ (worker threads cannot load TypeScript); `npm test`
// builds first through its pretest script, and this file rebuilds when dist is missing or older
// than engine/bus/ring.ts, so `npx vitest run test/bus/ring-stress.test.ts` works on its own.
// Nothing here measures time: every wait is bounded (5 s), a worker whose wait times out while
// work is outstanding (a lost wake-up) or that finds a message missing raises ABORT so all
// workers stop and report, and the assertions then fail instead of the test hanging.

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { beforeAll, describe, expect, it } from 'vitest';
import { InboundRing, OutboundRing } from '../../engine/bus/ring.js';
import { ABORT, CONTROL_BYTES } from '../fixtures/ring-stress-shared.mjs';
import { Control } from '../../engine/bus/control.js';
import { SLOT_BYTES } from '../../engine/bus/codec.js';
import { CommandKind } from '../../engine/bus/types.js';
import { EngineLink } from '../../src/front/engine-link.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SOURCE = fileURLToPath(new URL('../../engine/bus/ring.ts', import.meta.url));
const COMPILED = fileURLToPath(new URL('../../dist/engine/bus/ring.js', import.meta.url));
const WRAP = 2 ** 32;

function modifiedMs(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return -1;
  }
}

/** Builds dist/ when the compiled ring is older than its source. */
function ensureCompiled(): void {
  if (modifiedMs(COMPILED) >= modifiedMs(SOURCE)) return;
  try {
    execFileSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: ROOT, stdio: 'ignore' });
  } catch {
    // tsc still emits when other files of the project have type errors; freshness is checked below.
  }
  if (modifiedMs(COMPILED) < modifiedMs(SOURCE)) throw new Error('dist/engine/bus/ring.js could not be built');
}

/** Whether the OS thread `tid` of this process is asleep (state S in /proc); true where /proc is not there to ask. */
function threadAsleep(tid: number): boolean {
  if (tid <= 0) return false;
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'S';
  } catch {
    return !existsSync('/proc/self/task');
  }
}

interface WorkerRun<T> {
  worker: Worker;
  result: Promise<T>;
}

/** Starts a fixture worker; its promise settles with the one message it posts, or its error. */
function startWorker<T>(fixture: string, workerData: unknown): WorkerRun<T> {
  const worker = new Worker(new URL(`../fixtures/${fixture}`, import.meta.url), { workerData });
  const result = new Promise<T>((resolve, reject) => {
    worker.once('message', (message: T) => resolve(message));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`${fixture} exited with code ${code} before reporting`)));
  });
  return { worker, result };
}

/** Waits for every worker; on the first failure tells the others to stop and ends them. */
async function allResults<T>(runs: WorkerRun<T>[], control: Int32Array): Promise<T[]> {
  try {
    return await Promise.all(runs.map((run) => run.result));
  } catch (error) {
    Atomics.store(control, ABORT, 1);
    await Promise.all(runs.map((run) => run.worker.terminate()));
    throw error;
  }
}

interface ProducerReport { producerId: number; sent: number; fullCount: number; stalled: boolean }
interface InboundConsumerReport {
  received: number; nextCounter: number[]; errors: string[]; sequenceBreaks: number; lost: boolean;
  batches: number; parks: number; stalled: boolean;
}
interface OutboundProducerReport { sent: number; fullCount: number; stalled: boolean }
interface OutboundConsumerReport {
  index: number; role: string; received: number; errors: string[]; heldCount: number; parks: number; stalled: boolean;
}

describe('ring stress (worker threads)', () => {
  beforeAll(ensureCompiled);

  /** Four producers, each publishing messageCount counters; burst > 0: quiet publishes, one wake per burst. */
  async function inboundRun(messageCount: number, burst: number): Promise<void> {
    const producerCount = 4;
    const initialSequence = WRAP - 2 * messageCount; // wraps halfway through
    const ring = InboundRing.create({ slotCount: 1024, slotBytes: 16, initialSequence });
    const controlSab = new SharedArrayBuffer(CONTROL_BYTES);
    const control = new Int32Array(controlSab);

    const consumer = startWorker<InboundConsumerReport>('ring-consumer.mjs', { sab: ring.sab, controlSab, producerCount, messageCount });
    const producers = Array.from({ length: producerCount }, (_, producerId) =>
      startWorker<ProducerReport>('ring-producer.mjs', { sab: ring.sab, controlSab, producerId, messageCount, burst }));
    const [report, ...producerReports] = await allResults<InboundConsumerReport | ProducerReport>([consumer, ...producers], control);
    const consumerReport = report as InboundConsumerReport;

    // A wait that timed out while work was outstanding is a lost wake-up.
    expect(consumerReport.stalled).toBe(false);
    expect(producerReports.map((r) => (r as ProducerReport).stalled)).toEqual([false, false, false, false]);
    expect(Atomics.load(control, ABORT)).toBe(0);
    expect(producerReports.map((r) => (r as ProducerReport).sent)).toEqual([messageCount, messageCount, messageCount, messageCount]);
    expect(consumerReport.errors).toEqual([]);
    expect(consumerReport.lost).toBe(false);
    expect(consumerReport.sequenceBreaks).toBe(0);
    expect(consumerReport.received).toBe(producerCount * messageCount);
    expect(consumerReport.nextCounter).toEqual([messageCount, messageCount, messageCount, messageCount]);
    // Every slot was consumed and the sequences wrapped past 2^32.
    expect(ring.gatingSequence).toBe((initialSequence + producerCount * messageCount) % WRAP);
    expect(ring.cursor).toBe(ring.gatingSequence);
    expect(ring.poll(() => {}, 1)).toBe(0);
  }

  it('delivers 4 × 500,000 messages from concurrent producers exactly once and in per-producer order across the wrap', async () => {
    await inboundRun(500_000, 0);
  });

  // A front thread publishes quietly and wakes the engine once per turn: the consumer parks on the
  // one slot it needs next, and whichever producer publishes that slot wakes it, late but never lost.
  it('loses no wake-up when producers publish quietly and wake the consumer once per burst of 7', async () => {
    await inboundRun(250_000, 7);
  });

  it('broadcasts 1,000,000 records to a journal, a blocking and a durability-gated consumer, each seeing the whole ordered stream', async () => {
    const messageCount = 1_000_000;
    const initialSequence = 2 ** 31 - 500_000; // crosses the int32 sign flip halfway through
    const ring = OutboundRing.create({ slotCount: 256, slotBytes: 8, consumerCount: 3, initialSequence });
    const controlSab = new SharedArrayBuffer(CONTROL_BYTES);
    const control = new Int32Array(controlSab);
    const roles = ['journal', 'blocking', 'gated'];

    const consumers = roles.map((role, index) => startWorker<OutboundConsumerReport>('ring-outbound-consumer.mjs', {
      sab: ring.sab, controlSab, index, role, messageCount, initialSequence,
    }));
    const producer = startWorker<OutboundProducerReport>('ring-outbound-producer.mjs', {
      sab: ring.sab, controlSab, messageCount, seed: 0x5eed,
    });
    const [producerReport, ...consumerReports] = await allResults<OutboundProducerReport | OutboundConsumerReport>(
      [producer, ...consumers], control);

    expect((producerReport as OutboundProducerReport).stalled).toBe(false);
    expect(Atomics.load(control, ABORT)).toBe(0);
    expect((producerReport as OutboundProducerReport).sent).toBe(messageCount);
    const summary = (consumerReports as OutboundConsumerReport[]).map((r) => ({
      role: r.role, stalled: r.stalled, errors: r.errors, received: r.received,
    }));
    expect(summary).toEqual(roles.map((role) => ({ role, stalled: false, errors: [], received: messageCount })));
    const end = (initialSequence + messageCount) % WRAP;
    expect(ring.cursor).toBe(end);
    expect([0, 1, 2].map((i) => ring.consumer(i).sequence)).toEqual([end, end, end]);
  });

  it('a front thread wakes a parked engine once, after every command of its turn is published', async () => {
    const inbound = InboundRing.create({ slotCount: 8, slotBytes: SLOT_BYTES });
    const outbound = OutboundRing.create({ slotCount: 16, slotBytes: SLOT_BYTES, consumerCount: 1 });
    const link = new EngineLink(3, inbound.sab, outbound.sab, 0, Control.create().sab, 1000);
    const tid = new Int32Array(new SharedArrayBuffer(4));
    const engine = startWorker<{ woke: string; polled: number }>('ring-parked-consumer.mjs', { sab: inbound.sab, tid: tid.buffer });
    try {
      // Parked: the flag is up and the thread is asleep, which after the flag it can only be in the wait.
      for (let i = 0; i < 10_000 && !(inbound.consumerParked && threadAsleep(Atomics.load(tid, 0))); i++) {
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      expect(inbound.consumerParked).toBe(true);
      expect(threadAsleep(Atomics.load(tid, 0))).toBe(true);
      for (let i = 0; i < 3; i++) {
        expect(link.submit((cmd) => { cmd.kind = CommandKind.QueryBalances; }, { onRecord() {} })).toBe('ok');
      }
      // Published, but nobody has woken the engine yet: that waits for the end of this turn.
      expect(inbound.cursor - inbound.gatingSequence).toBe(3);
      expect(inbound.consumerParked).toBe(true);
      // One wake ('ok', not a timeout) and all three commands in the first poll after it.
      expect(await engine.result).toEqual({ woke: 'ok', polled: 3 });
    } finally {
      await engine.worker.terminate();
    }
  });
});
