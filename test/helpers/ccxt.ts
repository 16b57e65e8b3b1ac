// ccxt pointed at a running test server, unchanged except for its base URLs (the compatibility
// contract: real clients work with only the base URL changed). REST through `urls.api.public` /
// `urls.api.private`; WebSocket through `urls.api.ws.*`, which with a plain ws:// URL needs
// `loadHttpProxyAgent()` once first (ccxt refuses non-TLS sockets otherwise).

import ccxt from 'ccxt';
import type { RunningServer, TestAccount } from './server.js';

type Backpack = InstanceType<typeof ccxt.backpack>;
type BackpackPro = InstanceType<typeof ccxt.pro.backpack>;

function pointAt(exchange: Backpack | BackpackPro, server: RunningServer): void {
  const api = exchange.urls['api'] as Record<string, unknown>;
  api['public'] = server.base;
  api['private'] = server.base;
  const ws = `ws://127.0.0.1:${server.port}`;
  api['ws'] = { public: ws, private: ws };
}

/** A ccxt REST client; signed endpoints work when `account` is given. */
export function ccxtRest(server: RunningServer, account?: TestAccount): Backpack {
  const exchange = new ccxt.backpack(account ? { apiKey: account.publicKey, secret: account.secretKey } : {});
  pointAt(exchange, server);
  return exchange;
}

/** A ccxt pro (WebSocket) client; call `close()` when done. */
export async function ccxtPro(server: RunningServer, account?: TestAccount): Promise<BackpackPro> {
  const exchange = new ccxt.pro.backpack(account ? { apiKey: account.publicKey, secret: account.secretKey } : {});
  pointAt(exchange, server);
  await exchange.loadHttpProxyAgent();
  return exchange;
}
