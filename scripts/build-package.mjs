#!/usr/bin/env node
// Builds a published package twice with the TypeScript compiler: ES modules into dist/ and
// CommonJS into dist/cjs/ (marked by its own package.json), each with its own declarations,
// so that `import` and `require` both load the package with types that match what they load.
// Run from the package's folder: `node ../../scripts/build-package.mjs`.
//
// A module that needs `import.meta` has a CommonJS twin `name.cjs.ts` beside `name.ts`; the
// package's tsconfig.cjs.json picks the twin (moduleSuffixes) and this script gives its output
// the plain name, so that `require('./name.js')` finds it.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const tsc = createRequire(`${process.cwd()}/`).resolve('typescript/bin/tsc');

function compile(args) {
  const run = spawnSync(process.execPath, [tsc, ...args], { stdio: 'inherit' });
  if (run.status !== 0) process.exit(run.status ?? 1);
}

// A clean output: files of modules since moved or deleted must not be packed.
rmSync('dist', { recursive: true, force: true });
compile(['-p', 'tsconfig.build.json']);
// Node10 is the resolution TypeScript pairs with `module: commonjs` (it reads `main`/`types`).
compile([
  '-p',
  existsSync('tsconfig.cjs.json') ? 'tsconfig.cjs.json' : 'tsconfig.build.json',
  '--module',
  'commonjs',
  '--moduleResolution',
  'node10',
  '--verbatimModuleSyntax',
  'false',
  '--outDir',
  'dist/cjs',
]);
for (const entry of readdirSync('dist/cjs', { recursive: true })) {
  const twin = /^(.*)\.cjs\.(js|d\.ts)$/.exec(String(entry));
  if (twin) renameSync(join('dist/cjs', String(entry)), join('dist/cjs', `${twin[1]}.${twin[2]}`));
}
mkdirSync('dist/cjs', { recursive: true });
writeFileSync('dist/cjs/package.json', `${JSON.stringify({ type: 'commonjs' }, null, 2)}\n`);
