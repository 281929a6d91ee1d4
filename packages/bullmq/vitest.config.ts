import { fileURLToPath } from 'node:url';
import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedTestConfig } from '../../vitest.shared.ts';

/**
 * The suite runs once per supported BullMQ major, as one vitest project each (both counted in the
 * one test-results.json). `package` is the devDependency that holds that major: `bullmq` itself,
 * or an npm alias such as `bullmq6` (npm:bullmq@6). For an alias, every `bullmq` import of the
 * tests, the examples and the adapter's source resolves to it, and LATCH_TEST_BULLMQ_PACKAGE tells
 * test/helpers/worker-process.ts to do the same in the worker processes it spawns (which load the
 * built dist). test/bullmq-major.test.ts checks that the major loaded is the one the project names.
 */
const majors = [
  { name: 'bullmq 5', package: 'bullmq' },
  { name: 'bullmq 6', package: 'bullmq6' },
];

export default mergeConfig(
  sharedTestConfig,
  defineConfig({
    // The examples import the package by name, as users do; the worker processes use the built dist.
    resolve: { alias: { '@latch/bullmq': fileURLToPath(new URL('./src/index.ts', import.meta.url)) } },
    test: {
      projects: majors.map((major) => ({
        extends: true,
        resolve: {
          alias: major.package === 'bullmq' ? [] : [{ find: /^bullmq(?=\/|$)/, replacement: major.package }],
        },
        test: { name: major.name, env: { LATCH_TEST_BULLMQ_PACKAGE: major.package } },
      })),
    },
  }),
);
