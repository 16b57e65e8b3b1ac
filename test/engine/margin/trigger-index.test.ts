// The liquidation trigger index (engine/core/margin/trigger-index.ts, trigger-band.ts).
//
// Band arithmetic: the lower bound F(lo, hi) holds over every mark of the band (checked against
// the summary's own valuation at every index price of small bands and at sampled ones of wide
// bands, and at book-like rational marks), the point band at an index mark is exact, and an
// account exactly at the line, or one unit above it, gets the band its slack allows and no more.
//
// Equivalence: the index re-checks fewer accounts than the full walk over every borrower, with
// the same records and the same state hash: the random differential streams (replayed with the
// full walk), and a denser stream of many borrowers with moving index prices, stale indexes
// (marks from the book), trades, borrows, repays, deposits, liquidation steps and snapshot round
// trips, run once each way. After every command the harness also checks the index's
// soundness (trigger-index.ts validateTriggerIndex): an account inside all its bands is healthy;
// and, after every fourth, that the leaner figures valuation.ts gives the re-checks, the bands and
// admission equal the whole margin summary's.
import { afterEach, describe, expect, it } from 'vitest';
import { CommandKind, RecordType, ResultCode, type EngineConfig } from '../../../engine/bus/types.js';
import type { HaircutSpec } from '../../../engine/bus/margin-params.js';
import { collateralLine, notionalCeil, type UnitPrice } from '../../../engine/core/margin/collateral.js';
import { positionMmf, requirementUnits } from '../../../engine/core/margin/fractions.js';
import { assetMargin, assetMarginFloor, BAND_TOP, bandOf, indexUnitPrice, indexUnitsOf, perpBandOf, perpMargin, perpMarginFloor, type AssetRisk, type PerpRisk } from '../../../engine/core/margin/trigger-band.js';
import { TRIGGER_SWITCH, validateTriggerIndex } from '../../../engine/core/margin/trigger-index.js';
import { admissionFigures, bandFigures, maintenanceFigures, marginSummary, type MarginChange, type MarginSummary } from '../../../engine/core/margin/valuation.js';
import { liquidatable } from '../../../engine/core/margin/account.js';
import type { EngineState } from '../../../engine/core/state.js';
import { BASE, EngineHarness, M0, M1, OTHER, QUOTE, cmd, prng, randomInt, replay, type Rec, stateOf } from '../../helpers/engine-harness.js';
import { M2, randomConfig, runRandomStream } from '../../helpers/engine-random.js';

const ONE = 10n ** 12n;

afterEach(() => {
  TRIGGER_SWITCH.fullWalk = false;
});

const HAIRCUTS: HaircutSpec[] = [
  { kind: 'identity', weight: ONE },
  { kind: 'identity', weight: ONE / 2n },
  { kind: 'inverseSqrt', weight: (ONE * 9n) / 10n, base: (ONE * 11n) / 10n, penalty: ONE * 3n, basis: 'notional' },
  { kind: 'inverseSqrt', weight: (ONE * 8n) / 10n, base: ONE, penalty: ONE / 10n, basis: 'quantity' },
];

function risk(held: bigint, borrowed: bigint, haircut: HaircutSpec | undefined, mmfFactor = ONE / 4n): AssetRisk {
  return { heldUnits: held, borrowedUnits: borrowed, assetDecimals: 9, quoteDecimals: 6, haircut, mmf: { base: ONE / 20n, factor: mmfFactor } };
}

/** The asset's part of netEquity − Σ N·MMF as valuation.ts and account.ts compute it. */
function summaryPart(r: AssetRisk, price: UnitPrice): bigint {
  const collateral = r.heldUnits > 0n ? collateralLine(r.haircut, r.heldUnits, r.assetDecimals, price, r.quoteDecimals).collateralUnits : 0n;
  const liability = r.borrowedUnits > 0n ? notionalCeil(r.borrowedUnits, price) : 0n;
  const requirement = liability > 0n ? requirementUnits(liability, positionMmf(r.mmf!, liability, r.quoteDecimals)) : 0n;
  return collateral - liability - requirement;
}

