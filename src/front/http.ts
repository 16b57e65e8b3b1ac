// HTTP plumbing for uWebSockets.js on a front thread: one dispatcher for every route, bounded
// body reading, the signed-request check, and JSON responses.
//
// uWS rules followed here: everything needed from `req` is copied synchronously in the handler
// (req is invalid after it returns); `res.onAborted` is registered before the first wait; body
// chunks are copied (uWS reuses their memory); every write after the handler returned is done
// inside `res.cork`; nothing is written to an aborted response.
//
// Paths are normalised so that a base URL with a trailing slash (ccxt builds `base + '/' + path`,
// giving `//api/v1/...`) still routes.

import { performance } from 'node:perf_hooks';
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import { Errors, errorBody, statusLine, type ApiError } from '../errors.js';
import {
  batchSigningString,
  checkWindow,
  DEFAULT_WINDOW_MS,
  needsEncodedVariant,
  paramsFromBody,
  paramsFromQuery,
  signaturePrefix,
  signingString,
  type ParamValue,
  type SignatureVerifier,
} from '../auth.js';
import type { ReplayGuard } from './replay-guard.js';
import type { RateLimits } from './rate-limits.js';

export const MAX_BODY_BYTES = 64 * 1024;
const JSON_TYPE = 'application/json; charset=utf-8';

export interface RequestContext {
  res: HttpResponse;
  aborted: boolean;
  done: boolean;
  method: string;
  path: string;
  query: string;
  apiKey: string;
  signature: string;
  timestamp: string;
  window: string | undefined;
  /**
   * Close the connection after the answer: set while the request has a body the server has not
   * read to its end (keeping the connection would mean reading, and discarding, all the rest the
   * client sends), and for a request whose framing is in doubt.
   */
  closeAfterAnswer?: boolean;
  // Operating: what the request observer (front-metrics.ts) needs once it is answered.
  /** When the dispatcher took the request (performance.now(), ms). */
  startedAtMs?: number;
  /** The route's counting index (0: no route matched). */
  routeIndex?: number;
  /** The signer's account, once the signature verified. */
  accountId?: number;
  /** Set once the request was submitted to the engine: its answer counts as an acknowledgement. */
  engineBound?: boolean;
  observer?: RequestObserver | null;
  /** Called once when the client goes away before the answer (after `aborted` is set). */
  onAborted?: () => void;
}

/** Told about every answered request: counts it and writes the access log. */
export interface RequestObserver {
  /** The counting index of a route, asked once per route when it is mounted. */
  routeIndex(name: string): number;
  answered(ctx: RequestContext, status: number): void;
}

export interface RouteInput {
  /** The parsed JSON body (an object, or an array where a route allows it), or null. */
  body: unknown;
  query: URLSearchParams;
  /** The signer's account, for signed routes. */
  accountId: number;
}

export interface Route {
  method: 'get' | 'post' | 'delete' | 'patch';
  path: string;
  /**
   * The signing instruction, for signed routes; '' for a signed route the venue documents without
   * one (signed as `instruction=&…`, as ccxt signs it).
   */
  instruction?: string;
  /** Accept a JSON array body (batch endpoints). */
  arrayBody?: boolean;
  handle(ctx: RequestContext, input: RouteInput): void;
}

export function sendJson(ctx: RequestContext, status: number, body: string, contentType = JSON_TYPE, retryAfterS?: number): void {
  if (ctx.aborted || ctx.done) return;
  ctx.done = true;
  ctx.res.cork(() => {
    const res = ctx.res.writeStatus(statusLine(status)).writeHeader('Content-Type', contentType);
    if (retryAfterS !== undefined) res.writeHeader('Retry-After', String(retryAfterS));
    // A HEAD response has no body (one would be read as the start of the next response). Not
    // endWithoutBody: in this uWS version it stalls a request pipelined after the HEAD. With
    // closeConnection uWS sends `Connection: close` and shuts the socket once the answer is out.
    res.end(ctx.method === 'head' ? '' : body, ctx.closeAfterAnswer === true);
  });
  ctx.observer?.answered(ctx, status);
}

/** What a handler answered through sendJson on a keptContext. */
export interface KeptAnswer {
  status?: number;
  contentType?: string;
  retryAfterS?: number;
  body?: string;
}

