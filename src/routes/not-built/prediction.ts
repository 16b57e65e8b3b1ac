// Prediction markets: events and their tags.

import type { NotBuiltPath } from './index.js';

export const predictionPaths: readonly NotBuiltPath[] = [
  ['get', '/api/v1/prediction'],
  ['get', '/api/v1/prediction/tags'],
];