describe('trigger bands: arithmetic', () => {
  it('f at an index mark is the summary\'s own figure, and F(p, p) equals it', () => {
    for (const haircut of HAIRCUTS) {
      for (const [held, borrowed] of [[0n, 5_000_000n], [40_000_000n, 0n], [40_000_000n, 3_000_000n], [7n, 1n]] as const) {
        const r = risk(held, borrowed, haircut);
        for (const p of [1n, 999n, 30_000_000_000_000n, 123_456_789_012n]) {
          const price = indexUnitPrice(p, 9, 6);
          expect(assetMargin(r, price)).toBe(summaryPart(r, price));
          expect(assetMarginFloor(r, Number(p), Number(p))).toBe(summaryPart(r, price));
        }
      }
    }
  });

  it('every mark inside a band keeps the asset\'s part at or above f(p₀) − slack; an index mark always has at least its point band', () => {
    const random = prng(7);
    for (let trial = 0; trial < 400; trial++) {
      const haircut = HAIRCUTS[randomInt(random, 0, HAIRCUTS.length - 1)];
      const held = BigInt(randomInt(random, 0, 3) === 0 ? 0 : randomInt(random, 1, 5e8));
      const borrowed = BigInt(held === 0n || random() < 0.6 ? randomInt(random, 1, 5e8) : 0);
      const r = risk(held, borrowed, haircut, random() < 0.5 ? 0n : ONE / 2n);
      const p0 = BigInt(randomInt(random, 1_000, 50_000)) * 1_000_000_000n;
      const slack = BigInt(randomInt(random, 0, 3) === 0 ? randomInt(random, 0, 3) : randomInt(random, 0, 5e6));
      const mark = indexUnitPrice(p0, 9, 6);
      const band = bandOf(r, mark, slack)!;
      expect(band).not.toBeNull();
      expect(band.lo).toBeLessThanOrEqual(Number(p0));
      expect(band.hi).toBeGreaterThanOrEqual(Number(p0));
      const floor = summaryPart(r, mark) - slack;
      const hiFinite = band.hi === BAND_TOP ? Number(p0) * 4 : band.hi;
      const samples = [band.lo, hiFinite, Number(p0)];
      for (let i = 0; i < 40; i++) samples.push(band.lo + Math.floor(random() * (hiFinite - band.lo + 1)));
      for (const x of samples) expect(summaryPart(r, indexUnitPrice(BigInt(x), 9, 6)) >= floor, `trial ${trial} at ${x}`).toBe(true);
    }
  });

  it('a book mark between two index units: the band covers it, and rounding with no slack may leave no band', () => {
    const r = risk(0n, 3n, { kind: 'identity', weight: ONE });
    const mark: UnitPrice = { quoteUnits: 3_000_001n, baseUnits: 100_000n }; // 30.00001 quote units per unit
    expect(indexUnitsOf(mark, 9, 6)).toEqual([30_000_010_000_000, 30_000_010_000_000]);
    const odd: UnitPrice = { quoteUnits: 10n, baseUnits: 3n };
    const [lo, hi] = indexUnitsOf(odd, 9, 6);
    expect(hi).toBe(lo + 1);
    const band = bandOf(risk(1_000n, 0n, { kind: 'identity', weight: ONE }), odd, 5n)!;
    expect(band.lo).toBeLessThanOrEqual(lo);
    expect(band.hi).toBe(BAND_TOP);
    // 3 borrowed units at 10/3: liability ceil(10) = 10; at the index unit above, ceil(10.000000003) = 11.
    expect(bandOf(r, odd, 0n)).toBeNull();
    expect(bandOf(r, odd, 1n)).not.toBeNull();
  });

  it('no slack (an account one quote unit above the line: S − 1 = 0 to share): a borrow keeps the point band at its mark, a holding the band where its collateral has not fallen', () => {
    const p = 30_000_000_000_000n;
    const borrow = risk(0n, 1_000_000n, undefined);
    expect(bandOf(borrow, indexUnitPrice(p, 9, 6), 0n)).toEqual({ lo: 0, hi: Number(p) });
    const holding = risk(1_000_000n, 0n, { kind: 'identity', weight: ONE / 2n });
    const band = bandOf(holding, indexUnitPrice(p, 9, 6), 0n)!;
    expect(band).toEqual({ lo: Number(p), hi: BAND_TOP });
    // Below the mark by one index unit the collateral (a floor) may already be a unit less.
    expect(assetMarginFloor(holding, Number(p) - 1, BAND_TOP)).toBeLessThanOrEqual(assetMargin(holding, indexUnitPrice(p, 9, 6)));
  });
});

