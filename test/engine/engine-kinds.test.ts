// A market's kind selects its product rules. Spot is the default: spelling it out changes neither
// the engine's behaviour nor the configuration fingerprint that existing journals carry, and a
// kind the engine has no rules for is refused at start-up. A perpetual needs margin parameters
// valued in its quote, and a state from before its configuration gained perpetuals moves into one
// with them unchanged (snapshot bytes and state hash).
import { describe, expect, it } from 'vitest';
import { MarketKind, type EngineConfig } from '../../engine/bus/types.js';
import { Exchange } from '../../engine/core/exchange.js';
import { exportSnapshot, importSnapshot } from '../../engine/core/snapshot.js';
import { engineConfigFingerprint } from '../../engine/shell/journal.js';
import { BASE, cmd, EngineHarness, QUOTE, testConfig } from '../helpers/engine-harness.js';
import { marginConfig } from '../helpers/margin-harness.js';
import { perpConfig, perpMarket } from '../helpers/perp-harness.js';

function withKind(config: EngineConfig, kind: number): EngineConfig {
  return { ...config, markets: config.markets.map((market) => ({ ...market, kind: kind as MarketKind })) };
}

describe('market kinds', () => {
  it('a spelled-out Spot kind keeps the configuration fingerprint', () => {
    const config = testConfig();
    expect(config.markets.every((market) => market.kind === undefined)).toBe(true);
    expect(engineConfigFingerprint(withKind(config, MarketKind.Spot))).toBe(engineConfigFingerprint(config));
  });

  it('a kind without rules is refused at start-up and changes the fingerprint', () => {
    const config = withKind(testConfig(), 7);
    expect(() => new Exchange(config)).toThrow(/unknown market kind/);
    expect(engineConfigFingerprint(config)).not.toBe(engineConfigFingerprint(testConfig()));
  });

  it('a spot market named Spot gives the same state as one that names no kind', () => {
    const plain = new Exchange(testConfig());
    const spot = new Exchange(withKind(testConfig(), MarketKind.Spot));
    expect(spot.stateHash()).toBe(plain.stateHash());
  });

  it('a perpetual needs its parameters and margin valued in its quote', () => {
    expect(() => new Exchange(perpConfig())).not.toThrow();
    const noMargin = testConfig();
    noMargin.markets.push(perpMarket());
    expect(() => new Exchange(noMargin)).toThrow(/settled in the margin valuation asset/);
    const otherQuote = perpConfig();
    otherQuote.markets[2] = { ...otherQuote.markets[2], quoteAssetId: BASE, baseAssetId: QUOTE };
    expect(() => new Exchange(otherQuote)).toThrow(/settled in the margin valuation asset/);
    const bare = perpConfig();
    bare.markets[2] = { ...bare.markets[2], perp: undefined };
    expect(() => new Exchange(bare)).toThrow(/needs its perp parameters/);
    const spotWithPerp = marginConfig();
    spotWithPerp.markets[0] = { ...spotWithPerp.markets[0], perp: perpMarket().perp };
    expect(() => new Exchange(spotWithPerp)).toThrow(/needs its perp parameters, and only it/);
    expect(() => new Exchange(perpConfig({ fundingRateLowerBoundBps: 200 }))).toThrow(/funding rate bounds/);
    expect(() => new Exchange(perpConfig({ makerFeeBps: 10_001 }))).toThrow(/futures fee rates/);
  });

  it('a state from before the configuration gained a perpetual moves into it with the same hash', () => {
    const h = new EngineHarness(marginConfig());
    const [a, b] = h.fundedAccounts(2, { [QUOTE]: 100_000, [BASE]: 1_000 });
    h.apply(cmd.place(a, 'bid', 100, 5));
    h.apply(cmd.place(b, 'ask', 100, 2));
    h.apply(cmd.place(b, 'ask', 120, 1));
    const moved = new Exchange(perpConfig());
    importSnapshot(moved, exportSnapshot(h.exchange));
    moved.validateInvariants();
    expect(moved.stateHash()).toBe(h.exchange.stateHash());
    // The other way round is refused: a snapshot names more markets than the configuration has.
    const back = new Exchange(marginConfig());
    expect(() => importSnapshot(back, exportSnapshot(moved))).toThrow(/market count differs/);
  });
});
