// The one table of rejections: every engine result code and every front-thread rejection maps to
// an API error code from the wire reference (ApiErrorCode) and an HTTP status, and renders as the
// JSON body `{"code", "message"}` that clients expect. Success bodies never carry a top-level
// `code` (ccxt treats any `code` key as an error).
//
// Status choice (the public API documents none per code): 400 for invalid input, limits and
// insufficient funds; 401 for authentication; 404 for a resource not found; 413 for an oversized
// body; 429/503 for overload; 503 for maintenance; 500 for a bug; 501 for what is not built yet.

import { ResultCode } from '../engine/bus/types.js';

export interface ApiError {
  status: number;
  code: string;
  message: string;
  /** Seconds the client should wait before retrying (sent as a Retry-After header). */
  retryAfterS?: number;
}

const STATUS_TEXT: Record<number, string> = {
  200: '200 OK',
  400: '400 Bad Request',
  401: '401 Unauthorized',
  403: '403 Forbidden',
  404: '404 Not Found',
  405: '405 Method Not Allowed',
  413: '413 Payload Too Large',
  429: '429 Too Many Requests',
  500: '500 Internal Server Error',
  501: '501 Not Implemented',
  503: '503 Service Unavailable',
};

export function statusLine(status: number): string {
  return STATUS_TEXT[status] ?? `${status} Error`;
}

export function apiError(status: number, code: string, message: string): ApiError {
  return { status, code, message };
}

export function errorBody(error: ApiError): string {
  return JSON.stringify({ code: error.code, message: error.message });
}

