// Account endpoints (§3.2): GET/PATCH /api/v1/account (accountQuery, accountUpdate),
// GET /api/v1/capital/collateral (collateralQuery), GET /api/v1/account/limits/borrow
// (maxBorrowQuantity), GET /api/v1/account/limits/order (maxOrderQuantity), GET
// /api/v1/account/limits/withdrawal (maxWithdrawalQuantity) and POST /api/v1/account/convertDust
// (convertDust). The three limits are the engine's exact answers (engine/core/margin/auto-funding.ts:
// the largest quantity that passes the pool limits and the margin test, with the spot margin
// flags autoBorrow, autoLendRedeem, autoBorrowRepay as the query names them; reduceOnly is
// NOT_IMPLEMENTED until there are perpetuals).
//
// Live balances, fee rates, the account's settings and the risk figures (collateral, maximum
// order quantity, dust conversion) are the engine's answers (engine/core/funds/risk.ts,
// engine/core/margin/account-settings.ts), through the engine calls (src/front/engine-calls/).
// This file only validates and formats, at the quote asset's decimals.
//
// Settings (margin: engine/core/margin/account-settings.ts): PATCH sends one journaled
// UpdateAccountSettings and answers, once it is durable, with the four settings as the engine
// now holds them (the echo the API spec names); a body naming none reads them instead. GET reads
// them with a query that passes through the engine in order after the account's own commands, so
// a GET after an acknowledged PATCH always shows it, on any front thread (a read model fed by
// events could lag behind the acknowledgement on another thread). leverageLimit is a decimal
// string from 1 to the platform's maximum (maxLeverage, default 100) with at most 2 decimals;
// the engine checks the range again and refuses a lower limit than the account's exposure
// already uses with MAX_LEVERAGE_REACHED. liquidating is the engine's flag of the account.
//
// Choices where the spec is silent:
// - Fees: spotMakerFee / spotTakerFee are the account's own rates in basis points, read from the
//   engine (QueryFeeRates: the configured defaults until the operator sets others). The futures
//   fields show the same rates: they are the account's, for fills in any market (there are no
//   futures markets yet), and the official Rust client requires them as decimals, not null.
//   borrowLimit is "0". positionLimit is every account's position limit on perpetuals in USDC
//   notional (the configuration's positionLimit, engine/core/perp/position-limit.ts); "0" when
//   no perpetual is configured (there is no position to limit). limitOrders is the open-order limit per
//   account; triggerOrders 0 (no trigger orders yet).
// - Collateral: spot only, valued at mark as the venue does (never at the last trade): the
//   engine's guarded reference price of the asset's USDC market; an asset whose market has none
//   yet (never traded) shows assetMarkPrice "0". There are no liabilities, so marginFraction is null.
// - Dust (spec: balance below the minimum tradable quantity, not USDC, 95% of the mark price
//   rounded down): one engine command converts every dust balance (or the one asset named), all
//   or none; answered with an empty 200; each conversion is in /wapi/v1/history/dust.

import { Errors, type ApiError } from '../errors.js';
import { sendError, sendJson, type Route } from '../front/http.js';
import type { FrontContext } from '../front/context.js';
import type { MarketInfo } from '../config.js';
import {
  DUST_PAYOUT_SYMBOL, engineCalls, replyTo, usdcMarketOf, type AccountSettingsUpdate, type AccountSettingsView, type AssetCollateral, type Collateral, type FeeRates,
} from '../front/engine-calls/index.js';
import { CommandFlag, DEFAULT_MAX_LEVERAGE_HUNDREDTHS } from '../../engine/bus/types.js';
import { MARGIN_FRACTION_DECIMALS } from '../../engine/bus/margin-params.js';
import { INDEX_PRICE_DECIMALS } from '../front/index-default.js';
import { parsePriceTicks } from '../wire/market-codec.js';
import { SIDE } from '../wire/enums.js';
import { formatDecimal, formatDecimalBig, parseDecimal } from '../decimal.js';

function boolParam(query: URLSearchParams, name: string): boolean | undefined | ApiError {
  const text = query.get(name);
  if (text === null) return undefined;
  if (text !== 'true' && text !== 'false') return Errors.invalid(`${name} must be true or false`);
  return text === 'true';
}

function isApiError(value: unknown): value is ApiError {
  return typeof value === 'object' && value !== null && 'code' in value && 'status' in value;
}

