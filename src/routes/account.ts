// Account endpoints (§3.2): GET/PATCH /api/v1/account (accountQuery, accountUpdate),
// GET /api/v1/capital/collateral (collateralQuery), GET /api/v1/account/limits/order
// (maxOrderQuantity), GET /api/v1/account/limits/withdrawal (maxWithdrawalQuantity) and
// POST /api/v1/account/convertDust (convertDust).
//
// Live balances come from the engine (QueryBalances, in order with the account's own commands);
// mark prices are each market's last trade price, kept in LMDB by the history sink; settings
// come from the settings store. Every value is computed in integers (bigint where a product of a
// balance and a price could pass 2^53) and formatted at the quote asset's decimals.
//
// Choices where the spec is silent:
// - Fees: spotMakerFee / spotTakerFee are the account's own rates in basis points, read from the
//   engine (QueryFeeRates: the configured defaults until the operator sets others). The futures
//   fields show the same rates: they are the account's, for fills in any market (there are no
//   futures markets yet), and the official Rust client requires them as decimals, not null.
//   borrowLimit and positionLimit are "0":
//   nothing can be borrowed and there are no positions. limitOrders is the open-order limit per
//   account; triggerOrders 0 (no trigger orders yet).
// - Collateral: spot only, every asset weighted 1 (no haircuts configured), valued at the last
//   trade price of its <ASSET>_USDC market (USDC at 1); an asset whose market has not traded is
//   valued at 0 (assetMarkPrice "0"). There are no liabilities, so marginFraction is null.
// - Max order quantity: an ask can sell its available base; a limit bid can buy what its
//   available quote pays at the price; a market bid (no price) what its available quote buys by
//   walking the current asks. Rounded down to whole lots and capped at the market's maximum.
// - Dust (spec: balance below the minimum tradable quantity, not USDC, 95% of the mark price
//   rounded down): converted through the <ASSET>_USDC market, one engine command per asset,
//   answered with an empty 200 once all are done; each conversion is in /wapi/v1/history/dust.

import { CommandKind, RecordType, ResultCode, Side } from '../../engine/bus/types.js';
import { readBalance, readResult } from '../../engine/bus/codec.js';
import { queryFeeRates, type FeeRates } from '../front/fee-rates.js';
import { Errors, resultError, type ApiError } from '../errors.js';
import { sendError, sendJson, type RequestContext, type Route } from '../front/http.js';
import { callEngine, scratch, type FrontContext } from '../front/context.js';
import { DEFAULT_SETTINGS, type AccountSettings } from '../front/account-settings.js';
import { parsePriceTicks } from '../wire/market-codec.js';
import { formatDecimal, formatDecimalBig, parseDecimal } from '../decimal.js';
import type { MarketInfo } from '../config.js';
import { DUST_PAYOUT_SYMBOL } from './history.js';

/** [available, locked] units by asset id. */
export type Balances = Array<[number, number]>;

/** Reads the account's balances from the engine, then calls `then` (or answers the error). */
export function withBalances(front: FrontContext, ctx: RequestContext, accountId: number, then: (balances: Balances) => void): void {
  const balances: Balances = front.config.assets.map(() => [0, 0]);
  callEngine(front, ctx, (cmd) => {
    cmd.kind = CommandKind.QueryBalances;
    cmd.accountId = accountId;
  }, {
    onRecord(type, view, offset) {
      if (type === RecordType.Balance) {
        readBalance(view, offset, scratch.balance);
        balances[scratch.balance.assetId] = [scratch.balance.availableUnits, scratch.balance.lockedUnits];
      } else if (type === RecordType.Result) {
        readResult(view, offset, scratch.result);
        if (scratch.result.code === ResultCode.Ok) then(balances);
        else sendError(ctx, resultError(scratch.result.code));
      }
    },
  });
}

function boolParam(query: URLSearchParams, name: string): boolean | undefined | ApiError {
  const text = query.get(name);
  if (text === null) return undefined;
  if (text !== 'true' && text !== 'false') return Errors.invalid(`${name} must be true or false`);
  return text === 'true';
}

function isApiError(value: unknown): value is ApiError {
  return typeof value === 'object' && value !== null && 'code' in value && 'status' in value;
}

/** The <ASSET>_USDC market of an asset, the one dust converts and collateral values through. */
export function usdcMarketOf(front: FrontContext, assetId: number): MarketInfo | undefined {
  return front.config.markets.find((m) => m.spec.baseAssetId === assetId && m.quoteSymbol === DUST_PAYOUT_SYMBOL);
}

