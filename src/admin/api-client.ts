// A client of the public API as any trading client uses it, for the operator's demonstrations
// (liquidation-demo.ts): signed REST requests and a WebSocket stream connection.
//
// Signing (src/auth.ts, the Backpack wire reference §2): the signing string is the server's own
// signingString of the raw (not percent-encoded) parameter values, signed with the account's
// ed25519 seed; X-Timestamp is the time in ms, strictly increasing from one request to the next
// in this process (the server refuses a signature it has already seen), X-Window 5000. GET sends
// the parameters as the query, other methods as a JSON body.
//
// Streams: one RFC 6455 connection on the public port (node:http's upgrade, no compression
// offered). Client frames are masked; the server's text frames (fragmented or not) are parsed as
// JSON and handed to the listener; pings are answered with pongs. SUBSCRIBE messages as the
// stream protocol has them, private ones signed with `instruction=subscribe`.

import { createHash, createPrivateKey, createPublicKey, randomBytes, sign as cryptoSign, type KeyObject } from 'node:crypto';
import { request } from 'node:http';
import type { Socket } from 'node:net';
import { DEFAULT_WINDOW_TEXT, signingString, type ParamValue } from '../auth.js';

export interface ApiKeys {
  /** base64 of the ed25519 public key (X-API-Key). */
  publicKey: string;
  /** base64 of the 32-byte ed25519 seed. */
  secretKey: string;
}

export class ApiError extends Error {
  override name = 'ApiError';
}

export interface ApiAnswer {
  status: number;
  body: any;
}

/** PKCS#8 DER header of an ed25519 private key; the 32-byte seed follows it. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

function privateKeyOf(secretKey: string): KeyObject {
  const seed = Buffer.from(secretKey, 'base64');
  if (seed.length !== 32) throw new ApiError('a secret key is the base64 of a 32-byte ed25519 seed');
  return createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
}

let lastTimestamp = 0;

function nextTimestamp(): number {
  lastTimestamp = Math.max(Date.now(), lastTimestamp + 1);
  return lastTimestamp;
}

/** Signs a message with the account's key: base64 of the 64-byte signature. */
function signText(key: KeyObject, message: string): string {
  return cryptoSign(null, Buffer.from(message, 'utf8'), key).toString('base64');
}

export class ApiClient {
  private readonly key: KeyObject | null;

  /** `base` is the public API's URL (http://host:port); keys are needed for signed requests only. */
  constructor(readonly base: string, readonly keys: ApiKeys | null = null) {
    this.key = keys === null ? null : privateKeyOf(keys.secretKey);
    if (keys !== null && this.key !== null) {
      const publicKey = Buffer.from(createPublicKey(this.key).export({ format: 'jwk' }).x!, 'base64url').toString('base64');
      if (publicKey !== keys.publicKey) throw new ApiError(`the secret key given is not the one of X-API-Key ${keys.publicKey}`);
    }
  }

  /** A public (unsigned) GET. */
  async get(path: string, params: Record<string, string> = {}): Promise<ApiAnswer> {
    const query = new URLSearchParams(params).toString();
    return this.send('GET', `${path}${query ? `?${query}` : ''}`, {}, undefined);
  }

