// A market's kind selects its product rules. Spot is the default: spelling it out changes neither
// the engine's behaviour nor the configuration fingerprint that existing journals carry, and a
// kind the engine has no rules for is refused at start-up.
import { describe, expect, it } from 'vitest';
import { MarketKind, type EngineConfig } from '../../engine/bus/types.js';
import { Exchange } from '../../engine/core/exchange.js';
import { engineConfigFingerprint } from '../../engine/shell/journal.js';
import { testConfig } from '../helpers/engine-harness.js';

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
});
