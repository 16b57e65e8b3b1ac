// Test harness: starts the real server (compiled, from dist/) as a child process on free loopback
// ports with its own data directory, waits for its "ready" log line, and stops it. Also a signing
// client written independently of src/auth.ts (sorted keys, raw values, @noble/ed25519), so the
// server's verification is checked against a second implementation.

import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';

ed.hashes.sha512 = sha512;

export const ROOT = resolve(import.meta.dirname, '..', '..');
const execFileAsync = promisify(execFile);

/** Ports of this worker's range: below the kernel's ephemeral ports (32768 and up), 1,000 a worker. */
const PORT_RANGE_START = 20_000;
const PORTS_PER_WORKER = 1_000;
const PORT_RANGES = 12;
let nextPortOffset = Math.floor(Math.random() * PORTS_PER_WORKER);

/**
 * A port for a test server that no other server of the run holds. uWS listens with SO_REUSEPORT,
 * so a second process can listen on a port another already holds and the kernel then splits the
 * connections between the two: a port merely probed free could be handed to two test files that
 * run at once, between the probe and the servers' bind. So each vitest worker (VITEST_POOL_ID,
 * from 1) takes its ports from a range of its own, in turn, and skips one still held (a plain
 * listen, without SO_REUSEPORT, fails on a port any server holds).
 */
