import { fileURLToPath } from 'node:url';
import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedTestConfig } from '../../vitest.shared.ts';

export default mergeConfig(
  sharedTestConfig,
  defineConfig({
    // Two test files at once (vitest's default here is one): the reliability scenarios take
    // about half of the suite's time and mostly wait on their worker processes.
    test: { maxWorkers: 2 },
    // The examples import the package by name, as users do.
    resolve: {
      alias: [
        {
          find: /^@latch\/core\/(store|http)$/,
          replacement: fileURLToPath(new URL('./src/$1.ts', import.meta.url)),
        },
        { find: /^@latch\/core$/, replacement: fileURLToPath(new URL('./src/index.ts', import.meta.url)) },
      ],
    },
  }),
);
