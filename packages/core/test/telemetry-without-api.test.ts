import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, test } from 'vitest';

// The built package (both builds) installed alone in a temporary folder, as an application
// without @opentelemetry/api would have it: core must load and lock, and load no OpenTelemetry
// module. The same app with the API installed is the control: there the API is loaded.
// Last, the app of a bundle: it carries the API and the SDK where core cannot `require` them
// (here: loaded by absolute path), and core must still record its spans.
const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const folders: string[] = [];

afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** Acquire and release on the memory store, then list the OpenTelemetry modules Node loaded. */
const LOCK_AND_LIST = `
    const client = new LockClient({ store: memoryStore() });
    const lock = await client.acquire('job');
    await lock.release();
    await client.close();
    const loaded = Object.keys(require.cache).filter((path) => path.includes('@opentelemetry'));
    let installed = true;
    try { require.resolve('@opentelemetry/api'); } catch { installed = false; }
    console.log(JSON.stringify({ token: lock.fencingToken, held: lock.isHeld, loaded, installed }));`;

/** An app folder with @latch/core's dist in its node_modules, and @opentelemetry/api if asked. */
function appFolder(withApi: boolean, body = LOCK_AND_LIST): string {
  if (!existsSync(join(packageDir, 'dist/cjs/index.js'))) {
    throw new Error('Build @latch/core first: pnpm --filter @latch/core build');
  }
  const app = mkdtempSync(join(tmpdir(), 'latch-otel-'));
  folders.push(app);
  const core = join(app, 'node_modules/@latch/core');
  mkdirSync(core, { recursive: true });
  cpSync(join(packageDir, 'package.json'), join(core, 'package.json'));
  cpSync(join(packageDir, 'dist'), join(core, 'dist'), { recursive: true });
  if (withApi) {
    // The package root, three folders above its CommonJS entry (build/src/index.js).
    const entry = createRequire(import.meta.url).resolve('@opentelemetry/api');
    const api = dirname(dirname(dirname(entry)));
    mkdirSync(join(app, 'node_modules/@opentelemetry'), { recursive: true });
    symlinkSync(api, join(app, 'node_modules/@opentelemetry/api'), 'dir');
  }
  writeFileSync(
    join(app, 'esm.mjs'),
    `import { createRequire } from 'node:module';
    import { LockClient, memoryStore } from '@latch/core';
    const require = createRequire(import.meta.url);
    ${body}`,
  );
  writeFileSync(
    join(app, 'cjs.cjs'),
    `const { LockClient, memoryStore } = require('@latch/core');
    (async () => { ${body} })();`,
  );
  return app;
}

function run<T = { token: number; held: boolean; loaded: string[]; installed: boolean }>(
  app: string,
  script: string,
): T {
  // NODE_PATH (set by some package managers' script runners) would find the workspace's copy.
  const env = { ...process.env, NODE_PATH: '' };
  const output = execFileSync(process.execPath, [script], { cwd: app, encoding: 'utf8', env });
  return JSON.parse(output) as T;
}

test.each(['esm.mjs', 'cjs.cjs'])(
  '%s: core locks without @opentelemetry/api and loads none of it',
  (script) => {
    expect(run(appFolder(false), script)).toEqual({ token: 1, held: false, loaded: [], installed: false });
  },
);

test.each(['esm.mjs', 'cjs.cjs'])(
  '%s: with @opentelemetry/api installed, the same app loads it',
  (script) => {
    const result = run(appFolder(true), script);
    expect(result).toMatchObject({ token: 1, held: false, installed: true });
    expect(result.loaded.some((path) => path.includes('@opentelemetry/api'))).toBe(true);
  },
);

/**
 * An app whose @opentelemetry/api and SDK core cannot reach, as in a bundle deployed without
 * node_modules: it loads them by absolute path, makes a tracer provider that keeps its spans in
 * memory, and either registers it globally (`register`) or passes it as telemetry.tracerProvider.
 */
function bundledApiApp(register: boolean): string {
  const resolve = createRequire(import.meta.url).resolve;
  const api = JSON.stringify(resolve('@opentelemetry/api'));
  const sdk = JSON.stringify(resolve('@opentelemetry/sdk-trace-base'));
  return appFolder(
    false,
    `
    const api = require(${api});
    const sdk = require(${sdk});
    const exporter = new sdk.InMemorySpanExporter();
    const provider = new sdk.BasicTracerProvider({ spanProcessors: [new sdk.SimpleSpanProcessor(exporter)] });
    ${register ? 'api.trace.setGlobalTracerProvider(provider);' : ''}
    const client = new LockClient({
      store: memoryStore(),
      ${register ? '' : 'telemetry: { tracerProvider: provider },'}
    });
    const lock = await client.acquire('job');
    await lock.release();
    await client.close();
    let installed = true;
    try { require.resolve('@opentelemetry/api'); } catch { installed = false; }
    const spans = exporter.getFinishedSpans().map((span) => [span.name, span.attributes['latch.lock.fencing_token']]);
    console.log(JSON.stringify({ spans, installed }));`,
  );
}

const BOTH_SPANS = {
  installed: false,
  spans: [
    ['latch.acquire', 1],
    ['latch.hold', 1],
  ],
};

test.each(['esm.mjs', 'cjs.cjs'])(
  '%s: with the API out of reach, core records spans to the provider registered globally through it',
  (script) => {
    expect(run(bundledApiApp(true), script)).toEqual(BOTH_SPANS);
  },
);

test.each(['esm.mjs', 'cjs.cjs'])(
  '%s: with the API out of reach, core records spans to a tracerProvider passed in',
  (script) => {
    expect(run(bundledApiApp(false), script)).toEqual(BOTH_SPANS);
  },
);
