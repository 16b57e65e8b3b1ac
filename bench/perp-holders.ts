// The perpetual benches' engine: the margin bench configuration with its one market a
// USDC-settled perpetual, and the setup of an engine whose accounts all hold a position (pairs of
// accounts trading one to seven lots at the index, opposite sides). Shared by the mark tick's scale
// (engine-perp.bench.ts) and the funding settlement's pause (engine-hourly.bench.ts).

import { commandFromSlot } from '../engine/bus/codec.js';
import { newCommandSlot } from '../engine/bus/generated/records.js';
import { CommandKind, MarketKind, type Command, type CommandSlot, type EngineConfig } from '../engine/bus/types.js';
import { FRACTION_ONE } from '../engine/core/margin/fixed.js';
import { cmd } from '../test/helpers/engine-harness.js';
import { BASE_ASSET, BENCH_ACCOUNTS, INDEX_PRICE_E9, QUOTE_ASSET, accountKey, benchMarginConfig } from './engine-stream.js';

/** The margin bench configuration with its one market a USDC-settled perpetual (hourly funding, 2 / 5 bps). */
export function perpBenchConfig(maxAccounts = BENCH_ACCOUNTS): EngineConfig {
  const config = benchMarginConfig({ maxAccounts });
  config.markets = config.markets.map((m) => ({
    ...m, symbol: 'SOL_USDC_PERP', kind: MarketKind.Perp,
    perp: {
      imf: { base: FRACTION_ONE / 50n, factor: 0n }, mmf: { base: FRACTION_ONE / 80n, factor: 0n },
      fundingIntervalMs: 3_600_000, fundingRateUpperBoundBps: 100, fundingRateLowerBoundBps: -100,
      openInterestLimitUnits: Number.MAX_SAFE_INTEGER, makerFeeBps: 2, takerFeeBps: 5,
    },
  }));
  return config;
}

/** A command from the fields given, every other field zero. */
export const benchCommand = (fields: Partial<CommandSlot>): Command => commandFromSlot({ ...newCommandSlot(), ...fields });

/**
 * SOL's index, then `accounts` accounts (each with its own key: accountKey covers 2^24 of them),
 * each funded with 10^4 USDC, then pairs trading at the index so that every account of a pair
 * holds a position. No command of it may be refused (the caller counts).
 */
export function positionHolderCommands(accounts: number): Command[] {
  const out = [benchCommand(cmd.setIndexPrice(BASE_ASSET, INDEX_PRICE_E9))];
  for (let a = 1; a <= accounts; a++) {
    out.push(benchCommand({ kind: CommandKind.CreateAccount, key: accountKey(a) }));
    out.push(benchCommand(cmd.deposit(a, QUOTE_ASSET, 10_000_000_000)));
  }
  for (let a = 1; a + 1 <= accounts; a += 2) {
    out.push(benchCommand(cmd.place(a, 'ask', 100_000, 1 + (a % 7), { market: 0, postOnly: true })));
    out.push(benchCommand(cmd.place(a + 1, 'bid', 100_000, 1 + (a % 7), { market: 0 })));
  }
  return out;
}
