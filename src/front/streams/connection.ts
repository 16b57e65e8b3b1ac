// WebSocket connections on a front thread: the upgrade (rate and connection limits), the
// subscribe protocol, and the slow-consumer and message-rate rules. Which names exist and what
// they carry is the stream families' business (the table in table.ts, through Streams.topicOf).
//
// Protocol: {"method":"SUBSCRIBE"|"UNSUBSCRIBE","params":[...],"signature":[key,sig,ts,window]}.
// An invalid stream answers {"id":null,"error":{"code":4006,"message":"Invalid stream"}}; a bad
// private-stream signature answers code 4001 (the public API documents no code for it; chosen
// here). Neither disturbs the connection's other streams. At most MAX_SUBSCRIPTIONS streams per
// connection (4005 beyond), and at most MAX_SUBSCRIPTIONS names per message: a longer list is
// answered with one error frame and changes nothing, so no message makes the server answer with
// more frames than it could subscribe streams. `id` is echoed when it is a number or a string of
// at most MAX_ECHOED_ID_CHARS, else null. A message longer than MAX_MESSAGE_BYTES closes the
// connection with 1009 and a reason naming the limit.
//
// Replayed subscribe signatures: a private subscription's signature, once accepted, is recorded
// in the shared replay guard (the REST one, replay-guard.ts) until its window ends, with the
// client's address as owner; a later use from another address is refused (4001). The same
// address may use it again: the subscribe signing string holds only a timestamp and a window, so
// subscribes sent in the same millisecond (ccxt's watchOrders and watchBalance together, or one
// client's several connections) carry the same signature. An eavesdropper elsewhere cannot reuse
// it; one on the client's own host (or behind the same NAT) could, within the window. After a
// restart every signature stamped before it is refused, from any address (replay-guard.ts).
//
// A connection whose send buffer passes MAX_BACKPRESSURE_BYTES loses its
// subscriptions and is closed with code 1008 ("Slow consumer") once it has read what was queued;
// uWS never waits for it, so it never delays the engine, the other clients or HTTP.
// Protocol pings: a connection silent for --ws-idle-timeout-s (default 60) gets a ping shortly
// before the timeout; a peer that answers nothing is closed when it passes.
//
// Limits (rate-limits.ts): an upgrade counts as a request of its client address and is refused
// with an HTTP 429 when the address is over its request rate or already holds
// --ws-connections-per-address connections (counted across front threads, given back on close);
// a signed subscribe is charged to the address like an HTTP request, before its signature is
// checked (code 4029 with the 429 message when over the limit; its private streams are not added);
// a connection sending more than --ws-messages-per-s messages a second, after a burst of four
// seconds' worth, is closed with 1008 rather than answered message by message.

import { CountedSubscriptions } from '../front-metrics.js';
import uWS, { type TemplatedApp, type WebSocket } from 'uWebSockets.js';
import { DEFAULT_WS_IDLE_TIMEOUT_S } from '../../config.js';
import { checkWindow, signingString, type SignatureVerifier } from '../../auth.js';
import { addressOwner, type ReplayGuard } from '../replay-guard.js';
import type { MessageBucket, RateLimits } from '../rate-limits.js';
import type { ClientKey } from '../rate-table.js';
import { errorBody, statusLine, type ApiError } from '../../errors.js';
import type { FrontContext } from '../context.js';
import type { Streams } from './streams.js';

export const MAX_SUBSCRIPTIONS = 64;
/** Longest request message; a longer one is answered with close code 1009 and this limit. */
export const MAX_MESSAGE_BYTES = 16 * 1024;
/**
 * uWS's own bound: a message beyond it is cut off without a close frame (1006 at the client), so
 * it sits above MAX_MESSAGE_BYTES, leaving room for the 1009 answer, and still bounds what one
 * connection can make the server buffer.
 */
const MAX_FRAME_BYTES = 4 * MAX_MESSAGE_BYTES;
/** Close code for a message longer than MAX_MESSAGE_BYTES (RFC 6455 "message too big"). */
export const CLOSE_MESSAGE_TOO_BIG = 1009;
export const MAX_BACKPRESSURE_BYTES = 1024 * 1024;
/** Close code for a connection dropped because it could not keep up. */
export const CLOSE_SLOW_CONSUMER = 1008;
const SLOW_CONSUMER_GRACE_MS = 30_000;
const SLOW_CONSUMER_CLOSE_BELOW_BYTES = 64 * 1024;
/** Longest string `id` echoed in error frames (a longer one, or another type, is echoed as null). */
const MAX_ECHOED_ID_CHARS = 64;

