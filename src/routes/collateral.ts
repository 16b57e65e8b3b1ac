// GET /api/v1/collateral: the collateral parameters of every asset that has them, in the wire
// shape of the reference (§3.1): {symbol, imfFunction, mmfFunction, haircutFunction{weight, kind}}.
// The figures are rendered from the integer parameters the margin arithmetic uses
// (src/margin-config.ts), so the published decimals and the computed ones are the same numbers.
// They change only with the configuration, so the body is rendered once.

import type { CollateralParams } from '../margin-config.js';
import { formatFraction } from '../margin-config.js';
import { sendJson, type Route } from '../front/http.js';
import type { FrontContext } from '../front/context.js';
import type { HaircutSpec, MarginFunctionSpec } from '../../engine/bus/margin-params.js';

export function marginFunctionJson(fn: MarginFunctionSpec): Record<string, unknown> {
  return { type: 'sqrt', base: formatFraction(fn.base), factor: formatFraction(fn.factor) };
}

function haircutKindJson(haircut: HaircutSpec): Record<string, unknown> {
  if (haircut.kind === 'identity') return { type: 'identity' };
  return { type: 'inverseSqrt', base: formatFraction(haircut.base), positiveCurvePenalty: formatFraction(haircut.penalty) };
}

export function collateralJson(params: CollateralParams): Record<string, unknown> {
  const { spec } = params;
  return {
    symbol: params.symbol,
    imfFunction: marginFunctionJson(spec.imf),
    mmfFunction: marginFunctionJson(spec.mmf),
    haircutFunction: { weight: formatFraction(spec.haircut.weight), kind: haircutKindJson(spec.haircut) },
  };
}

export function collateralRoutes(front: FrontContext): Route[] {
  const body = JSON.stringify(front.config.margin.collateral.map(collateralJson));
  return [{ method: 'get', path: '/api/v1/collateral', handle: (ctx) => sendJson(ctx, 200, body) }];
}
