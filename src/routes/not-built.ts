// Endpoints of the API that later issues build (perpetuals, borrow/lend, RFQ, strategies): each
// answers 501 NOT_IMPLEMENTED until then, before any signature check (nothing is read or
// changed). Without them a client would get 404 RESOURCE_NOT_FOUND, which ccxt maps to
// ExchangeNotAvailable: a bot would take the venue for down and retry. Vaults, prediction
// markets and the withdrawal delay are out of the wire reference's scope and stay 404.

import { sendError, type Route } from '../front/http.js';
import { Errors } from '../errors.js';

const NOT_BUILT: Array<[Route['method'], string]> = [
  // perpetuals and positions
  ['get', '/api/v1/markPrices'],
  ['get', '/api/v1/openInterest'],
  ['get', '/api/v1/fundingRates'],
  ['get', '/api/v1/position'],
  ['get', '/wapi/v1/history/funding'],
  ['get', '/wapi/v1/history/position'],
  ['get', '/wapi/v1/history/settlement'],
  // collateral parameters, borrow and lend
  ['get', '/api/v1/collateral'],
  ['get', '/api/v1/borrowLend/markets'],
  ['get', '/api/v1/borrowLend/positions'],
  ['get', '/api/v1/borrowLend/position/liquidationPrice'],
  ['post', '/api/v1/borrowLend'],
  ['get', '/api/v1/account/limits/borrow'],
  ['get', '/wapi/v1/history/borrowLend'],
  ['get', '/wapi/v1/history/borrowLend/positions'],
  ['get', '/wapi/v1/history/interest'],
  // RFQ and quotes
  ['get', '/api/v1/rfqs'],
  ['post', '/api/v1/rfq'],
  ['post', '/api/v1/rfq/accept'],
  ['post', '/api/v1/rfq/cancel'],
  ['post', '/api/v1/rfq/quote'],
  ['post', '/api/v1/rfq/refresh'],
  ['get', '/wapi/v1/history/rfq'],
  // scheduled strategies
  ['get', '/api/v1/strategy'],
  ['post', '/api/v1/strategy'],
  ['delete', '/api/v1/strategy'],
  ['get', '/api/v1/strategies'],
  ['delete', '/api/v1/strategies'],
  ['get', '/wapi/v1/history/strategies'],
];

export const notBuiltRoutes: Route[] = NOT_BUILT.map(([method, path]) => ({
  method,
  path,
  handle: (ctx) => sendError(ctx, Errors.notImplemented(`${method.toUpperCase()} ${path}`)),
}));
