// AWS Lambda: a TypeScript handler (src/) using the packed @latch/core, bundled by esbuild as
// CDK's NodejsFunction and SAM do, in each way core's README documents: CommonJS and ES modules
// (with the usual createRequire banner), the AWS SDK external (provided at run time, as the
// Lambda runtime does) and bundled, with both SDK clients and OpenTelemetry (`lambda`) or only
// the DynamoDB client and no OpenTelemetry (`lambda-one-client`). Each bundle is made once and
// run from a folder of its own, with no node_modules but the runtime's SDK, on Node 20, 22 and
// 24: three processes (three concurrent invocations, as Lambda runs them) lock one key on
// DynamoDB Local, then on the S3 server. No two may be inside the lock at once, fencing tokens
// must increase, every lock must be released before its handler returned, and with
// OpenTelemetry every acquisition and hold must leave its span.
import { mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { cleanEnv, expect, run, start } from '../lib.mjs';

const here = new URL('./', import.meta.url);

/** The Lambda runtimes' Node lines here (nodejs20.x, nodejs22.x, nodejs24.x). */
const LAMBDA_LINES = [20, 22, 24];

/** The banner bundling guides give an ES module bundle, for CommonJS packages inside it. */
const ESM_BANNER = "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";

/** Concurrent invocations per bundle and line, each in its own process. */
const INVOCATIONS = 3;
/** How long each invocation holds its lock: long enough for the others to find it held. */
const HOLD_MS = 150;
/** The remaining time each invocation starts with; its lease must be sized from it. */
const REMAINING_MS = 20_000;
/** What the handler keeps back from the remaining time (src/locked-handler.ts). */
const RESERVE_MS = 1_000;

const shared = (name) => [new URL(`src/${name}`, here), `src/${name}`];
const script = (name) => [new URL(name, here), name];

export const lambdaApp = {
  name: 'lambda',
  template: new URL('both/', here),
  files: ['package.json', 'tsconfig.json'],
  sources: [
    shared('locked-handler.ts'),
    shared('telemetry.ts'),
    shared('with-both-clients.ts'),
    shared('memory-only.ts'),
    script('invoke.mjs'),
    script('dynamodb-local.mjs'),
    script('inspect.mjs'),
  ],
  tarballs: ['core', 'testing'],
  lines: LAMBDA_LINES,
  entry: 'src/with-both-clients.ts',
  stores: ['dynamodb', 's3'],
  telemetry: true,
  variants: [
    { format: 'cjs', sdk: 'external' },
    { format: 'esm', sdk: 'external' },
    { format: 'cjs', sdk: 'bundled' },
    { format: 'esm', sdk: 'bundled' },
  ],
  build: () => bundleAll(lambdaApp),
  check: (run) => checkLambda(lambdaApp, run),
  shutdown: () => stopDynamoDBLocal(),
};

export const lambdaOneClientApp = {
  name: 'lambda-one-client',
  template: new URL('one/', here),
  files: ['package.json', 'tsconfig.json'],
  sources: [shared('locked-handler.ts'), shared('with-dynamodb-only.ts'), script('invoke.mjs')],
  tarballs: ['core'],
  lines: LAMBDA_LINES,
  entry: 'src/with-dynamodb-only.ts',
  stores: ['dynamodb'],
  telemetry: false,
  // With the SDK external the runtime provides both clients: one installed matters when bundling.
  variants: [
    { format: 'cjs', sdk: 'bundled' },
    { format: 'esm', sdk: 'bundled' },
  ],
  build: () => bundleAll(lambdaOneClientApp),
  check: (run) => checkLambda(lambdaOneClientApp, run),
};

/**
 * Type-checks the handler with the app's tsc, then bundles it once per variant into a folder
 * of its own: under `bare/` (nothing to resolve at run time) when the SDK is bundled, under
 * `runtime/` (whose node_modules holds only @aws-sdk, as the Lambda runtime's) when not.
 */
async function bundleAll(app) {
  // Type-checked once: a build again (teeth.mjs breaking the installed core) is about the bundles.
  if (!app.typechecked) {
    const tsc = await run(process.execPath, [join(app.dir, 'node_modules/typescript/bin/tsc'), '-p', '.'], {
      cwd: app.dir,
      env: cleanEnv(),
      timeoutMs: 300_000,
    });
    expect(
      tsc.code === 0,
      `tsc -p . exited ${tsc.code}:\n    ${tsc.stdout.trim().split('\n').slice(0, 15).join('\n    ')}`,
    );
    app.typechecked = true;
  }
  const tasks = `${app.dir}-tasks`;
  prepareTaskRoots(tasks, app);
  app.bundles = [];
  const sizes = [];
  for (const variant of app.variants) {
    const name = `${variant.format}-sdk-${variant.sdk}`;
    const folder = join(tasks, variant.sdk === 'external' ? 'runtime' : 'bare', `${app.name}-${name}`);
    const file = join(folder, variant.format === 'esm' ? 'index.mjs' : 'index.js');
    const flags = [`--format=${variant.format}`];
    if (variant.sdk === 'external') flags.push('--external:@aws-sdk/*');
    if (variant.format === 'esm') flags.push(`--banner:js=${ESM_BANNER}`);
    const ms = await esbuild(app, app.entry, file, flags);
    app.bundles.push({ name, file, folder });
    sizes.push(`${name} ${kib(file)} in ${ms} ms`);
  }
  const detail = [`tsc clean; esbuild without warnings: ${sizes.join(', ')}`];
  if (app === lambdaApp) detail.push(memoryOnlyBundle(await memoryOnlyInputs(app, tasks)));
  return detail.join('; ');
}

/** Runs the app's esbuild on one entry; no warnings allowed. Resolves with how long it took. */
async function esbuild(app, entry, outfile, flags) {
  const args = [
    entry,
    '--bundle',
    '--platform=node',
    '--target=node20',
    `--outfile=${outfile}`,
    '--log-level=warning',
  ];
  const result = await run(join(app.dir, 'node_modules/.bin/esbuild'), [...args, ...flags], {
    cwd: app.dir,
    env: cleanEnv(),
  });
  const said = `${result.stdout}${result.stderr}`.trim();
  expect(
    result.code === 0 && said === '',
    `esbuild exited ${result.code}${said ? `: ${said.split('\n').slice(0, 20).join('\n    ')}` : ''}\n    (esbuild ${[...args, ...flags].join(' ')})`,
  );
  return result.ms;
}

/** The inputs of a CommonJS bundle, SDK not external, of a handler that locks in memory only. */
async function memoryOnlyInputs(app, tasks) {
  const out = join(tasks, 'memory-only.js');
  const meta = `${out}.meta.json`;
  await esbuild(app, 'src/memory-only.ts', out, ['--format=cjs', `--metafile=${meta}`]);
  // What went into the bundle: every file esbuild read minus those it left out.
  const [output] = Object.values(JSON.parse(readFileSync(meta, 'utf8')).outputs);
  return Object.keys(output.inputs);
}

function memoryOnlyBundle(inputs) {
  const sdk = inputs.filter((input) => input.includes('@aws-sdk/'));
  expect(
    sdk.length === 0,
    `the bundle of a handler that locks in memory only carries ${sdk.length} files of the AWS SDK ` +
      `(e.g. ${sdk.slice(0, 2).join(', ')}): core's unused stores were not left out`,
  );
  expect(
    inputs.some((input) => input.includes('@latch/core/')),
    `the memory-only bundle has no @latch/core input at all: ${inputs.slice(0, 5).join(', ')}`,
  );
  return `a memory-only handler's bundle carries no AWS SDK (${inputs.length} inputs)`;
}

/**
 * The folders the app's bundles run from, beside the app's folder. `runtime/node_modules/@aws-sdk`
 * is the app's installed SDK, standing in for the one the Lambda runtime provides. Nothing else
 * may be found from either: a bundle must not reach the app's node_modules, nor any other.
 */
function prepareTaskRoots(tasks, app) {
  rmSync(tasks, { recursive: true, force: true });
  mkdirSync(join(tasks, 'bare'), { recursive: true });
  mkdirSync(join(tasks, 'runtime', 'node_modules'), { recursive: true });
  symlinkSync(
    join(app.dir, 'node_modules', '@aws-sdk'),
    join(tasks, 'runtime', 'node_modules', '@aws-sdk'),
    'dir',
  );
  const sdk = readdirSync(join(app.dir, 'node_modules', '@aws-sdk'))
    .filter((name) => name.startsWith('client-'))
    .map((name) => `@aws-sdk/${name}`);
  for (const [root, reachable] of [
    ['bare', []],
    ['runtime', sdk],
  ]) {
    const resolve = createRequire(join(tasks, root, 'x.js')).resolve;
    for (const name of [
      '@aws-sdk/client-s3',
      '@aws-sdk/client-dynamodb',
      '@opentelemetry/api',
      '@latch/core',
    ]) {
      let found;
      try {
        found = resolve(name);
      } catch {
        found = undefined;
      }
      expect(
        Boolean(found) === reachable.includes(name),
        found
          ? `${name} can be resolved from the ${root} task folder (${found}): a bundle run there is not on its own`
          : `${name} cannot be resolved from the ${root} task folder`,
      );
    }
  }
}

function kib(file) {
  return `${Math.round(readFileSync(file).length / 1024)} KiB`;
}

/** DynamoDB Local, started once (from the lambda app's packed @latch/testing) for every line. */
let dynamodbLocal;

function startDynamoDBLocal(line) {
  dynamodbLocal ??= (async () => {
    expect(lambdaApp.installed, 'no DynamoDB Local: the lambda app (which starts it) did not install');
    // DynamoDB Local's files from the workspace's amplify-dynamodb-simulator: a user passes
    // `jarDir` the same way for a DynamoDB Local they downloaded.
    const testing = new URL('../../../packages/testing/package.json', import.meta.url);
    const jarDir = join(
      dirname(createRequire(testing).resolve('amplify-dynamodb-simulator/package.json')),
      'emulator',
    );
    const handle = start(line.node, ['dynamodb-local.mjs', jarDir, 'locks'], {
      cwd: lambdaApp.dir,
      env: cleanEnv({ AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' }),
      label: 'DynamoDB Local for the lambda apps',
      late: true,
    });
    try {
      const ready = await handle.waitForLine(/^READY /, 90_000);
      return { handle, endpoint: JSON.parse(ready.slice('READY '.length)).endpoint };
    } catch (error) {
      await handle.stop(2000);
      throw error;
    }
  })();
  return dynamodbLocal;
}

async function stopDynamoDBLocal() {
  const started = await dynamodbLocal?.catch(() => undefined);
  dynamodbLocal = undefined;
  if (started) await started.handle.stop(10_000);
}

/** Runs every bundle of the app on this line, one after the other. */
async function checkLambda(app, { line, env }) {
  const dynamodb = await startDynamoDBLocal(line);
  const runEnv = {
    ...env,
    DYNAMODB_ENDPOINT: dynamodb.endpoint,
    LOCK_TABLE: 'locks',
    NODE_PATH: '',
  };
  const details = [];
  const keys = [];
  for (const bundle of app.bundles) {
    const key = `${app.name}/${bundle.name}/node${line.major}`;
    details.push(await invokeConcurrently(app, bundle, key, line, runEnv));
    for (const store of app.stores) keys.push([store, key]);
  }
  // Every lock was released before its handler returned: nothing is left held.
  const inspect = await run(line.node, ['inspect.mjs', JSON.stringify(keys)], {
    cwd: lambdaApp.dir,
    env: runEnv,
    timeoutMs: 60_000,
  });
  const statesLine = inspect.stdout.split('\n').find((l) => l.startsWith('STATES '));
  expect(
    statesLine,
    `inspect.mjs printed no STATES line (exit ${inspect.code}):\n    ${inspect.stderr.trim()}`,
  );
  const states = JSON.parse(statesLine.slice('STATES '.length));
  const notFree = Object.entries(states).filter(([, state]) => state !== 'free');
  expect(notFree.length === 0, `locks not free after every handler returned: ${JSON.stringify(notFree)}`);
  return `${details.join('; ')}; all ${keys.length} locks free afterwards`;
}

/** Three processes invoke the bundle at once: on each store in turn (cold, then warm). */
async function invokeConcurrently(app, bundle, key, line, env) {
  const events = app.stores.map((store) => ({ store, key, holdMs: HOLD_MS }));
  // The app without the S3 SDK: its S3 store must fail, naming the package to install.
  if (!app.stores.includes('s3')) events.push({ store: 's3', key, holdMs: HOLD_MS });
  const label = `${app.name} ${bundle.name} on node ${line.major}`;
  const runs = await Promise.all(
    Array.from({ length: INVOCATIONS }, (_, i) =>
      run(
        line.node,
        [join(app.dir, 'invoke.mjs'), bundle.file, JSON.stringify(events), String(REMAINING_MS)],
        {
          cwd: bundle.folder,
          env,
          timeoutMs: 60_000,
          label: `${label}, invocation ${i + 1}`,
        },
      ),
    ),
  );
  const outputs = runs.map((r, i) => {
    const output = `${r.stdout}\n${r.stderr}`.trim().split('\n');
    expect(
      r.code === 0,
      `${label}: invocation ${i + 1} exited ${r.code}${r.timedOut ? ' (timed out)' : ''}:\n    ${output.slice(-12).join('\n    ')}`,
    );
    return { lines: r.stdout.split('\n'), shown: output.slice(-12).join('\n    ') };
  });
  const parsed = outputs.map(({ lines, shown }) => ({
    shown,
    results: lines.filter((l) => l.startsWith('RESULT ')).map((l) => JSON.parse(l.slice(7))),
    errors: lines.filter((l) => l.startsWith('ERROR ')).map((l) => JSON.parse(l.slice(6))),
    spans: lines.filter((l) => l.startsWith('SPAN ')).map((l) => JSON.parse(l.slice(5))),
  }));
  const tokens = [];
  for (const store of app.stores) {
    const held = parsed.map(({ results, errors, shown }) => {
      const result = results.find((r) => r.event.store === store)?.result;
      expect(
        result,
        `${label}: an invocation on ${store} did not lock: ${JSON.stringify(errors.find((e) => e.event.store === store))}\n    ${shown}`,
      );
      return result;
    });
    tokens.push(`${store} ${checkExclusion(label, store, held)}`);
  }
  let spanCount = 0;
  for (const { results, errors, spans, shown } of parsed) {
    if (!app.stores.includes('s3')) {
      const error = errors.find((e) => e.event.store === 's3');
      expect(
        error?.code === 'LOCK_CONFIG' &&
          error.message.includes('install') &&
          error.message.includes('@aws-sdk/client-s3'),
        `${label}: the S3 store without @aws-sdk/client-s3 did not fail with the LockConfigError naming it: ${JSON.stringify(error)}`,
      );
    }
    if (app.telemetry) spanCount += checkSpans(label, results, spans, shown);
    else expect(spans.length === 0, `${label}: spans without OpenTelemetry: ${JSON.stringify(spans)}`);
  }
  const extra = app.telemetry
    ? `, ${spanCount} spans`
    : ', S3 store → LockConfigError naming @aws-sdk/client-s3';
  return `${bundle.name}: tokens ${tokens.join(', ')}${extra}`;
}

/**
 * The invocations' holds of one key, in the order they entered: each entered after the one
 * before had left, with a greater fencing token; each held a lease sized from its remaining
 * time and no longer held the lock once withLock returned.
 */
function checkExclusion(label, store, held) {
  const order = [...held].sort((a, b) => a.entered - b.entered);
  for (let i = 0; i < order.length; i++) {
    const hold = order[i];
    expect(
      !hold.heldAfter,
      `${label}: ${store} lock ${hold.fencingToken} still held after withLock returned`,
    );
    expect(
      hold.leaseMs <= REMAINING_MS - RESERVE_MS,
      `${label}: ${store} lease of ${hold.leaseMs} ms, longer than the invocation's ${REMAINING_MS - RESERVE_MS} ms left`,
    );
    if (i === 0) continue;
    const before = order[i - 1];
    expect(
      hold.entered >= before.left,
      `${label}: two invocations inside the ${store} lock at once: token ${before.fencingToken} ` +
        `[${before.entered}, ${before.left}] and token ${hold.fencingToken} entered at ${hold.entered}`,
    );
    expect(
      hold.fencingToken > before.fencingToken,
      `${label}: ${store} fencing tokens did not increase: ${before.fencingToken} then ${hold.fencingToken}`,
    );
  }
  return order.map((h) => h.fencingToken).join(',');
}

/** Each lock an invocation held left an `acquired` attempt span and a `released` hold span. */
function checkSpans(label, results, spans, shown) {
  for (const { event, result } of results) {
    for (const [name, outcome] of [
      ['latch.acquire', 'acquired'],
      ['latch.hold', 'released'],
    ]) {
      expect(
        spans.some(
          (s) =>
            s.name === name &&
            s.store === event.store &&
            s.key === event.key &&
            s.fencingToken === result.fencingToken &&
            s.outcome === outcome,
        ),
        `${label}: no ${name} span (${outcome}) for ${event.store} token ${result.fencingToken}; spans: ${JSON.stringify(spans)}\n    ${shown}`,
      );
    }
  }
  return spans.length;
}
