// Each account's margin settings in the engine core (engine/core/margin/account-settings.ts):
// set, partially updated, refused without change when invalid, answered by the query, kept by
// replay and by snapshots; an account on the defaults keeps the state hash and the snapshot it had
// before the settings existed, and format-4 snapshots (test/fixtures/engine-snapshot-v4.json,
// exported by that engine from helpers/legacy-snapshot-scenario.ts) still load. The leverage check
// (margin/leverage-limit.ts) is tested here as a function of exposure and equity; on an account
// that borrows, in engine-liquidation-price.test.ts.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AccountSettingFlag, HeaderFlag, RecordType, ResultCode, type AccountSettingsRec } from '../../../engine/bus/types.js';
import { Exchange } from '../../../engine/core/exchange.js';
import { exportSnapshot, importSnapshot } from '../../../engine/core/snapshot.js';
import { exceedsLeverageLimit, leverageLimitRefusal } from '../../../engine/core/margin/leverage-limit.js';
import { EngineHarness, FRONT, cmd, replay, testConfig, type Rec } from '../../helpers/engine-harness.js';
import { A, B, fourAccounts, runScenario } from '../../helpers/engine-scenario.js';
import { legacyScenarioConfig, runLegacyScenario } from '../../helpers/legacy-snapshot-scenario.js';
import { formatNineSnapshot } from '../../helpers/snapshot-formats.js';

const { AutoBorrowSettlements, AutoLend, AutoRepayBorrows, Liquidating } = AccountSettingFlag;

interface Settings {
  settings: number;
  leverageLimitHundredths: number;
}

function settingsRecords(records: Rec[]): (AccountSettingsRec & { type: RecordType.AccountSettings })[] {
  return records.filter((r): r is AccountSettingsRec & { type: RecordType.AccountSettings } => r.type === RecordType.AccountSettings);
}

/** The account's settings as QueryAccountSettings answers them. */
function settingsOf(h: EngineHarness, accountId: number): Settings {
  const [record] = settingsRecords(h.apply(cmd.queryAccountSettings(accountId)));
  return { settings: record.settings, leverageLimitHundredths: record.leverageLimitHundredths };
}

function expectSettings(expected: Settings) {
  return (_records: Rec[], h: EngineHarness) => expect(settingsOf(h, A)).toEqual(expected);
}

function harness(config = testConfig()): EngineHarness {
  const h = new EngineHarness(config);
  fourAccounts(h);
  return h;
}

/** The (empty) perpetual positions part of a format-9 snapshot of three assets: last position id, a settlement line per asset, no position, no claim. */
const POSITIONS_PART = 8 + 3 * 8 + 8 + 8;

