// The engine benchmark's command stream (bench/engine-stream.ts):
//
//   generateStream(seed, ops) ──► mix within a few % of 9/3/6/82, no rejections, real trades
//                             └─► Exchange and reference model on a short stream: equal state hashes
//   generateStream(…, 'margin') ──► the same mix, a third of the places by margin accounts, real
//                             │    borrows, repays and redemptions, no rejections
//                             └─► replayed: Exchange writes borrow records; Exchange and model
//                                  (with its pools, index prices and settings) reach equal hashes
//
// No timing assertions; bench/engine.bench.ts measures. Baseline for the mix: exchange-core's
// published benchmark (9 % GTC, 3 % IOC, 6 % cancel, 82 % move).
import { describe, expect, it } from 'vitest';
import { Exchange } from '../../engine/core/exchange.js';
import { BorrowLendEvent, CommandKind, RecordType, type EngineConfig, type RecordSink } from '../../engine/bus/types.js';
import { SLOT_BYTES, decodeRecord, slotFromCommand } from '../../engine/bus/codec.js';
import { modelStateHash } from '../../bench/engine-model-hash.js';
import {
  Op, benchConfig, benchMarginConfig, decodeCommand, generateStream, isMarginAccount, newStreamCommand, type EngineStream,
} from '../../bench/engine-stream.js';
import { ModelExchange } from '../helpers/engine-model.js';

const NOWHERE: RecordSink = { view: new DataView(new ArrayBuffer(SLOT_BYTES)), claim: () => 0, written() {} };

/** Counts the BorrowLend records an engine writes, by event. */
class BorrowLendCount implements RecordSink {
  readonly view = new DataView(new ArrayBuffer(SLOT_BYTES));
  readonly byEvent = [0, 0, 0, 0, 0, 0, 0];
  claim(): number {
    return 0;
  }
  written(at: number): void {
    const rec = decodeRecord(this.view, at);
    if (rec.type === RecordType.BorrowLend) this.byEvent[rec.event]++;
  }
}

/**
 * The engine (and the model, unless `model` is null) fed the stream's setup and rows; the
 * engine's records of the main rows go to `sink`.
 */
function replay(config: EngineConfig, s: EngineStream, sink: RecordSink = NOWHERE, model: ModelExchange | null = new ModelExchange(config)): { ex: Exchange; model: ModelExchange | null } {
  const ex = new Exchange(config);
  let seq = 0;
  for (const c of s.setup) { seq++; ex.apply(c, seq, seq, NOWHERE); model?.apply(slotFromCommand(c), seq, seq); }
  const cmd = newStreamCommand();
  for (let i = 0; i < s.count; i++) {
    decodeCommand(s, i, cmd);
    seq++;
    ex.apply(cmd, seq, seq, sink);
    model?.apply(slotFromCommand(cmd), seq, seq);
  }
  ex.validateInvariants();
  return { ex, model };
}

function expectExchangeCoreMix(s: EngineStream): void {
  const ops = s.ops;
  expect(Math.abs(s.opCounts[Op.Gtc] / ops - 0.09)).toBeLessThan(0.02);
  expect(Math.abs(s.opCounts[Op.Ioc] / ops - 0.03)).toBeLessThan(0.02);
  expect(Math.abs(s.opCounts[Op.Cancel] / ops - 0.06)).toBeLessThan(0.02);
  expect(Math.abs(s.opCounts[3] / ops - 0.82)).toBeLessThan(0.03);
  expect(s.count).toBe(ops + s.opCounts[3]);
  expect(s.rejected).toBe(0);
  expect(s.tradingCommands / s.count).toBeGreaterThan(0.01);
  expect(s.meanOpen).toBeGreaterThan(500);
  expect(s.meanOpen).toBeLessThan(1500);
}

describe('engine benchmark stream', () => {
  it('has the intended mix, trades, and no rejected commands', () => {
    const s = generateStream(7, 20_000);
    expectExchangeCoreMix(s);
    expect(s.flags.subarray(0, s.count).every((f) => f === 0)).toBe(true);
    expect(s.borrowingCommands).toBe(0);
  });

  it('engine and reference model reach the same state hash', () => {
    const config = benchConfig();
    const s = generateStream(11, 1_500, config);
    const { ex, model } = replay(config, s);
    expect(modelStateHash(model!)).toBe(ex.stateHash());
  });

  it('the margin mix keeps the mix, a third of the places are margin places, and they borrow, repay and redeem', () => {
    const s = generateStream(7, 20_000, benchMarginConfig(), 'margin');
    expectExchangeCoreMix(s);
    let places = 0;
    for (let i = 0; i < s.count; i++) if (s.kind[i] === CommandKind.PlaceOrder) places++;
    expect(Math.abs(s.marginPlaces / places - 1 / 3)).toBeLessThan(0.05);
    expect(s.borrowingCommands).toBeGreaterThan(s.marginPlaces / 20);
    expect(s.marginMoves[BorrowLendEvent.Borrow]).toBe(s.borrowingCommands);
    expect(s.marginMoves[BorrowLendEvent.BorrowRepay]).toBeGreaterThan(0);
    expect(s.marginMoves[BorrowLendEvent.LendRedeem]).toBeGreaterThan(0);
    expect(s.marginMoves[BorrowLendEvent.Lend]).toBeGreaterThan(0);
    for (let i = 0; i < s.count; i++) if (s.borrowed[i]) expect(isMarginAccount(s.accountId[i])).toBe(true);
  });

  it('the margin stream replayed borrows, and engine and reference model reach the same state hash', () => {
    const config = benchMarginConfig();
    const s = generateStream(11, 1_500, config, 'margin');
    expect(s.rejected).toBe(0);
    const borrowLend = new BorrowLendCount();
    const { ex, model } = replay(config, s, borrowLend);
    expect(borrowLend.byEvent[BorrowLendEvent.Borrow]).toBeGreaterThan(0);
    expect(borrowLend.byEvent[BorrowLendEvent.Borrow]).toBe(s.marginMoves[BorrowLendEvent.Borrow]);
    expect(modelStateHash(model!)).toBe(ex.stateHash());
  });

  it('the spot stream on the margin configuration ends in the state it ends in without margin', () => {
    const s = generateStream(11, 5_000, benchConfig());
    const spot = replay(benchConfig(), s, NOWHERE, null);
    const unused = replay(benchMarginConfig(), s, NOWHERE, null);
    expect(unused.ex.stateHash()).toBe(spot.ex.stateHash());
  });

  it('the model state the hash walks is a copy: changing it leaves the model as it was', () => {
    const config = benchConfig();
    const s = generateStream(13, 300, config);
    const model = new ModelExchange(config);
    let seq = 0;
    for (const c of s.setup) { seq++; model.apply(slotFromCommand(c), seq, seq); }
    const before = modelStateHash(model);
    const state = model.exportState();
    expect(state.orders.length).toBeGreaterThan(0);
    state.orders[0].remainingLots += 1;
    state.keys[0][0] ^= 0xff;
    state.balances.get(1)!.get(0)!.available += 1;
    state.markets.get(0)!.updateId += 1;
    state.orders.pop();
    expect(modelStateHash(model)).toBe(before);
    expect(model.exportState().orders.length).toBe(state.orders.length + 1);
  });
});
