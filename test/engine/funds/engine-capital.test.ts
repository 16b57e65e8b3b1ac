// Engine core capital commands: Withdraw moves funds out at once and conservation reads
// deposits − withdrawals; ConvertDust checks every precondition, pays 95% of the last trade price
// rounded down out of the exchange's collected fees, and changes nothing when refused;
// ConfirmWithdrawal changes no state. The harness checks invariants and conservation after every
// command, and the stream replays to the same state hash.

import { describe, expect, it } from 'vitest';
import { CommandKind, RecordType, ResultCode } from '../../../engine/bus/types.js';
import { dustPayoutUnits } from '../../../engine/core/funds/capital.js';
import { BASE, BASE_PER_LOT, EngineHarness, M0, QUOTE, QUOTE_PER_TICK_LOT, cmd, replay, resultOf, testConfig } from '../../helpers/engine-harness.js';

const withdraw = (accountId: number, assetId: number, amountUnits: number) => ({ kind: CommandKind.Withdraw, accountId, assetId, amountUnits });
const dust = (accountId: number, marketId: number, amountUnits: number) => ({ kind: CommandKind.ConvertDust, accountId, marketId, amountUnits });
const banded = () => {
  const config = testConfig();
  config.markets = config.markets.map((m) => ({ ...m, minQtyLots: 5, maxMultiplierBps: 20_000, minMultiplierBps: 5_000 }));
  return config;
};

describe('Withdraw', () => {
  it('moves available units out at once; refusals change nothing', () => {
    const h = new EngineHarness();
    const [a] = h.fundedAccounts(1, { [QUOTE]: 1000 });
    h.apply(cmd.place(a, 'bid', 100, 3)); // locks 100 × 3 × 3 = 900
    const before = h.exchange.stateHash();
    expect(resultOf(h.apply(withdraw(a, QUOTE, 101))).code).toBe(ResultCode.InsufficientFunds);
    expect(resultOf(h.apply(withdraw(a, QUOTE, 0))).code).toBe(ResultCode.AmountOutOfRange);
    expect(resultOf(h.apply(withdraw(a, 77, 1))).code).toBe(ResultCode.UnknownAsset);
    expect(resultOf(h.apply(withdraw(99, QUOTE, 1))).code).toBe(ResultCode.UnknownAccount);
    expect(h.exchange.stateHash()).toBe(before);
    const records = h.apply(withdraw(a, QUOTE, 100));
    const result = resultOf(records);
    expect(result.code).toBe(ResultCode.Ok);
    expect(result.value).toBe(h.seq); // the withdrawal id is its sequence number
    expect(records.some((r) => r.type === RecordType.Balance && r.availableUnits === 0 && r.lockedUnits === 900)).toBe(true);
    expect(h.balance(a, QUOTE)).toEqual([0, 900]);
    expect(h.exchange.totalUnits(QUOTE)).toBe(900); // deposits 1000 − withdrawals 100
  });

  it('replays to the same state', () => {
    const h = new EngineHarness();
    const [a] = h.fundedAccounts(1, { [QUOTE]: 500, [BASE]: 70 });
    h.apply(withdraw(a, BASE, 30));
    h.apply(withdraw(a, QUOTE, 1));
    expect(replay(h.config, h.stream).exchange.stateHash()).toBe(h.exchange.stateHash());
  });
});

