// `npm run admin -- <command>`: the operator's command line, talking to the running server's
// admin endpoint on 127.0.0.1 (port from --admin-port, ADMIN_PORT, or 8081). Prints JSON.
//
//   create-account [--public-key <base64>] [--deposit ASSET=QTY ...]
//   deposit --account <id> --asset <ASSET> --quantity <QTY>
//   snapshot
//   set-market-state --symbol <SYMBOL> --state <Open|Closed|CancelOnly|LimitOnly|PostOnly>
//   set-fee-rates --account <id> --maker-bps <N> --taker-bps <N>
//   get-fee-rates --account <id>
//   maintenance on|off
//   set-index-price ASSET=PRICE ...   (USDC per whole unit; POST /admin/index-prices, source Operator)
//   get-index-prices
//   deposit-insurance --asset <ASSET> --quantity <QTY>   (POST /admin/insurance)
//   get-insurance                                        (GET /admin/insurance)
//   set-backstop-provider --account <id>                 (POST /admin/backstop, action set)
//   remove-backstop-provider --account <id>              (POST /admin/backstop, action remove)
//   get-backstop                                         (GET /admin/backstop)
//   add-withdrawal-address --account <id> --blockchain <CHAIN> --address <ADDRESS>
//   new-two-factor-secret --account <id>
//   backup --to <DIR> [--data-dir <DIR>]   (no admin endpoint: copies the data directory itself,
//                                          see src/admin/backup.ts)
//   liquidation-demo [--port N] [--host H] [--maker-public-key K --maker-secret-key S]
//                    [--deposit USDC] [--leverage N] [--start-price P] [--step-bps N] [--max-steps N]
//                    (a perpetual position liquidated end to end, see src/admin/liquidation-demo.ts;
//                    the public API on --port, PORT or 8080, at --host or 127.0.0.1)

import { resolve } from 'node:path';
import { BackupError, backupDataDir } from './backup.js';
import { ApiError } from './api-client.js';
import { liquidationDemo, toHundredths } from './liquidation-demo.js';
import {
  AdminError, adminRequest, changeBackstopProvider, createAccount, deposit, depositInsurance, getBackstop, getFeeRates, getIndexPrices, getInsurance, setFeeRates, setIndexPrices, setMaintenance, setMarketState, type Deposit,
} from './client.js';

const USAGE = `usage:
  npm run admin -- create-account [--public-key <base64>] [--deposit ASSET=QTY ...] [--admin-port N]
  npm run admin -- deposit --account <id> --asset <ASSET> --quantity <QTY> [--admin-port N]
  npm run admin -- snapshot [--admin-port N]
  npm run admin -- set-market-state --symbol <SYMBOL> --state <Open|Closed|CancelOnly|LimitOnly|PostOnly> [--admin-port N]
  npm run admin -- set-fee-rates --account <id> --maker-bps <N> --taker-bps <N> [--admin-port N]
  npm run admin -- get-fee-rates --account <id> [--admin-port N]
  npm run admin -- maintenance on|off [--admin-port N]
  npm run admin -- set-index-price ASSET=PRICE [ASSET=PRICE ...] [--admin-port N]   (e.g. SOL=150.25 BTC=97000.5)
  npm run admin -- get-index-prices [--admin-port N]
  npm run admin -- deposit-insurance --asset <ASSET> --quantity <QTY> [--admin-port N]
  npm run admin -- get-insurance [--admin-port N]
  npm run admin -- set-backstop-provider --account <id> [--admin-port N]
  npm run admin -- remove-backstop-provider --account <id> [--admin-port N]
  npm run admin -- get-backstop [--admin-port N]
  npm run admin -- add-withdrawal-address --account <id> --blockchain <CHAIN> --address <ADDRESS> [--admin-port N]
  npm run admin -- new-two-factor-secret --account <id> [--admin-port N]
  npm run admin -- backup --to <DIR> [--data-dir <DIR>]   (data directory: --data-dir, DATA_DIR or ./data, as the server's)
  npm run admin -- liquidation-demo [--port N] [--host H] [--maker-public-key <base64> --maker-secret-key <base64>]
                   [--deposit USDC] [--leverage N] [--start-price P] [--step-bps N] [--max-steps N] [--admin-port N]
                   (defaults: port PORT or 8080, host 127.0.0.1, a fresh maker, deposit 300, leverage 9,
                   start price 150 when SOL has no fresh index, steps of 100 bps, at most 60 steps)`;

class UsageError extends Error {}

/** Commands that take plain arguments (the others take only --options), and how many at most. */
const WITH_ARGUMENTS = new Map([['maintenance', 1], ['set-index-price', 256]]);