/** A perpetual's moving part as exposure.ts and account.ts compute it: floor(z·p) − ceil(N·MMF(N)). */
function perpSummaryPart(r: PerpRisk, price: UnitPrice): bigint {
  const product = r.sizeUnits * price.quoteUnits;
  const pnl = product / price.baseUnits - (product % price.baseUnits !== 0n && product < 0n ? 1n : 0n);
  const notional = r.exposureUnits === 0n ? 0n : notionalCeil(r.exposureUnits, price);
  return pnl - (notional === 0n ? 0n : requirementUnits(notional, positionMmf(r.mmf, notional, r.quoteDecimals)));
}

describe('trigger bands: perpetual arithmetic', () => {
  const perpRisk = (size: bigint, exposure: bigint): PerpRisk => ({ sizeUnits: size, exposureUnits: exposure, baseDecimals: 9, quoteDecimals: 6, mmf: { base: ONE / 50n, factor: ONE / 3n } });

  it('g at a mark is the summary\'s own figure, and G(p, p) equals it', () => {
    for (const [size, exposure] of [[5_000_000_000n, 5_000_000_000n], [-7_000_000n, 9_000_000n], [0n, 3_000_000n], [1n, 1n]] as const) {
      const r = perpRisk(size, exposure);
      for (const p of [1n, 999n, 30_000_000_000_000n, 123_456_789_012n]) {
        expect(perpMargin(r, indexUnitPrice(p, 9, 6))).toBe(perpSummaryPart(r, indexUnitPrice(p, 9, 6)));
        expect(perpMarginFloor(r, Number(p), Number(p))).toBe(perpSummaryPart(r, indexUnitPrice(p, 9, 6)));
      }
    }
  });

  it('every mark inside a perpetual\'s band keeps its part at or above g(p₀) − slack; a short\'s band is open below', () => {
    const random = prng(17);
    for (let trial = 0; trial < 400; trial++) {
      const size = BigInt(randomInt(random, -5e9, 5e9));
      const orders = BigInt(randomInt(random, 0, 3) === 0 ? randomInt(random, 0, 2e9) : 0);
      const exposure = (size < 0n ? -size : size) + orders;
      if (exposure === 0n) continue;
      const r = perpRisk(size, exposure);
      const p0 = randomInt(random, 1_000, 50_000) * 1_000_000_000;
      const slack = BigInt(randomInt(random, 0, 3) === 0 ? randomInt(random, 0, 3) : randomInt(random, 0, 5e7));
      const band = perpBandOf(r, p0, slack)!;
      expect(band, `trial ${trial}`).not.toBeNull();
      expect(band.lo).toBeLessThanOrEqual(p0);
      expect(band.hi).toBeGreaterThanOrEqual(p0);
      if (size <= 0n) expect(band.lo).toBe(0);
      expect(band.hi).toBeLessThan(BAND_TOP);
      const floor = perpSummaryPart(r, indexUnitPrice(BigInt(p0), 9, 6)) - slack;
      const samples = [band.lo, band.hi, p0];
      for (let i = 0; i < 40; i++) samples.push(band.lo + Math.floor(random() * (band.hi - band.lo + 1)));
      for (const x of samples) expect(perpSummaryPart(r, indexUnitPrice(BigInt(x), 9, 6)) >= floor, `trial ${trial} at ${x}`).toBe(true);
      // With slack to spare the band is wider than the point band.
      if (slack > 10_000_000n) expect(band.hi - band.lo).toBeGreaterThan(0);
    }
  });

  it('no slack: the point band at the mark (a perpetual\'s mark is an index price, so it is exact)', () => {
    const r = perpRisk(2_000_000_000n, 2_000_000_000n);
    const p0 = 25_000_000_000_000;
    const band = perpBandOf(r, p0, 0n)!;
    expect(band.lo).toBe(p0);
    expect(perpMarginFloor(r, band.lo, band.hi)).toBeGreaterThanOrEqual(perpSummaryPart(r, indexUnitPrice(BigInt(p0), 9, 6)));
    expect(perpMarginFloor(r, p0 - 1, band.hi)).toBeLessThan(perpSummaryPart(r, indexUnitPrice(BigInt(p0), 9, 6)));
  });
});

