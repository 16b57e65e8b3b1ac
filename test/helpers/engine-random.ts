// A seeded random command stream for the engine core: places (every time in force, post-only,
// client ids, all self-trade modes, prices around a moving mid so books cross often), market
// orders by quantity and by quote quantity (some malformed), under random maker/taker fee rates
// and a narrow price band on market 1 (market orders stopping at it), cancels by
// id (own, others', unknown), by client id, cancel-all, deposits (some invalid), invalid orders,
// ticks, queries, operator commands (order book states, fee rates, some invalid), batches of
// places at one engine time, and engine time that advances by random steps across the speed bump. The
// generator reads the engine's outputs (order ids) to aim cancels at real orders, so it drives a
// harness; the harness records the stamped stream for replay.

import { CommandKind, OrderBookState, OrderEvent, RecordType, SelfTradePrevention, TimeInForce } from '../../engine/bus/types.js';
import { BASE, EngineHarness, M0, M1, OTHER, QUOTE, cmd, prng, randomInt, testConfig, type Rec } from './engine-harness.js';
import type { EngineConfig } from '../../engine/bus/types.js';

export const RANDOM_ACCOUNTS = 6;

export function randomConfig(seed: number): EngineConfig {
  const random = prng(seed ^ 0x5eed);
  const config = testConfig({
    speedBumpUs: [0, 1000, 5000][randomInt(random, 0, 2)],
    // High rates so that fees on these small amounts are not all rounded to zero.
    makerFeeBps: [0, 150, 2000][randomInt(random, 0, 2)],
    takerFeeBps: [0, 300, 2500][randomInt(random, 0, 2)],
    limits: { maxAccounts: 8, maxOpenOrdersPerAccount: 7, maxOrdersPerBook: 40, maxPriceLevelsPerSide: 8 },
  });
  // Market 1 gets a narrow price band (±1 % around its last trade, about ±3 ticks) so that
  // PriceOutOfBand happens often; market 0 stays unbanded.
  config.markets[1] = { ...config.markets[1], maxMultiplierBps: 10_100, minMultiplierBps: 9_900 };
  // Its guarded reference moves 1 % (3 ticks near 300) per 3 ms, so within a stream it both lags
  // the last price (market orders stop at its band) and catches up.
  config.referenceStepBps = 100;
  config.referenceIntervalUs = 3_000;
  return config;
}

