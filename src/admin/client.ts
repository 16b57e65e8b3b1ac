// The operator's client for the admin endpoint (127.0.0.1 only), shared by the CLI and by the
// server's own demo-account seeding. Key pairs are generated here, on the operator's side, so a
// secret key never crosses the wire: the server only ever learns the public key.

import { generateKeyPairSync } from 'node:crypto';

export interface KeyPair {
  /** base64 of the 32-byte ed25519 public key (the X-API-Key value). */
  publicKey: string;
  /** base64 of the 32-byte ed25519 seed (what clients hold as the API secret). */
  secretKey: string;
}

export function generateKeyPair(): KeyPair {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const pub = publicKey.export({ format: 'jwk' });
  const priv = privateKey.export({ format: 'jwk' });
  return {
    publicKey: Buffer.from(pub.x!, 'base64url').toString('base64'),
    secretKey: Buffer.from(priv.d!, 'base64url').toString('base64'),
  };
}

export class AdminError extends Error {
  override name = 'AdminError';
}

/**
 * How long an admin request may wait for its whole answer. The slowest admin command is a snapshot
 * of a large state; an endpoint that accepted the connection and then says nothing for this long is
 * wedged, and the operator (or the server seeding its demo accounts) is told so instead of waiting
 * for ever.
 */
export const ADMIN_REQUEST_TIMEOUT_MS = 60_000;

export async function adminRequest(
  port: number, method: 'GET' | 'POST', path: string, body?: unknown, timeoutMs = ADMIN_REQUEST_TIMEOUT_MS,
): Promise<Record<string, unknown>> {
  const signal = AbortSignal.timeout(timeoutMs);
  const noAnswer = (error: unknown): boolean => (error as Error).name === 'TimeoutError';
  let response: Response;
  try {
    response = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
  } catch (error) {
    if (noAnswer(error)) throw new AdminError(`the admin endpoint on 127.0.0.1:${port} gave no answer to ${method} ${path} within ${timeoutMs} ms`);
    throw new AdminError(`cannot reach the admin endpoint on 127.0.0.1:${port}: ${(error as Error).message}`);
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    if (noAnswer(error)) throw new AdminError(`the admin endpoint on 127.0.0.1:${port} did not finish its answer to ${method} ${path} within ${timeoutMs} ms`);
    throw new AdminError(`the admin endpoint on 127.0.0.1:${port} broke off its answer: ${(error as Error).message}`);
  }
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new AdminError(`admin endpoint answered ${response.status} with a non-JSON body: ${text.slice(0, 200)}`);
  }
  if (!response.ok) throw new AdminError(`${parsed.code ?? response.status}: ${parsed.message ?? text}`);
  return parsed;
}

export interface Deposit {
  asset: string;
  quantity: string;
}

export interface CreatedAccount {
  accountId: number;
  publicKey: string;
  secretKey?: string;
  deposits: Deposit[];
}

export async function deposit(port: number, accountId: number, d: Deposit): Promise<void> {
  await adminRequest(port, 'POST', '/admin/deposits', { accountId, asset: d.asset, quantity: d.quantity });
}

/** Creates an account (generating a key pair unless a public key is given) and credits deposits. */
export async function createAccount(port: number, options: { publicKey?: string; deposits?: Deposit[] }): Promise<CreatedAccount> {
  const pair = options.publicKey ? null : generateKeyPair();
  const publicKey = options.publicKey ?? pair!.publicKey;
  const created = await adminRequest(port, 'POST', '/admin/accounts', { publicKey });
  const accountId = created.accountId as number;
  const deposits = options.deposits ?? [];
  const done: Deposit[] = [];
  for (const d of deposits) {
    try {
      await deposit(port, accountId, d);
    } catch (error) {
      // The account exists now: say so, with its keys, or they would be lost with the error.
      const account = { accountId, publicKey, ...(pair ? { secretKey: pair.secretKey } : {}), deposits: done };
      throw new AdminError(`account created, but the deposit ${d.asset}=${d.quantity} failed: ${(error as Error).message}; account: ${JSON.stringify(account)}`);
    }
    done.push(d);
  }
  return pair ? { accountId, publicKey, secretKey: pair.secretKey, deposits } : { accountId, publicKey, deposits };
}

