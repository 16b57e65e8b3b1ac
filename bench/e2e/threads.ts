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

/** The `k` busiest threads without a name, as "tid:percent" strings (what "other" is made of). */
export function busiestUnnamed(before: ThreadTimes, after: ThreadTimes, names: Map<number, string>, seconds: number, k = 3): string[] {
  const rows: Array<[number, number]> = [];
  for (const [tid, t] of after) if (!names.has(tid)) rows.push([tid, t - (before.get(tid) ?? 0)]);
  rows.sort((a, b) => b[1] - a[1]);
  return rows.slice(0, k).filter(([, used]) => used > 0).map(([tid, used]) => `${tid}:${Math.round((used / seconds) * 1000) / 10}%`);
}

export interface MachineTimes {
  busy: number;
  idle: number;
  steal: number;
}

/** Whole-machine CPU seconds from /proc/stat (all cores): busy (without steal), idle + iowait, steal. */
export function machineTimes(): MachineTimes {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
    const f = line.trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, idle, iowait, irq, softirq, steal] = f;
    return { busy: (user + nice + system + irq + softirq) / TICKS_PER_S, idle: (idle + iowait) / TICKS_PER_S, steal: (steal ?? 0) / TICKS_PER_S };
  } catch {
    return { busy: 0, idle: 0, steal: 0 };
  }
}

/**
 * Machine CPU over a phase in % of one core: busy (every process), steal (taken by the
 * hypervisor), and foreign = busy − the server's and client's own CPU, i.e. other processes on
 * this shared machine.
 */
export function machinePercent(before: MachineTimes, after: MachineTimes, ownPercent: number, seconds: number): { busy: number; steal: number; foreign: number } {
  const p = (x: number) => Math.round((x / seconds) * 1000) / 10;
  const busy = p(after.busy - before.busy);
  return { busy, steal: p(after.steal - before.steal), foreign: Math.max(0, Math.round((busy - ownPercent) * 10) / 10) };
}
