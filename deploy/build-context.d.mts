// Declarations for deploy/build-context.mjs, for the tests that import it.
export interface IgnoreRule {
  negated: boolean;
  pattern: string;
  regex: RegExp;
}
export function parseDockerignore(text: string): IgnoreRule[];
export function excluded(rules: IgnoreRule[], path: string): boolean;
export function copyContext(source: string, dest: string): void;
