// The liquidation room's part of the snapshot and of the hash (fund.ts), with the step timer's due time.

import { expectSnapshot, type SnapshotReader, type SnapshotWriter, type StateDigest } from '../parts.js';
import type { EngineState } from '../state.js';
import { NO_TIMER, TimerKind } from '../timers.js';

export function exportInsuranceTo(s: EngineState, w: SnapshotWriter): void {
  s.insurance.exportTo(w, stepDueUs(s));
}

/** Format 12 on; an older snapshot has no part: an empty fund, no step waiting. */
export function importInsuranceFrom(s: EngineState, r: SnapshotReader, hasPart: boolean): void {
  if (!hasPart) return;
  const dueUs = s.insurance.importFrom(r);
  expectSnapshot(dueUs === -1 || (Number.isSafeInteger(dueUs) && dueUs > s.lastTimeUs), 'liquidation step due at a bad time');
  if (dueUs >= 0) s.insurance.stepTimer = s.timers.add(dueUs, TimerKind.LiquidationStep, 0);
}

export function hashInsuranceInto(s: EngineState, d: StateDigest): void {
  s.insurance.hashInto(d, stepDueUs(s));
}

function stepDueUs(s: EngineState): number {
  return s.insurance.stepTimer === NO_TIMER ? -1 : s.timers.dueOf(s.insurance.stepTimer);
}