// Order book states and fee rates.

export interface MarketStateChange {
  symbol: string;
  orderBookState: string;
  cancelledOrders: number;
}

/** Sets a market's order book state (Open, Closed, CancelOnly, LimitOnly, PostOnly). */
export async function setMarketState(port: number, symbol: string, orderBookState: string): Promise<MarketStateChange> {
  return (await adminRequest(port, 'POST', '/admin/markets/state', { symbol, orderBookState })) as unknown as MarketStateChange;
}

export interface FeeRates {
  accountId: number;
  makerFeeBps: number;
  takerFeeBps: number;
}

/** Sets an account's maker and taker fee rates, in basis points (0 to 10000). */
export async function setFeeRates(port: number, rates: FeeRates): Promise<FeeRates> {
  return (await adminRequest(port, 'POST', '/admin/accounts/fees', rates)) as unknown as FeeRates;
}

/** Turns maintenance on or off (answered once the change is durable). */
export async function setMaintenance(port: number, enabled: boolean): Promise<{ maintenance: boolean }> {
  return (await adminRequest(port, 'POST', '/admin/maintenance', { enabled })) as unknown as { maintenance: boolean };
}

export async function getFeeRates(port: number, accountId: number): Promise<FeeRates> {
  return (await adminRequest(port, 'GET', `/admin/accounts/fees?accountId=${accountId}`)) as unknown as FeeRates;
}

// Index prices (USDC per whole unit of an asset, decimal strings).

export interface IndexPriceSet {
  symbol: string;
  price: string;
  source: string;
  timestamp: number;
}

/** Sets index prices (asset symbol → decimal string) from the operator or a feed; answered once durable. */
export async function setIndexPrices(port: number, prices: Record<string, string>, source: 'Operator' | 'Feed' = 'Operator'): Promise<{ prices: IndexPriceSet[] }> {
  return (await adminRequest(port, 'POST', '/admin/index-prices', { prices, source })) as unknown as { prices: IndexPriceSet[] };
}

export async function getIndexPrices(port: number): Promise<Record<string, unknown>> {
  return adminRequest(port, 'GET', '/admin/index-prices');
}

// The liquidation insurance fund (decimal strings in each asset's decimals).

export interface InsuranceLineJson {
  symbol: string;
  fund: string;
  fees: string;
  covered: string;
  socialized: string;
  deposited: string;
}

/** Pays `quantity` of `asset` into its insurance fund from outside; answered once durable with the asset's lines. */
export async function depositInsurance(port: number, asset: string, quantity: string): Promise<{ timestamp: number; insurance: InsuranceLineJson[] }> {
  return (await adminRequest(port, 'POST', '/admin/insurance', { asset, quantity })) as unknown as { timestamp: number; insurance: InsuranceLineJson[] };
}

/** Every asset's insurance fund lines. */
export async function getInsurance(port: number): Promise<{ timestamp: number; insurance: InsuranceLineJson[] }> {
  return (await adminRequest(port, 'GET', '/admin/insurance')) as unknown as { timestamp: number; insurance: InsuranceLineJson[] };
}

// The backstop liquidity providers, in the order they take liquidated positions.

export interface BackstopProvidersJson {
  timestamp: number;
  providers: { accountId: number; rank: number }[];
}

/** Names the account a backstop liquidity provider, or takes it off the list; answered once durable with the list after it. */
export async function changeBackstopProvider(port: number, action: 'set' | 'remove', accountId: number): Promise<BackstopProvidersJson> {
  return (await adminRequest(port, 'POST', '/admin/backstop', { action, accountId })) as unknown as BackstopProvidersJson;
}

/** Every backstop liquidity provider. */
export async function getBackstop(port: number): Promise<BackstopProvidersJson> {
  return (await adminRequest(port, 'GET', '/admin/backstop')) as unknown as BackstopProvidersJson;
}
