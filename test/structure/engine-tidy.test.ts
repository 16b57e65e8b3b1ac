// Tidy test for the engine core: engine/core must stay a pure, integer-only function of the
// command stream. Source text (comments and string literals stripped first, so prose may name
// what it avoids) must not use floats, clocks, randomness, timers, async code, the process or
// the console. The scanner is tested on samples too, so a broken pattern cannot pass silently.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const CORE = join(import.meta.dirname, '..', '..', 'engine', 'core');

const BANNED: [string, RegExp][] = [
  ['parseFloat', /\bparseFloat\b/],
  ['toFixed', /\btoFixed\b/],
  ['Math.random', /\bMath\.random\b/],
  ['Date', /\bDate\b/],
  ['performance', /\bperformance\b/],
  ['setTimeout', /\bsetTimeout\b/],
  ['setInterval', /\bsetInterval\b/],
  ['setImmediate', /\bsetImmediate\b/],
  ['async', /\basync\b/],
  ['await', /\bawait\b/],
  ['process.', /\bprocess\s*\./],
  ['console.', /\bconsole\s*\./],
  ['Float32Array', /\bFloat32Array\b/],
  ['float literal', /(?<![\w.])\d[\d_]*\.\d/],
  ['exponent literal', /(?<![\w.])\d[\d_]*(?:\.\d+)?[eE][+-]?\d/],
  ['Number.parseFloat / Math.fround', /\b(?:Number\.parseFloat|Math\.fround)\b/],
];

/** Removes comments and the contents of string and template literals. */
function stripCommentsAndStrings(source: string): string {
  let out = '';
  for (let i = 0; i < source.length; ) {
    const two = source.slice(i, i + 2);
    const ch = source[i];
    if (two === '//') {
      while (i < source.length && source[i] !== '\n') i++;
    } else if (two === '/*') {
      const end = source.indexOf('*/', i + 2);
      i = end < 0 ? source.length : end + 2;
    } else if (ch === '"' || ch === "'" || ch === '`') {
      i++;
      while (i < source.length && source[i] !== ch) i += source[i] === '\\' ? 2 : 1;
      i++;
      out += `${ch}${ch}`;
    } else {
      out += ch;
      i++;
    }
  }
  return out;
}

function violations(source: string): string[] {
  const code = stripCommentsAndStrings(source);
  return BANNED.filter(([, pattern]) => pattern.test(code)).map(([name]) => name);
}

function coreFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return coreFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

describe('engine core tidiness', () => {
  it('the scanner catches what it must and ignores comments and strings', () => {
    expect(violations('const x = 0.5;')).toEqual(['float literal']);
    expect(violations('const t = Date.now();')).toEqual(['Date']);
    expect(violations('async function f() { await g(); }')).toEqual(['async', 'await']);
    expect(violations('const r = Math.random() * 1e3;')).toEqual(['Math.random', 'exponent literal']);
    expect(violations('if (process.env.X) console.log(1);')).toEqual(['process.', 'console.']);
    expect(violations('setTimeout(f, 1); setInterval(f, 2); performance.now(); parseFloat(s); n.toFixed(2);')).toEqual([
      'parseFloat', 'toFixed', 'performance', 'setTimeout', 'setInterval',
    ]);
    expect(violations('// Date.now() and 0.5 in a comment\nconst ok = 1; /* await */ const s = "async 2.5";')).toEqual([]);
    expect(violations('const hex = 0x9e3779b1; const big = 1_000_000; a.b0.c;')).toEqual([]);
  });

  it('engine/core uses no floats, clocks, randomness, timers, async, process or console', () => {
    const files = coreFiles(CORE);
    expect(files.length).toBeGreaterThanOrEqual(10);
    const found = files.flatMap((path) => violations(readFileSync(path, 'utf8')).map((name) => `${path}: ${name}`));
    expect(found).toEqual([]);
  });

  it('every core file opens with a header comment', () => {
    const missing = coreFiles(CORE).filter((path) => !readFileSync(path, 'utf8').startsWith('//'));
    expect(missing).toEqual([]);
  });
});
