import { fileURLToPath } from 'node:url';
import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedTestConfig } from '../../vitest.shared.ts';

export default mergeConfig(
  sharedTestConfig,
  defineConfig({
    // The examples import the package by name, as users do; the worker processes use the built dist.
    resolve: { alias: { '@latch/bullmq': fileURLToPath(new URL('./src/index.ts', import.meta.url)) } },
  }),
);
