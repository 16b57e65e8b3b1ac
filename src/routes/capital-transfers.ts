// Deposits and withdrawals (§3.2): GET /wapi/v1/capital/deposits (depositQueryAll),
// GET and POST /wapi/v1/capital/withdrawals (withdrawalQueryAll, withdraw),
// GET /wapi/v1/capital/deposit/address (depositAddressQuery) and the public GET /api/v1/wallets.
//
// A withdrawal is one engine command (Withdraw) that takes the funds out of the account at once
// and is recorded in history with status "pending"; the simulated chain (src/front/
// simulated-chain.ts) confirms it a little later through a journaled ConfirmWithdrawal, after
// which it reads "confirmed" with a transaction hash. The destination (blockchain, address,
// clientId) is stored as an intent before the command is submitted; the command carries its
// digest, and the journal worker joins the two into the history record.
//
// Validation, in order: symbol (an asset), blockchain (the asset's configured chain), address,
// quantity (a positive decimal at the asset's decimals), clientId (at most 255 characters),
// then the two-factor rule (src/front/account-settings.ts). Nothing is submitted, and nothing
// changes, when any of them fails, except that a wrong two-factor code counts towards the
// account's lockout.

import { randomBytes } from 'node:crypto';
import { intentDigest, intentKey, type WithdrawalIntent, type WithdrawalRecord } from '../../engine/store/history-account.js';
import { CommandFlag } from '../../engine/bus/types.js';
import { Errors, apiError, type ApiError } from '../errors.js';
import { sendError, sendJson, type Route } from '../front/http.js';
import type { FrontContext } from '../front/context.js';
import { engineCalls } from '../front/engine-calls/index.js';
import type { TwoFactorClaim } from '../front/account-settings.js';
import { parseAssetUnits } from '../wire/market-codec.js';
import { isError, parseIdParam, parsePage, parseTimeRange } from '../wire/history-query.js';
import { depositJson, withdrawalJson } from '../wire/history.js';
import { depositAddress, exchangeWallet, isPlausibleAddress } from '../wire/addresses.js';
import type { AssetConfig } from '../config.js';

/**
 * excludePlatform: the wire reference lists the filter without saying which deposits are
 * "platform" ones, and every deposit here is an operator's credit (source "administrator"), which
 * could be read either way. `false` (no exclusion) is what every listing does; `true` is refused
 * as not implemented rather than answered with a guess.
 */
function excludePlatformError(value: string | null): ApiError | null {
  if (value === null || value === 'false') return null;
  if (value === 'true') return Errors.notImplemented('excludePlatform=true');
  return Errors.invalid('excludePlatform must be true or false');
}

export const TWO_FACTOR_REQUIRED = apiError(400, 'INVALID_TWO_FACTOR_CODE', 'Two-factor token required: the address is not two-factor exempt in the address book');
export const TWO_FACTOR_INVALID = apiError(400, 'INVALID_TWO_FACTOR_CODE', 'Invalid two-factor code');

/** The wrong code that started a lockout: still invalid, and the client learns of the lockout. */
export function twoFactorInvalidNowLocked(lockoutMs: number): ApiError {
  return apiError(400, 'INVALID_TWO_FACTOR_CODE', `Invalid two-factor code; too many invalid codes: withdrawals that need one are locked for ${Math.ceil(lockoutMs / 1000)} s`);
}

/** A code sent during a lockout: refused unchecked, as the venue answers a withdrawal too many (429). */
export function twoFactorLocked(untilMs: number, nowMs: number): ApiError {
  const seconds = Math.max(1, Math.ceil((untilMs - nowMs) / 1000));
  return apiError(429, 'TOO_MANY_REQUESTS', `Too many invalid two-factor codes: withdrawals that need one are locked for ${seconds} more s`);
}
const MAX_CLIENT_ID_CHARS = 255;

export interface ParsedWithdrawal {
  asset: AssetConfig;
  assetId: number;
  amountUnits: number;
  /** CommandFlag.AutoBorrow / AutoLendRedeem: fund a shortfall (spot margin). */
  flags: number;
  intent: WithdrawalIntent;
  twoFactorToken: string | null;
}