/** A margin config with a notional-based and a quantity-based haircut and MMF growing with √N. */
function denseConfig(seed: number): EngineConfig {
  const config = randomConfig(seed);
  config.limits = { ...config.limits, maxAccounts: 70 };
  const margin = config.margin!;
  const pool = margin.lendPools[0];
  config.margin = {
    ...margin,
    collateral: [
      margin.collateral[0],
      { assetId: BASE, haircut: HAIRCUTS[2], imf: { base: ONE / 10n, factor: ONE }, mmf: { base: ONE / 20n, factor: ONE / 2n } },
      { assetId: OTHER, haircut: HAIRCUTS[3], imf: { base: ONE / 5n, factor: 0n }, mmf: { base: ONE / 10n, factor: ONE / 5n } },
    ],
    lendPools: [QUOTE, BASE, OTHER].map((assetId) => ({ ...pool, assetId, state: 'Open' as const, stepUnits: 1n, openBorrowLendLimitUnits: 10n ** 12n, maxUtilization: ONE })),
  };
  return config;
}

const ACCOUNTS = 60;
const LENDERS = 10;

function resultCode(records: Rec[]): ResultCode | undefined {
  const result = records.find((r) => r.type === RecordType.Result);
  return result?.type === RecordType.Result ? result.code : undefined;
}

/** Accounts whose figures were compared with their summary (a count the dense tests assert on). */
const FIGURES_CHECKED = { accounts: 0, pastTheLine: 0 };

const AS_IT_STANDS: MarginChange = { assetIndex: -1, heldDelta: 0n, borrowDelta: 0n };

/**
 * The figures of the account under `change` against the summary's, computed once: the maintenance
 * figures (liquidation re-checks, position events, the liquidation price) and the admission
 * figures (order admission, the borrow and withdrawal tests). Returns the summary.
 */
function expectFigures(s: EngineState, accountId: number, change: MarginChange): MarginSummary {
  const wanted = marginSummary(s, accountId, change);
  const maintenance = maintenanceFigures(s, accountId, change);
  expect({ netEquityUnits: maintenance.netEquityUnits, tenUnits: maintenance.tenUnits, mmfUnits: maintenance.mmfUnits, unpriced: maintenance.unpriced, perpLines: maintenance.perpLines }).toEqual({
    netEquityUnits: wanted.netEquityUnits, tenUnits: wanted.margin.tenUnits, mmfUnits: wanted.margin.mmfUnits, unpriced: wanted.unpriced, perpLines: wanted.perp.lines,
  });
  const { netEquityUnits, imfUnits, unpriced, stale } = admissionFigures(s, accountId, change);
  expect({ netEquityUnits, imfUnits, unpriced, stale }).toEqual({ netEquityUnits: wanted.netEquityUnits, imfUnits: wanted.margin.imfUnits, unpriced: wanted.unpriced, stale: wanted.stale });
  return wanted;
}

