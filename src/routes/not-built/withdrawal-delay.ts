// The account's withdrawal delay setting (withdrawals themselves are served).

import type { NotBuiltPath } from './index.js';

export const withdrawalDelayPaths: readonly NotBuiltPath[] = [
  ['get', '/wapi/v1/capital/withdrawals/delay'],
  ['post', '/wapi/v1/capital/withdrawals/delay'],
  ['patch', '/wapi/v1/capital/withdrawals/delay'],
];