/** The withdraw body → its fields, or the error. Pure. */
export function parseWithdrawal(body: Record<string, unknown>, front: Pick<FrontContext, 'assetsBySymbol' | 'config'>, accountId: number): ParsedWithdrawal | ReturnType<typeof apiError> {
  if (typeof body.symbol !== 'string') return Errors.invalid('symbol is required');
  const asset = front.assetsBySymbol.get(body.symbol);
  if (!asset) return Errors.invalidAsset(body.symbol.slice(0, 20));
  if (typeof body.blockchain !== 'string') return Errors.invalid('blockchain is required');
  if (body.blockchain !== asset.blockchain) return Errors.invalid(`${asset.symbol} withdraws on ${asset.blockchain} only`);
  if (body.address === undefined || body.address === null) return Errors.invalid('address is required');
  if (!isPlausibleAddress(body.address)) return Errors.invalid('address must be 16 to 128 letters, digits or : . _ -');
  if (body.quantity === undefined || body.quantity === null) return Errors.invalidQuantity('quantity is required');
  const amountUnits = parseAssetUnits(asset, body.quantity);
  if (typeof amountUnits !== 'number') return amountUnits;
  let clientId: string | null = null;
  if (body.clientId !== undefined && body.clientId !== null) {
    if (typeof body.clientId !== 'string' && typeof body.clientId !== 'number') return Errors.invalid('clientId must be a string');
    clientId = String(body.clientId);
    if (clientId.length > MAX_CLIENT_ID_CHARS) return Errors.invalid(`clientId must be at most ${MAX_CLIENT_ID_CHARS} characters`);
  }
  let flags = 0;
  for (const [flag, bit] of [['autoBorrow', CommandFlag.AutoBorrow], ['autoLendRedeem', CommandFlag.AutoLendRedeem]] as const) {
    if (body[flag] !== undefined && body[flag] !== null && typeof body[flag] !== 'boolean') return Errors.invalid(`${flag} must be a boolean`);
    if (body[flag] === true) flags |= bit;
  }
  let twoFactorToken: string | null = null;
  if (body.twoFactorToken !== undefined && body.twoFactorToken !== null) {
    if (typeof body.twoFactorToken !== 'string') return Errors.invalid('twoFactorToken must be a string');
    twoFactorToken = body.twoFactorToken;
  }
  return {
    asset,
    assetId: front.config.assets.indexOf(asset),
    amountUnits,
    flags,
    intent: { accountId, blockchain: body.blockchain, address: body.address, clientId },
    twoFactorToken,
  };
}

