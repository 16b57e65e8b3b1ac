// The backstop liquidity providers (engine/core/liquidation/backstop.ts, backstop-admin.ts) on the
// admin endpoint:
//
//   GET  /admin/backstop
//        → {"timestamp" (engine time, ms), "providers": [{"accountId", "rank"}]}
//   POST /admin/backstop {"action": "set" | "remove", "accountId": 7}
//        → {"timestamp", "providers": [the list after the change]}
//
// The list is in the order the providers take liquidated positions (ascending account id), rank
// counting from 1. A change is a journaled SetBackstopProvider or RemoveBackstopProvider command,
// answered once durable. The body is checked whole before anything is submitted (an action of the
// two, an account id that is a positive integer); a refusal answers {code, message} with 400 and
// changes nothing, as do the engine's: an account that does not exist, one that is a provider
// already (set) or is not one (remove), or a list at the most providers the engine keeps.

import { ResultCode } from '../../engine/bus/types.js';
import { Errors, resultError, type ApiError } from '../errors.js';
import { sendError, sendJson, type RequestContext, type Route } from '../front/http.js';
import type { FrontContext } from '../front/context.js';
import { engineCalls, type BackstopProviders, type Reply } from '../front/engine-calls/index.js';

/** What POST /admin/backstop asks for, or the error that refuses it. */
export function parseBackstopChange(body: unknown): { action: 'set' | 'remove'; accountId: number } | ApiError {
  const fields = (body ?? {}) as Record<string, unknown>;
  const { action, accountId } = fields;
  if (action !== 'set' && action !== 'remove') return Errors.invalid('action must be "set" or "remove"');
  if (typeof accountId !== 'number' || !Number.isInteger(accountId) || accountId < 1 || accountId > 0xffffffff) {
    return Errors.invalid('accountId must be a positive integer');
  }
  return { action, accountId };
}

export function backstopJson(answer: BackstopProviders): Record<string, unknown> {
  return { timestamp: Math.floor(answer.timeUs / 1000), providers: answer.providers.map((p) => ({ accountId: p.accountId, rank: p.rank })) };
}

/** The usual reply, but an unknown account is the request's fault here (400), not an authentication failure. */
function backstopReply(ctx: RequestContext, accountId: number): Reply<BackstopProviders> {
  return {
    ok: (answer) => sendJson(ctx, 200, JSON.stringify(backstopJson(answer))),
    fail: (error) => sendError(ctx, error === resultError(ResultCode.UnknownAccount) ? Errors.invalid(`Unknown account: ${accountId}`) : error),
    submitted: () => {
      ctx.engineBound = true;
    },
  };
}

export function backstopRoutes(front: FrontContext): Route[] {
  return [
    {
      method: 'get',
      path: '/admin/backstop',
      handle: (ctx) => {
        engineCalls(front).queryBackstop(backstopReply(ctx, 0));
      },
    },
    {
      method: 'post',
      path: '/admin/backstop',
      handle: (ctx, input) => {
        const parsed = parseBackstopChange(input.body);
        if ('status' in parsed) return sendError(ctx, parsed);
        const calls = engineCalls(front);
        const reply = backstopReply(ctx, parsed.accountId);
        if (parsed.action === 'set') calls.setBackstopProvider(reply, { accountId: parsed.accountId });
        else calls.removeBackstopProvider(reply, { accountId: parsed.accountId });
      },
    },
  ];
}
