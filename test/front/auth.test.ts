// Tests for src/auth.ts: signing strings against the wire reference's own examples (§2.2, §2.3),
// the raw and RFC 3986 encoded renderings, the validity window at its boundaries, and signature
// verification. The cross-check runs seeded random (key, message, signature) triples — valid,
// tampered and wrong-key — through libsodium, node:crypto and @noble/ed25519 (RFC 8032 mode) and
// requires all three, and both SignatureVerifier backends, to agree. Seed printed in test names;
// AUTH_SEED replays a run.

import { createHash, createPrivateKey, sign as cryptoSign, createPublicKey, verify as cryptoVerify } from 'node:crypto';
import { createRequire } from 'node:module';
import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import { describe, expect, it } from 'vitest';
import {
  FUTURE_TOLERANCE_MS,
  SignatureVerifier,
  batchSigningString,
  checkWindow,
  isCanonicalBase64,
  isStrongPublicKey,
  needsEncodedVariant,
  paramsFromBody,
  paramsFromQuery,
  percentEncode,
  signaturePrefix,
  signingString,
  type ParamValue,
} from '../../src/auth.js';

ed.hashes.sha512 = sha512;

interface Sodium {
  crypto_sign_seed_keypair(pk: Uint8Array, sk: Uint8Array, seed: Uint8Array): void;
  crypto_sign_detached(sig: Uint8Array, m: Uint8Array, sk: Uint8Array): void;
  crypto_sign_verify_detached(sig: Uint8Array, m: Uint8Array, pk: Uint8Array): boolean;
}
const sodium = createRequire(import.meta.url)('sodium-native') as Sodium;

const SEED = Number(process.env.AUTH_SEED ?? Date.now() % 1_000_000);

/** Deterministic bytes from the run seed and a label (SHA-256 in counter mode). */
function seededBytes(label: string, length: number): Buffer {
  const out = Buffer.alloc(length);
  for (let offset = 0, block = 0; offset < length; block++) {
    const chunk = createHash('sha256').update(`${SEED}:${label}:${block}`).digest();
    offset += chunk.copy(out, offset);
  }
  return out;
}

interface KeyPair {
  publicKey: Buffer;
  secretKey: Buffer;
  publicKeyB64: string;
}

function keyPair(label: string): KeyPair {
  const publicKey = Buffer.alloc(32);
  const secretKey = Buffer.alloc(64);
  sodium.crypto_sign_seed_keypair(publicKey, secretKey, seededBytes(label, 32));
  return { publicKey, secretKey, publicKeyB64: publicKey.toString('base64') };
}

function signBytes(pair: KeyPair, message: Uint8Array): Buffer {
  const signature = Buffer.alloc(64);
  sodium.crypto_sign_detached(signature, message, pair.secretKey);
  return signature;
}

function signB64(pair: KeyPair, message: string): string {
  return signBytes(pair, Buffer.from(message, 'utf8')).toString('base64');
}

const BACKENDS = ['sodium', 'node'] as const;

// ---------------------------------------------------------------------------------------------