describe('engine: account settings', () => {
  it('start at the defaults and are answered by the query, flagged Last', () => {
    const h = harness();
    const records = h.apply(cmd.queryAccountSettings(A));
    expect(records.map((r) => [r.type, r.frontId, r.flags])).toEqual([[RecordType.AccountSettings, FRONT, HeaderFlag.Last]]);
    expect(settingsOf(h, A)).toEqual({ settings: 0, leverageLimitHundredths: 100 });
  });

  it('set, update partially, and refuse invalid values without changing anything', () => {
    runScenario(testConfig(), [
      { note: 'set everything', do: cmd.updateAccountSettings(A, { autoBorrowSettlements: true, autoLend: true, autoRepayBorrows: true, leverageLimitHundredths: 500 }),
        check: (records, h) => {
          expect(settingsRecords(records).map((r) => [r.accountId, r.settings, r.leverageLimitHundredths, r.requestId])).toEqual([[A, 7, 500, h.lastRequestId()]]);
          expectSettings({ settings: AutoBorrowSettlements | AutoLend | AutoRepayBorrows, leverageLimitHundredths: 500 })(records, h);
        } },
      { note: 'autoLend off alone: the rest stays', do: cmd.updateAccountSettings(A, { autoLend: false }),
        check: expectSettings({ settings: AutoBorrowSettlements | AutoRepayBorrows, leverageLimitHundredths: 500 }) },
      { note: 'the leverage limit alone (2.5×): the flags stay', do: cmd.updateAccountSettings(A, { leverageLimitHundredths: 250 }),
        check: expectSettings({ settings: AutoBorrowSettlements | AutoRepayBorrows, leverageLimitHundredths: 250 }) },
      { note: 'nothing named: nothing changes, the settings are answered', do: cmd.updateAccountSettings(A, {}),
        check: (records, h) => {
          expect(settingsRecords(records).map((r) => r.leverageLimitHundredths)).toEqual([250]);
          expectSettings({ settings: AutoBorrowSettlements | AutoRepayBorrows, leverageLimitHundredths: 250 })(records, h);
        } },
      { note: 'below 1×', do: cmd.updateAccountSettings(A, { autoLend: true, leverageLimitHundredths: 99 }), code: ResultCode.LeverageLimitOutOfRange,
        check: expectSettings({ settings: AutoBorrowSettlements | AutoRepayBorrows, leverageLimitHundredths: 250 }) },
      { note: 'above the platform maximum (100×)', do: cmd.updateAccountSettings(A, { leverageLimitHundredths: 10_001 }), code: ResultCode.LeverageLimitOutOfRange },
      { note: 'zero', do: cmd.updateAccountSettings(A, { leverageLimitHundredths: 0 }), code: ResultCode.LeverageLimitOutOfRange },
      { note: 'a leverage limit without its bit', do: { ...cmd.updateAccountSettings(A, { autoLend: true }), amountUnits: 300 }, code: ResultCode.InvalidCommand },
      { note: 'liquidating cannot be set', do: cmd.updateAccountSettings(A, {}, Liquidating | (Liquidating << 8)), code: ResultCode.InvalidCommand },
      { note: 'a value for a setting not named', do: cmd.updateAccountSettings(A, {}, AutoLend << 8), code: ResultCode.InvalidCommand },
      { note: 'a word past two bytes', do: cmd.updateAccountSettings(A, {}, 0x10000), code: ResultCode.InvalidCommand },
      { note: 'a negative word', do: cmd.updateAccountSettings(A, {}, -1), code: ResultCode.InvalidCommand },
      { note: 'an unknown account', do: cmd.updateAccountSettings(99, { autoLend: true }), code: ResultCode.UnknownAccount },
      { note: 'the platform maximum itself', do: cmd.updateAccountSettings(A, { leverageLimitHundredths: 10_000 }),
        check: expectSettings({ settings: AutoBorrowSettlements | AutoRepayBorrows, leverageLimitHundredths: 10_000 }) },
      { note: 'another account keeps its defaults', do: cmd.queryAccountSettings(B),
        check: (records) => expect(settingsRecords(records).map((r) => [r.settings, r.leverageLimitHundredths])).toEqual([[0, 100]]) },
    ]);
  });

  it('refuses the query of an unknown account', () => {
    const h = harness();
    const records = h.apply(cmd.queryAccountSettings(99));
    expect(records.map((r) => r.type === RecordType.Result && ResultCode[r.code])).toEqual(['UnknownAccount']);
  });

  it('take the platform maximum from the configuration', () => {
    const h = harness(testConfig({ maxLeverageHundredths: 2_000 }));
    expect(settingsRecords(h.apply(cmd.updateAccountSettings(A, { leverageLimitHundredths: 2_001 })))).toEqual([]);
    expect(settingsOf(h, A).leverageLimitHundredths).toBe(100);
    h.apply(cmd.updateAccountSettings(A, { leverageLimitHundredths: 2_000 }));
    expect(settingsOf(h, A).leverageLimitHundredths).toBe(2_000);
    expect(() => new Exchange(testConfig({ maxLeverageHundredths: 99 }))).toThrow(/maxLeverageHundredths/);
  });

  it('are rebuilt by replay and kept by a snapshot round trip', () => {
    const h = harness();
    h.apply(cmd.updateAccountSettings(A, { autoLend: true, leverageLimitHundredths: 1_250 }));
    h.apply(cmd.updateAccountSettings(B, { autoRepayBorrows: true }));
    h.restartFromSnapshot(); // checks the copy's hash and bytes
    expect(settingsOf(h, A)).toEqual({ settings: AutoLend, leverageLimitHundredths: 1_250 });
    expect(settingsOf(h, B)).toEqual({ settings: AutoRepayBorrows, leverageLimitHundredths: 100 });
    const replayed = replay(h.config, h.stream);
    expect(replayed.records).toEqual(h.log);
    expect(replayed.exchange.stateHash()).toBe(h.exchange.stateHash());
  });

  it('leave the state hash of an account on the defaults as it was, and change it otherwise', () => {
    const never = harness();
    const there = harness();
    there.apply(cmd.updateAccountSettings(A, { autoLend: true, leverageLimitHundredths: 300 }));
    const changed = there.exchange.stateHash();
    there.apply(cmd.updateAccountSettings(A, { autoLend: false, leverageLimitHundredths: 100 }));
    expect(there.exchange.stateHash()).toBe(never.exchange.stateHash());
    expect(changed).not.toBe(never.exchange.stateHash());
    const leverageOnly = harness();
    leverageOnly.apply(cmd.updateAccountSettings(A, { leverageLimitHundredths: 300 }));
    expect(leverageOnly.exchange.stateHash()).not.toBe(changed);
  });

  it('refuse a snapshot whose settings are out of range', () => {
    const h = harness();
    h.apply(cmd.updateAccountSettings(A, { leverageLimitHundredths: 300 }));
    const bytes = formatNineSnapshot(h.exchange, h.config.assets.length);
    // The settings part: count, then account id (8 bytes), flags, limit; then the (empty) borrow/lend
    // part (24 bytes), the (empty) throttle part (8 bytes), the (empty) positions part and the end marker.
    new DataView(bytes.buffer, bytes.byteOffset).setUint32(bytes.length - 4 - POSITIONS_PART - 8 - 24 - 4, 50, true);
    expect(() => importSnapshot(new Exchange(h.config), bytes)).toThrow(/account settings out of range/);
  });
});

