// The deployable unit: the container image (Dockerfile, .dockerignore) and the systemd unit with
// its environment file (deploy/). No Docker engine runs on the development machines, so the image
// is checked through deploy/dockerfile-steps.sh, which carries out the Dockerfile's steps as a
// script and starts the result; these tests run it, and fail when its steps and the Dockerfile's
// differ, so that the script keeps testing what the Dockerfile says.

import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SHUTDOWN_TIMEOUT_MS, loadConfig } from '../../src/config.js';
import { removeDir, ROOT } from '../helpers/server.js';
import { excluded, parseDockerignore } from '../../deploy/build-context.mjs';

const execFileAsync = promisify(execFile);
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');
const SCRIPT = join(ROOT, 'deploy/dockerfile-steps.sh');

/** The Dockerfile's instructions: comments dropped, continued lines joined, spaces collapsed. */
function dockerfileInstructions(text: string): string[] {
  const out: string[] = [];
  let current = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#') || (current === '' && line === '')) continue;
    if (line.endsWith('\\')) {
      current += `${line.slice(0, -1)} `;
      continue;
    }
    out.push(`${current}${line}`.replace(/\s+/g, ' ').trim());
    current = '';
  }
  return out;
}

/** The instructions with ARG defaults put into FROM lines, as the script prints them. */
function expectedSteps(): string[] {
  const args = new Map<string, string>();
  return dockerfileInstructions(read('Dockerfile')).map((line) => {
    const arg = /^ARG (\w+)=(\S+)$/.exec(line);
    if (arg) args.set(arg[1], arg[2]);
    if (!line.startsWith('FROM ')) return line;
    return line.replace(/\$\{(\w+)\}/g, (_, name: string) => args.get(name) ?? `\${${name}}`);
  });
}

function stepsPrinted(output: string): string[] {
  return output.split('\n').filter((line) => line.startsWith('STEP ')).map((line) => line.slice(5).replace(/\s+/g, ' ').trim());
}

/** The instructions of the last stage (the runtime image). */
function runtimeStage(): string[] {
  const all = dockerfileInstructions(read('Dockerfile'));
  const last = all.map((line, i) => (line.startsWith('FROM ') ? i : -1)).filter((i) => i >= 0).pop()!;
  return all.slice(last);
}

function jsonArgs(instruction: string): string[] {
  return JSON.parse(instruction.slice(instruction.indexOf('['))) as string[];
}

