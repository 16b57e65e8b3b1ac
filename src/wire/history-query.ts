// Query parameters of the history and capital list endpoints (limit, offset, from/to,
// sortDirection, fillType, ids), parsed strictly into numbers or the error to answer with. Pure;
// tested without sockets.
//
// limit defaults to 100 and is at most 1000; offset defaults to 0 and is at most 1,000,000 (a
// page costs O(offset + limit) index entries, so the bound keeps one request's work bounded);
// from/to are integer milliseconds, inclusive. sortDirection is Asc or Desc (default Desc, newest
// first); the snake_case / lower-case forms the Rust client sends are accepted too. An
// unknown parameter is ignored (ccxt adds its own, e.g. endTime on fetchDeposits).

import { Errors, type ApiError } from '../errors.js';
import type { Page, TimeRange } from '../../engine/store/history-account.js';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;
export const MAX_OFFSET = 1_000_000;
const MAX_TIME_MS = 8_640_000_000_000; // the largest Date

function integerParam(query: URLSearchParams, name: string, min: number, max: number): number | undefined | ApiError {
  const text = query.get(name);
  if (text === null || text === '') return undefined;
  if (!/^\d{1,16}$/.test(text)) return Errors.invalid(`${name} must be a non-negative integer`);
  const value = Number(text);
  if (value < min || value > max) return Errors.invalid(`${name} must be from ${min} to ${max}`);
  return value;
}

export function isError(value: unknown): value is ApiError {
  return typeof value === 'object' && value !== null && 'status' in value && 'code' in value;
}

export function parsePage(query: URLSearchParams, defaultDescending = true): Page | ApiError {
  const limit = integerParam(query, 'limit', 1, MAX_LIMIT);
  if (isError(limit)) return limit;
  const offset = integerParam(query, 'offset', 0, MAX_OFFSET);
  if (isError(offset)) return offset;
  const direction = query.get('sortDirection') ?? query.get('sort_direction');
  let descending = defaultDescending;
  if (direction !== null) {
    const normalised = direction.toLowerCase();
    if (normalised !== 'asc' && normalised !== 'desc') return Errors.invalid('sortDirection must be Asc or Desc');
    descending = normalised === 'desc';
  }
  return { limit: limit ?? DEFAULT_LIMIT, offset: offset ?? 0, descending };
}

/** from / to in ms (to also as endTime, which ccxt's fetchDeposits sends), as an inclusive µs range. */
export function parseTimeRange(query: URLSearchParams): TimeRange | ApiError {
  const from = integerParam(query, 'from', 0, MAX_TIME_MS);
  if (isError(from)) return from;
  let to = integerParam(query, 'to', 0, MAX_TIME_MS);
  if (isError(to)) return to;
  if (to === undefined) {
    to = integerParam(query, 'endTime', 0, MAX_TIME_MS);
    if (isError(to)) return to;
  }
  const fromUs = (from ?? 0) * 1000;
  const toUs = to === undefined ? MAX_TIME_MS * 1000 : to * 1000 + 999;
  if (fromUs > toUs) return Errors.invalid('from must not be after to');
  return { fromUs, toUs };
}

/** An id of digits (order ids are strings of digits; ccxt may send a number), or undefined. */
export function parseIdParam(query: URLSearchParams, name: string): number | undefined | ApiError {
  return integerParam(query, name, 0, Number.MAX_SAFE_INTEGER);
}

const MARKET_TYPE_NAMES = new Set(['SPOT', 'PERP', 'IPERP', 'DATED', 'PREDICTION', 'RFQ']);

/**
 * The marketType filter (repeatable; `market_type` too; any case) as a set of upper-case type
 * names, null when absent (every type), or an error for a name the API does not know.
 */
export function marketTypesSelected(query: URLSearchParams): Set<string> | null | ApiError {
  const types = [...query.getAll('marketType'), ...query.getAll('market_type')];
  for (const type of types) {
    if (!MARKET_TYPE_NAMES.has(type.toUpperCase())) return Errors.invalid(`Invalid marketType: ${type.slice(0, 20)}`);
  }
  return types.length === 0 ? null : new Set(types.map((t) => t.toUpperCase()));
}
