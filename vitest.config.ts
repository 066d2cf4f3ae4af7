import { defineConfig } from 'vitest/config';

// One Redis for the run (started by global-setup); every test uses its own key prefix.
// Files run one at a time: the machine has 2 cores and many tests spawn real processes.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    setupFiles: ['test/helpers/setup.ts'],
    fileParallelism: false,
    sequence: { concurrent: false },
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    globals: false,
    reporters: ['default'],
  },
});