describe('ConvertDust', () => {
  it('computes 95% of the value, rounded down, exactly', () => {
    // 7 base units at 333 ticks: 7 × 333 × 3 / 10 = 699.3 quote units; 95% = 664.335 → 664
    expect(dustPayoutUnits(7, 333, QUOTE_PER_TICK_LOT, BASE_PER_LOT)).toBe(664);
    expect(dustPayoutUnits(0, 333, 3, 10)).toBe(0);
    expect(dustPayoutUnits(2 ** 40, 2 ** 20, 7, 3)).toBe(Number((2n ** 60n * 7n * 95n) / 300n));
  });

  it('checks every precondition and changes nothing when refused', () => {
    const config = banded();
    config.takerFeeBps = 100;
    const h = new EngineHarness(config);
    const [a, b, c] = h.fundedAccounts(3, { [QUOTE]: 1_000_000 });
    h.apply(cmd.deposit(a, BASE, 1000 + 7)); // 100 lots + 7 units of dust
    h.apply(cmd.deposit(c, BASE, 7));
    // No trade yet: no mark price.
    const before = h.exchange.stateHash();
    expect(resultOf(h.apply(dust(c, M0, 7))).code).toBe(ResultCode.DustNoMarkPrice);
    expect(h.exchange.stateHash()).toBe(before);
    // a sells 100 lots at 333 to b (b is the taker: pays 1% of the 100 lots received in base).
    h.apply(cmd.place(a, 'ask', 333, 100));
    h.apply(cmd.place(b, 'bid', 333, 100));
    expect(h.balance(a, BASE)).toEqual([7, 0]);
    const fees = () => h.exchange.totalUnits(QUOTE) - [a, b, c].reduce((sum, id) => sum + h.balance(id, QUOTE)[0] + h.balance(id, QUOTE)[1], 0);
    // The seller (maker, 0 bps) paid no quote fee, so the exchange holds no quote to pay with.
    expect(fees()).toBe(0);
    expect(resultOf(h.apply(dust(c, M0, 7))).code).toBe(ResultCode.DustTreasuryShort);
    // Fees in quote: b sells 99 lots back as a taker at 1%: 99 × 333 × 3 = 98901 quote, fee 989.
    h.apply(cmd.place(a, 'bid', 333, 99));
    h.apply(cmd.place(b, 'ask', 333, 99));
    expect(fees()).toBe(989);
    const mid = h.exchange.stateHash();
    expect(resultOf(h.apply(dust(c, M0, 6))).code).toBe(ResultCode.DustBalanceChanged);
    expect(resultOf(h.apply(dust(c, 1, 7))).code).toBe(ResultCode.DustNotEligible); // no BTC at all
    expect(resultOf(h.apply(dust(a, M0, 1007))).code).toBe(ResultCode.DustNotEligible); // 100 lots: not dust
    expect(resultOf(h.apply(dust(c, 42, 7))).code).toBe(ResultCode.UnknownMarket);
    expect(h.exchange.stateHash()).toBe(mid);
    const quoteBefore = h.balance(c, QUOTE)[0];
    const result = resultOf(h.apply(dust(c, M0, 7)));
    expect(result.code).toBe(ResultCode.Ok);
    expect(result.value).toBe(664); // 7 units × 333 × 3 / 10 × 95%, rounded down
    expect(h.balance(c, BASE)).toEqual([0, 0]);
    expect(h.balance(c, QUOTE)[0]).toBe(quoteBefore + 664);
    expect(fees()).toBe(989 - 664);
    expect(replay(h.config, h.stream).exchange.stateHash()).toBe(h.exchange.stateHash());
  });
});

describe('ConfirmWithdrawal', () => {
  it('changes no state and refuses ids that cannot be withdrawals', () => {
    const h = new EngineHarness();
    const [a] = h.fundedAccounts(1, { [QUOTE]: 10 });
    const id = resultOf(h.apply(withdraw(a, QUOTE, 4))).value;
    const before = h.exchange.stateHash();
    expect(resultOf(h.apply({ kind: CommandKind.ConfirmWithdrawal, accountId: a, orderId: id })).code).toBe(ResultCode.Ok);
    expect(resultOf(h.apply({ kind: CommandKind.ConfirmWithdrawal, accountId: a, orderId: h.seq + 5 })).code).toBe(ResultCode.InvalidCommand);
    expect(resultOf(h.apply({ kind: CommandKind.ConfirmWithdrawal, accountId: 9, orderId: id })).code).toBe(ResultCode.UnknownAccount);
    expect(h.exchange.stateHash()).toBe(before);
  });
});
