// Simulated chain addresses: deposit addresses per (account, blockchain) and the exchange's own
// wallet per blockchain. There is no chain connection: an address is a deterministic digest
// rendered in the chain's usual form (0x + 40 hex for EVM chains, bech32-looking bc1q… for
// Bitcoin, base58 of 32 bytes otherwise), so the same account always gets the same address and
// nothing needs storing. Funds sent to these addresses are not credited by anything: deposits
// arrive through the operator's deposit command.

import { createHash } from 'node:crypto';

const EVM = new Set(['Ethereum', 'Arbitrum', 'Avalanche', 'Base', 'Berachain', 'Bsc', 'HyperEVM', 'Linea', 'Monad', 'Optimism', 'Plasma', 'Polygon', 'Sei', 'Story', 'Stable']);
const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const BECH32 = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';

export function base58(bytes: Uint8Array): string {
  let value = BigInt(`0x${Buffer.from(bytes).toString('hex') || '0'}`);
  let out = '';
  while (value > 0n) {
    out = BASE58[Number(value % 58n)] + out;
    value /= 58n;
  }
  for (const byte of bytes) {
    if (byte !== 0) break;
    out = `1${out}`;
  }
  return out;
}

export function simulatedAddress(purpose: string, blockchain: string): string {
  const digest = createHash('sha256').update(`${purpose}:${blockchain}`).digest();
  if (EVM.has(blockchain)) return `0x${digest.subarray(0, 20).toString('hex')}`;
  if (blockchain === 'Bitcoin') return `bc1q${[...digest.subarray(0, 32)].map((b) => BECH32[b & 31]).join('').slice(0, 38)}`;
  return base58(digest);
}

export function depositAddress(accountId: number, blockchain: string): string {
  return simulatedAddress(`deposit:${accountId}`, blockchain);
}

export function exchangeWallet(blockchain: string): string {
  return simulatedAddress('exchange-wallet', blockchain);
}

/** A withdrawal destination we accept: 16 to 128 letters, digits and the separators addresses use. */
export function isPlausibleAddress(text: unknown): text is string {
  return typeof text === 'string' && /^[A-Za-z0-9:._-]{16,128}$/.test(text);
}
