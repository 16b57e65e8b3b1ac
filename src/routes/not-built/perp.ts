// Perpetual futures: open interest, positions and their settlement (mark prices and funding
// rates: ../funding.ts; funding payments: ../funding-history.ts).

import type { NotBuiltPath } from './index.js';

export const perpPaths: readonly NotBuiltPath[] = [
  ['get', '/api/v1/openInterest'],
  ['get', '/wapi/v1/history/position'],
  ['get', '/wapi/v1/history/settlement'],
];
