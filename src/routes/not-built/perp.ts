// Perpetual futures still to build: position history and settlement history (open positions,
// open interest, mark prices and funding are served: src/routes/position.ts, open-interest.ts,
// funding.ts, funding-history.ts).

import type { NotBuiltPath } from './index.js';

export const perpPaths: readonly NotBuiltPath[] = [
  ['get', '/wapi/v1/history/position'],
  ['get', '/wapi/v1/history/settlement'],
];
