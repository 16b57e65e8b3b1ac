// Canary for the differential test (test/engine-model.test.ts): the same comparison, run against
// copies of the reference model with one bug planted each, must find a difference. If a planted
// bug went unnoticed, the random streams would not be exercising that rule, and a real bug there
// would pass too. The unbroken model must still agree (the control).
import { describe, expect, it } from 'vitest';
import { OrderBookState, OrderStatus, ResultCode, type EngineConfig } from '../engine/bus/types.js';
import { EngineHarness } from './helpers/engine-harness.js';
import { ModelExchange } from './helpers/engine-model.js';
import { modelKinds, randomConfig, runRandomStream } from './helpers/engine-random.js';

const SEED = 21;
const STEPS = 1200;

/** Runs the seeded stream through the engine and `model`; returns the first seq where they differ, or -1. */
function firstDifference(config: EngineConfig, model: ModelExchange): number {
  const h = new EngineHarness(config);
  runRandomStream(h, SEED, STEPS, { kinds: modelKinds(config) });
  let index = 0;
  for (const stamped of h.stream) {
    const expected = model.apply(stamped.command, stamped.seq, stamped.timeUs);
    const actual = h.log.slice(index, index + expected.length);
    try {
      expect(actual).toEqual(expected);
    } catch {
      return stamped.seq;
    }
    index += expected.length;
  }
  return index === h.log.length ? -1 : h.stream.at(-1)!.seq;
}

type Patch = (model: Record<string, unknown>) => void;

/** Each plants one bug by replacing one method of a model instance. */
const PLANTED: Record<string, Patch> = {
  'fees ignore SetFeeRates (config defaults always)': (m) => {
    const config = m.config as EngineConfig;
    m.fee = (_accountId: number, received: number, isTaker: boolean) =>
      Number((BigInt(received) * BigInt(isTaker ? (config.takerFeeBps ?? 0) : (config.makerFeeBps ?? 0))) / 10000n);
  },
  'LimitOnly takes market orders': (m) => {
    const original = (m.stateRefusal as (...a: unknown[]) => ResultCode).bind(m);
    m.stateRefusal = (market: unknown, isMarket: boolean, postOnly: boolean) => {
      const code = original(market, isMarket, postOnly);
      return code === ResultCode.MarketLimitOnly ? ResultCode.Ok : code;
    };
  },
  'a quote-quantity order\'s last fill says PartiallyFilled (the old stream/REST mismatch)': (m) => {
    m.takerStatus = (taker: { remainingLots: number }) => (taker.remainingLots === 0 ? OrderStatus.Filled : OrderStatus.PartiallyFilled);
  },
  'an off-by-one in the taker fee rounding': (m) => {
    const original = (m.fee as (...a: unknown[]) => number).bind(m);
    m.fee = (accountId: number, received: number, isTaker: boolean) => {
      const fee = original(accountId, received, isTaker);
      return isTaker && fee > 0 ? fee - 1 : fee;
    };
  },
  'closing forgets the order book state (stays Open)': (m) => {
    const original = (m.setMarketState as (cmd: { amountUnits: number }) => void).bind(m);
    m.setMarketState = (cmd: { amountUnits: number }) => original(cmd.amountUnits === OrderBookState.Closed ? { ...cmd, amountUnits: OrderBookState.Open } : cmd);
  },
};

describe('canary: the differential test catches planted bugs', () => {
  it('the unbroken model agrees with the engine (control)', () => {
    const config = randomConfig(SEED);
    expect(firstDifference(config, new ModelExchange(config))).toBe(-1);
  });

  it.each(Object.keys(PLANTED))('planted: %s', (name) => {
    const config = randomConfig(SEED);
    const model = new ModelExchange(config);
    PLANTED[name](model as unknown as Record<string, unknown>);
    expect(firstDifference(config, model), `the planted bug "${name}" went unnoticed`).toBeGreaterThan(0);
  });
});
