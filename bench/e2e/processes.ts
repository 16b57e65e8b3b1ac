// Child processes of the load generator: the exchange server (dist/src/main.js) on loopback with
// a fresh data directory, the admin CLI that creates the accounts, and the uWebSockets.js
// hello-world server. Every child is registered so that `stopAll` ends it (SIGTERM, then SIGKILL
// after a grace period) on success, on error and on SIGINT/SIGTERM of the generator itself.

import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import { join } from 'node:path';
import type { Account } from './flow.js';

const execFileAsync = promisify(execFile);
const children = new Set<ChildProcess>();

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export interface ServerThreads {
  main: number;
  engine: number | null;
  journal: number | null;
  fronts: Array<number | null>;
}

export interface Child {
  process: ChildProcess;
  lines: string[];
  /** The parsed "ready" log line (exchange server) or null. */
  ready: Record<string, unknown> | null;
  stop(): Promise<void>;
}

/** Spawns `args` with node and resolves once a stdout line satisfies `isReady`. */
export async function startChild(root: string, args: string[], isReady: (line: string) => boolean, what: string, timeoutMs = 60_000): Promise<Child> {
  const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, LOG_PRETTY: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const lines: string[] = [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => {
    children.delete(child);
    resolve();
  }));
  let readyLine: string | null = null;
  await new Promise<void>((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => reject(new Error(`${what} not ready after ${timeoutMs} ms:\n${lines.slice(-20).join('\n')}`)), timeoutMs);
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        if (lines.length < 10_000) lines.push(line);
        if (readyLine === null && isReady(line)) {
          readyLine = line;
          clearTimeout(timer);
          resolve();
        }
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      if (lines.length < 10_000) lines.push(chunk.toString('utf8'));
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`${what} exited before it was ready:\n${lines.slice(-20).join('\n')}`));
    });
  });
  let ready: Record<string, unknown> | null = null;
  try {
    ready = JSON.parse(readyLine!) as Record<string, unknown>;
  } catch {
    ready = null;
  }
  return {
    process: child, lines, ready,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The exchange on loopback for a load run; `extra` are more flags (for instance --history-threads). */
export async function startExchange(root: string, port: number, adminPort: number, dataDir: string, frontThreads: number, extra: string[] = []): Promise<Child> {
  return startChild(root, [
    join(root, 'dist/src/main.js'), '--host', '127.0.0.1', '--port', String(port), '--admin-port', String(adminPort),
    '--data-dir', dataDir, '--front-threads', String(frontThreads), '--speed-bump-ms', '0', '--no-demo',
    // The load comes from one address at many times a market maker's rate: the request rate
    // limits are off, or the benchmark would measure the 429 path.
    '--address-requests-per-s', '0', '--key-requests-per-s', '0', '--ws-connections-per-address', '0',
    ...extra,
  ], (line) => line.includes('"msg":"ready"'), 'exchange server');
}

/** The hello-world server (bench/e2e/hello-server.ts); `relay` answers through a thread of its own, one turn later. */
export async function startHello(root: string, port: number, threads: number, relay = false): Promise<Child> {
  const args = [join(root, 'dist/bench/e2e/hello-server.js'), String(port), String(threads), ...(relay ? ['relay'] : [])];
  return startChild(root, args, (line) => line === 'ready' || line.startsWith('{"ready":true'), 'hello server');
}

/** Creates one funded account with the admin CLI, as an operator would. */
export async function createAccount(root: string, adminPort: number, deposits: string[]): Promise<Account> {
  const args = [join(root, 'dist/src/admin/cli.js'), 'create-account', ...deposits.flatMap((d) => ['--deposit', d]), '--admin-port', String(adminPort)];
  const { stdout } = await execFileAsync(process.execPath, args, { cwd: root });
  const parsed = JSON.parse(stdout) as Account;
  if (!parsed.secretKey) throw new Error(`admin CLI returned no secret key: ${stdout}`);
  return parsed;
}

/** Creates `count` accounts, `parallel` CLI processes at a time. */
export async function createAccounts(root: string, adminPort: number, count: number, deposits: string[], parallel = 4): Promise<Account[]> {
  const accounts: Account[] = new Array(count);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      accounts[i] = await createAccount(root, adminPort, deposits);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, count) }, worker));
  return accounts;
}

export async function stopAll(): Promise<void> {
  await Promise.all([...children].map((child) => new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve();
      return;
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  })));
}