/**
 * The harness's checks after every command, the index's soundness, and for every account that
 * borrows or holds a position (after every fourth command) the figures valuation.ts computes for
 * the liquidation re-checks, the bands and admission, against the whole margin summary's: equal to
 * the unit, as the account stands and under hypothetical changes (an order in a perpetual; an asset
 * at another price, some of it held and borrowed, as the liquidation price's search asks).
 */
class AuditedHarness extends EngineHarness {
  /** Audits made (set on the first: the harness may check from its constructor, before this class's fields exist). */
  private audits?: number;

  override check(): void {
    super.check();
    const s = stateOf(this.exchange);
    validateTriggerIndex(s);
    // The figures do not depend on the walk: compared in the indexed run, after every fourth command.
    const n = this.audits ?? 0;
    this.audits = n + 1;
    if (TRIGGER_SWITCH.fullWalk || n % 4 !== 0) return;
    const collateralAssets = Array.from({ length: s.pools.assetCount }, (_, i) => i).filter((i) => s.pools.collateralOf[i] !== undefined);
    for (let accountId = 1; accountId <= s.accounts.count; accountId++) {
      if (s.pools.borrowCountOf[accountId] === 0 && s.positions.positionCountOf[accountId] === 0) continue;
      const summary = expectFigures(s, accountId, AS_IT_STANDS);
      // What a price move's re-check draws the bands from: the summary's priced assets.
      expect(bandFigures(s, accountId).assetLines).toEqual(summary.lines.filter((line) => line.mark !== null).map((line) => ({
        assetIndex: line.assetIndex, heldUnits: line.availableUnits + line.lockedUnits + line.lentUnits, borrowedUnits: line.borrowedUnits, mark: line.mark,
      })));
      if (s.positions.perpCount > 0) expectFigures(s, accountId, { ...AS_IT_STANDS, perpOrder: { marketIndex: s.positions.marketOf[0], side: accountId % 2, lots: 3 } });
      if (collateralAssets.length > 0) {
        const change = { assetIndex: collateralAssets[accountId % collateralAssets.length], heldDelta: BigInt(accountId % 5), borrowDelta: BigInt(accountId % 3), price: { quoteUnits: BigInt(accountId), baseUnits: 7n } };
        expectFigures(s, accountId, change);
      }
      FIGURES_CHECKED.accounts++;
      if (!summary.unpriced && liquidatable(summary.netEquityUnits, summary.margin)) FIGURES_CHECKED.pastTheLine++;
    }
  }
}

/** A stream of commands that does not depend on the engine's answers, so both modes get the same one. */
function runDense(seed: number, steps: number): EngineHarness {
  const h = new AuditedHarness(denseConfig(seed));
  const random = prng(seed);
  for (let i = 1; i <= ACCOUNTS; i++) {
    h.createAccount(i);
    h.apply(cmd.deposit(i, QUOTE, randomInt(random, 1_000, 20_000)));
    h.apply(cmd.deposit(i, BASE, randomInt(random, 100, 3_000)));
    h.apply(cmd.deposit(i, OTHER, randomInt(random, 100, 3_000)));
    h.apply(cmd.updateAccountSettings(i, { leverageLimitHundredths: 1_000 }));
  }
  const price = { [BASE]: 30_000_000_000_000, [OTHER]: 9_000_000_000_000 };
  h.apply(cmd.setIndexPrice(BASE, price[BASE]));
  h.apply(cmd.setIndexPrice(OTHER, price[OTHER]));
  // The first accounts lend; the others borrow near what their margin allows (the largest of a
  // ladder of steps of 15 % that passes), so that moves of a few per cent push some over the line.
  for (let i = 1; i <= LENDERS; i++) {
    for (const [assetId, units] of [[QUOTE, 20_000_000], [BASE, 2_000_000], [OTHER, 2_000_000]]) {
      h.apply(cmd.deposit(i, assetId, units));
      h.apply({ kind: CommandKind.BorrowLend, accountId: i, assetId, side: 1, amountUnits: units });
    }
  }
  for (let i = LENDERS + 1; i <= ACCOUNTS; i++) {
    const assetId = random() < 0.7 ? QUOTE : [BASE, OTHER][randomInt(random, 0, 1)];
    for (let units = assetId === QUOTE ? 4_000_000 : 40_000; units >= 1; units = Math.floor(units * 0.85)) {
      if (resultCode(h.apply({ kind: CommandKind.BorrowLend, accountId: i, assetId, side: 0, amountUnits: units })) === ResultCode.Ok) break;
    }
  }
  for (let step = 0; step < steps; step++) denseStep(h, random, price);
  return h;
}