/** Engine rejections, indexed by ResultCode. */
const RESULT_ERRORS: Record<number, ApiError> = {
  [ResultCode.UnknownAccount]: apiError(401, 'UNAUTHORIZED', 'Unknown account'),
  [ResultCode.UnknownMarket]: apiError(400, 'INVALID_MARKET', 'Invalid market symbol'),
  [ResultCode.UnknownAsset]: apiError(400, 'INVALID_ASSET', 'Invalid asset'),
  [ResultCode.UnknownOrder]: apiError(404, 'RESOURCE_NOT_FOUND', 'Order not found'),
  [ResultCode.InsufficientFunds]: apiError(400, 'INSUFFICIENT_FUNDS', 'Insufficient funds'),
  [ResultCode.QuantityBelowMinimum]: apiError(400, 'INVALID_QUANTITY', 'Quantity is below the minimum'),
  [ResultCode.QuantityAboveMaximum]: apiError(400, 'INVALID_QUANTITY', 'Quantity is above the maximum'),
  [ResultCode.PriceBelowMinimum]: apiError(400, 'INVALID_PRICE', 'Price is below the minimum'),
  [ResultCode.PriceAboveMaximum]: apiError(400, 'INVALID_PRICE', 'Price is above the maximum'),
  [ResultCode.AmountOutOfRange]: apiError(400, 'INVALID_QUANTITY', 'Amount is out of range'),
  [ResultCode.OrderLimitReached]: apiError(400, 'ORDER_LIMIT', 'Open order limit reached'),
  [ResultCode.BookFull]: apiError(400, 'ORDER_LIMIT', 'Order book is full'),
  [ResultCode.DuplicateKey]: apiError(400, 'INVALID_CLIENT_REQUEST', 'Public key already registered'),
  [ResultCode.InvalidCommand]: apiError(400, 'INVALID_ORDER', 'Invalid order'),
  [ResultCode.MarketClosed]: apiError(400, 'INVALID_ORDER', 'Market is not open for this order'),
  [ResultCode.AccountLimitReached]: apiError(400, 'INVALID_CLIENT_REQUEST', 'Account limit reached'),
  [ResultCode.PostOnlyWouldTake]: apiError(400, 'INVALID_ORDER', 'Order would immediately match and take'),
  [ResultCode.PriceOutOfBand]: apiError(400, 'INVALID_PRICE', 'Price is too far from the last active price'),
  [ResultCode.WouldSelfTrade]: apiError(400, 'INVALID_ORDER', 'Order would trade with itself'),
  // Order book states and operator commands
  [ResultCode.MarketCancelOnly]: apiError(400, 'INVALID_ORDER', 'Order book is cancel-only'),
  [ResultCode.MarketLimitOnly]: apiError(400, 'INVALID_ORDER', 'Order book accepts limit orders only'),
  [ResultCode.MarketPostOnly]: apiError(400, 'INVALID_ORDER', 'Order book accepts post-only orders only'),
  [ResultCode.InvalidOrderBookState]: apiError(400, 'INVALID_CLIENT_REQUEST', 'Invalid orderBookState'),
  [ResultCode.FeeRateOutOfRange]: apiError(400, 'INVALID_CLIENT_REQUEST', 'Fee rates must be whole basis points from 0 to 10000'),
  // Capital
  [ResultCode.DustNotEligible]: apiError(400, 'PRECONDITION_FAILED', 'Not a dust balance: it must be positive, not in open orders and below the minimum order quantity'),
  [ResultCode.DustNoMarkPrice]: apiError(400, 'PRECONDITION_FAILED', 'The asset has no mark price yet (its USDC market has not traded)'),
  [ResultCode.DustTreasuryShort]: apiError(400, 'PRECONDITION_FAILED', 'Dust conversion is unavailable: the exchange cannot pay it out now'),
  [ResultCode.DustBalanceChanged]: apiError(400, 'PRECONDITION_FAILED', 'The balance changed during the conversion; retry'),
  // The whole exchange: the venue's answer to orders, cancels, borrows and withdrawals in maintenance
  [ResultCode.SystemMaintenance]: apiError(503, 'MAINTENANCE', 'System under maintenance'),
  [ResultCode.InvalidSystemState]: apiError(400, 'INVALID_CLIENT_REQUEST', 'Invalid system state'),
  // Perpetuals (engine/core/perp/position-limit.ts)
  [ResultCode.PositionLimit]: apiError(400, 'POSITION_LIMIT', 'The order would take the account\'s positions past its position limit'),
  // Margin: index prices (operator and feed)
  [ResultCode.IndexPriceNotPositive]: apiError(400, 'INVALID_PRICE', 'Index price must be positive'),
  [ResultCode.IndexPriceFixed]: apiError(400, 'INVALID_ASSET', 'The index of USDC is fixed at 1'),
  [ResultCode.InvalidIndexPriceSource]: apiError(400, 'INVALID_CLIENT_REQUEST', 'Invalid index price source'),
  // Margin
  [ResultCode.LeverageLimitOutOfRange]: apiError(400, 'INVALID_CLIENT_REQUEST', 'leverageLimit is outside the allowed range'),
  [ResultCode.MaxLeverageReached]: apiError(400, 'MAX_LEVERAGE_REACHED', 'The account already uses more leverage than this limit allows'),
  // Margin: borrow/lend (engine/core/margin/borrow-lend.ts)
  [ResultCode.LendPoolUnknown]: apiError(400, 'INVALID_ASSET', 'The asset has no borrow/lend market'),
  [ResultCode.LendPoolNotOpen]: apiError(400, 'INVALID_CLIENT_REQUEST', 'The borrow/lend market is not open for new borrows or lends'),
  [ResultCode.BorrowLendQuantityInvalid]: apiError(400, 'INVALID_QUANTITY', 'Quantity must be a positive multiple of the market\'s step size'),
  [ResultCode.LendRequiresBorrowRepay]: apiError(400, 'LEND_REQUIRES_BORROW_REPAY', 'The asset is borrowed: a lend repays it, and may not exceed the borrow'),
  [ResultCode.BorrowRequiresLendRedeem]: apiError(400, 'BORROW_REQUIRES_LEND_REDEEM', 'The asset is lent: a borrow redeems it, and may not exceed the lend'),
  [ResultCode.LendLimit]: apiError(400, 'LEND_LIMIT', 'Lend limit of the borrow/lend market reached'),
  [ResultCode.BorrowLimit]: apiError(400, 'BORROW_LIMIT', 'Borrow limit of the borrow/lend market reached'),
  [ResultCode.InsufficientSupply]: apiError(400, 'INSUFFICIENT_SUPPLY', 'Insufficient supply in the borrow/lend market'),
  [ResultCode.InsufficientMargin]: apiError(400, 'INSUFFICIENT_MARGIN', 'Insufficient margin'),
  [ResultCode.BorrowNoMarkPrice]: apiError(400, 'INSUFFICIENT_MARGIN', 'Stale prices block new borrowing: an asset of this borrow has no fresh index price'),
  [ResultCode.AccountLiquidating]: apiError(400, 'ACCOUNT_LIQUIDATING', 'The account is being liquidated: it may only repay, redeem or cancel'),
  // Liquidation: backstop liquidity providers (admin)
  [ResultCode.BackstopProviderAlreadySet]: apiError(400, 'INVALID_CLIENT_REQUEST', 'The account is a backstop liquidity provider already'),
  [ResultCode.BackstopProviderNotSet]: apiError(400, 'INVALID_CLIENT_REQUEST', 'The account is not a backstop liquidity provider'),
  [ResultCode.BackstopProvidersFull]: apiError(400, 'INVALID_CLIENT_REQUEST', 'The most backstop liquidity providers the engine keeps are set'),
};

