// A signing worker of the load generator's pool (sign-pool.ts, run by piscina): ed25519 signatures
// of Backpack signing strings, with node:crypto as the client's own signing code does (flow.ts
// Signer). Keys are imported once per worker and kept by public key.

import { createPrivateKey, sign, type KeyObject } from 'node:crypto';

export interface SignTask {
  /** [publicKey, secretKey] pairs, base64, as the accounts file gives them. */
  keys: Array<[string, string]>;
  /** [index into keys, signing string] per request. */
  items: Array<[number, string]>;
}

const cache = new Map<string, KeyObject>();

function keyOf(publicKey: string, secretKey: string): KeyObject {
  let key = cache.get(publicKey);
  if (key === undefined) {
    const x = Buffer.from(publicKey, 'base64').toString('base64url');
    const d = Buffer.from(secretKey, 'base64').toString('base64url');
    key = createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', x, d }, format: 'jwk' });
    cache.set(publicKey, key);
  }
  return key;
}

/** The base64 signature of each item, in order. */
export default function signBatch(task: SignTask): string[] {
  const keys = task.keys.map(([publicKey, secretKey]) => keyOf(publicKey, secretKey));
  return task.items.map(([index, message]) => sign(null, Buffer.from(message, 'utf8'), keys[index]).toString('base64'));
}