function denseStep(h: EngineHarness, random: () => number, price: Record<number, number>): void {
  const account = randomInt(random, 1, ACCOUNTS);
  const roll = random();
  if (roll < 0.3) {
    const asset = random() < 0.6 ? BASE : OTHER;
    const start = asset === BASE ? 30_000_000_000_000 : 9_000_000_000_000;
    const moved = Math.round(price[asset] * (1 + (random() - 0.5) * 0.2));
    price[asset] = Math.max(Math.round(start * 0.3), Math.min(start * 3, moved));
    h.apply(cmd.setIndexPrice(asset, price[asset]));
  } else if (roll < 0.45) {
    h.timeUs += randomInt(random, 1_000, 600_000);
    h.apply(cmd.tick());
  } else if (roll < 0.6) {
    const assetId = [QUOTE, BASE, OTHER][randomInt(random, 0, 2)];
    h.apply({ kind: CommandKind.BorrowLend, accountId: account, assetId, side: random() < 0.5 ? 0 : 1, amountUnits: randomInt(random, 1, assetId === QUOTE ? 100_000 : 800) });
  } else if (roll < 0.68) {
    h.apply(cmd.deposit(account, [QUOTE, BASE, OTHER][randomInt(random, 0, 2)], randomInt(random, 1, 50_000)));
  } else if (roll < 0.98) {
    const market = random() < 0.6 ? M0 : M1;
    const mid = Math.round((market === M0 ? price[BASE] / 300_000_000_000 : price[OTHER] / 30_000_000_000));
    // Now and then far from the index: trades that move value between accounts without a price move.
    const away = random() < 0.2 ? Math.round(mid * (random() - 0.5) * 0.8) : randomInt(random, -3, 3);
    const ticks = Math.max(1, Math.min(1000, mid + away));
    h.apply(cmd.place(account, random() < 0.5 ? 'bid' : 'ask', ticks, randomInt(random, 1, 20), { market }));
  } else {
    h.restartFromSnapshot();
  }
}

/** The random config's perpetual with MMF growing with √N and no open interest or position limit, an index that stays fresh for seconds, room for the accounts. */
function densePerpConfig(seed: number): EngineConfig {
  const config = randomConfig(seed);
  config.limits = { ...config.limits, maxAccounts: 70 };
  config.indexMaxAgeUs = 3_000_000;
  config.realizePnlIntervalUs = seed % 2 === 0 ? 700_000 : undefined;
  const perp = config.markets.find((m) => m.marketId === M2)!;
  perp.perp = { ...perp.perp!, imf: { base: ONE / 10n, factor: ONE / 2n }, mmf: { base: ONE / 20n, factor: ONE / 4n }, openInterestLimitUnits: 10 ** 12, makerFeeBps: 2, takerFeeBps: 5 };
  // Neither the open interest nor the accounts' positions are limited here.
  delete config.positionLimitUnits;
  return config;
}