/**
 * A GET request's context for running its route's handler away from a socket (a thread of a
 * front thread's history pool): the response keeps what sendJson writes — the status, the content
 * type, Retry-After and the body — in `answer`.
 */
export function keptContext(path: string, query: string): { ctx: RequestContext; answer: KeptAnswer } {
  const answer: KeptAnswer = {};
  const res = {
    cork(body: () => void) {
      body();
      return res;
    },
    writeStatus(line: string) {
      answer.status = Number.parseInt(line, 10);
      return res;
    },
    writeHeader(name: string, value: string) {
      if (name === 'Content-Type') answer.contentType = value;
      else if (name === 'Retry-After') answer.retryAfterS = Number(value);
      return res;
    },
    end(body: string) {
      answer.body = body;
      return res;
    },
  };
  const ctx: RequestContext = {
    res: res as unknown as HttpResponse, aborted: false, done: false, method: 'get', path, query,
    apiKey: '', signature: '', timestamp: '', window: undefined, observer: null,
  };
  return { ctx, answer };
}

export function sendError(ctx: RequestContext, error: ApiError): void {
  sendJson(ctx, error.status, errorBody(error), JSON_TYPE, error.retryAfterS);
}

export interface AuthSource {
  verifier: SignatureVerifier;
  accountIdForKey(apiKeyB64: string): number | undefined;
  /** Refuses a signature already used inside its window, on any front thread. */
  replayGuard?: ReplayGuard;
  /** Per-key request limits: looked at before verification, charged after (rate-limits.ts). */
  rateLimits?: RateLimits;
}

/**
 * Records a verified request's signature until its window ends; the error when it was used before,
 * or when it may have been used before the server restarted.
 */
function checkReplay(ctx: RequestContext, auth: AuthSource, accountId: number, nowMs: number): number | ApiError {
  if (!auth.replayGuard) return accountId;
  // checkWindow accepted both headers as plain decimal integers.
  const timestampMs = Number(ctx.timestamp);
  if (auth.replayGuard.signedBeforeRestart(timestampMs)) return Errors.signedBeforeRestart;
  const expiresAtMs = timestampMs + (ctx.window === undefined ? DEFAULT_WINDOW_MS : Number(ctx.window));
  // The signature verified, so it is canonical base64: its first bytes decode without a Buffer.
  const verdict = auth.replayGuard.check(signaturePrefix(ctx.signature), expiresAtMs, nowMs);
  if (verdict === 'replayed') return Errors.requestReplayed;
  if (verdict === 'full') return Errors.replayTableFull;
  return accountId;
}

/**
 * Checks a signed request; returns the account id or the error to answer with. `params` are the
 * request's parameters, or, for a batch (a JSON array body), one parameter list per item, signed
 * by the batch rule (auth.ts batchSigningString).
 */
