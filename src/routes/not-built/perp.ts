// Perpetual futures: mark prices, open interest, funding, positions and their settlement.

import type { NotBuiltPath } from './index.js';

export const perpPaths: readonly NotBuiltPath[] = [
  ['get', '/api/v1/markPrices'],
  ['get', '/api/v1/openInterest'],
  ['get', '/api/v1/fundingRates'],
  ['get', '/api/v1/position'],
  ['get', '/wapi/v1/history/funding'],
  ['get', '/wapi/v1/history/position'],
  ['get', '/wapi/v1/history/settlement'],
];
