// Endpoints of the API for product families this exchange does not offer yet: each answers
// 501 NOT_IMPLEMENTED with the JSON error shape, before any signature check (nothing is read or
// changed). Without them a client would get 404 RESOURCE_NOT_FOUND, which ccxt maps to
// ExchangeNotAvailable: a bot would take the venue for down and retry. One file per family
// lists its paths; this list registers them all.

import { sendError, type Route } from '../../front/http.js';
import { Errors } from '../../errors.js';
import { borrowLendPaths } from './borrow-lend.js';
import { rfqPaths } from './rfq.js';
import { strategyPaths } from './strategy.js';
import { predictionPaths } from './prediction.js';
import { securitiesPaths } from './securities.js';
import { vaultPaths } from './vaults.js';
import { withdrawalDelayPaths } from './withdrawal-delay.js';

/** A method and path of the API that answers 501 until its family is built. */
export type NotBuiltPath = readonly [Route['method'], string];

const FAMILIES: ReadonlyArray<readonly NotBuiltPath[]> = [
  borrowLendPaths,
  rfqPaths,
  strategyPaths,
  predictionPaths,
  securitiesPaths,
  vaultPaths,
  withdrawalDelayPaths,
];

export const notBuiltPaths: readonly NotBuiltPath[] = FAMILIES.flat();

export const notBuiltRoutes: Route[] = notBuiltPaths.map(([method, path]) => ({
  method,
  path,
  handle: (ctx) => sendError(ctx, Errors.notImplemented(`${method.toUpperCase()} ${path}`)),
}));
