import { defineConfig } from 'vitest/config';

// Tests run TypeScript sources directly; tests that start threads or the server use the compiled
// JavaScript in dist/ (built by `npm test`'s pretest step), because worker threads run compiled code.
//
// One test file at a time. Two at a time (fileParallelism with two workers) halved the run on this
// 2-core machine (12.3 against 25.0 min at the same load) and passed whole once, but the next run
// had test/hostile/pipeline-fanout.test.ts get 404 (no such route) for one POST /api/v1/order, which
// six reruns of that file beside another did not reproduce. Until that is understood, the files
// keep the timing they were written under.
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
