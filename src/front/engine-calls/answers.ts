// The answer collectors: each turns the records the engine addresses to one request into a typed
// answer for a Reply. This file and the stream handlers are the only front code that decodes
// outbound records; routes receive plain values (an order view, balances, fee rates, a result
// value, a collateral statement) and never see a record type, the codec or the scratch records.
//
// An order view is the reused scratch record: it is valid only while the callback that receives it
// runs, which is all a route needs to format it.

import { AccountSettingFlag, HeaderFlag, RecordType, ResultCode, type BorrowLendRec, type IndexPriceSource, type LendPoolRec, type OrderRec } from '../../../engine/bus/types.js';
import {
  newBorrowLendRec, newLendPoolRec, readAccountSettings, readBalance, readBorrowLend, readCollateral, readFeeRates, readIndexPrice, readLendPool, readOrder, readResult,
} from '../../../engine/bus/codec.js';
import { resultError, type ApiError } from '../../errors.js';
import { scratch } from '../context.js';
import type { PendingRequest } from '../engine-link.js';

/** Where a call's answer goes: its value, or the error the client should see. */
export interface Reply<T> {
  ok(value: T): void;
  fail(error: ApiError): void;
  /** Called once the command is in the engine's ring (the request's acknowledgement latency counts from there). */
  submitted?(): void;
}

/** One order as the engine reports it; valid only during the callback that receives it. */
export type OrderView = Readonly<OrderRec>;

/** [available, locked] units by asset id, every configured asset present. */
export type Balances = Array<[number, number]>;

export interface FeeRates {
  accountId: number;
  makerFeeBps: number;
  takerFeeBps: number;
}

/** One account's margin settings as the engine keeps them (engine/core/margin/account-settings.ts). */
export interface AccountSettingsView {
  autoBorrowSettlements: boolean;
  autoLend: boolean;
  autoRepayBorrows: boolean;
  /** Hundredths: 100 is 1×. */
  leverageLimitHundredths: number;
  liquidating: boolean;
}

/** The result of a command answered by a Result record alone. */
export interface Accepted {
  /** The command's result value (a new id, a count, a snapshot sequence). */
  value: number;
  /** Engine time of the command, in microseconds. */
  timeUs: number;
}

/** A command answered by one Result: ok with its value, or the engine's error. */
export function resultAnswer(reply: Reply<Accepted>): PendingRequest {
  return {
    onRecord(type, view, offset, header) {
      if (type !== RecordType.Result) return;
      readResult(view, offset, scratch.result);
      if (scratch.result.code === ResultCode.Ok) reply.ok({ value: scratch.result.value, timeUs: header.timeUs });
      else reply.fail(resultError(scratch.result.code));
    },
  };
}

/**
 * A command answered by Order records, the last one flagged Last, or by a Result when refused.
 * `unknownOrder` replaces the generic error of UnknownOrder where a call reports it otherwise.
 */
export function orderAnswer(reply: Reply<OrderView>, unknownOrder?: ApiError): PendingRequest {
  return {
    onRecord(type, view, offset, header) {
      if (type === RecordType.Order && (header.flags & HeaderFlag.Last) !== 0) {
        readOrder(view, offset, scratch.order);
        reply.ok(scratch.order);
      } else if (type === RecordType.Result) {
        readResult(view, offset, scratch.result);
        const code = scratch.result.code;
        reply.fail(code === ResultCode.UnknownOrder && unknownOrder ? unknownOrder : resultError(code));
      }
    },
  };
}

/** A command answered by any number of Order records and a closing Result (its value a count). */
export function orderListAnswer(reply: Reply<number>, onOrder: (order: OrderView) => void): PendingRequest {
  return {
    onRecord(type, view, offset) {
      if (type === RecordType.Order) {
        readOrder(view, offset, scratch.order);
        onOrder(scratch.order);
      } else if (type === RecordType.Result) {
        readResult(view, offset, scratch.result);
        if (scratch.result.code === ResultCode.Ok) reply.ok(scratch.result.value);
        else reply.fail(resultError(scratch.result.code));
      }
    },
  };
}

