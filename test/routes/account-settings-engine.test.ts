// Account settings as engine state, against the real server: a PATCH acknowledged before a
// kill -9 is there after the restart (the journal keeps it, LMDB holds no copy), a GET on any front
// thread shows it, bad values are refused and change nothing, and settings an older version kept
// in LMDB are moved into the engine once at start (src/front/legacy-settings.ts): each stored
// value the engine accepts is imported, one it would refuse is left out with a warning, and no
// stored record is left behind.

import { join } from 'node:path';
import { open } from 'lmdb';
import { afterAll, describe, expect, it } from 'vitest';
import { openHistoryDbs } from '../../engine/store/history-account.js';
import { parseSettingsUpdate } from '../../src/routes/account.js';
import { legacyUpdate } from '../../src/front/legacy-settings.js';
import {
  createTestAccount, removeDir, signed, startServer, tempDataDir, type RunningServer, type TestAccount,
} from '../helpers/server.js';

const ARGS = ['--no-demo', '--front-threads', '2', '--speed-bump-ms', '0'];

/** The account settings records older versions wrote to LMDB, read with the server stopped. */
function storedLegacySettings(dataDir: string): unknown[] {
  const root = open({ path: join(dataDir, 'journal'), maxDbs: 16 });
  try {
    const { settings } = openHistoryDbs(root);
    return [...settings.getRange({ start: ['settings'], end: ['settings', '\uffff'] })].map(({ key, value }) => [key, value]);
  } finally {
    void root.close();
  }
}

async function writeLegacySettings(dataDir: string, records: Array<[number, Record<string, unknown>]>): Promise<void> {
  const root = open({ path: join(dataDir, 'journal'), maxDbs: 16 });
  const { settings } = openHistoryDbs(root);
  for (const [accountId, value] of records) await settings.put(['settings', accountId], value);
  await root.close();
}

async function accountOf(server: RunningServer, account: TestAccount): Promise<Record<string, unknown>> {
  const answer = await signed(server.base, account, 'GET', '/api/v1/account', 'accountQuery');
  expect(answer.status).toBe(200);
  return answer.body as Record<string, unknown>;
}

