import { defineConfig } from 'vitest/config';

/** Settings every package's vitest config starts from. */
export const sharedTestConfig = defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // run-tests sums these files; its checks on other Node lines name their own.
    reporters: ['default', ['json', { outputFile: process.env.LATCH_TEST_RESULTS ?? 'test-results.json' }]],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