/** The four settings PATCH answers with, in wire form. */
export function settingsJson(settings: AccountSettingsView): Record<string, unknown> {
  return {
    autoBorrowSettlements: settings.autoBorrowSettlements,
    autoLend: settings.autoLend,
    autoRepayBorrows: settings.autoRepayBorrows,
    leverageLimit: formatDecimal(settings.leverageLimitHundredths, 2),
  };
}

export function accountJson(front: FrontContext, settings: AccountSettingsView, fees: FeeRates): Record<string, unknown> {
  const engine = front.config.engine;
  // Futures fees are the configuration's (futuresMakerFeeBps / futuresTakerFeeBps, every perpetual
  // the same); without perpetuals the account's own rates stand in, as before.
  const futures = engine.markets.find((m) => m.perp !== undefined)?.perp ?? fees;
  return {
    autoBorrowSettlements: settings.autoBorrowSettlements,
    autoLend: settings.autoLend,
    // Perpetual PnL is realized at mark on an interval (realizePnlIntervalMs), for every account alike.
    autoRealizePnl: engine.realizePnlIntervalUs !== undefined,
    autoRepayBorrows: settings.autoRepayBorrows,
    borrowLimit: '0',
    futuresMakerFee: String(futures.makerFeeBps),
    futuresTakerFee: String(futures.takerFeeBps),
    leverageLimit: formatDecimal(settings.leverageLimitHundredths, 2),
    limitOrders: engine.limits.maxOpenOrdersPerAccount,
    liquidating: settings.liquidating,
    positionLimit: positionLimitText(front),
    spotMakerFee: String(fees.makerFeeBps),
    spotTakerFee: String(fees.takerFeeBps),
    triggerOrders: 0,
  };
}

/** The configured position limit in USDC ("0" without perpetuals, where the engine has none). */
function positionLimitText(front: FrontContext): string {
  const units = front.config.engine.positionLimitUnits;
  const usdc = front.config.assets.find((a) => a.symbol === 'USDC');
  return units === undefined || usdc === undefined ? '0' : formatDecimal(units, usdc.decimals);
}

/** PATCH body → the settings to change, or the error; `maxLeverageHundredths` is the platform's maximum. Pure. */
export function parseSettingsUpdate(body: Record<string, unknown>, maxLeverageHundredths = DEFAULT_MAX_LEVERAGE_HUNDREDTHS): AccountSettingsUpdate | ApiError {
  const update: AccountSettingsUpdate = {};
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
    if (hundredths < 100 || hundredths > maxLeverageHundredths) {
      return Errors.invalid(`leverageLimit must be a decimal string from 1 to ${formatDecimal(maxLeverageHundredths, 2)} with at most 2 decimals`);
    }
    update.leverageLimitHundredths = hundredths;
  }
  return update;
}

export function accountRoutes(front: FrontContext): Route[] {
  const engine = engineCalls(front);
  return [
    {
      method: 'get',
      path: '/api/v1/account',
      instruction: 'accountQuery',
      handle: (ctx, input) => engine.queryFeeRates(replyTo(ctx, (fees) => {
        engine.queryAccountSettings(replyTo(ctx, (settings) => sendJson(ctx, 200, JSON.stringify(accountJson(front, settings, fees)))), { accountId: input.accountId });
      }), { accountId: input.accountId }),
    },
    {
      method: 'patch',
      path: '/api/v1/account',
      instruction: 'accountUpdate',
      handle: (ctx, input) => {
        const update = parseSettingsUpdate((input.body ?? {}) as Record<string, unknown>, front.config.engine.maxLeverageHundredths);
        if (isApiError(update)) return sendError(ctx, update);
        const answer = replyTo(ctx, (settings: AccountSettingsView) => sendJson(ctx, 200, JSON.stringify(settingsJson(settings))));
        // A body that names no setting changes nothing: it reads them, without a journal record.
        if (Object.keys(update).length === 0) engine.queryAccountSettings(answer, { accountId: input.accountId });
        else engine.updateSettings(answer, input.accountId, update);
      },
    },
    {
      method: 'get',
      path: '/api/v1/capital/collateral',
      instruction: 'collateralQuery',
      handle: (ctx, input) => {
        if (input.query.get('subaccountId') !== null) return sendError(ctx, Errors.invalid('This account has no subaccounts'));
        engine.collateral(replyTo(ctx, (collateral) => sendJson(ctx, 200, JSON.stringify(collateralJson(front, collateral)))), input.accountId);
      },
    },
    ...limitRoutes(front),
    {
      method: 'post',
      path: '/api/v1/account/convertDust',
      instruction: 'convertDust',
      handle: (ctx, input) => {
        const body = (input.body ?? {}) as Record<string, unknown>;
        let only: MarketInfo | undefined;
        if (body.symbol !== undefined && body.symbol !== null) {
          if (typeof body.symbol !== 'string') return sendError(ctx, Errors.invalid('symbol must be an asset symbol'));
          const asset = front.assetsBySymbol.get(body.symbol);
          if (!asset) return sendError(ctx, Errors.invalidAsset(body.symbol.slice(0, 20)));
          if (asset.symbol === DUST_PAYOUT_SYMBOL) return sendError(ctx, Errors.preconditionFailed(`${DUST_PAYOUT_SYMBOL} cannot be converted to itself`));
          only = usdcMarketOf(front, front.config.assets.indexOf(asset));
          if (!only) return sendError(ctx, Errors.preconditionFailed(`${asset.symbol} has no ${DUST_PAYOUT_SYMBOL} market to value it`));
        }
        engine.convertDustToUsdc(replyTo(ctx, () => sendJson(ctx, 200, '')), input.accountId, only);
      },
    },
  ];
}

