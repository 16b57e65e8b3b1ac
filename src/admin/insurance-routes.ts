// The liquidation insurance fund (engine/core/liquidation/fund.ts, insurance.ts) on the admin endpoint:
//
//   GET  /admin/insurance
//        → {"timestamp" (engine time, ms), "insurance": [{"symbol", "fund", "fees", "covered",
//           "socialized", "deposited"}]}  (every asset, in asset order)
//   POST /admin/insurance {"asset": "USDC", "quantity": "1000"}
//        → {"timestamp", "insurance": [the asset's line after the deposit]}
//
// Each line is in the asset's own decimals: `fund` what the fund holds now; `fees` the liquidation
// fees it took in, `covered` the bankrupt debt it paid into the pools, `socialized` the bankrupt
// debt it could not pay (written off the pools' lenders), `deposited` what the operator paid in,
// each so far. A deposit is units of the asset paid in from outside the exchange: a journaled
// DepositInsurance command, answered once durable. The body is checked whole before anything is
// submitted (a known asset, a positive quantity on the asset's grid within the exact range); a
// refusal answers {code, message} with 400 and changes nothing.

import type { AssetConfig } from '../config.js';
import { formatDecimal } from '../decimal.js';
import { Errors, type ApiError } from '../errors.js';
import { sendError, sendJson, type RequestContext, type Route } from '../front/http.js';
import type { FrontContext } from '../front/context.js';
import { engineCalls, replyTo, type InsuranceLine, type InsuranceLines } from '../front/engine-calls/index.js';
import { parseAssetUnits } from '../wire/market-codec.js';

/** The body of POST /admin/insurance: the asset and its units, or the error that refuses it. */
export function parseInsuranceDeposit(front: FrontContext, body: unknown): { asset: AssetConfig; assetId: number; amountUnits: number } | ApiError {
  const fields = (body ?? {}) as Record<string, unknown>;
  const asset = typeof fields.asset === 'string' ? front.assetsBySymbol.get(fields.asset) : undefined;
  if (!asset) return Errors.invalidAsset(String(fields.asset).slice(0, 20));
  const amountUnits = parseAssetUnits(asset, fields.quantity);
  if (typeof amountUnits !== 'number') return amountUnits;
  return { asset, assetId: front.config.assets.indexOf(asset), amountUnits };
}

function lineJson(front: FrontContext, line: InsuranceLine): Record<string, unknown> {
  const asset = front.config.assets[line.assetId];
  const text = (units: number) => formatDecimal(units, asset.decimals);
  return {
    symbol: asset.symbol,
    fund: text(line.fundUnits),
    fees: text(line.feesUnits),
    covered: text(line.coveredUnits),
    socialized: text(line.socializedUnits),
    deposited: text(line.depositedUnits),
  };
}

export function insuranceJson(front: FrontContext, answer: InsuranceLines): Record<string, unknown> {
  return { timestamp: Math.floor(answer.timeUs / 1000), insurance: answer.lines.map((line) => lineJson(front, line)) };
}

export function insuranceRoutes(front: FrontContext): Route[] {
  const answer = (ctx: RequestContext) => replyTo(ctx, (lines: InsuranceLines) => sendJson(ctx, 200, JSON.stringify(insuranceJson(front, lines))));
  return [
    {
      method: 'get',
      path: '/admin/insurance',
      handle: (ctx) => {
        engineCalls(front).queryInsurance(answer(ctx));
      },
    },
    {
      method: 'post',
      path: '/admin/insurance',
      handle: (ctx, input) => {
        const parsed = parseInsuranceDeposit(front, input.body);
        if ('status' in parsed) return sendError(ctx, parsed);
        // The fund is no account: the command's account id stays 0.
        engineCalls(front).depositInsurance(answer(ctx), { accountId: 0, assetId: parsed.assetId, amountUnits: parsed.amountUnits });
      },
    },
  ];
}