/** Perpetual traders at ten times leverage, the underlying's index moving, mark samples and funding on engine time. */
function runDensePerp(seed: number, steps: number): EngineHarness {
  const h = new AuditedHarness(densePerpConfig(seed));
  const random = prng(seed);
  for (let i = 1; i <= ACCOUNTS; i++) {
    h.createAccount(i);
    h.apply(cmd.deposit(i, QUOTE, randomInt(random, 500, 5_000)));
    h.apply(cmd.updateAccountSettings(i, { leverageLimitHundredths: 1_000 }));
  }
  const state = { ticks: 100 };
  h.apply(cmd.setIndexPrice(BASE, state.ticks * 300_000_000_000, 1));
  for (let step = 0; step < steps; step++) densePerpStep(h, random, state);
  return h;
}

function densePerpStep(h: EngineHarness, random: () => number, state: { ticks: number }): void {
  const account = randomInt(random, 1, ACCOUNTS);
  const roll = random();
  if (roll < 0.2) {
    state.ticks = Math.max(60, Math.min(160, Math.round(state.ticks * (1 + (random() - 0.5) * 0.12))));
    h.apply(cmd.setIndexPrice(BASE, state.ticks * 300_000_000_000, 1));
  } else if (roll < 0.4) {
    h.timeUs += random() < 0.05 ? randomInt(random, 600_000_000, 1_200_000_000) : randomInt(random, 100_000, 1_500_000);
    h.apply(cmd.tick());
  } else if (roll < 0.88) {
    const ticks = Math.max(1, state.ticks + randomInt(random, -3, 3));
    h.apply(cmd.place(account, random() < 0.5 ? 'bid' : 'ask', ticks, randomInt(random, 1, 20), { market: M2 }));
  } else if (roll < 0.93) {
    h.apply(cmd.deposit(account, QUOTE, randomInt(random, 1, 2_000)));
  } else if (roll < 0.98) {
    h.apply(cmd.cancelAll(account, M2));
  } else {
    h.restartFromSnapshot();
  }
}

/**
 * Runs a stream with the trigger index and again with the full walk: the same records and state
 * hash, flips into and out of the liquidating state, and far fewer re-checks with the index.
 */
function indexedAgainstWalk(run: () => EngineHarness): { indexed: EngineHarness } {
  FIGURES_CHECKED.accounts = 0;
  FIGURES_CHECKED.pastTheLine = 0;
  TRIGGER_SWITCH.rechecks = 0;
  const indexed = run();
  const indexedRechecks = TRIGGER_SWITCH.rechecks;
  TRIGGER_SWITCH.fullWalk = true;
  TRIGGER_SWITCH.rechecks = 0;
  const walked = run();
  const walkedRechecks = TRIGGER_SWITCH.rechecks;
  expect(indexed.log.length).toBe(walked.log.length);
  expect(indexed.log).toEqual(walked.log);
  expect(indexed.exchange.stateHash()).toBe(walked.exchange.stateHash());
  const flips = indexed.log.filter((r) => r.type === RecordType.AccountSettings && r.frontId === 0xffff).length;
  expect(flips).toBeGreaterThan(4);
  expect(indexedRechecks).toBeLessThan(walkedRechecks / 2);
  // The maintenance figures met accounts on both sides of the line.
  expect(FIGURES_CHECKED.accounts).toBeGreaterThan(10_000);
  expect(FIGURES_CHECKED.pastTheLine).toBeGreaterThan(5);
  return { indexed };
}

