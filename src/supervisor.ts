// The supervisor `npm start` runs: it starts the exchange (dist/src/main.js) as a child process with
// the same arguments and restarts it when it dies, so that a failed journal write or flush (which
// stops the process on purpose: it must never acknowledge ahead of the disk) or a crashed thread
// comes back through recovery without an operator. Recovery itself is the child's start-up:
// newest valid snapshot + journal replay.
//
// What it does not retry:
//   - exit code 2 (configuration refused) and 3 (start-up failed: a recovery halted on a damaged
//     journal, a port in use): restarting would fail the same way, so the supervisor exits with
//     the child's code and an operator decides (src/main.ts sets these codes);
//   - a crash loop: more than RESTART_LIMIT restarts within RESTART_WINDOW_MS stops it (exit 1).
// Restarts back off from 200 ms, doubling to 5 s, and the back-off resets once the child has run
// for RESTART_WINDOW_MS.
//
// SIGINT/SIGTERM are forwarded to the child (which stops in order) and the supervisor exits with
// the child's code. A supervisor that dies without forwarding (SIGKILL, a crash) does not leave
// the exchange running unsupervised: the child watches an IPC channel to it and stops in order
// when the channel closes. The test failpoint EXCHANGE_FAILPOINT is passed to the first child only, so an
// injected fault fires once per supervisor (README, "Durability").

import { spawn, type ChildProcess } from 'node:child_process';
import { createLogger } from './log.js';

const log = createLogger('supervisor');

const RESTART_LIMIT = 5;
const RESTART_WINDOW_MS = 60_000;
const BACKOFF_FIRST_MS = 200;
const BACKOFF_MAX_MS = 5_000;
/** Exit codes of a child that must not be restarted: refused configuration, halted recovery. */
const FINAL_EXIT_CODES = new Set([0, 2, 3]);

const mainScript = new URL('./main.js', import.meta.url).pathname;
const args = process.argv.slice(2);

let child: ChildProcess | null = null;
let stopping = false;
let restarts: number[] = [];
let backoffMs = BACKOFF_FIRST_MS;
let generation = 0;

function startChild(): void {
  const env = { ...process.env };
  if (generation > 0) delete env['EXCHANGE_FAILPOINT'];
  generation++;
  const startedAt = Date.now();
  // The IPC channel is how the child knows its supervisor is alive: the kernel closes it when this
  // process ends, however it ends (SIGKILL included), and the child then stops (src/main.ts).
  const current = spawn(process.execPath, [...process.execArgv, mainScript, ...args], { env, stdio: ['inherit', 'inherit', 'inherit', 'ipc'] });
  child = current;
  log.info({ pid: current.pid, generation }, 'exchange started');
  current.once('exit', (code, signal) => {
    child = null;
    if (stopping) {
      process.exit(code ?? 1);
    }
    if (code !== null && FINAL_EXIT_CODES.has(code)) {
      log.fatal({ code }, 'exchange stopped with a final exit code; not restarting');
      process.exit(code);
    }
    const now = Date.now();
    if (now - startedAt >= RESTART_WINDOW_MS) backoffMs = BACKOFF_FIRST_MS;
    restarts = restarts.filter((at) => now - at < RESTART_WINDOW_MS);
    if (restarts.length >= RESTART_LIMIT) {
      log.fatal({ code, signal, restarts: restarts.length }, 'exchange keeps failing; supervisor gives up');
      process.exit(1);
    }
    restarts.push(now);
    log.error({ code, signal, restartInMs: backoffMs }, 'exchange died; restarting through recovery');
    setTimeout(startChild, backoffMs);
    backoffMs = Math.min(backoffMs * 2, BACKOFF_MAX_MS);
  });
}

function stop(signal: NodeJS.Signals): void {
  if (stopping) return;
  stopping = true;
  if (child === null) process.exit(0);
  child.kill(signal);
}

process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));
startChild();
