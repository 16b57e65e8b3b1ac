// Perpetual futures still to build: mark prices, funding, position history and settlement history
// (open positions and open interest are served: src/routes/position.ts, src/routes/open-interest.ts).

import type { NotBuiltPath } from './index.js';

export const perpPaths: readonly NotBuiltPath[] = [
  ['get', '/api/v1/markPrices'],
  ['get', '/api/v1/fundingRates'],
  ['get', '/wapi/v1/history/funding'],
  ['get', '/wapi/v1/history/position'],
  ['get', '/wapi/v1/history/settlement'],
];
