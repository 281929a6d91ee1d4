import { fileURLToPath } from 'node:url';
import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedTestConfig } from '../../vitest.shared.ts';

export default mergeConfig(
  sharedTestConfig,
  defineConfig({
    // The examples import the package by name, as users do.
    resolve: { alias: { '@latch/express': fileURLToPath(new URL('./src/index.ts', import.meta.url)) } },
  }),
);
