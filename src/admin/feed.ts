// `npm run feed -- [--file prices.jsonl] [--fast] [--admin-port N]`: an index price feed. Reads
// JSON lines, from the file or (without --file, or with --file -) from standard input as they
// arrive:
//
//   {"t": 1760000000000, "prices": {"SOL": "150.2", "BTC": "97000.5"}}
//
// t is the line's time in milliseconds, prices map asset symbols to USDC per whole unit (decimal
// strings, at most 9 decimals; JSON numbers are refused, since a float cannot carry an exact
// price). Each line becomes one POST /admin/index-prices with source Feed on the running server's
// admin endpoint (127.0.0.1), answered once its SetIndexPrice commands are durable. Lines are
// sent at their timestamps' relative pacing: line k goes out (t_k − t_first) after the first; a
// line whose t is not after the previous one goes out at once. --fast sends each line as soon as
// the previous one was answered.
//
// A line that is not such JSON stops the feed (exit 2, naming the line). A line the server
// refuses (an unknown asset, a bad price) or cannot take (not reachable) is reported on stderr and
// the feed goes on with the next; at the end it prints {"lines", "sent", "refused"} and exits 1
// when any was refused. Pacing sleeps live here, in the feed process; the server only sees
// commands, and the engine stamps each with its own time.

import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { AdminError, setIndexPrices } from './client.js';

const USAGE = 'usage: npm run feed -- [--file <prices.jsonl> | --file -] [--fast] [--admin-port N]';

class UsageError extends Error {}

interface FeedOptions {
  file: string | null;
  fast: boolean;
  port: number;
}

interface FeedLine {
  t: number;
  prices: Record<string, string>;
}

function parseArguments(argv: string[]): FeedOptions {
  const options: FeedOptions = { file: null, fast: false, port: Number(process.env.ADMIN_PORT ?? 8081) };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--fast') options.fast = true;
    else if (arg === '--file' && i + 1 < argv.length) options.file = argv[++i] === '-' ? null : argv[i];
    else if (arg === '--admin-port' && i + 1 < argv.length && /^\d+$/.test(argv[i + 1])) options.port = Number(argv[++i]);
    else throw new UsageError(`unexpected argument "${arg}"`);
  }
  if (!Number.isInteger(options.port) || options.port < 1 || options.port > 65535) throw new UsageError('--admin-port must be a port number');
  return options;
}

/** One JSON line of the feed, or an error message. */
function parseFeedLine(text: string): FeedLine | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'not valid JSON';
  }
  const fields = value as Record<string, unknown>;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a JSON object';
  if (!Number.isSafeInteger(fields.t) || (fields.t as number) < 0) return 't must be a whole number of milliseconds';
  const prices = fields.prices;
  if (typeof prices !== 'object' || prices === null || Array.isArray(prices)) return 'prices must be an object of asset symbol → decimal string';
  for (const [symbol, price] of Object.entries(prices)) {
    if (typeof price !== 'string') return `${symbol}: the price must be a decimal string`;
  }
  return { t: fields.t as number, prices: prices as Record<string, string> };
}

async function run(options: FeedOptions): Promise<{ lines: number; sent: number; refused: number }> {
  const input = options.file === null ? process.stdin : createReadStream(options.file, 'utf8');
  const lines = createInterface({ input, crlfDelay: Infinity });
  const counts = { lines: 0, sent: 0, refused: 0 };
  let first: { t: number; atMs: number } | null = null;
  for await (const text of lines) {
    counts.lines++;
    if (text.trim() === '') continue;
    const line = parseFeedLine(text);
    if (typeof line === 'string') throw new UsageError(`line ${counts.lines}: ${line}`);
    if (first === null) first = { t: line.t, atMs: Date.now() };
    else if (!options.fast) {
      const waitMs = first.atMs + (line.t - first.t) - Date.now();
      if (waitMs > 0) await sleep(waitMs);
    }
    try {
      await setIndexPrices(options.port, line.prices, 'Feed');
      counts.sent++;
    } catch (error) {
      if (!(error instanceof AdminError)) throw error;
      counts.refused++;
      process.stderr.write(`line ${counts.lines}: ${error.message}\n`);
    }
  }
  return counts;
}

function main(): void {
  let options: FeedOptions;
  try {
    options = parseArguments(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${USAGE}\n`);
    process.exitCode = 2;
    return;
  }
  run(options).then(
    (counts) => {
      process.stdout.write(`${JSON.stringify(counts)}\n`);
      process.exitCode = counts.refused > 0 ? 1 : 0;
    },
    (error: unknown) => {
      process.stderr.write(error instanceof UsageError ? `${error.message}\n` : `error: ${String(error)}\n`);
      process.exitCode = error instanceof UsageError ? 2 : 1;
    },
  );
}

main();
