// The layers of the house as a test: every import of every .ts file under engine/ and src/ is
// read with the TypeScript compiler's own pre-processor (static, dynamic and re-exports, type-only
// imports included) and checked against the rules between rooms:
//
//   engine/core   the pure engine, its rooms (book/, funds/, spot/) included: imports only
//                 engine/core, engine/bus and @noble/hashes
//   engine/bus    the contract every thread shares (rings, codec, types, control words): imports
//                 nothing from engine/core, engine/shell, engine/store or src
//   engine/store  the disk layouts (journal, snapshots, LMDB history): imports only engine/store,
//                 engine/bus, lmdb and Node's built-in modules
//   engine/       nothing in engine/ imports src/
//   src/          never imports engine/core or engine/shell, except src/main.ts, which starts the
//                 worker threads and may name their entry files
//   src/front     never imports src/routes or src/admin (the front thread's composition root,
//                 src/front-thread.ts, sits above all three)
//   src/admin     never imports src/routes; src/wire imports none of front, routes or admin
//   src/routes, src/admin
//                 reach the engine only through the engine calls (src/front/engine-calls/): they
//                 import neither the codec (engine/bus/codec.js) nor the names CommandKind and
//                 RecordType, so no route fills a command slot or decodes a record by hand
//
// The rules are tested on samples too, so a broken rule cannot pass silently.
import { readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, posix } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT, tsFiles } from '../helpers/source-files.js';

const BUILTINS = new Set(builtinModules);
/** The worker entry files src/main.ts starts. */
const WORKER_ENTRIES = new Set(['engine/shell/engine-worker.ts', 'engine/shell/journal-worker.ts']);

/** A repository path ('engine/bus/ring.ts') for a relative specifier, or the bare specifier. */
function target(file: string, specifier: string): string {
  if (!specifier.startsWith('.')) return specifier;
  return posix.normalize(posix.join(posix.dirname(file), specifier)).replace(/\.js$/, '.ts');
}

function isBuiltin(specifier: string): boolean {
  return specifier.startsWith('node:') || BUILTINS.has(specifier);
}

function under(path: string, room: string): boolean {
  return path.startsWith(`${room}/`);
}

type Rule = (file: string, to: string) => string | null;

const RULES: Rule[] = [
  (file, to) => {
    if (!under(file, 'engine/core')) return null;
    const allowed = under(to, 'engine/core') || under(to, 'engine/bus') || to.startsWith('@noble/hashes/');
    return allowed ? null : 'engine/core imports only engine/core, engine/bus and @noble/hashes';
  },
  (file, to) => {
    if (!under(file, 'engine/bus')) return null;
    const banned = ['engine/core', 'engine/shell', 'engine/store', 'src'].some((room) => under(to, room));
    return banned ? 'engine/bus imports nothing from engine/core, engine/shell, engine/store or src' : null;
  },
  (file, to) => {
    if (!under(file, 'engine/store')) return null;
    const allowed = under(to, 'engine/store') || under(to, 'engine/bus') || to === 'lmdb' || isBuiltin(to);
    return allowed ? null : 'engine/store imports only engine/store, engine/bus, lmdb and node builtins';
  },
  (file, to) => (under(file, 'engine') && under(to, 'src') ? 'nothing in engine/ imports src/' : null),
  (file, to) => {
    if (!under(file, 'src') || !(under(to, 'engine/core') || under(to, 'engine/shell'))) return null;
    if (file === 'src/main.ts' && WORKER_ENTRIES.has(to)) return null;
    return 'src/ reaches the engine only through engine/bus and engine/store (src/main.ts may name the worker entry files)';
  },
  (file, to) => {
    if (!under(file, 'src/front') || !(under(to, 'src/routes') || under(to, 'src/admin'))) return null;
    return 'src/front never imports src/routes or src/admin (src/front-thread.ts composes them)';
  },
  (file, to) => (under(file, 'src/admin') && under(to, 'src/routes') ? 'src/admin never imports src/routes' : null),
  (file, to) => {
    if (!under(file, 'src/wire')) return null;
    const banned = ['src/front', 'src/routes', 'src/admin'].some((room) => under(to, room));
    return banned ? 'src/wire imports none of src/front, src/routes, src/admin' : null;
  },
];

/** Names a route may not import: command kinds and record types are the engine calls' business. */
const ENGINE_CALL_NAMES = new Set(['CommandKind', 'RecordType']);

function isRouteFile(file: string): boolean {
  return under(file, 'src/routes') || under(file, 'src/admin');
}

