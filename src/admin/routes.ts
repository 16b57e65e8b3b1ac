// The operator's endpoint, served by front thread 0 on a separate port bound to 127.0.0.1 only:
// create accounts (register an ed25519 public key) and credit deposits. Both are engine commands,
// sequenced and journaled like any other, and answered once durable.
//
//   POST /admin/accounts  {"publicKey": "<base64 32 bytes>"}            → {"accountId", "publicKey"}
//   POST /admin/deposits  {"accountId": n, "asset": "USDC", "quantity": "100"} → {"accountId", "asset", "quantity"}
//   GET  /admin/status    → {"status": "ok" | "stalled", "stallMs", "pipeline": what each thread is
//                           doing (engine, journal, queued commands, seqLast, seqDurable, how far
//                           each ring consumer is behind)}
//   POST /admin/snapshot  → {"snapshotSeq": n}   (a Snapshot command; the journal worker
//                           writes the file once n is durable and logs "snapshot written")
//   POST /admin/markets/state {"symbol": "SOL_USDC", "orderBookState": "Closed"}
//                         → {"symbol", "orderBookState", "cancelledOrders"}
//   POST /admin/accounts/fees {"accountId": n, "makerFeeBps": 2, "takerFeeBps": 5}
//                         → {"accountId", "makerFeeBps", "takerFeeBps"}
//   GET  /admin/accounts/fees?accountId=n → {"accountId", "makerFeeBps", "takerFeeBps"}
// (order book states and fee rates; what each state does is in engine/core/operator.ts)
//   POST /admin/maintenance {"enabled": true} → {"maintenance": true}  (SetSystemState; what
//                         maintenance refuses is in engine/core/system.ts)
//   POST /admin/index-prices {"prices": {"SOL": "150.25"}, "source": "Operator"} → the prices set
//   GET  /admin/index-prices → every asset's index price, its source, age and staleness
//        (index-price-routes.ts; the rules are in engine/core/margin/index-prices.ts)
//   GET  /admin/insurance → every asset's insurance fund lines (fund, fees, covered, socialized, deposited)
//   POST /admin/insurance {"asset": "USDC", "quantity": "1000"} → the asset's lines after the deposit
//        (insurance-routes.ts; the fund's rules are in engine/core/liquidation/)
//   GET  /admin/backstop → the backstop liquidity providers, in the order they take positions
//   POST /admin/backstop {"action": "set" | "remove", "accountId": n} → the providers after the change
//        (backstop-routes.ts; the rules are in engine/core/liquidation/backstop.ts)
//   POST /admin/address-book {"accountId": n, "blockchain": "Solana", "address": "..."}  → the entry
//        marks a withdrawal address two-factor exempt for that account
//   POST /admin/two-factor {"accountId": n}  → {"accountId", "secret" (base32), "otpauthUri"}
//        sets a new two-factor (TOTP) secret for the account's withdrawals
//   GET  /metrics         → Prometheus text exposition (metrics.ts)
//   GET  /admin/health    → {"ready", "live", "threads": {engine, journal, front-0…: {live, state,
//                           lastProgressAgeMs}}}, 200 when live and ready, else 503 (health.ts)
//
// Being reachable only from the machine itself is the whole of its access control.

import { ORDER_BOOK_STATE } from '../wire/enums.js';
import { SystemState } from '../../engine/bus/types.js';
import { Errors, apiError } from '../errors.js';
import { sendError, sendJson, type RequestContext, type Route } from '../front/http.js';
import type { FrontContext } from '../front/context.js';
import { engineCalls, replyTo, type Accepted, type Reply } from '../front/engine-calls/index.js';
import { parseAssetUnits } from '../wire/market-codec.js';
import { isCanonicalBase64, isStrongPublicKey } from '../auth.js';
import { isPlausibleAddress } from '../wire/addresses.js';
import type { Registry } from 'prom-client';
import type { HealthReport } from './health.js';
import { indexPriceRoutes } from './index-price-routes.js';
import { insuranceRoutes } from './insurance-routes.js';
import { backstopRoutes } from './backstop-routes.js';

/** The operating endpoints' sources, built by the front thread that serves the admin port. */
export interface Operations {
  registry: Registry;
  health(): HealthReport;
}

