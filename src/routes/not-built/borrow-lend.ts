// Margin and borrow/lend: borrow/lend markets, rates, positions and their history, and the
// borrow limit (the collateral parameters are served: src/routes/collateral.ts).

import type { NotBuiltPath } from './index.js';

export const borrowLendPaths: readonly NotBuiltPath[] = [
  ['get', '/api/v1/borrowLend/markets'],
  ['get', '/api/v1/borrowLend/markets/history'],
  ['get', '/api/v1/borrowLend/apy'],
  ['get', '/api/v1/borrowLend/positions'],
  ['get', '/api/v1/borrowLend/position/liquidationPrice'],
  ['post', '/api/v1/borrowLend'],
  ['get', '/api/v1/account/limits/borrow'],
  ['get', '/wapi/v1/history/borrowLend'],
  ['get', '/wapi/v1/history/borrowLend/positions'],
  ['get', '/wapi/v1/history/interest'],
];
