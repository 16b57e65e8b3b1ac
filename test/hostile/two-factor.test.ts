// Two-factor codes on withdrawals cannot be guessed: against the real server with two front
// threads, every request on a new connection (so requests of one account land on either thread),
// wrong codes lock the account's two-factor withdrawals after the limit, the lockout and the
// attempt counter survive kill -9, the lockout ends after its duration, an accepted code resets
// the counter, and one code sent several times at once is accepted exactly once. The store's
// rules are also checked directly with a clock the test controls.

import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open, type RootDatabase } from 'lmdb';
import {
  adminCli, createTestAccount, removeDir, sign, signed, signingString, startServer, tempDataDir, waitUntil,
  type ApiResponse, type RunningServer, type TestAccount,
} from '../helpers/server.js';
import { AccountSettingsStore, totpCode, totpStep } from '../../src/front/account-settings.js';
import { openHistoryDbs } from '../../engine/store/history-account.js';

const ARGS = ['--no-demo', '--front-threads', '2', '--speed-bump-ms', '0'];
const ADDRESS = 'So1anaDestinationAddress2222222222222222222';
const LIMIT = 5;

let lastTimestamp = 0;

/** A signed withdrawal on a connection of its own (no keep-alive), so the kernel picks the thread. */
async function withdraw(base: string, account: TestAccount, params: Record<string, string>): Promise<ApiResponse> {
  const timestamp = (lastTimestamp = Math.max(Date.now(), lastTimestamp + 1));
  const signature = sign(account.secretKey, signingString('withdraw', params, timestamp, 5000));
  const body = JSON.stringify(params);
  const url = new URL('/wapi/v1/capital/withdrawals', base);
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      agent: false,
      headers: {
        'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), Connection: 'close',
        'X-API-Key': account.publicKey, 'X-Signature': signature, 'X-Timestamp': String(timestamp), 'X-Window': '5000',
      },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = null;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = null;
        }
        resolve({ status: res.statusCode ?? 0, body: parsed, text });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

function base32Decode(text: string): Buffer {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const char of text) {
    value = (value << 5) | alphabet.indexOf(char);
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** A six-digit code that is no valid code of `secret` anywhere near now. */
function wrongCode(secret: Buffer, seed: number): string {
  const near = new Set<string>();
  const now = totpStep(Date.now());
  for (let step = now - 3; step <= now + 3; step++) near.add(totpCode(secret, step));
  for (let n = seed; ; n++) {
    const code = String(n % 1_000_000).padStart(6, '0');
    if (!near.has(code)) return code;
  }
}

interface Enrolled {
  account: TestAccount;
  secret: Buffer;
}

async function enroll(server: RunningServer): Promise<Enrolled> {
  const account = await createTestAccount(server.adminPort, ['USDC=1000']);
  const answer = await adminCli(server.adminPort, ['new-two-factor-secret', '--account', String(account.accountId)]);
  return { account, secret: base32Decode(answer.secret as string) };
}

const order = (twoFactorToken: string, clientId = 'w') => ({ symbol: 'USDC', blockchain: 'Solana', address: ADDRESS, quantity: '10', clientId, twoFactorToken });

async function usdc(server: RunningServer, account: TestAccount): Promise<string> {
  const balances = await signed(server.base, account, 'GET', '/api/v1/capital', 'balanceQuery');
  return balances.body.USDC.available as string;
}

/** Sends `count` wrong codes one after another; the answers' [status, code]. */
async function guess(server: RunningServer, who: Enrolled, count: number, seed: number): Promise<Array<[number, string]>> {
  const answers: Array<[number, string]> = [];
  for (let i = 0; i < count; i++) {
    const answer = await withdraw(server.base, who.account, order(wrongCode(who.secret, seed + i * 7919), `g-${seed}-${i}`));
    answers.push([answer.status, answer.body?.code]);
  }
  return answers;
}

const INVALID: [number, string] = [400, 'INVALID_TWO_FACTOR_CODE'];
const LOCKED: [number, string] = [429, 'TOO_MANY_REQUESTS'];

describe('two-factor attempts on the real server (default limits)', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ dataDir, args: ARGS });
  });
  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  it('locks two-factor withdrawals after five wrong codes, refusing even the right code', async () => {
    const who = await enroll(server);
    const answers = await guess(server, who, LIMIT + 3, 1000);
    expect(answers).toEqual([...Array<[number, string]>(LIMIT).fill(INVALID), LOCKED, LOCKED, LOCKED]);
    const right = await withdraw(server.base, who.account, order(totpCode(who.secret, totpStep(Date.now())), 'right'));
    expect([right.status, right.body.code]).toEqual(LOCKED);
    expect(right.body.message).toMatch(/two-factor/i);
    expect(await usdc(server, who.account)).toBe('1000');
    // Another account is not affected.
    const other = await enroll(server);
    const fine = await withdraw(server.base, other.account, order(totpCode(other.secret, totpStep(Date.now())), 'other'));
    expect(fine.status).toBe(200);
  });

  it('accepts one code sent several times at once exactly once', async () => {
    const accounts = await Promise.all([enroll(server), enroll(server), enroll(server)]);
    const copies = 4;
    const answers = await Promise.all(accounts.map((who) => {
      const code = totpCode(who.secret, totpStep(Date.now()));
      return Promise.all(Array.from({ length: copies }, (_, i) => withdraw(server.base, who.account, order(code, `same-${i}`))));
    }));
    for (const [index, who] of accounts.entries()) {
      const statuses = answers[index].map((a) => [a.status, a.body?.code ?? 'ok']).sort();
      expect(statuses).toEqual([[200, 'ok'], ...Array<[number, string]>(copies - 1).fill(INVALID)]);
      expect(await usdc(server, who.account)).toBe('990');
    }
  });
});