/** Answers the request with the JSON `onOk` makes of the command's result value. */
function sendResult(ctx: RequestContext, onOk: (value: number) => unknown): Reply<Accepted> {
  return replyTo(ctx, (accepted) => sendJson(ctx, 200, JSON.stringify(onOk(accepted.value))));
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

function isAccountId(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 0xffffffff;
}

function isFeeBps(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 10_000;
}

/** Order book state, fee rate and maintenance commands. */
function operatorRoutes(front: FrontContext): Route[] {
  return [
    {
      method: 'post',
      path: '/admin/markets/state',
      handle: (ctx, input) => {
        const body = (input.body ?? {}) as Record<string, unknown>;
        const market = typeof body.symbol === 'string' ? front.marketsBySymbol.get(body.symbol) : undefined;
        if (!market) {
          sendError(ctx, Errors.invalidMarket(String(body.symbol).slice(0, 40)));
          return;
        }
        const state = ORDER_BOOK_STATE.value(body.orderBookState);
        if (state === undefined) {
          sendError(ctx, Errors.invalid(`orderBookState must be one of ${ORDER_BOOK_STATE.names.join(', ')}`));
          return;
        }
        engineCalls(front).setMarketState(
          sendResult(ctx, (cancelledOrders) => ({ symbol: market.symbol, orderBookState: ORDER_BOOK_STATE.name(state), cancelledOrders })),
          { marketId: market.spec.marketId, state });
      },
    },
    {
      method: 'post',
      path: '/admin/accounts/fees',
      handle: (ctx, input) => {
        const body = (input.body ?? {}) as Record<string, unknown>;
        if (!isAccountId(body.accountId)) {
          sendError(ctx, Errors.invalid('accountId must be a positive integer'));
          return;
        }
        if (!isFeeBps(body.makerFeeBps) || !isFeeBps(body.takerFeeBps)) {
          sendError(ctx, Errors.invalid('makerFeeBps and takerFeeBps must be whole basis points from 0 to 10000'));
          return;
        }
        const { accountId, makerFeeBps, takerFeeBps } = body;
        engineCalls(front).setFeeRates(replyTo(ctx, (rates) => sendJson(ctx, 200, JSON.stringify(rates))), { accountId, makerFeeBps, takerFeeBps });
      },
    },
    {
      method: 'get',
      path: '/admin/accounts/fees',
      handle: (ctx, input) => {
        const text = input.query.get('accountId') ?? '';
        const accountId = /^\d{1,10}$/.test(text) ? Number(text) : NaN;
        if (!isAccountId(accountId)) {
          sendError(ctx, Errors.invalid('accountId must be a positive integer'));
          return;
        }
        engineCalls(front).queryFeeRates(replyTo(ctx, (rates) => sendJson(ctx, 200, JSON.stringify(rates))), { accountId });
      },
    },
    {
      method: 'post',
      path: '/admin/maintenance',
      handle: (ctx, input) => {
        const enabled = ((input.body ?? {}) as Record<string, unknown>).enabled;
        if (typeof enabled !== 'boolean') return sendError(ctx, Errors.invalid('enabled must be true or false'));
        engineCalls(front).setSystemState(sendResult(ctx, () => ({ maintenance: enabled })), { state: enabled ? SystemState.Maintenance : SystemState.Ok });
      },
    },
  ];
}

/** GET /metrics and GET /admin/health. */
function operatingRoutes(ops: Operations): Route[] {
  return [
    {
      method: 'get',
      path: '/metrics',
      handle: (ctx) => {
        ops.registry.metrics()
          .then((text) => sendJson(ctx, 200, text, ops.registry.contentType))
          .catch(() => sendError(ctx, apiError(500, 'SERVER_ERROR', 'Could not collect the metrics')));
      },
    },
    {
      method: 'get',
      path: '/admin/health',
      handle: (ctx) => {
        const report = ops.health();
        sendJson(ctx, report.live && report.ready ? 200 : 503, JSON.stringify(report));
      },
    },
  ];
}

export function adminRoutes(front: FrontContext, ops: Operations | null = null): Route[] {
  return [
    ...(ops ? operatingRoutes(ops) : []), ...operatorRoutes(front), ...indexPriceRoutes(front), ...insuranceRoutes(front), ...backstopRoutes(front),
    {
      method: 'get',
      path: '/admin/status',
      handle: (ctx) => {
        const stallMs = front.link.stallMs();
        sendJson(ctx, 200, JSON.stringify({ status: stallMs === 0 ? 'ok' : 'stalled', stallMs, pipeline: front.link.pipeline() }));
      },
    },
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
        engineCalls(front).createAccount(sendResult(ctx, (accountId) => ({ accountId, publicKey: body.publicKey })), { key });
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
        engineCalls(front).deposit(sendResult(ctx, () => ({ accountId, asset: asset.symbol, quantity: body.quantity })),
          { accountId, assetId: front.config.assets.indexOf(asset), amountUnits: units });
      },
    },
    // The operator's snapshot trigger.
    {
      method: 'post',
      path: '/admin/snapshot',
      handle: (ctx) => {
        engineCalls(front).snapshot(sendResult(ctx, (snapshotSeq) => ({ snapshotSeq })));
      },
    },
    ...withdrawalSettingsRoutes(front),
  ];
}

/** The withdrawal address book and two-factor secrets. */
function withdrawalSettingsRoutes(front: FrontContext): Route[] {
  return [
    {
      method: 'post',
      path: '/admin/address-book',
      handle: (ctx, input) => {
        const body = (input.body ?? {}) as Record<string, unknown>;
        const accountId = body.accountId;
        if (!isAccountId(accountId) || !front.data.hasAccount(accountId)) return sendError(ctx, Errors.invalid('accountId must name an account'));
        if (typeof body.blockchain !== 'string' || !front.config.assets.some((a) => a.blockchain === body.blockchain)) {
          return sendError(ctx, Errors.invalid('blockchain must be one the configured assets use'));
        }
        if (!isPlausibleAddress(body.address)) return sendError(ctx, Errors.invalid('address must be 16 to 128 letters, digits or : . _ -'));
        const entry = { accountId, blockchain: body.blockchain, address: body.address, twoFactorExempt: true };
        front.settings.markExempt(accountId, body.blockchain, body.address)
          .then(() => sendJson(ctx, 200, JSON.stringify(entry)))
          .catch(() => sendError(ctx, apiError(500, 'SERVER_ERROR', 'Could not store the setting')));
      },
    },
    {
      method: 'post',
      path: '/admin/two-factor',
      handle: (ctx, input) => {
        const body = (input.body ?? {}) as Record<string, unknown>;
        const accountId = body.accountId;
        if (!isAccountId(accountId) || !front.data.hasAccount(accountId)) return sendError(ctx, Errors.invalid('accountId must name an account'));
        front.settings.newTwoFactorSecret(accountId)
          .then((secret) => sendJson(ctx, 200, JSON.stringify({
            accountId, secret, otpauthUri: `otpauth://totp/open-exchange:account-${accountId}?secret=${secret}&issuer=open-exchange`,
          })))
          .catch(() => sendError(ctx, apiError(500, 'SERVER_ERROR', 'Could not store the setting')));
      },
    },
  ];
}
