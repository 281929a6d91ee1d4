#!/usr/bin/env node
// Tries Latch as a new user would: builds and packs every published package, installs the
// tarballs with plain `npm install` into small apps in a fresh temp directory (outside the
// workspace), compiles them with their own tsc, and runs them on every Node line here against
// the local S3 server and redis-server started from the packed @latch/testing.
//
//   node scripts/packed-apps/run.mjs               everything; exits 1 if any check failed
//   node scripts/packed-apps/run.mjs --skip-build  use the packages' dist/ as they are
//   node scripts/packed-apps/run.mjs --keep        leave the temp directory for a look
//   node scripts/packed-apps/run.mjs --teeth       then break installed copies on purpose
//                                                  (never the repo) and expect checks to fail
//   node scripts/packed-apps/run.mjs --only lambda  only these apps (comma-separated), for work on them
//
// One line per check ("ok nest-cjs on node 24: ..." or "FAIL ..."), then
// "Packed apps: N passed, N failed".
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { availableNodeLines, EXTRA_NODE_LINES } from '../node-lines.mjs';
import { bullmqApp } from './bullmq/check.mjs';
import { cliApp } from './cli/check.mjs';
import { dynamoTypes } from './dynamo-types/check.mjs';
import { examplesApp } from './examples/check.mjs';
import { expressApp } from './express/check.mjs';
import { lambdaApp, lambdaOneClientApp } from './lambda/check.mjs';
import { CheckFailure, cleanEnv, errorLine, expect, lineEnv, pool, run, seconds, stopAll } from './lib.mjs';
import { nestCjs, nestEsm } from './nest/check.mjs';
import {
  attw,
  build,
  checkContents,
  checkReadmeLinks,
  pack,
  publint,
  publishedPackages,
} from './tarballs.mjs';
import { mutants } from './teeth.mjs';
import { startBackends, app as testingApp } from './testing/backends.mjs';

const { values: flags } = parseArgs({
  options: {
    keep: { type: 'boolean', default: false },
    'skip-build': { type: 'boolean', default: false },
    teeth: { type: 'boolean', default: false },
    only: { type: 'string' },
  },
});

/**
 * Every app, in the order their lines are printed; testing provides the backends. The examples
 * app installs the most packages: it starts first, so that the others install beside it.
 */
const allApps = [
  testingApp,
  examplesApp,
  nestEsm,
  nestCjs,
  expressApp,
  dynamoTypes,
  bullmqApp,
  cliApp,
  lambdaApp,
  lambdaOneClientApp,
];
/** `--only a,b`: those apps (and testing, for the backends), to work on a few; CI runs them all. */
const only = flags.only?.split(',');
const apps = only ? allApps.filter((app) => app === testingApp || only.includes(app.name)) : allApps;
const lines = availableNodeLines();
const began = Date.now();
const work = mkdtempSync(join(tmpdir(), 'latch-packed-apps-'));
const results = [];

function report(name, ok, detail) {
  results.push({ name, ok });
  console.log(`${ok ? 'ok' : 'FAIL'} ${name}: ${detail}`);
}

/** Runs one check: its resolved value is the detail of an ok line, its error that of a FAIL line. */
async function check(name, fn) {
  const outcome = await settle(fn);
  report(name, outcome.ok, outcome.detail);
  return outcome.ok;
}

async function settle(fn) {
  try {
    return { ok: true, detail: await fn() };
  } catch (error) {
    return {
      ok: false,
      detail: error instanceof CheckFailure ? error.message : (error?.stack ?? String(error)),
    };
  }
}