describe('two-factor attempts survive kill -9', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  it('still refuses what was refused or consumed before the crash', async () => {
    server = await startServer({ dataDir, args: ARGS });
    const locked = await enroll(server);
    expect(await guess(server, locked, LIMIT + 1, 2000)).toEqual([...Array<[number, string]>(LIMIT).fill(INVALID), LOCKED]);
    const counted = await enroll(server);
    expect(await guess(server, counted, LIMIT - 2, 3000)).toEqual(Array<[number, string]>(LIMIT - 2).fill(INVALID));
    const spent = await enroll(server);
    const code = totpCode(spent.secret, totpStep(Date.now()));
    expect((await withdraw(server.base, spent.account, order(code, 'spent-1'))).status).toBe(200);

    await server.stop('SIGKILL');
    server = await startServer({ dataDir, args: ARGS });

    const right = await withdraw(server.base, locked.account, order(totpCode(locked.secret, totpStep(Date.now())), 'after'));
    expect([right.status, right.body.code]).toEqual(LOCKED);
    expect(await guess(server, counted, 3, 4000)).toEqual([INVALID, INVALID, LOCKED]);
    const replayed = await withdraw(server.base, spent.account, order(code, 'spent-2'));
    expect([replayed.status, replayed.body.code]).toEqual(INVALID);
    expect(await usdc(server, spent.account)).toBe('990');
  });
});

describe('two-factor lockout ends (TWO_FACTOR_LOCKOUT_S=5)', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  const lockoutMs = 5000;
  beforeAll(async () => {
    server = await startServer({ dataDir, args: ARGS, env: { TWO_FACTOR_LOCKOUT_S: String(lockoutMs / 1000) } });
  });
  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  it('accepts the right code once the lockout has passed, and an accepted code resets the count', async () => {
    const who = await enroll(server);
    const lockedAt = Date.now();
    expect(await guess(server, who, LIMIT, 5000)).toEqual(Array<[number, string]>(LIMIT).fill(INVALID));
    const refused: Array<[number, string]> = [];
    const accepted = await waitUntil(async () => {
      const answer = await withdraw(server.base, who.account, order(totpCode(who.secret, totpStep(Date.now())), `retry-${refused.length}`));
      if (answer.status === 200) return answer;
      refused.push([answer.status, answer.body?.code]);
      return undefined;
    }, 'the lockout to end', 60_000);
    // Refused while locked, and accepted no earlier than the lockout allows.
    expect(refused.length).toBeGreaterThan(0);
    expect(new Set(refused.map((r) => r.join(' ')))).toEqual(new Set([LOCKED.join(' ')]));
    expect(Date.now() - lockedAt).toBeGreaterThanOrEqual(lockoutMs);
    expect(accepted.body.status).toBe('pending');

    // The count starts again from zero: limit - 1 wrong, a right code, then the limit again.
    expect(await guess(server, who, LIMIT - 1, 6000)).toEqual(Array<[number, string]>(LIMIT - 1).fill(INVALID));
    const next = await withdraw(server.base, who.account, order(totpCode(who.secret, totpStep(Date.now()) + 1), 'next'));
    expect(next.status).toBe(200);
    expect(await guess(server, who, LIMIT + 1, 7000)).toEqual([...Array<[number, string]>(LIMIT).fill(INVALID), LOCKED]);
  });
});