export async function freePort(): Promise<number> {
  const worker = Math.max(1, Number(process.env['VITEST_POOL_ID'] ?? 1) || 1);
  const first = PORT_RANGE_START + ((worker - 1) % PORT_RANGES) * PORTS_PER_WORKER;
  for (let tries = 0; tries < PORTS_PER_WORKER; tries++) {
    const port = first + (nextPortOffset++ % PORTS_PER_WORKER);
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port in ${first}-${first + PORTS_PER_WORKER - 1}`);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolveFree) => {
    const server = createServer();
    server.once('error', () => resolveFree(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolveFree(true)));
  });
}

export interface RunningServer {
  port: number;
  adminPort: number;
  dataDir: string;
  base: string;
  child: ChildProcess;
  lines: string[];
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export function tempDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'exchange-test-'));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** How long a test server may take to start (replay included) before the start counts as hung. */
const START_DEADLINE_MS = 60_000;

/** Starts dist/src/main.js; resolves when it logs "ready", rejects if it exits first or never gets ready. */
export async function startServer(options: {
  dataDir: string; args?: string[]; port?: number; adminPort?: number;
  /** The public port's address (default 127.0.0.1; any of 127.0.0.0/8 stays on the machine). */
  host?: string;
  /** Script to run instead of dist/src/main.js (the supervisor, say). */
  entry?: string;
  env?: Record<string, string>;
}): Promise<RunningServer> {
  const port = options.port ?? (await freePort());
  // Two probes in a row may be handed the same free port; the two listeners must differ.
  let adminPort = options.adminPort ?? (await freePort());
  while (options.adminPort === undefined && adminPort === port) adminPort = await freePort();
  // Perpetual PnL is realized at mark only where a test asks for it (--realize-pnl-interval-ms):
  // elsewhere the figures a test reads stay where its trades put them, whatever the clock does.
  const realize = (options.args ?? []).includes('--realize-pnl-interval-ms') ? [] : ['--realize-pnl-interval-ms', '0'];
  const args = [
    join(ROOT, options.entry ?? 'dist/src/main.js'),
    '--host', options.host ?? '127.0.0.1', '--port', String(port), '--admin-port', String(adminPort),
    '--data-dir', options.dataDir, ...realize, ...(options.args ?? []),
  ];
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, LOG_PRETTY: '0', ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let buffered = '';
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  await new Promise<void>((resolveReady, reject) => {
    // A start-up that never finishes fails here, with what the server logged, rather than as a
    // silent hook timeout.
    const deadline = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not log "ready" within ${START_DEADLINE_MS} ms; its log:\n${lines.join('\n')}`));
    }, START_DEADLINE_MS);
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        lines.push(line);
        if (line.includes('"msg":"ready"')) {
          clearTimeout(deadline);
          resolveReady();
        }
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => lines.push(chunk.toString('utf8')));
    void exited.then((code) => {
      clearTimeout(deadline);
      reject(new Error(`server exited with ${code} before ready:\n${lines.join('\n')}`));
    });
  });
  return {
    port, adminPort, dataDir: options.dataDir, base: `http://${options.host ?? '127.0.0.1'}:${port}`, child, lines,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

export interface TestAccount {
  accountId: number;
  publicKey: string;
  secretKey: string;
}

/** Runs the admin CLI as an operator would (node dist/src/admin/cli.js, as `npm run admin` does). */
export async function adminCli(adminPort: number, args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await execFileAsync(process.execPath, [join(ROOT, 'dist/src/admin/cli.js'), ...args, '--admin-port', String(adminPort)], { cwd: ROOT });
  return JSON.parse(stdout) as Record<string, unknown>;
}

export async function createTestAccount(adminPort: number, deposits: string[]): Promise<TestAccount> {
  const args = ['create-account', ...deposits.flatMap((d) => ['--deposit', d])];
  return (await adminCli(adminPort, args)) as unknown as TestAccount;
}

type Value = string | number | boolean;

/** The canonical signing string, built independently of the server's code. */
export function signingString(instruction: string, params: Record<string, Value>, timestamp: number, window: number): string {
  const parts = [`instruction=${instruction}`];
  for (const key of Object.keys(params).sort()) parts.push(`${key}=${String(params[key])}`);
  parts.push(`timestamp=${timestamp}`, `window=${window}`);
  return parts.join('&');
}

export function sign(secretKeyB64: string, message: string): string {
  const signature = ed.sign(new TextEncoder().encode(message), Buffer.from(secretKeyB64, 'base64'));
  return Buffer.from(signature).toString('base64');
}

export interface SignedOptions {
  timestamp?: number;
  window?: number;
  /** Sign with this secret instead of the account's (a wrong key). */
  signWith?: string;
  /** Send this body text instead of the signed params (a tampered body). */
  bodyOverride?: string;
  /** Leave the X-Window header out (the server then uses 5000 ms; sign with that window). */
  omitWindowHeader?: boolean;
}

export interface ApiResponse {
  status: number;
  body: any;
  text: string;
}

let lastTimestamp = 0;

/**
 * The current time in ms, but always later than the last one given: the server refuses a replayed
 * signature, so two identical requests sent within one millisecond must still differ.
 */
function nextTimestamp(): number {
  lastTimestamp = Math.max(Date.now(), lastTimestamp + 1);
  return lastTimestamp;
}

/** Sends a signed request: params go in the query for GET, in a JSON body otherwise. */
export async function signed(
  base: string, account: TestAccount, method: string, path: string, instruction: string,
  params: Record<string, Value> = {}, options: SignedOptions = {},
): Promise<ApiResponse> {
  const timestamp = options.timestamp ?? nextTimestamp();
  const window = options.window ?? 5000;
  const signature = sign(options.signWith ?? account.secretKey, signingString(instruction, params, timestamp, window));
  const headers: Record<string, string> = {
    'X-API-Key': account.publicKey,
    'X-Signature': signature,
    'X-Timestamp': String(timestamp),
  };
  if (!options.omitWindowHeader) headers['X-Window'] = String(window);
  let url = `${base}${path}`;
  let body: string | undefined;
  if (method === 'GET') {
    const query = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString();
    if (query) url += `?${query}`;
  } else {
    headers['Content-Type'] = 'application/json; charset=utf-8';
    body = options.bodyOverride ?? JSON.stringify(params);
  }
  const response = await fetch(url, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null;
  }
  return { status: response.status, body: parsed, text };
}

export async function get(base: string, path: string): Promise<ApiResponse> {
  const response = await fetch(`${base}${path}`);
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null;
  }
  return { status: response.status, body: parsed, text };
}

const HOUR_MS = 3_600_000;

/**
 * Waits, when the wall clock's next hour is less than `spanMs` away, until that hour has passed.
 * The engine's hourly events (borrow and lend interest, perpetual funding, the lend pools' samples)
 * fall on the hour of engine time, which is the wall clock: a test file that holds positions open
 * and asserts balances to the unit must not span an hour's turn, so it calls this first with a
 * bound on its own duration. It waits for the clock, a condition: it never waits unless the hour is
 * near. The hook that calls it needs a timeout of `hourGuardTimeout(spanMs)`.
 */
export async function clearOfTheHour(spanMs: number): Promise<void> {
  const untilHour = HOUR_MS - (Date.now() % HOUR_MS);
  if (untilHour > spanMs) return;
  const past = Date.now() + untilHour + 1_000;
  await waitUntil(() => (Date.now() >= past ? true : undefined), 'the hour to pass', untilHour + 10_000);
}

/** A hook timeout that covers `clearOfTheHour(spanMs)` and two minutes of the hook's own work. */
export function hourGuardTimeout(spanMs: number): number {
  return spanMs + 120_000;
}

/** Polls `probe` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function waitUntil<T>(probe: () => T | undefined | Promise<T | undefined>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