/** QueryBalances: one Balance record per asset, then the Result. */
export function balancesAnswer(reply: Reply<Balances>, assetCount: number): PendingRequest {
  const balances: Balances = Array.from({ length: assetCount }, () => [0, 0]);
  return {
    onRecord(type, view, offset) {
      if (type === RecordType.Balance) {
        readBalance(view, offset, scratch.balance);
        balances[scratch.balance.assetId] = [scratch.balance.availableUnits, scratch.balance.lockedUnits];
      } else if (type === RecordType.Result) {
        readResult(view, offset, scratch.result);
        if (scratch.result.code === ResultCode.Ok) reply.ok(balances);
        else reply.fail(resultError(scratch.result.code));
      }
    },
  };
}

/** QueryFeeRates and SetFeeRates: a FeeRates record, or a refusing Result. */
export function feeRatesAnswer(reply: Reply<FeeRates>): PendingRequest {
  return {
    onRecord(type, view, offset) {
      if (type === RecordType.FeeRates) {
        readFeeRates(view, offset, scratch.feeRates);
        const { accountId, makerFeeBps, takerFeeBps } = scratch.feeRates;
        reply.ok({ accountId, makerFeeBps, takerFeeBps });
      } else if (type === RecordType.Result) {
        readResult(view, offset, scratch.result);
        if (scratch.result.code !== ResultCode.Ok) reply.fail(resultError(scratch.result.code));
      }
    },
  };
}

/** One asset's line of the engine's collateral answer (QueryCollateral), in the asset's units and the valuation asset's. */
export interface AssetCollateral {
  assetId: number;
  availableUnits: number;
  lockedUnits: number;
  /** The market whose ticks `markTicks` counts in; null for the valuation asset (valued at 1) and an asset without a market. */
  marketId: number | null;
  /** The mark price (the market's guarded reference price); 0 when there is none yet (valued at 0). */
  markTicks: number;
  /** Value of available + locked, and of available alone, rounded down. */
  totalValue: bigint;
  availableValue: bigint;
}

export interface Collateral {
  assets: AssetCollateral[];
  assetsValue: bigint;
  availableValue: bigint;
  lockedValue: bigint;
}

/** The CollateralRecord's market id of a line without a market. */
const NO_MARKET = 0xffff;
const WIDE_BASE = 2n ** 53n;

/** QueryCollateral: one Collateral record per asset, then the Result; the totals are their sums. */
export function collateralAnswer(reply: Reply<Collateral>): PendingRequest {
  const out: Collateral = { assets: [], assetsValue: 0n, availableValue: 0n, lockedValue: 0n };
  return {
    onRecord(type, view, offset) {
      if (type === RecordType.Collateral) {
        const r = scratch.collateral;
        readCollateral(view, offset, r);
        const totalValue = BigInt(r.totalValueHigh) * WIDE_BASE + BigInt(r.totalValueLow);
        const availableValue = BigInt(r.availableValueHigh) * WIDE_BASE + BigInt(r.availableValueLow);
        out.assets.push({
          assetId: r.assetId, availableUnits: r.availableUnits, lockedUnits: r.lockedUnits,
          marketId: r.marketId === NO_MARKET ? null : r.marketId, markTicks: r.markTicks, totalValue, availableValue,
        });
        out.assetsValue += totalValue;
        out.availableValue += availableValue;
        out.lockedValue += totalValue - availableValue;
      } else if (type === RecordType.Result) {
        readResult(view, offset, scratch.result);
        if (scratch.result.code === ResultCode.Ok) reply.ok(out);
        else reply.fail(resultError(scratch.result.code));
      }
    },
  };
}

/** One asset's index price as the engine reports it (priceE9: USDC per whole unit × 10^9, 0: none). */
export interface IndexPriceRow {
  assetId: number;
  priceE9: number;
  /** Engine time of its last update (0: never). */
  updatedUs: number;
  source: IndexPriceSource;
  stale: boolean;
}

