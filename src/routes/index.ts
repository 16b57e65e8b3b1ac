// The routes table of the public API: every route a front thread serves, registered in one place.

import type { Route } from '../front/http.js';
import type { FrontContext } from '../front/context.js';
import { systemRoutes } from './system.js';
import { marketRoutes } from './markets.js';
import { collateralRoutes } from './collateral.js';
import { depthRoutes } from './depth.js';
import { capitalRoutes } from './capital.js';
import { orderRoutes } from './order.js';
import { ordersRoutes } from './orders.js';
// Market history
import { tickerRoutes } from './ticker.js';
import { klinesRoutes } from './klines.js';
import { tradesRoutes } from './trades.js';
import { ordersBatchRoutes } from './orders-batch.js';
// Account and capital
import { historyRoutes } from './history.js';
import { capitalTransferRoutes } from './capital-transfers.js';
import { accountRoutes } from './account.js';
import { borrowLendRoutes } from './borrow-lend.js';
import { positionRoutes } from './position.js';
import { openInterestRoutes } from './open-interest.js';
import { borrowLendHistoryRoutes } from './borrow-lend-history.js';
import { borrowLendMarketHistoryRoutes } from './borrow-lend-market-history.js';
import { fundingRoutes } from './funding.js';
import { fundingHistoryRoutes } from './funding-history.js';
import { perpHistoryRoutes } from './perp-history.js';
import { notBuiltRoutes } from './not-built/index.js';

export function publicRoutes(front: FrontContext): Route[] {
  return [
    ...systemRoutes(front),
    ...marketRoutes(front),
    ...collateralRoutes(front),
    ...depthRoutes(front),
    ...capitalRoutes(front),
    ...orderRoutes(front),
    ...ordersRoutes(front),
    // Market history
    ...tickerRoutes(front),
    ...klinesRoutes(front),
    ...tradesRoutes(front),
    // Batch execution
    ...ordersBatchRoutes(front),
    // Account and capital
    ...historyRoutes(front),
    ...capitalTransferRoutes(front),
    ...accountRoutes(front),
    // Margin: borrow/lend
    ...borrowLendRoutes(front),
    ...positionRoutes(front),
    ...openInterestRoutes(front),
    ...borrowLendHistoryRoutes(front),
    ...borrowLendMarketHistoryRoutes(front),
    // Perpetuals: mark prices and funding
    ...fundingRoutes(front),
    ...fundingHistoryRoutes(front),
    ...perpHistoryRoutes(front),
    // Product families not offered yet: 501 NOT_IMPLEMENTED (see not-built/index.ts)
    ...notBuiltRoutes,
  ];
}
