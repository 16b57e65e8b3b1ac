// Each account's futures fee rates (engine/core/perp/futures-fees.ts): a perpetual fill charges the
// account's own futures maker/taker rates once the operator set them (SetFuturesFeeRates), else
// the perpetual's configured ones (2 / 5 bps here), never its spot rates; SetFeeRates changes only
// the spot rates. Fees are the notional × bps / 10 000, truncated, in USDC units.
//
// Grid (perp-harness): a fill of q lots at p ticks has notional 3·p·q USDC units; 10 lots at 500
// ticks are 15 000 units.

import { describe, expect, it } from 'vitest';
import { RecordType, ResultCode } from '../../../engine/bus/types.js';
import { BASE, cmd, EngineHarness, QUOTE, resultOf, type Rec } from '../../helpers/engine-harness.js';
import { PERP, perpConfig } from '../../helpers/perp-harness.js';

const FUNDS = 10_000_000;

function ratesOf(records: Rec[]) {
  const rec = records.find((r) => r.type === RecordType.FeeRates);
  if (rec?.type !== RecordType.FeeRates) throw new Error('no FeeRates record');
  const { makerFeeBps, takerFeeBps, futuresMakerFeeBps, futuresTakerFeeBps } = rec;
  return { makerFeeBps, takerFeeBps, futuresMakerFeeBps, futuresTakerFeeBps };
}

/** A rests `lots` at 500 post-only (maker), B crosses it (taker); returns what each paid in USDC. */
function fill(h: EngineHarness, maker: number, taker: number, makerSide: 'bid' | 'ask', lots: number): [number, number] {
  const before = [h.balance(maker, QUOTE)[0], h.balance(taker, QUOTE)[0]];
  h.apply(cmd.place(maker, makerSide, 500, lots, { market: PERP, postOnly: true }));
  h.apply(cmd.place(taker, makerSide === 'bid' ? 'ask' : 'bid', 500, lots, { market: PERP }));
  return [before[0] - h.balance(maker, QUOTE)[0], before[1] - h.balance(taker, QUOTE)[0]];
}

describe('futures fee rates per account', () => {
  it('a perpetual fill charges the account\'s own futures rates, else the configured ones, never the spot rates', () => {
    const config = { ...perpConfig(), makerFeeBps: 30, takerFeeBps: 60 }; // spot defaults, unlike the futures 2 / 5
    const h = new EngineHarness(config);
    const [a, b] = h.fundedAccounts(2, { [QUOTE]: FUNDS });
    h.apply(cmd.setIndexPrice(BASE, 150_000 * 1e9)); // 500 ticks: a fresh mark admits the orders

    expect(ratesOf(h.apply(cmd.queryFeeRates(a)))).toEqual({ makerFeeBps: 30, takerFeeBps: 60, futuresMakerFeeBps: 2, futuresTakerFeeBps: 5 });
    // Configured rates: B maker 2 bps of 15 000 = 3, A taker 5 bps = 7 (7.5 truncated).
    expect(fill(h, b, a, 'ask', 10)).toEqual([3, 7]);

    const set = h.apply(cmd.setFuturesFeeRates(a, 1, 40));
    expect(resultOf(set).code).toBe(ResultCode.Ok);
    expect(ratesOf(set)).toEqual({ makerFeeBps: 30, takerFeeBps: 60, futuresMakerFeeBps: 1, futuresTakerFeeBps: 40 });
    // A closes its long 10 as taker at 40 bps: 60; B, without rates of its own, 2 bps: 3.
    expect(fill(h, b, a, 'bid', 10)).toEqual([3, 60]);
    // A as maker at 1 bp: 1 (1.5 truncated); B as taker at 5 bps: 7.
    expect(fill(h, a, b, 'ask', 10)).toEqual([1, 7]);

    // Spot rates change only the spot rates; the futures rates stay A's own.
    expect(ratesOf(h.apply(cmd.setFeeRates(a, 0, 0)))).toEqual({ makerFeeBps: 0, takerFeeBps: 0, futuresMakerFeeBps: 1, futuresTakerFeeBps: 40 });
    expect(fill(h, b, a, 'ask', 10)).toEqual([3, 60]); // A buys back its short: taker 40 bps
    expect(ratesOf(h.apply(cmd.queryFeeRates(b)))).toEqual({ makerFeeBps: 30, takerFeeBps: 60, futuresMakerFeeBps: 2, futuresTakerFeeBps: 5 });

    // Own rates survive a snapshot round trip (the harness compares the state hash and bytes).
    h.restartFromSnapshot();
    expect(ratesOf(h.apply(cmd.queryFeeRates(a)))).toMatchObject({ futuresMakerFeeBps: 1, futuresTakerFeeBps: 40 });
    expect(fill(h, a, b, 'bid', 10)).toEqual([1, 7]);
    expect(h.exchange.totalUnits(QUOTE)).toBe(2 * FUNDS);
  });

  it('refuses an unknown account and a rate outside 0 to 10 000 bps, changing nothing', () => {
    const h = new EngineHarness(perpConfig());
    const [a] = h.fundedAccounts(1, { [QUOTE]: FUNDS });
    const hash = h.exchange.stateHash();
    expect(resultOf(h.apply(cmd.setFuturesFeeRates(42, 1, 1))).code).toBe(ResultCode.UnknownAccount);
    expect(resultOf(h.apply(cmd.setFuturesFeeRates(a, 10_001, 1))).code).toBe(ResultCode.FeeRateOutOfRange);
    expect(resultOf(h.apply(cmd.setFuturesFeeRates(a, 1, -1))).code).toBe(ResultCode.FeeRateOutOfRange);
    expect(h.exchange.stateHash()).toBe(hash);
    // Accepted, it changes the hash (the part appears once an account has rates of its own)…
    expect(resultOf(h.apply(cmd.setFuturesFeeRates(a, 2, 5))).code).toBe(ResultCode.Ok);
    expect(h.exchange.stateHash()).not.toBe(hash);
    // …even at the configured values: they are now the account's own.
    expect(ratesOf(h.apply(cmd.queryFeeRates(a)))).toMatchObject({ futuresMakerFeeBps: 2, futuresTakerFeeBps: 5 });
  });
});
