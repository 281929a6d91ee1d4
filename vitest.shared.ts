import { defineConfig } from 'vitest/config';

/** Settings every package's vitest config starts from. */
export const sharedTestConfig = defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    reporters: ['default', ['json', { outputFile: 'test-results.json' }]],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
