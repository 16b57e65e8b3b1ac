// An acknowledgement waits for the disk flush, shown on the real server with its real LMDB journal.
// A kill -9 cannot show it (the kernel keeps what was written even if it was never flushed), so
// the flush itself is held: a small shared library, compiled here and preloaded into the server
// (LD_PRELOAD), wraps fsync, fdatasync and msync(MS_SYNC). While a "hold" file exists each flush
// logs that it entered and waits; once the file is removed it flushes for real and logs that it
// left. LMDB flushes the journal with fdatasync on Linux.
//
// With the flush held, a signed order is sent. Once its batch's flush has entered, requests
// answered by the same front thread without the engine (GET /api/v1/markets, an invalid
// subscription on each WebSocket) make round trips: a front thread that let the order out ahead
// of the flush would have sent it by then. Neither the order's HTTP response nor its private
// stream event nor its public depth update may have arrived. After the release all three arrive,
// and each finds the flush's "left" line already logged when it arrives. No timing thresholds:
// every wait is for a condition.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createTestAccount, get, removeDir, signed, startServer, tempDataDir, waitUntil, type ApiResponse, type RunningServer,
} from '../helpers/server.js';
import { StreamClient } from '../helpers/stream-client.js';

const SHIM = String.raw`
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static char hold_path[4096];
static char log_path[4096];

__attribute__((constructor)) static void init(void) {
  const char *dir = getenv("FLUSH_GATE_DIR");
  if (dir == NULL) return;
  snprintf(hold_path, sizeof hold_path, "%s/hold", dir);
  snprintf(log_path, sizeof log_path, "%s/log", dir);
}

static void note(const char *what, const char *fn) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  char line[160];
  int n = snprintf(line, sizeof line, "%s %s %ld %lld\n", what, fn, (long)gettid(),
                   (long long)now.tv_sec * 1000000LL + now.tv_nsec / 1000);
  int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd >= 0) {
    ssize_t ignored = write(fd, line, n);
    (void)ignored;
    close(fd);
  }
}

/* Holds the calling thread while the hold file exists; returns whether it held. */
static int gate(const char *fn) {
  if (hold_path[0] == 0 || access(hold_path, F_OK) != 0) return 0;
  note("enter", fn);
  struct timespec pause = {0, 2000000};
  while (access(hold_path, F_OK) == 0) nanosleep(&pause, NULL);
  return 1;
}

int fdatasync(int fd) {
  static int (*real)(int);
  if (real == NULL) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  int held = gate("fdatasync");
  int rc = real(fd);
  if (held) note("leave", "fdatasync");
  return rc;
}

int fsync(int fd) {
  static int (*real)(int);
  if (real == NULL) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  int held = gate("fsync");
  int rc = real(fd);
  if (held) note("leave", "fsync");
  return rc;
}

int msync(void *addr, size_t length, int flags) {
  static int (*real)(void *, size_t, int);
  if (real == NULL) real = (int (*)(void *, size_t, int))dlsym(RTLD_NEXT, "msync");
  int held = (flags & MS_SYNC) ? gate("msync") : 0;
  int rc = real(addr, length, flags);
  if (held) note("leave", "msync");
  return rc;
}
`;

const hasGcc = spawnSync('gcc', ['--version']).status === 0;

