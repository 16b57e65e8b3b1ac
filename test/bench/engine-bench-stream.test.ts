// The engine benchmark's command stream (bench/engine-stream.ts):
//
//   generateStream(seed, ops) ──► mix within a few % of 9/3/6/82, no rejections, real trades
//                             └─► Exchange and reference model on a short stream: equal state hashes
//
// No timing assertions; bench/engine.bench.ts measures. Baseline for the mix: exchange-core's
// published benchmark (9 % GTC, 3 % IOC, 6 % cancel, 82 % move).
import { describe, expect, it } from 'vitest';
import { Exchange } from '../../engine/core/exchange.js';
import type { RecordSink } from '../../engine/bus/types.js';
import { SLOT_BYTES, slotFromCommand } from '../../engine/bus/codec.js';
import { modelStateHash } from '../../bench/engine-model-hash.js';
import { Op, benchConfig, decodeCommand, generateStream, newStreamCommand } from '../../bench/engine-stream.js';
import { ModelExchange } from '../helpers/engine-model.js';

const NOWHERE: RecordSink = { view: new DataView(new ArrayBuffer(SLOT_BYTES)), claim: () => 0, written() {} };

describe('engine benchmark stream', () => {
  it('has the intended mix, trades, and no rejected commands', () => {
    const s = generateStream(7, 20_000);
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
  });

  it('engine and reference model reach the same state hash', () => {
    const config = benchConfig();
    const s = generateStream(11, 1_500, config);
    const ex = new Exchange(config);
    const model = new ModelExchange(config);
    let seq = 0;
    for (const c of s.setup) { seq++; ex.apply(c, seq, seq, NOWHERE); model.apply(slotFromCommand(c), seq, seq); }
    const cmd = newStreamCommand();
    for (let i = 0; i < s.count; i++) {
      decodeCommand(s, i, cmd);
      seq++;
      ex.apply(cmd, seq, seq, NOWHERE);
      model.apply(slotFromCommand(cmd), seq, seq);
    }
    ex.validateInvariants();
    expect(modelStateHash(model)).toBe(ex.stateHash());
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
