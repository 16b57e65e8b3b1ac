// Child process of the fan-out benchmark: opens N WebSocket connections with a hand-written
// handshake (offering permessage-deflate when told to: compressed frames are counted, not
// inflated) and counts frames by walking their headers, so that counting costs far less than the server's sending and the figure is the server's. Connection 0 also
// decodes every 64th frame to read the engine time `T` (µs) and records engine-to-client latency.
// Meanwhile one keep-alive HTTP connection sends GET /api/v1/depth back to back ("while HTTP is
// served"). Reports over IPC: {frames, httpRequests, latenciesUs} when asked.

import { connect, type Socket } from 'node:net';
import { request, Agent } from 'node:http';

const [port, countText, topic, compression] = process.argv.slice(2);
/** Offer permessage-deflate in the handshake, as ccxt's `ws` client and browsers do. */
const offerDeflate = compression === 'deflate';
const count = Number(countText);
let frames = 0;
let httpRequests = 0;
let latenciesUs: number[] = [];

function nowUs(): number {
  return Math.floor((performance.timeOrigin + performance.now()) * 1000);
}

function open(index: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(Number(port), '127.0.0.1');
    let handshakeDone = false;
    let pending: Buffer = Buffer.alloc(0);
    let seen = 0;
    socket.setNoDelay(true);
    socket.on('connect', () => {
      socket.write(
        `GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${Buffer.from(`fanout-bench-${index}`.padEnd(16, '.')).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n` +
          (offerDeflate ? 'Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n\r\n' : '\r\n'),
      );
    });
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => {
      let data = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
      if (!handshakeDone) {
        const end = data.indexOf('\r\n\r\n');
        if (end < 0) {
          pending = data;
          return;
        }
        handshakeDone = true;
        data = data.subarray(end + 4);
        // Subscribe (a masked text frame, as clients must send).
        const payload = Buffer.from(JSON.stringify({ method: 'SUBSCRIBE', params: [topic] }));
        const header = Buffer.from([0x81, 0x80 | payload.length, 0, 0, 0, 0]);
        socket.write(Buffer.concat([header, payload]));
        resolve();
      }
      let offset = 0;
      while (offset + 2 <= data.length) {
        let length = data[offset + 1] & 0x7f;
        let headerBytes = 2;
        if (length === 126) {
          if (offset + 4 > data.length) break;
          length = data.readUInt16BE(offset + 2);
          headerBytes = 4;
        } else if (length === 127) {
          if (offset + 10 > data.length) break;
          length = Number(data.readBigUInt64BE(offset + 2));
          headerBytes = 10;
        }
        if (offset + headerBytes + length > data.length) break;
        frames++;
        // A compressed frame (RSV1) is counted but not read for its time.
        if (index === 0 && (++seen & 63) === 0 && (data[offset] & 0x40) === 0) {
          const text = data.toString('latin1', offset + headerBytes, offset + headerBytes + length);
          const at = text.indexOf('"T":');
          if (at >= 0) latenciesUs.push(nowUs() - parseInt(text.slice(at + 4), 10));
        }
        offset += headerBytes + length;
      }
      pending = offset < data.length ? Buffer.from(data.subarray(offset)) : Buffer.alloc(0);
    });
  });
}

function httpLoop(): void {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const once = (): void => {
    const req = request({ host: '127.0.0.1', port: Number(port), path: '/api/v1/depth?symbol=SOL_USDC', agent }, (res) => {
      res.resume();
      res.on('end', () => {
        httpRequests++;
        setImmediate(once);
      });
    });
    req.on('error', () => setTimeout(once, 10));
    req.end();
  };
  once();
}

async function main(): Promise<void> {
  for (let i = 0; i < count; i += 50) {
    await Promise.all(Array.from({ length: Math.min(50, count - i) }, (_, k) => open(i + k)));
  }
  httpLoop();
  process.on('message', (message: { type: string }) => {
    if (message.type === 'report') {
      process.send!({ frames, httpRequests, latenciesUs });
      frames = 0;
      httpRequests = 0;
      latenciesUs = [];
    } else if (message.type === 'exit') {
      process.exit(0);
    }
  });
  process.send!({ type: 'ready' });
}

void main();
