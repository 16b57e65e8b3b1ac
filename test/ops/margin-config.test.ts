// Margin parameters of the configuration: the default assets' collateral and borrow/lend pool
// parameters in integer form, the refusal (a one-line ConfigError, exit 2 at start-up) of values
// the margin arithmetic could not use exactly or that make no sense, the assets' index price update
// multipliers, and the engine configuration
// fingerprint, which the parameters stay out of so that existing journals keep replaying.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_MARKETS, loadConfig, type AssetConfig, type MarketsFile } from '../../src/config.js';
import { engineConfigFingerprint } from '../../engine/shell/journal.js';

const T = 10n ** 12n;

describe('margin parameters', () => {
  const dir = mkdtempSync(join(tmpdir(), 'margin-config-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let files = 0;
  const load = (file: MarketsFile) => {
    const path = join(dir, `markets-${++files}.json`);
    writeFileSync(path, JSON.stringify(file));
    return loadConfig(['--config', path], {});
  };
  /** The ConfigError message of a markets file whose asset `index` is changed by `edit`. */
  const refusal = (index: number, edit: (asset: AssetConfig) => unknown): string => {
    const assets = DEFAULT_MARKETS.assets.map((asset, i) => (i === index ? edit(structuredClone(asset)) : asset)) as AssetConfig[];
    try {
      load({ ...DEFAULT_MARKETS, assets });
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).not.toContain('\n');
      return (error as Error).message;
    }
    throw new Error('configuration was accepted');
  };

  it('gives the default assets collateral parameters and pools in integer form', () => {
    const { margin } = loadConfig([], {});
    expect(margin.collateral.map((c) => c.symbol)).toEqual(['USDC', 'SOL', 'BTC', 'ETH']);
    expect(margin.lendPools.map((p) => p.symbol)).toEqual(['USDC', 'SOL', 'BTC', 'ETH']);
    expect(margin.collateral[0].spec).toEqual({
      assetId: 0, haircut: { kind: 'identity', weight: T },
      imf: { base: T / 10n, factor: 127_500_000n }, mmf: { base: 62_500_000_000n, factor: 76_500_000n },
    });
    expect(margin.collateral[2].spec.haircut).toEqual({ kind: 'inverseSqrt', weight: 900_000_000_000n, base: 1_100_000_000_000n, penalty: 7_000_000_000n, basis: 'quantity' });
    expect(margin.lendPools[2].spec).toEqual({
      assetId: 2, state: 'Open', borrowRateMin: 0n, borrowRateOptimal: T / 20n, borrowRateMax: T, optimalUtilization: 700_000_000_000n,
      maxUtilization: 950_000_000_000n, throttleUtilizationThreshold: 800_000_000_000n, throttleUtilizationBound: 900_000_000_000n,
      throttleUpdateFraction: T / 10n, fee: 0n, openBorrowLendLimitUnits: 1000n * 10n ** 8n, stepUnits: 1000n,
    });
    // A markets file without margin parameters has none: no collateral weight, no pools.
    const bare = load({ ...DEFAULT_MARKETS, markets: DEFAULT_MARKETS.markets.filter((m) => m.marketType !== 'PERP'), assets: DEFAULT_MARKETS.assets.map(({ collateral: _c, borrowLend: _b, ...rest }) => rest) });
    expect(bare.margin).toEqual({ collateral: [], lendPools: [] });
  });

  it('gives the engine the pools and collateral it applies, in the fingerprint only when there are pools', () => {
    const defaults = loadConfig([], {});
    // Perpetuals are settled against margin: without pools the file lists its spot books only.
    const spotMarkets = DEFAULT_MARKETS.markets.filter((m) => m.marketType !== 'PERP');
    const bare = load({ ...DEFAULT_MARKETS, markets: spotMarkets, assets: DEFAULT_MARKETS.assets.map(({ collateral: _c, borrowLend: _b, ...rest }) => rest) });
    expect(bare.engine.margin).toBeUndefined();
    expect(bare.engine).not.toHaveProperty('interestStepAccounts');
    // Without perpetuals there is no realization at mark, nor a position limit, either.
    const { margin, realizePnlIntervalUs: _realize, realizeStepPositions: _step, fundingStepPositions: _fundingStep, positionLimitUnits: _limit, interestStepAccounts: _review, ...withMarginOnly } = defaults.engine;
    const withoutMargin = { ...withMarginOnly, markets: withMarginOnly.markets.slice(0, spotMarkets.length) };
    expect(margin?.valuationAssetId).toBe(0);
    expect(margin?.lendPools.map((p) => p.assetId)).toEqual([0, 1, 2, 3]);
    expect(margin?.collateral).toEqual(defaults.margin.collateral.map((c) => c.spec));
    // Without pools the fingerprint is the one it was before the engine had them; with them it covers them.
    expect(engineConfigFingerprint(bare.engine)).toBe(engineConfigFingerprint(withoutMargin));
    expect(engineConfigFingerprint(defaults.engine)).not.toBe(engineConfigFingerprint(bare.engine));
    const cheaper = load({ ...DEFAULT_MARKETS, assets: DEFAULT_MARKETS.assets.map((a, i) => (i === 0 ? { ...a, borrowLend: { ...a.borrowLend!, fee: '0.1' } } : a)) });
    expect(engineConfigFingerprint(cheaper.engine)).not.toBe(engineConfigFingerprint(defaults.engine));
  });

  it('refuses collateral values that are not exact, out of range or inconsistent', () => {
    const sol = 1;
    const collateral = (edit: (c: Record<string, any>) => void) => refusal(sol, (a) => { edit(a.collateral as Record<string, any>); return a; });
    expect(collateral((c) => { c.haircutFunction.weight = '1.01'; })).toBe('asset SOL collateral haircutFunction.weight must be from 0 to 1, got 1.01');
    expect(collateral((c) => { c.imfFunction.factor = '0.0000000000001'; })).toBe('asset SOL collateral imfFunction.factor: "0.0000000000001" has more than 12 decimals');
    expect(collateral((c) => { c.imfFunction.base = 0.2; })).toBe('asset SOL collateral imfFunction.base must be a decimal string');
    expect(collateral((c) => { c.imfFunction.base = '0'; })).toBe('asset SOL collateral imfFunction.base must be from 0.000000000001 to 1, got 0');
    expect(collateral((c) => { c.mmfFunction.type = 'linear'; })).toBe('asset SOL collateral mmfFunction must be {"type": "sqrt", "base", "factor"}');
    expect(collateral((c) => { c.mmfFunction.base = '0.3'; })).toBe("asset SOL collateral: mmfFunction base and factor must not exceed imfFunction's");
    expect(collateral((c) => { c.haircutFunction.kind.type = 'sqrt'; })).toBe('asset SOL collateral haircutFunction.kind.type must be "identity" or "inverseSqrt"');
    expect(collateral((c) => { c.haircutFunction.kind.positiveCurvePenalty = '-1'; })).toBe('asset SOL collateral haircutFunction.kind.positiveCurvePenalty: "-1" is not a plain non-negative decimal');
    expect(collateral((c) => { c.haircutBasis = 'usd'; })).toBe('asset SOL collateral haircutFunction: haircutBasis must be "quantity" or "notional"');
    expect(collateral((c) => { c.imfFuncton = c.imfFunction; })).toMatch(/^asset SOL collateral has an unknown key "imfFuncton"/);
    expect(refusal(0, (a) => { (a.collateral as Record<string, any>).haircutBasis = 'notional'; return a; }))
      .toBe('asset USDC collateral: haircutBasis applies only to an inverseSqrt haircut');
    expect(refusal(0, (a) => ({ ...a, collateral: [] }))).toBe('asset USDC collateral must be a JSON object');
    expect(load({ ...DEFAULT_MARKETS, assets: DEFAULT_MARKETS.assets.map((a, i) => (i === 1 ? { ...a, collateral: { ...a.collateral!, haircutBasis: 'notional' as const } } : a)) })
      .margin.collateral[1].spec.haircut).toMatchObject({ basis: 'notional' });
  });

  it('refuses pool values that are not exact, out of range or inconsistent', () => {
    const pool = (index: number, edit: (p: Record<string, any>) => void) => refusal(index, (a) => { edit(a.borrowLend as Record<string, any>); return a; });
    expect(pool(2, (p) => { p.stepSize = '0.000000001'; })).toBe('asset BTC borrowLend stepSize: "0.000000001" has more than 8 decimals');
    expect(pool(2, (p) => { p.stepSize = '0'; })).toBe('asset BTC borrowLend stepSize must be positive and at most 9007199254740991 units of BTC');
    expect(pool(2, (p) => { p.openBorrowLendLimit = '100000000'; })).toBe('asset BTC borrowLend openBorrowLendLimit must be positive and at most 9007199254740991 units of BTC');
    expect(pool(2, (p) => { p.openBorrowLendLimit = '1000.000001'; })).toBe('asset BTC borrowLend: openBorrowLendLimit is not a whole number of stepSize');
    expect(pool(0, (p) => { p.borrowRateOptimal = '2'; })).toBe('asset USDC borrowLend: need borrowRateMin <= borrowRateOptimal <= borrowRateMax');
    expect(pool(0, (p) => { p.borrowRateMax = '100.1'; })).toBe('asset USDC borrowLend borrowRateMax must be from 0 to 100, got 100.1');
    expect(pool(0, (p) => { p.fee = '1.5'; })).toBe('asset USDC borrowLend fee must be from 0 to 1, got 1.5');
    expect(pool(0, (p) => { p.optimalUtilization = '0'; })).toBe('asset USDC borrowLend: optimalUtilization and maxUtilization must be positive');
    expect(pool(0, (p) => { p.throttleUtilizationThreshold = '0.95'; })).toBe('asset USDC borrowLend: need throttleUtilizationThreshold <= throttleUtilizationBound');
    expect(pool(0, (p) => { p.state = 'Paused'; })).toBe('asset USDC borrowLend: state must be one of Open, Closed, RepayOnly');
    expect(pool(0, (p) => { delete p.maxUtilization; })).toBe('asset USDC borrowLend maxUtilization must be a decimal string');
    expect(pool(0, (p) => { p.rate = '1'; })).toMatch(/^asset USDC borrowLend has an unknown key "rate"/);
    expect(refusal(3, ({ collateral: _c, ...rest }) => rest)).toBe("asset ETH: a borrowLend pool needs collateral parameters (a borrow's IMF and MMF)");
  });

  it('takes index price update multipliers per asset, in the fingerprint only when set, and refuses bad ones', () => {
    const defaults = loadConfig([], {});
    expect(defaults.engine.indexUpdateBounds).toBeUndefined();
    const bounded = load({ ...DEFAULT_MARKETS, assets: DEFAULT_MARKETS.assets.map((a, i) => (i === 1 ? { ...a, maxPriceUpdateMultiplier: '1.5', minPriceUpdateMultiplier: '0.5' } : a)) });
    expect(bounded.engine.indexUpdateBounds).toEqual([{ assetId: 1, maxPriceUpdateMultiplier: (T * 3n) / 2n, minPriceUpdateMultiplier: T / 2n }]);
    expect(engineConfigFingerprint(bounded.engine)).not.toBe(engineConfigFingerprint(defaults.engine));
    expect(refusal(1, (a) => ({ ...a, maxPriceUpdateMultiplier: '0.9' }))).toBe('asset SOL maxPriceUpdateMultiplier must be from 1 to 1000, got 0.9');
    expect(refusal(1, (a) => ({ ...a, minPriceUpdateMultiplier: '1.1' }))).toBe('asset SOL minPriceUpdateMultiplier must be from 0 to 1, got 1.1');
    expect(refusal(1, (a) => ({ ...a, minPriceUpdateMultiplier: '0' }))).toBe('asset SOL minPriceUpdateMultiplier must be above 0');
    expect(refusal(0, (a) => ({ ...a, maxPriceUpdateMultiplier: '2' }))).toBe('asset USDC: its index is fixed at 1 and takes no price update multipliers');
  });

  it('stops the server at start-up with exit 2 and the refusal on one line', () => {
    const assets = DEFAULT_MARKETS.assets.map((a, i) => (i === 1 ? { ...a, collateral: { ...a.collateral!, haircutFunction: { weight: '1.5', kind: { type: 'identity' } } } } : a));
    const path = join(dir, 'refused-markets.json');
    writeFileSync(path, JSON.stringify({ ...DEFAULT_MARKETS, assets }));
    const run = spawnSync(process.execPath, [join('dist', 'src', 'main.js'), '--data-dir', join(dir, 'data'), '--config', path], {
      env: { ...process.env, LOG_PRETTY: '0' }, encoding: 'utf8', timeout: 60_000,
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('configuration error: asset SOL collateral haircutFunction.weight must be from 0 to 1, got 1.5\n');
  });
});