/** Value of `units` of an asset in USDC units at the market's last price: exact, rounded down. */
function usdcValue(market: MarketInfo, units: number, priceTicks: number): bigint {
  return (BigInt(units) * BigInt(priceTicks) * BigInt(market.spec.quoteUnitsPerTickLot)) / BigInt(market.spec.baseUnitsPerLot);
}

export function accountJson(front: FrontContext, settings: AccountSettings, fees: FeeRates): Record<string, unknown> {
  const engine = front.config.engine;
  return {
    autoBorrowSettlements: settings.autoBorrowSettlements,
    autoLend: settings.autoLend,
    autoRealizePnl: false,
    autoRepayBorrows: settings.autoRepayBorrows,
    borrowLimit: '0',
    futuresMakerFee: String(fees.makerFeeBps),
    futuresTakerFee: String(fees.takerFeeBps),
    leverageLimit: settings.leverageLimit,
    limitOrders: engine.limits.maxOpenOrdersPerAccount,
    liquidating: false,
    positionLimit: '0',
    spotMakerFee: String(fees.makerFeeBps),
    spotTakerFee: String(fees.takerFeeBps),
    triggerOrders: 0,
  };
}

/** PATCH body → the settings to change, or the error. Pure. */
export function parseSettingsUpdate(body: Record<string, unknown>): Partial<AccountSettings> | ApiError {
  const update: Partial<AccountSettings> = {};
  for (const key of ['autoBorrowSettlements', 'autoLend', 'autoRepayBorrows'] as const) {
    const value = body[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'boolean') return Errors.invalid(`${key} must be a boolean`);
    update[key] = value;
  }
  const leverage = body.leverageLimit;
  if (leverage !== undefined && leverage !== null) {
    const text = typeof leverage === 'string' ? leverage : typeof leverage === 'number' ? String(leverage) : null;
    const hundredths = text === null ? -1 : parseDecimal(text, 2);
    if (hundredths < 100 || hundredths > 10_000) return Errors.invalid('leverageLimit must be a decimal string from 1 to 100 with at most 2 decimals');
    update.leverageLimit = formatDecimal(hundredths, 2);
  }
  return update;
}

