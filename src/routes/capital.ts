// GET /api/v1/capital (balanceQuery): the signer's balances, answered by the engine through a
// query command (live state, in order with the account's own commands). Every configured asset is
// listed with available, locked and staked, all three always present (ccxt computes
// used = locked + staked). Nothing can be staked yet, so staked is "0".

import { sendJson, type Route } from '../front/http.js';
import type { FrontContext } from '../front/context.js';
import { engineCalls, replyTo } from '../front/engine-calls/index.js';
import { assetText } from '../wire/market-codec.js';

export function capitalRoutes(front: FrontContext): Route[] {
  const engine = engineCalls(front);
  return [
    {
      method: 'get',
      path: '/api/v1/capital',
      instruction: 'balanceQuery',
      handle: (ctx, input) => {
        engine.balances(replyTo(ctx, (units) => {
          const balances: Record<string, { available: string; locked: string; staked: string }> = {};
          front.config.assets.forEach((asset, assetId) => {
            const [available, locked] = units[assetId];
            balances[asset.symbol] = { available: assetText(asset, available), locked: assetText(asset, locked), staked: '0' };
          });
          sendJson(ctx, 200, JSON.stringify(balances));
        }), input.accountId);
      },
    },
  ];
}
