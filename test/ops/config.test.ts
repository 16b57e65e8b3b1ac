// Configuration: embedded defaults, flags over environment, and the refusal of markets the engine
// could not hold exactly (a tick × step that is not a whole number of quote units, a lot finer
// than the base asset, a notional beyond the safe-integer range).

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_MARKETS, buildMarket, loadConfig, type MarketConfig } from '../../src/config.js';
import { MarketKind } from '../../engine/bus/types.js';
import { marketJson } from '../../src/routes/markets.js';

const base: MarketConfig = {
  symbol: 'X_USDC', baseSymbol: 'SOL', quoteSymbol: 'USDC', tickSize: '0.01', stepSize: '0.01',
  minPrice: '0.01', maxPrice: '1000', minQuantity: '0.01', maxQuantity: '1000', createdAt: '2024-01-01T00:00:00.000000',
};

describe('configuration', () => {
  it('has embedded defaults: ports, data dir, threads, speed bump, three spot markets and three perpetuals', () => {
    const config = loadConfig([], {});
    expect(config.port).toBe(8080);
    expect(config.adminPort).toBe(8081);
    expect(config.dataDir.endsWith('/data')).toBe(true);
    expect(config.speedBumpMs).toBe(100);
    expect(config.historyThreads).toBe(1);
    expect(config.engine.speedBumpUs).toBe(100_000);
    expect([config.engine.makerFeeBps, config.engine.takerFeeBps]).toEqual([2, 5]);
    expect(buildMarket({ ...base, maxMultiplier: '1.0001', minMultiplier: '0' }, 0, DEFAULT_MARKETS.assets).spec.maxMultiplierBps).toBe(10_001);
    expect(() => buildMarket({ ...base, maxMultiplier: '1.00001' }, 0, DEFAULT_MARKETS.assets)).toThrow(/more than 4 decimals/);
    expect(() => buildMarket({ ...base, maxMultiplier: '0.9' }, 0, DEFAULT_MARKETS.assets)).toThrow(/at least 1/);
    expect(config.markets.map((m) => m.symbol)).toEqual(['SOL_USDC', 'BTC_USDC', 'ETH_USDC', 'SOL_USDC_PERP', 'BTC_USDC_PERP', 'ETH_USDC_PERP']);
    const solPerp = config.markets[3].spec;
    expect(solPerp.kind).toBe(MarketKind.Perp);
    expect(solPerp.baseAssetId).toBe(1); // the underlying SOL, never held through the perp
    expect(solPerp.perp).toEqual({
      imf: { base: 20_000_000_000n, factor: 127_500_000n }, mmf: { base: 12_500_000_000n, factor: 76_500_000n },
      fundingIntervalMs: 3_600_000, fundingRateUpperBoundBps: 100, fundingRateLowerBoundBps: -100,
      openInterestLimitUnits: 4_000_000 * 1e9, makerFeeBps: 2, takerFeeBps: 5,
    });
    const sol = config.markets[0].spec;
    // SOL has 9 decimals: one 0.01 lot is 10^7 units; USDC has 6: 0.01 × 0.01 is 100 units.
    expect(sol.baseUnitsPerLot).toBe(10_000_000);
    expect(sol.quoteUnitsPerTickLot).toBe(100);
    expect([sol.maxMultiplierBps, sol.minMultiplierBps]).toEqual([12_500, 7_500]);
    const btc = config.markets[1].spec;
    expect(btc.baseUnitsPerLot).toBe(1000);
    expect(btc.quoteUnitsPerTickLot).toBe(1);
  });

  it('realizes perpetual PnL at mark every 10 s by default; 0 turns it off; a configuration without perpetuals carries nothing', () => {
    expect(loadConfig([], {}).engine.realizePnlIntervalUs).toBe(10_000_000);
    expect(loadConfig(['--realize-pnl-interval-ms', '2500'], {}).engine.realizePnlIntervalUs).toBe(2_500_000);
    expect(loadConfig([], { REALIZE_PNL_INTERVAL_MS: '0' }).engine).not.toHaveProperty('realizePnlIntervalUs');
    expect(() => loadConfig(['--realize-pnl-interval-ms', '-1'], {})).toThrow(/PnL realization interval/);
    expect(() => loadConfig(['--realize-pnl-interval-ms', '86400001'], {})).toThrow(/from 0 to 86400000/);
    // Each pass in steps of 128 positions by default; 0 runs it in one command; no steps without realization.
    expect(loadConfig([], {}).engine.realizeStepPositions).toBe(128);
    expect(loadConfig(['--realize-step-positions', '16'], {}).engine.realizeStepPositions).toBe(16);
    expect(loadConfig([], { REALIZE_STEP_POSITIONS: '0' }).engine).not.toHaveProperty('realizeStepPositions');
    expect(loadConfig([], { REALIZE_STEP_POSITIONS: '0' }).engine.realizePnlIntervalUs).toBe(10_000_000);
    expect(loadConfig([], { REALIZE_PNL_INTERVAL_MS: '0' }).engine).not.toHaveProperty('realizeStepPositions');
    expect(() => loadConfig(['--realize-step-positions', '1000001'], {})).toThrow(/positions per realization step/);
    // Each funding pass in steps of 128 holders by default; 0 runs it in one command.
    expect(loadConfig([], {}).engine.fundingStepPositions).toBe(128);
    expect(loadConfig(['--funding-step-positions', '32'], {}).engine.fundingStepPositions).toBe(32);
    expect(loadConfig([], { FUNDING_STEP_POSITIONS: '0' }).engine).not.toHaveProperty('fundingStepPositions');
    expect(() => loadConfig(['--funding-step-positions', 'x'], {})).toThrow(/holders per funding step/);
    // The hour's pass over the lenders and borrowers in steps of 128 accounts by default; 0 runs it in one command.
    expect(loadConfig([], {}).engine.interestStepAccounts).toBe(128);
    expect(loadConfig(['--interest-step-accounts', '16'], {}).engine.interestStepAccounts).toBe(16);
    expect(loadConfig([], { INTEREST_STEP_ACCOUNTS: '0' }).engine).not.toHaveProperty('interestStepAccounts');
    expect(() => loadConfig(['--interest-step-accounts', '-1'], {})).toThrow(/accounts per interest step/);
    const dir = mkdtempSync(join(tmpdir(), 'spot-only-'));
    const file = join(dir, 'markets.json');
    writeFileSync(file, JSON.stringify({ ...DEFAULT_MARKETS, markets: DEFAULT_MARKETS.markets.filter((m) => m.marketType !== 'PERP') }));
    try {
      expect(loadConfig(['--config', file], {}).engine).not.toHaveProperty('realizePnlIntervalUs');
      expect(loadConfig(['--config', file], {}).engine).not.toHaveProperty('fundingStepPositions');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('takes the Auto-Close MF divisor and offset from a flag, the environment or the markets file; at the defaults the engine carries nothing', () => {
    expect(loadConfig([], {}).engine).not.toHaveProperty('liquidation');
    expect(loadConfig(['--auto-close-mf-divisor', '2', '--auto-close-mf-offset', '0.006'], {}).engine).not.toHaveProperty('liquidation');
    expect(loadConfig(['--auto-close-mf-divisor', '3'], {}).engine.liquidation).toEqual({ stepIntervalUs: 1_000_000, chunkBps: 1_000, feeBps: 100, autoCloseDivisor: 3, autoCloseOffsetE12: 6_000_000_000 });
    expect(loadConfig([], { AUTO_CLOSE_MF_OFFSET: '0.01' }).engine.liquidation).toMatchObject({ autoCloseDivisor: 2, autoCloseOffsetE12: 10_000_000_000 });
    // The flag over the environment.
    expect(loadConfig(['--auto-close-mf-divisor', '4'], { AUTO_CLOSE_MF_DIVISOR: '5' }).engine.liquidation).toMatchObject({ autoCloseDivisor: 4 });
    const dir = mkdtempSync(join(tmpdir(), 'auto-close-'));
    const file = join(dir, 'markets.json');
    writeFileSync(file, JSON.stringify({ ...DEFAULT_MARKETS, autoCloseMfDivisor: 5, autoCloseMfOffset: '0' }));
    try {
      expect(loadConfig(['--config', file], {}).engine.liquidation).toMatchObject({ autoCloseDivisor: 5, autoCloseOffsetE12: 0 });
      expect(loadConfig(['--config', file], { AUTO_CLOSE_MF_DIVISOR: '6' }).engine.liquidation).toMatchObject({ autoCloseDivisor: 6, autoCloseOffsetE12: 0 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    for (const [flags, message] of [
      [['--auto-close-mf-divisor', '0'], /Auto-Close MF divisor must be from 1 to 1000/],
      [['--auto-close-mf-divisor', '1.5'], /Auto-Close MF divisor must be a whole number/],
      [['--auto-close-mf-offset', '1.5'], /autoCloseMfOffset must be a decimal string from 0 to 1/],
      [['--auto-close-mf-offset', '-0.1'], /autoCloseMfOffset/],
      [['--auto-close-mf-offset', '0.0000000000001'], /at most 12 decimals/],
    ] as const) expect(() => loadConfig([...flags], {}), flags.join(' ')).toThrow(message);
  });

  it('limits every account\'s perpetual positions to 100,000,000 USDC by default, from the flag, the environment or the markets file; each perpetual weighs 1 unless it names a weight', () => {
    const defaults = loadConfig([], {});
    expect(defaults.engine.positionLimitUnits).toBe(100_000_000 * 1e6);
    expect(defaults.positionLimit).toBe('100000000');
    // A weight of 1 leaves the perpetual's spec (and the configuration's fingerprint) as it was.
    expect(defaults.engine.markets.filter((m) => m.perp !== undefined).map((m) => m.perp!.positionLimitWeight)).toEqual([undefined, undefined, undefined]);
    expect(loadConfig(['--position-limit', '2500.5'], { POSITION_LIMIT: '7' }).engine.positionLimitUnits).toBe(2_500_500_000);
    expect(loadConfig([], { POSITION_LIMIT: '7' }).engine.positionLimitUnits).toBe(7_000_000);
    expect(() => loadConfig(['--position-limit', '1.0000001'], {})).toThrow(/more than 6 decimals/);
    expect(() => loadConfig(['--position-limit', '-5'], {})).toThrow(/position limit/);
    expect(() => loadConfig(['--position-limit', '1e9'], {})).toThrow(/position limit/);
    expect(() => loadConfig([], { POSITION_LIMIT: '99999999999' })).toThrow(/safe-integer range/);
    const dir = mkdtempSync(join(tmpdir(), 'position-limit-'));
    const write = (file: object): string => {
      const path = join(dir, `markets-${Math.random().toString(36).slice(2)}.json`);
      writeFileSync(path, JSON.stringify(file));
      return path;
    };
    try {
      const weighted = write({
        ...DEFAULT_MARKETS, positionLimit: '5000',
        markets: DEFAULT_MARKETS.markets.map((m) => (m.symbol === 'BTC_USDC_PERP' ? { ...m, positionLimitWeight: '1.5' } : m)),
      });
      const config = loadConfig(['--config', weighted], {});
      expect(config.engine.positionLimitUnits).toBe(5_000_000_000);
      expect(config.engine.markets.find((m) => m.symbol === 'BTC_USDC_PERP')!.perp!.positionLimitWeight).toBe(1_500_000_000_000n);
      // GET /api/v1/markets shows each perpetual's weight as the configured decimal.
      expect(config.markets.filter((m) => m.spec.perp !== undefined).map((m) => marketJson(m).positionLimitWeight)).toEqual(['1', '1.5', '1']);
      expect(loadConfig(['--config', weighted, '--position-limit', '10'], {}).engine.positionLimitUnits).toBe(10_000_000);
      const refused = (edit: Record<string, unknown>, symbol = 'SOL_USDC_PERP') =>
        () => loadConfig(['--config', write({ ...DEFAULT_MARKETS, markets: DEFAULT_MARKETS.markets.map((m) => (m.symbol === symbol ? { ...m, ...edit } : m)) })], {});
      expect(refused({ positionLimitWeight: '1000.5' })).toThrow(/positionLimitWeight must be from 0 to 1000/);
      expect(refused({ positionLimitWeight: 2 })).toThrow(/positionLimitWeight must be a plain non-negative decimal string/);
      expect(refused({ positionLimitWeight: '1' }, 'SOL_USDC')).toThrow(/positionLimitWeight is a perpetual's field/);
      expect(() => loadConfig(['--config', write({ ...DEFAULT_MARKETS, positionLimit: 5 })], {})).toThrow(/positionLimit must be a decimal string/);
      // Without perpetuals there is no position to limit: the configuration carries no limit.
      const spotOnly = write({ ...DEFAULT_MARKETS, markets: DEFAULT_MARKETS.markets.filter((m) => m.marketType !== 'PERP') });
      expect(loadConfig(['--config', spotOnly], {}).engine).not.toHaveProperty('positionLimitUnits');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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
    // Both apps listen with SO_REUSEPORT: one port for both would mix operator and public routes.
    expect(() => loadConfig(['--port', '9100', '--admin-port', '9100'], {})).toThrow(/public port and the admin port must differ/);
    expect(loadConfig(['--port', '0', '--admin-port', '0'], {})).toMatchObject({ port: 0, adminPort: 0 });
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

describe('configuration edges', () => {
  const dir = mkdtempSync(join(tmpdir(), 'exchange-config-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let files = 0;
  /** Writes `text` (or `value` as JSON) to a new markets file and returns its path. */
  const marketsFile = (value: unknown, text = JSON.stringify(value)): string => {
    const path = join(dir, `markets-${++files}.json`);
    writeFileSync(path, text);
    return path;
  };
  /** The ConfigError message loading this configuration throws (fails the test if it loads). */
  const refusal = (argv: string[], env: NodeJS.ProcessEnv = {}): string => {
    try {
      loadConfig(argv, env);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const message = (error as Error).message;
      expect(message).not.toContain('\n');
      return message;
    }
    throw new Error(`configuration ${JSON.stringify({ argv, env })} was accepted`);
  };
  const withFile = (value: unknown) => refusal(['--config', marketsFile(value)]);
  const [sol, usdc] = [DEFAULT_MARKETS.assets[1], DEFAULT_MARKETS.assets[0]];
  const solUsdc = DEFAULT_MARKETS.markets[0];

  it('refuses out-of-range numbers from flags and environment', () => {
    expect(refusal(['--port', '65536'])).toBe('port must be from 0 to 65535');
    expect(refusal(['--front-threads', '0'])).toBe('front threads must be from 1 to 64');
    expect(refusal(['--snapshot-keep', '0'])).toBe('snapshots kept must be from 1 to 1000');
    expect(refusal(['--ws-idle-timeout-s', '7'])).toBe('WebSocket idle timeout (s) must be from 8 to 900');
    expect(refusal(['--history-threads', '17'])).toBe('history threads per front thread must be from 0 to 16');
    expect(refusal([], { HISTORY_THREADS: 'two' })).toBe('history threads per front thread must be a whole number, got "two"');
    expect(refusal([], { SPEED_BUMP_MS: '60001' })).toBe('speed bump (ms) must be from 0 to 60000');
    expect(refusal([], { OUTBOUND_SLOTS: String(1 << 23) })).toBe(`outbound slots must be from 2 to ${1 << 22}`);
    expect(refusal([], { PORT: '-1' })).toBe('port must be a whole number, got "-1"');
    expect(refusal([], { ADMIN_PORT: '80.5' })).toBe('admin port must be a whole number, got "80.5"');
    expect(refusal(['--snapshot-every', '9007199254740993'])).toMatch(/^snapshot interval \(commands\) must be from 0 to/);
  });

  it('refuses a flag without a value, an empty value and an empty environment variable', () => {
    expect(refusal(['--data-dir'])).toBe('--data-dir needs a value');
    expect(refusal(['--port', '--no-demo'])).toBe('--port needs a value');
    // An empty value would otherwise mean the working directory (data dir) or no address (host).
    expect(refusal(['--data-dir='])).toBe('--data-dir needs a value');
    expect(refusal(['--host='])).toBe('--host needs a value');
    expect(refusal([], { DATA_DIR: '' })).toBe('DATA_DIR is set but empty');
    expect(refusal([], { CONFIG_FILE: '' })).toBe('CONFIG_FILE is set but empty');
  });

  it('refuses on/off environment variables other than 0 and 1', () => {
    expect(refusal([], { COMPACT_JOURNAL: 'false' })).toBe('COMPACT_JOURNAL must be 0 or 1, got "false"');
    expect(refusal([], { DEMO_ACCOUNTS: 'no' })).toBe('DEMO_ACCOUNTS must be 0 or 1, got "no"');
    expect(loadConfig([], { COMPACT_JOURNAL: '0', DEMO_ACCOUNTS: '1' })).toMatchObject({ compactJournal: false, demoAccounts: true });
  });

  it('refuses a missing or malformed markets file, naming the file', () => {
    const missing = join(dir, 'no-such.json');
    expect(refusal(['--config', missing])).toMatch(new RegExp(`^markets file ${missing}: ENOENT`));
    const truncated = marketsFile(null, '{"assets": [');
    expect(refusal(['--config', truncated])).toMatch(new RegExp(`^markets file ${truncated} is not valid JSON: `));
    // A parse error message quoting several lines of the file still comes out on one line.
    const broken = marketsFile(null, '{\n  "assets": [],\n  "markets": [,]\n}');
    expect(refusal(['--config', broken])).toMatch(new RegExp(`^markets file ${broken} is not valid JSON: `));
    for (const value of [null, [], 'markets', {}, { assets: [], markets: {} }]) {
      expect(withFile(value)).toBe('the markets file needs "assets" and "markets" arrays');
    }
    expect(withFile({ ...DEFAULT_MARKETS, makerFee: 1 })).toMatch(/^the markets file has an unknown key "makerFee"/);
  });

  it('refuses duplicate and malformed assets', () => {
    expect(withFile({ assets: [usdc, sol, usdc], markets: [] })).toBe('asset USDC is listed twice');
    expect(withFile({ assets: [null], markets: [] })).toBe('asset #1 is not a JSON object');
    expect(withFile({ assets: [{ ...sol, symbol: 'sol' }], markets: [] })).toBe('asset "sol": bad symbol');
    expect(withFile({ assets: [{ ...sol, decimals: 13 }], markets: [] })).toBe('asset SOL: decimals must be an integer from 0 to 12');
    expect(withFile({ assets: [{ ...sol, decimals: '9' }], markets: [] })).toBe('asset SOL: decimals must be an integer from 0 to 12');
    expect(withFile({ assets: [{ ...sol, blockchain: undefined }], markets: [] })).toBe('asset SOL: blockchain must be a non-empty string');
  });

  it('refuses duplicate and malformed markets', () => {
    const assets = [usdc, sol];
    expect(withFile({ assets, markets: [solUsdc, solUsdc] })).toBe('market SOL_USDC is listed twice');
    expect(withFile({ assets, markets: [null] })).toBe('market #1 is not a JSON object');
    expect(withFile({ assets, markets: [{ ...solUsdc, symbol: 'SOL.USDC' }] })).toMatch(/^market #1: bad symbol "SOL.USDC"/);
    expect(withFile({ assets, markets: [{ ...solUsdc, symbol: 'sol_usdc' }] })).toMatch(/^market #1: bad symbol "sol_usdc"/);
    expect(withFile({ assets, markets: [{ ...solUsdc, tickSize: 0.01 }] })).toBe('market SOL_USDC: tickSize must be a string');
    expect(withFile({ assets, markets: [{ ...solUsdc, createdAt: undefined }] })).toBe('market SOL_USDC: createdAt must be a string');
    expect(withFile({ assets, markets: [{ ...solUsdc, maxMultiplier: 2 }] })).toBe('market SOL_USDC: maxMultiplier must be a string');
    const selfMarket = { ...solUsdc, symbol: 'SOL_SOL', quoteSymbol: 'SOL', maxPrice: '10', maxQuantity: '10' };
    expect(withFile({ assets, markets: [selfMarket] })).toBe('market SOL_SOL: base and quote asset are both SOL');
    expect(withFile({ assets, markets: [{ ...solUsdc, quoteSymbol: 'EUR' }] })).toBe('market SOL_USDC: unknown quote asset EUR');
  });

  it('refuses engine limits that are unknown, not positive whole numbers, or beyond an account id', () => {
    const file = (limits: unknown) => withFile({ ...DEFAULT_MARKETS, limits });
    expect(file({ maxAcounts: 10 })).toMatch(/^limits: unknown limit "maxAcounts"/);
    expect(file({ maxAccounts: 0 })).toBe('limits: maxAccounts must be a positive whole number, got 0');
    expect(file({ maxOrdersPerBook: -5 })).toBe('limits: maxOrdersPerBook must be a positive whole number, got -5');
    expect(file({ maxOpenOrdersPerAccount: 1.5 })).toBe('limits: maxOpenOrdersPerAccount must be a positive whole number, got 1.5');
    expect(file({ maxPriceLevelsPerSide: '100' })).toBe('limits: maxPriceLevelsPerSide must be a positive whole number, got "100"');
    expect(file({ maxAccounts: 0x7fffffff })).toMatch(/^limits: maxAccounts must be below 2147483647/);
    expect(file([])).toBe('"limits" must be a JSON object');
    expect(withFile({ ...DEFAULT_MARKETS, makerFeeBps: -1 })).toBe('makerFeeBps must be an integer number of basis points from 0 to 10000');
    expect(withFile({ ...DEFAULT_MARKETS, takerFeeBps: 10_001 })).toBe('takerFeeBps must be an integer number of basis points from 0 to 10000');
    const accepted = loadConfig(['--config', marketsFile({ ...DEFAULT_MARKETS, limits: { maxAccounts: 7 } })], {});
    expect(accepted.engine.limits).toMatchObject({ maxAccounts: 7, maxOpenOrdersPerAccount: 500 });
  });

  it('takes the platform maximum leverage as a decimal string, only when given (the fingerprint of a file without it stays)', () => {
    const refused = 'maxLeverage must be a decimal string from 1 to 1000 with at most 2 decimals';
    for (const value of ['0.99', '1000.01', '2.555', 20, '']) expect(withFile({ ...DEFAULT_MARKETS, maxLeverage: value })).toBe(refused);
    expect(loadConfig(['--config', marketsFile({ ...DEFAULT_MARKETS, maxLeverage: '20.5' })], {}).engine.maxLeverageHundredths).toBe(2_050);
    expect('maxLeverageHundredths' in loadConfig(['--config', marketsFile(DEFAULT_MARKETS)], {}).engine).toBe(false);
  });
  it('builds a perpetual from the venue\'s PERP fields and refuses one that lacks or misstates them', () => {
    const perp = DEFAULT_MARKETS.markets.find((m) => m.symbol === 'BTC_USDC_PERP')!;
    const assets = DEFAULT_MARKETS.assets;
    expect(buildMarket(perp, 4, assets, { makerFeeBps: 1, takerFeeBps: 3 }).spec.perp).toMatchObject({ makerFeeBps: 1, takerFeeBps: 3, openInterestLimitUnits: 4000 * 1e8 });
    expect(buildMarket({ ...perp, fundingInterval: '3600000' }, 4, assets).spec.perp?.fundingIntervalMs).toBe(3_600_000);
    expect(() => buildMarket({ ...perp, marketType: 'DATED' as 'PERP' }, 4, assets)).toThrow(/marketType must be/);
    expect(() => buildMarket({ ...perp, imfFunction: undefined }, 4, assets)).toThrow(/needs imfFunction/);
    expect(() => buildMarket({ ...perp, quoteSymbol: 'SOL', baseSymbol: 'BTC' }, 4, assets)).toThrow(/settled in USDC/);
    expect(() => buildMarket({ ...perp, fundingRateUpperBound: '1.5' }, 4, assets)).toThrow(/basis points/);
    expect(() => buildMarket({ ...perp, fundingRateLowerBound: '200' }, 4, assets)).toThrow(/above fundingRateUpperBound/);
    expect(() => buildMarket({ ...perp, openInterestLimit: '0.000000001' }, 4, assets)).toThrow(/more than 8 decimals/);
    expect(() => buildMarket({ ...perp, mmfFunction: { type: 'sqrt', base: '0.5', factor: '0' } }, 4, assets)).toThrow(/above imfFunction.base/);
    const { marketType: _type, ...asSpot } = perp;
    expect(() => buildMarket(asSpot, 4, assets)).toThrow(/is a perpetual's field/);
  });

  it('takes a perpetual\'s optional mark band in basis points and refuses a funding interval the per-second mark cannot end', () => {
    const perp = DEFAULT_MARKETS.markets.find((m) => m.symbol === 'SOL_USDC_PERP')!;
    const assets = DEFAULT_MARKETS.assets;
    expect(buildMarket(perp, 3, assets).spec.perp).not.toHaveProperty('markPriceBandBps');
    expect(buildMarket({ ...perp, markPriceBand: '250' }, 3, assets).spec.perp?.markPriceBandBps).toBe(250);
    expect(() => buildMarket({ ...perp, markPriceBand: '0' }, 3, assets)).toThrow(/markPriceBand must be from 1/);
    expect(() => buildMarket({ ...perp, markPriceBand: '5%' }, 3, assets)).toThrow(/basis points/);
    expect(() => buildMarket({ ...perp, fundingInterval: 1500 }, 3, assets)).toThrow(/whole number of seconds/);
    expect(() => buildMarket({ ...perp, fundingInterval: 86_400_000, markPriceBand: '10000' }, 3, assets)).toThrow(/too large/);
    const spot = DEFAULT_MARKETS.markets.find((m) => m.symbol === 'SOL_USDC')!;
    expect(() => buildMarket({ ...spot, markPriceBand: '500' }, 0, assets)).toThrow(/is a perpetual's field/);
  });
});
