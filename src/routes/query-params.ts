// Small, pure readers of public query parameters shared by the market-history routes: a whole
// number within bounds (digits only, no sign, no exponent), with a default when absent.

import { Errors, type ApiError } from '../errors.js';

/** The parameter as an integer in [min, max], the default when absent, or the error to answer. */
export function intParam(query: URLSearchParams, name: string, min: number, max: number, fallback: number): number | ApiError {
  const text = query.get(name);
  if (text === null) return fallback;
  if (!/^\d{1,15}$/.test(text)) return Errors.invalid(`${name} must be a whole number`);
  const value = Number(text);
  if (value < min || value > max) return Errors.invalid(`${name} must be between ${min} and ${max}`);
  return value;
}

export function isError(value: unknown): value is ApiError {
  return typeof value === 'object' && value !== null && 'status' in value && 'code' in value;
}