/** Every import of a route file that bypasses the engine calls, read with the compiler's parser. */
function engineCallViolations(file: string, text: string): string[] {
  if (!isRouteFile(file)) return [];
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const specifier = node.moduleSpecifier.text;
      if (target(file, specifier) === 'engine/bus/codec.ts') {
        found.push(`${file} imports '${specifier}': routes reach the engine only through src/front/engine-calls`);
      }
      for (const name of importedNames(node)) {
        if (ENGINE_CALL_NAMES.has(name)) found.push(`${file} imports ${name} from '${specifier}': routes reach the engine only through src/front/engine-calls`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The names an import or export declaration brings in (by their original names). */
function importedNames(node: ts.ImportDeclaration | ts.ExportDeclaration): string[] {
  const names: string[] = [];
  const bindings = ts.isImportDeclaration(node) ? node.importClause?.namedBindings : node.exportClause;
  if (bindings && (ts.isNamedImports(bindings) || ts.isNamedExports(bindings))) {
    for (const element of bindings.elements) names.push((element.propertyName ?? element.name).text);
  }
  if (ts.isImportDeclaration(node) && bindings && ts.isNamespaceImport(bindings)) names.push('*');
  return names;
}

/** Every rule the import from `file` (a repository path) with `specifier` breaks, as messages. */
function violations(file: string, specifier: string): string[] {
  const to = target(file, specifier);
  return RULES.map((rule) => rule(file, to)).filter((m): m is string => m !== null)
    .map((rule) => `${file} imports '${specifier}' (${to}): ${rule}`);
}

function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, true);
  return info.importedFiles.map((f) => f.fileName);
}

describe('layering', () => {
  it('the rules flag what they must and pass what they may', () => {
    expect(violations('engine/core/book/book.ts', '../../bus/types.js')).toEqual([]);
    expect(violations('engine/core/book/matching.ts', '../kinds.js')).toEqual([]);
    expect(violations('engine/core/stateHash.ts', '@noble/hashes/sha2.js')).toEqual([]);
    expect(violations('engine/core/book/book.ts', '../../shell/journal.js')).toEqual([
      "engine/core/book/book.ts imports '../../shell/journal.js' (engine/shell/journal.ts): engine/core imports only engine/core, engine/bus and @noble/hashes",
    ]);
    expect(violations('engine/core/book/book.ts', 'node:fs')).toHaveLength(1);
    expect(violations('engine/bus/ring.ts', '../store/journal-store.js')).toHaveLength(1);
    expect(violations('engine/bus/types.ts', '../../src/config.js')).toHaveLength(2);
    expect(violations('engine/bus/types.ts', '../../schemas/generated/exchange/schema.js')).toEqual([]);
    expect(violations('engine/store/history-market.ts', 'lmdb')).toEqual([]);
    expect(violations('engine/store/history-market.ts', 'node:crypto')).toEqual([]);
    expect(violations('engine/store/history-market.ts', '../core/units.js')).toHaveLength(1);
    expect(violations('engine/shell/journal.ts', '../../src/log.js')).toHaveLength(1);
    expect(violations('src/routes/order.ts', '../../engine/core/exchange.js')).toHaveLength(1);
    expect(violations('src/wire/history.ts', '../../engine/shell/digest.js')).toHaveLength(1);
    expect(violations('src/main.ts', '../engine/shell/engine-worker.js')).toEqual([]);
    expect(violations('src/main.ts', '../engine/shell/journal.js')).toHaveLength(1);
    expect(violations('src/front/streams/streams.ts', '../../routes/markets.js')).toHaveLength(1);
    expect(violations('src/front/streams/connection.ts', '../../admin/routes.js')).toHaveLength(1);
    expect(violations('src/front-thread.ts', './routes/index.js')).toEqual([]);
    expect(violations('src/admin/routes.ts', '../routes/markets.js')).toHaveLength(1);
    expect(violations('src/wire/orders.ts', '../front/context.js')).toHaveLength(1);
  });

  it('the pre-processor sees static, type-only, dynamic and re-exported imports', () => {
    const info = ts.preProcessFile([
      "import { a } from './a.js';",
      "import type { B } from './b.js';",
      "export { c } from './c.js';",
      "const d = await import('./d.js');",
      "// import { e } from './e.js';",
    ].join('\n'), true, true);
    expect(info.importedFiles.map((f) => f.fileName)).toEqual(['./a.js', './b.js', './c.js', './d.js']);
  });

  it('every import under engine/ and src/ keeps to the layers', () => {
    const files = [...tsFiles('engine'), ...tsFiles('src')];
    expect(files.length).toBeGreaterThanOrEqual(80);
    for (const room of ['engine/core', 'engine/bus', 'engine/store', 'engine/shell', 'src/front', 'src/routes', 'src/wire', 'src/admin']) {
      expect(files.some((f) => under(f, room)), room).toBe(true);
    }
    const found = files.flatMap((file) => importsOf(file).flatMap((specifier) => violations(file, specifier)));
    expect(found).toEqual([]);
  });

  it('the engine-calls rule flags a route that fills slots or decodes records by hand', () => {
    expect(engineCallViolations('src/routes/order.ts', "import { CommandKind, type Command } from '../../engine/bus/types.js';")).toHaveLength(1);
    expect(engineCallViolations('src/admin/routes.ts', "import { RecordType as R } from '../../engine/bus/types.js';")).toHaveLength(1);
    expect(engineCallViolations('src/routes/order.ts', "import { readOrder } from '../../engine/bus/codec.js';")).toHaveLength(1);
    expect(engineCallViolations('src/routes/order.ts', "export { CommandKind } from '../front/engine-calls/index.js';")).toHaveLength(1);
    expect(engineCallViolations('src/routes/depth.ts', "import { Side } from '../../engine/bus/types.js';")).toEqual([]);
    expect(engineCallViolations('src/front/engine-calls/index.ts', "import { CommandKind } from '../../../engine/bus/types.js';")).toEqual([]);
  });

  it('src/routes and src/admin reach the engine only through the engine calls', () => {
    const files = [...tsFiles('src/routes'), ...tsFiles('src/admin')];
    expect(files.length).toBeGreaterThanOrEqual(10);
    const found = files.flatMap((file) => engineCallViolations(file, readFileSync(join(ROOT, file), 'utf8')));
    expect(found).toEqual([]);
  });

  it('every relative import names a file that exists', () => {
    const files = [...tsFiles('engine'), ...tsFiles('src')];
    const missing = files.flatMap((file) => importsOf(file)
      .filter((s) => s.startsWith('.'))
      .filter((s) => { try { return !statSync(join(ROOT, target(file, s))).isFile(); } catch { return true; } })
      .map((s) => `${file} imports '${s}'`));
    expect(missing).toEqual([]);
  });
});

