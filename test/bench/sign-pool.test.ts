// The load generator's signing pool (bench/e2e/sign-pool.ts): piscina workers sign the same bytes
// the generator's own thread does, in order, and the signatures verify against the account keys.
import { createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { ConnectionFlow, DEFAULT_FLOW_MARKETS, Signer, signedRequest, type Account } from '../../bench/e2e/flow.js';
import { SigningPool } from '../../dist/bench/e2e/sign-pool.js';

function account(accountId: number): Account {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const x = publicKey.export({ format: 'jwk' }).x!;
  const d = privateKey.export({ format: 'jwk' }).d!;
  return { accountId, publicKey: Buffer.from(x, 'base64url').toString('base64'), secretKey: Buffer.from(d, 'base64url').toString('base64') };
}

describe('the load generator signing pool', () => {
  const pool = new SigningPool(2);
  afterAll(() => pool.close());

  it('signs every request as the generator thread does, in order, over batches and several accounts', async () => {
    const [maker, taker] = [new Signer(account(1)), new Signer(account(2))];
    const flow = new ConnectionFlow(maker, taker, DEFAULT_FLOW_MARKETS[0], 1, '127.0.0.1:1');
    const requests = flow.nextUnsigned(1_203);
    const pooled = await pool.sign(requests, '127.0.0.1:1');
    expect(pooled).toHaveLength(requests.length);
    requests.forEach((request, i) => {
      expect(pooled[i].kind).toBe(request.kind);
      expect(pooled[i].bytes.equals(signedRequest(request, '127.0.0.1:1', request.signer.signature(request.message)).bytes)).toBe(true);
    });
    const text = pooled[1_202].bytes.toString('utf8');
    const signature = /X-Signature: (\S+)\r\n/.exec(text)![1];
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(requests[1_202].signer.account.publicKey, 'base64').toString('base64url') }, format: 'jwk' });
    expect(verify(null, Buffer.from(requests[1_202].message), key, Buffer.from(signature, 'base64'))).toBe(true);
  });
});
