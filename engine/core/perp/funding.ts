// Funding of perpetual markets: the rate of each funding interval from the premiums sampled in it
// (mark-price.ts), its running estimate, and what happens at the interval's end.
//
// The rate (venue mechanics §3.4, the reading that matches the wire): with P̄ the mean premium of
// the interval's samples (truncated toward zero; 0 before the first sample) and h the interval in
// hours,
//   F8   = P̄ + clamp(0.01 % − P̄, ±0.05 %)          (the 8-hour equivalent)
//   rate = clamp(F8 × h / 8, lower, upper)           (truncated toward zero)
// with lower and upper the market's fundingRateLowerBound / fundingRateUpperBound in basis points
// per interval. Everything is an integer at 10^-12: a quiet market (P̄ = 0) publishes exactly
// 10^8 × 3 600 000 / 28 800 000 = 12 500 000, i.e. 0.0000125 per hour. The running estimate of
// the open interval is the same formula over the samples so far; MarkPrice events and the
// markPrices query carry it.
//
// Interval ends are the multiples of fundingInterval in engine time (on the hour for hourly
// funding), each perpetual's Funding timer (timers.ts; at one instant it runs after the mark
// sample of that second, so the interval's last second counts). At an end whose interval had at
// least one sample the engine writes a FundingRate event (market, interval end, rate, the mark
// at that instant), which the history writer keeps for GET /api/v1/fundingRates, and starts the
// next interval's sums, and every open position pays or receives its funding
// (funding-payments.ts), in one command or in steps (funding-passes.ts); an interval without any
// sample (no fresh index the whole time) has no price to fund against and writes nothing.

import { FRONT_ID_NONE, MarkPriceSource, ResultCode, type CommandHeader } from '../../bus/types.js';
import { assert } from '../assert.js';
import type { EngineState } from '../state.js';
import { anyFreshIndex, perpMarkPriceOf, sampleMark } from './mark-price.js';
import { NO_TIMER, TimerKind } from '../timers.js';
import { startFundingPass } from './funding-passes.js';
import { openInterestUnits } from './open-interest.js';
import { reviewPositionHoldersOf } from '../margin/liquidating.js';

/** The interest add-on of the 8-hour rate: 0.01 % at 10^-12. */
export const FUNDING_INTEREST_8H_E12 = 100_000_000;
/** The clamp of (interest − P̄): ±0.05 % at 10^-12. */
export const FUNDING_PREMIUM_CLAMP_E12 = 500_000_000;
const EIGHT_HOURS_MS = 28_800_000n;
/** One basis point at 10^-12. */
const BPS_E12 = 100_000_000;

function clamp(value: number, lower: number, upper: number): number {
  return value < lower ? lower : value > upper ? upper : value;
}

/** The funding rate at 10^-12 of an interval of `intervalMs` whose samples sum to `premiumSumE12` (header). */
export function fundingRateE12(premiumSumE12: number, sampleCount: number, intervalMs: number, lowerBps: number, upperBps: number): number {
  const mean = sampleCount === 0 ? 0 : Number(BigInt(premiumSumE12) / BigInt(sampleCount));
  const f8 = mean + clamp(FUNDING_INTEREST_8H_E12 - mean, -FUNDING_PREMIUM_CLAMP_E12, FUNDING_PREMIUM_CLAMP_E12);
  const rate = Number((BigInt(f8) * BigInt(intervalMs)) / EIGHT_HOURS_MS);
  return clamp(rate, lowerBps * BPS_E12, upperBps * BPS_E12);
}

/** The running estimate of perpetual `m`'s open interval. */
export function estimatedRateE12(s: EngineState, m: number): number {
  const perp = s.catalog.markets[m].perp;
  assert(perp !== undefined, 'a funding rate of a spot market');
  const marks = s.perpMarks;
  return fundingRateE12(marks.premiumSumE12[m], marks.sampleCount[m], perp.fundingIntervalMs, perp.fundingRateLowerBoundBps, perp.fundingRateUpperBoundBps);
}

/** The end of perpetual `m`'s open interval: its funding timer's due time (or the next end after `nowUs` before arming). */
export function nextFundingUs(s: EngineState, m: number, nowUs: number): number {
  const timer = s.perpMarks.fundingTimer[m];
  if (timer !== NO_TIMER) return s.timers.dueOf(timer);
  const interval = s.perpMarks.intervalUs[m];
  return Math.floor(nowUs / interval) * interval + interval;
}