  /** A signed request under `instruction`. */
  async signed(method: string, path: string, instruction: string, params: Record<string, ParamValue> = {}): Promise<ApiAnswer> {
    if (this.keys === null || this.key === null) throw new ApiError('a signed request needs the account\'s keys');
    const timestamp = String(nextTimestamp());
    const message = signingString(instruction, Object.entries(params), timestamp, DEFAULT_WINDOW_TEXT, false);
    const headers: Record<string, string> = {
      'X-API-Key': this.keys.publicKey, 'X-Signature': signText(this.key, message), 'X-Timestamp': timestamp, 'X-Window': DEFAULT_WINDOW_TEXT,
    };
    if (method === 'GET') {
      const query = new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, v === null ? '' : String(v)])).toString();
      return this.send(method, `${path}${query ? `?${query}` : ''}`, headers, undefined);
    }
    headers['Content-Type'] = 'application/json; charset=utf-8';
    return this.send(method, path, headers, JSON.stringify(params));
  }

  /** A signed request that must answer 2xx: its body, else an ApiError naming the call and the answer. */
  async ok(method: string, path: string, instruction: string, params: Record<string, ParamValue> = {}): Promise<any> {
    const answer = await this.signed(method, path, instruction, params);
    if (answer.status < 200 || answer.status > 299) {
      throw new ApiError(`${method} ${path} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    }
    return answer.body;
  }

  /** The subscribe signature of the stream protocol: [key, signature, timestamp, window]. */
  subscribeSignature(): string[] {
    if (this.keys === null || this.key === null) throw new ApiError('a private stream needs the account\'s keys');
    const timestamp = String(nextTimestamp());
    const message = `instruction=subscribe&timestamp=${timestamp}&window=${DEFAULT_WINDOW_TEXT}`;
    return [this.keys.publicKey, signText(this.key, message), timestamp, DEFAULT_WINDOW_TEXT];
  }

  private async send(method: string, pathAndQuery: string, headers: Record<string, string>, body: string | undefined): Promise<ApiAnswer> {
    let response: Response;
    try {
      response = await fetch(`${this.base}${pathAndQuery}`, { method, headers, body, signal: AbortSignal.timeout(30_000) });
    } catch (error) {
      throw new ApiError(`cannot reach the public API at ${this.base}: ${(error as Error).message}`);
    }
    const text = await response.text();
    let parsed: unknown = null;
    try {
      parsed = text === '' ? null : JSON.parse(text);
    } catch {
      parsed = text;
    }
    return { status: response.status, body: parsed };
  }
}

const WEBSOCKET_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

const enum Opcode { Continuation = 0, Text = 1, Binary = 2, Close = 8, Ping = 9, Pong = 10 }

/** One WebSocket connection to the public port; every JSON message goes to `onMessage`. */
export class StreamConnection {
  private buffered: Buffer = Buffer.alloc(0);
  private fragments: Buffer[] = [];
  closed = false;

  private constructor(private readonly socket: Socket, private readonly onMessage: (message: any) => void) {
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('close', () => {
      this.closed = true;
    });
    socket.on('error', () => {
      this.closed = true;
    });
  }

  static connect(host: string, port: number, onMessage: (message: any) => void): Promise<StreamConnection> {
    const key = randomBytes(16).toString('base64');
    const expected = createHash('sha1').update(key + WEBSOCKET_GUID).digest('base64');
    return new Promise((resolve, reject) => {
      const req = request({
        host, port, path: '/',
        headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': key },
      });
      req.setTimeout(30_000, () => req.destroy(new Error('no answer to the WebSocket upgrade within 30 s')));
      req.on('upgrade', (response, socket, head) => {
        if (response.headers['sec-websocket-accept'] !== expected) {
          socket.destroy();
          reject(new ApiError('the server\'s WebSocket handshake did not match the key sent'));
          return;
        }
        const connection = new StreamConnection(socket, onMessage);
        if (head.length > 0) connection.receive(head);
        resolve(connection);
      });
      req.on('response', (response) => reject(new ApiError(`the WebSocket upgrade was answered ${response.statusCode}`)));
      req.on('error', (error) => reject(new ApiError(`cannot open a stream connection to ${host}:${port}: ${error.message}`)));
      req.end();
    });
  }

  subscribe(streams: string[], signature?: string[]): void {
    this.sendText(JSON.stringify(signature ? { method: 'SUBSCRIBE', params: streams, signature } : { method: 'SUBSCRIBE', params: streams }));
  }

  close(): void {
    if (this.closed) return;
    this.sendFrame(Opcode.Close, Buffer.from([0x03, 0xe8])); // 1000, normal closure
    this.socket.end();
    this.closed = true;
  }

  private sendText(text: string): void {
    this.sendFrame(Opcode.Text, Buffer.from(text, 'utf8'));
  }

  private sendFrame(opcode: Opcode, payload: Buffer): void {
    if (this.closed) return;
    const length = payload.length;
    const header = length < 126 ? Buffer.alloc(2) : length < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
    header[0] = 0x80 | opcode;
    if (length < 126) header[1] = 0x80 | length;
    else if (length < 65536) {
      header[1] = 0x80 | 126;
      header.writeUInt16BE(length, 2);
    } else {
      header[1] = 0x80 | 127;
      header.writeBigUInt64BE(BigInt(length), 2);
    }
    const mask = randomBytes(4);
    const masked = Buffer.alloc(length);
    for (let i = 0; i < length; i++) masked[i] = payload[i] ^ mask[i & 3];
    this.socket.write(Buffer.concat([header, mask, masked]));
  }

  /** Parses every whole frame buffered so far (server frames are unmasked). */
  private receive(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    for (;;) {
      if (this.buffered.length < 2) return;
      const fin = (this.buffered[0] & 0x80) !== 0;
      const opcode = this.buffered[0] & 0x0f;
      let length = this.buffered[1] & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (this.buffered.length < 4) return;
        length = this.buffered.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (this.buffered.length < 10) return;
        length = Number(this.buffered.readBigUInt64BE(2));
        offset = 10;
      }
      if (this.buffered.length < offset + length) return;
      const payload = this.buffered.subarray(offset, offset + length);
      this.buffered = this.buffered.subarray(offset + length);
      this.frame(fin, opcode, Buffer.from(payload));
    }
  }

  private frame(fin: boolean, opcode: number, payload: Buffer): void {
    if (opcode === Opcode.Ping) return this.sendFrame(Opcode.Pong, payload);
    if (opcode === Opcode.Close) {
      this.closed = true;
      this.socket.end();
      return;
    }
    if (opcode === Opcode.Pong) return;
    this.fragments.push(payload);
    if (!fin) return;
    const text = Buffer.concat(this.fragments).toString('utf8');
    this.fragments = [];
    try {
      this.onMessage(JSON.parse(text));
    } catch {
      this.onMessage({ text });
    }
  }
}
