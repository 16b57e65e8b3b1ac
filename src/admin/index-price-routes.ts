// The operator's index prices (engine/core/margin/index-prices.ts) on the admin endpoint:
//
//   POST /admin/index-prices {"prices": {"SOL": "150.25", "BTC": "97000"}, "source": "Operator" | "Feed"}
//        → {"prices": [{"symbol", "price" (as set: within the asset's update bounds), "source",
//           "timestamp" (engine time, ms)}]}
//   GET  /admin/index-prices
//        → {"timestamp", "maxAgeMs", "prices": [{"symbol", "price" (null: none yet), "source",
//           "updatedAt" (ms, null: never), "ageMs" (null: never), "stale"}]}  (every asset)
//
// A price is USDC per whole unit of the asset, a decimal string with at most 9 decimals. The whole
// body is checked before anything is submitted (a known asset, not USDC, whose index is fixed at
// 1, a positive price, no asset twice): one bad entry refuses the request and sets nothing. Each
// asset is then its own journaled SetIndexPrice command, all submitted at once, so they are
// sequenced back to back; the answer comes when every one is durable. They are not one atomic
// command: if one is refused (the inbound ring full, say) the request answers that error and the
// others stand, so the sender retries the request (setting a price again is harmless).
//
// The public wire has no place for an asset's index (its indexPrice sits in perpetual markPrices),
// so these prices are read here.

import { IndexPriceSource } from '../../engine/bus/types.js';
import { decimalError, formatDecimal, parseDecimal } from '../decimal.js';
import { DEFAULT_INDEX_MAX_AGE_MS, type AssetConfig } from '../config.js';
import { Errors, apiError, type ApiError } from '../errors.js';
import { sendError, sendJson, type RequestContext, type Route } from '../front/http.js';
import type { FrontContext } from '../front/context.js';
import { engineCalls, replyTo, type IndexPrices } from '../front/engine-calls/index.js';
import { INDEX_PRICE_DECIMALS } from '../front/index-default.js';

/** The asset whose index the engine fixes at 1. */
const FIXED_SYMBOL = 'USDC';
/** Most assets one request sets. */
export const MAX_INDEX_PRICES_PER_REQUEST = 256;

const SOURCE_NAMES: Record<number, string> = {
  [IndexPriceSource.None]: 'None',
  [IndexPriceSource.Operator]: 'Operator',
  [IndexPriceSource.Feed]: 'Feed',
  [IndexPriceSource.Default]: 'Default',
  [IndexPriceSource.Fixed]: 'Fixed',
};

export interface IndexPriceEntry {
  asset: AssetConfig;
  assetId: number;
  priceE9: number;
}

function parsePrice(symbol: string, value: unknown): number | ApiError {
  const text = typeof value === 'string' ? value : null;
  if (text === null) return Errors.invalidPrice(`${symbol}: the price must be a decimal string`);
  const priceE9 = parseDecimal(text, INDEX_PRICE_DECIMALS);
  if (priceE9 < 0) {
    const why = decimalError(text, INDEX_PRICE_DECIMALS);
    if (why === 'too_many_decimals') return Errors.invalidPrice(`${symbol}: Price decimal too long (at most ${INDEX_PRICE_DECIMALS} decimals)`);
    if (why === 'too_large') return Errors.invalidPrice(`${symbol}: Price is too large`);
    return Errors.invalidPrice(`${symbol}: Price is not a valid decimal: ${JSON.stringify(text).slice(0, 40)}`);
  }
  if (priceE9 === 0) return Errors.invalidPrice(`${symbol}: Index price must be positive`);
  return priceE9;
}