export function resultError(code: ResultCode): ApiError {
  return RESULT_ERRORS[code] ?? apiError(500, 'SERVER_ERROR', `Unexpected engine result ${code}`);
}

/** Front-thread rejections: the request never reaches the engine. */
export const Errors = {
  notFound: apiError(404, 'RESOURCE_NOT_FOUND', 'Not found'),
  /** GET /api/v1/position with a symbol where the account has no position (the venue's 404). */
  positionNotFound: apiError(404, 'RESOURCE_NOT_FOUND', 'Position not found'),
  methodNotAllowed: apiError(405, 'INVALID_CLIENT_REQUEST', 'Method not allowed'),
  bodyTooLarge: apiError(413, 'INVALID_CLIENT_REQUEST', 'Request body too large'),
  conflictingContentLength: apiError(400, 'INVALID_CLIENT_REQUEST', 'Conflicting Content-Length headers'),
  malformedJson: apiError(400, 'INVALID_CLIENT_REQUEST', 'Malformed JSON body'),
  bodyNotObject: apiError(400, 'INVALID_CLIENT_REQUEST', 'Request body must be a JSON object'),
  missingApiKey: apiError(401, 'UNAUTHORIZED', 'Missing X-API-Key, X-Signature or X-Timestamp header'),
  unknownApiKey: apiError(401, 'UNAUTHORIZED', 'Invalid API key'),
  invalidSignature: apiError(401, 'INVALID_SIGNATURE', 'Invalid signature'),
  engineBusy: apiError(503, 'TOO_MANY_REQUESTS', 'Engine is busy: the inbound queue is full, retry'),
  tooManyPending: apiError(503, 'TOO_MANY_REQUESTS', 'Too many requests in flight on this connection thread, retry'),
  internal: apiError(500, 'SERVER_ERROR', 'Internal error'),
  historyBusy: apiError(503, 'TOO_MANY_REQUESTS', 'Too many history requests waiting on this connection thread, retry'),
  shuttingDown: apiError(503, 'MAINTENANCE', 'Server is shutting down'),
  /** What the engine answers while in maintenance, given at once by the front that knows it. */
  maintenance: apiError(503, 'MAINTENANCE', 'System under maintenance'),
  notImplemented: (what: string) => apiError(501, 'NOT_IMPLEMENTED', `${what} is not implemented yet`),
  invalid: (message: string) => apiError(400, 'INVALID_CLIENT_REQUEST', message),
  invalidMarket: (symbol: string) => apiError(400, 'INVALID_MARKET', `Invalid market symbol: ${symbol}`),
  invalidOrder: (message: string) => apiError(400, 'INVALID_ORDER', message),
  invalidPrice: (message: string) => apiError(400, 'INVALID_PRICE', message),
  invalidQuantity: (message: string) => apiError(400, 'INVALID_QUANTITY', message),
  invalidAsset: (symbol: string) => apiError(400, 'INVALID_ASSET', `Invalid asset: ${symbol}`),
  // Account, capital, replay protection
  requestReplayed: apiError(401, 'UNAUTHORIZED', 'Request replayed: this signature was already used'),
  signedBeforeRestart: apiError(401, 'UNAUTHORIZED', 'Request signed before the server restarted; sign it again'),
  replayTableFull: apiError(429, 'TOO_MANY_REQUESTS', 'Too many signed requests in flight within their windows, retry'),
  preconditionFailed: (message: string) => apiError(400, 'PRECONDITION_FAILED', message),
  // Request rate limits (src/front/rate-limits.ts)
  addressRateLimited: (retryAfterS: number): ApiError => ({ ...apiError(429, 'TOO_MANY_REQUESTS', 'Rate limit exceeded: too many requests from this address'), retryAfterS }),
  keyRateLimited: (retryAfterS: number): ApiError => ({ ...apiError(429, 'TOO_MANY_REQUESTS', 'Rate limit exceeded: too many requests for this API key'), retryAfterS }),
  tooManyConnections: apiError(429, 'TOO_MANY_REQUESTS', 'Too many WebSocket connections from this address'),
  connectionTableFull: apiError(503, 'TOO_MANY_REQUESTS', 'Too many client addresses connected, retry'),
};
