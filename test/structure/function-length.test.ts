// A ratchet on function length: no function, method, accessor, constructor or arrow function in
// src/ or engine/ may run past 70 lines (TigerBeetle's limit), measured with the TypeScript
// compiler as the line span of its body, from the line of the opening brace (or of the expression
// an arrow returns) to the line of its end. The functions that were longer when the rule came in
// are listed below with their lengths. A listed function may not grow, and once it is 70 lines or
// fewer (or gone) it must leave the list, so the list only ever shrinks.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT, tsFiles } from '../helpers/source-files.js';

const MAX_LINES = 70;

/** Functions allowed past MAX_LINES, by "file name", with the length they may not exceed. */
const EXCEPTIONS: Record<string, number> = {
  'engine/shell/engine-worker.ts main': 111,
  'engine/shell/journal-worker.ts main': 126,
  'src/config.ts buildMarket': 90,
  'src/front/http.ts mountRoutes': 83,
  'src/front-thread.ts main': 91,
  'src/main.ts main': 160,
};

interface Measured {
  /** "path name": the enclosing classes and functions, then this one, joined by '.'. */
  key: string;
  lines: number;
}

type FunctionLike = ts.FunctionLikeDeclaration & { body: ts.Node };

function isMeasured(node: ts.Node): node is FunctionLike {
  return (ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isArrowFunction(node)
    || ts.isFunctionExpression(node) || ts.isConstructorDeclaration(node) || ts.isGetAccessorDeclaration(node)
    || ts.isSetAccessorDeclaration(node)) && node.body !== undefined;
}

/** The name a function is known by: its own, or the variable, property or call it is given to. */
function nameOf(node: ts.Node, source: ts.SourceFile): string | null {
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const own = (node as ts.NamedDeclaration).name;
  if (own !== undefined && !ts.isFunctionExpression(node)) return own.getText(source);
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) {
    return parent.name.getText(source);
  }
  if (ts.isCallExpression(parent)) return `${parent.expression.getText(source).replace(/\s+/g, '')}(…)`;
  if (own !== undefined) return own.getText(source);
  return null;
}

/** Every measured function of one file, with its length in lines. */
function measure(path: string, text: string): Measured[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const line = (pos: number) => source.getLineAndCharacterOfPosition(pos).line;
  const out: Measured[] = [];
  const seen = new Map<string, number>();
  const visit = (node: ts.Node, scope: string[]): void => {
    let inner = scope;
    if (isMeasured(node)) {
      const base = [...scope, nameOf(node, source) ?? '(anonymous)'].join('.');
      const count = (seen.get(base) ?? 0) + 1;
      seen.set(base, count);
      const name = count === 1 ? base : `${base}#${count}`;
      out.push({ key: `${path} ${name}`, lines: line(node.body.getEnd()) - line(node.body.getStart(source)) + 1 });
      inner = name.split('.');
    } else if (ts.isClassLike(node) && node.name !== undefined) {
      inner = [...scope, node.name.text];
    } else if (ts.isVariableDeclaration(node) && node.initializer !== undefined && !isMeasured(node.initializer)) {
      inner = [...scope, node.name.getText(source)];
    }
    ts.forEachChild(node, (child) => visit(child, inner));
  };
  visit(source, []);
  return out;
}

describe('function length', () => {
  it('measures bodies by line span and names functions by where they sit', () => {
    const sample = [
      'export function top() {',
      '  return 1;',
      '}',
      'class Box {',
      '  constructor() {}',
      '  get size() { return 2; }',
      '  open(): void {',
      '    const inner = () =>',
      '      3;',
      '    const long = () => {',
      '',
      '    };',
      '    [1].map(function (x) { return x; });',
      '  }',
      '}',
      'const table = { route: (a: number) => { return a; } };',
    ].join('\n');
    expect(measure('x.ts', sample)).toEqual([
      { key: 'x.ts top', lines: 3 },
      { key: 'x.ts Box.constructor', lines: 1 },
      { key: 'x.ts Box.size', lines: 1 },
      { key: 'x.ts Box.open', lines: 8 },
      { key: 'x.ts Box.open.inner', lines: 1 },
      { key: 'x.ts Box.open.long', lines: 3 },
      { key: 'x.ts Box.open.[1].map(…)', lines: 1 },
      { key: 'x.ts table.route', lines: 1 },
    ]);
  });

  it(`no function in src/ or engine/ runs past ${MAX_LINES} lines unless listed, and the list only shrinks`, () => {
    const measured = [...tsFiles('engine'), ...tsFiles('src')]
      .flatMap((path) => measure(path, readFileSync(join(ROOT, path), 'utf8')));
    expect(measured.length).toBeGreaterThan(500);
    const byKey = new Map(measured.map((m) => [m.key, m.lines]));
    const problems: string[] = [];
    for (const { key, lines } of measured) {
      const allowed = EXCEPTIONS[key];
      if (lines > MAX_LINES && allowed === undefined) problems.push(`${key}: ${lines} lines (limit ${MAX_LINES})`);
      if (allowed !== undefined && lines > allowed) problems.push(`${key}: ${lines} lines, longer than its recorded ${allowed}`);
      // A shortened exception records its new length, so the allowance can never grow back.
      if (allowed !== undefined && lines < allowed && lines > MAX_LINES) problems.push(`${key}: ${lines} lines, shorter than its recorded ${allowed}; record ${lines}`);
      if (allowed !== undefined && lines <= MAX_LINES) problems.push(`${key}: ${lines} lines now; remove it from EXCEPTIONS`);
    }
    for (const key of Object.keys(EXCEPTIONS)) {
      if (!byKey.has(key)) problems.push(`${key}: no such function any more; remove it from EXCEPTIONS`);
    }
    expect(problems).toEqual([]);
  });
});
