// The engine worker: the one thread that owns all exchange state.
//
//   inbound ring ──► [stamp seq + engine time] ──► Exchange.apply ──► outbound ring
//                    (state-changing commands only;   (pure core,        (Stamped record first,
//                     queries take no seq)             engine/core)        then its outputs)
//
// Start-up: replay the journal into a fresh Exchange (outputs discarded), then report the last
// sequence, checksum and state hash to the main thread and start serving the ring.
//
// This shell is the only place in engine/ with a clock: it stamps each command with engine time
// (microseconds, never going backwards, not even across restarts) and injects a journaled Tick
// command when a speed-bumped order falls due while the stream is quiet. The core never reads a
// clock, so replaying the journal rebuilds the same state and the same ids.
//
// Idle strategy: spin on the ring for a short while after the last command (a co-located client's
// next order usually arrives within microseconds), then park on Atomics.wait, bounded by the next
// timer and by a short period so the shutdown flag is seen.

import { parentPort, workerData } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { Exchange } from '../core/exchange.js';
import {
  COMMAND_BYTES,
  STAMPED_COMMAND_OFFSET,
  copyBytes,
  readCommand,
  writeAccount,
  writeBalance,
  writeCommand,
  writeDepth,
  writeHeader,
  writeMarket,
  writeMarketState,
  writeFeeRates,
  writeOrder,
  writeResult,
  writeTrade,
} from '../codec.js';
import { InboundRing, OutboundRing } from '../ring.js';
import { Control } from './control.js';
import { checkEngineConfig, engineConfigFingerprint, openJournal, replayJournal } from './journal.js';
import {
  CommandKind,
  FRONT_ID_NONE,
  RecordType,
  newCommand,
  type Command,
  type EngineConfig,
  type RecordHeaderFields,
  type RecordSink,
} from '../types.js';

export interface EngineWorkerData {
  engine: EngineConfig;
  dataDir: string;
  inboundSab: SharedArrayBuffer;
  outboundSab: SharedArrayBuffer;
  controlSab: SharedArrayBuffer;
}

const SPIN_US = 50;
const PARK_MAX_MS = 20;
const BATCH_MAX = 512;

function wallClockUs(): number {
  return Math.floor((performance.timeOrigin + performance.now()) * 1000);
}