export function accountRoutes(front: FrontContext): Route[] {
  const quoteAsset = front.config.assets.findIndex((a) => a.symbol === DUST_PAYOUT_SYMBOL);
  return [
    {
      method: 'get',
      path: '/api/v1/account',
      instruction: 'accountQuery',
      handle: (ctx, input) => queryFeeRates(front, ctx, input.accountId, (fees) => {
        sendJson(ctx, 200, JSON.stringify(accountJson(front, front.settings.settings(input.accountId), fees)));
      }),
    },
    {
      method: 'patch',
      path: '/api/v1/account',
      instruction: 'accountUpdate',
      handle: (ctx, input) => {
        const update = parseSettingsUpdate((input.body ?? {}) as Record<string, unknown>);
        if (isApiError(update)) return sendError(ctx, update);
        front.settings.updateSettings(input.accountId, update)
          .then((settings) => sendJson(ctx, 200, JSON.stringify({ ...DEFAULT_SETTINGS, ...settings })))
          .catch((error: unknown) => {
            front.log.error({ err: error }, 'settings update failed');
            sendError(ctx, { status: 500, code: 'SERVER_ERROR', message: 'Could not store the settings' });
          });
      },
    },
    {
      method: 'get',
      path: '/api/v1/capital/collateral',
      instruction: 'collateralQuery',
      handle: (ctx, input) => {
        if (input.query.get('subaccountId') !== null) return sendError(ctx, Errors.invalid('This account has no subaccounts'));
        withBalances(front, ctx, input.accountId, (balances) => sendJson(ctx, 200, JSON.stringify(collateralJson(front, balances, quoteAsset))));
      },
    },
    {
      method: 'get',
      path: '/api/v1/account/limits/withdrawal',
      instruction: 'maxWithdrawalQuantity',
      handle: (ctx, input) => {
        const symbol = input.query.get('symbol');
        if (symbol === null) return sendError(ctx, Errors.invalid('symbol is required'));
        const asset = front.assetsBySymbol.get(symbol);
        if (!asset) return sendError(ctx, Errors.invalidAsset(symbol.slice(0, 20)));
        const autoBorrow = boolParam(input.query, 'autoBorrow');
        const autoLendRedeem = boolParam(input.query, 'autoLendRedeem');
        for (const value of [autoBorrow, autoLendRedeem]) if (isApiError(value)) return sendError(ctx, value);
        if (autoBorrow === true) return sendError(ctx, Errors.notImplemented('autoBorrow'));
        if (autoLendRedeem === true) return sendError(ctx, Errors.notImplemented('autoLendRedeem'));
        const assetId = front.config.assets.indexOf(asset);
        withBalances(front, ctx, input.accountId, (balances) => sendJson(ctx, 200, JSON.stringify({
          autoBorrow: autoBorrow ?? null, autoLendRedeem: autoLendRedeem ?? null,
          maxWithdrawalQuantity: formatDecimal(balances[assetId][0], asset.decimals), symbol,
        })));
      },
    },
    {
      method: 'get',
      path: '/api/v1/account/limits/order',
      instruction: 'maxOrderQuantity',
      handle: (ctx, input) => {
        const q = input.query;
        const symbol = q.get('symbol');
        if (symbol === null) return sendError(ctx, Errors.invalid('symbol is required'));
        const market = front.marketsBySymbol.get(symbol);
        if (!market) return sendError(ctx, Errors.invalidMarket(symbol.slice(0, 40)));
        const sideText = q.get('side');
        if (sideText !== 'Bid' && sideText !== 'Ask') return sendError(ctx, Errors.invalid('side must be Bid or Ask'));
        let priceTicks = 0;
        const priceText = q.get('price');
        if (priceText !== null) {
          const parsed = parsePriceTicks(market, priceText);
          if (typeof parsed !== 'number') return sendError(ctx, parsed);
          priceTicks = parsed;
        }
        const flags: Record<string, boolean | undefined> = {};
        for (const name of ['reduceOnly', 'autoBorrow', 'autoBorrowRepay', 'autoLendRedeem']) {
          const value = boolParam(q, name);
          if (isApiError(value)) return sendError(ctx, value);
          if (value === true) return sendError(ctx, Errors.notImplemented(name));
          flags[name] = value;
        }
        const side = sideText === 'Bid' ? Side.Bid : Side.Ask;
        withBalances(front, ctx, input.accountId, (balances) => {
          const lots = maxOrderLots(front, market, side, priceTicks, balances);
          sendJson(ctx, 200, JSON.stringify({
            autoBorrow: flags.autoBorrow ?? null, autoBorrowRepay: flags.autoBorrowRepay ?? null, autoLendRedeem: flags.autoLendRedeem ?? null,
            maxOrderQuantity: formatDecimal(lots * market.stepUnits, market.quantityDecimals),
            price: priceText, reduceOnly: flags.reduceOnly ?? null, side: sideText, symbol,
          }));
        });
      },
    },
    {
      method: 'post',
      path: '/api/v1/account/convertDust',
      instruction: 'convertDust',
      handle: (ctx, input) => {
        const body = (input.body ?? {}) as Record<string, unknown>;
        let only: number | undefined;
        if (body.symbol !== undefined && body.symbol !== null) {
          if (typeof body.symbol !== 'string') return sendError(ctx, Errors.invalid('symbol must be an asset symbol'));
          const asset = front.assetsBySymbol.get(body.symbol);
          if (!asset) return sendError(ctx, Errors.invalidAsset(body.symbol.slice(0, 20)));
          if (asset.symbol === DUST_PAYOUT_SYMBOL) return sendError(ctx, Errors.preconditionFailed(`${DUST_PAYOUT_SYMBOL} cannot be converted to itself`));
          only = front.config.assets.indexOf(asset);
          if (!usdcMarketOf(front, only)) return sendError(ctx, Errors.preconditionFailed(`${asset.symbol} has no ${DUST_PAYOUT_SYMBOL} market to value it`));
        }
        withBalances(front, ctx, input.accountId, (balances) => convertDust(front, ctx, input.accountId, balances, only));
      },
    },
  ];
}

