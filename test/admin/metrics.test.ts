// Operating the exchange: GET /metrics (Prometheus text) and GET /admin/health on the admin port of
// a real server, read by value after a known workload; and the access log, one line per request
// with its route, status and latency and never a signature or a secret.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestAccount, get, removeDir, signed, startServer, tempDataDir, waitUntil, type RunningServer, type TestAccount,
} from '../helpers/server.js';
import { StreamClient } from '../helpers/stream-client.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (-?[0-9.]+(?:e[-+]?[0-9]+)?|[Nn][Aa][Nn]|[+-]Inf)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)/gy;

/** Parses the text exposition strictly: every line is HELP, TYPE, a sample, or empty. */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  const typed = new Set<string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.+)$/.exec(line);
    if (meta) {
      if (meta[1] === 'TYPE') {
        expect(['counter', 'gauge', 'histogram', 'summary', 'untyped']).toContain(meta[3]);
        typed.add(meta[2]);
      }
      continue;
    }
    const match = SAMPLE_LINE.exec(line);
    if (!match) throw new Error(`not a Prometheus exposition line: ${line}`);
    const name = match[1];
    const family = name.replace(/_(bucket|sum|count)$/, '');
    if (!typed.has(name) && !typed.has(family)) throw new Error(`sample before its TYPE: ${line}`);
    const labels: Record<string, string> = {};
    if (match[3]) {
      LABEL.lastIndex = 0;
      let consumed = 0;
      let label: RegExpExecArray | null;
      while ((label = LABEL.exec(match[3])) !== null) {
        labels[label[1]] = label[2];
        consumed = LABEL.lastIndex;
      }
      if (consumed !== match[3].length) throw new Error(`malformed labels: ${line}`);
    }
    samples.push({ name, labels, value: Number(match[4]) });
  }
  return samples;
}

/** The value of the sample named `name` whose labels include `labels` (0 when absent). */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return found?.value ?? 0;
}

