// The project's TypeScript sources as repository-relative paths with '/' separators, for the tests
// that read the code itself (layering, function length).

import { readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..');

/** Every .ts file under `room` (a folder relative to the repository root), recursively. */
export function tsFiles(room: string): string[] {
  const walk = (dir: string): string[] => readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return walk(path);
    return name.endsWith('.ts') ? [relative(ROOT, path).split(sep).join('/')] : [];
  });
  return walk(join(ROOT, room));
}
