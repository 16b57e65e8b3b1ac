// Scheduled strategies and their history.

import type { NotBuiltPath } from './index.js';

export const strategyPaths: readonly NotBuiltPath[] = [
  ['get', '/api/v1/strategy'],
  ['post', '/api/v1/strategy'],
  ['delete', '/api/v1/strategy'],
  ['get', '/api/v1/strategies'],
  ['delete', '/api/v1/strategies'],
  ['get', '/wapi/v1/history/strategies'],
];
