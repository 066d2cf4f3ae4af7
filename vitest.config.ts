import { defineConfig } from 'vitest/config';

// Two files run at a time: the machine has 2 cores, and most files spend most of their time
// waiting on real processes (a run of one file at a time left the CPU 40-80 % idle). Each
// worker slot has a Redis server of its own (global-setup), so a file's leak guard, or a file
// that sets `maxmemory`, never touches the file beside it; every test uses its own key prefix.
// A worker process runs file after file (`isolate: false`): the fleet's modules are imported once
// per worker instead of once per file (import time 159-233 s of CPU → 17 s; the suite's wall time
// 1,006 s against 1,149-1,176 s, run AI). Nothing in the tests replaces a module (no `vi.mock`),
// every file makes its own services, servers and key prefix, and each file's cleanup runs at its end.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    setupFiles: ['test/helpers/setup.ts'],
    fileParallelism: true,
    maxWorkers: 2,
    sequence: { concurrent: false },
    pool: 'forks',
    isolate: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    globals: false,
    reporters: ['default'],
  },
});
