import { defineConfig } from 'vitest/config';

// Tests run TypeScript sources directly; tests that start threads or the server use the compiled
// JavaScript in dist/ (built by `npm test`'s pretest step), because worker threads run compiled code.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: false,
    reporters: ['default', './test/helpers/summary-reporter.ts'],
  },
});
