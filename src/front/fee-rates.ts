// An account's fee rates, read from the engine (QueryFeeRates): the basis points that
// GET /api/v1/account reports as spotMakerFee / spotTakerFee, and the admin endpoint shows.
// The rates live in the engine only (set by the operator's SetFeeRates, journaled), so every
// read goes through it and is as current as the engine at that point of the stream.

import { RecordType, ResultCode, CommandKind } from '../../engine/bus/types.js';
import { readFeeRates, readResult } from '../../engine/bus/codec.js';
import { resultError } from '../errors.js';
import { sendError, type RequestContext } from './http.js';
import { callEngine, scratch, type FrontContext } from './context.js';
import type { PendingRequest } from './engine-link.js';

export interface FeeRates {
  accountId: number;
  makerFeeBps: number;
  takerFeeBps: number;
}

/**
 * The request's answer to a command that yields a FeeRates record (QueryFeeRates, SetFeeRates):
 * `onRates` with the rates, or the engine's error sent to the client.
 */
export function feeRatesResponse(ctx: RequestContext, onRates: (rates: FeeRates) => void): PendingRequest {
  return {
    onRecord(type, view, offset) {
      if (type === RecordType.FeeRates) {
        readFeeRates(view, offset, scratch.feeRates);
        const { accountId, makerFeeBps, takerFeeBps } = scratch.feeRates;
        onRates({ accountId, makerFeeBps, takerFeeBps });
      } else if (type === RecordType.Result) {
        readResult(view, offset, scratch.result);
        if (scratch.result.code !== ResultCode.Ok) sendError(ctx, resultError(scratch.result.code));
      }
    },
  };
}

/** Asks the engine for an account's fee rates; `onRates` runs once they arrive (errors are answered). */
export function queryFeeRates(front: FrontContext, ctx: RequestContext, accountId: number, onRates: (rates: FeeRates) => void): void {
  callEngine(front, ctx, (cmd) => {
    cmd.kind = CommandKind.QueryFeeRates;
    cmd.accountId = accountId;
  }, feeRatesResponse(ctx, onRates));
}