function parse(argv: string[]): { command: string; argument: string | undefined; args: string[]; options: Map<string, string[]> } {
  const [command, ...rest] = argv;
  const options = new Map<string, string[]>();
  const args: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    if (!arg.startsWith('--') && args.length < (WITH_ARGUMENTS.get(command) ?? 0)) {
      args.push(arg);
      continue;
    }
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument "${arg}"`);
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
    let value: string;
    if (eq > 0) value = arg.slice(eq + 1);
    else if (i + 1 < rest.length) value = rest[++i];
    else throw new UsageError(`--${name} needs a value`);
    options.set(name, [...(options.get(name) ?? []), value]);
  }
  return { command: command ?? '', argument: args[0], args, options };
}

function one(options: Map<string, string[]>, name: string): string | undefined {
  const values = options.get(name);
  if (values && values.length > 1) throw new UsageError(`--${name} given more than once`);
  return values?.[0];
}

function required(options: Map<string, string[]>, name: string): string {
  const value = one(options, name);
  if (value === undefined) throw new UsageError(`--${name} is required`);
  return value;
}

function wholeNumber(options: Map<string, string[]>, name: string): number {
  const text = required(options, name);
  if (!/^\d{1,10}$/.test(text)) throw new UsageError(`--${name} must be a whole number`);
  return Number(text);
}

function onlyOptions(options: Map<string, string[]>, allowed: string[]): void {
  for (const name of options.keys()) if (!allowed.includes(name)) throw new UsageError(`unknown option --${name}`);
}

/** ASSET=PRICE arguments as the admin endpoint's prices object (each asset once). */
function indexPriceArguments(args: string[]): Record<string, string> {
  if (args.length === 0) throw new UsageError('set-index-price takes ASSET=PRICE arguments, e.g. SOL=150.25');
  const prices: Record<string, string> = {};
  for (const text of args) {
    const eq = text.indexOf('=');
    if (eq <= 0 || eq === text.length - 1) throw new UsageError(`set-index-price takes ASSET=PRICE, got "${text}"`);
    const asset = text.slice(0, eq);
    if (asset in prices) throw new UsageError(`${asset} is given twice`);
    prices[asset] = text.slice(eq + 1);
  }
  return prices;
}

/** The operator's engine settings: order book states, fee rates, maintenance, index prices, the insurance fund, the backstop providers; null for another command. */
function operatorCommand(port: number, command: string, argument: string | undefined, args: string[], options: Map<string, string[]>): Promise<unknown> | null {
  // Order book states and fee rates
  if (command === 'set-market-state') {
    onlyOptions(options, ['symbol', 'state']);
    return setMarketState(port, required(options, 'symbol'), required(options, 'state'));
  }
  if (command === 'set-fee-rates') {
    onlyOptions(options, ['account', 'maker-bps', 'taker-bps']);
    return setFeeRates(port, {
      accountId: wholeNumber(options, 'account'),
      makerFeeBps: wholeNumber(options, 'maker-bps'),
      takerFeeBps: wholeNumber(options, 'taker-bps'),
    });
  }
  if (command === 'get-fee-rates') {
    onlyOptions(options, ['account']);
    return getFeeRates(port, wholeNumber(options, 'account'));
  }
  // Maintenance: orders, cancels and withdrawals answer 503 until it is turned off (kept across restarts).
  if (command === 'maintenance') {
    onlyOptions(options, []);
    if (argument !== 'on' && argument !== 'off') throw new UsageError('maintenance takes on or off');
    return setMaintenance(port, argument === 'on');
  }
  // Index prices: USDC per whole unit of each asset, as the operator sets them (USDC is fixed at 1).
  if (command === 'set-index-price') {
    onlyOptions(options, []);
    return setIndexPrices(port, indexPriceArguments(args), 'Operator');
  }
  if (command === 'get-index-prices') {
    onlyOptions(options, []);
    return getIndexPrices(port);
  }
  // The liquidation insurance fund: units paid in from outside, and every asset's lines.
  if (command === 'deposit-insurance') {
    onlyOptions(options, ['asset', 'quantity']);
    return depositInsurance(port, required(options, 'asset'), required(options, 'quantity'));
  }
  if (command === 'get-insurance') {
    onlyOptions(options, []);
    return getInsurance(port);
  }
  // The backstop liquidity providers: named, taken off, listed.
  if (command === 'set-backstop-provider' || command === 'remove-backstop-provider') {
    onlyOptions(options, ['account']);
    return changeBackstopProvider(port, command === 'set-backstop-provider' ? 'set' : 'remove', wholeNumber(options, 'account'));
  }
  if (command === 'get-backstop') {
    onlyOptions(options, []);
    return getBackstop(port);
  }
  return null;
}

/** A whole-number option within [min, max], or its default when absent. */
function boundedNumber(options: Map<string, string[]>, name: string, fallback: number, min: number, max: number): number {
  const text = one(options, name);
  if (text === undefined) return fallback;
  if (!/^\d{1,10}$/.test(text) || Number(text) < min || Number(text) > max) throw new UsageError(`--${name} must be a whole number from ${min} to ${max}`);
  return Number(text);
}

/** liquidation-demo: the options checked, then the scenario of liquidation-demo.ts, printing as it goes. */
function liquidationDemoCommand(adminPort: number, options: Map<string, string[]>): Promise<unknown> {
  onlyOptions(options, ['port', 'host', 'maker-public-key', 'maker-secret-key', 'deposit', 'leverage', 'start-price', 'step-bps', 'max-steps']);
  const portText = one(options, 'port') ?? process.env.PORT ?? '8080';
  if (!/^\d{1,5}$/.test(portText) || Number(portText) === 0 || Number(portText) > 65535) throw new UsageError('--port must be a port number');
  const makerPublic = one(options, 'maker-public-key');
  const makerSecret = one(options, 'maker-secret-key');
  if ((makerPublic === undefined) !== (makerSecret === undefined)) throw new UsageError('--maker-public-key and --maker-secret-key go together');
  const startText = one(options, 'start-price') ?? '150';
  if (!/^\d{1,5}(\.\d{1,2})?$/.test(startText) || toHundredths(startText) === 0) throw new UsageError('--start-price must be a positive price with at most 2 decimals');
  return liquidationDemo({
    host: one(options, 'host') ?? '127.0.0.1',
    port: Number(portText),
    adminPort,
    maker: makerPublic === undefined ? null : { publicKey: makerPublic, secretKey: makerSecret! },
    deposit: boundedNumber(options, 'deposit', 300, 1, 1_000_000),
    leverage: boundedNumber(options, 'leverage', 9, 1, 40),
    startPriceCents: toHundredths(startText),
    stepBps: boundedNumber(options, 'step-bps', 100, 1, 2_000),
    maxSteps: boundedNumber(options, 'max-steps', 60, 1, 1_000),
    print: (line) => process.stdout.write(`${line}\n`),
  });
}

async function run(argv: string[]): Promise<unknown> {
  const { command, argument, args, options } = parse(argv);
  const portText = one(options, 'admin-port') ?? process.env.ADMIN_PORT ?? '8081';
  if (!/^\d+$/.test(portText)) throw new UsageError('--admin-port must be a number');
  const port = Number(portText);
  options.delete('admin-port');
  if (command === 'create-account') {
    const deposits: Deposit[] = (options.get('deposit') ?? []).map((text) => {
      const eq = text.indexOf('=');
      if (eq <= 0) throw new UsageError(`--deposit takes ASSET=QTY, got "${text}"`);
      return { asset: text.slice(0, eq), quantity: text.slice(eq + 1) };
    });
    for (const name of options.keys()) if (name !== 'deposit' && name !== 'public-key') throw new UsageError(`unknown option --${name}`);
    return createAccount(port, { publicKey: one(options, 'public-key'), deposits });
  }
  if (command === 'deposit') {
    const accountText = required(options, 'account');
    if (!/^\d+$/.test(accountText)) throw new UsageError('--account must be a number');
    const d = { asset: required(options, 'asset'), quantity: required(options, 'quantity') };
    for (const name of options.keys()) if (!['account', 'asset', 'quantity'].includes(name)) throw new UsageError(`unknown option --${name}`);
    await deposit(port, Number(accountText), d);
    return { accountId: Number(accountText), ...d };
  }
  if (command === 'snapshot') {
    for (const name of options.keys()) throw new UsageError(`unknown option --${name}`);
    return adminRequest(port, 'POST', '/admin/snapshot', {});
  }
  const operated = operatorCommand(port, command, argument, args, options);
  if (operated !== null) return operated;
  // Withdrawals to an address in the book need no two-factor code; others need
  // a TOTP code from the secret this prints (otpauth URI for an authenticator app).
  if (command === 'add-withdrawal-address') {
    onlyOptions(options, ['account', 'blockchain', 'address']);
    return adminRequest(port, 'POST', '/admin/address-book', {
      accountId: wholeNumber(options, 'account'), blockchain: required(options, 'blockchain'), address: required(options, 'address'),
    });
  }
  if (command === 'new-two-factor-secret') {
    onlyOptions(options, ['account']);
    return adminRequest(port, 'POST', '/admin/two-factor', { accountId: wholeNumber(options, 'account') });
  }
  if (command === 'liquidation-demo') return liquidationDemoCommand(port, options);
  if (command === 'backup') {
    onlyOptions(options, ['to', 'data-dir']);
    const dataDir = resolve(one(options, 'data-dir') ?? process.env.DATA_DIR ?? './data');
    return backupDataDir(dataDir, resolve(required(options, 'to')));
  }
  throw new UsageError(command ? `unknown command "${command}"` : 'no command given');
}

run(process.argv.slice(2)).then(
  (result) => {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  },
  (error: unknown) => {
    if (error instanceof UsageError) process.stderr.write(`${error.message}\n${USAGE}\n`);
    else if (error instanceof AdminError || error instanceof BackupError || error instanceof ApiError) process.stderr.write(`error: ${error.message}\n`);
    else process.stderr.write(`error: ${String(error)}\n`);
    process.exitCode = error instanceof UsageError ? 2 : 1;
  },
);