describe('signingString: wire reference examples', () => {
  it('§2.2 ccxt createOrder body, raw and encoded forms identical', () => {
    const body = JSON.parse(
      '{"clientId":55555,"orderType":"Limit","postOnly":true,"price":"4000","quantity":"0.001","side":"Bid","symbol":"ETH_USDC"}',
    ) as Record<string, unknown>;
    const expected =
      'instruction=orderExecute&clientId=55555&orderType=Limit&postOnly=true&price=4000&quantity=0.001&side=Bid&symbol=ETH_USDC&timestamp=1750793021519&window=5000';
    const params = paramsFromBody(body);
    expect(signingString('orderExecute', params, '1750793021519', '5000', false)).toBe(expected);
    expect(signingString('orderExecute', params, '1750793021519', '5000', true)).toBe(expected);
    expect(needsEncodedVariant(params)).toBe(false);
  });

  it('§2.2 docs cancel example', () => {
    const body = JSON.parse('{"orderId": 28, "symbol": "BTC_USDT"}') as Record<string, unknown>;
    expect(signingString('orderCancel', paramsFromBody(body), '1614550000000', '5000', false)).toBe(
      'instruction=orderCancel&orderId=28&symbol=BTC_USDT&timestamp=1614550000000&window=5000',
    );
  });

  it('§2.3 docs batch example', () => {
    const orders = JSON.parse(
      '[{"symbol":"SOL_USDC_PERP","side":"Bid","orderType":"Limit","price":"141","quantity":"12"},' +
        '{"quantity":"11","price":"140","orderType":"Limit","side":"Bid","symbol":"SOL_USDC_PERP"}]',
    ) as Array<Record<string, unknown>>;
    const items = orders.map(paramsFromBody);
    const expected =
      'instruction=orderExecute&orderType=Limit&price=141&quantity=12&side=Bid&symbol=SOL_USDC_PERP&instruction=orderExecute&orderType=Limit&price=140&quantity=11&side=Bid&symbol=SOL_USDC_PERP&timestamp=1750793021519&window=5000';
    expect(batchSigningString('orderExecute', items, '1750793021519', '5000', false)).toBe(expected);
    expect(batchSigningString('orderExecute', items, '1750793021519', '5000', true)).toBe(expected);
  });

  it('no params: instruction, timestamp and window only', () => {
    expect(signingString('balanceQuery', [], '1614550000000', '5000', false)).toBe(
      'instruction=balanceQuery&timestamp=1614550000000&window=5000',
    );
    expect(signingString('subscribe', paramsFromQuery(''), '1', '60000', true)).toBe('instruction=subscribe&timestamp=1&window=60000');
  });

  it('batch edge forms: an item without params, and no items', () => {
    expect(batchSigningString('orderExecute', [[], [['a', '1']]], 'T', 'W', false)).toBe(
      'instruction=orderExecute&instruction=orderExecute&a=1&timestamp=T&window=W',
    );
    expect(batchSigningString('orderExecute', [], 'T', 'W', false)).toBe('timestamp=T&window=W');
  });
});

describe('signingString: ordering and rendering', () => {
  it('sorts by key without mutating the input', () => {
    const params: Array<[string, ParamValue]> = [
      ['symbol', 'SOL_USDC'],
      ['limit', '100'],
      ['marketType', 'SPOT'],
    ];
    const copy = params.map((p) => [...p]);
    expect(signingString('orderQueryAll', params, '1', '5000', false)).toBe(
      'instruction=orderQueryAll&limit=100&marketType=SPOT&symbol=SOL_USDC&timestamp=1&window=5000',
    );
    expect(params).toEqual(copy);
  });

  it('sorts in byte order: uppercase before lowercase, prefixes first, astral after U+FFFD', () => {
    const params: Array<[string, ParamValue]> = [
      ['b', 1],
      ['a', 1],
      ['B', 1],
      ['ab', 1],
      ['\u{1F600}', 1],
      ['\uFFFD', 1],
    ];
    const keys = signingString('x', params, 'T', 'W', false)
      .split('&')
      .slice(1, -2)
      .map((kv) => kv.split('=')[0]);
    // UTF-8 byte order: F0 9F.. (U+1F600) sorts after EF BF BD (U+FFFD); UTF-16 order would not.
    expect(keys).toEqual(['B', 'a', 'ab', 'b', '\uFFFD', '\u{1F600}']);
    const utf8Sorted = [...keys].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    expect(keys).toEqual(utf8Sorted);
  });

  it('renders booleans, numbers and null in the ccxt form', () => {
    const params: Array<[string, ParamValue]> = [
      ['t', true],
      ['f', false],
      ['n', 55555],
      ['d', 0.5],
      ['z', null],
    ];
    expect(signingString('x', params, 'T', 'W', false)).toBe('instruction=x&d=0.5&f=false&n=55555&t=true&z=&timestamp=T&window=W');
  });

  it('raw and encoded forms differ for ":" and spaces', () => {
    const params: Array<[string, ParamValue]> = [
      ['from', '2024-01-01T00:00:00'],
      ['note', 'a b,c'],
    ];
    expect(needsEncodedVariant(params)).toBe(true);
    expect(signingString('x', params, 'T', 'W', false)).toBe('instruction=x&from=2024-01-01T00:00:00&note=a b,c&timestamp=T&window=W');
    expect(signingString('x', params, 'T', 'W', true)).toBe(
      'instruction=x&from=2024-01-01T00%3A00%3A00&note=a%20b%2Cc&timestamp=T&window=W',
    );
  });

  it("percentEncode is encodeURIComponent with !'()* escaped", () => {
    const samples = ["!'()*", 'a b', 'x:y/z?q=1&r#', '~-._', 'é€😀', '+%', 'AZaz09'];
    const reference = (s: string) =>
      encodeURIComponent(s).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
    for (const s of samples) expect(percentEncode(s)).toBe(reference(s));
    expect(percentEncode("!'()*")).toBe('%21%27%28%29%2A');
    // A lone surrogate cannot come from a client that encodes; it must not throw either.
    expect(percentEncode('\uD800')).toBe('%EF%BF%BD');
  });

  it('needsEncodedVariant is false for symbols, decimals, ids and enums', () => {
    expect(
      needsEncodedVariant([
        ['symbol', 'SOL_USDC_PERP'],
        ['price', '0.001'],
        ['orderId', '1234567890123'],
        ['side', 'Ask'],
        ['clientId', 42],
        ['reduceOnly', false],
        ['triggerBy', null],
        ['x', '-1.5e-7'],
      ]),
    ).toBe(false);
    expect(needsEncodedVariant([['k e y', 'v']])).toBe(true);
  });
});