describe('account settings in the engine', () => {
  const dirs: string[] = [];
  let server: RunningServer | undefined;
  afterAll(async () => {
    await server?.stop('SIGKILL');
    for (const dir of dirs) removeDir(dir);
  });

  it('keep a PATCH acknowledged before a kill -9, read back on every front thread', async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    server = await startServer({ dataDir, args: ARGS });
    const account = await createTestAccount(server.adminPort, ['USDC=100']);
    const other = await createTestAccount(server.adminPort, ['USDC=100']);
    expect(await accountOf(server, account)).toMatchObject({
      autoBorrowSettlements: false, autoLend: false, autoRepayBorrows: false, leverageLimit: '1', liquidating: false,
    });
    const patched = await signed(server.base, account, 'PATCH', '/api/v1/account', 'accountUpdate', { autoBorrowSettlements: true, leverageLimit: '12.5' });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({ autoBorrowSettlements: true, autoLend: false, autoRepayBorrows: false, leverageLimit: '12.5' });
    // A partial update leaves the rest as it was.
    const partial = await signed(server.base, account, 'PATCH', '/api/v1/account', 'accountUpdate', { autoRepayBorrows: true });
    expect(partial.body).toEqual({ autoBorrowSettlements: true, autoLend: false, autoRepayBorrows: true, leverageLimit: '12.5' });
    // Refused values change nothing.
    for (const body of [{ leverageLimit: '0.99' }, { leverageLimit: '100.01' }, { leverageLimit: '2.555' }, { leverageLimit: true }, { autoLend: 1 }]) {
      const refused = await signed(server.base, account, 'PATCH', '/api/v1/account', 'accountUpdate', body);
      expect([refused.status, refused.body.code], JSON.stringify(body)).toEqual([400, 'INVALID_CLIENT_REQUEST']);
    }
    // An empty body reads the settings.
    expect((await signed(server.base, account, 'PATCH', '/api/v1/account', 'accountUpdate', {})).body).toMatchObject({ autoRepayBorrows: true, leverageLimit: '12.5' });
    // Two front threads share the port: several reads land on both, and each sees the update.
    for (let read = 0; read < 6; read++) expect(await accountOf(server, account)).toMatchObject({ autoBorrowSettlements: true, autoRepayBorrows: true, leverageLimit: '12.5' });
    expect(await accountOf(server, other)).toMatchObject({ autoBorrowSettlements: false, leverageLimit: '1' });

    await server.stop('SIGKILL');
    expect(storedLegacySettings(dataDir)).toEqual([]); // the journal is the only place they live
    server = await startServer({ dataDir, args: ARGS });
    expect(await accountOf(server, account)).toMatchObject({
      autoBorrowSettlements: true, autoLend: false, autoRepayBorrows: true, leverageLimit: '12.5', liquidating: false,
    });
    expect(await accountOf(server, other)).toMatchObject({ autoBorrowSettlements: false, leverageLimit: '1' });
    await server.stop();
    server = undefined;
  });

  it('moves settings an older version stored in LMDB into the engine once, at start', async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    server = await startServer({ dataDir, args: ARGS });
    const first = await createTestAccount(server.adminPort, ['USDC=100']);
    const second = await createTestAccount(server.adminPort, ['USDC=100']);
    const third = await createTestAccount(server.adminPort, ['USDC=100']);
    expect(await server.stop()).toBe(0);
    // As the older version wrote them: whole records, the leverage limit as a canonical decimal.
    await writeLegacySettings(dataDir, [
      [first.accountId, { autoBorrowSettlements: false, autoLend: true, autoRepayBorrows: false, leverageLimit: '2.5' }],
      // A limit the engine refuses (above the platform's maximum) is left out; the flag goes in.
      [second.accountId, { autoBorrowSettlements: false, autoLend: false, autoRepayBorrows: true, leverageLimit: '250' }],
      // An account the engine does not know.
      [99, { autoLend: true }],
    ]);

    server = await startServer({ dataDir, args: ARGS });
    expect(await accountOf(server, first)).toMatchObject({ autoLend: true, autoRepayBorrows: false, leverageLimit: '2.5' });
    expect(await accountOf(server, second)).toMatchObject({ autoLend: false, autoRepayBorrows: true, leverageLimit: '1' });
    expect(await accountOf(server, third)).toMatchObject({ autoLend: false, leverageLimit: '1' });
    expect(server.lines.some((line) => line.includes('importing account settings'))).toBe(true);
    const warnings = server.lines.filter((line) => line.includes('"level":40'));
    expect(warnings.some((line) => line.includes(`"accountId":${second.accountId}`) && line.includes('leverageLimit=\\"250\\"'))).toBe(true);
    expect(warnings.some((line) => line.includes('"accountId":99'))).toBe(true);
    // A PATCH after the import is the account's newest choice, and a restart imports nothing again.
    await signed(server.base, first, 'PATCH', '/api/v1/account', 'accountUpdate', { autoLend: false });
    expect(await server.stop()).toBe(0);
    expect(storedLegacySettings(dataDir)).toEqual([]);
    server = await startServer({ dataDir, args: ARGS });
    expect(await accountOf(server, first)).toMatchObject({ autoLend: false, leverageLimit: '2.5' });
    expect(server.lines.some((line) => line.includes('importing account settings'))).toBe(false);
    await server.stop();
    server = undefined;
  });
});

describe('account settings parsing (pure)', () => {
  it('reads PATCH bodies against the platform maximum', () => {
    expect(parseSettingsUpdate({ autoLend: true, leverageLimit: '2.50' })).toEqual({ autoLend: true, leverageLimitHundredths: 250 });
    expect(parseSettingsUpdate({ leverageLimit: 20 })).toEqual({ leverageLimitHundredths: 2_000 });
    expect(parseSettingsUpdate({ leverageLimit: '100' })).toEqual({ leverageLimitHundredths: 10_000 });
    expect(parseSettingsUpdate({ leverageLimit: '25' }, 2_000)).toMatchObject({ status: 400, message: expect.stringContaining('from 1 to 20 ') });
    expect(parseSettingsUpdate({ leverageLimit: '1.001' })).toMatchObject({ status: 400 });
    expect(parseSettingsUpdate({ leverageLimit: '-2' })).toMatchObject({ status: 400 });
    expect(parseSettingsUpdate({ autoLend: null, leverageLimit: null })).toEqual({});
  });

  it('turns stored records into engine updates, leaving out what the engine would refuse', () => {
    expect(legacyUpdate({ autoLend: true, autoRepayBorrows: false, leverageLimit: '2.5' }, 10_000))
      .toEqual({ update: { autoLend: true, autoRepayBorrows: false, leverageLimitHundredths: 250 }, dropped: [] });
    expect(legacyUpdate({ autoBorrowSettlements: 'yes', leverageLimit: '30' }, 2_000))
      .toEqual({ update: {}, dropped: ['autoBorrowSettlements="yes"', 'leverageLimit="30"'] });
    expect(legacyUpdate({ leverageLimit: 5 }, 10_000)).toEqual({ update: {}, dropped: ['leverageLimit=5'] });
  });
});