/** Runs `steps` random commands through `h` (which checks invariants after each). */
export function runRandomStream(h: EngineHarness, seed: number, steps: number): void {
  const random = prng(seed);
  const pick = <T>(items: readonly T[]): T => items[randomInt(random, 0, items.length - 1)];
  const known: number[] = [];
  const remember = (records: Rec[]): void => {
    for (const r of records) if (r.type === RecordType.Order && r.event === OrderEvent.Accepted) known.push(r.orderId);
    if (known.length > 200) known.splice(0, known.length - 200);
  };
  for (let i = 1; i <= RANDOM_ACCOUNTS; i++) {
    h.createAccount(i);
    h.apply(cmd.deposit(i, QUOTE, randomInt(random, 2_000, 40_000)));
    h.apply(cmd.deposit(i, BASE, randomInt(random, 50, 400)));
    h.apply(cmd.deposit(i, OTHER, randomInt(random, 50, 400)));
  }
  const mid = [100, 300];
  // A market put in another state than Open is reopened a few steps later (at this step).
  const reopenAt = [Infinity, Infinity];
  for (let step = 0; step < steps; step++) {
    const account = randomInt(random, 1, RANDOM_ACCOUNTS);
    const market = random() < 0.7 ? M0 : M1;
    mid[market] = Math.max(10, Math.min(990, mid[market] + randomInt(random, -2, 2)));
    const time = h.timeUs + pick([0, 0, 1, 300, 1000, 4000]);
    const roll = random();
    let command;
    const reopen = reopenAt.findIndex((at) => at <= step);
    if (reopen >= 0) {
      reopenAt[reopen] = Infinity;
      command = cmd.setMarketState(reopen, OrderBookState.Open);
    } else if (roll < 0.1) {
      const side = random() < 0.5 ? 'bid' : 'ask';
      const stp = pick([SelfTradePrevention.RejectTaker, SelfTradePrevention.RejectMaker, SelfTradePrevention.RejectBoth]);
      const size = random() < 0.5 ? { qtyLots: randomInt(random, 1, 12) } : { quoteQtyUnits: randomInt(random, 1, 12) * mid[market] * 3 + randomInt(random, -40, 40) };
      command = cmd.market(account, side, size, { market, stp, tif: pick([TimeInForce.GTC, TimeInForce.IOC]) });
      const roll2 = random();
      if (roll2 < 0.04) command.priceTicks = mid[market];
      else if (roll2 < 0.08) command.flags! |= 1; // post-only: invalid for a market order
      else if (roll2 < 0.1) command.timeInForce = TimeInForce.FOK;
      else if (roll2 < 0.12) command = { ...command, qtyLots: 2, quoteQtyUnits: 300 };
    } else if (roll < 0.55) {
      command = cmd.place(account, random() < 0.5 ? 'bid' : 'ask', mid[market] + randomInt(random, -6, 6), randomInt(random, 1, 9), {
        market,
        tif: pick([TimeInForce.GTC, TimeInForce.GTC, TimeInForce.GTC, TimeInForce.IOC, TimeInForce.FOK]),
        stp: pick([SelfTradePrevention.RejectTaker, SelfTradePrevention.RejectMaker, SelfTradePrevention.RejectBoth]),
        clientId: random() < 0.3 ? randomInt(random, 1, 5) : undefined,
      });
      if (command.timeInForce === TimeInForce.GTC && random() < 0.3) command.flags! |= 1; // post-only
    } else if (roll < 0.72) {
      const orderId = known.length > 0 && random() < 0.9 ? pick(known) : randomInt(random, 1, 2 ** 40);
      command = cmd.cancel(account, orderId, market);
    } else if (roll < 0.78) {
      command = cmd.cancelByClientId(account, randomInt(random, 1, 5), market);
    } else if (roll < 0.8) {
      command = cmd.cancelAll(account, market);
    } else if (roll < 0.85) {
      command = cmd.deposit(random() < 0.9 ? account : 42, pick([QUOTE, BASE, OTHER, 7]), pick([0, -3, 1, 500, 5_000]));
    } else if (roll < 0.9) {
      command = pick([
        cmd.place(account, 'bid', 0, 1, { market }),
        cmd.place(account, 'ask', 100, 5000, { market }),
        cmd.place(account, 'bid', 100, 1, { market: 9 }),
        cmd.place(42, 'bid', 100, 1, { market }),
        cmd.place(account, 'bid', 999, 999, { market }),
        { kind: 50 as CommandKind },
      ]);
    } else if (roll < 0.925) {
      command = cmd.tick();
    } else if (roll < 0.935) {
      // Operator: a market's order book state. Mostly back to Open, so both books keep trading;
      // sometimes an invalid value or market.
      const state = random() < 0.2 ? OrderBookState.Open : pick([OrderBookState.Closed, OrderBookState.CancelOnly, OrderBookState.LimitOnly, OrderBookState.PostOnly, 5]);
      command = cmd.setMarketState(random() < 0.95 ? market : 9, state);
      if (state !== OrderBookState.Open) reopenAt[market] = step + randomInt(random, 3, 40);
    } else if (roll < 0.945) {
      // Operator: an account's fee rates (some out of range, some for an unknown account).
      command = cmd.setFeeRates(random() < 0.95 ? account : 42, pick([0, 1, 150, 2000, 10_000, 10_001]), pick([0, 5, 300, 2500, -1]));
    } else if (roll < 0.96) {
      // A batch: several places of one account at one engine time, as POST /api/v1/orders sends
      // them (each item its own command; malformed items are refused one by one).
      const count = randomInt(random, 2, 5);
      for (let item = 0; item < count; item++) {
        const place = random() < 0.15
          ? cmd.place(account, 'bid', 0, 1, { market })
          : cmd.place(account, random() < 0.5 ? 'bid' : 'ask', mid[market] + randomInt(random, -4, 4), randomInt(random, 1, 5), {
            market, postOnly: random() < 0.4, clientId: random() < 0.3 ? randomInt(random, 1, 5) : undefined,
          });
        if (item < count - 1) remember(h.apply(place, time));
        else command = place;
      }
    } else if (roll < 0.965) {
      command = cmd.queryFeeRates(random() < 0.9 ? account : 42);
    } else {
      command = pick([cmd.queryOpenOrders(account, market), cmd.queryBalances(account), cmd.querySnapshot(), cmd.queryOrder(account, pick(known.length ? known : [1]), market)]);
    }
    remember(h.apply(command, time));
  }
  // Reopen both markets, and let every pending order activate so every request has had its answer.
  for (const market of [M0, M1]) remember(h.apply(cmd.setMarketState(market, OrderBookState.Open)));
  remember(h.apply(cmd.tick(), h.timeUs + 1_000_000));
}
