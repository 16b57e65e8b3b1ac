// Borrow/lend still to build: the APY rates (the markets, their history, the positions and their
// history, moves, interest payments, the estimated liquidation price and the borrow limit are
// served: src/routes/borrow-lend.ts, borrow-lend-history.ts, borrow-lend-market-history.ts,
// src/routes/account.ts; the collateral parameters: src/routes/collateral.ts).

import type { NotBuiltPath } from './index.js';

export const borrowLendPaths: readonly NotBuiltPath[] = [
  ['get', '/api/v1/borrowLend/apy'],
];
