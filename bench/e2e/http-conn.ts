// A minimal HTTP/1.1 keep-alive client connection for the load generator: one raw TCP socket,
// requests written as pre-built bytes, one request in flight (no pipelining, as trading clients
// do), responses framed by Content-Length (uWebSockets.js always sends it for `end(body)`).
//
// Why not node:http: its client costs tens of microseconds per request in parsing and object
// churn, so on a 2-core machine it would become the bottleneck it is meant to measure. Here a
// response costs a header scan and a slice; the load generator reports its own CPU so the reader
// can check it was not the limit.

import { connect, type Socket } from 'node:net';

export type ResponseCallback = (status: number, body: Buffer) => void;

const HEADER_END = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = 'content-length:';

export class HttpConnection {
  private buffer: Buffer | null = null;
  private callback: ResponseCallback | null = null;
  private closed = false;
  onError: (error: Error) => void = () => {};

  private constructor(private readonly socket: Socket) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (error) => this.fail(error));
    socket.on('close', () => this.fail(new Error('connection closed by the server')));
  }

  static open(host: string, port: number): Promise<HttpConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host, port });
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(new HttpConnection(socket));
      });
      socket.once('error', reject);
    });
  }

  get busy(): boolean {
    return this.callback !== null;
  }

  request(bytes: Buffer, callback: ResponseCallback): void {
    if (this.callback !== null) throw new Error('one request at a time per connection');
    if (this.closed) throw new Error('connection is closed');
    this.callback = callback;
    this.socket.write(bytes);
  }

  close(): void {
    this.closed = true;
    this.socket.destroy();
  }

  private fail(error: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.onError(error);
  }

  private onData(chunk: Buffer): void {
    let data = this.buffer === null ? chunk : Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const headerEnd = data.indexOf(HEADER_END);
      if (headerEnd < 0) break;
      const head = data.toString('latin1', 0, headerEnd);
      const status = Number(head.slice(9, 12));
      const at = head.toLowerCase().indexOf(CONTENT_LENGTH);
      if (at < 0) {
        this.fail(new Error(`response without Content-Length: ${head.slice(0, 200)}`));
        return;
      }
      const length = parseInt(head.slice(at + CONTENT_LENGTH.length), 10);
      const bodyStart = headerEnd + 4;
      if (data.length < bodyStart + length) break;
      const body = data.subarray(bodyStart, bodyStart + length);
      data = data.subarray(bodyStart + length);
      const callback = this.callback;
      this.callback = null;
      if (callback === null) {
        this.fail(new Error('unsolicited response'));
        return;
      }
      callback(status, body);
    }
    this.buffer = data.length === 0 ? null : Buffer.from(data);
  }
}

/** The bytes of one HTTP/1.1 request (Host, optional JSON body, extra headers). */
export function requestBytes(method: string, path: string, host: string, headers: Record<string, string>, body?: string): Buffer {
  let text = `${method} ${path} HTTP/1.1\r\nHost: ${host}\r\n`;
  for (const [name, value] of Object.entries(headers)) text += `${name}: ${value}\r\n`;
  if (body !== undefined) {
    text += `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  } else {
    text += '\r\n';
  }
  return Buffer.from(text, 'utf8');
}