/** Whole lots the account could order now (see the header); 0 when it can afford none. */
export function maxOrderLots(front: FrontContext, market: MarketInfo, side: Side, priceTicks: number, balances: Balances): number {
  const spec = market.spec;
  let lots: number;
  if (side === Side.Ask) {
    lots = Math.floor(balances[spec.baseAssetId][0] / spec.baseUnitsPerLot);
  } else if (priceTicks > 0) {
    lots = Number(BigInt(balances[spec.quoteAssetId][0]) / (BigInt(priceTicks) * BigInt(spec.quoteUnitsPerTickLot)));
  } else {
    let budget = BigInt(balances[spec.quoteAssetId][0]);
    lots = 0;
    for (const [askTicks, askLots] of front.data.books[spec.marketId].levels(Side.Ask, 1000)) {
      const lotCost = BigInt(askTicks) * BigInt(spec.quoteUnitsPerTickLot);
      const affordable = Number(budget / lotCost);
      const take = Math.min(affordable, askLots);
      lots += take;
      budget -= BigInt(take) * lotCost;
      if (take < askLots) break;
    }
  }
  return Math.min(lots, spec.maxQtyLots);
}

function collateralJson(front: FrontContext, balances: Balances, quoteAsset: number): Record<string, unknown> {
  const quoteDecimals = quoteAsset >= 0 ? front.config.assets[quoteAsset].decimals : 0;
  const money = (units: bigint) => formatDecimalBig(units, quoteDecimals);
  let assetsValue = 0n;
  let availableValue = 0n;
  let lockedValue = 0n;
  const collateral = front.config.assets.map((asset, assetId) => {
    const [available, locked] = balances[assetId];
    let markText = '0';
    let value = (units: number) => 0n * BigInt(units);
    if (assetId === quoteAsset) {
      markText = '1';
      value = (units) => BigInt(units);
    } else {
      const market = usdcMarketOf(front, assetId);
      const lastTicks = market ? front.accountHistory.lastPriceTicks(market.spec.marketId) : 0;
      if (market && lastTicks > 0) {
        markText = formatDecimal(lastTicks * market.tickUnits, market.priceDecimals);
        value = (units) => usdcValue(market, units, lastTicks);
      }
    }
    const total = value(available + locked);
    assetsValue += total;
    availableValue += value(available);
    lockedValue += total - value(available);
    return {
      symbol: asset.symbol,
      assetMarkPrice: markText,
      totalQuantity: formatDecimal(available + locked, asset.decimals),
      balanceNotional: money(total),
      collateralWeight: '1',
      collateralValue: money(total),
      openOrderQuantity: formatDecimal(locked, asset.decimals),
      lendQuantity: '0',
      availableQuantity: formatDecimal(available, asset.decimals),
    };
  });
  return {
    assetsValue: money(assetsValue),
    borrowLiability: '0',
    collateral,
    imf: '0',
    unsettledEquity: '0',
    liabilitiesValue: '0',
    marginFraction: null,
    mmf: '0',
    netEquity: money(assetsValue),
    netEquityAvailable: money(availableValue),
    netEquityLocked: money(lockedValue),
    netExposureFutures: '0',
    pnlUnrealized: '0',
  };
}

/** Submits one ConvertDust per eligible asset, one after another; answers when all are done. */
function convertDust(front: FrontContext, ctx: RequestContext, accountId: number, balances: Balances, only: number | undefined): void {
  const jobs: Array<{ market: MarketInfo; units: number }> = [];
  for (let assetId = 0; assetId < balances.length; assetId++) {
    if (only !== undefined && assetId !== only) continue;
    const market = usdcMarketOf(front, assetId);
    if (!market) continue;
    const [available, locked] = balances[assetId];
    const eligible = available > 0 && locked === 0 && available < market.spec.minQtyLots * market.spec.baseUnitsPerLot;
    if (eligible || only !== undefined) jobs.push({ market, units: available });
  }
  if (jobs.length === 0) return sendError(ctx, Errors.preconditionFailed('No dust balances to convert'));
  const next = (index: number): void => {
    if (index === jobs.length) return sendJson(ctx, 200, '');
    const job = jobs[index];
    callEngine(front, ctx, (cmd) => {
      cmd.kind = CommandKind.ConvertDust;
      cmd.accountId = accountId;
      cmd.marketId = job.market.spec.marketId;
      cmd.amountUnits = job.units;
    }, {
      onRecord(type, view, offset) {
        if (type !== RecordType.Result) return;
        readResult(view, offset, scratch.result);
        if (scratch.result.code !== ResultCode.Ok) return sendError(ctx, resultError(scratch.result.code));
        next(index + 1);
      },
    });
  };
  next(0);
}
