// `npm run admin -- liquidation-demo` against a real server started as `npm start` starts it (the
// two demo accounts, two front threads, the 100 ms speed bump, the default index from the books,
// realization at mark every 10 s): the first demo account is the maker, the command creates the
// small account, opens its long, moves SOL's index down and watches the liquidation. Asserted by
// value, from the server and not from the command's own account: the small account's fills (its
// opening bid of 18 = 300 USDC × 9 / 150, then liquidation fills that close it), the public
// `liquidation` stream's message per liquidation fill of SOL_USDC_PERP, the account no longer
// liquidating, the insurance fund's fee line grown by exactly the liquidation fees (each book
// fill's fee less its 5 bps taker fee), SOL's index set back to 150, and exit code 0.

import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamClient } from '../helpers/stream-client.js';
import { ROOT, adminCli, removeDir, signed, startServer, tempDataDir, waitUntil, type RunningServer, type TestAccount } from '../helpers/server.js';

const execFileAsync = promisify(execFile);
const NPM_START_DEFAULTS = ['--realize-pnl-interval-ms', '10000'];
const USDC = 1_000_000n;

const micros = (text: string): bigint => {
  const negative = text.startsWith('-');
  const [whole, fraction = ''] = text.replace('-', '').split('.');
  const value = BigInt(whole) * USDC + BigInt(fraction.padEnd(6, '0'));
  return negative ? -value : value;
};

/** The first demo account's keys, from the server's log line announcing it. */
function firstDemoAccount(lines: string[]): TestAccount {
  for (const line of lines) {
    if (!line.includes('"demoAccount"')) continue;
    const { demoAccount } = JSON.parse(line) as { demoAccount: TestAccount };
    if (demoAccount.accountId === 1) return demoAccount;
  }
  throw new Error('the server logged no demo account 1');
}

describe('liquidation-demo against npm start\'s defaults', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let client: StreamClient;

  beforeAll(async () => {
    server = await startServer({ dataDir, args: NPM_START_DEFAULTS });
    client = await StreamClient.connect(server.port);
    client.subscribe(['liquidation']);
  });

  afterAll(async () => {
    client?.close();
    await server?.stop();
    removeDir(dataDir);
  });

  it('liquidates the small account\'s long and shows it on the wire', async () => {
    const maker = firstDemoAccount(server.lines);
    const { stdout } = await execFileAsync(process.execPath, [
      join(ROOT, 'dist/src/admin/cli.js'), 'liquidation-demo', '--port', String(server.port), '--admin-port', String(server.adminPort),
      '--maker-public-key', maker.publicKey, '--maker-secret-key', maker.secretKey,
    ], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
    const summary = JSON.parse(stdout.slice(stdout.lastIndexOf('\n{\n') + 1)) as Record<string, any>;
    const account = summary.account as TestAccount;
    expect(stdout).toContain(`  X-API-Key     ${account.publicKey}\n  secret        ${account.secretKey}\n`);
    expect(stdout).toMatch(/\naccount +liquidating: true \(GET \/api\/v1\/account\)/);
    expect(stdout).toMatch(/\naccount\.orderUpdate +\{"e":"orderFill".*"O":"LIQUIDATION_AUTOCLOSE"/);
    expect(stdout).toMatch(/\nliquidation +\{"e":"liquidation"/);
    expect(summary).toMatchObject({ symbol: 'SOL_USDC_PERP', startIndex: '150', openedQuantity: '18', finalQuantity: '0' });
    expect(account.accountId).toBeGreaterThan(2);

    const fills = async (fillType: string) => (await signed(server.base, account, 'GET', '/wapi/v1/history/fills', 'fillHistoryQueryAll', { sortDirection: 'Asc', fillType })).body as Array<Record<string, string>>;
    expect((await fills('User')).map((f) => [f.symbol, f.side, f.quantity])).toEqual([['SOL_USDC_PERP', 'Bid', '18']]);
    const liquidation = await fills('Liquidation');
    expect(liquidation.length).toBeGreaterThan(1);
    expect(liquidation.every((f) => f.symbol === 'SOL_USDC_PERP' && f.side === 'Ask')).toBe(true);
    expect(liquidation.every((f) => f.systemOrderType === 'LiquidatePositionOnBook' || f.systemOrderType === 'LiquidatePositionOnAdl')).toBe(true);
    expect(liquidation.filter((f) => f.systemOrderType === 'LiquidatePositionOnBook').length).toBeGreaterThan(0);
    // The liquidation fills sold the whole position: no position is left.
    expect(liquidation.reduce((sum, f) => sum + micros(f.quantity), 0n)).toBe(18n * USDC);
    expect((await signed(server.base, account, 'GET', '/api/v1/position', 'positionQuery', { symbol: 'SOL_USDC_PERP' })).status).toBe(404);
    expect((await signed(server.base, account, 'GET', '/api/v1/account', 'accountQuery')).body.liquidating).toBe(false);
    expect(summary.liquidationFills.map((f: Record<string, string>) => [f.tradeId, f.quantity])).toEqual(liquidation.map((f) => [f.tradeId, f.quantity]));

    // One public stream message per liquidation fill, this client's own subscription.
    await waitUntil(() => (client.on('liquidation').length >= liquidation.length ? true : undefined), 'a liquidation message per fill');
    expect(client.on('liquidation').map((m) => [m.s, m.S, m.q])).toEqual(liquidation.map((f) => ['SOL_USDC_PERP', 'Ask', Number(f.quantity).toFixed(2)]));

    // The fund took each book fill's liquidation fee: its fee less the 5 bps taker fee.
    const liquidationFees = liquidation
      .filter((f) => f.systemOrderType === 'LiquidatePositionOnBook')
      .reduce((sum, f) => {
        const notional = (micros(f.quantity) * micros(f.price)) / USDC;
        return sum + micros(f.fee) - (notional * 5n) / 10_000n;
      }, 0n);
    expect(liquidationFees).toBeGreaterThan(0n);
    const insurance = (await adminCli(server.adminPort, ['get-insurance'])).insurance as Array<Record<string, string>>;
    const usdc = insurance.find((line) => line.symbol === 'USDC')!;
    expect(micros(usdc.fees)).toBe(liquidationFees);
    expect(summary.insurance.after).toEqual(usdc);

    const prices = (await adminCli(server.adminPort, ['get-index-prices'])).prices as Array<Record<string, unknown>>;
    expect(prices.find((p) => p.symbol === 'SOL')).toMatchObject({ price: '150', source: 'Operator', stale: false });
  });
});
