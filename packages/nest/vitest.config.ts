import { fileURLToPath } from 'node:url';
import swc from 'unplugin-swc';
import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedTestConfig } from '../../vitest.shared.ts';

/**
 * The suite runs once per supported NestJS major, as one vitest project each (both counted in the
 * one test-results.json). Nest 12 is this package's own devDependency. Nest 11 lives in the
 * private workspace package ./nest11, so that its packages find one another as peers: for that
 * project every `@nestjs/*` import of the tests, the examples and the adapter's source resolves
 * there. test/nest-major.test.ts checks that the major loaded is the one the project names.
 */
const nest11 = fileURLToPath(new URL('./nest11/node_modules/@nestjs/', import.meta.url));
const majors = [
  { name: 'nest 11', alias: [{ find: /^@nestjs\/([\w-]+)(?=\/|$)/, replacement: `${nest11}$1` }] },
  { name: 'nest 12', alias: [] },
];

// Nest reads constructor parameter types from decorator metadata, which esbuild does not emit; SWC does.
export default mergeConfig(
  sharedTestConfig,
  defineConfig({
    plugins: [swc.vite({ module: { type: 'es6' } })],
    // The examples import the package by name, as users do.
    resolve: { alias: { '@latch/nest': fileURLToPath(new URL('./src/index.ts', import.meta.url)) } },
    test: {
      projects: majors.map((major) => ({
        extends: true,
        resolve: { alias: major.alias },
        test: { name: major.name },
      })),
    },
  }),
);
