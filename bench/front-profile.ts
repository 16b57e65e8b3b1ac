// Summarises the front thread's V8 CPU profile from `npm run bench:frontcpu -- --profile DIR`:
// `node dist/bench/front-profile.js DIR [top]` picks the profile whose samples include
// src/front/http.js (the front thread's) and prints self time per function and inclusive time of
// the request path's main steps, as percentages of the thread's sampled (non-idle) time.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function label(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const file = url.replace(/^.*\/dist\//, '').replace(/^file:\/\//, '');
  return `${functionName || '(anonymous)'} ${file ? `${file}:${lineNumber + 1}` : ''}`.trim();
}

function summarise(profile: Profile, top: number): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  let busy = 0;
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    if (node.callFrame.functionName === '(idle)') continue;
    busy += us;
    self.set(label(node), (self.get(label(node)) ?? 0) + us);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const l = label(byId.get(at)!);
      if (seen.has(l)) continue;
      seen.add(l);
      inclusive.set(l, (inclusive.get(l) ?? 0) + us);
    }
  }
  const pct = (us: number): string => `${((us / busy) * 100).toFixed(1)} %`;
  const rows = (m: Map<string, number>): string => [...m].sort((a, b) => b[1] - a[1]).slice(0, top).map(([l, us]) => `  ${pct(us).padStart(7)}  ${l}`).join('\n');
  return `sampled busy time ${(busy / 1000).toFixed(0)} ms\nself time:\n${rows(self)}\ninclusive time:\n${rows(inclusive)}`;
}

const dir = process.argv[2];
const top = Number(process.argv[3] ?? 40);
for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile;
  if (!profile.nodes.some((n) => n.callFrame.url.includes('/src/front/http.js'))) continue;
  process.stdout.write(`${file}\n${summarise(profile, top)}\n`);
}
