// The liquidation trigger bands after a snapshot load (Exchange.drawTriggerBands, margin/liquidating.ts
// drawAllBands): the bands are derived and start undrawn, so the engine worker draws every healthy
// account's before it serves; the first price move then re-checks only the accounts its marks
// take out of their bands, with the records of an engine that drew none.
import { describe, expect, it } from 'vitest';
import { AccountSettingFlag, CommandKind, RecordType } from '../../../engine/bus/types.js';
import { Exchange } from '../../../engine/core/exchange.js';
import { TRIGGER_SWITCH } from '../../../engine/core/margin/trigger-index.js';
import { exportSnapshot, importSnapshot } from '../../../engine/core/snapshot.js';
import { commandFromSlot } from '../../../engine/bus/codec.js';
import { newCommandSlot } from '../../../engine/bus/generated/records.js';
import { BASE, CollectingSink, EngineHarness, QUOTE, cmd, stateOf, type Rec } from '../../helpers/engine-harness.js';
import { ONE, borrow, lend, marginConfig } from '../../helpers/margin-harness.js';

/** SOL at 60 USDC units per SOL unit, then at 6.0002: 10,000 SOL units weigh 30,001 (weight 0.5). */
const SOL_AT_60 = 60_000_000_000_000;
const SOL_AT_6_0002 = 6_000_200_000_000;
const SOL_AT_6 = 6_000_000_000_000;

const withdraw = (accountId: number, assetId: number, amountUnits: number) => ({ kind: CommandKind.Withdraw, accountId, assetId, amountUnits, key: new Uint8Array(32) });

/** A lender and five borrowers of USDC against SOL; the fourth holds no USDC and sits one unit above the line at SOL 6.0002. */
function borrowers(): EngineHarness {
  const h = new EngineHarness(marginConfig({ maxUtilization: ONE, fee: 0n }, { maxUtilization: ONE, fee: 0n }));
  const [lender, ...accounts] = h.fundedAccounts(6, { [QUOTE]: 1_000_000 });
  h.apply(cmd.deposit(lender, QUOTE, 1_000_000));
  h.apply(lend(lender, QUOTE, 2_000_000));
  h.apply(cmd.setIndexPrice(BASE, SOL_AT_60));
  accounts.forEach((a, i) => {
    h.apply(cmd.deposit(a, BASE, 10_000));
    h.apply(cmd.updateAccountSettings(a, { leverageLimitHundredths: 1_000 }));
    if (i === 3) h.apply(withdraw(a, QUOTE, 1_000_000));
    h.apply(borrow(a, QUOTE, i === 3 ? 600_000 : 100_000));
  });
  h.apply(cmd.setIndexPrice(BASE, SOL_AT_6_0002));
  return h;
}

/** The engine restored from `bytes`, its bands drawn or not, then SOL to 6.0: the move's records and re-checks. */
function firstMove(config: EngineHarness['config'], bytes: Uint8Array, lastSeq: number, timeUs: number, draw: boolean): { records: Rec[]; rechecks: number; engine: Exchange } {
  const engine = new Exchange(config);
  importSnapshot(engine, bytes);
  if (draw) engine.drawTriggerBands();
  const before = TRIGGER_SWITCH.rechecks;
  const sink = new CollectingSink();
  engine.apply(commandFromSlot({ ...newCommandSlot(), ...cmd.setIndexPrice(BASE, SOL_AT_6) }), lastSeq + 1, timeUs, sink);
  return { records: sink.records, rechecks: TRIGGER_SWITCH.rechecks - before, engine };
}

describe('the trigger bands after a snapshot load', () => {
  it('are drawn for every healthy account at risk before the first move, which then re-checks only the one it takes past its band, with the same records', () => {
    const h = borrowers();
    const bytes = exportSnapshot(h.exchange);
    const s = stateOf(h.exchange);
    const drawn = firstMove(h.config, bytes, s.lastSeq, h.timeUs + 1, true);
    const undrawn = firstMove(h.config, bytes, s.lastSeq, h.timeUs + 1, false);
    // Without the bands the move re-checks all five borrowers; with them only account 5, one unit above the line.
    expect(undrawn.rechecks).toBe(5);
    expect(drawn.rechecks).toBe(1);
    expect(drawn.records).toEqual(undrawn.records);
    expect(drawn.records.filter((r) => r.type === RecordType.AccountSettings).map((r) => r.accountId)).toEqual([5]);
    expect(drawn.engine.stateHash()).toBe(undrawn.engine.stateHash());
    drawn.engine.validateInvariants();
  });

  it('change no state: the hash and the snapshot bytes are those before the drawing', () => {
    const h = borrowers();
    const bytes = exportSnapshot(h.exchange);
    const engine = new Exchange(h.config);
    importSnapshot(engine, bytes);
    const hash = engine.stateHash();
    engine.drawTriggerBands();
    expect([2, 3, 4, 5, 6].map((a) => stateOf(engine).trigger.isBanded(a))).toEqual([true, true, true, true, true]);
    expect(engine.stateHash()).toBe(hash);
    expect(Buffer.from(exportSnapshot(engine)).equals(Buffer.from(bytes))).toBe(true);
  });

  it('draw none for a liquidating account, healthy or not: the next move must re-check it (and may clear it)', () => {
    const h = borrowers();
    const engine = new Exchange(h.config);
    importSnapshot(engine, exportSnapshot(h.exchange));
    // Account 3 is healthy at these marks; flagged as liquidating, it keeps no band.
    stateOf(engine).accountSettings.flags[3] |= AccountSettingFlag.Liquidating;
    engine.drawTriggerBands();
    expect([2, 3, 4].map((a) => stateOf(engine).trigger.isBanded(a))).toEqual([true, false, true]);
  });
});