async function finish(code) {
  // Services an app started for every line (DynamoDB Local for the Lambda apps), then the rest.
  await Promise.all(apps.map((app) => settle(async () => app.shutdown?.())));
  await stopAll();
  if (flags.keep) console.log(`packed-apps: kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
  process.exit(code);
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    console.log(`packed-apps: ${signal}, stopping every process this run started`);
    finish(130);
  });
}

try {
  await main();
} catch (error) {
  report('packed-apps runner', false, error?.stack ?? String(error));
}
const passed = results.filter((r) => r.ok).length;
const failed = results.length - passed;
console.log(
  `packed-apps: wall time ${seconds(Date.now() - began)}, Node lines ${lines.map((l) => l.major).join(', ')}`,
);
console.log(`Packed apps: ${passed} passed, ${failed} failed`);
await finish(failed === 0 ? 0 : 1);

async function main() {
  console.log(`packed-apps: working in ${work}; Node lines ${lines.map((l) => l.major).join(', ')}`);
  // In CI every line setup installs must be here: a run on fewer lines must not pass quietly.
  if (process.env.CI) {
    for (const { major } of EXTRA_NODE_LINES) {
      if (!lines.some((line) => line.major === major)) {
        report(`node ${major}`, false, 'not installed (scripts/setup.sh installs it); CI runs every line');
      }
    }
  }
  if (!flags['skip-build'] && !(await phase('build', () => check('build', build)))) return;

  // Pack, then check each tarball while the apps install from them.
  const packages = publishedPackages();
  const tarballDir = join(work, 'tarballs');
  mkdirSync(tarballDir);
  await phase('pack', () =>
    pool(
      packages.map((pkg) => async () => {
        pkg.packed = await check(`tarball ${pkg.name}`, async () => {
          await pack(pkg, tarballDir);
          return checkContents(pkg, join(work, 'unpacked'));
        });
        if (pkg.packed) await check(`readme-links ${pkg.name}`, async () => checkReadmeLinks(pkg));
      }),
      3,
    ),
  );
  const byShort = Object.fromEntries(packages.map((pkg) => [pkg.short, pkg]));
  const packed = packages.filter((pkg) => pkg.packed);
  await phase('install, compile, publint, attw', () =>
    pool(
      [
        ...apps.map((app) => () => installAndCompile(app, byShort)),
        ...packed.map((pkg) => () => check(`publint ${pkg.name}`, () => publint(pkg))),
        ...packed.map((pkg) => () => check(`attw ${pkg.name}`, () => attw(pkg))),
      ],
      3,
    ),
  );

  for (const line of lines) await phase(`node ${line.major}`, () => runLine(line));
  if (flags.teeth) await phase('teeth', () => teeth(lines[0], byShort));
}

/** Runs a stage of the run and says how long it took (not a check). */
async function phase(name, fn) {
  const phaseBegan = Date.now();
  try {
    return await fn();
  } finally {
    console.log(`packed-apps: ${name} took ${seconds(Date.now() - phaseBegan)}`);
  }
}

/** Copies the app's template into the temp dir, `npm install`s its tarballs, runs its tsc. */
async function installAndCompile(app, byShort) {
  app.dir = join(work, app.name);
  app.installed = await check(`install ${app.name}`, async () => {
    mkdirSync(app.dir, { recursive: true });
    for (const file of app.files) copyFileSync(new URL(file, app.template), join(app.dir, file));
    for (const [source, target] of app.sources ?? []) {
      mkdirSync(dirname(join(app.dir, target)), { recursive: true });
      copyFileSync(source, join(app.dir, target));
    }
    const missing = app.tarballs.filter((short) => !byShort[short]?.packed);
    expect(missing.length === 0, `no tarball for ${missing.join(', ')}`);
    const tarballs = app.tarballs.map((short) => byShort[short].tarball);
    const npm = await run('npm', ['install', '--no-fund', '--no-audit', ...tarballs], {
      cwd: app.dir,
      env: cleanEnv(),
      timeoutMs: 300_000,
    });
    const output = `${npm.stdout}\n${npm.stderr}`;
    expect(
      npm.code === 0,
      `npm install exited ${npm.code}:\n    ${output.trim().split('\n').slice(-15).join('\n    ')}`,
    );
    expect(
      !/ERESOLVE/.test(output),
      `npm printed ERESOLVE:\n    ${output.trim().split('\n').slice(0, 20).join('\n    ')}`,
    );
    const detail = [/added \d+ packages?/.exec(output)?.[0] ?? 'installed', `in ${seconds(npm.ms)}`];
    detail.push(verifyLatchFromTarballs(app));
    if (app.verifyInstall) detail.push(app.verifyInstall(app.dir));
    const warnings = npmWarnings(output);
    if (warnings.length > 0) detail.push(`npm warned: ${warnings.join('; ')}`);
    return detail.join(', ');
  });
  if (!app.installed) return;
  app.compiled = true;
  for (const spec of app.compile ?? []) {
    const ok = await check(`compile ${spec.label}`, () => compileProject(app, spec));
    app.compiled &&= ok;
  }
  // An app that builds its own way (the Lambda apps bundle with esbuild), once for every line.
  if (app.build) app.built = await check(`build ${app.name}`, () => app.build());
}

/** The app's own tsc (run by this Node), on one of its projects: no errors. */
async function compileProject(app, { project }) {
  const tsc = join(app.dir, 'node_modules', 'typescript', 'bin', 'tsc');
  const { version } = JSON.parse(
    readFileSync(join(app.dir, 'node_modules', 'typescript', 'package.json'), 'utf8'),
  );
  const result = await run(process.execPath, [tsc, '-p', project], {
    cwd: app.dir,
    env: cleanEnv(),
    timeoutMs: 300_000,
  });
  const errors = result.stdout.split('\n').filter((l) => /error TS\d+/.test(l));
  expect(
    result.code === 0,
    `tsc -p ${project} (TypeScript ${version}) exited ${result.code} with ${errors.length} errors:\n    ` +
      (errors.length > 0 ? errors : result.stdout.trim().split('\n')).slice(0, 15).join('\n    '),
  );
  return `tsc -p ${project} (TypeScript ${version}) clean in ${seconds(result.ms)}`;
}

/** Each @latch package in node_modules must come from our tarballs, once, at the top level. */
function verifyLatchFromTarballs(app) {
  const lock = JSON.parse(readFileSync(join(app.dir, 'node_modules', '.package-lock.json'), 'utf8'));
  const latch = Object.entries(lock.packages).filter(([path]) => /(^|\/)node_modules\/@latch\//.test(path));
  for (const [path, entry] of latch) {
    expect(/^node_modules\/@latch\/[^/]+$/.test(path), `a second copy of a Latch package at ${path}`);
    expect(entry.resolved?.startsWith('file:'), `${path} came from ${entry.resolved}, not from a tarball`);
  }
  const names = latch.map(([path]) => path.slice('node_modules/'.length)).sort();
  const expected = app.tarballs.map((short) => `@latch/${short}`).sort();
  expect(names.join() === expected.join(), `installed ${names.join(', ')}, expected ${expected.join(', ')}`);
  return `${names.join(' + ')} from the tarballs`;
}

/** npm's warnings other than about this machine's own npm config, shortened. */
function npmWarnings(output) {
  const found = new Set();
  for (const match of output.matchAll(
    /npm warn EBADENGINE\s+package: '([^']+)',\s*\n\s*npm warn EBADENGINE\s+required: \{ node: '([^']+)'/g,
  )) {
    found.add(`EBADENGINE ${match[1]} wants node ${match[2]}`);
  }
  for (const match of output.matchAll(/npm warn (deprecated \S+)/g)) found.add(match[1]);
  if (/npm warn install-scripts/.test(output))
    found.add('install scripts not run (npm install-scripts approve)');
  return [...found];
}

/** The environment an app runs with on a Node line, against this line's backends. */
function appEnv(app, line, backends) {
  return lineEnv(line, {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    S3_ENDPOINT: backends.s3Endpoint,
    LOCK_BUCKET: backends.bucket,
    LOCK_PREFIX: `${app.name}/`,
    REDIS_URL: backends.redisUrl,
    QUEUE: `${app.name}-node${line.major}`,
  });
}

/** Whether an app can run its check, or why not. */
function runnable(app) {
  if (!app.installed) return 'not run: its install failed';
  if (app.build && !app.built) return 'not run: its build failed';
  if (app.compile && !existsSync(join(app.dir, 'dist', 'main.js')))
    return 'not run: tsc emitted no dist/main.js';
  return null;
}

async function runApp(app, line, backends) {
  const why = runnable(app);
  if (why) return { ok: false, detail: why };
  const outcome = await settle(() =>
    app.check({
      dir: app.dir,
      line,
      backends,
      env: appEnv(app, line, backends),
      label: `${app.name} on node ${line.major}`,
    }),
  );
  if (outcome.ok && !app.compiled)
    outcome.detail += ' (ran the JavaScript tsc emitted despite its type errors)';
  return outcome;
}

/** Starts the backends on this line, runs every app's check side by side, stops the backends. */
async function runLine(line) {
  const name = `backends on node ${line.major}`;
  // An app may run on some lines only (the Lambda apps: the lines Lambda has a runtime for).
  const runners = apps.filter((app) => app.check && (!app.lines || app.lines.includes(line.major)));
  if (!testingApp.installed) {
    report(name, false, 'not run: @latch/testing did not install');
    for (const app of runners) report(`${app.name} on node ${line.major}`, false, 'not run: no backends');
    return;
  }
  const started = await settle(() => startBackends(testingApp.dir, line));
  if (!started.ok) {
    report(name, false, `latch-testing up failed: ${started.detail}`);
    for (const app of runners) report(`${app.name} on node ${line.major}`, false, 'not run: no backends');
    return;
  }
  const backends = started.detail;
  const outcomes = await Promise.all(runners.map((app) => runApp(app, line, backends)));
  const stopped = await settle(() => backends.stop());
  report(
    name,
    stopped.ok,
    stopped.ok
      ? `packed latch-testing up --s3 --redis: ${backends.summary}; ${stopped.detail}`
      : stopped.detail,
  );
  runners.forEach((app, i) => {
    report(`${app.name} on node ${line.major}`, outcomes[i].ok, outcomes[i].detail);
  });
}

/** The line an app's teeth run on: the teeth's own, unless the app runs on some lines only. */
function appLine(app, line) {
  if (!app.lines || app.lines.includes(line.major)) return line;
  return lines.find((l) => app.lines.includes(l.major)) ?? line;
}

/**
 * Breaks an installed or unpacked copy of a package (never the repo) and runs the check that
 * must notice: ok when that check fails. Each copy is restored afterwards.
 */
async function teeth(line, byShort) {
  const started = await settle(() => startBackends(testingApp.dir, line));
  if (!started.ok) {
    report('teeth', false, `latch-testing up failed: ${started.detail}`);
    return;
  }
  const backends = started.detail;
  try {
    for (const mutant of mutants.filter(
      (m) => !only || m.kind === 'readme' || apps.some((a) => a.name === m.app),
    )) {
      const app = apps.find((a) => a.name === mutant.app);
      const pkg = byShort[mutant.package];
      const name = `teeth ${mutant.kind} ${app?.name ?? pkg?.name} with ${mutant.what}`;
      const base = mutant.kind === 'readme' ? pkg?.unpacked : app?.dir;
      const why = {
        readme: pkg?.packed ? null : 'not run: no tarball',
        compile: app?.installed ? null : 'not run: its install failed',
        build: app?.installed ? null : 'not run: its install failed',
        run: app ? runnable(app) : 'not run: no such app',
      }[mutant.kind];
      if (why || !base) {
        report(name, false, why ?? 'not run: nothing to break');
        continue;
      }
      const file = join(base, mutant.file);
      const original = readFileSync(file, 'utf8');
      try {
        const applied = await settle(async () => mutant.apply(file, original));
        if (!applied.ok) {
          report(name, false, `could not break it: ${applied.detail}`);
          continue;
        }
        // An app that bundles carries the broken copy only once built again. Every such mutant
        // builds first, so none runs the bundles of the one before; teeth is the last phase.
        const rebuild = Boolean(app?.build) && (mutant.kind === 'run' || mutant.kind === 'build');
        const built = rebuild ? await settle(() => app.build()) : { ok: true };
        const outcome =
          mutant.kind === 'build'
            ? built
            : !built.ok
              ? { ok: false, detail: `its build failed: ${built.detail}` }
              : mutant.kind === 'run'
                ? await runApp(app, appLine(app, line), backends)
                : mutant.kind === 'compile'
                  ? await settle(() => compileProject(app, app.compile[0]))
                  : await settle(async () => checkReadmeLinks(pkg));
        // The failure's first line, and the error that caused it when that is further down.
        const [first, ...rest] = outcome.detail.split('\n').map((l) => l.trim());
        const cause = errorLine(rest);
        const shown = `${first}${cause ? ` … ${cause}` : ''}`.slice(0, 400);
        report(
          name,
          !outcome.ok,
          outcome.ok ? `still passed: ${outcome.detail}` : `failed as it must: ${shown}`,
        );
      } finally {
        writeFileSync(file, original);
      }
    }
  } finally {
    await settle(() => backends.stop());
  }
}