describe('two-factor attempt rules (store, controlled clock)', () => {
  const dir = tempDataDir();
  let root: RootDatabase;
  const secretOf = async (store: AccountSettingsStore, accountId: number) => base32Decode(await store.newTwoFactorSecret(accountId));
  beforeAll(() => {
    root = open({ path: join(dir, 'journal'), maxDbs: 16 });
  });
  afterAll(async () => {
    await root.close();
    removeDir(dir);
  });

  it('forgets wrong codes older than the lockout, locks at the limit, and unlocks after it', async () => {
    const store = new AccountSettingsStore(openHistoryDbs(root).settings, { maxFailures: 3, lockoutMs: 60_000 });
    const secret = await secretOf(store, 1);
    const t0 = 1_700_000_000_000;
    const wrong = (t: number) => wrongCodeAt(secret, t);
    expect(await store.acceptTwoFactorCode(1, wrong(t0), t0)).toEqual({ kind: 'invalid', locked: false });
    expect(await store.acceptTwoFactorCode(1, wrong(t0), t0 + 1000)).toEqual({ kind: 'invalid', locked: false });
    // The two wrong codes above are forgotten a lockout's length after the last of them.
    const later = t0 + 1000 + 60_000;
    expect(await store.acceptTwoFactorCode(1, wrong(later), later)).toEqual({ kind: 'invalid', locked: false });
    expect(await store.acceptTwoFactorCode(1, wrong(later), later + 1)).toEqual({ kind: 'invalid', locked: false });
    expect(await store.acceptTwoFactorCode(1, wrong(later), later + 2)).toEqual({ kind: 'invalid', locked: true });
    const right = (t: number) => totpCode(secret, totpStep(t));
    expect(await store.acceptTwoFactorCode(1, right(later + 3), later + 3)).toEqual({ kind: 'locked', untilMs: later + 2 + 60_000 });
    const unlocked = later + 2 + 60_000;
    expect(await store.acceptTwoFactorCode(1, right(unlocked), unlocked)).toMatchObject({ kind: 'accepted', claim: { accountId: 1, step: totpStep(unlocked) } });
  });

  it('does not let a malformed token or an account without a secret count as guesses', async () => {
    const store = new AccountSettingsStore(openHistoryDbs(root).settings, { maxFailures: 1, lockoutMs: 60_000 });
    const secret = await secretOf(store, 2);
    const t = 1_700_000_000_000;
    expect(await store.acceptTwoFactorCode(2, '12345', t)).toEqual({ kind: 'invalid', locked: false });
    expect(await store.acceptTwoFactorCode(3, '123456', t)).toEqual({ kind: 'invalid', locked: false });
    expect(await store.acceptTwoFactorCode(2, totpCode(secret, totpStep(t)), t)).toMatchObject({ kind: 'accepted' });
  });

  it('a new secret clears the lockout', async () => {
    const store = new AccountSettingsStore(openHistoryDbs(root).settings, { maxFailures: 1, lockoutMs: 60_000 });
    const first = await secretOf(store, 4);
    const t = 1_700_000_000_000;
    expect(await store.acceptTwoFactorCode(4, wrongCodeAt(first, t), t)).toEqual({ kind: 'invalid', locked: true });
    const second = await secretOf(store, 4);
    expect(await store.acceptTwoFactorCode(4, totpCode(second, totpStep(t)), t)).toMatchObject({ kind: 'accepted' });
  });
});

function wrongCodeAt(secret: Buffer, t: number): string {
  const near = new Set([-1, 0, 1].map((d) => totpCode(secret, totpStep(t) + d)));
  for (let n = 111_111; ; n++) if (!near.has(String(n))) return String(n);
}
