// Logging: pino, JSON lines by default (for operators' log pipelines), human-readable through
// pino-pretty when stdout is a terminal or LOG_PRETTY=1 asks for it. Each thread makes its own
// logger named after the thread, so lines say where they came from.

import { pino, type Logger } from 'pino';

export function createLogger(name: string): Logger {
  const level = process.env.LOG_LEVEL ?? 'info';
  const pretty = process.env.LOG_PRETTY === '1' || (process.env.LOG_PRETTY !== '0' && process.stdout.isTTY === true);
  if (pretty) {
    return pino({ name, level, transport: { target: 'pino-pretty', options: { colorize: true } } });
  }
  return pino({ name, level });
}

export type { Logger };
