// Differential test: the engine core against a deliberately naive reference model
// (test/helpers/engine-model.ts) fed the same seeded random stream, invalid commands included.
// Every record of every command must be identical, field for field and in the same order; the
// stream's queries (balances, open orders, snapshots) make the final states comparable too.
// ENGINE_SEED=<n> reruns one seed, ENGINE_STEPS=<n> changes the length.
import { describe, expect, it } from 'vitest';
import { EngineHarness, type Rec } from './helpers/engine-harness.js';
import { ModelExchange } from './helpers/engine-model.js';
import { randomConfig, runRandomStream } from './helpers/engine-random.js';
import { RecordType } from '../engine/bus/types.js';

const envSeed = process.env.ENGINE_SEED;
const SEEDS = envSeed !== undefined ? [Number(envSeed)] : [21, 22, 23, 24, 25, 26];
const STEPS = Number(process.env.ENGINE_STEPS ?? 1200);

describe('engine core against the reference model', () => {
  it.each(SEEDS)('seed %i: identical records for every command', (seed) => {
    const config = randomConfig(seed);
    const h = new EngineHarness(config);
    runRandomStream(h, seed, STEPS);
    const model = new ModelExchange(config);
    let index = 0;
    for (const stamped of h.stream) {
      const expected = model.apply(stamped.command, stamped.seq, stamped.timeUs);
      const actual: Rec[] = h.log.slice(index, index + expected.length);
      const context = `seed ${seed} (rerun: ENGINE_SEED=${seed} npx vitest run test/engine-model.test.ts), seq ${stamped.seq}, command ${JSON.stringify({ ...stamped.command, key: undefined })}`;
      expect(actual, context).toEqual(expected);
      index += expected.length;
    }
    expect(index).toBe(h.log.length);
    expect(h.log.filter((r) => r.type === RecordType.Trade).length).toBeGreaterThan(STEPS / 20);
  });
});
