// The order flow the load generator sends: pre-signed, realistic market-maker traffic over
// several markets, written independently of the server's code (its own signing string and
// node:crypto ed25519 signing, not src/auth.ts and not test/helpers).
//
// Each HTTP connection plays one market maker (account A) and one taker (account B) on one market
// (connection i trades markets[i % M]) and repeats a 5-request cycle:
//
//   1. A  post-only limit bid at mid − k ticks            (rests)
//   2. A  post-only limit ask at mid + k ticks            (rests)
//   3. B  IOC limit order crossing at A's price, half the size: a sell into the bids on even
//         cycles, a buy from the asks on odd ones          (trades against the best resting order,
//                                                          often another connection's)
//   4. A  cancel of its bid, by clientId
//   5. A  cancel of its ask, by clientId
//
// k = 1 + floor(i / M), so every connection of a market quotes its own level, bids never cross
// asks and post-only orders never take. Cancels of orders another taker filled completely answer
// 400 "Order not found", as on the real venue; the report counts them. The book stays a few levels
// deep and every account holds at most 2 open orders. clientIds are unique per account over the
// whole run; every request is signed once, with its own timestamp and a 60 s window.

import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { requestBytes } from './http-conn.js';

export interface Account {
  accountId: number;
  publicKey: string;
  secretKey: string;
}

export interface MarketFlow {
  symbol: string;
  /** Mid price in ticks and the decimals of a price. */
  midTicks: number;
  tickDecimals: number;
  /** Quantity of a maker order in lots, and the decimals of a quantity. */
  qtyLots: number;
  lotDecimals: number;
}

/** Markets of the server's default configuration, with a mid price and size for each. */
export const DEFAULT_FLOW_MARKETS: MarketFlow[] = [
  { symbol: 'SOL_USDC', midTicks: 15_000, tickDecimals: 2, qtyLots: 10, lotDecimals: 2 }, // 150.00, 0.10
  { symbol: 'BTC_USDC', midTicks: 600_000, tickDecimals: 1, qtyLots: 100, lotDecimals: 5 }, // 60000.0, 0.00100
  { symbol: 'ETH_USDC', midTicks: 300_000, tickDecimals: 2, qtyLots: 100, lotDecimals: 4 }, // 3000.00, 0.0100
];

/** What a request is, for per-kind latency and status counts. */
export enum RequestKind {
  PostOnly = 0,
  Cross = 1,
  Cancel = 2,
}
export const KIND_NAMES = ['postOnly place', 'crossing IOC', 'cancel'];

export interface SignedRequest {
  kind: RequestKind;
  bytes: Buffer;
}

/** A request built but not signed yet: its signing string goes to a signer (in this thread or a pool). */
export interface UnsignedRequest {
  kind: RequestKind;
  method: 'POST' | 'DELETE';
  path: string;
  body: string;
  signer: Signer;
  /** The Backpack signing string the signature covers. */
  message: string;
  timestamp: number;
}

/** The request's bytes once `signature` (base64) covers its signing string. */
export function signedRequest(request: UnsignedRequest, host: string, signature: string): SignedRequest {
  const headers = {
    'X-API-Key': request.signer.account.publicKey,
    'X-Signature': signature,
    'X-Timestamp': String(request.timestamp),
    'X-Window': String(WINDOW_MS),
  };
  return { kind: request.kind, bytes: requestBytes(request.method, request.path, host, headers, request.body) };
}

export const WINDOW_MS = 60_000;

export class Signer {
  private readonly key: KeyObject;
  constructor(readonly account: Account) {
    const x = Buffer.from(account.publicKey, 'base64').toString('base64url');
    const d = Buffer.from(account.secretKey, 'base64').toString('base64url');
    this.key = createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', x, d }, format: 'jwk' });
  }

  /** Backpack signing string: instruction, parameters sorted by key with raw values, timestamp, window. */
  static signingString(instruction: string, params: Record<string, string | number | boolean>, timestamp: number, window: number): string {
    let text = `instruction=${instruction}`;
    for (const name of Object.keys(params).sort()) text += `&${name}=${String(params[name])}`;
    return `${text}&timestamp=${timestamp}&window=${window}`;
  }

  signature(message: string): string {
    return sign(null, Buffer.from(message, 'utf8'), this.key).toString('base64');
  }

