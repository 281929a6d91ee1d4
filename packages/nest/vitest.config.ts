import { fileURLToPath } from 'node:url';
import swc from 'unplugin-swc';
import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedTestConfig } from '../../vitest.shared.ts';

// Nest reads constructor parameter types from decorator metadata, which esbuild does not emit; SWC does.
export default mergeConfig(
  sharedTestConfig,
  defineConfig({
    plugins: [swc.vite({ module: { type: 'es6' } })],
    // The examples import the package by name, as users do.
    resolve: { alias: { '@latch/nest': fileURLToPath(new URL('./src/index.ts', import.meta.url)) } },
  }),
);