interface SocketData {
  /** stream name → uWS topic */
  subscriptions: Map<string, string>;
  /** The client address's owner hash for the replay guard. */
  owner: number;
  /** The client's address (uWS's binary form), charged for each signed subscribe. */
  address: ArrayBuffer;
  closed: boolean;
  dropping: boolean;
  graceTimer: NodeJS.Timeout | null;
  /** The address's entry in the shared connection count, given back on close. */
  connectionKey: ClientKey | null;
  messages: MessageBucket;
}

/** Close code for a connection that sent messages faster than its rate limit. */
export const CLOSE_MESSAGE_RATE = 1008;
/** Error frame code of a signed subscribe refused by its address's request rate (chosen here). */
const CODE_RATE_LIMITED = 4029;

/** Sends the slow-consumer close once the connection's send buffer has room for it. */
function endIfDrained(ws: WebSocket<SocketData>): void {
  const state = ws.getUserData();
  if (state.closed || ws.getBufferedAmount() > SLOW_CONSUMER_CLOSE_BELOW_BYTES) return;
  ws.end(CLOSE_SLOW_CONSUMER, 'Slow consumer: send buffer limit reached');
}

function errorFrame(id: unknown, code: number, message: string): string {
  const echoed = typeof id === 'number' || (typeof id === 'string' && id.length <= MAX_ECHOED_ID_CHARS) ? id : null;
  return JSON.stringify({ id: echoed, error: { code, message } });
}

const INVALID_SIGNATURE = 'Invalid signature';
const SIGNATURE_REPLAYED = 'Signature already used from another address';
const SIGNED_BEFORE_RESTART = 'Signature made before the server restarted; sign again';
const REPLAY_TABLE_FULL = 'Too many signed requests in flight; sign again later';

/** Counts an upgrade against its address's request rate and connection count; the refusal, if any. */
function admitConnection(limits: RateLimits | undefined, address: ArrayBuffer): ClientKey | ApiError | null {
  if (!limits) return null;
  return limits.takeAddress(address, Date.now()) ?? limits.openConnection(address);
}

function isApiError(value: ClientKey | ApiError | null): value is ApiError {
  return value !== null && 'status' in value;
}

/**
 * Verifies a private subscription's signature array and checks no other address used it; returns
 * the account id, or the error message to answer with (code 4001).
 */
function subscriberAccount(
  signature: unknown, front: FrontContext, verifier: SignatureVerifier, replayGuard: ReplayGuard | undefined, owner: number,
): number | string {
  if (!Array.isArray(signature) || signature.length !== 4) return INVALID_SIGNATURE;
  const [key, sig, ts, win] = signature.map((v) => (typeof v === 'number' ? String(v) : v));
  if (typeof key !== 'string' || typeof sig !== 'string' || typeof ts !== 'string' || typeof win !== 'string') return INVALID_SIGNATURE;
  const nowMs = Date.now();
  if (!checkWindow(ts, win, nowMs).ok) return INVALID_SIGNATURE;
  const accountId = front.data.accountsByKey.get(key);
  if (accountId === undefined) return INVALID_SIGNATURE;
  if (!verifier.verify(key, sig, signingString('subscribe', [], ts, win, false))) return INVALID_SIGNATURE;
  if (!replayGuard) return accountId;
  // checkWindow accepted both as plain decimal integers.
  if (replayGuard.signedBeforeRestart(Number(ts))) return SIGNED_BEFORE_RESTART;
  const verdict = replayGuard.check(Buffer.from(sig, 'base64'), Number(ts) + Number(win), nowMs, owner);
  if (verdict === 'replayed') return SIGNATURE_REPLAYED;
  if (verdict === 'full') return REPLAY_TABLE_FULL;
  return accountId;
}

interface StreamRequest {
  method: 'SUBSCRIBE' | 'UNSUBSCRIBE';
  params: unknown[];
  signature?: unknown;
  id?: unknown;
}