  headers(instruction: string, params: Record<string, string | number | boolean>, timestamp: number): Record<string, string> {
    return {
      'X-API-Key': this.account.publicKey,
      'X-Signature': this.signature(Signer.signingString(instruction, params, timestamp, WINDOW_MS)),
      'X-Timestamp': String(timestamp),
      'X-Window': String(WINDOW_MS),
    };
  }
}

function decimal(units: number, decimals: number): string {
  if (decimals === 0) return String(units);
  const text = String(units).padStart(decimals + 1, '0');
  return `${text.slice(0, -decimals)}.${text.slice(-decimals)}`;
}

/** One connection's part of the flow: its accounts, market, level and the clientId counters. */
export class ConnectionFlow {
  private cycle = 0;
  private step = 0;
  private nextClientId = 1;
  /** Added to every clientId: connections sharing an account use disjoint ranges. */
  clientIdBase = 0;
  private bidClientId = 0;
  private askClientId = 0;

  constructor(
    readonly maker: Signer,
    readonly taker: Signer,
    readonly market: MarketFlow,
    readonly levelTicks: number,
    private readonly host: string,
  ) {}

  /** Signs the next `count` requests of this connection's cycle, in this thread. */
  next(count: number): SignedRequest[] {
    return this.nextUnsigned(count).map((request) => signedRequest(request, this.host, request.signer.signature(request.message)));
  }

  /** The next `count` requests of this connection's cycle, to be signed elsewhere (signedRequest). */
  nextUnsigned(count: number): UnsignedRequest[] {
    const out: UnsignedRequest[] = [];
    for (let i = 0; i < count; i++) out.push(this.one());
    return out;
  }

  private request(signer: Signer, instruction: string, method: 'POST' | 'DELETE', params: Record<string, string | number | boolean>, kind: RequestKind): UnsignedRequest {
    const timestamp = Date.now();
    const message = Signer.signingString(instruction, params, timestamp, WINDOW_MS);
    return { kind, method, path: '/api/v1/order', body: JSON.stringify(params), signer, message, timestamp };
  }

  private order(signer: Signer, params: Record<string, string | number | boolean>, kind: RequestKind): UnsignedRequest {
    return this.request(signer, 'orderExecute', 'POST', params, kind);
  }

  private cancel(clientId: number): UnsignedRequest {
    return this.request(this.maker, 'orderCancel', 'DELETE', { clientId, symbol: this.market.symbol }, RequestKind.Cancel);
  }

  private one(): UnsignedRequest {
    const m = this.market;
    const bidPrice = decimal(m.midTicks - this.levelTicks, m.tickDecimals);
    const askPrice = decimal(m.midTicks + this.levelTicks, m.tickDecimals);
    const step = this.step;
    this.step = (step + 1) % 5;
    if (this.step === 0) this.cycle += 1;
    switch (step) {
      case 0:
        this.bidClientId = this.clientIdBase + this.nextClientId++;
        return this.order(this.maker, {
          clientId: this.bidClientId, orderType: 'Limit', postOnly: true, price: bidPrice,
          quantity: decimal(m.qtyLots, m.lotDecimals), side: 'Bid', symbol: m.symbol, timeInForce: 'GTC',
        }, RequestKind.PostOnly);
      case 1:
        this.askClientId = this.clientIdBase + this.nextClientId++;
        return this.order(this.maker, {
          clientId: this.askClientId, orderType: 'Limit', postOnly: true, price: askPrice,
          quantity: decimal(m.qtyLots, m.lotDecimals), side: 'Ask', symbol: m.symbol, timeInForce: 'GTC',
        }, RequestKind.PostOnly);
      case 2: {
        const sell = this.cycle % 2 === 0;
        return this.order(this.taker, {
          clientId: this.clientIdBase + this.nextClientId++, orderType: 'Limit', price: sell ? bidPrice : askPrice,
          quantity: decimal(Math.max(1, Math.floor(m.qtyLots / 2)), m.lotDecimals), side: sell ? 'Ask' : 'Bid',
          symbol: m.symbol, timeInForce: 'IOC',
        }, RequestKind.Cross);
      }
      case 3:
        return this.cancel(this.bidClientId);
      default:
        return this.cancel(this.askClientId);
    }
  }
}