async function scrape(server: RunningServer): Promise<Sample[]> {
  const response = await fetch(`http://127.0.0.1:${server.adminPort}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(await response.text());
}

const ORDER = { symbol: 'SOL_USDC', side: 'Bid', orderType: 'Limit', price: '10', quantity: '1' };

describe('GET /metrics and GET /admin/health', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let trader: TestAccount;

  beforeAll(async () => {
    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '2'] });
    trader = await createTestAccount(server.adminPort, ['USDC=1000']);
  });

  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  it('counts each placed order once, by kind, result, route and status', async () => {
    const before = await scrape(server);
    const placed = 3;
    for (let i = 0; i < placed; i++) {
      const response = await signed(server.base, trader, 'POST', '/api/v1/order', 'orderExecute', ORDER);
      expect(response.status).toBe(200);
    }
    const refused = await signed(server.base, trader, 'POST', '/api/v1/order', 'orderExecute', { ...ORDER, quantity: '100000' });
    expect(refused.status).toBe(400);
    const after = await scrape(server);
    const delta = (name: string, labels: Record<string, string>) => valueOf(after, name, labels) - valueOf(before, name, labels);
    expect(delta('exchange_engine_commands_total', { kind: 'PlaceOrder', result: 'Ok' })).toBe(placed);
    expect(delta('exchange_engine_commands_total', { kind: 'PlaceOrder', result: 'InsufficientFunds' })).toBe(1);
    expect(delta('exchange_http_requests_total', { route: 'POST /api/v1/order', status: '200' })).toBe(placed);
    expect(delta('exchange_http_requests_total', { route: 'POST /api/v1/order', status: '400' })).toBe(1);
    // Every one of them went to the engine, so each has an acknowledgement latency.
    expect(delta('exchange_ack_latency_seconds_count', { route: 'POST /api/v1/order' })).toBe(placed + 1);
    expect(valueOf(after, 'exchange_ack_latency_seconds_bucket', { route: 'POST /api/v1/order', le: '+Inf' }))
      .toBe(valueOf(after, 'exchange_ack_latency_seconds_count', { route: 'POST /api/v1/order' }));
    expect(valueOf(after, 'exchange_journal_batch_commands_sum')).toBeGreaterThanOrEqual(valueOf(before, 'exchange_journal_batch_commands_sum') + placed + 1);
  });

  it('reports a durable lag of 0 and empty rings when idle', async () => {
    await waitUntil(async () => (valueOf(await scrape(server), 'exchange_durable_lag_commands') === 0 ? true : undefined), 'durable lag 0');
    const samples = await scrape(server);
    expect(samples.some((s) => s.name === 'exchange_durable_lag_commands')).toBe(true);
    expect(valueOf(samples, 'exchange_ring_occupancy_slots', { ring: 'inbound' })).toBe(0);
    expect(valueOf(samples, 'exchange_ring_capacity_slots', { ring: 'outbound' })).toBeGreaterThan(0);
    expect(valueOf(samples, 'exchange_data_dir_bytes')).toBeGreaterThan(0);
    expect(valueOf(samples, 'exchange_replay_guard_live_slots')).toBeGreaterThanOrEqual(4); // the signed orders above
  });

  it('counts WebSocket connections and subscriptions while they are open', async () => {
    const connections = [await StreamClient.connect(server.port), await StreamClient.connect(server.port)];
    connections[0].subscribe(['depth.SOL_USDC', 'trade.SOL_USDC']);
    const open = await waitUntil(async () => {
      const samples = await scrape(server);
      return valueOf(samples, 'exchange_ws_connections') === 2 && valueOf(samples, 'exchange_ws_subscriptions') === 2 ? samples : undefined;
    }, 'two connections, two subscriptions');
    expect(valueOf(open, 'exchange_ws_connections')).toBe(2);
    for (const connection of connections) connection.close();
    await waitUntil(async () => {
      const samples = await scrape(server);
      return valueOf(samples, 'exchange_ws_connections') === 0 && valueOf(samples, 'exchange_ws_subscriptions') === 0 ? true : undefined;
    }, 'connections closed');
  });

  it('reports the snapshot the operator asked for once it is written', async () => {
    expect(valueOf(await scrape(server), 'exchange_snapshot_bytes')).toBe(0);
    const response = await fetch(`http://127.0.0.1:${server.adminPort}/admin/snapshot`, { method: 'POST' });
    expect(response.status).toBe(200);
    const samples = await waitUntil(async () => {
      const s = await scrape(server);
      return valueOf(s, 'exchange_snapshot_bytes') > 0 ? s : undefined;
    }, 'snapshot written');
    expect(valueOf(samples, 'exchange_commands_since_snapshot')).toBe(0);
    expect(valueOf(samples, 'exchange_snapshot_age_seconds')).toBeGreaterThanOrEqual(0);
    expect(valueOf(samples, 'exchange_engine_commands_total', { kind: 'Snapshot', result: 'Ok' })).toBe(1);
  });

  it('is served on the admin port only', async () => {
    const response = await get(server.base, '/metrics');
    expect(response.status).toBe(404);
    expect(response.text).not.toContain('exchange_engine_commands_total');
    expect((await get(server.base, '/admin/health')).status).toBe(404);
  });

  it('reports readiness and liveness of every thread', async () => {
    const response = await fetch(`http://127.0.0.1:${server.adminPort}/admin/health`);
    expect(response.status).toBe(200);
    const health = await response.json() as { ready: boolean; live: boolean; threads: Record<string, { live: boolean; state: string; lastProgressAgeMs: number }> };
    expect(health.ready).toBe(true);
    expect(health.live).toBe(true);
    expect(Object.keys(health.threads).sort()).toEqual(['engine', 'front-0', 'front-1', 'journal']);
    for (const thread of Object.values(health.threads)) {
      expect(thread.live).toBe(true);
      expect(typeof thread.state).toBe('string');
      expect(thread.lastProgressAgeMs).toBeGreaterThanOrEqual(0);
    }
    expect(health.threads['front-1'].state).toBe('serving');
    expect(health.threads.engine.state).toMatch(/idle|applying/);
    const samples = await scrape(server);
    expect(valueOf(samples, 'exchange_thread_live', { thread: 'journal' })).toBe(1);
    expect(valueOf(samples, 'exchange_event_loop_delay_seconds', { front: '1', stat: 'max' })).toBeGreaterThanOrEqual(0);
  });

  it('logs refused requests at info and answered ones not at all at that level', async () => {
    const marker = `/api/v1/no-such-route-${Date.now()}`;
    await get(server.base, marker);
    const line = await waitUntil(() => server.lines.find((l) => l.includes('"msg":"request refused"') && l.includes('"route":"unmatched"')), 'refused line');
    expect(JSON.parse(line)).toMatchObject({ level: 30, method: 'GET', status: 404 });
    expect(server.lines.some((l) => l.includes('"msg":"request"'))).toBe(false);
  });
});

