// Index prices in the engine core (engine/core/margin/index-prices.ts): SetIndexPrice sets one
// asset's price with its engine time and source, refuses what is not a price of a settable asset
// and changes nothing then; QueryIndexPrices shows every asset with its staleness at the query's
// engine time; each update within the asset's configured bounds; replay, snapshots (today's and format 4) and the state hash keep the prices, while
// a state without any keeps the hash it had before index prices existed.
import { describe, expect, it } from 'vitest';
import { FRONT_ID_NONE, IndexPriceSource, RecordType, ResultCode, SystemState, type IndexPriceRec } from '../../../engine/bus/types.js';
import { Exchange } from '../../../engine/core/exchange.js';
import { DEFAULT_INDEX_MAX_AGE_US, INDEX_PRICE_ONE, indexPriceOf, isIndexStale } from '../../../engine/core/margin/index-prices.js';
import { SnapshotFormatError, exportSnapshot, importSnapshot } from '../../../engine/core/snapshot.js';
import { BASE, EngineHarness, FRONT, OTHER, QUOTE, cmd, replay, resultOf, testConfig, stateOf, type Rec } from '../../helpers/engine-harness.js';
import { formatNineSnapshot } from '../../helpers/snapshot-formats.js';

const SOL_150_25 = 150_250_000_000;
const MAX_AGE = 5_000_000;

function indexRows(records: Rec[]): IndexPriceRec[] {
  return records.filter((r): r is IndexPriceRec & { type: RecordType.IndexPrice } => r.type === RecordType.IndexPrice);
}

/** [assetId, priceE9, updatedUs, source name, stale] of each row. */
function rows(records: Rec[]): Array<[number, number, number, string, boolean]> {
  return indexRows(records).map((r) => [r.assetId, r.priceE9, r.updatedUs, IndexPriceSource[r.source], r.stale]);
}

function harness(): EngineHarness {
  const h = new EngineHarness(testConfig({ indexMaxAgeUs: MAX_AGE }));
  h.fundedAccounts(2, { [QUOTE]: 100_000, [BASE]: 1_000 });
  return h;
}

/** The (empty) perpetual positions part of a format-9 snapshot of three assets: last position id, a settlement line per asset, no position, no claim. */
const POSITIONS_PART = 8 + 3 * 8 + 8 + 8;

