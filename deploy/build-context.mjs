// Copies a directory the way `docker build` sends it as the build context: every file except
// those the directory's .dockerignore excludes. deploy/dockerfile-steps.sh uses it to build
// without a Docker engine.
//
// Usage: node deploy/build-context.mjs <source directory> <destination directory>
//
// Patterns follow Docker's rules: one per line, '#' starts a comment line, a leading '/' is
// dropped, Go filepath.Match globs (* ? [...]) never cross a '/', '**' spans any number of
// directories, a leading '!' re-includes, the last pattern that matches decides, and a pattern
// that matches a directory matches everything below it. Symbolic links are copied as links.

import { copyFileSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Parses .dockerignore text into ordered rules. */
export function parseDockerignore(text) {
  const rules = [];
  for (const raw of text.split('\n')) {
    let line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const negated = line.startsWith('!');
    if (negated) line = line.slice(1).trim();
    line = line.replace(/^\/+/, '').replace(/\/+$/, '');
    if (line === '') continue;
    rules.push({ negated, pattern: line, regex: globToRegex(line) });
  }
  return rules;
}

/** A Go filepath.Match pattern, with Docker's '**', as an anchored regular expression. */
function globToRegex(pattern) {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '*' && pattern[i + 1] === '*') {
      i++;
      if (pattern[i + 1] === '/') {
        i++;
        out += '(?:.*/)?';
      } else {
        out += '.*';
      }
    } else if (c === '*') {
      out += '[^/]*';
    } else if (c === '?') {
      out += '[^/]';
    } else if (c === '[') {
      const end = pattern.indexOf(']', i + 1);
      if (end < 0) throw new Error(`.dockerignore: unclosed [ in "${pattern}"`);
      out += `[${pattern.slice(i + 1, end)}]`;
      i = end;
    } else if (c === '\\' && i + 1 < pattern.length) {
      out += escapeRegex(pattern[++i]);
    } else {
      out += escapeRegex(c);
    }
  }
  return new RegExp(`^${out}$`);
}

function escapeRegex(c) {
  return c.replace(/[.+^${}()|[\]\\/]/g, '\\$&');
}

/** True when `path` (relative, '/'-separated) or one of its parent directories matches. */
function matchesOrParent(regex, path) {
  const parts = path.split('/');
  for (let n = parts.length; n > 0; n--) {
    if (regex.test(parts.slice(0, n).join('/'))) return true;
  }
  return false;
}

/** Whether the build context leaves `path` out. */
export function excluded(rules, path) {
  let out = false;
  for (const rule of rules) {
    if (matchesOrParent(rule.regex, path)) out = !rule.negated;
  }
  return out;
}

/** Whether a re-including rule could apply below the excluded directory `dir`. */
function mayReinclude(rules, dir) {
  return rules.some((rule) => rule.negated && (rule.pattern.startsWith(`${dir}/`) || /[*?[]/.test(rule.pattern.split('/')[0])));
}

function copyTree(rules, source, dest, relative) {
  for (const name of readdirSync(join(source, relative)).sort()) {
    const path = relative === '' ? name : `${relative}/${name}`;
    const stat = lstatSync(join(source, path));
    const out = excluded(rules, path);
    if (stat.isDirectory()) {
      if (out && !mayReinclude(rules, path)) continue;
      copyTree(rules, source, dest, path);
      continue;
    }
    if (out) continue;
    mkdirSync(join(dest, relative), { recursive: true });
    if (stat.isSymbolicLink()) symlinkSync(readlinkSync(join(source, path)), join(dest, path));
    else copyFileSync(join(source, path), join(dest, path));
  }
}

/** Copies `source` into `dest` as a build context. */
export function copyContext(source, dest) {
  const ignoreFile = join(source, '.dockerignore');
  const rules = existsSync(ignoreFile) ? parseDockerignore(readFileSync(ignoreFile, 'utf8')) : [];
  mkdirSync(dest, { recursive: true });
  copyTree(rules, source, dest, '');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const [source, dest] = process.argv.slice(2);
  if (!source || !dest) {
    process.stderr.write('usage: node deploy/build-context.mjs <source> <destination>\n');
    process.exit(2);
  }
  copyContext(source, dest);
}