/** maxBorrowQuantity, maxWithdrawalQuantity and maxOrderQuantity: the engine's exact answers. */
function limitRoutes(front: FrontContext): Route[] {
  return [
    { method: 'get', path: '/api/v1/account/limits/borrow', instruction: 'maxBorrowQuantity', handle: (ctx, input) => borrowLimit(front, ctx, input.query, input.accountId) },
    { method: 'get', path: '/api/v1/account/limits/withdrawal', instruction: 'maxWithdrawalQuantity', handle: (ctx, input) => withdrawalLimit(front, ctx, input.query, input.accountId) },
    { method: 'get', path: '/api/v1/account/limits/order', instruction: 'maxOrderQuantity', handle: (ctx, input) => orderLimit(front, ctx, input.query, input.accountId) },
  ];
}

type Ctx = Parameters<Route['handle']>[0];

function borrowLimit(front: FrontContext, ctx: Ctx, q: URLSearchParams, accountId: number): void {
  const symbol = q.get('symbol');
  if (symbol === null) return sendError(ctx, Errors.invalid('symbol is required'));
  const asset = front.assetsBySymbol.get(symbol);
  if (!asset) return sendError(ctx, Errors.invalidAsset(symbol.slice(0, 20)));
  engineCalls(front).queryMaxBorrowQty(replyTo(ctx, ({ value }) => sendJson(ctx, 200, JSON.stringify({
    maxBorrowQuantity: formatDecimal(value, asset.decimals), symbol,
  }))), { accountId, assetId: front.config.assets.indexOf(asset) });
}

function withdrawalLimit(front: FrontContext, ctx: Ctx, q: URLSearchParams, accountId: number): void {
  const symbol = q.get('symbol');
  if (symbol === null) return sendError(ctx, Errors.invalid('symbol is required'));
  const asset = front.assetsBySymbol.get(symbol);
  if (!asset) return sendError(ctx, Errors.invalidAsset(symbol.slice(0, 20)));
  const autoBorrow = boolParam(q, 'autoBorrow');
  const autoLendRedeem = boolParam(q, 'autoLendRedeem');
  if (isApiError(autoBorrow)) return sendError(ctx, autoBorrow);
  if (isApiError(autoLendRedeem)) return sendError(ctx, autoLendRedeem);
  const flags = (autoBorrow === true ? CommandFlag.AutoBorrow : 0) | (autoLendRedeem === true ? CommandFlag.AutoLendRedeem : 0);
  engineCalls(front).queryMaxWithdrawalQty(replyTo(ctx, ({ value }) => sendJson(ctx, 200, JSON.stringify({
    autoBorrow: autoBorrow ?? null, autoLendRedeem: autoLendRedeem ?? null,
    maxWithdrawalQuantity: formatDecimal(value, asset.decimals), symbol,
  }))), { accountId, assetId: front.config.assets.indexOf(asset), flags });
}

/** The order limit's query flags and their command bits; reduceOnly waits for perpetuals. */
const ORDER_LIMIT_FLAGS: Array<[string, number]> = [
  ['autoBorrow', CommandFlag.AutoBorrow], ['autoBorrowRepay', CommandFlag.AutoBorrowRepay], ['autoLendRedeem', CommandFlag.AutoLendRedeem],
];

