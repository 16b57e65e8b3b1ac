import { defineConfig } from 'vitest/config';

// Tests run TypeScript sources directly; tests that start threads or the server use the compiled
// JavaScript in dist/ (built by `npm test`'s pretest step), because worker threads run compiled code.
//
// Two test files run at a time, each in a fork of its own: most files spend their time waiting on
// servers, disks and child processes rather than on a core, so two at once nearly halve the run on
// a 2-core machine (12.3 against 25.0 min at the same load). Files share nothing: each server has
// a data directory of its own under the system's temp directory, and its ports come from its
// worker's own range (test/helpers/server.ts freePort: uWS listens with SO_REUSEPORT, so two
// servers given one port would both listen and split its connections). Every test waits for
// conditions, never for a fixed time, so it holds on a loaded machine.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
    reporters: ['default', './test/helpers/summary-reporter.ts'],
  },
});
