// A fixed command script whose engine snapshot, exported by the format-2 engine (before markets
// kept a guarded reference price), is stored in test/fixtures/engine-snapshot-v2.json: trades on
// both markets, a market order inside the band, resting orders on both sides and orders still
// waiting out the speed bump. snapshot-compat.test.ts loads that file into today's engine.

import { BASE, EngineHarness, M0, M1, OTHER, QUOTE, cmd, testConfig } from './engine-harness.js';
import type { EngineConfig } from '../../engine/bus/types.js';

export function legacyScenarioConfig(): EngineConfig {
  const config = testConfig({ speedBumpUs: 1000, makerFeeBps: 10, takerFeeBps: 50 });
  config.markets[M1] = { ...config.markets[M1], maxMultiplierBps: 12_500, minMultiplierBps: 7_500 };
  return config;
}

/** Runs the script; the last commands leave two places pending (their bump has not ended). */
export function runLegacyScenario(h: EngineHarness): void {
  const [a, b, c] = h.fundedAccounts(3, { [QUOTE]: 500_000, [BASE]: 5_000, [OTHER]: 5_000 });
  const step = () => h.timeUs + 2_000;
  h.apply(cmd.place(a, 'ask', 105, 20, { postOnly: true }));
  h.apply(cmd.place(a, 'ask', 110, 20, { postOnly: true }));
  h.apply(cmd.place(b, 'bid', 95, 30, { postOnly: true }));
  h.apply(cmd.place(c, 'bid', 106, 25), step());
  h.apply(cmd.tick(), step());
  h.apply(cmd.place(a, 'ask', 300, 10, { market: M1, postOnly: true }));
  h.apply(cmd.place(b, 'bid', 300, 4, { market: M1 }), step());
  h.apply(cmd.tick(), step());
  h.apply(cmd.market(c, 'bid', { qtyLots: 3 }, { market: M1 }), step());
  h.apply(cmd.tick(), step());
  h.apply(cmd.place(b, 'bid', 280, 7, { market: M1, postOnly: true }));
  h.apply(cmd.place(c, 'ask', 96, 5), step());
  h.apply(cmd.place(c, 'bid', 290, 2, { market: M1 }), step());
}