/** Every asset's index price, with the engine time the query was answered at. */
export interface IndexPrices {
  timeUs: number;
  rows: IndexPriceRow[];
}

/** QueryIndexPrices: one IndexPrice record per asset, then the Result. */
export function indexPricesAnswer(reply: Reply<IndexPrices>): PendingRequest {
  const answer: IndexPrices = { timeUs: 0, rows: [] };
  return {
    onRecord(type, view, offset, header) {
      if (type === RecordType.IndexPrice) {
        readIndexPrice(view, offset, scratch.indexPrice);
        const { assetId, priceE9, updatedUs, source, stale } = scratch.indexPrice;
        answer.rows.push({ assetId, priceE9, updatedUs, source, stale });
      } else if (type === RecordType.Result) {
        readResult(view, offset, scratch.result);
        answer.timeUs = header.timeUs;
        if (scratch.result.code === ResultCode.Ok) reply.ok(answer);
        else reply.fail(resultError(scratch.result.code));
      }
    },
  };
}

/** One borrow/lend pool as the engine reports it (totals, rates and utilization at 10^-12). */
export type LendPoolView = Readonly<LendPoolRec>;
/** One borrow/lend position, move or interest payment as the engine reports it. */
export type BorrowLendView = Readonly<BorrowLendRec>;

/** A query answered by records of one type (each copied) and a closing Result. */
function recordListAnswer<T>(reply: Reply<T[]>, recordType: RecordType, read: (view: DataView, offset: number) => T): PendingRequest {
  const out: T[] = [];
  return {
    onRecord(type, view, offset) {
      if (type === recordType) {
        out.push(read(view, offset));
      } else if (type === RecordType.Result) {
        readResult(view, offset, scratch.result);
        if (scratch.result.code === ResultCode.Ok) reply.ok(out);
        else reply.fail(resultError(scratch.result.code));
      }
    },
  };
}

/**
 * QueryAccountSettings and UpdateAccountSettings: an AccountSettings record, or a refusing Result
 * (UpdateAccountSettings closes an accepted answer with an Ok Result, which adds nothing).
 */
export function accountSettingsAnswer(reply: Reply<AccountSettingsView>): PendingRequest {
  return {
    onRecord(type, view, offset) {
      if (type === RecordType.AccountSettings) {
        readAccountSettings(view, offset, scratch.accountSettings);
        const { settings, leverageLimitHundredths } = scratch.accountSettings;
        reply.ok({
          autoBorrowSettlements: (settings & AccountSettingFlag.AutoBorrowSettlements) !== 0,
          autoLend: (settings & AccountSettingFlag.AutoLend) !== 0,
          autoRepayBorrows: (settings & AccountSettingFlag.AutoRepayBorrows) !== 0,
          leverageLimitHundredths,
          liquidating: (settings & AccountSettingFlag.Liquidating) !== 0,
        });
      } else if (type === RecordType.Result) {
        readResult(view, offset, scratch.result);
        if (scratch.result.code !== ResultCode.Ok) reply.fail(resultError(scratch.result.code));
      }
    },
  };
}

/** QueryLendPools: one LendPool record per pool, then the Result. */
export function lendPoolsAnswer(reply: Reply<LendPoolView[]>): PendingRequest {
  return recordListAnswer(reply, RecordType.LendPool, (view, offset) => {
    const r = newLendPoolRec();
    readLendPool(view, offset, r);
    return r;
  });
}

/** QueryBorrowLendPositions: one BorrowLend record per position, then the Result. */
export function borrowLendPositionsAnswer(reply: Reply<BorrowLendView[]>): PendingRequest {
  return recordListAnswer(reply, RecordType.BorrowLend, (view, offset) => {
    const r = newBorrowLendRec();
    readBorrowLend(view, offset, r);
    return r;
  });
}
