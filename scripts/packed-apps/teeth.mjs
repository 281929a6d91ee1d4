// Mutants for `run.mjs --teeth`: each breaks one file of an INSTALLED or UNPACKED copy of a
// package (in the temp directory, never the repo) in a way that one check must notice:
//   kind 'run'      the app's check on a Node line must fail (an app with its own build is
//                   built again with the broken copy first)
//   kind 'compile'  the app's first tsc project must fail
//   kind 'build'    the app's own build (the Lambda apps bundle with esbuild) must fail
//   kind 'readme'   the README link check of that package's tarball must fail
import { writeFileSync } from 'node:fs';

function editManifest(edit) {
  return (file, original) => {
    const manifest = JSON.parse(original);
    edit(manifest);
    writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
  };
}

const replaceWith = (text) => (file) => writeFileSync(file, text);
const append = (text) => (file, original) => writeFileSync(file, `${original}\n${text}\n`);
/** Replaces `search` (which must be there: a build that changed shape fails loudly) with `replacement`. */
const replacing = (search, replacement) => (file, original) => {
  if (!original.includes(search)) throw new Error(`${file} changed shape: no ${search.trim()}`);
  writeFileSync(file, original.replace(search, replacement));
};

export const mutants = [
  {
    kind: 'run',
    app: 'nest-cjs',
    what: "@latch/core's exports without the require condition",
    file: 'node_modules/@latch/core/package.json',
    apply: editManifest((manifest) => {
      delete manifest.exports['.'].require;
    }),
  },
  {
    kind: 'run',
    app: 'nest-esm',
    what: "@latch/core's exports without the import condition",
    file: 'node_modules/@latch/core/package.json',
    apply: editManifest((manifest) => {
      delete manifest.exports['.'].import;
    }),
  },
  {
    kind: 'run',
    app: 'express',
    what: "@latch/core's exports without ./store",
    file: 'node_modules/@latch/core/package.json',
    apply: editManifest((manifest) => {
      delete manifest.exports['./store'];
    }),
  },
  {
    kind: 'run',
    app: 'nest-cjs',
    what: "@latch/core's ./store export without the require condition",
    file: 'node_modules/@latch/core/package.json',
    apply: editManifest((manifest) => {
      delete manifest.exports['./store'].require;
    }),
  },
  {
    kind: 'compile',
    app: 'nest-cjs',
    what: '@latch/core without typesVersions (node10 finds no types for ./store and ./http)',
    file: 'node_modules/@latch/core/package.json',
    apply: editManifest((manifest) => {
      delete manifest.typesVersions;
    }),
  },
  {
    kind: 'run',
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
  },
  {
    kind: 'run',
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
  },
  {
    kind: 'run',
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
  },
  {
    // What core's declarations did until they got their own structural client types.
    kind: 'compile',
    app: 'express',
    what: "@latch/core's types importing @aws-sdk/client-dynamodb",
    file: 'node_modules/@latch/core/dist/index.d.ts',
    apply: append("export type { DynamoDBClient } from '@aws-sdk/client-dynamodb';"),
  },
  {
    kind: 'compile',
    app: 'dynamo-types',
    what: "@latch/core's types importing @aws-sdk/client-s3",
    file: 'node_modules/@latch/core/dist/index.d.ts',
    apply: append("export type { S3Client } from '@aws-sdk/client-s3';"),
  },
  {
    kind: 'readme',
    package: 'nest',
    what: 'a relative link in the packed README',
    file: 'README.md',
    apply: append('See [the core README](../core/README.md) and [its API](../core/README.md#api).'),
  },
  {
    // What core's ES module build did until it made its require() on first use.
    kind: 'run',
    app: 'lambda',
    what: "a top-level import.meta in @latch/core's ES module build",
    file: 'node_modules/@latch/core/dist/telemetry/own-require.js',
    apply: append(
      "import { createRequire } from 'node:module';\nexport const ownRequireAtLoad = createRequire(import.meta.url);",
    ),
  },
  {
    // The usual ES module banner declares createRequire: a named import of it hoisted into the
    // same bundle is a second declaration, and the bundle fails to load.
    kind: 'run',
    app: 'lambda',
    what: "a named createRequire import in @latch/core's ES module build",
    file: 'node_modules/@latch/core/dist/telemetry/own-require.js',
    apply: (file, original) => {
      const lookup = "globalThis.process?.getBuiltinModule?.('node:module')";
      if (!original.includes(lookup)) throw new Error(`${file} changed shape: no ${lookup} to replace`);
      writeFileSync(
        file,
        `import { createRequire } from 'node:module';\n${original.replace(lookup, '{ createRequire }')}`,
      );
    },
  },
  {
    // What core's telemetry did until it looked for the API's globals: in a bundle, no spans.
    kind: 'run',
    app: 'lambda',
    what: "@latch/core's telemetry blind to the globals of a bundled @opentelemetry/api",
    file: 'node_modules/@latch/core/dist/telemetry/otel-globals.js',
    apply: replacing(
      'export function readOtelGlobals() {',
      'export function readOtelGlobals() {\n    return undefined;',
    ),
  },
  {
    // What core's store loaders did until each SDK's import() could be left out by a bundler.
    kind: 'build',
    app: 'lambda-one-client',
    what: "@latch/core's S3 SDK loaded by an import() whose failure it does not handle",
    file: 'node_modules/@latch/core/dist/stores/s3-sdk.js',
    apply: append("export const loadS3SdkUnguarded = () => import('@aws-sdk/client-s3');"),
  },
  {
    kind: 'build',
    app: 'lambda',
    what: '@latch/core without "sideEffects": false (a memory-only bundle carries the AWS SDK)',
    file: 'node_modules/@latch/core/package.json',
    apply: editManifest((manifest) => {
      delete manifest.sideEffects;
    }),
  },
  {
    // An example that uses a name the package no longer exports must fail to compile: the nest
    // example is the only user of currentLock, so this is about the examples, not main.ts.
    kind: 'compile',
    app: 'examples',
    what: "@latch/nest's types without currentLock",
    file: 'node_modules/@latch/nest/dist/index.d.ts',
    apply: replacing("export { currentLock } from './current-lock.js';\n", ''),
  },
  {
    kind: 'run',
    app: 'examples',
    what: "@latch/core's withLock() that never releases",
    file: 'node_modules/@latch/core/dist/client/lock-client.js',
    apply: replacing('        await lock.release();\n        return result;', '        return result;'),
  },
  {
    // Only the Serverless section's handler passes withLock() a lease: its own check must notice.
    kind: 'run',
    app: 'examples',
    what: "@latch/core's withLock() ignoring the leaseMs it is given",
    file: 'node_modules/@latch/core/dist/client/lock-client.js',
    apply: replacing(
      '        const lock = await this.acquire(key, options);',
      '        const lock = await this.acquire(key, { ...options, leaseMs: undefined });',
    ),
  },
];
