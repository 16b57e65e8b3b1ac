// Mark price and funding of perpetual markets (engine/core/perp/mark-price.ts, funding.ts): the
// integer arithmetic (EWMA step, band clamp, the funding formula with its clamps and bounds), the
// per-second sampling on engine time with its MarkPrice events, the funding interval's end with
// its FundingRate event, the fallback when the index goes stale, the markPrices query, and the
// state's snapshot and hash.
import { describe, expect, it } from 'vitest';
import { BorrowLendEvent, CommandKind, MarkPriceSource, type FundingPaymentRec, OrderBookState, type PositionRec, RecordType, ResultCode, type FundingRateRec, type MarkPriceRec } from '../../../engine/bus/types.js';
import { Exchange } from '../../../engine/core/exchange.js';
import { SnapshotFormatError, exportSnapshot, importSnapshot } from '../../../engine/core/snapshot.js';
import { fundingRateE12 } from '../../../engine/core/perp/funding.js';
import { ALPHA_E12, clampToBand, ewmaStep, perpMarkPriceOf, premiumE12 } from '../../../engine/core/perp/mark-price.js';
import { BASE, EngineHarness, QUOTE, cmd, resultOf, stateOf, type Rec } from '../../helpers/engine-harness.js';
import { lend, marginConfig } from '../../helpers/margin-harness.js';
import { PERP, perpConfig } from '../../helpers/perp-harness.js';
import { formatElevenSnapshot, formatNineSnapshot } from '../../helpers/snapshot-formats.js';

const HOUR_US = 3_600_000_000;
const SECOND_US = 1_000_000;
const SOL_150 = 150_000_000_000;
/** 0.0000125 at 10^-12: the hourly rate of a market whose mark is its index. */
const QUIET_HOURLY = 12_500_000;

function marks(records: Rec[]): MarkPriceRec[] {
  return records.filter((r): r is MarkPriceRec & { type: RecordType.MarkPrice } => r.type === RecordType.MarkPrice);
}

function payments(records: Rec[]): FundingPaymentRec[] {
  return records.filter((r): r is FundingPaymentRec & { type: RecordType.FundingPayment } => r.type === RecordType.FundingPayment);
}

function fundings(records: Rec[]): FundingRateRec[] {
  return records.filter((r): r is FundingRateRec & { type: RecordType.FundingRate } => r.type === RecordType.FundingRate);
}

/** A harness on the perpetual configuration at the start of an hour plus `offsetUs`, SOL's index set there. */
function perpHarness(offsetUs = 0, config = perpConfig()): EngineHarness {
  const h = new EngineHarness(config);
  h.apply(cmd.setIndexPrice(BASE, SOL_150), 10 * HOUR_US + offsetUs);
  return h;
}

/** Ticks once a second up to `untilUs`, re-setting the index every 10 s so it stays fresh; returns every record. */
function runSeconds(h: EngineHarness, untilUs: number, priceE9 = SOL_150): Rec[] {
  const out: Rec[] = [];
  while (h.timeUs + SECOND_US <= untilUs) {
    const t = h.timeUs + SECOND_US;
    out.push(...h.apply(t % (10 * SECOND_US) === 0 ? cmd.setIndexPrice(BASE, priceE9) : cmd.tick(), t));
  }
  return out;
}

