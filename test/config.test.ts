// Configuration: embedded defaults, flags over environment, and the refusal of markets the engine
// could not hold exactly (a tick × step that is not a whole number of quote units, a lot finer
// than the base asset, a notional beyond the safe-integer range).

import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_MARKETS, buildMarket, loadConfig, type MarketConfig } from '../src/config.js';

const base: MarketConfig = {
  symbol: 'X_USDC', baseSymbol: 'SOL', quoteSymbol: 'USDC', tickSize: '0.01', stepSize: '0.01',
  minPrice: '0.01', maxPrice: '1000', minQuantity: '0.01', maxQuantity: '1000', createdAt: '2024-01-01T00:00:00.000000',
};

describe('configuration', () => {
  it('has embedded defaults: ports, data dir, threads, speed bump, three spot markets', () => {
    const config = loadConfig([], {});
    expect(config.port).toBe(8080);
    expect(config.adminPort).toBe(8081);
    expect(config.dataDir.endsWith('/data')).toBe(true);
    expect(config.speedBumpMs).toBe(100);
    expect(config.engine.speedBumpUs).toBe(100_000);
    expect([config.engine.makerFeeBps, config.engine.takerFeeBps]).toEqual([2, 5]);
    expect(buildMarket({ ...base, maxMultiplier: '1.0001', minMultiplier: '0' }, 0, DEFAULT_MARKETS.assets).spec.maxMultiplierBps).toBe(10_001);
    expect(() => buildMarket({ ...base, maxMultiplier: '1.00001' }, 0, DEFAULT_MARKETS.assets)).toThrow(/more than 4 decimals/);
    expect(() => buildMarket({ ...base, maxMultiplier: '0.9' }, 0, DEFAULT_MARKETS.assets)).toThrow(/at least 1/);
    expect(config.markets.map((m) => m.symbol)).toEqual(['SOL_USDC', 'BTC_USDC', 'ETH_USDC']);
    const sol = config.markets[0].spec;
    // SOL has 9 decimals: one 0.01 lot is 10^7 units; USDC has 6: 0.01 × 0.01 is 100 units.
    expect(sol.baseUnitsPerLot).toBe(10_000_000);
    expect(sol.quoteUnitsPerTickLot).toBe(100);
    expect([sol.maxMultiplierBps, sol.minMultiplierBps]).toEqual([12_500, 7_500]);
    const btc = config.markets[1].spec;
    expect(btc.baseUnitsPerLot).toBe(1000);
    expect(btc.quoteUnitsPerTickLot).toBe(1);
  });

  it('takes flags over environment variables over defaults', () => {
    const config = loadConfig(['--port', '9000', '--speed-bump-ms=0'], { PORT: '7000', ADMIN_PORT: '7001', DATA_DIR: '/tmp/x' });
    expect(config.port).toBe(9000);
    expect(config.adminPort).toBe(7001);
    expect(config.dataDir).toBe('/tmp/x');
    expect(config.engine.speedBumpUs).toBe(0);
  });

  it('refuses unknown flags and bad numbers with a clear message', () => {
    expect(() => loadConfig(['--prot', '1'], {})).toThrow(/unknown flag --prot/);
    // Switches take no value, and no flag may be given twice.
    expect(() => loadConfig(['--no-demo=1'], {})).toThrow(/--no-demo takes no value/);
    expect(() => loadConfig(['--no-demo', 'yes'], {})).toThrow(/unexpected argument "yes"/);
    expect(() => loadConfig(['--port', 'abc', '--port', '9000'], {})).toThrow(/--port is given twice/);
    expect(loadConfig(['--no-demo', '--no-compact'], {})).toMatchObject({ demoAccounts: false, compactJournal: false });
    expect(() => loadConfig(['--port', 'abc'], {})).toThrow(ConfigError);
    expect(() => loadConfig(['--inbound-slots', '1000'], {})).toThrow(/powers of two/);
  });

  it('refuses a market whose tick × step is not a whole number of quote units', () => {
    // 0.0001 × 0.001 = 1e-7 USDC, finer than USDC's 6 decimals.
    expect(() => buildMarket({ ...base, tickSize: '0.0001', stepSize: '0.001', minPrice: '0.0001', minQuantity: '0.001' }, 0, DEFAULT_MARKETS.assets))
      .toThrow(/X_USDC: tickSize 0.0001 × stepSize 0.001 is not a whole number of USDC units/);
  });

  it('refuses a lot finer than the base asset and a notional beyond the safe-integer range', () => {
    expect(() => buildMarket({ ...base, baseSymbol: 'BTC', stepSize: '0.000000001', minQuantity: '0.000000001' }, 0, DEFAULT_MARKETS.assets))
      .toThrow(/finer than BTC's 8 decimals/);
    expect(() => buildMarket({ ...base, maxPrice: '1000000', maxQuantity: '10000000' }, 0, DEFAULT_MARKETS.assets))
      .toThrow(/safe-integer range/);
  });

  it('refuses limits off the grid and unknown assets', () => {
    expect(() => buildMarket({ ...base, tickSize: '0.05', minPrice: '0.01' }, 0, DEFAULT_MARKETS.assets)).toThrow(/minPrice 0.01 is off the grid/);
    expect(() => buildMarket({ ...base, baseSymbol: 'DOGE' }, 0, DEFAULT_MARKETS.assets)).toThrow(/unknown base asset DOGE/);
  });
});
