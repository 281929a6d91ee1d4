// Mutants for `run.mjs --teeth`: each breaks one file of an app's INSTALLED copy of a package
// (node_modules in the temp directory, never the repo) in a way the app's check must notice.
import { writeFileSync } from 'node:fs';

function editManifest(edit) {
  return (file, original) => {
    const manifest = JSON.parse(original);
    edit(manifest);
    writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
  };
}

function replaceWith(text) {
  return (file) => writeFileSync(file, text);
}

const restore = (file, original) => writeFileSync(file, original);

export const mutants = [
  {
    app: 'nest-cjs',
    what: "@latch/core's exports without the require condition",
    file: 'node_modules/@latch/core/package.json',
    apply: editManifest((manifest) => {
      delete manifest.exports['.'].require;
    }),
    restore,
  },
  {
    app: 'nest-esm',
    what: "@latch/core's exports without the import condition",
    file: 'node_modules/@latch/core/package.json',
    apply: editManifest((manifest) => {
      delete manifest.exports['.'].import;
    }),
    restore,
  },
  {
    app: 'express',
    what: 'a lock() middleware that never locks',
    file: 'node_modules/@latch/express/dist/index.js',
    apply: replaceWith(
      `export { lockErrorHandler } from './problem-response.js';
let token = 0;
export function lock() {
  return (req, _res, next) => {
    req.lock = { fencingToken: ++token, signal: new AbortController().signal };
    next();
  };
}
`,
    ),
    restore,
  },
  {
    app: 'bullmq',
    what: 'a withLock() that never locks',
    file: 'node_modules/@latch/bullmq/dist/index.js',
    apply: replaceWith(
      `export { LockedWorker } from './locked-worker.js';
let token = 0;
export function withLock(processor) {
  return (job, token_) => processor(job, { lock: { fencingToken: ++token }, signal: new AbortController().signal, token: token_ });
}
`,
    ),
    restore,
  },
  {
    app: 'cli',
    what: 'a latch command that keeps its locks in memory whatever --store says',
    file: 'node_modules/@latch/cli/dist/open-store.js',
    apply: (file, original) => {
      const opening = /export async function openStore\(url, ctx\) \{\n/;
      if (!opening.test(original)) throw new Error(`${file} changed shape: no openStore(url, ctx) to patch`);
      writeFileSync(
        file,
        original.replace(opening, (head) => `${head}    url = { ...url, kind: 'memory' };\n`),
      );
    },
    restore,
  },
];
