// The calling thread's OS thread id (Linux: /proc/thread-self → "<pid>/task/<tid>"), or null
// elsewhere. Node's worker threads carry no OS thread name, so each thread reports its id at
// start-up and the main thread logs them: operators (top -H, perf) and the end-to-end benchmark
// (CPU per thread from /proc/<pid>/task/<tid>/stat) can then tell the engine, journal and front
// threads apart.

import { readlinkSync } from 'node:fs';

export function osThreadId(): number | null {
  try {
    const id = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(id) ? id : null;
  } catch {
    return null;
  }
}