/** The body of POST /admin/index-prices: its entries and source, or the error that refuses it whole. */
export function parseIndexPrices(front: FrontContext, body: unknown): { entries: IndexPriceEntry[]; source: IndexPriceSource } | ApiError {
  const fields = (body ?? {}) as Record<string, unknown>;
  const source = fields.source === undefined || fields.source === 'Operator' ? IndexPriceSource.Operator
    : fields.source === 'Feed' ? IndexPriceSource.Feed : null;
  if (source === null) return Errors.invalid('source must be Operator or Feed');
  const prices = fields.prices;
  if (typeof prices !== 'object' || prices === null || Array.isArray(prices)) return Errors.invalid('prices must be an object of asset symbol → decimal string');
  const named = Object.entries(prices as Record<string, unknown>);
  if (named.length === 0 || named.length > MAX_INDEX_PRICES_PER_REQUEST) return Errors.invalid(`prices must name 1 to ${MAX_INDEX_PRICES_PER_REQUEST} assets`);
  const entries: IndexPriceEntry[] = [];
  for (const [symbol, value] of named) {
    const asset = front.assetsBySymbol.get(symbol);
    if (!asset) return Errors.invalidAsset(symbol.slice(0, 20));
    if (symbol === FIXED_SYMBOL) return apiError(400, 'INVALID_ASSET', 'The index of USDC is fixed at 1');
    const priceE9 = parsePrice(symbol, value);
    if (typeof priceE9 !== 'number') return priceE9;
    entries.push({ asset, assetId: front.config.assets.indexOf(asset), priceE9 });
  }
  return { entries, source };
}

/** Submits one SetIndexPrice per entry, answers once all are in (or with the first refusal). */
function submitIndexPrices(front: FrontContext, ctx: RequestContext, entries: IndexPriceEntry[], source: IndexPriceSource): void {
  const done: Array<Record<string, unknown> | null> = entries.map(() => null);
  let waiting = entries.length;
  let failed = false;
  entries.forEach((entry, index) => {
    const reply = {
      ok: (accepted: { value: number; timeUs: number }) => {
        // The price the engine set: the asset's update bounds may have cut the one sent.
        const price = formatDecimal(accepted.value, INDEX_PRICE_DECIMALS);
        done[index] = { symbol: entry.asset.symbol, price, source: SOURCE_NAMES[source], timestamp: Math.floor(accepted.timeUs / 1000) };
        if (--waiting === 0 && !failed) sendJson(ctx, 200, JSON.stringify({ prices: done }));
      },
      fail: (error: ApiError) => {
        waiting--;
        if (failed) return;
        failed = true;
        sendError(ctx, { ...error, message: `${entry.asset.symbol}: ${error.message}` });
      },
      submitted: () => {
        ctx.engineBound = true;
      },
    };
    if (!failed) engineCalls(front).setIndexPrice(reply, { assetId: entry.assetId, priceE9: entry.priceE9, source });
  });
}

/** The GET answer: every asset with its price, source, age and staleness at the query's engine time. */
export function indexPricesJson(front: FrontContext, prices: IndexPrices): Record<string, unknown> {
  const nowMs = Math.floor(prices.timeUs / 1000);
  return {
    timestamp: nowMs,
    maxAgeMs: front.config.indexMaxAgeMs ?? DEFAULT_INDEX_MAX_AGE_MS,
    prices: prices.rows.map((row) => {
      const fixed = row.source === IndexPriceSource.Fixed;
      const never = row.source === IndexPriceSource.None;
      const updatedAt = fixed || never ? null : Math.floor(row.updatedUs / 1000);
      return {
        symbol: front.config.assets[row.assetId]?.symbol ?? String(row.assetId),
        price: never ? null : formatDecimal(row.priceE9, INDEX_PRICE_DECIMALS),
        source: SOURCE_NAMES[row.source] ?? String(row.source),
        updatedAt,
        ageMs: updatedAt === null ? null : Math.floor((prices.timeUs - row.updatedUs) / 1000),
        stale: row.stale,
      };
    }),
  };
}

export function indexPriceRoutes(front: FrontContext): Route[] {
  return [
    {
      method: 'post',
      path: '/admin/index-prices',
      handle: (ctx, input) => {
        const parsed = parseIndexPrices(front, input.body);
        if ('status' in parsed) return sendError(ctx, parsed);
        submitIndexPrices(front, ctx, parsed.entries, parsed.source);
      },
    },
    {
      method: 'get',
      path: '/admin/index-prices',
      handle: (ctx) => {
        engineCalls(front).queryIndexPrices(replyTo(ctx, (prices) => sendJson(ctx, 200, JSON.stringify(indexPricesJson(front, prices)))));
      },
    },
  ];
}