describe('perp funding arithmetic', () => {
  it('a quiet market (mean premium 0) publishes exactly 0.0000125 per hour, 0.0001 per 8 hours', () => {
    expect(fundingRateE12(0, 0, 3_600_000, -100, 100)).toBe(QUIET_HOURLY);
    expect(fundingRateE12(0, 3600, 3_600_000, -100, 100)).toBe(QUIET_HOURLY);
    expect(fundingRateE12(0, 1, 28_800_000, -100, 100)).toBe(100_000_000);
  });

  it('clamps interest − P̄ to ±0.05 % and the rate to the market bounds', () => {
    // P̄ = 0.02 %: F8 = 0.02 % − 0.01 % = 0.01 %, the quiet rate.
    expect(fundingRateE12(200_000_000 * 10, 10, 3_600_000, -100, 100)).toBe(QUIET_HOURLY);
    // P̄ = 0.1 %: F8 = 0.1 % − 0.05 % = 0.05 % → 0.00625 % an hour; and its mirror.
    expect(fundingRateE12(1_000_000_000, 1, 3_600_000, -100, 100)).toBe(62_500_000);
    expect(fundingRateE12(-1_000_000_000, 1, 3_600_000, -100, 100)).toBe(-62_500_000);
    // P̄ = ±10 %: F8 × 1/8 ≈ ±1.24 %, beyond ±100 bps: the bound.
    expect(fundingRateE12(100_000_000_000, 1, 3_600_000, -100, 100)).toBe(10_000_000_000);
    expect(fundingRateE12(-100_000_000_000, 1, 3_600_000, -100, 100)).toBe(-10_000_000_000);
    // Asymmetric bounds: the lower one is the venue's -150.
    expect(fundingRateE12(-200_000_000_000, 1, 3_600_000, -150, 100)).toBe(-15_000_000_000);
    // The mean truncates toward zero: three samples summing to 2 are a mean of 0.
    expect(fundingRateE12(2, 3, 3_600_000, -100, 100)).toBe(QUIET_HOURLY);
  });

  it('steps the EWMA by the integer α and clamps the mark to the band around the index', () => {
    expect(ALPHA_E12).toBe(16_528_546_178n);
    expect(ewmaStep(0, 1_000_000_000)).toBe(16_528_546);
    expect(ewmaStep(0, -1_000_000_000)).toBe(-16_528_546);
    expect(ewmaStep(7, 7)).toBe(7);
    // Sixty one-second steps toward a constant gap cover 1 − e^(−1) of it (63.2 %).
    let ewma = 0;
    for (let n = 0; n < 60; n++) ewma = ewmaStep(ewma, 1_000_000_000);
    expect(ewma).toBeGreaterThan(632_000_000);
    expect(ewma).toBeLessThan(632_200_000);
    expect(clampToBand(BigInt(SOL_150 * 2), SOL_150, 500)).toBe(157_500_000_000);
    expect(clampToBand(1n, SOL_150, 500)).toBe(142_500_000_000);
    expect(clampToBand(BigInt(SOL_150 + 5), SOL_150, 500)).toBe(SOL_150 + 5);
    // Rounded inward: the band of an index of 3 units × 1 bps.
    expect(clampToBand(0n, 3, 1)).toBe(3);
    // An index at the largest safe integer: the mark above it stops there, a safe integer.
    const top = Number.MAX_SAFE_INTEGER;
    expect(clampToBand(BigInt(top) + 1_000_000n, top, 500)).toBe(top);
    expect(premiumE12(151_500_000_000, SOL_150)).toBe(10_000_000_000);
    expect(premiumE12(148_500_000_000, SOL_150)).toBe(-10_000_000_000);
  });
});

