import { createRequire } from 'node:module';

/**
 * A `require` that resolves packages from where @latch/core is installed, for optional peers
 * that must load synchronously. The CommonJS build compiles own-require.cjs.ts in its place
 * (scripts/build-package.mjs), since `import.meta` cannot appear in CommonJS.
 */
export const ownRequire: NodeJS.Require = createRequire(import.meta.url);