describe('paramsFromBody / paramsFromQuery', () => {
  it('body: top-level keys, nested values as JSON text', () => {
    const body = JSON.parse('{"symbol":"SOL_USDC","ids":[1,2],"opts":{"a":"b"},"n":null,"flag":false,"q":12}') as Record<string, unknown>;
    expect(paramsFromBody(body)).toEqual([
      ['symbol', 'SOL_USDC'],
      ['ids', '[1,2]'],
      ['opts', '{"a":"b"}'],
      ['n', null],
      ['flag', false],
      ['q', 12],
    ]);
  });

  it('query: percent-decoded values, "+" as space, leading "?" and empty parts ignored', () => {
    expect(paramsFromQuery('?symbol=SOL_USDC&limit=100')).toEqual([
      ['symbol', 'SOL_USDC'],
      ['limit', '100'],
    ]);
    expect(paramsFromQuery('a=x%20y&b=c%3Ad&c=+&&d')).toEqual([
      ['a', 'x y'],
      ['b', 'c:d'],
      ['c', ' '],
      ['d', ''],
    ]);
    expect(paramsFromQuery('')).toEqual([]);
  });

  it('a ccxt-style encoded query verifies only through the encoded variant', () => {
    const pair = keyPair('ccxt-query');
    const query = 'from=2024-01-01T00%3A00%3A00&symbol=SOL_USDC';
    // ccxt signs the same encoded text it puts in the URL.
    const clientSigned = 'instruction=fillHistoryQueryAll&' + query + '&timestamp=1700000000000&window=5000';
    const signature = signB64(pair, clientSigned);
    const params = paramsFromQuery(query);
    const verifier = new SignatureVerifier();
    const raw = signingString('fillHistoryQueryAll', params, '1700000000000', '5000', false);
    const encoded = signingString('fillHistoryQueryAll', params, '1700000000000', '5000', true);
    expect(encoded).toBe(clientSigned);
    expect(verifier.verify(pair.publicKeyB64, signature, raw)).toBe(false);
    expect(needsEncodedVariant(params)).toBe(true);
    expect(verifier.verify(pair.publicKeyB64, signature, encoded)).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------

describe('checkWindow', () => {
  const ts = 1_750_000_000_000;
  const tsText = String(ts);

  it('accepts up to and including ts + window, rejects one ms later (401 UNAUTHORIZED)', () => {
    expect(checkWindow(tsText, '5000', ts).ok).toBe(true);
    expect(checkWindow(tsText, '5000', ts + 5000).ok).toBe(true);
    expect(checkWindow(tsText, '5000', ts + 5001)).toEqual({ ok: false, status: 401, code: 'UNAUTHORIZED', message: 'Request has expired' });
    expect(checkWindow(tsText, '60000', ts + 60000).ok).toBe(true);
    expect(checkWindow(tsText, '1', ts + 1).ok).toBe(true);
    expect(checkWindow(tsText, '1', ts + 2).message).toBe('Request has expired');
  });

  it('uses a 5000 ms window when X-Window is absent', () => {
    expect(checkWindow(tsText, undefined, ts + 5000).ok).toBe(true);
    expect(checkWindow(tsText, undefined, ts + 5001).message).toBe('Request has expired');
  });

  it('tolerates a client clock ahead by FUTURE_TOLERANCE_MS and no more', () => {
    expect(FUTURE_TOLERANCE_MS).toBe(5000);
    expect(checkWindow(tsText, '5000', ts - FUTURE_TOLERANCE_MS).ok).toBe(true);
    expect(checkWindow(tsText, '5000', ts - FUTURE_TOLERANCE_MS - 1)).toEqual({
      ok: false,
      status: 401,
      code: 'UNAUTHORIZED',
      message: 'Request timestamp is in the future',
    });
  });

  it('rejects a window over 60000 or not positive with 400 INVALID_CLIENT_REQUEST', () => {
    expect(checkWindow(tsText, '60001', ts)).toEqual({
      ok: false,
      status: 400,
      code: 'INVALID_CLIENT_REQUEST',
      message: 'Window must be at most 60000',
    });
    expect(checkWindow(tsText, '0', ts)).toMatchObject({ ok: false, status: 400, code: 'INVALID_CLIENT_REQUEST' });
  });

  it.each(['', 'abc', '1.5', '-1', '+5000', ' 5000', '5000 ', '1e3', '0x10', '١'])('rejects X-Window %j as malformed (400)', (windowText) => {
    expect(checkWindow(tsText, windowText, ts)).toEqual({
      ok: false,
      status: 400,
      code: 'INVALID_CLIENT_REQUEST',
      message: 'Invalid X-Window header',
    });
  });

  it.each(['', 'abc', '1750000000000.5', '-1750000000000', '1.75e12', '1234567890123456', ' 1750000000000'])(
    'rejects X-Timestamp %j as malformed (400)',
    (timestampText) => {
      expect(checkWindow(timestampText, '5000', ts)).toEqual({
        ok: false,
        status: 400,
        code: 'INVALID_CLIENT_REQUEST',
        message: 'Invalid X-Timestamp header',
      });
    },
  );

  it('rejects a missing X-Timestamp as an authentication failure (401)', () => {
    expect(checkWindow(undefined, '5000', ts)).toMatchObject({ ok: false, status: 401, code: 'UNAUTHORIZED' });
  });
});

// ---------------------------------------------------------------------------------------------

describe('base64 and keys', () => {
  it('accepts only canonical padded standard base64 of the exact length', () => {
    const key = seededBytes('b64', 32);
    const text = key.toString('base64');
    expect(isCanonicalBase64(text, 32)).toBe(true);
    expect(isCanonicalBase64(text.slice(0, -1), 32)).toBe(false); // unpadded
    expect(isCanonicalBase64(key.toString('base64url'), 32)).toBe(false); // url-safe and unpadded
    expect(isCanonicalBase64(text.slice(0, 42) + '_=', 32)).toBe(false); // url-safe alphabet
    expect(isCanonicalBase64(' ' + text.slice(1), 32)).toBe(false);
    expect(isCanonicalBase64(seededBytes('b64', 33).toString('base64'), 32)).toBe(false);
    expect(isCanonicalBase64(seededBytes('b64', 31).toString('base64'), 32)).toBe(false);
    // 32 bytes leave 2 unused bits in the last character: "A" (0) is canonical, "B" (1) is not.
    const canonical = Buffer.alloc(32).toString('base64');
    expect(canonical.endsWith('AA=')).toBe(true);
    expect(isCanonicalBase64(canonical, 32)).toBe(true);
    expect(isCanonicalBase64(canonical.slice(0, 42) + 'B=', 32)).toBe(false);
    const signature = Buffer.alloc(64).toString('base64');
    expect(isCanonicalBase64(signature, 64)).toBe(true);
    expect(isCanonicalBase64(signature.slice(0, 85) + 'B==', 64)).toBe(false);
  });

  it('signaturePrefix decodes the first 9 bytes of a canonical signature as Buffer does', () => {
    const edges = [Buffer.alloc(64), Buffer.alloc(64, 0xff), Buffer.from(Array.from({ length: 64 }, (_, i) => (i * 37 + 11) & 0xff))];
    const samples = [...edges, ...Array.from({ length: 200 }, (_, i) => seededBytes(`prefix ${i}`, 64))];
    for (const bytes of samples) {
      const text = bytes.toString('base64');
      expect(isCanonicalBase64(text, 64)).toBe(true);
      expect(Buffer.from(signaturePrefix(text))).toEqual(bytes.subarray(0, 9));
    }
  });

  it('isStrongPublicKey rejects small-order and non-canonical keys, accepts real ones', () => {
    expect(isStrongPublicKey(keyPair('strong').publicKey)).toBe(true);
    const identity = Buffer.alloc(32);
    identity[0] = 1;
    expect(isStrongPublicKey(identity)).toBe(false);
    expect(isStrongPublicKey(Buffer.alloc(32))).toBe(false); // (0, y=0): order 4
    const nonCanonical = Buffer.alloc(32, 0xff);
    nonCanonical[31] = 0x7f; // y = 2^255 - 1 >= p
    expect(isStrongPublicKey(nonCanonical)).toBe(false);
    expect(isStrongPublicKey(Buffer.alloc(31))).toBe(false);
  });
});

describe.each(BACKENDS)('SignatureVerifier (%s)', (backend) => {
  const pair = keyPair('verifier');
  const other = keyPair('verifier-other');
  const message = 'instruction=orderExecute&clientId=55555&orderType=Limit&postOnly=true&price=4000&quantity=0.001&side=Bid&symbol=ETH_USDC&timestamp=1750793021519&window=5000';
  const signature = signB64(pair, message);

  it('accepts a valid signature, repeatedly (cached key)', () => {
    const verifier = new SignatureVerifier({ backend });
    expect(verifier.backend).toBe(backend);
    expect(verifier.verify(pair.publicKeyB64, signature, message)).toBe(true);
    expect(verifier.verify(pair.publicKeyB64, signature, message)).toBe(true);
    expect(verifier.cachedKeyCount).toBe(1);
  });

  it('rejects a wrong key, a tampered message and a tampered signature', () => {
    const verifier = new SignatureVerifier({ backend });
    expect(verifier.verify(other.publicKeyB64, signature, message)).toBe(false);
    expect(verifier.verify(pair.publicKeyB64, signature, message.replace('4000', '4001'))).toBe(false);
    expect(verifier.verify(pair.publicKeyB64, signature, message + ' ')).toBe(false);
    const flipped = Buffer.from(signature, 'base64');
    flipped[40] ^= 1;
    expect(verifier.verify(pair.publicKeyB64, flipped.toString('base64'), message)).toBe(false);
    // Still fine afterwards: no state leaks between calls.
    expect(verifier.verify(pair.publicKeyB64, signature, message)).toBe(true);
  });

  it('rejects malformed base64 and wrong lengths without throwing', () => {
    const verifier = new SignatureVerifier({ backend });
    const badKeys = [
      '',
      'not base64 at all',
      pair.publicKeyB64.slice(0, -1), // unpadded
      pair.publicKey.toString('base64url'),
      pair.publicKey.subarray(0, 31).toString('base64'),
      Buffer.concat([pair.publicKey, Buffer.alloc(1)]).toString('base64'),
      '\u0000'.repeat(44),
    ];
    for (const key of badKeys) expect(verifier.verify(key, signature, message), `key ${JSON.stringify(key)}`).toBe(false);
    expect(verifier.cachedKeyCount).toBe(0); // malformed keys are not cached
    const signatureBytes = Buffer.from(signature, 'base64');
    const badSignatures = [
      '',
      signature.slice(0, -2), // unpadded
      signatureBytes.toString('base64url'),
      signatureBytes.subarray(0, 63).toString('base64'),
      Buffer.concat([signatureBytes, Buffer.alloc(1)]).toString('base64'),
      signature.slice(0, 80) + '!!!!!!==',
      '=' + signature.slice(1),
    ];
    for (const sig of badSignatures) expect(verifier.verify(pair.publicKeyB64, sig, message), `signature ${JSON.stringify(sig)}`).toBe(false);
    expect(verifier.verify(pair.publicKeyB64, signature, message)).toBe(true);
  });

  it('verifies the UTF-8 bytes of non-ASCII and long messages', () => {
    const verifier = new SignatureVerifier({ backend });
    const unicode = 'instruction=x&note=é€😀&timestamp=1&window=5000';
    expect(verifier.verify(pair.publicKeyB64, signB64(pair, unicode), unicode)).toBe(true);
    const long = 'instruction=x&data=' + 'a'.repeat(100_000) + '&timestamp=1&window=5000';
    expect(verifier.verify(pair.publicKeyB64, signB64(pair, long), long)).toBe(true);
    const medium = 'instruction=x&data=' + 'b'.repeat(3000) + '&timestamp=1&window=5000';
    expect(verifier.verify(pair.publicKeyB64, signB64(pair, medium), medium)).toBe(true);
    expect(verifier.verify(pair.publicKeyB64, signB64(pair, medium), medium.slice(0, -1))).toBe(false);
  });

  it('keeps the key cache bounded and still verifies evicted keys', () => {
    const verifier = new SignatureVerifier({ backend, maxCachedKeys: 2 });
    const pairs = [keyPair('cache-0'), keyPair('cache-1'), keyPair('cache-2')];
    for (let round = 0; round < 2; round++) {
      for (const p of pairs) expect(verifier.verify(p.publicKeyB64, signB64(p, message), message)).toBe(true);
      expect(verifier.cachedKeyCount).toBe(2);
    }
  });

  it('rejects the small-order identity key with the trivial forgery R = identity, S = 0', () => {
    const identity = Buffer.alloc(32);
    identity[0] = 1;
    const forged = Buffer.alloc(64);
    forged[0] = 1;
    const verifier = new SignatureVerifier({ backend });
    expect(verifier.verify(identity.toString('base64'), forged.toString('base64'), message)).toBe(false);
  });

  it('rejects option values that make no sense', () => {
    expect(() => new SignatureVerifier({ backend, maxCachedKeys: 0 })).toThrow(RangeError);
  });
});

// ---------------------------------------------------------------------------------------------

/** node:crypto directly (no key screening), to see OpenSSL's own answer. */
function nodeVerify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  try {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey).toString('base64url') }, format: 'jwk' });
    return cryptoVerify(null, message, key, signature);
  } catch {
    return false;
  }
}