describe('trigger index: the same records and state as the full walk', () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    it(`random stream seed ${seed}, replayed with the full walk`, () => {
      const config = randomConfig(seed);
      const h = new EngineHarness(config);
      runRandomStream(h, seed, 1000);
      TRIGGER_SWITCH.fullWalk = true;
      const again = replay(config, h.stream);
      expect(again.records).toEqual(h.log);
      expect(again.exchange.stateHash()).toBe(h.exchange.stateHash());
    });
  }

  for (const seed of [11, 12, 13]) {
    it(`dense margin stream seed ${seed}: ${ACCOUNTS} borrowers, moving and stale prices, trades and liquidations`, () => {
      const { indexed } = indexedAgainstWalk(() => runDense(seed, 1500));
      // The streams reach what the index must get right: flips into and out of the state and trades.
      expect(indexed.log.filter((r) => r.type === RecordType.Trade).length).toBeGreaterThan(20);
    });
  }

  for (const seed of [21, 22, 23]) {
    it(`dense perpetual stream seed ${seed}: ${ACCOUNTS} traders at ten times leverage, index moves, mark samples, funding and liquidations`, () => {
      const { indexed } = indexedAgainstWalk(() => runDensePerp(seed, 1500));
      expect(indexed.log.filter((r) => r.type === RecordType.Trade).length).toBeGreaterThan(100);
      expect(indexed.log.filter((r) => r.type === RecordType.MarkPrice).length).toBeGreaterThan(50);
    });
  }
});

describe('trigger index: an order that adds exposure', () => {
  const TRADER = 1;
  const MAKER = 2;

  /** A long of 10 lots at 100 with 700 units of USDC, banded at a mark sample; with `bidLots` a resting bid at 95 after. */
  function longTrader(bidLots: number): AuditedHarness {
    const h = new AuditedHarness(densePerpConfig(21));
    for (const id of [TRADER, MAKER]) {
      h.createAccount(id);
      h.apply(cmd.updateAccountSettings(id, { leverageLimitHundredths: 1_000 }));
    }
    h.apply(cmd.deposit(TRADER, QUOTE, 700));
    h.apply(cmd.deposit(MAKER, QUOTE, 1_000_000));
    h.apply(cmd.setIndexPrice(BASE, 100 * 300_000_000_000, 1));
    h.apply(cmd.place(MAKER, 'ask', 100, 10, { market: M2, postOnly: true }));
    h.apply(cmd.market(TRADER, 'bid', { qtyLots: 10 }, { market: M2 }));
    h.timeUs += 1_000_000;
    h.apply(cmd.tick());
    expect(stateOf(h.exchange).trigger.isBanded(TRADER)).toBe(!TRIGGER_SWITCH.fullWalk);
    if (bidLots > 0) {
      const records = h.apply(cmd.place(TRADER, 'bid', 95, bidLots, { market: M2, postOnly: true }));
      expect(resultCode(records)).toBeUndefined();
      expect(stateOf(h.exchange).pool.accountHead[TRADER]).not.toBe(-1);
      expect(stateOf(h.exchange).trigger.isBanded(TRADER)).toBe(false);
    }
    return h;
  }

  const liquidating = (h: EngineHarness): boolean => (stateOf(h.exchange).accountSettings.flags[TRADER] & 16) !== 0;

  it('drops the account\'s bands, and the move its old band would have ridden out finds it past the line', () => {
    // Walk the index down a tick at a time until the account with the resting bid is liquidating.
    let flippedAt = 0;
    for (let ticks = 99; ticks >= 80 && flippedAt === 0; ticks--) {
      const h = longTrader(8);
      h.apply(cmd.setIndexPrice(BASE, ticks * 300_000_000_000, 1));
      if (liquidating(h)) flippedAt = ticks;
    }
    expect(flippedAt).toBeGreaterThan(0);
    // Without the bid the same move leaves it healthy: the bid's exposure put it over the line.
    const without = longTrader(0);
    without.apply(cmd.setIndexPrice(BASE, flippedAt * 300_000_000_000, 1));
    expect(liquidating(without)).toBe(false);
    // And the records are those of the walk over every holder.
    const indexed = longTrader(8);
    indexed.apply(cmd.setIndexPrice(BASE, flippedAt * 300_000_000_000, 1));
    TRIGGER_SWITCH.fullWalk = true;
    const walked = longTrader(8);
    walked.apply(cmd.setIndexPrice(BASE, flippedAt * 300_000_000_000, 1));
    expect(indexed.log).toEqual(walked.log);
    expect(liquidating(indexed)).toBe(true);
  });
});
