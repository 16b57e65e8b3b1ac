// The operator's endpoint, served by front thread 0 on a separate port bound to 127.0.0.1 only:
// create accounts (register an ed25519 public key) and credit deposits. Both are engine commands,
// sequenced and journaled like any other, and answered once durable.
//
//   POST /admin/accounts  {"publicKey": "<base64 32 bytes>"}            → {"accountId", "publicKey"}
//   POST /admin/deposits  {"accountId": n, "asset": "USDC", "quantity": "100"} → {"accountId", "asset", "quantity"}
//   GET  /admin/status    → {"status": "ok"}
//   POST /admin/snapshot  → {"snapshotSeq": n}   (issue 6: a Snapshot command; the journal worker
//                           writes the file once n is durable and logs "snapshot written")
//
// Being reachable only from the machine itself is the whole of its access control.

import { CommandKind, RecordType, ResultCode } from '../../engine/types.js';
import { readResult } from '../../engine/codec.js';
import { Errors, resultError } from '../errors.js';
import { sendError, sendJson, type RequestContext, type Route } from '../front/http.js';
import { callEngine, scratch, type FrontContext } from '../front/context.js';
import type { PendingRequest } from '../front/engine-link.js';
import { parseAssetUnits } from '../wire/market-codec.js';
import { isCanonicalBase64, isStrongPublicKey } from '../auth.js';

function resultResponse(ctx: RequestContext, onOk: (value: number) => unknown): PendingRequest {
  return {
    onRecord(type, view, offset) {
      if (type !== RecordType.Result) return;
      readResult(view, offset, scratch.result);
      if (scratch.result.code === ResultCode.Ok) sendJson(ctx, 200, JSON.stringify(onOk(scratch.result.value)));
      else sendError(ctx, resultError(scratch.result.code));
    },
  };
}

/**
 * A registrable ed25519 public key: canonical base64 of 32 bytes, and not a weak (small-order)
 * point, under which some verifiers (OpenSSL's among them) accept a forged signature for any
 * message.
 */
export function decodePublicKey(text: unknown): Buffer | null {
  if (typeof text !== 'string' || !isCanonicalBase64(text, 32)) return null;
  const key = Buffer.from(text, 'base64');
  return isStrongPublicKey(key) ? key : null;
}

export function adminRoutes(front: FrontContext): Route[] {
  return [
    { method: 'get', path: '/admin/status', handle: (ctx) => sendJson(ctx, 200, JSON.stringify({ status: 'ok' })) },
    {
      method: 'post',
      path: '/admin/accounts',
      handle: (ctx, input) => {
        const body = (input.body ?? {}) as Record<string, unknown>;
        const key = decodePublicKey(body.publicKey);
        if (key === null) {
          sendError(ctx, Errors.invalid('publicKey must be the base64 of a 32-byte ed25519 public key that is not a weak point'));
          return;
        }
        callEngine(front, ctx, (cmd) => {
          cmd.kind = CommandKind.CreateAccount;
          cmd.key.set(key);
        }, resultResponse(ctx, (accountId) => ({ accountId, publicKey: body.publicKey })));
      },
    },
    {
      method: 'post',
      path: '/admin/deposits',
      handle: (ctx, input) => {
        const body = (input.body ?? {}) as Record<string, unknown>;
        const accountId = body.accountId;
        if (typeof accountId !== 'number' || !Number.isInteger(accountId) || accountId < 1 || accountId > 0xffffffff) {
          sendError(ctx, Errors.invalid('accountId must be a positive integer'));
          return;
        }
        const asset = typeof body.asset === 'string' ? front.assetsBySymbol.get(body.asset) : undefined;
        if (!asset) {
          sendError(ctx, Errors.invalidAsset(String(body.asset).slice(0, 20)));
          return;
        }
        const units = parseAssetUnits(asset, body.quantity);
        if (typeof units !== 'number') {
          sendError(ctx, units);
          return;
        }
        callEngine(front, ctx, (cmd) => {
          cmd.kind = CommandKind.Deposit;
          cmd.accountId = accountId;
          cmd.assetId = front.config.assets.indexOf(asset);
          cmd.amountUnits = units;
        }, resultResponse(ctx, () => ({ accountId, asset: asset.symbol, quantity: body.quantity })));
      },
    },
    // issue 6 (durability): the operator's snapshot trigger.
    {
      method: 'post',
      path: '/admin/snapshot',
      handle: (ctx) => {
        callEngine(front, ctx, (cmd) => {
          cmd.kind = CommandKind.Snapshot;
        }, resultResponse(ctx, (snapshotSeq) => ({ snapshotSeq })));
      },
    },
  ];
}
