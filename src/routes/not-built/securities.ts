// Tokenized securities: the securities listed, and the market sessions and holidays that decide
// when they trade.

import type { NotBuiltPath } from './index.js';

export const securitiesPaths: readonly NotBuiltPath[] = [
  ['get', '/api/v1/securities'],
  ['get', '/api/v1/market-sessions'],
  ['get', '/api/v1/market-holidays'],
];