/** A message as a subscribe request, or the error frame to answer it with. */
function parseRequest(message: ArrayBuffer): StreamRequest | string {
  let request: { method?: unknown; params?: unknown; signature?: unknown; id?: unknown };
  try {
    request = JSON.parse(Buffer.from(message).toString('utf8'));
  } catch {
    return errorFrame(null, 4000, 'Invalid JSON');
  }
  if (typeof request !== 'object' || request === null) return errorFrame(null, 4000, 'Invalid request');
  const method = request.method;
  if ((method !== 'SUBSCRIBE' && method !== 'UNSUBSCRIBE') || !Array.isArray(request.params)) {
    return errorFrame(request.id, 4000, 'Invalid method or params');
  }
  if (request.params.length > MAX_SUBSCRIPTIONS) {
    return method === 'SUBSCRIBE'
      ? errorFrame(request.id, 4005, `Too many subscriptions (at most ${MAX_SUBSCRIPTIONS})`)
      : errorFrame(request.id, 4000, `Too many streams in one message (at most ${MAX_SUBSCRIPTIONS})`);
  }
  return request as StreamRequest;
}

/** The WebSocket handlers of one front thread. */
class Connections {
  constructor(
    private readonly front: FrontContext,
    private readonly verifier: SignatureVerifier,
    private readonly streams: Streams,
    private readonly replayGuard: ReplayGuard | undefined,
    private readonly limits: RateLimits | undefined,
  ) {}

  upgrade(res: uWS.HttpResponse, req: uWS.HttpRequest, context: uWS.us_socket_context_t): void {
    const address = res.getRemoteAddress();
    const admitted = admitConnection(this.limits, address);
    if (isApiError(admitted)) {
      if (admitted.status === 429) this.front.metrics?.add('rateLimited');
      res.writeStatus(statusLine(admitted.status)).writeHeader('Content-Type', 'application/json; charset=utf-8');
      if (admitted.retryAfterS !== undefined) res.writeHeader('Retry-After', String(admitted.retryAfterS));
      res.end(errorBody(admitted));
      return;
    }
    res.upgrade<SocketData>(
      {
        subscriptions: new CountedSubscriptions(this.front.metrics), owner: addressOwner(new Uint8Array(address)), address: address.slice(0), closed: false, dropping: false, graceTimer: null,
        connectionKey: admitted, messages: { tatMs: 0 },
      },
      req.getHeader('sec-websocket-key'),
      req.getHeader('sec-websocket-protocol'),
      req.getHeader('sec-websocket-extensions'),
      context,
    );
  }

  // A message dropped for backpressure marks a slow consumer: it loses its subscriptions at once
  // (nothing more is queued for it, nobody else waits on it), then gets close code 1008 as soon
  // as it has read what was already queued (a close frame sent into a full buffer would itself
  // be dropped); a peer that reads nothing for SLOW_CONSUMER_GRACE_MS is cut off.
  dropped(ws: WebSocket<SocketData>): void {
    const state = ws.getUserData();
    if (state.closed || state.dropping) return;
    state.dropping = true;
    this.front.metrics?.add('wsSlowConsumers');
    this.front.log.warn({ subscriptions: state.subscriptions.size, bufferedBytes: ws.getBufferedAmount() }, 'closing slow WebSocket consumer');
    setImmediate(() => {
      if (state.closed) return;
      for (const topic of state.subscriptions.values()) ws.unsubscribe(topic);
      state.subscriptions.clear();
      state.graceTimer = setTimeout(() => {
        if (!state.closed) ws.close();
      }, SLOW_CONSUMER_GRACE_MS);
      endIfDrained(ws);
    });
  }

  close(ws: WebSocket<SocketData>): void {
    const state = ws.getUserData();
    state.closed = true;
    this.front.metrics?.socketClosed(state.subscriptions);
    if (state.graceTimer !== null) clearTimeout(state.graceTimer);
    if (state.connectionKey !== null) this.limits!.closeConnection(state.connectionKey);
  }