describe('perp mark sampling and funding on engine time', () => {
  it('samples each second with a fresh index, publishes the mark and the estimate, and settles 0.0000125 on the hour', () => {
    const h = perpHarness(HOUR_US - 5 * SECOND_US);
    const hourEnd = 11 * HOUR_US;
    const records = runSeconds(h, hourEnd + 2 * SECOND_US);
    const published = marks(records);
    expect(published).toHaveLength(7);
    for (const m of published) {
      expect([m.marketId, m.markPriceE9, m.indexPriceE9, m.fundingRateE12, m.source]).toEqual([PERP, SOL_150, SOL_150, QUIET_HOURLY, MarkPriceSource.Index]);
    }
    expect(published.map((m) => m.nextFundingUs)).toEqual([...Array(5).fill(hourEnd), hourEnd + HOUR_US, hourEnd + HOUR_US]);
    const settled = fundings(records);
    expect(settled.map((f) => [f.marketId, f.intervalEndUs, f.fundingRateE12, f.markPriceE9])).toEqual([[PERP, hourEnd, QUIET_HOURLY, SOL_150]]);
    // The hour's last second is sampled before the interval ends: its record comes first.
    const atHour = records.filter((r) => r.timeUs === hourEnd).map((r) => r.type);
    expect(atHour.indexOf(RecordType.MarkPrice)).toBeLessThan(atHour.indexOf(RecordType.FundingRate));
    expect(stateOf(h.exchange).perpMarks.sampleCount[PERP]).toBe(2);
  });

  it('a mark above the index makes a positive rate (longs pay), clamped to the band; below it a negative one', () => {
    for (const sign of [1, -1]) {
      const h = perpHarness(HOUR_US - 3 * SECOND_US);
      // An EWMA of ±20 % of the index: the mark sits on the 5 % band while it decays.
      stateOf(h.exchange).perpMarks.ewmaE9[PERP] = sign * 30_000_000_000;
      const records = runSeconds(h, 11 * HOUR_US);
      const bandMark = sign > 0 ? 157_500_000_000 : 142_500_000_000;
      expect(marks(records).map((m) => [m.markPriceE9, m.source])).toEqual(Array(3).fill([bandMark, MarkPriceSource.Ewma]));
      // Mean premium ±5 %: F8 = ±5 % ∓ 0.05 % (+0.01 % inside the clamp), an hour is 1/8 of it.
      const f8 = sign > 0 ? 50_000_000_000 - 500_000_000 : -50_000_000_000 + 500_000_000;
      expect(fundings(records).map((f) => f.fundingRateE12)).toEqual([f8 / 8]);
      expect(Math.sign(fundings(records)[0].fundingRateE12)).toBe(sign);
    }
  });

  it('a PostOnly perpetual is marked at its index, whatever its EWMA', () => {
    const h = perpHarness(HOUR_US - 3 * SECOND_US);
    expect(resultOf(h.apply(cmd.setMarketState(PERP, OrderBookState.PostOnly))).code).toBe(ResultCode.Ok);
    stateOf(h.exchange).perpMarks.ewmaE9[PERP] = 3_000_000_000;
    const records = runSeconds(h, 11 * HOUR_US);
    expect(marks(records).map((m) => [m.markPriceE9, m.source])).toEqual(Array(3).fill([SOL_150, MarkPriceSource.Index]));
    expect(fundings(records).map((f) => f.fundingRateE12)).toEqual([QUIET_HOURLY]);
  });

  it('stops sampling once the index is stale: the timer stops waking each second and an hour without samples writes no rate', () => {
    const h = perpHarness(HOUR_US / 2);
    const s = stateOf(h.exchange);
    h.apply(cmd.tick(), 10 * HOUR_US + HOUR_US / 2 + 40 * SECOND_US);
    const samples = s.perpMarks.sampleCount[PERP];
    expect(samples).toBe(30); // the seconds after it while the index was fresh (age 1 s … 30 s)
    // Quiet for three hours: one FundingRate for the hour that had samples, none for the others.
    const quiet = h.apply(cmd.tick(), 14 * HOUR_US + 1);
    expect(fundings(quiet).map((f) => f.intervalEndUs)).toEqual([11 * HOUR_US]);
    expect(marks(quiet)).toEqual([]);
    expect(s.perpMarks.sampleTimer).toBe(-1); // no tick a second while nothing would be sampled
    expect(s.timers.headDueUs()).toBe(15 * HOUR_US); // the next wake-up: the funding interval's end
    // The mark falls back to the last index, however old.
    expect(perpMarkPriceOf(s, PERP)).toEqual({ markE9: SOL_150, indexE9: SOL_150, source: MarkPriceSource.StaleIndex });
    const query = h.apply({ kind: CommandKind.QueryMarkPrices });
    expect(marks(query).map((m) => [m.marketId, m.source, m.fundingRateE12, m.nextFundingUs])).toEqual([[PERP, MarkPriceSource.StaleIndex, QUIET_HOURLY, 15 * HOUR_US]]);
    expect(resultOf(query).value).toBe(1);
    // An index wakes the sampler for the next second.
    h.apply(cmd.setIndexPrice(BASE, SOL_150), 14 * HOUR_US + 5 * SECOND_US + 3);
    expect(s.timers.dueOf(s.perpMarks.sampleTimer)).toBe(14 * HOUR_US + 6 * SECOND_US);
    expect(marks(h.apply(cmd.tick(), 14 * HOUR_US + 6 * SECOND_US)).map((m) => m.source)).toEqual([MarkPriceSource.Index]);
  });

  it('answers the markPrices query with no row for a perpetual without any price', () => {
    const h = new EngineHarness(perpConfig());
    h.apply(cmd.tick(), 5 * HOUR_US);
    const query = h.apply({ kind: CommandKind.QueryMarkPrices });
    expect(marks(query)).toEqual([]);
    expect([resultOf(query).code, resultOf(query).value]).toEqual([ResultCode.Ok, 0]);
  });

  it('keeps the EWMA and the open interval through a snapshot, and a never-sampled perpetual adds nothing to the hash', () => {
    const straight = perpHarness(HOUR_US - 20 * SECOND_US);
    const restarted = perpHarness(HOUR_US - 20 * SECOND_US);
    for (const h of [straight, restarted]) stateOf(h.exchange).perpMarks.ewmaE9[PERP] = 1_500_000_000;
    const a = runSeconds(straight, 10 * HOUR_US + HOUR_US - 7 * SECOND_US);
    const b = runSeconds(restarted, 10 * HOUR_US + HOUR_US - 7 * SECOND_US);
    restarted.restartFromSnapshot();
    a.push(...runSeconds(straight, 11 * HOUR_US + 3 * SECOND_US));
    b.push(...runSeconds(restarted, 11 * HOUR_US + 3 * SECOND_US));
    expect(restarted.exchange.stateHash()).toBe(straight.exchange.stateHash());
    expect(fundings(b)).toEqual(fundings(a));
    expect(fundings(a)).toHaveLength(1);

    // Without an index nothing is sampled: the state hashes as under the configuration without perpetuals.
    const withPerp = new EngineHarness(perpConfig());
    const without = new EngineHarness(marginConfig());
    for (const h of [withPerp, without]) {
      h.fundedAccounts(1, { [QUOTE]: 1_000 });
      h.apply(cmd.tick(), 3 * HOUR_US + 5);
    }
    expect(withPerp.exchange.stateHash()).toBe(without.exchange.stateHash());
  });

  it('a snapshot taken after the index went stale within a sampled second keeps the sampler waiting for the next second', () => {
    const maxAgeUs = perpConfig().indexMaxAgeUs ?? 30 * SECOND_US;
    const straight = perpHarness();
    const restarted = perpHarness();
    const staleUs = 10 * HOUR_US + maxAgeUs + SECOND_US / 2;
    // The last second's sample found the index fresh (its age exactly the maximum); the command after it finds it stale.
    for (const h of [straight, restarted]) expect(marks(h.apply(cmd.tick(), staleUs)).length).toBeGreaterThan(0);
    restarted.restartFromSnapshot();
    const s = stateOf(restarted.exchange);
    expect(s.timers.dueOf(s.perpMarks.sampleTimer)).toBe(10 * HOUR_US + maxAgeUs + SECOND_US);
    const a = straight.apply(cmd.tick(), staleUs + SECOND_US);
    const b = restarted.apply(cmd.tick(), staleUs + SECOND_US);
    expect(b).toEqual(a);
    expect(restarted.exchange.stateHash()).toBe(straight.exchange.stateHash());
    expect(stateOf(restarted.exchange).perpMarks.sampleTimer).toBe(-1);
  });

  it('pays funding on the hour: longs pay shorts at a positive rate (rounded up), shorts receive (rounded down), the residue stays in the settlement line', () => {
    // Grid: a lot is 10 units of SOL (10^-8 SOL), 500 ticks are 1500 USDC units a lot, SOL at 150 000 USDC.
    for (const sign of [1, -1]) {
      const h = new EngineHarness(perpConfig());
      const [short, long, flat] = h.fundedAccounts(3, { [QUOTE]: 10_000_000 });
      const solE9 = 150_000 * 1_000_000_000;
      h.apply(cmd.setIndexPrice(BASE, solE9), 11 * HOUR_US - 8 * SECOND_US);
      h.apply(cmd.place(short, 'ask', 500, 1000, { market: PERP, postOnly: true }));
      h.apply(cmd.place(long, 'bid', 500, 1000, { market: PERP }));
      // A position opened and closed within the hour pays nothing.
      h.apply(cmd.place(flat, 'ask', 500, 5, { market: PERP, postOnly: true }));
      h.apply(cmd.place(long, 'bid', 500, 5, { market: PERP }));
      h.apply(cmd.place(flat, 'bid', 500, 5, { market: PERP, postOnly: true }));
      h.apply(cmd.place(long, 'ask', 500, 5, { market: PERP }));
      const s = stateOf(h.exchange);
      // sign −1: an EWMA of −1 % puts the mark 1 % under the index: P̄ = −1 %, F8 = −1 % + 0.05 %, rate −0.11875 %.
      if (sign < 0) s.perpMarks.ewmaE9[PERP] = -solE9 / 100 * 2;
      const usdcBefore = [short, long].map((a) => s.ledger.availableUnits(a, 0));
      const lineBefore = s.positions.settlementUnits[0];
      const records = runSeconds(h, 11 * HOUR_US + SECOND_US, solE9);
      const [rate] = fundings(records);
      expect(rate.intervalEndUs).toBe(11 * HOUR_US);
      if (sign > 0) expect(rate.fundingRateE12).toBe(QUIET_HOURLY);
      else expect(rate.fundingRateE12).toBeLessThan(0);
      // Exact payment: |rate| × 1000 lots × 10 units × the settling mark (×10^9 USDC per 10^9 units), at 10^-12.
      const numerator = BigInt(Math.abs(rate.fundingRateE12)) * 1000n * 10n * BigInt(rate.markPriceE9) * 1_000_000n;
      const denominator = 10n ** 30n;
      const up = Number((numerator + denominator - 1n) / denominator);
      const down = Number(numerator / denominator);
      expect(up - down).toBe(numerator % denominator === 0n ? 0 : 1);
      expect(down).toBeGreaterThan(0);
      const [payer, receiver] = sign > 0 ? [long, short] : [short, long];
      expect(payments(records).map((p) => [p.accountId, p.quantityUnits, p.positionLots, p.intervalEndUs])).toEqual(
        [[short, sign > 0 ? down : -up, -1000, 11 * HOUR_US], [long, sign > 0 ? -up : down, 1000, 11 * HOUR_US]]);
      expect(s.ledger.availableUnits(payer, 0) - usdcBefore[payer === short ? 0 : 1]).toBe(-up);
      expect(s.ledger.availableUnits(receiver, 0) - usdcBefore[receiver === short ? 0 : 1]).toBe(down);
      expect(s.positions.settlementUnits[0] - lineBefore).toBe(up - down);
      // Each position keeps its funding since it opened; the closed one has none.
      const cumulative = (a: number): number => s.perpMarks.cumulative.of(s.positions.cell(a, PERP), s.positions);
      expect([cumulative(payer), cumulative(receiver), cumulative(flat)]).toEqual([-up, down, 0]);
      const second = runSeconds(h, 12 * HOUR_US + SECOND_US, solE9);
      const again = payments(second).find((p) => p.accountId === payer)!.quantityUnits;
      expect(cumulative(payer)).toBe(-up + again);
      // The position query shows it (GET /api/v1/position's cumulativeFundingPayment).
      const shown = (a: number): number[] => h.apply({ kind: CommandKind.QueryPositions, accountId: a, marketId: 0xffff })
        .filter((r): r is PositionRec & { type: RecordType.Position } => r.type === RecordType.Position).map((r) => r.cumulativeFundingUnits);
      expect(shown(payer)).toEqual([cumulative(payer)]);
      expect(shown(receiver)).toEqual([cumulative(receiver)]);
    }
  });

  it('a payer with autoBorrowSettlements borrows the funding it cannot pay and pays it at once; without the setting it stays a debt', () => {
    const run = (autoBorrowSettlements: boolean) => {
      const h = new EngineHarness(perpConfig());
      const [short, lender] = h.fundedAccounts(2, { [QUOTE]: 10_000_000 });
      const long = h.createAccount(9);
      h.apply(lend(lender, QUOTE, 1_000_000));
      h.apply(cmd.deposit(long, BASE, 100_000)); // SOL collateral, no USDC
      h.apply(cmd.updateAccountSettings(long, { autoBorrowSettlements }));
      const solE9 = 150_000 * 1_000_000_000;
      h.apply(cmd.setIndexPrice(BASE, solE9), 11 * HOUR_US - 8 * SECOND_US);
      h.apply(cmd.place(long, 'bid', 500, 1000, { market: PERP, postOnly: true }));
      h.apply(cmd.place(short, 'ask', 500, 1000, { market: PERP }));
      const s = stateOf(h.exchange);
      const cell = s.positions.cell(long, PERP);
      const before = { available: s.ledger.availableUnits(long, 0), unsettled: s.positions.unsettled[cell], feeDebt: s.positions.feeDebt[cell] };
      const records = runSeconds(h, 11 * HOUR_US + SECOND_US, solE9);
      const paid = -payments(records).find((p) => p.accountId === long)!.quantityUnits;
      const borrows = records.filter((r) => r.type === RecordType.BorrowLend && r.accountId === long && (r as { event: number }).event === BorrowLendEvent.Borrow);
      h.exchange.validateInvariants();
      return { s, cell, before, paid, borrows, long };
    };
    const off = run(false);
    expect(off.paid).toBeGreaterThan(0);
    expect(off.before.available).toBe(0);
    expect(off.borrows).toEqual([]);
    expect(off.s.positions.unsettled[off.cell] - off.before.unsettled).toBe(BigInt(-off.paid));
    const on = run(true);
    expect(on.paid).toBe(off.paid);
    // Borrowed: exactly the payment (the fill's maker fee was borrowed at the fill already).
    expect(on.before).toEqual({ available: 0, unsettled: 0n, feeDebt: 0n });
    expect(on.borrows.map((r) => (r as { quantityUnits: number }).quantityUnits)).toEqual([on.paid]);
    expect(on.s.positions.unsettled[on.cell]).toBe(0n);
    expect(on.s.positions.feeDebt[on.cell]).toBe(0n);
    expect(on.s.ledger.availableUnits(on.long, 0)).toBe(0);
  });

  it('reads a format-10 snapshot (before mark and funding state) with every perpetual fresh, and refuses a format after 16', () => {
    const h = perpHarness(HOUR_US / 2);
    h.fundedAccounts(1, { [QUOTE]: 1_000 });
    // Stale index: nothing sampled in the open interval, the perpetual is fresh.
    h.apply(cmd.tick(), 10 * HOUR_US + HOUR_US / 2 + 40 * SECOND_US);
    h.apply(cmd.tick(), 12 * HOUR_US + 7);
    expect(stateOf(h.exchange).perpMarks.isFresh(PERP)).toBe(true);
    const today = exportSnapshot(h.exchange);
    expect(new DataView(today.buffer, today.byteOffset).getUint32(4, true)).toBe(16);
    const v11 = formatElevenSnapshot(h.exchange);
    const view = new DataView(v11.buffer, v11.byteOffset, v11.byteLength);
    expect(view.getUint32(4, true)).toBe(11);
    // The mark part is the last before format 11's end marker: two counts of 0 (perpetuals, cumulative funding).
    expect([0, 4, 8, 12].map((back) => view.getUint32(v11.length - 20 + back, true))).toEqual([0, 0, 0, 0]);
    const v10 = new Uint8Array(v11.length - 16);
    v10.set(v11.subarray(0, v11.length - 20));
    v10.set(v11.subarray(v11.length - 4), v11.length - 20);
    new DataView(v10.buffer).setUint32(4, 10, true);
    const restored = new Exchange(perpConfig());
    importSnapshot(restored, v10);
    restored.validateInvariants();
    expect(restored.stateHash()).toBe(h.exchange.stateHash());
    expect(Buffer.from(exportSnapshot(restored)).equals(Buffer.from(today))).toBe(true);
    // Format 11 and format 9 (before the liquidation part too) read the same way.
    for (const old of [v11, formatNineSnapshot(h.exchange, perpConfig().assets.length)]) {
      const restoredOld = new Exchange(perpConfig());
      importSnapshot(restoredOld, old);
      restoredOld.validateInvariants();
      expect(restoredOld.stateHash()).toBe(h.exchange.stateHash());
    }
    // The same file claiming format 11 lacks its mark part; a format after 16 is unknown.
    for (const version of [11, 17, 18]) {
      const other = version === 11 ? v10.slice() : today.slice();
      new DataView(other.buffer).setUint32(4, version, true);
      expect(() => importSnapshot(new Exchange(perpConfig()), other)).toThrow(SnapshotFormatError);
    }
  });
});