/**
 * The MarkSample timer (mark-price.ts): samples every perpetual whose index is fresh, a MarkPrice
 * event for each, an OpenInterest event beside it (the openInterest stream's source) and its
 * position holders re-checked (margin/liquidating.ts), then waits for the next second, or stops while no index is fresh (a
 * SetIndexPrice wakes it: wakeSampler).
 */
export function sampleMarks(s: EngineState, timer: number): void {
  const marks = s.perpMarks;
  const dueUs = s.timers.dueOf(timer);
  assert(timer === marks.sampleTimer, 'a mark sample timer the sampler does not hold');
  s.timers.remove(timer);
  for (const m of marks.perpMarkets) {
    const mark = sampleMark(s, m, dueUs);
    if (mark === null) continue;
    s.out.markPrice(s.catalog.markets[m].marketId, mark.markE9, mark.indexE9, estimatedRateE12(s, m), nextFundingUs(s, m, dueUs), mark.source, FRONT_ID_NONE, 0);
    s.out.openInterest(s.catalog.markets[m].marketId, openInterestUnits(s, m), FRONT_ID_NONE, 0);
    reviewPositionHoldersOf(s, m);
  }
  marks.sampleTimer = anyFreshIndex(s, dueUs) ? s.timers.add(dueUs + 1_000_000, TimerKind.MarkSample, 0) : NO_TIMER;
}

/**
 * A Funding timer: perpetual `m`'s interval ends. With samples: a FundingRate event at the
 * interval's rate and the mark of this instant, the payments (the whole pass, or its first step
 * when the configuration has steps: funding-passes.ts) with the position holders' re-checks
 * (margin/liquidating.ts), and the sums start again. Then the next end.
 */
export function settleFunding(s: EngineState, timer: number): void {
  const marks = s.perpMarks;
  const m = s.timers.refOf(timer);
  const dueUs = s.timers.dueOf(timer);
  assert(marks.fundingTimer[m] === timer, 'a funding timer its market does not hold');
  s.timers.remove(timer);
  if (marks.sampleCount[m] > 0) {
    const rate = estimatedRateE12(s, m);
    const markE9 = perpMarkPriceOf(s, m, dueUs).markE9;
    s.out.fundingRate(s.catalog.markets[m].marketId, dueUs, rate, markE9);
    // The payments, whole or their first step (funding-passes.ts), then the holders' re-checks.
    startFundingPass(s, m, rate, markE9, dueUs);
    marks.premiumSumE12[m] = 0;
    marks.sampleCount[m] = 0;
  }
  marks.fundingTimer[m] = s.timers.add(dueUs + marks.intervalUs[m], TimerKind.Funding, m);
}

/**
 * An upper bound of the perpetual timers that can fall due between `fromUs` and `toUs`: one sample
 * a second, one funding end per interval of each perpetual (runDueTimers' loop guard).
 */
export function perpTimerSteps(s: EngineState, fromUs: number, toUs: number): number {
  const marks = s.perpMarks;
  if (marks.perpMarkets.length === 0 || toUs < fromUs) return 0;
  let steps = Math.floor((toUs - fromUs) / 1_000_000) + 1;
  for (const m of marks.perpMarkets) steps += Math.floor((toUs - fromUs) / marks.intervalUs[m]) + 1;
  return steps;
}

/**
 * QueryMarkPrices: one MarkPrice row per perpetual with a mark at the query's engine time (its
 * index, the running funding estimate, the end of the open interval); result value = rows.
 */
export function queryMarkPrices(s: EngineState, cmd: CommandHeader): void {
  const nowUs = s.out.applyTimeUs;
  let rows = 0;
  for (const m of s.perpMarks.perpMarkets) {
    const mark = perpMarkPriceOf(s, m, nowUs);
    if (mark.source === MarkPriceSource.None) continue;
    s.out.markPrice(s.catalog.markets[m].marketId, mark.markE9, mark.indexE9, estimatedRateE12(s, m), nextFundingUs(s, m, nowUs), mark.source, cmd.frontId, cmd.requestId);
    rows++;
  }
  s.out.result(ResultCode.Ok, rows, cmd.frontId, cmd.requestId);
}
