// A refused configuration stops the real process before anything starts: exit code 2 (which the
// supervisor does not retry) and exactly one line on stderr naming the problem, never a stack
// trace. One case per kind of mistake an operator makes: a number out of range, a flag without a
// value, a bad environment value, a malformed markets file, duplicate markets or assets, bad limits.

import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_MARKETS } from '../../src/config.js';
import { ROOT, removeDir, tempDataDir } from '../helpers/server.js';

describe('configuration refused at start-up', () => {
  const dir = tempDataDir();
  afterAll(() => removeDir(dir));
  const file = (name: string, text: string): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const run = (args: string[], env: Record<string, string> = {}) => spawnSync(
    process.execPath,
    [join(ROOT, 'dist/src/main.js'), '--port', '0', '--admin-port', '0', '--no-demo', ...args],
    { cwd: dir, env: { ...process.env, LOG_PRETTY: '0', DATA_DIR: join(dir, 'data'), ...env }, encoding: 'utf8', timeout: 60_000 },
  );

  it('exits 2 with one line naming the problem, and creates nothing', () => {
    const [usdc, sol] = DEFAULT_MARKETS.assets;
    const solUsdc = DEFAULT_MARKETS.markets[0];
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [['--front-threads', '65'], {}, /^configuration error: front threads must be from 1 to 64$/],
      [['--snapshot-keep'], {}, /^configuration error: --snapshot-keep needs a value$/],
      [['--data-dir='], {}, /^configuration error: --data-dir needs a value$/],
      [[], { WS_IDLE_TIMEOUT_S: 'soon' }, /^configuration error: WebSocket idle timeout \(s\) must be a whole number, got "soon"$/],
      [[], { COMPACT_JOURNAL: 'false' }, /^configuration error: COMPACT_JOURNAL must be 0 or 1, got "false"$/],
      [['--config', file('truncated.json', '{"assets": [\n')], {}, /^configuration error: markets file \S+truncated\.json is not valid JSON: /],
      [['--config', file('null.json', 'null')], {}, /^configuration error: the markets file needs "assets" and "markets" arrays$/],
      [['--config', file('markets.json', JSON.stringify({ assets: [usdc, sol], markets: [solUsdc, solUsdc] }))], {}, /^configuration error: market SOL_USDC is listed twice$/],
      [['--config', file('assets.json', JSON.stringify({ assets: [usdc, sol, sol], markets: [] }))], {}, /^configuration error: asset SOL is listed twice$/],
      [['--config', file('limits.json', JSON.stringify({ ...DEFAULT_MARKETS, limits: { maxAccounts: -1 } }))], {}, /^configuration error: limits: maxAccounts must be a positive whole number, got -1$/],
    ];
    for (const [args, env, expected] of cases) {
      const result = run(args, env);
      const what = JSON.stringify({ args, env, stderr: result.stderr, stdout: result.stdout });
      expect(result.status, what).toBe(2);
      expect(result.stderr.endsWith('\n') && result.stderr.split('\n').length === 2, what).toBe(true);
      expect(result.stderr.trimEnd(), what).toMatch(expected);
    }
    // Nothing was started: no data directory (and so no journal) was created, here or in the cwd.
    expect(existsSync(join(dir, 'data'))).toBe(false);
    expect(existsSync(join(dir, 'journal'))).toBe(false);
  });
});
