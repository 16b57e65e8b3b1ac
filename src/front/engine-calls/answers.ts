// The answer collectors: each turns the records the engine addresses to one request into a typed
// answer for a Reply. This file and the stream handlers are the only front code that decodes
// outbound records; routes receive plain values (an order view, balances, fee rates, a result
// value) and never see a record type, the codec or the scratch records.
//
// An order view is the reused scratch record: it is valid only while the callback that receives it
// runs, which is all a route needs to format it.

import { AccountSettingFlag, HeaderFlag, RecordType, ResultCode, type OrderRec } from '../../../engine/bus/types.js';
import { readAccountSettings, readBalance, readFeeRates, readOrder, readResult } from '../../../engine/bus/codec.js';
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
