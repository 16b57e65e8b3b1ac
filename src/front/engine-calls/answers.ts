// The answer collectors: each turns the records the engine addresses to one request into a typed
// answer for a Reply. This file and the stream handlers are the only front code that decodes
// outbound records; routes receive plain values (an order view, balances, fee rates, a result
// value, a collateral statement) and never see a record type, the codec or the scratch records.
//
// An order view is the reused scratch record: it is valid only while the callback that receives it
// runs, which is all a route needs to format it.

import { AccountSettingFlag, HeaderFlag, RecordType, ResultCode, type BorrowLendRec, type IndexPriceSource, type InsuranceRec, type LendPoolRec, type LiquidationPriceRec, type MarkPriceRec, type OpenInterestRec, type OrderRec, type PositionRec } from '../../../engine/bus/types.js';
import {
  newBorrowLendRec, newInsuranceRec, newLendPoolRec, newLiquidationPriceRec, newMarkPriceRec, newOpenInterestRec, newPositionRec, readAccountSettings, readBackstopProvider, readBalance, readBorrowLend, readCollateral, readFeeRates, readIndexPrice, readInsurance, readLendPool, readLiquidationPrice, readMarginSummary, readMarkPrice, readOpenInterest, readOrder, readPosition, readResult,
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

/** One asset's line of the account's margin summary (QueryCollateral), in the asset's units and the valuation asset's. */
export interface AssetCollateral {
  assetId: number;
  availableUnits: number;
  lockedUnits: number;
  lentUnits: number;
  borrowedUnits: number;
  /** 0 none, 1 the valuation asset, 2 a fresh index, 3 the USDC book, 4 a stale index (engine/core/margin/mark.ts). */
  markSource: number;
  /** The mark as an index price (USDC per whole unit × 10^9; sources 1, 2, 4). */
  markPriceE9: number;
  /** The mark in ticks of `marketId` (source 3). */
  marketId: number | null;
  markTicks: number;
  /** Collateral weight at 10^-12. */
  weight: bigint;
  notional: bigint;
  collateralValue: bigint;
  liability: bigint;
}

/** The account figures of its margin summary, in units of the valuation asset; fractions at 10^-12. */
export interface Collateral {
  assets: AssetCollateral[];
  assetsValue: bigint;
  liabilities: bigint;
  netEquity: bigint;
  /** Σ N·IMF of the borrows (netEquityLocked). */
  imfUnits: bigint;
  accountImf: bigint;
  accountMmf: bigint;
  /** null without exposure. */
  marginFraction: bigint | null;
  liquidating: boolean;
  /** The perpetuals: Σ unrealized PnL, unsettled equity (claims less debts), exposure notional. */
  pnlUnrealized: bigint;
  unsettledEquity: bigint;
  futuresExposure: bigint;
}

/** The CollateralRecord's market id of a line without a market. */
const NO_MARKET = 0xffff;
const WIDE_BASE = 2n ** 53n;
const wide = (high: number, low: number): bigint => BigInt(high) * WIDE_BASE + BigInt(low);

function readSummary(view: DataView, offset: number, out: Collateral): void {
  const r = scratch.marginSummary;
  readMarginSummary(view, offset, r);
  out.assetsValue = wide(r.assetsValueHigh, r.assetsValueLow);
  out.liabilities = wide(r.liabilitiesHigh, r.liabilitiesLow);
  out.netEquity = wide(r.netEquityHigh, r.netEquityLow);
  out.imfUnits = wide(r.imfUnitsHigh, r.imfUnitsLow);
  out.accountImf = BigInt(r.accountImf);
  out.accountMmf = BigInt(r.accountMmf);
  out.marginFraction = (r.summaryFlags & 1) !== 0 ? wide(r.marginFractionHigh, r.marginFractionLow) : null;
  out.liquidating = (r.summaryFlags & 2) !== 0;
  out.pnlUnrealized = wide(r.pnlUnrealizedHigh, r.pnlUnrealizedLow);
  out.unsettledEquity = wide(r.unsettledHigh, r.unsettledLow);
  out.futuresExposure = wide(r.futuresExposureHigh, r.futuresExposureLow);
}

/** QueryCollateral: one Collateral record per asset, the MarginSummary, then the Result. */
export function collateralAnswer(reply: Reply<Collateral>): PendingRequest {
  const out: Collateral = {
    assets: [], assetsValue: 0n, liabilities: 0n, netEquity: 0n, imfUnits: 0n, accountImf: 0n, accountMmf: 0n, marginFraction: null, liquidating: false,
    pnlUnrealized: 0n, unsettledEquity: 0n, futuresExposure: 0n,
  };
  return {
    onRecord(type, view, offset) {
      if (type === RecordType.Collateral) {
        const r = scratch.collateral;
        readCollateral(view, offset, r);
        out.assets.push({
          assetId: r.assetId, availableUnits: r.availableUnits, lockedUnits: r.lockedUnits, lentUnits: r.lentUnits, borrowedUnits: r.borrowedUnits,
          markSource: r.markSource, markPriceE9: r.markPriceE9, marketId: r.marketId === NO_MARKET ? null : r.marketId, markTicks: r.markTicks,
          weight: BigInt(r.weight), notional: wide(r.notionalHigh, r.notionalLow),
          collateralValue: wide(r.collateralValueHigh, r.collateralValueLow), liability: wide(r.liabilityHigh, r.liabilityLow),
        });
      } else if (type === RecordType.MarginSummary) {
        readSummary(view, offset, out);
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
/** One perpetual's mark price, index and running funding estimate (QueryMarkPrices). */
export type MarkPriceView = Readonly<MarkPriceRec>;

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

export type PositionView = Readonly<PositionRec>;

/** QueryPositions: one Position record per perpetual position, then the Result. */
export function positionsAnswer(reply: Reply<PositionView[]>): PendingRequest {
  return recordListAnswer(reply, RecordType.Position, (view, offset) => {
    const r = newPositionRec();
    readPosition(view, offset, r);
    return r;
  });
}

/** The perpetuals' open interest (QueryOpenInterest) and the engine time it was read at. */
export interface OpenInterestLines {
  lines: Readonly<OpenInterestRec>[];
  timeUs: number;
}

/** QueryOpenInterest: one OpenInterest record per perpetual, then the Result. */
export function openInterestAnswer(reply: Reply<OpenInterestLines>): PendingRequest {
  const answer: OpenInterestLines = { lines: [], timeUs: 0 };
  return {
    onRecord(type, view, offset, header) {
      if (type === RecordType.OpenInterest) {
        const r = newOpenInterestRec();
        readOpenInterest(view, offset, r);
        answer.lines.push(r);
      } else if (type === RecordType.Result) {
        readResult(view, offset, scratch.result);
        answer.timeUs = header.timeUs;
        if (scratch.result.code === ResultCode.Ok) reply.ok(answer);
        else reply.fail(resultError(scratch.result.code));
      }
    },
  };
}

/** QueryBorrowLendPositions: one BorrowLend record per position, then the Result. */
export function borrowLendPositionsAnswer(reply: Reply<BorrowLendView[]>): PendingRequest {
  return recordListAnswer(reply, RecordType.BorrowLend, (view, offset) => {
    const r = newBorrowLendRec();
    readBorrowLend(view, offset, r);
    return r;
  });
}

/** The estimated liquidation price of a position, as the engine computed it (prices ×10^9). */
export type LiquidationPriceView = Readonly<LiquidationPriceRec>;

/** QueryLiquidationPrice: one LiquidationPrice record, then the Result. */
export function liquidationPriceAnswer(reply: Reply<LiquidationPriceView>): PendingRequest {
  const answer = newLiquidationPriceRec();
  return {
    onRecord(type, view, offset) {
      if (type === RecordType.LiquidationPrice) {
        readLiquidationPrice(view, offset, answer);
      } else if (type === RecordType.Result) {
        readResult(view, offset, scratch.result);
        if (scratch.result.code === ResultCode.Ok) reply.ok(answer);
        else reply.fail(resultError(scratch.result.code));
      }
    },
  };
}

/** QueryMarkPrices: one MarkPrice record per perpetual with a mark, then the Result. */
export function markPricesAnswer(reply: Reply<MarkPriceView[]>): PendingRequest {
  return recordListAnswer(reply, RecordType.MarkPrice, (view, offset) => {
    const r = newMarkPriceRec();
    readMarkPrice(view, offset, r);
    return r;
  });
}

/** The backstop liquidity providers in the order they take positions, and the engine time of the answer. */
export interface BackstopProviders {
  providers: { accountId: number; rank: number }[];
  timeUs: number;
}

/** QueryBackstop, SetBackstopProvider and RemoveBackstopProvider: BackstopProvider records, then the Result. */
export function backstopAnswer(reply: Reply<BackstopProviders>): PendingRequest {
  const answer: BackstopProviders = { providers: [], timeUs: 0 };
  return {
    onRecord(type, view, offset, header) {
      if (type === RecordType.BackstopProvider) {
        readBackstopProvider(view, offset, scratch.backstopProvider);
        answer.providers.push({ accountId: scratch.backstopProvider.accountId, rank: scratch.backstopProvider.rank });
      } else if (type === RecordType.Result) {
        readResult(view, offset, scratch.result);
        answer.timeUs = header.timeUs;
        if (scratch.result.code === ResultCode.Ok) reply.ok(answer);
        else reply.fail(resultError(scratch.result.code));
      }
    },
  };
}

/** One asset's insurance fund lines as the engine reports them (units of the asset). */
export type InsuranceLine = Readonly<InsuranceRec>;

/** Insurance lines (one per asset of QueryInsurance, the deposited asset's of DepositInsurance) and the Result's value and engine time. */
export interface InsuranceLines {
  lines: InsuranceLine[];
  /** The Result's value: the number of assets (query), or the fund's units after a deposit. */
  value: number;
  timeUs: number;
}

/** QueryInsurance and DepositInsurance: Insurance records (each copied), then the Result. */
export function insuranceAnswer(reply: Reply<InsuranceLines>): PendingRequest {
  const answer: InsuranceLines = { lines: [], value: 0, timeUs: 0 };
  return {
    onRecord(type, view, offset, header) {
      if (type === RecordType.Insurance) {
        const r = newInsuranceRec();
        readInsurance(view, offset, r);
        answer.lines.push(r);
      } else if (type === RecordType.Result) {
        readResult(view, offset, scratch.result);
        answer.value = scratch.result.value;
        answer.timeUs = header.timeUs;
        if (scratch.result.code === ResultCode.Ok) reply.ok(answer);
        else reply.fail(resultError(scratch.result.code));
      }
    },
  };
}
