import { defineConfig } from 'vitest/config';

// Tests run TypeScript sources directly; tests that start threads or the server use the compiled
// JavaScript in dist/ (built by `npm test`'s pretest step), because worker threads run compiled code.
//
// One test file at a time. Two at a time (fileParallelism with two workers) halved the run on this
// 2-core machine (12.3 against 25.0 min at the same load) and passed whole once, but the next run
// had test/hostile/pipeline-fanout.test.ts get 404 (no such route) for one POST /api/v1/order. The
// likely cause is the test servers' ports, not the server: uWS listens with SO_REUSEPORT, so a
// second process can listen on a port another already holds (checked: both bind, and the kernel
// splits the connections between them), and two files' servers can pick the same port from
// test/helpers/server.ts freePort() between its probe and their bind. Until each worker draws its
// ports from a range of its own, the files run one at a time.
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
