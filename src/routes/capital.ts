// GET /api/v1/capital (balanceQuery): the signer's balances, answered by the engine through a
// query command (live state, in order with the account's own commands). Every configured asset is
// listed with available, locked and staked, all three always present (ccxt computes
// used = locked + staked). Nothing can be staked yet, so staked is "0".

import { CommandKind, RecordType, ResultCode } from '../../engine/bus/types.js';
import { readBalance, readResult } from '../../engine/bus/codec.js';
import { resultError } from '../errors.js';
import { sendError, sendJson, type Route } from '../front/http.js';
import { callEngine, scratch, type FrontContext } from '../front/context.js';
import { assetText } from '../wire/market-codec.js';

export function capitalRoutes(front: FrontContext): Route[] {
  return [
    {
      method: 'get',
      path: '/api/v1/capital',
      instruction: 'balanceQuery',
      handle: (ctx, input) => {
        const balances: Record<string, { available: string; locked: string; staked: string }> = {};
        callEngine(front, ctx, (cmd) => {
          cmd.kind = CommandKind.QueryBalances;
          cmd.accountId = input.accountId;
        }, {
          onRecord(type, view, offset) {
            if (type === RecordType.Balance) {
              const rec = scratch.balance;
              readBalance(view, offset, rec);
              const asset = front.config.assets[rec.assetId];
              balances[asset.symbol] = {
                available: assetText(asset, rec.availableUnits),
                locked: assetText(asset, rec.lockedUnits),
                staked: '0',
              };
            } else if (type === RecordType.Result) {
              readResult(view, offset, scratch.result);
              if (scratch.result.code === ResultCode.Ok) sendJson(ctx, 200, JSON.stringify(balances));
              else sendError(ctx, resultError(scratch.result.code));
            }
          },
        });
      },
    },
  ];
}
