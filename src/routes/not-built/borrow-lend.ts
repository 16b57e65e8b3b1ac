// Margin and borrow/lend still to build: the markets' history and APY, a position's estimated
// liquidation price and the position history (the pools, positions, moves, interest payments
// and the borrow limit, src/routes/account.ts, are served: src/routes/borrow-lend.ts, src/routes/borrow-lend-history.ts; the collateral
// parameters: src/routes/collateral.ts).

import type { NotBuiltPath } from './index.js';

export const borrowLendPaths: readonly NotBuiltPath[] = [
  ['get', '/api/v1/borrowLend/markets/history'],
  ['get', '/api/v1/borrowLend/apy'],
  ['get', '/api/v1/borrowLend/position/liquidationPrice'],
  ['get', '/wapi/v1/history/borrowLend/positions'],
];