describe('engine: index prices', () => {
  it('sets a price with its engine time and source, as an event for every front, and overwrites it', () => {
    const h = harness();
    const t0 = h.timeUs + 10;
    const set = h.apply(cmd.setIndexPrice(BASE, SOL_150_25), t0);
    expect(rows(set)).toEqual([[BASE, SOL_150_25, t0, 'Operator', false]]);
    expect(indexRows(set)[0].frontId).toBe(FRONT_ID_NONE);
    expect([resultOf(set).code, resultOf(set).value, resultOf(set).frontId]).toEqual([ResultCode.Ok, SOL_150_25, FRONT]);
    const t1 = t0 + 1_000;
    const again = h.apply(cmd.setIndexPrice(BASE, 151_000_000_000, IndexPriceSource.Feed), t1);
    expect(rows(again)).toEqual([[BASE, 151_000_000_000, t1, 'Feed', false]]);
    expect(indexPriceOf(stateOf(h.exchange), BASE)).toBe(151_000_000_000);
  });

  it('bounds each update of a configured asset to prev × max and prev × min; other assets and a first price are not bounded', () => {
    const ONE = 10n ** 12n;
    const h = new EngineHarness(testConfig({
      indexMaxAgeUs: MAX_AGE, indexUpdateBounds: [{ assetId: BASE, maxPriceUpdateMultiplier: (ONE * 3n) / 2n, minPriceUpdateMultiplier: (ONE * 2n) / 3n }],
    }));
    const price = (priceE9: number, assetId = BASE) => resultOf(h.apply(cmd.setIndexPrice(assetId, priceE9))).value;
    expect(price(100_000_000_000)).toBe(100_000_000_000); // the first price: as sent
    expect(price(400_000_000_000)).toBe(150_000_000_000); // capped at 100 × 1.5
    expect(price(10)).toBe(100_000_000_000); // floored at 150 × 2/3
    expect(price(7)).toBe(66_666_666_667); // 100 × 2/3, rounded up
    // The floor rounds up, the cap down: 7 × 2/3 = 4.67 → 5, 5 × 1.5 = 7.5 → 7.
    const odd = new EngineHarness(testConfig({ indexUpdateBounds: [{ assetId: BASE, maxPriceUpdateMultiplier: (ONE * 3n) / 2n, minPriceUpdateMultiplier: (ONE * 2n) / 3n }] }));
    const oddPrice = (priceE9: number) => resultOf(odd.apply(cmd.setIndexPrice(BASE, priceE9))).value;
    expect([oddPrice(7), oddPrice(1), oddPrice(1_000)]).toEqual([7, 5, 7]);
    // Within the bounds an update is taken as sent; the record shows the price set.
    expect(rows(h.apply(cmd.setIndexPrice(BASE, 80_000_000_000))).map((r) => r[1])).toEqual([80_000_000_000]);
    // OTHER has no bounds.
    expect([price(1_000, OTHER), price(1_000_000_000_000, OTHER), price(1, OTHER)]).toEqual([1_000, 1_000_000_000_000, 1]);
    expect(replay(h.config, h.stream).exchange.stateHash()).toBe(h.exchange.stateHash());
  });

  it('refuses an unknown asset, a non-positive price, the fixed USDC index and an unknown source, changing nothing', () => {
    const h = harness();
    h.apply(cmd.setIndexPrice(BASE, SOL_150_25));
    const hash = h.exchange.stateHash();
    const refusals: Array<[ReturnType<typeof cmd.setIndexPrice>, ResultCode]> = [
      [cmd.setIndexPrice(77, SOL_150_25), ResultCode.UnknownAsset],
      [cmd.setIndexPrice(OTHER, 0), ResultCode.IndexPriceNotPositive],
      [cmd.setIndexPrice(OTHER, -5), ResultCode.IndexPriceNotPositive],
      [cmd.setIndexPrice(QUOTE, 2 * INDEX_PRICE_ONE), ResultCode.IndexPriceFixed],
      [cmd.setIndexPrice(OTHER, SOL_150_25, IndexPriceSource.None), ResultCode.InvalidIndexPriceSource],
      [cmd.setIndexPrice(OTHER, SOL_150_25, IndexPriceSource.Fixed), ResultCode.InvalidIndexPriceSource],
      [cmd.setIndexPrice(OTHER, SOL_150_25, 9), ResultCode.InvalidIndexPriceSource],
    ];
    for (const [command, code] of refusals) {
      const records = h.apply(command);
      expect(records.map((r) => r.type)).toEqual([RecordType.Result]);
      expect(ResultCode[resultOf(records).code]).toBe(ResultCode[code]);
    }
    expect(h.exchange.stateHash()).toBe(hash);
    expect(indexPriceOf(stateOf(h.exchange), OTHER)).toBe(0);
  });

  it('answers a query with every asset: USDC fixed at 1, unset ones stale, set ones stale once older than the maximum age', () => {
    const h = harness();
    const t0 = h.timeUs + 1;
    h.apply(cmd.setIndexPrice(BASE, SOL_150_25, IndexPriceSource.Default), t0);
    expect(rows(h.apply(cmd.queryIndexPrices(), t0 + MAX_AGE))).toEqual([
      [QUOTE, INDEX_PRICE_ONE, 0, 'Fixed', false],
      [BASE, SOL_150_25, t0, 'Default', false],
      [OTHER, 0, 0, 'None', true],
    ]);
    const late = h.apply(cmd.queryIndexPrices(), t0 + MAX_AGE + 1);
    expect(rows(late).map((row) => row[4])).toEqual([false, true, true]);
    expect(indexRows(late).every((r) => r.frontId === FRONT && r.timeUs === t0 + MAX_AGE + 1)).toBe(true);
    expect([resultOf(late).code, resultOf(late).value]).toEqual([ResultCode.Ok, 3]);
  });

  it('isIndexStale: by engine time against the configured maximum age; unknown and unset assets are stale, USDC never', () => {
    const h = harness();
    const s = stateOf(h.exchange);
    const t0 = h.timeUs + 1;
    expect(isIndexStale(s, BASE, t0)).toBe(true);
    h.apply(cmd.setIndexPrice(BASE, SOL_150_25), t0);
    expect(isIndexStale(s, BASE, t0)).toBe(false);
    expect(isIndexStale(s, BASE, t0 + MAX_AGE)).toBe(false);
    expect(isIndexStale(s, BASE, t0 + MAX_AGE + 1)).toBe(true);
    expect(isIndexStale(s, OTHER, t0)).toBe(true);
    expect(isIndexStale(s, 77, t0)).toBe(true);
    expect(isIndexStale(s, QUOTE, t0 + 1_000 * MAX_AGE)).toBe(false);
    // Without a configured maximum age the default applies.
    const d = new EngineHarness(testConfig());
    d.apply(cmd.setIndexPrice(BASE, SOL_150_25), t0);
    expect(isIndexStale(stateOf(d.exchange), BASE, t0 + DEFAULT_INDEX_MAX_AGE_US)).toBe(false);
    expect(isIndexStale(stateOf(d.exchange), BASE, t0 + DEFAULT_INDEX_MAX_AGE_US + 1)).toBe(true);
    expect(() => new Exchange(testConfig({ indexMaxAgeUs: 0 }))).toThrow(/indexMaxAgeUs/);
  });

  it('is an operator command maintenance does not refuse', () => {
    const h = harness();
    h.apply(cmd.setSystemState(SystemState.Maintenance));
    expect(resultOf(h.apply(cmd.setIndexPrice(BASE, SOL_150_25))).code).toBe(ResultCode.Ok);
  });

  it('is rebuilt by replay and kept by a snapshot round trip; the hash covers it, a state without prices keeps its hash', () => {
    const h = harness();
    const unpriced = h.exchange.stateHash();
    h.apply(cmd.setIndexPrice(BASE, SOL_150_25));
    h.apply(cmd.setIndexPrice(OTHER, 97_000_000_000_000, IndexPriceSource.Feed), h.timeUs + 7);
    const priced = h.exchange.stateHash();
    expect(priced).not.toBe(unpriced);
    h.restartFromSnapshot(); // checks the copy's invariants, hash and bytes
    expect(rows(h.apply(cmd.queryIndexPrices()))).toEqual([
      [QUOTE, INDEX_PRICE_ONE, 0, 'Fixed', false],
      [BASE, SOL_150_25, h.timeUs - 7, 'Operator', false],
      [OTHER, 97_000_000_000_000, h.timeUs, 'Feed', false],
    ]);
    const replayed = replay(h.config, h.stream);
    expect(replayed.records).toEqual(h.log);
    expect(replayed.exchange.stateHash()).toBe(priced);
    // Another price at another time is another state.
    h.apply(cmd.setIndexPrice(BASE, SOL_150_25), h.timeUs + 1);
    expect(h.exchange.stateHash()).not.toBe(priced);
    // A fresh engine without prices has the hash the engine had before index prices existed:
    // the same as a replay of the stream without its SetIndexPrice commands.
    const without = replay(h.config, h.stream.filter((c) => c.command.kind !== cmd.setIndexPrice(0, 0).kind));
    expect(without.exchange.stateHash()).toBe(unpriced);
  });

  it('reads format-4 snapshots (written before index prices) as unpriced, with the same hash', () => {
    const h = harness();
    const today = formatNineSnapshot(h.exchange, h.config.assets.length);
    expect(new DataView(today.buffer, today.byteOffset).getUint32(4, true)).toBe(9);
    // Format 4: the same words without the index price count, the account settings count (8 bytes
    // each), the (empty) borrow/lend part (24 bytes), the (empty) throttle part (8 bytes) and the
    // (empty) positions part before the end marker.
    const cut = 48 + POSITIONS_PART;
    const old = new Uint8Array(today.length - cut);
    old.set(today.subarray(0, today.length - 4 - cut));
    old.set(today.subarray(today.length - 4), today.length - 4 - cut);
    new DataView(old.buffer).setUint32(4, 4, true);
    const restored = new Exchange(h.config);
    importSnapshot(restored, old);
    restored.validateInvariants();
    expect(restored.stateHash()).toBe(h.exchange.stateHash());
    expect(isIndexStale(stateOf(restored), BASE, h.timeUs)).toBe(true);
  });

  it('refuses a snapshot whose index part names the fixed asset or a price that is not positive', () => {
    const h = harness();
    h.apply(cmd.setIndexPrice(BASE, SOL_150_25));
    const bytes = formatNineSnapshot(h.exchange, h.config.assets.length);
    // The part's tail: count (8), asset index (8), price (8), time (8), source (4), then the
    // (empty) account settings part's count (8), the (empty) borrow/lend part (24), the (empty)
    // throttle part (8), positions part and 'EXSE' (4).
    const entry = bytes.length - 4 - POSITIONS_PART - 8 - 24 - 8 - 4 - 24;
    const fixed = bytes.slice();
    new DataView(fixed.buffer).setUint32(entry, QUOTE, true);
    expect(() => importSnapshot(new Exchange(h.config), fixed)).toThrow(SnapshotFormatError);
    const zero = bytes.slice();
    new DataView(zero.buffer).setUint32(entry + 8, 0, true);
    new DataView(zero.buffer).setUint32(entry + 12, 0, true);
    expect(() => importSnapshot(new Exchange(h.config), zero)).toThrow(SnapshotFormatError);
    importSnapshot(new Exchange(h.config), bytes);
  });
});