export function authenticate(
  ctx: RequestContext,
  instruction: string,
  params: Array<[string, ParamValue]> | Array<Array<[string, ParamValue]>>,
  auth: AuthSource,
  nowMs: number,
  batch = false,
): number | ApiError {
  if (!ctx.apiKey || !ctx.signature || !ctx.timestamp) return Errors.missingApiKey;
  const window = checkWindow(ctx.timestamp, ctx.window, nowMs);
  if (!window.ok) return { status: window.status ?? 401, code: window.code ?? 'UNAUTHORIZED', message: window.message ?? 'Invalid window' };
  const accountId = auth.accountIdForKey(ctx.apiKey);
  if (accountId === undefined) return Errors.unknownApiKey;
  const windowText = ctx.window ?? '5000';
  const items = batch ? (params as Array<Array<[string, ParamValue]>>) : null;
  const single = params as Array<[string, ParamValue]>;
  const render = (encode: boolean): string => items
    ? batchSigningString(instruction, items, ctx.timestamp, windowText, encode)
    : signingString(instruction, single, ctx.timestamp, windowText, encode);
  const limited = auth.rateLimits?.peekKey(ctx.apiKey, nowMs);
  if (limited) return limited;
  const encodedDiffers = items ? items.some(needsEncodedVariant) : needsEncodedVariant(single);
  const verified = auth.verifier.verify(ctx.apiKey, ctx.signature, render(false))
    || (encodedDiffers && auth.verifier.verify(ctx.apiKey, ctx.signature, render(true)));
  if (!verified) return Errors.invalidSignature;
  const result = checkReplay(ctx, auth, accountId, nowMs);
  if (typeof result !== 'number') return result;
  // Only a verified, fresh request is charged to its key: nobody else can spend the key's budget.
  return auth.rateLimits?.takeKey(ctx.apiKey, nowMs) ?? result;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function normalisePath(url: string): string {
  if (url.indexOf('//') < 0 && (url.length <= 1 || url.charCodeAt(url.length - 1) !== 47 /* '/' */)) return url;
  let path = url.replace(/\/{2,}/g, '/');
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  return path;
}

/**
 * Reads a bounded body, then calls `onBody` with it (or answers 413, which closes the connection).
 * The body may be a view of uWS's own memory: `onBody` must not keep it past its return.
 */
function readBody(ctx: RequestContext, onBody: (body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let overflow = false;
  ctx.res.onData((chunk, isLast) => {
    if (overflow) return;
    size += chunk.byteLength;
    if (size > MAX_BODY_BYTES) {
      overflow = true;
      sendError(ctx, Errors.bodyTooLarge);
      return;
    }
    if (isLast && chunks.length === 0) {
      // The whole body in one chunk (the usual case): read in place, no copy.
      ctx.closeAfterAnswer = false;
      onBody(Buffer.from(chunk));
      return;
    }
    chunks.push(Buffer.from(chunk.slice(0))); // one copy: uWS reuses the chunk's memory
    if (!isLast) return;
    ctx.closeAfterAnswer = false;
    onBody(Buffer.concat(chunks));
  });
}

/**
 * A framing problem the headers show, found before any of the body is read: Content-Length
 * headers that disagree (a proxy in front could frame the body by the other one and smuggle a
 * request past it), or one announcing more than MAX_BODY_BYTES. uWS itself refuses a malformed
 * value and a Content-Length beside Transfer-Encoding.
 */
function framingError(req: HttpRequest): ApiError | null {
  const first = req.getHeader('content-length');
  if (first === '') return null;
  const values: string[] = [];
  req.forEach((key, value) => {
    if (key === 'content-length') values.push(value);
  });
  if (values.some((value) => value !== first)) return Errors.conflictingContentLength;
  if (first.length > 15 || Number(first) > MAX_BODY_BYTES) return Errors.bodyTooLarge;
  return null;
}

/** Whether the request announces a body (GET routes and unknown paths never read it). */
function hasBody(req: HttpRequest): boolean {
  const length = req.getHeader('content-length');
  return (length !== '' && length !== '0') || req.getHeader('transfer-encoding') !== '';
}

/** Query keys a request may repeat: the wire reference's list parameters. */
const REPEATABLE_QUERY_KEYS = new Set(['marketType', 'market_type']);

/**
 * The query string's parameters, or the error for a key given twice that is not a list: routes
 * read one value per key, and which of two a route would take is not the client's guess to make.
 */
export function parseQuery(text: string): URLSearchParams | ApiError {
  if (text === '') return new URLSearchParams();
  const query = new URLSearchParams(text);
  const seen = new Set<string>();
  for (const key of query.keys()) {
    if (seen.has(key) && !REPEATABLE_QUERY_KEYS.has(key)) {
      return Errors.invalid(`Query parameter ${key.slice(0, 40)} is given more than once`);
    }
    seen.add(key);
  }
  return query;
}

/** Deepest JSON nesting a body may have (a batch of orders needs 2; signing renders nested values). */
const MAX_JSON_DEPTH = 16;

/** True when `value` nests no deeper than `limit` levels of arrays and objects. */
function withinDepth(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return true;
  if (limit === 0) return false;
  for (const item of Array.isArray(value) ? value : Object.values(value)) {
    if (!withinDepth(item, limit - 1)) return false;
  }
  return true;
}

function parseBody(ctx: RequestContext, route: Route, raw: Buffer): { ok: true; value: unknown } | { ok: false } {
  if (raw.length === 0) return { ok: true, value: null };
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch {
    sendError(ctx, Errors.malformedJson);
    return { ok: false };
  }
  const isObject = typeof value === 'object' && value !== null && !Array.isArray(value);
  if (!isObject && !(route.arrayBody && Array.isArray(value))) {
    sendError(ctx, Errors.bodyNotObject);
    return { ok: false };
  }
  // Deeper values would be refused anyway, but rendering them for the signature could overflow the stack.
  if (!withinDepth(value, MAX_JSON_DEPTH)) {
    sendError(ctx, Errors.invalid(`JSON body nested too deeply (at most ${MAX_JSON_DEPTH} levels)`));
    return { ok: false };
  }
  return { ok: true, value };
}

/** Routes by "method path", the paths that have any route, and each route's counting index. */
function routeTable(routes: Route[], observer: RequestObserver | null): { table: Map<string, Route>; paths: Set<string>; routeIndices: Map<Route, number> } {
  const table = new Map<string, Route>();
  const paths = new Set<string>();
  const routeIndices = new Map<Route, number>();
  for (const route of routes) {
    table.set(`${route.method} ${route.path}`, route);
    paths.add(route.path);
    routeIndices.set(route, observer?.routeIndex(`${route.method.toUpperCase()} ${route.path}`) ?? 0);
  }
  return { table, paths, routeIndices };
}

/** The client went away before its answer: nothing more is written to it, and its wait (if any) is told. */
function abortRequest(ctx: RequestContext): void {
  ctx.aborted = true;
  ctx.onAborted?.();
}

/**
 * Registers one dispatcher for all routes on `app`. `auth` is null on apps without signed routes
 * (the admin app); `limits`, when given, counts every request against its client address before
 * anything else is done with it.
 */
export function mountRoutes(
  app: TemplatedApp, routes: Route[], auth: AuthSource | null, onError: (error: unknown) => void, limits: RateLimits | null = null,
  observer: RequestObserver | null = null,
): void {
  const { table, paths, routeIndices } = routeTable(routes, observer);

  const run = (ctx: RequestContext, route: Route, body: unknown): void => {
    try {
      const query = parseQuery(ctx.query);
      if (!(query instanceof URLSearchParams)) {
        sendError(ctx, query);
        return;
      }
      let accountId = 0;
      if (route.instruction !== undefined) {
        const batch = Array.isArray(body);
        // A batch item that is not an object has no parameters; the route refuses it.
        const params = batch
          ? (body as unknown[]).map((item) => (isPlainObject(item) ? paramsFromBody(item) : []))
          : isPlainObject(body)
            ? paramsFromBody(body)
            : paramsFromQuery(ctx.query);
        const result = authenticate(ctx, route.instruction, params, auth!, Date.now(), batch);
        if (typeof result !== 'number') {
          sendError(ctx, result);
          return;
        }
        accountId = result;
        ctx.accountId = result;
      }
      route.handle(ctx, { body, query, accountId });
    } catch (error) {
      // A handler bug must not take the thread down: answer 500 and report it.
      onError(error);
      sendError(ctx, Errors.internal);
    }
  };

  app.any('/*', (res: HttpResponse, req: HttpRequest) => {
    const method = req.getMethod().toLowerCase();
    const path = normalisePath(req.getUrl());
    const ctx: RequestContext = {
      res,
      aborted: false,
      done: false,
      method,
      path,
      query: req.getQuery() ?? '',
      apiKey: req.getHeader('x-api-key'),
      signature: req.getHeader('x-signature'),
      timestamp: req.getHeader('x-timestamp'),
      window: req.getHeader('x-window') || undefined,
      closeAfterAnswer: hasBody(req),
      startedAtMs: observer ? performance.now() : 0, observer,
    };
    res.onAborted(() => abortRequest(ctx));
    const limited = limits?.takeAddress(res.getRemoteAddress(), Date.now());
    if (limited) {
      sendError(ctx, limited);
      return;
    }
    const framing = framingError(req);
    if (framing) {
      ctx.closeAfterAnswer = true;
      // Answered on the next turn, not from here: uWS goes on to parse and serve whatever follows
      // in the same read (the smuggled request) after an answer sent from the handler, while with
      // the answer still pending it drops the connection instead.
      setImmediate(() => sendError(ctx, framing));
      return;
    }
    const route = table.get(`${method} ${path}`);
    if (!route) {
      sendError(ctx, paths.has(path) ? Errors.methodNotAllowed : Errors.notFound);
      return;
    }
    ctx.routeIndex = routeIndices.get(route);
    if (method === 'get') {
      run(ctx, route, null);
      return;
    }
    readBody(ctx, (raw) => {
      const parsed = parseBody(ctx, route, raw);
      if (parsed.ok) run(ctx, route, parsed.value);
    });
  });
}
