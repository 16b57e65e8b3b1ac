// Margin and borrow/lend still to build: the markets' history and APY, a position's estimated
// liquidation price, the borrow limit and the position history (the pools, positions, moves and
// interest payments are served: src/routes/borrow-lend.ts, src/routes/borrow-lend-history.ts; the collateral
// parameters: src/routes/collateral.ts).

import type { NotBuiltPath } from './index.js';

export const borrowLendPaths: readonly NotBuiltPath[] = [
  ['get', '/api/v1/borrowLend/markets/history'],
  ['get', '/api/v1/borrowLend/apy'],
  ['get', '/api/v1/borrowLend/position/liquidationPrice'],
  ['get', '/api/v1/account/limits/borrow'],
  ['get', '/wapi/v1/history/borrowLend/positions'],
];
