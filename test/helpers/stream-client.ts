// A WebSocket client for the stream suites (the `ws` package, a second implementation next to the
// server's uWS): collects every frame as parsed JSON, subscribes to public and signed private
// streams, and can stop reading (to play a slow consumer) or refuse compression.

import WebSocket from 'ws';
import { sign, waitUntil, type TestAccount } from './server.js';

export class StreamClient {
  readonly messages: any[] = [];
  closeCode: number | null = null;
  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => this.messages.push(JSON.parse(data.toString())));
    socket.on('close', (code) => {
      this.closeCode = code;
    });
  }

  /** `localAddress` picks the client's source address (any of 127.0.0.0/8 works on Linux). */
  static async connect(port: number, options: { compress?: boolean; localAddress?: string } = {}): Promise<StreamClient> {
    const socket = new WebSocket(`ws://127.0.0.1:${port}/`, { perMessageDeflate: options.compress ?? false, localAddress: options.localAddress });
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    return new StreamClient(socket);
  }

  /** The client's end of the TCP connection (its local port). */
  get localPort(): number {
    return (this.socket as unknown as { _socket: { localPort: number } })._socket.localPort;
  }

  /** The extensions the server accepted ("permessage-deflate…" or ""). */
  get extensions(): string {
    return this.socket.extensions;
  }

  send(message: unknown): void {
    this.socket.send(JSON.stringify(message));
  }

  subscribe(streams: string[]): void {
    this.send({ method: 'SUBSCRIBE', params: streams });
  }

  subscribeSigned(account: TestAccount, streams: string[], method = 'SUBSCRIBE'): void {
    const timestamp = Date.now();
    const signature = sign(account.secretKey, `instruction=subscribe&timestamp=${timestamp}&window=5000`);
    this.send({ method, params: streams, signature: [account.publicKey, signature, String(timestamp), '5000'] });
  }

  on(stream: string): any[] {
    return this.messages.filter((m) => m.stream === stream).map((m) => m.data);
  }

  find(predicate: (m: any) => boolean): any | undefined {
    return this.messages.find(predicate);
  }

  async waitFor(predicate: (m: any) => boolean, what: string, timeoutMs?: number): Promise<any> {
    return waitUntil(() => this.messages.find(predicate), what, timeoutMs);
  }

  /** Stops reading from the socket (the kernel buffers fill, then the server's send buffer). */
  pause(): void {
    (this.socket as unknown as { _socket: { pause(): void } })._socket.pause();
  }

  resume(): void {
    (this.socket as unknown as { _socket: { resume(): void } })._socket.resume();
  }

  close(): void {
    this.socket.close();
  }
}

/** A book rebuilt from a REST depth snapshot plus depth messages, as the documented contract says. */
export class BookReplica {
  readonly bids = new Map<string, string>();
  readonly asks = new Map<string, string>();
  lastId: number;
  private started = false;

  constructor(snapshot: { bids: string[][]; asks: string[][]; lastUpdateId: string }) {
    for (const [p, q] of snapshot.bids) this.bids.set(p, q);
    for (const [p, q] of snapshot.asks) this.asks.set(p, q);
    this.lastId = Number(snapshot.lastUpdateId);
  }

  /** Applies one message; throws on a gap after the first applied one. */
  apply(m: { U: number; u: number; a: string[][]; b: string[][] }): void {
    if (m.u <= this.lastId) return;
    if (!this.started) {
      if (!(m.U <= this.lastId + 1)) throw new Error(`first message U=${m.U} leaves a gap after snapshot ${this.lastId}`);
      this.started = true;
    } else if (m.U !== this.lastId + 1) {
      throw new Error(`gap: U=${m.U} after u=${this.lastId}`);
    }
    for (const [p, q] of m.b) (Number(q) === 0 ? this.bids.delete(p) : this.bids.set(p, q));
    for (const [p, q] of m.a) (Number(q) === 0 ? this.asks.delete(p) : this.asks.set(p, q));
    this.lastId = m.u;
  }

  /** Both sides ascending by price, as REST depth lists them. */
  levels(): { bids: string[][]; asks: string[][] } {
    const sorted = (m: Map<string, string>) => [...m.entries()].sort((x, y) => Number(x[0]) - Number(y[0]));
    return { bids: sorted(this.bids), asks: sorted(this.asks) };
  }
}

/** Checks U = previous u + 1 across a run of depth messages. */
export function assertContiguous(messages: Array<{ U: number; u: number }>): void {
  for (let i = 1; i < messages.length; i++) {
    if (messages[i].U !== messages[i - 1].u + 1) {
      throw new Error(`depth ids not contiguous at ${i}: U=${messages[i].U} after u=${messages[i - 1].u}`);
    }
  }
}
