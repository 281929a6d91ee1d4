/**
 * This module's own URL, for resolving packages from where @latch/testing is installed. The
 * CommonJS build compiles own-url.cjs.ts in its place (scripts/build-package.mjs), since
 * `import.meta` cannot appear in CommonJS.
 */
export const ownUrl: string = import.meta.url;