function orderLimit(front: FrontContext, ctx: Ctx, q: URLSearchParams, accountId: number): void {
  const symbol = q.get('symbol');
  if (symbol === null) return sendError(ctx, Errors.invalid('symbol is required'));
  const market = front.marketsBySymbol.get(symbol);
  if (!market) return sendError(ctx, Errors.invalidMarket(symbol.slice(0, 40)));
  const sideText = q.get('side');
  const side = SIDE.value(sideText);
  if (side === undefined) return sendError(ctx, Errors.invalid(`side must be ${SIDE.choices()}`));
  let priceTicks = 0;
  const priceText = q.get('price');
  if (priceText !== null) {
    const parsed = parsePriceTicks(market, priceText);
    if (typeof parsed !== 'number') return sendError(ctx, parsed);
    priceTicks = parsed;
  }
  const reduceOnly = boolParam(q, 'reduceOnly');
  if (isApiError(reduceOnly)) return sendError(ctx, reduceOnly);
  if (reduceOnly === true) return sendError(ctx, Errors.notImplemented('reduceOnly'));
  const named: Record<string, boolean | null> = {};
  let flags = 0;
  for (const [name, bit] of ORDER_LIMIT_FLAGS) {
    const value = boolParam(q, name);
    if (isApiError(value)) return sendError(ctx, value);
    named[name] = value ?? null;
    if (value === true) flags |= bit;
  }
  engineCalls(front).maxOrderLots(replyTo(ctx, (lots) => {
    sendJson(ctx, 200, JSON.stringify({
      autoBorrow: named.autoBorrow, autoBorrowRepay: named.autoBorrowRepay, autoLendRedeem: named.autoLendRedeem,
      maxOrderQuantity: formatDecimal(lots * market.stepUnits, market.quantityDecimals),
      price: priceText, reduceOnly: reduceOnly ?? null, side: sideText, symbol,
    }));
  }), accountId, market, side, priceTicks, flags);
}

/** CollateralRecord.mark_source of a line valued at its USDC book's guarded reference (engine/core/margin/mark.ts MarkSource.Book). */
const MARK_SOURCE_BOOK = 3;

/** A line's mark price as the wire writes it: the index (9 decimals, trimmed), the book price, or '0'. */
function markText(front: FrontContext, line: AssetCollateral): string {
  if (line.markSource === MARK_SOURCE_BOOK) {
    const market = front.config.markets.find((m) => m.spec.marketId === line.marketId);
    return market ? formatDecimal(line.markTicks * market.tickUnits, market.priceDecimals) : '0';
  }
  return formatDecimalBig(BigInt(line.markPriceE9), INDEX_PRICE_DECIMALS);
}

/** The MarginAccountSummary of GET /api/v1/capital/collateral, every figure from the engine's margin summary. */
function collateralJson(front: FrontContext, c: Collateral): Record<string, unknown> {
  const quoteAsset = front.config.assets.find((a) => a.symbol === DUST_PAYOUT_SYMBOL);
  const money = (units: bigint) => formatDecimalBig(units, quoteAsset?.decimals ?? 0);
  const fraction = (value: bigint) => formatDecimalBig(value, MARGIN_FRACTION_DECIMALS);
  const collateral = c.assets.map((line) => {
    const asset = front.config.assets[line.assetId];
    return {
      symbol: asset.symbol,
      assetMarkPrice: markText(front, line),
      totalQuantity: formatDecimal(line.availableUnits + line.lockedUnits + line.lentUnits, asset.decimals),
      balanceNotional: money(line.notional),
      collateralWeight: fraction(line.weight),
      collateralValue: money(line.collateralValue),
      openOrderQuantity: formatDecimal(line.lockedUnits, asset.decimals),
      lendQuantity: formatDecimal(line.lentUnits, asset.decimals),
      availableQuantity: formatDecimal(line.availableUnits, asset.decimals),
    };
  });
  return {
    assetsValue: money(c.assetsValue),
    borrowLiability: money(c.liabilities),
    collateral,
    imf: fraction(c.accountImf),
    unsettledEquity: money(c.unsettledEquity),
    liabilitiesValue: money(c.liabilities),
    marginFraction: c.marginFraction === null ? null : fraction(c.marginFraction),
    mmf: fraction(c.accountMmf),
    netEquity: money(c.netEquity),
    netEquityAvailable: money(c.netEquity - c.imfUnits),
    netEquityLocked: money(c.imfUnits),
    netExposureFutures: money(c.futuresExposure),
    pnlUnrealized: money(c.pnlUnrealized),
  };
}