describe('format-4 engine snapshots (before account settings)', () => {
  const fixture = JSON.parse(readFileSync(new URL('../../fixtures/engine-snapshot-v4.json', import.meta.url), 'utf8')) as {
    formatVersion: number; seq: number; timeUs: number; stateHash: string; payloadBase64: string;
  };
  const payload = new Uint8Array(Buffer.from(fixture.payloadBase64, 'base64'));

  it('load with every account on the defaults and the recorded state hash, which a replay today reaches too', () => {
    expect(fixture.formatVersion).toBe(4);
    const exchange = new Exchange(legacyScenarioConfig());
    importSnapshot(exchange, payload);
    exchange.validateInvariants();
    expect(exchange.stateHash()).toBe(fixture.stateHash);
    const h = new EngineHarness(legacyScenarioConfig());
    runLegacyScenario(h);
    expect(h.seq).toBe(fixture.seq);
    expect(h.exchange.stateHash()).toBe(fixture.stateHash);
    h.exchange = exchange;
    for (const accountId of [1, 2, 3]) expect(settingsOf(h, accountId)).toEqual({ settings: 0, leverageLimitHundredths: 100 });
  });

  it('take settings afterwards and re-export in today\'s format', () => {
    const h = new EngineHarness(legacyScenarioConfig());
    h.exchange = new Exchange(legacyScenarioConfig());
    importSnapshot(h.exchange, payload);
    h.seq = fixture.seq;
    h.timeUs = fixture.timeUs;
    h.checks = false; // the harness did not see the deposits; invariants are checked below
    h.apply(cmd.updateAccountSettings(2, { autoBorrowSettlements: true, leverageLimitHundredths: 4_000 }));
    h.exchange.validateInvariants();
    expect(settingsOf(h, 2)).toEqual({ settings: AutoBorrowSettlements, leverageLimitHundredths: 4_000 });
    const bytes = formatNineSnapshot(h.exchange, h.config.assets.length);
    expect(new DataView(bytes.buffer, bytes.byteOffset).getUint32(4, true)).toBe(9);
    const again = new Exchange(legacyScenarioConfig());
    importSnapshot(again, bytes);
    again.validateInvariants();
    expect(again.stateHash()).toBe(h.exchange.stateHash());
    expect(again.stateHash()).not.toBe(fixture.stateHash);
  });
});

describe('leverage limit check (margin/leverage-limit.ts)', () => {
  it('passes any limit without exposure, as for an account that borrows nothing', () => {
    expect(exceedsLeverageLimit({ exposureNotionalUnits: 0n, netEquityUnits: 0n }, 100)).toBe(false);
    expect(exceedsLeverageLimit({ exposureNotionalUnits: 0n, netEquityUnits: -5n }, 100)).toBe(false);
    const h = harness();
    expect(leverageLimitRefusal(h.exchange['s'], A, 100)).toBe(ResultCode.Ok);
  });

  it('refuses a limit below exposure / equity, exactly at the boundary', () => {
    // 5 000 of exposure on 1 000 of equity is 5× leverage.
    const usage = { exposureNotionalUnits: 5_000n, netEquityUnits: 1_000n };
    expect(exceedsLeverageLimit(usage, 499)).toBe(true);
    expect(exceedsLeverageLimit(usage, 500)).toBe(false);
    expect(exceedsLeverageLimit(usage, 10_000)).toBe(false);
    // 1 001 of exposure on 1 000 of equity: 1.001× is above a 1× limit, below 1.01×.
    expect(exceedsLeverageLimit({ exposureNotionalUnits: 1_001n, netEquityUnits: 1_000n }, 100)).toBe(true);
    expect(exceedsLeverageLimit({ exposureNotionalUnits: 1_001n, netEquityUnits: 1_000n }, 101)).toBe(false);
  });

  it('refuses every limit to an account with exposure and no positive equity, and stays exact past 2^53', () => {
    expect(exceedsLeverageLimit({ exposureNotionalUnits: 1n, netEquityUnits: 0n }, 100_000)).toBe(true);
    expect(exceedsLeverageLimit({ exposureNotionalUnits: 1n, netEquityUnits: -1_000n }, 100_000)).toBe(true);
    const big = 2n ** 60n;
    expect(exceedsLeverageLimit({ exposureNotionalUnits: big * 3n + 1n, netEquityUnits: big }, 300)).toBe(true);
    expect(exceedsLeverageLimit({ exposureNotionalUnits: big * 3n, netEquityUnits: big }, 300)).toBe(false);
  });
});