export function capitalTransferRoutes(front: FrontContext): Route[] {
  const blockchains = new Set(front.config.assets.map((a) => a.blockchain));
  const walletsBody = JSON.stringify([...blockchains].map((blockchain) => ({ blockchain, address: exchangeWallet(blockchain) })));
  return [
    { method: 'get', path: '/api/v1/wallets', handle: (ctx) => sendJson(ctx, 200, walletsBody) },
    {
      method: 'get',
      path: '/wapi/v1/capital/deposit/address',
      instruction: 'depositAddressQuery',
      handle: (ctx, input) => {
        const blockchain = input.query.get('blockchain');
        if (blockchain === null) return sendError(ctx, Errors.invalid('blockchain is required'));
        if (!blockchains.has(blockchain)) return sendError(ctx, Errors.invalid(`Blockchain not supported: ${blockchain.slice(0, 30)}`));
        sendJson(ctx, 200, JSON.stringify({ address: depositAddress(input.accountId, blockchain) }));
      },
    },
    {
      method: 'get',
      path: '/wapi/v1/capital/deposits',
      instruction: 'depositQueryAll',
      handle: (ctx, input) => {
        const page = parsePage(input.query);
        const range = parseTimeRange(input.query);
        for (const value of [page, range]) if (isError(value)) return sendError(ctx, value);
        const exclude = excludePlatformError(input.query.get('excludePlatform'));
        if (exclude) return sendError(ctx, exclude);
        const deposits = front.accountHistory.deposits(input.accountId, range as never, page as never);
        sendJson(ctx, 200, JSON.stringify(deposits.map((d) => depositJson(front.config, d))));
      },
    },
    {
      method: 'get',
      path: '/wapi/v1/capital/withdrawals',
      instruction: 'withdrawalQueryAll',
      handle: (ctx, input) => {
        const page = parsePage(input.query);
        const range = parseTimeRange(input.query);
        const id = parseIdParam(input.query, 'id');
        for (const value of [page, range, id]) if (isError(value)) return sendError(ctx, value);
        const clientId = input.query.get('clientId') ?? undefined;
        const items = front.accountHistory.withdrawals(input.accountId, { id: id as number | undefined, clientId }, range as never, page as never);
        sendJson(ctx, 200, JSON.stringify(items.map((w) => withdrawalJson(front.config, w))));
      },
    },
    {
      method: 'post',
      path: '/wapi/v1/capital/withdrawals',
      instruction: 'withdraw',
      handle: (ctx, input) => {
        if (input.body === null) return sendError(ctx, Errors.invalid('A withdrawal body is required'));
        // Before the two-factor check, so that maintenance spends no code.
        if (front.data.inMaintenance()) return sendError(ctx, Errors.maintenance);
        const parsed = parseWithdrawal(input.body as Record<string, unknown>, front, input.accountId);
        if ('status' in parsed) return sendError(ctx, parsed);
        void submitWithdrawal(front, ctx, input.accountId, parsed).catch((error: unknown) => {
          front.log.error({ err: error }, 'withdrawal failed');
          sendError(ctx, Errors.internal);
        });
      },
    },
  ];
}

async function submitWithdrawal(front: FrontContext, ctx: Parameters<Route['handle']>[0], accountId: number, w: ParsedWithdrawal): Promise<void> {
  const { intent } = w;
  let claim: TwoFactorClaim | null = null;
  if (!front.settings.isExempt(accountId, intent.blockchain, intent.address)) {
    if (w.twoFactorToken === null) return sendError(ctx, TWO_FACTOR_REQUIRED);
    const nowMs = Date.now();
    const verdict = await front.settings.acceptTwoFactorCode(accountId, w.twoFactorToken, nowMs);
    if (verdict.kind === 'locked') return sendError(ctx, twoFactorLocked(verdict.untilMs, nowMs));
    if (verdict.kind === 'invalid') return sendError(ctx, verdict.locked ? twoFactorInvalidNowLocked(front.settings.lockoutMs) : TWO_FACTOR_INVALID);
    claim = verdict.claim;
  }
  const digest = intentDigest(intent, randomBytes(16).toString('hex'));
  const key = intentKey(digest);
  // A refused withdrawal changes nothing: its stored intent goes, and its code may be used again.
  const undo = async (): Promise<void> => {
    await front.settings.removeIntent(key);
    if (claim !== null) await front.settings.releaseTwoFactorCode(claim);
  };
  await front.settings.putIntent(key, intent);
  if (ctx.aborted) {
    await undo();
    return;
  }
  engineCalls(front).withdraw({
    ok: (accepted) => {
      const record: WithdrawalRecord = {
        id: accepted.value, accountId, assetId: w.assetId, amountUnits: w.amountUnits, timeUs: accepted.timeUs,
        blockchain: intent.blockchain, address: intent.address, clientId: intent.clientId,
        status: 'pending', transactionHash: null, confirmedUs: null,
      };
      sendJson(ctx, 200, JSON.stringify(withdrawalJson(front.config, record)));
    },
    // Refused by the engine, or never submitted (engine busy): nothing will consume the intent
    // (the journal worker removes accepted ones), so it goes before the client hears.
    fail: (error) => {
      undo().then(
        () => sendError(ctx, error),
        (undoError: unknown) => {
          front.log.error({ err: undoError }, 'could not undo a refused withdrawal');
          sendError(ctx, error);
        },
      );
    },
  }, { accountId, assetId: w.assetId, amountUnits: w.amountUnits, intentDigest: digest, flags: w.flags });
}
