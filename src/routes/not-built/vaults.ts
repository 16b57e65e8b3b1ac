// Vaults: listing, minting shares and requesting or cancelling a redemption.

import type { NotBuiltPath } from './index.js';

export const vaultPaths: readonly NotBuiltPath[] = [
  ['get', '/api/v1/vaults'],
  ['post', '/api/v1/vault/mint'],
  ['post', '/api/v1/vault/redeem'],
  ['delete', '/api/v1/vault/redeem'],
];