describe('access log at debug level, with metrics off', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;
  let trader: TestAccount;

  beforeAll(async () => {
    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '1'], env: { LOG_LEVEL: 'debug', METRICS: '0' } });
    trader = await createTestAccount(server.adminPort, ['USDC=1000']);
  });

  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  const accessLines = () => server.lines
    .filter((l) => l.includes('"msg":"request"') || l.includes('"msg":"request refused"'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

  it('writes one line per request with route, method, status, latency and account, never a signature or secret', async () => {
    const start = accessLines().length;
    const placed = await signed(server.base, trader, 'POST', '/api/v1/order', 'orderExecute', ORDER);
    expect(placed.status).toBe(200);
    const forged = await signed(server.base, trader, 'POST', '/api/v1/order', 'orderExecute', ORDER, { signWith: Buffer.alloc(32, 7).toString('base64') });
    expect(forged.status).toBe(401);
    await get(server.base, '/api/v1/markets');
    const lines = await waitUntil(() => (accessLines().length >= start + 3 ? accessLines().slice(start) : undefined), 'three access lines');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatchObject({ level: 20, route: 'POST /api/v1/order', method: 'POST', status: 200, accountId: trader.accountId });
    expect(lines[1]).toMatchObject({ level: 30, route: 'POST /api/v1/order', method: 'POST', status: 401 });
    expect(lines[1].accountId).toBeUndefined();
    expect(lines[2]).toMatchObject({ level: 20, route: 'GET /api/v1/markets', method: 'GET', status: 200 });
    for (const line of lines) {
      expect(Number.isInteger(line.latencyUs)).toBe(true);
      expect(line.latencyUs as number).toBeGreaterThan(0);
      expect(Object.keys(line).sort()).toEqual(expect.arrayContaining(['route', 'method', 'status', 'latencyUs']));
    }
    const logText = server.lines.join('\n');
    expect(logText).not.toContain(trader.secretKey);
    expect(logText).not.toMatch(/signature"|x-signature|X-Signature/i);
  });

  it('keeps the counters at zero and still answers the health endpoint', async () => {
    const response = await fetch(`http://127.0.0.1:${server.adminPort}/metrics`);
    const samples = parseExposition(await response.text());
    expect(valueOf(samples, 'exchange_engine_commands_total', { kind: 'PlaceOrder', result: 'Ok' })).toBe(0);
    expect(valueOf(samples, 'exchange_http_requests_total', { route: 'POST /api/v1/order', status: '200' })).toBe(0);
    const health = await fetch(`http://127.0.0.1:${server.adminPort}/admin/health`);
    expect(health.status).toBe(200);
  });
});

describe('GET /admin/health while the journal hangs', () => {
  const dataDir = tempDataDir();
  let server: RunningServer;

  afterAll(async () => {
    await server?.stop('SIGKILL');
    removeDir(dataDir);
  });

  it('reports the journal not live, the others live, and answers 503', async () => {
    // The journal's first commit never completes (as a disk that stops answering would); the
    // watchdog would end the process at 20 s, health reports from half of that.
    server = await startServer({ dataDir, args: ['--no-demo', '--stall-timeout-ms', '20000'], env: { EXCHANGE_FAILPOINT: 'journal-hang:1' } });
    expect((await fetch(`http://127.0.0.1:${server.adminPort}/admin/health`)).status).toBe(200);
    void fetch(`http://127.0.0.1:${server.adminPort}/admin/deposits`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ accountId: 1, asset: 'USDC', quantity: '1' }),
    }).catch(() => undefined);
    const report = await waitUntil(async () => {
      const response = await fetch(`http://127.0.0.1:${server.adminPort}/admin/health`);
      const body = await response.json() as any;
      return response.status === 503 ? body : undefined;
    }, 'health to report the stall', 15_000);
    expect(report.live).toBe(false);
    expect(report.ready).toBe(false);
    expect(report.threads.journal).toMatchObject({ live: false, state: 'waiting for the disk flush' });
    expect(report.threads.journal.lastProgressAgeMs).toBeGreaterThanOrEqual(10_000);
    expect(report.threads.engine.live).toBe(true);
    expect(report.threads['front-0'].live).toBe(true);
  });
});