function main(): void {
  const data = workerData as EngineWorkerData;
  const control = Control.attach(data.controlSab);
  const inbound = InboundRing.attach(data.inboundSab);
  const outbound = OutboundRing.attach(data.outboundSab);
  const exchange = new Exchange(data.engine);

  // 1. Rebuild state from the journal. Outputs of replayed commands were already delivered
  //    before the restart (or never acknowledged), so they are discarded.
  const discard: RecordSink = {
    result() {}, order() {}, trade() {}, balance() {}, depth() {}, account() {}, market() {}, marketState() {}, feeRates() {},
  };
  const journal = openJournal(data.dataDir);
  checkEngineConfig(journal, engineConfigFingerprint(data.engine));
  const replayStarted = performance.now();
  const replay = replayJournal(journal, (rec) => exchange.apply(rec.command, rec.seq, rec.timeUs, discard));
  const replayMs = performance.now() - replayStarted;
  // The environment stays open: this thread never returns to its event loop, where lmdb-js
  // would finish an asynchronous close, and an idle read-only handle costs nothing.

  let lastSeq = replay.lastSeq;
  let lastTimeUs = replay.lastTimeUs;
  control.setSeqLast(lastSeq);
  control.setSeqDurable(lastSeq);

  const nowUs = (): number => {
    const t = wallClockUs();
    if (t > lastTimeUs) lastTimeUs = t;
    return lastTimeUs;
  };

  // 2. The sink writes each output into the next outbound slot, waiting while the slowest
  //    consumer holds the ring full (backpressure, never loss).
  const out = outbound.view;
  const claim = (): number => {
    for (;;) {
      const seq = outbound.tryClaim();
      if (seq >= 0) return seq;
      outbound.flush();
      outbound.waitForConsumers(1);
      if (control.shuttingDown()) throw new Error('shutdown while the outbound ring was full');
    }
  };
  const sink: RecordSink = {
    result(rec) { const s = claim(); writeResult(out, outbound.offsetOf(s), rec); outbound.publish(s); },
    order(rec) { const s = claim(); writeOrder(out, outbound.offsetOf(s), rec); outbound.publish(s); },
    trade(rec) { const s = claim(); writeTrade(out, outbound.offsetOf(s), rec); outbound.publish(s); },
    balance(rec) { const s = claim(); writeBalance(out, outbound.offsetOf(s), rec); outbound.publish(s); },
    depth(rec) { const s = claim(); writeDepth(out, outbound.offsetOf(s), rec); outbound.publish(s); },
    account(rec) { const s = claim(); writeAccount(out, outbound.offsetOf(s), rec); outbound.publish(s); },
    market(rec) { const s = claim(); writeMarket(out, outbound.offsetOf(s), rec); outbound.publish(s); },
    // issue 3 (engine)
    marketState(rec) { const s = claim(); writeMarketState(out, outbound.offsetOf(s), rec); outbound.publish(s); },
    feeRates(rec) { const s = claim(); writeFeeRates(out, outbound.offsetOf(s), rec); outbound.publish(s); },
  };

  const header: RecordHeaderFields = { seq: 0, timeUs: 0, requestId: 0, frontId: 0, type: RecordType.Stamped, flags: 0 };
  const cmd = newCommand();
  const inBytes = inbound.bytes;
  const outBytes = outbound.bytes;

  /** Writes the Stamped record: header + the command's raw bytes, copied without re-encoding. */
  const stamp = (seq: number, timeUs: number, c: Command, srcBytes: Uint8Array | null, srcOffset: number): void => {
    const s = claim();
    const off = outbound.offsetOf(s);
    header.seq = seq;
    header.timeUs = timeUs;
    header.requestId = c.requestId;
    header.frontId = c.frontId;
    writeHeader(out, off, header);
    if (srcBytes) copyBytes(srcBytes, srcOffset, outBytes, off + STAMPED_COMMAND_OFFSET, COMMAND_BYTES);
    else writeCommand(out, off + STAMPED_COMMAND_OFFSET, c);
    outbound.publish(s);
  };

  const handleSlot = (offset: number): void => {
    readCommand(inbound.view, offset, cmd);
    const timeUs = nowUs();
    if (cmd.kind >= CommandKind.QueryBalances) {
      exchange.apply(cmd, lastSeq, timeUs, sink);
      return;
    }
    lastSeq += 1;
    stamp(lastSeq, timeUs, cmd, inBytes, offset);
    exchange.apply(cmd, lastSeq, timeUs, sink);
  };

  const tick = newCommand();
  tick.kind = CommandKind.Tick;
  tick.frontId = FRONT_ID_NONE;
  /** Injects a Tick when a delayed order is due, so it activates even if no command arrives. */
  const tickIfDue = (): void => {
    const wakeUs = exchange.nextWakeUs();
    if (wakeUs < 0) return;
    const timeUs = nowUs();
    if (timeUs < wakeUs) return;
    lastSeq += 1;
    stamp(lastSeq, timeUs, tick, null, 0);
    exchange.apply(tick, lastSeq, timeUs, sink);
  };

  parentPort!.postMessage({
    type: 'ready',
    lastSeq: replay.lastSeq,
    lastChecksum: replay.lastChecksum,
    lastTimeUs: replay.lastTimeUs,
    stateHash: exchange.stateHash(),
    replayMs,
  });

  // 3. Serve the ring until shutdown.
  let idleSinceUs = wallClockUs();
  while (!control.shuttingDown()) {
    const count = inbound.poll(handleSlot, BATCH_MAX);
    tickIfDue();
    outbound.flush();
    control.setSeqLast(lastSeq);
    if (count > 0) {
      idleSinceUs = wallClockUs();
      continue;
    }
    if (wallClockUs() - idleSinceUs < SPIN_US) continue;
    const wakeUs = exchange.nextWakeUs();
    let parkMs = PARK_MAX_MS;
    if (wakeUs >= 0) parkMs = Math.max(0, Math.min(parkMs, (wakeUs - wallClockUs()) / 1000));
    if (parkMs > 0) inbound.waitForPublish(parkMs);
  }
  outbound.flush();
  parentPort!.postMessage({ type: 'stopped', lastSeq, stateHash: exchange.stateHash() });
}

main();
