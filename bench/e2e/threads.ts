// CPU time per OS thread of a process, from /proc/<pid>/task/<tid>/stat (utime + stime, in
// clock ticks of 10 ms), so a phase's share of a core can be given per thread: the server's
// engine, journal and front threads (their ids are in its "ready" log line), the rest of its
// threads (main, V8 and libuv helpers, lmdb) summed, and this client's own threads.

import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

const TICKS_PER_S = 100; // USER_HZ on Linux

export type ThreadTimes = Map<number, number>; // tid → CPU seconds

export function threadTimes(pid: number): ThreadTimes {
  const times: ThreadTimes = new Map();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return times;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // The command name may contain spaces; fields after it are space-separated.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      times.set(Number(tid), (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S);
    } catch {
      // the thread exited meanwhile
    }
  }
  return times;
}

/** The calling thread's OS thread id, or null off Linux. */
export function currentThreadId(): number | null {
  try {
    return Number(readlinkSync('/proc/thread-self').split('/').pop());
  } catch {
    return null;
  }
}

/**
 * CPU per named thread between two samples, as a percentage of one core over `seconds`; threads
 * not named are summed under `other`.
 */
export function cpuPercent(before: ThreadTimes, after: ThreadTimes, names: Map<number, string>, seconds: number): Record<string, number> {
  const out: Record<string, number> = {};
  let other = 0;
  for (const [tid, t] of after) {
    const used = t - (before.get(tid) ?? 0);
    const name = names.get(tid);
    if (name) out[name] = Math.round((used / seconds) * 1000) / 10;
    else other += used;
  }
  out.other = Math.round((other / seconds) * 1000) / 10;
  let total = 0;
  for (const [tid, t] of after) total += t - (before.get(tid) ?? 0);
  out.total = Math.round((total / seconds) * 1000) / 10;
  return out;
}