function nobleVerify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  try {
    return ed.verify(signature, message, publicKey, { zip215: false });
  } catch {
    return false;
  }
}

describe(`cross-check: libsodium, node:crypto and noble agree (seed ${SEED})`, () => {
  interface Triple {
    kind: string;
    publicKey: Buffer;
    message: Buffer;
    signature: Buffer;
  }

  /** A printable-ASCII message of 1 to 250 bytes, like a signing string. */
  function asciiMessage(i: number): Buffer {
    const bytes = seededBytes(`message-${i}`, 1 + (seededBytes(`len-${i}`, 1)[0] % 250));
    for (let j = 0; j < bytes.length; j++) bytes[j] = 32 + (bytes[j] % 95);
    return bytes;
  }

  function triples(): Triple[] {
    const out: Triple[] = [];
    for (let i = 0; i < 360; i++) {
      const pair = keyPair(`cross-${i}`);
      const message = asciiMessage(i);
      const signature = signBytes(pair, message);
      const pick = seededBytes(`pick-${i}`, 2);
      switch (i % 6) {
        case 0:
        case 1:
          out.push({ kind: 'valid', publicKey: pair.publicKey, message, signature });
          break;
        case 2: {
          const tampered = Buffer.from(message);
          tampered[pick[0] % tampered.length] ^= 1 << (pick[1] % 7); // stays ASCII
          out.push({ kind: 'tampered message', publicKey: pair.publicKey, message: tampered, signature });
          break;
        }
        case 3: {
          const tampered = Buffer.from(signature);
          tampered[pick[0] % 64] ^= 1 << (pick[1] % 8);
          out.push({ kind: 'tampered signature', publicKey: pair.publicKey, message, signature: tampered });
          break;
        }
        case 4:
          out.push({ kind: 'wrong key', publicKey: keyPair(`cross-wrong-${i}`).publicKey, message, signature });
          break;
        default:
          // Random bytes as key and signature: mostly invalid points and S >= L.
          out.push({ kind: 'random', publicKey: seededBytes(`rk-${i}`, 32), message, signature: seededBytes(`rs-${i}`, 64) });
      }
    }
    return out;
  }

  it('on valid, tampered, wrong-key and random triples', () => {
    const verifiers = BACKENDS.map((backend) => new SignatureVerifier({ backend }));
    const counts: Record<string, number> = {};
    for (const t of triples()) {
      const bySodium = sodium.crypto_sign_verify_detached(t.signature, t.message, t.publicKey);
      const byNode = nodeVerify(t.publicKey, t.message, t.signature);
      const byNoble = nobleVerify(t.publicKey, t.message, t.signature);
      const context = `seed ${SEED}, ${t.kind}, key ${t.publicKey.toString('hex')}, sig ${t.signature.toString('hex')}`;
      expect({ bySodium, byNode, byNoble }, context).toEqual({ bySodium: t.kind === 'valid', byNode: t.kind === 'valid', byNoble: t.kind === 'valid' });
      // Messages are ASCII, so the string the verifier takes has exactly these UTF-8 bytes.
      const text = t.message.toString('latin1');
      for (const verifier of verifiers) {
        expect(verifier.verify(t.publicKey.toString('base64'), t.signature.toString('base64'), text), `${verifier.backend}: ${context}`).toBe(
          t.kind === 'valid',
        );
      }
      counts[t.kind] = (counts[t.kind] ?? 0) + 1;
    }
    expect(counts).toEqual({ valid: 120, 'tampered message': 60, 'tampered signature': 60, 'wrong key': 60, random: 60 });
  });

  it('signatures made by node:crypto and noble verify under libsodium and the verifier', () => {
    const verifier = new SignatureVerifier();
    for (let i = 0; i < 20; i++) {
      const seed = seededBytes(`interop-${i}`, 32);
      const message = Buffer.from(`instruction=subscribe&timestamp=${1_700_000_000_000 + i}&window=5000`);
      const noblePublic = ed.getPublicKey(seed);
      const nobleSignature = ed.sign(message, seed);
      expect(sodium.crypto_sign_verify_detached(nobleSignature, message, noblePublic)).toBe(true);
      const nodeKey = createPrivateKey({
        key: { kty: 'OKP', crv: 'Ed25519', d: seed.toString('base64url'), x: Buffer.from(noblePublic).toString('base64url') },
        format: 'jwk',
      });
      const nodeSignature = cryptoSign(null, message, nodeKey);
      // ed25519 signing is deterministic: all three implementations give the same bytes.
      expect(Buffer.from(nodeSignature).equals(Buffer.from(nobleSignature))).toBe(true);
      expect(verifier.verify(Buffer.from(noblePublic).toString('base64'), nodeSignature.toString('base64'), message.toString())).toBe(true);
    }
  });

  it('documents the known disagreement: OpenSSL accepts a small-order key, libsodium and strict noble do not', () => {
    const identity = Buffer.alloc(32);
    identity[0] = 1;
    const forged = Buffer.alloc(64);
    forged[0] = 1;
    const message = Buffer.from('instruction=withdraw&amount=1000000&timestamp=1&window=5000');
    expect(sodium.crypto_sign_verify_detached(forged, message, identity)).toBe(false);
    expect(nobleVerify(identity, message, forged)).toBe(false);
    expect(nodeVerify(identity, message, forged)).toBe(true);
    // Which is why the node:crypto backend screens keys before use.
    expect(new SignatureVerifier({ backend: 'node' }).verify(identity.toString('base64'), forged.toString('base64'), message.toString())).toBe(false);
  });
});
