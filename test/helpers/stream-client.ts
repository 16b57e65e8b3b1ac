// A WebSocket client for end-to-end tests: keeps every message it receives, subscribes to public
// and (signed) private streams, and finds messages by predicate (poll with waitUntil).

import WebSocket from 'ws';
import { sign, type TestAccount } from './server.js';

export class StreamClient {
  readonly messages: any[] = [];
  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => this.messages.push(JSON.parse(data.toString())));
  }
  static async connect(port: number): Promise<StreamClient> {
    const socket = new WebSocket(`ws://127.0.0.1:${port}/`);
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    return new StreamClient(socket);
  }
  send(message: unknown): void {
    this.socket.send(JSON.stringify(message));
  }
  subscribePrivate(account: TestAccount, streams: string[]): void {
    const timestamp = Date.now();
    const signature = sign(account.secretKey, `instruction=subscribe&timestamp=${timestamp}&window=5000`);
    this.send({ method: 'SUBSCRIBE', params: streams, signature: [account.publicKey, signature, String(timestamp), '5000'] });
  }
  find(predicate: (m: any) => boolean): any | undefined {
    return this.messages.find(predicate);
  }
  close(): void {
    this.socket.close();
  }
}
