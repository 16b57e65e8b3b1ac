// The supervisor stops restarting an exchange that keeps dying: after 5 restarts within a minute
// the next death makes it give up with exit code 1 and a fatal log line, rather than loop forever.
// Every child here dies at once with exit code 1 (a crash the supervisor retries, unlike the final
// codes 2 and 3): a module preloaded through NODE_OPTIONS throws in the exchange process only,
// not in the supervisor, which loads it too.

import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, removeDir, tempDataDir } from '../helpers/server.js';

const CRASH = 'simulated exchange crash';

describe('supervisor crash loop', () => {
  const dir = tempDataDir();
  afterAll(() => removeDir(dir));

  it('gives up after 5 restarts within a minute: exit code 1 and a fatal log line', async () => {
    const preload = join(dir, 'crash.cjs');
    writeFileSync(preload, `if (process.argv[1].endsWith('main.js')) throw new Error(${JSON.stringify(CRASH)});\n`);
    const child = spawn(process.execPath, [join(ROOT, 'dist/src/supervisor.js'), '--data-dir', join(dir, 'data'), '--port', '0', '--admin-port', '0', '--no-demo'], {
      cwd: ROOT, env: { ...process.env, LOG_PRETTY: '0', NODE_OPTIONS: `--require ${preload}` }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    const lines = output.split('\n');
    const count = (text: string) => lines.filter((line) => line.includes(text)).length;

    expect(code, output).toBe(1);
    // The first start and 5 restarts, each of which crashed; no start after giving up.
    expect(count('"msg":"exchange started"'), output).toBe(6);
    expect(count(`Error: ${CRASH}`), output).toBe(6);
    expect(count('"msg":"exchange died; restarting through recovery"'), output).toBe(5);
    const giveUp = lines.filter((line) => line.includes('"msg":"exchange keeps failing; supervisor gives up"'));
    expect(giveUp.length, output).toBe(1);
    expect(JSON.parse(giveUp[0])).toMatchObject({ level: 60, name: 'supervisor', code: 1, restarts: 5 });
    const lastStart = lines.findLastIndex((line) => line.includes('"msg":"exchange started"'));
    expect(lines.indexOf(giveUp[0])).toBeGreaterThan(lastStart);
  });
});
