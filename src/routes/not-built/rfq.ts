// Requests for quote and quotes, and their history.

import type { NotBuiltPath } from './index.js';

export const rfqPaths: readonly NotBuiltPath[] = [
  ['get', '/api/v1/rfqs'],
  ['post', '/api/v1/rfq'],
  ['post', '/api/v1/rfq/accept'],
  ['post', '/api/v1/rfq/cancel'],
  ['post', '/api/v1/rfq/quote'],
  ['post', '/api/v1/rfq/refresh'],
  ['get', '/wapi/v1/history/rfq'],
  ['get', '/wapi/v1/history/quote'],
  ['get', '/wapi/v1/history/rfq/fill'],
  ['get', '/wapi/v1/history/quote/fill'],
];