describe('acknowledgements wait for the disk flush', () => {
  const gateDir = mkdtempSync(join(tmpdir(), 'flush-gate-'));
  const dataDir = tempDataDir();
  const holdPath = join(gateDir, 'hold');
  const logPath = join(gateDir, 'log');
  let server: RunningServer | undefined;
  const streams: StreamClient[] = [];
  afterAll(async () => {
    rmSync(holdPath, { force: true }); // never leave the server stuck in a flush
    for (const stream of streams) stream.close();
    await server?.stop('SIGKILL');
    removeDir(dataDir);
    removeDir(gateDir);
  });
  const log = (): string[] => (existsSync(logPath) ? readFileSync(logPath, 'utf8').split('\n').filter(Boolean) : []);
  const count = (what: 'enter' | 'leave') => log().filter((line) => line.startsWith(`${what} `)).length;

  it('sends no HTTP response and no stream event for an order before its flush completes', async (context) => {
    if (!hasGcc) context.skip('gcc is not installed: the flush-holding library cannot be compiled');
    const source = join(gateDir, 'flush-gate.c');
    const library = join(gateDir, 'flush-gate.so');
    writeFileSync(source, SHIM);
    const compiled = spawnSync('gcc', ['-shared', '-fPIC', '-O2', '-Wall', '-o', library, source, '-ldl'], { encoding: 'utf8' });
    expect(compiled.status, compiled.stderr).toBe(0);

    server = await startServer({
      dataDir,
      args: ['--no-demo', '--front-threads', '1', '--speed-bump-ms', '0'],
      env: { LD_PRELOAD: library, FLUSH_GATE_DIR: gateDir },
    });
    const account = await createTestAccount(server.adminPort, ['USDC=100000']);
    const [privateStream, publicStream] = [await StreamClient.connect(server.port), await StreamClient.connect(server.port)];
    streams.push(privateStream, publicStream);
    privateStream.subscribeSigned(account, ['account.orderUpdate']);
    publicStream.subscribe(['depth.SOL_USDC']);
    // A round trip through the front thread: it answers an invalid subscription itself, in order
    // after everything sent before it on the same connection.
    let probes = 0;
    const roundTrip = async (): Promise<void> => {
      const id = `probe-${++probes}`;
      for (const stream of [privateStream, publicStream]) stream.send({ method: 'SUBSCRIBE', params: ['no.such.stream'], id });
      expect((await get(server!.base, '/api/v1/markets')).status).toBe(200);
      for (const stream of [privateStream, publicStream]) await stream.waitFor((m) => m.id === id && m.error?.code === 4006, `probe ${id}`);
    };
    await roundTrip(); // the subscriptions are in place
    expect(log()).toEqual([]); // nothing was held so far

    // Whether the flush's "left" line was already logged when each output of the order arrived.
    const leftAtArrival: Record<string, boolean> = {};
    const isOrderEvent = (m: any) => m.stream === 'account.orderUpdate' && m.data?.c === 41;
    const isDepthEvent = (m: any) => m.stream === 'depth.SOL_USDC' && m.data?.b?.some(([price]: string[]) => price === '12.34');
    privateStream.socket.on('message', (data) => {
      if (isOrderEvent(JSON.parse(data.toString())) && !('stream' in leftAtArrival)) leftAtArrival.stream = count('leave') > 0;
    });
    publicStream.socket.on('message', (data) => {
      if (isDepthEvent(JSON.parse(data.toString())) && !('depth' in leftAtArrival)) leftAtArrival.depth = count('leave') > 0;
    });

    writeFileSync(holdPath, '');
    let response: ApiResponse | undefined;
    const order = signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', {
      symbol: 'SOL_USDC', side: 'Bid', orderType: 'Limit', price: '12.34', quantity: '1', postOnly: true, clientId: 41,
    }).then((answer) => {
      leftAtArrival.response = count('leave') > 0;
      response = answer;
      return answer;
    });

    await waitUntil(() => (count('enter') >= 1 ? true : undefined), 'the journal flush of the order to be held');
    for (let round = 0; round < 3; round++) await roundTrip();
    expect(count('leave')).toBe(0);
    expect(response).toBeUndefined();
    expect(privateStream.find(isOrderEvent)).toBeUndefined();
    expect(publicStream.find(isDepthEvent)).toBeUndefined();

    rmSync(holdPath);
    const answer = await order;
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toMatchObject({ clientId: 41, status: 'New', price: '12.34' });
    expect((await privateStream.waitFor(isOrderEvent, 'the order event')).data).toMatchObject({ e: 'orderAccepted', c: 41 });
    await publicStream.waitFor(isDepthEvent, 'the depth update');
    expect(leftAtArrival).toEqual({ response: true, stream: true, depth: true });
    // The flush that was held is the journal thread's (its OS thread id is in the "ready" line).
    const ready = JSON.parse(server.lines.find((line) => line.includes('"msg":"ready"'))!);
    expect(log()[0]).toMatch(new RegExp(`^enter (fdatasync|fsync|msync) ${ready.threads.journal} `));
  });
});
