// Logging: pino, JSON lines by default (for operators' log pipelines), human-readable through
// pino-pretty when stdout is a terminal or LOG_PRETTY=1 asks for it. Each thread makes its own
// logger named after the thread, so lines say where they came from.

import { pino, type Logger } from 'pino';

const LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

export function createLogger(name: string): Logger {
  const level = process.env.LOG_LEVEL ?? 'info';
  if (!LEVELS.has(level)) {
    // A configuration error like any other (exit code 2, not retried by the supervisor).
    process.stderr.write(`configuration error: LOG_LEVEL must be one of ${[...LEVELS].join(', ')}, not ${JSON.stringify(level.slice(0, 20))}\n`);
    process.exit(2);
  }
  const pretty = process.env.LOG_PRETTY === '1' || (process.env.LOG_PRETTY !== '0' && process.stdout.isTTY === true);
  if (pretty) {
    return pino({ name, level, transport: { target: 'pino-pretty', options: { colorize: true } } });
  }
  return pino({ name, level });
}

export type { Logger };
