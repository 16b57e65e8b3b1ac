// The whole exchange's maintenance state in the engine core (engine/core/system.ts): what it
// refuses and what goes on, and that replay, snapshots and the state hash keep it, while a state
// that is not in maintenance keeps the hash and the snapshot it had before the state existed.
// Same units as test/engine/engine.test.ts: one lot = 10 base units, one tick × one lot = 3 quote units.
import { describe, expect, it } from 'vitest';
import { CommandKind, FRONT_ID_NONE, OrderStatus, RecordType, ResultCode, SystemState } from '../../engine/bus/types.js';
import { Exchange } from '../../engine/core/exchange.js';
import { SnapshotFormatError, exportSnapshot, importSnapshot } from '../../engine/core/snapshot.js';
import { BASE, EngineHarness, FRONT, M1, QUOTE, cmd, replay, responseOf, testConfig, type Rec } from '../helpers/engine-harness.js';
import { formatNineSnapshot } from '../helpers/snapshot-formats.js';
import { A, B, C, START_BASE, START_QUOTE, fourAccounts, runScenario } from '../helpers/engine-scenario.js';

const { Maintenance, Ok } = SystemState;

function systemEvents(records: Rec[]): SystemState[] {
  return records.filter((r) => r.type === RecordType.SystemState && r.frontId === FRONT_ID_NONE).map((r) => (r as { state: SystemState }).state);
}

function withdraw(accountId: number, assetId: number, amountUnits: number) {
  return { kind: CommandKind.Withdraw, accountId, assetId, amountUnits, key: new Uint8Array(32).fill(7) };
}

function resultCodes(records: Rec[], requestId: number): string[] {
  return records.filter((r) => r.type === RecordType.Result && r.requestId === requestId && r.frontId === FRONT).map((r) => ResultCode[(r as { code: ResultCode }).code]);
}

/** A harness with four funded accounts and a resting bid and ask on market 0. */
function tradingHarness(): EngineHarness {
  const h = new EngineHarness(testConfig());
  fourAccounts(h);
  h.apply(cmd.place(A, 'bid', 100, 2));
  h.apply(cmd.place(B, 'ask', 110, 2));
  return h;
}

/** The (empty) perpetual positions part of a format-9 snapshot of three assets: last position id, a settlement line per asset, no position, no claim. */
const POSITIONS_PART = 8 + 3 * 8 + 8 + 8;