describe('container image', () => {
  it('the steps script carries out the Dockerfile instruction for instruction', async () => {
    const { stdout } = await execFileAsync('bash', [SCRIPT], { env: { ...process.env, DOCKERFILE_STEPS_DRY_RUN: '1' } });
    const steps = expectedSteps();
    expect(steps.filter((line) => line.startsWith('RUN '))).toEqual([
      'RUN npm install --no-audit --no-fund --ignore-scripts',
      'RUN npm run build',
      'RUN npm prune --omit=dev --no-audit --no-fund',
      'RUN mkdir -p /var/lib/exchange && chown node:node /var/lib/exchange',
    ]);
    expect(stepsPrinted(stdout)).toEqual(steps);
  });

  it('runs on glibc as a non-root user, with the data directory a volume and only the public port exposed', () => {
    const froms = dockerfileInstructions(read('Dockerfile')).filter((line) => line.startsWith('FROM '));
    expect(froms).toHaveLength(2);
    const base = /^ARG NODE_IMAGE=(\S+)$/m.exec(read('Dockerfile'))?.[1] ?? '';
    expect(base).toMatch(/^node:20[.\d]*-bookworm/);
    expect(dockerfileInstructions(read('Dockerfile')).join('\n')).not.toMatch(/alpine|npm ci/);

    const runtime = runtimeStage();
    const users = runtime.filter((line) => line.startsWith('USER '));
    expect(users.length).toBeGreaterThan(0);
    expect(users.at(-1)).not.toMatch(/^USER (root|0)(:|$)/);
    const entry = jsonArgs(runtime.find((line) => line.startsWith('ENTRYPOINT '))!);
    expect(entry.slice(0, 2)).toEqual(['node', 'dist/src/main.js']);
    const dataDir = entry[entry.indexOf('--data-dir') + 1];
    expect(runtime).toContain(`VOLUME ${dataDir}`);
    expect(runtime.filter((line) => line.startsWith('EXPOSE '))).toEqual(['EXPOSE 8080']);
    expect(runtime).toContain('STOPSIGNAL SIGTERM');
    // Only what runs: no sources, no compiler.
    expect(runtime.filter((line) => line.startsWith('COPY ')).every((line) => line.startsWith('COPY --from=build '))).toBe(true);
  });

  it('the build context keeps the sources and leaves out node_modules, dist, data, .git and tests', () => {
    const rules = parseDockerignore(read('.dockerignore'));
    for (const path of ['package.json', 'package-lock.json', 'tsconfig.json', 'src/main.ts', 'engine/shell/journal.ts', 'schemas/generated/exchange.ts']) {
      expect(excluded(rules, path), path).toBe(false);
    }
    for (const path of ['node_modules/lmdb/index.js', 'dist/src/main.js', 'data/journal/data.mdb', '.git/HEAD', 'test/ops/deploy.test.ts', 'README.md', 'Dockerfile', 'x.log']) {
      expect(excluded(rules, path), path).toBe(true);
    }
  });

  it('.dockerignore patterns follow Docker: parents match, ** spans directories, the last match decides', () => {
    const rules = parseDockerignore('# comment\n/build\n**/*.log\n*.md\n!README.md\ndocs/*/draft?\n');
    expect(excluded(rules, 'build/out/a.js')).toBe(true);
    expect(excluded(rules, 'src/build/a.js')).toBe(false);
    expect(excluded(rules, 'a/b/c.log')).toBe(true);
    expect(excluded(rules, 'c.log')).toBe(true);
    expect(excluded(rules, 'NOTES.md')).toBe(true);
    expect(excluded(rules, 'docs/NOTES.md')).toBe(false);
    expect(excluded(rules, 'README.md')).toBe(false);
    expect(excluded(rules, 'docs/x/draft1')).toBe(true);
    expect(excluded(rules, 'docs/x/y/draft1')).toBe(false);
  });

  it('built by its steps, the runtime serves as its user, passes its health check, answers the admin CLI and stops with exit 0 on SIGTERM', async () => {
    const work = mkdtempSync(join(tmpdir(), 'exchange-image-'));
    try {
      const { stdout } = await execFileAsync('bash', [SCRIPT], {
        env: { ...process.env, DOCKERFILE_STEPS_WORK: work, DOCKERFILE_STEPS_NODE_MODULES: realpathSync(join(ROOT, 'node_modules')) },
        maxBuffer: 64 * 1024 * 1024,
        timeout: 280_000,
      }).catch((error: { stdout?: string; stderr?: string; message: string }) => {
        throw new Error(`${error.message}\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
      });
      expect(stepsPrinted(stdout)).toEqual(expectedSteps());
      expect(stdout).toContain('RESULT status {"status":"Ok","message":null}');
      expect(stdout).toContain('RESULT healthcheck exit 0');
      expect(stdout).toMatch(/RESULT admin snapshot \{"snapshotSeq":\d+\}/);
      expect(stdout).toContain('RESULT exit 0 after SIGTERM');

      const image = join(work, 'stages/runtime');
      expect(readdirSync(join(image, 'app')).sort()).toEqual(['dist', 'node_modules', 'package.json']);
      for (const dev of ['typescript', 'vitest', 'ccxt']) expect(existsSync(join(image, 'app/node_modules', dev)), dev).toBe(false);
      for (const runtimeDependency of ['lmdb', 'uWebSockets.js', 'sodium-native', 'pino']) {
        expect(existsSync(join(image, 'app/node_modules', runtimeDependency)), runtimeDependency).toBe(true);
      }
      const context = readdirSync(join(work, 'context'));
      for (const absent of ['node_modules', 'dist', '.git', 'test', 'README.md']) expect(context).not.toContain(absent);
      // The server wrote its journal into the volume, as the image's user when this runs as root.
      const journal = join(image, 'var/lib/exchange/journal/data.mdb');
      expect(existsSync(journal)).toBe(true);
      expect(existsSync(join(image, 'var/lib/exchange/LOCK'))).toBe(false);
      if (process.getuid?.() === 0) {
        expect(stdout).toContain('RESULT user 1000:1000');
        expect(statSync(journal).uid).toBe(1000);
      }
    } finally {
      removeDir(work);
    }
  }, 300_000);
});

/** A unit file as section → key → values (a key may repeat). */
function parseUnit(text: string): Map<string, Map<string, string[]>> {
  const sections = new Map<string, Map<string, string[]>>();
  let section: Map<string, string[]> | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[(\w+)\]$/.exec(line);
    if (header) {
      section = new Map();
      sections.set(header[1], section);
      continue;
    }
    const eq = line.indexOf('=');
    if (section === undefined || eq < 0) throw new Error(`unit file line not understood: ${line}`);
    const key = line.slice(0, eq).trim();
    section.set(key, [...(section.get(key) ?? []), line.slice(eq + 1).trim()]);
  }
  return sections;
}

/** A systemd time span ("30s", "1min 30s", "90") in milliseconds. */
function timeSpanMs(text: string): number {
  const units: Record<string, number> = { ms: 1, s: 1000, '': 1000, min: 60_000, m: 60_000, h: 3_600_000 };
  let total = 0;
  for (const part of text.trim().split(/\s+/)) {
    const match = /^(\d+)(ms|s|min|m|h|)$/.exec(part);
    if (!match) throw new Error(`time span not understood: ${text}`);
    total += Number(match[1]) * units[match[2]];
  }
  return total;
}

/** NAME=value lines of the environment file; with `commented`, the commented-out ones too. */
function envFile(commented: boolean): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of read('deploy/open-exchange.env').split('\n')) {
    const match = (commented ? /^#?([A-Z][A-Z0-9_]*)=(.*)$/ : /^([A-Z][A-Z0-9_]*)=(.*)$/).exec(line);
    if (match) env[match[1]] = match[2];
  }
  return env;
}

describe('systemd unit', () => {
  const unit = parseUnit(read('deploy/open-exchange.service'));
  const service = unit.get('Service')!;
  const one = (key: string): string => {
    const values = service.get(key);
    expect(values, key).toHaveLength(1);
    return values![0];
  };

  it('systemd-analyze verify accepts it without a warning', (context) => {
    let analyze: string;
    try {
      analyze = execFileSync('sh', ['-c', 'command -v systemd-analyze'], { encoding: 'utf8' }).trim();
    } catch {
      context.skip();
      return;
    }
    // verify exits 0 even when it ignores a line it cannot parse: any output is a failure.
    const result = execFileSync('sh', ['-c', `"${analyze}" verify "$0" 2>&1`, join(ROOT, 'deploy/open-exchange.service')], { encoding: 'utf8' });
    expect(result.trim()).toBe('');
  });

  it('restarts after a failure but not after a refused configuration or a failed start-up, as the supervisor does', () => {
    expect(one('Type')).toBe('simple');
    expect(one('Restart')).toBe('on-failure');
    const prevented = one('RestartPreventExitStatus').split(/\s+/).map(Number).sort();
    const supervisorFinal = /FINAL_EXIT_CODES = new Set\(\[([\d, ]+)\]\)/.exec(read('src/supervisor.ts'))![1].split(',').map(Number);
    expect(prevented).toEqual(supervisorFinal.filter((code) => code !== 0).sort());
    expect(prevented).toEqual(expect.arrayContaining([2, 3]));
    // The supervisor gives up after RESTART_LIMIT restarts within RESTART_WINDOW_MS: the first
    // start and those restarts are the starts systemd allows in that window.
    const supervisor = read('src/supervisor.ts');
    const limit = Number(/const RESTART_LIMIT = (\d+);/.exec(supervisor)![1]);
    const windowMs = Number(/const RESTART_WINDOW_MS = ([\d_]+);/.exec(supervisor)![1].replace(/_/g, ''));
    const unitSection = unit.get('Unit')!;
    expect(Number(unitSection.get('StartLimitBurst')?.[0])).toBe(limit + 1);
    expect(timeSpanMs(unitSection.get('StartLimitIntervalSec')?.[0] ?? '')).toBe(windowMs);
  });

  it('runs the exchange directly as a dedicated user, on its state directory, with a stop grace above the shutdown timeout', () => {
    expect(one('User')).not.toMatch(/^(root|0|)$/);
    const exec = one('ExecStart').split(/\s+/);
    expect(exec.slice(0, 2)).toEqual(['/usr/bin/node', 'dist/src/main.js']);
    const dataDir = exec[exec.indexOf('--data-dir') + 1];
    expect(dataDir).toBe(`/var/lib/${one('StateDirectory')}`);
    expect(service.get('ReadWritePaths')).toContain(dataDir);
    expect(one('KillSignal')).toBe('SIGTERM');

    const environment = envFile(false);
    const shutdownMs = Number(environment.SHUTDOWN_TIMEOUT_MS ?? DEFAULT_SHUTDOWN_TIMEOUT_MS);
    expect(timeSpanMs(one('TimeoutStopSec'))).toBeGreaterThan(shutdownMs);
    expect(Number(one('LimitNOFILE'))).toBeGreaterThanOrEqual(65_536);
    for (const setting of ['NoNewPrivileges=yes', 'ProtectSystem=strict', 'PrivateTmp=yes']) {
      const [key, value] = setting.split('=');
      expect(one(key), key).toBe(value);
    }
    // V8 writes the machine code it compiles: this option would kill the process.
    expect(service.has('MemoryDenyWriteExecute')).toBe(false);

    // The command line and the environment file together are a configuration the server accepts.
    const config = loadConfig(exec.slice(2), environment);
    expect(config.dataDir).toBe(dataDir);
    expect(config.demoAccounts).toBe(false);
    expect(one('EnvironmentFile').replace(/^-/, '')).toBe('/etc/open-exchange/open-exchange.env');
  });

  it('the environment file lists every configuration variable, its commented lines at their defaults', () => {
    const table = read('README.md').split('## Configuration')[1].split('\n## ')[0];
    const documented = new Set([...table.matchAll(/^\|[^|]*\|([^|]*)\|/gm)].flatMap((row) => [...row[1].matchAll(/`([A-Z][A-Z0-9_]+)/g)].map((m) => m[1])));
    expect(documented.size).toBeGreaterThan(20);
    const listed = envFile(true);
    expect(Object.keys(listed).filter((name) => !documented.has(name))).toEqual([]);
    expect([...documented].filter((name) => !(name in listed))).toEqual([]);

    // Examples rather than defaults: a markets file and the data directory the unit overrides.
    const { CONFIG_FILE: _file, DATA_DIR: _dir, ...all } = listed;
    const dataDir = ['--data-dir', '/var/lib/open-exchange'];
    expect(loadConfig(dataDir, all)).toEqual(loadConfig([...dataDir, '--no-demo'], {}));
  });
});