  message(ws: WebSocket<SocketData>, message: ArrayBuffer): void {
    const state = ws.getUserData();
    // A slow consumer being closed has lost its subscriptions and gets no new ones.
    if (state.dropping || state.closed) return;
    if (message.byteLength > MAX_MESSAGE_BYTES) {
      ws.end(CLOSE_MESSAGE_TOO_BIG, `Message too large (at most ${MAX_MESSAGE_BYTES} bytes)`);
      return;
    }
    if (this.limits && !this.limits.takeMessage(state.messages, Date.now())) {
      // Answering each excess message would itself be a flood: the connection is closed.
      state.closed = true;
      ws.end(CLOSE_MESSAGE_RATE, 'Message rate limit exceeded');
      return;
    }
    const request = parseRequest(message);
    if (typeof request === 'string') {
      ws.send(request);
      return;
    }
    const needsAccount = request.params.some((p) => typeof p === 'string' && p.startsWith('account.'));
    const accountId = needsAccount && request.method === 'SUBSCRIBE' ? this.signer(ws, request) : 0;
    for (const name of request.params) {
      if (typeof name !== 'string') ws.send(errorFrame(request.id, 4006, 'Invalid stream'));
      else if (request.method === 'UNSUBSCRIBE') unsubscribe(ws, name);
      else if (!this.subscribe(ws, request, name, needsAccount, accountId)) break;
    }
  }

  /** The verified signer of a subscribe with private streams, or 0 (the error frame already sent). */
  private signer(ws: WebSocket<SocketData>, request: StreamRequest): number {
    const state = ws.getUserData();
    // A signature check costs what an HTTP request's does: it is charged to the address first.
    const limited = this.limits?.takeAddress(state.address, Date.now());
    if (limited) {
      ws.send(errorFrame(request.id, CODE_RATE_LIMITED, limited.message));
      return 0;
    }
    const verdict = subscriberAccount(request.signature, this.front, this.verifier, this.replayGuard, state.owner);
    if (typeof verdict === 'string') {
      ws.send(errorFrame(request.id, 4001, verdict));
      return 0;
    }
    return verdict;
  }

  /** Subscribes one stream name; false once the connection holds MAX_SUBSCRIPTIONS (stop the list). */
  private subscribe(ws: WebSocket<SocketData>, request: StreamRequest, name: string, needsAccount: boolean, accountId: number): boolean {
    const subscriptions = ws.getUserData().subscriptions;
    if (subscriptions.has(name)) return true;
    const topic = this.streams.topicOf(name, this.front.marketsBySymbol, accountId);
    if (topic === null) {
      // A private stream whose signature failed was already answered with 4001.
      if (!(name.startsWith('account.') && needsAccount && accountId === 0)) ws.send(errorFrame(request.id, 4006, 'Invalid stream'));
      return true;
    }
    if (subscriptions.size >= MAX_SUBSCRIPTIONS) {
      ws.send(errorFrame(request.id, 4005, `Too many subscriptions (at most ${MAX_SUBSCRIPTIONS})`));
      return false;
    }
    ws.subscribe(topic);
    subscriptions.set(name, topic);
    this.streams.onSubscribed(name, topic);
    return true;
  }
}

function unsubscribe(ws: WebSocket<SocketData>, name: string): void {
  const subscriptions = ws.getUserData().subscriptions;
  const topic = subscriptions.get(name);
  if (topic === undefined) return;
  ws.unsubscribe(topic);
  subscriptions.delete(name);
}

export function mountWebSocket(
  app: TemplatedApp, front: FrontContext, verifier: SignatureVerifier, streams: Streams, replayGuard?: ReplayGuard,
  limits?: RateLimits,
): void {
  const connections = new Connections(front, verifier, streams, replayGuard, limits);
  app.ws<SocketData>('/*', {
    compression: uWS.SHARED_COMPRESSOR,
    maxPayloadLength: MAX_FRAME_BYTES,
    maxBackpressure: MAX_BACKPRESSURE_BYTES,
    // Not uWS's own close-on-limit: the dropped handler closes with a code that says why.
    closeOnBackpressureLimit: false,
    idleTimeout: front.config.wsIdleTimeoutS ?? DEFAULT_WS_IDLE_TIMEOUT_S,
    sendPingsAutomatically: true,
    upgrade: (res, req, context) => connections.upgrade(res, req, context),
    open: () => front.metrics?.add('wsConnections'),
    dropped: (ws: WebSocket<SocketData>) => connections.dropped(ws),
    drain: (ws: WebSocket<SocketData>) => {
      if (ws.getUserData().dropping) endIfDrained(ws);
    },
    close: (ws: WebSocket<SocketData>) => connections.close(ws),
    message: (ws: WebSocket<SocketData>, message: ArrayBuffer) => connections.message(ws, message),
  });
}
