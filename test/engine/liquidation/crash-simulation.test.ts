// The market-crash simulation (test/helpers/crash-sim.ts) on its fixed seeds: several hundred
// accounts on the default markets through gaps, frozen and stale feeds and interest hours, every
// check after every command. Over the seeds it must reach liquidations, bankruptcies, socialized
// losses, collateral conversions and (the even seed names backstop liquidity providers) backstop
// fills. CRASH_SEED=<n> runs that seed alone (a failure names its seed). The canaries
// run one seed against an engine with a planted fault in the insurance fund and must fail.

import { describe, expect, it } from 'vitest';
import { type EngineHarness, stateOf } from '../../helpers/engine-harness.js';
import { runCrashSim, type CrashSimReport } from '../../helpers/crash-sim.js';

const FIXED_SEEDS = [1, 4];
const ACCOUNTS = 300;
const ROUNDS = 80;
const chosen = process.env.CRASH_SEED === undefined ? null : Number(process.env.CRASH_SEED);

/** The engine state behind the harness's exchange, where a canary plants its fault. */

function run(seed: number, prepare?: (h: EngineHarness) => void): CrashSimReport {
  return runCrashSim({ seed, accounts: ACCOUNTS, rounds: ROUNDS, prepare });
}

describe('market-crash simulation', () => {
  it(chosen === null ? `holds every check over seeds ${FIXED_SEEDS.join(', ')} and reaches liquidations, bankruptcies, socialized losses and backstop fills` : `holds every check on CRASH_SEED=${chosen}`, () => {
    const reports = (chosen === null ? FIXED_SEEDS : [chosen]).map((seed) => run(seed));
    for (const report of reports) console.log(`crash simulation ${JSON.stringify(report)}`);
    for (const report of reports) {
      expect(report.gaps).toBeGreaterThan(0);
      expect(report.interestHours).toBeGreaterThan(0);
      expect(report.frozenSpells + report.staleSpells).toBeGreaterThan(0);
      expect(report.perpTrades).toBeGreaterThan(0);
      expect(report.liquidatingAtEnd).toBe(0);
    }
    if (chosen !== null) return;
    const total = (key: keyof CrashSimReport) => reports.reduce((sum, r) => sum + r[key], 0);
    expect(total('liquidations')).toBeGreaterThan(0);
    expect(total('liquidationFills')).toBeGreaterThan(0);
    expect(total('bankruptcies')).toBeGreaterThan(0);
    expect(total('socializedLosses')).toBeGreaterThan(0);
    // Traders left owing USDC on a position sell collateral (collateral conversion).
    expect(total('conversionFills')).toBeGreaterThan(0);
    expect(total('backstopFills')).toBeGreaterThan(0);
  });

  it('fails on an engine whose liquidation fee never reaches the fund (conservation)', () => {
    // The fee leaves the account and reaches no line: the harness's conservation check names the asset.
    const planted = (h: EngineHarness) => {
      const fund = stateOf(h.exchange).insurance;
      fund.takeFee = (assetIndex: number, units: number) => {
        fund.feesUnits[assetIndex] += units;
      };
    };
    expect(() => run(FIXED_SEEDS[0], planted)).toThrow(/CRASH_SEED=1.*not conserved/);
  });

  it('fails on an engine whose fund counts a socialized loss it did not record to lenders', () => {
    const planted = (h: EngineHarness) => {
      const fund = stateOf(h.exchange).insurance;
      const socialize = fund.socialize.bind(fund);
      fund.socialize = (assetIndex: number, units: number) => socialize(assetIndex, units + 1);
    };
    expect(() => run(FIXED_SEEDS[0], planted)).toThrow(/socialized/);
  });
});
