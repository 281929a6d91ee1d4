import swc from 'unplugin-swc';
import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedTestConfig } from '../../vitest.shared.ts';

// Nest reads constructor parameter types from decorator metadata, which esbuild does not emit; SWC does.
export default mergeConfig(
  sharedTestConfig,
  defineConfig({
    plugins: [swc.vite({ module: { type: 'es6' } })],
  }),
);
