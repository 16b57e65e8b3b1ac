// The whole exchange's state (SetSystemState): Ok, or Maintenance.
//
// In maintenance the engine refuses, with SystemMaintenance and no change, every command that
// trades or moves funds (the kinds the schema marks refused_in_maintenance: PlaceOrder, CancelOrder,
// CancelAll, Withdraw, ConvertDust, ConvertAllDust and BorrowLend). The
// check sits in the engine, not only in the fronts, so a command already in the ring when
// maintenance starts is refused like one sent after, and replay refuses the same ones. Reads,
// deposits, account creation, confirmations of withdrawals already made and operator commands go
// on; speed-bumped orders accepted before maintenance still take effect when their bump ends.
//
// The state is journaled like any command, so a restart keeps it. It enters the state hash only
// while in maintenance, and the snapshot from format 4 on, so every state reachable before this
// command existed keeps the hash and the snapshot it had.

import { FRONT_ID_NONE, REFUSED_IN_MAINTENANCE, ResultCode, SystemState, type SetSystemStateCommand } from '../bus/types.js';
import type { SnapshotReader, SnapshotWriter, StateDigest } from './parts.js';
import { expectSnapshot } from './parts.js';
import type { EngineState } from './state.js';

/** The refusal the exchange's state gives a command of `kind` (the schema's refused_in_maintenance): Ok, or SystemMaintenance. */
export function systemRefusal(s: EngineState, kind: number): ResultCode {
  return s.systemState === SystemState.Maintenance && REFUSED_IN_MAINTENANCE[kind] === 1 ? ResultCode.SystemMaintenance : ResultCode.Ok;
}

function isSystemState(value: number): value is SystemState {
  return value === SystemState.Ok || value === SystemState.Maintenance;
}

/** SetSystemState: a SystemState event for every front, then the result. */
export function setSystemState(s: EngineState, cmd: SetSystemStateCommand): void {
  if (!isSystemState(cmd.state)) return s.out.result(ResultCode.InvalidSystemState, 0, cmd.frontId, cmd.requestId);
  s.systemState = cmd.state;
  s.out.systemState(s.systemState, FRONT_ID_NONE, 0);
  s.out.result(ResultCode.Ok, 0, cmd.frontId, cmd.requestId);
}

/** Snapshot part (format 4 on): the state as one word. Older files hold none: Ok. */
export function exportSystemStateTo(s: EngineState, w: SnapshotWriter): void {
  w.word(s.systemState);
}

export function importSystemStateFrom(s: EngineState, r: SnapshotReader, hasPart: boolean): void {
  const state = hasPart ? r.word() : SystemState.Ok;
  expectSnapshot(isSystemState(state), 'unknown system state');
  s.systemState = state;
}

/** State hash part: nothing while Ok (so every earlier state keeps its hash), the state otherwise. */
export function hashSystemStateInto(s: EngineState, d: StateDigest): void {
  if (s.systemState !== SystemState.Ok) d.number(s.systemState);
}