describe('engine: maintenance', () => {
  it('refuses places, cancels, withdrawals and dust conversions; reads, deposits and operator commands go on', () => {
    runScenario(testConfig(), [
      { note: 'A bids 100 × 2 (rests)', do: cmd.place(A, 'bid', 100, 2), as: 'a', status: OrderStatus.New },
      { note: 'operator: maintenance', do: cmd.setSystemState(Maintenance),
        check: (records) => expect(systemEvents(records)).toEqual([Maintenance]) },
      { note: 'a place is refused', do: cmd.place(B, 'ask', 100, 1), code: ResultCode.SystemMaintenance, book: { bids: [[100, 2]], asks: [] } },
      { note: 'a place in the other market too', do: cmd.place(B, 'ask', 100, 1, { market: M1 }), code: ResultCode.SystemMaintenance },
      { note: 'a cancel is refused', do: (ids) => cmd.cancel(A, ids.a), code: ResultCode.SystemMaintenance, book: { bids: [[100, 2]], asks: [] } },
      { note: 'a cancel-all is refused', do: cmd.cancelAll(A), code: ResultCode.SystemMaintenance },
      { note: 'a withdrawal is refused', do: withdraw(C, QUOTE, 10), code: ResultCode.SystemMaintenance, balances: [[C, QUOTE, START_QUOTE, 0]] },
      { note: 'a dust conversion is refused', do: { kind: CommandKind.ConvertDust, accountId: C, marketId: 0, amountUnits: 5 }, code: ResultCode.SystemMaintenance },
      { note: 'a deposit goes on', do: cmd.deposit(C, BASE, 10), balances: [[C, BASE, START_BASE + 10, 0]] },
      { note: 'balances are read', do: cmd.queryBalances(A) },
      { note: 'open orders are read', do: cmd.queryOpenOrders(A) },
      { note: 'an order book state is set', do: cmd.setMarketState(M1, 2) },
      { note: 'an invalid system state is refused and changes nothing', do: cmd.setSystemState(2), code: ResultCode.InvalidSystemState },
      { note: 'still in maintenance', do: cmd.place(B, 'ask', 100, 1), code: ResultCode.SystemMaintenance },
      { note: 'operator: maintenance off', do: cmd.setSystemState(Ok), check: (records) => expect(systemEvents(records)).toEqual([Ok]) },
      { note: 'a place trades again', do: cmd.place(B, 'ask', 100, 1), status: OrderStatus.Filled, trades: [[100, 1]] },
      { note: 'a cancel works again', do: (ids) => cmd.cancel(A, ids.a), status: OrderStatus.Cancelled, book: { bids: [], asks: [] } },
    ]);
  });

  it('lets an order accepted before maintenance take effect when its speed bump ends', () => {
    const BUMP = 100_000;
    runScenario(testConfig({ speedBumpUs: BUMP }), [
      { note: 'A bids 100 × 1 (pending)', at: 0, do: cmd.place(A, 'bid', 100, 1), as: 'a', status: null },
      { note: 'operator: maintenance', at: 10, do: cmd.setSystemState(Maintenance) },
      { note: 'the bump ends: the bid rests', at: BUMP, do: cmd.tick(), responses: { a: OrderStatus.New }, book: { bids: [[100, 1]], asks: [] } },
    ]);
  });

  it('answers the start-up snapshot query with the system state', () => {
    const h = tradingHarness();
    const before = h.apply(cmd.querySnapshot()).filter((r) => r.type === RecordType.SystemState);
    h.apply(cmd.setSystemState(Maintenance));
    const after = h.apply(cmd.querySnapshot()).filter((r) => r.type === RecordType.SystemState);
    expect(before.map((r) => [r.frontId, (r as { state: number }).state])).toEqual([[FRONT, Ok]]);
    expect(after.map((r) => [r.frontId, (r as { state: number }).state])).toEqual([[FRONT, Maintenance]]);
  });

  it('keeps the state hash of a state that is not in maintenance, and changes it in maintenance', () => {
    const never = tradingHarness();
    const onOff = tradingHarness();
    onOff.apply(cmd.setSystemState(Maintenance));
    const inMaintenance = onOff.exchange.stateHash();
    onOff.apply(cmd.setSystemState(Ok));
    expect(onOff.exchange.stateHash()).toBe(never.exchange.stateHash());
    expect(inMaintenance).not.toBe(never.exchange.stateHash());
  });

  it('is rebuilt by replay, and kept by a snapshot round trip', () => {
    const h = tradingHarness();
    h.apply(cmd.setSystemState(Maintenance));
    h.restartFromSnapshot(); // checks the copy's hash and bytes
    expect(resultCodes(h.apply(cmd.place(C, 'bid', 110, 1)), h.lastRequestId())).toEqual(['SystemMaintenance']);
    const replayed = replay(h.config, h.stream);
    expect(replayed.records).toEqual(h.log);
    expect(replayed.exchange.stateHash()).toBe(h.exchange.stateHash());
  });

  it('reads format-3 snapshots (written before the system state) as not in maintenance, with the same hash', () => {
    const h = tradingHarness();
    const today = formatNineSnapshot(h.exchange, h.config.assets.length);
    const view = new DataView(today.buffer, today.byteOffset, today.byteLength);
    expect(view.getUint32(4, true)).toBe(9);
    // Format 3: the same words without the system state word, the (empty) index price and account
    // settings parts (one 8-byte count each), the borrow/lend part (no pools, no positions, no
    // interest due: three 8-byte numbers), the throttle part (no pools: one 8-byte count) and the
    // (empty) perpetual positions part before the end marker.
    const tail = 4 + 8 + 8 + 24 + 8 + POSITIONS_PART;
    const old = new Uint8Array(today.length - tail);
    old.set(today.subarray(0, today.length - 4 - tail));
    old.set(today.subarray(today.length - 4), today.length - 4 - tail);
    new DataView(old.buffer).setUint32(4, 3, true);
    const restored = new Exchange(h.config);
    importSnapshot(restored, old);
    restored.validateInvariants();
    expect(restored.stateHash()).toBe(h.exchange.stateHash());
    h.exchange = restored;
    const records = h.apply(cmd.place(C, 'bid', 90, 1));
    expect(resultCodes(records, h.lastRequestId())).toEqual([]);
    expect(responseOf(records, h.lastRequestId())?.status).toBe(OrderStatus.New);
  });

  it('refuses a snapshot whose system state is not a known value', () => {
    // Two equal streams but for the state the operator sets last: the system state word is the
    // one word where their snapshots differ.
    const other = tradingHarness();
    other.apply(cmd.setSystemState(SystemState.Ok));
    const ok = exportSnapshot(other.exchange);
    const h = tradingHarness();
    h.apply(cmd.setSystemState(Maintenance));
    const bytes = exportSnapshot(h.exchange);
    expect(bytes.length).toBe(ok.length);
    const differing = [...bytes.keys()].filter((i) => bytes[i] !== ok[i]);
    expect(differing).toHaveLength(1);
    const at = differing[0] - (differing[0] % 4);
    new DataView(bytes.buffer, bytes.byteOffset).setUint32(at, 9, true);
    expect(() => importSnapshot(new Exchange(h.config), bytes)).toThrow(SnapshotFormatError);
    expect(() => importSnapshot(new Exchange(h.config), bytes)).toThrow(/unknown system state/);
  });
});
