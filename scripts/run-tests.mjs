#!/usr/bin/env node
// Runs every package's test suite through turbo on the recommended Node line (24, installed by
// setup; the machine's own Node when it is missing), then core's module-loading checks on every
// other Node line here, prints one closing line that sums the vitest results of all of them
// ("Tests: N passed, N failed"), then fails the run if any process the suites started is still
// running. The packed-package apps are their own step (`pnpm test:packed`, scripts/packed-apps,
// every Node line), so that each run stays under 15 minutes here.
// After the suites, the public API reports (turbo task `api`, scripts/api-report.mjs) are checked
// against the declarations just built: a changed API fails the run until `pnpm api:update`.
//
//   pnpm test               the suites on Node 24 (or this machine's Node), line checks on the others
//   pnpm test --node 22     the suites on another line that setup installed
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { leftBehind, suiteProcesses } from './leak-check.mjs';
import { availableNodeLines, LINE_CHECKS, nodeBinDir, RECOMMENDED_NODE_MAJOR } from './node-lines.mjs';

const root = new URL('..', import.meta.url).pathname;
const workspaces = ['packages', 'apps']
  .filter((dir) => existsSync(join(root, dir)))
  .flatMap((dir) => readdirSync(join(root, dir)).map((name) => join(root, dir, name)));

for (const ws of workspaces) rmSync(join(ws, 'test-results.json'), { force: true });
const core = join(root, 'packages', 'core');
for (const file of readdirSync(core)) {
  if (/^test-results\.node\d+\.json$/.test(file)) rmSync(join(core, file));
}

const before = suiteProcesses(root);
const extraArgs = process.argv.slice(2);
const nodeFlag = extraArgs.indexOf('--node');
const askedLine = nodeFlag === -1 ? undefined : extraArgs.splice(nodeFlag, 2)[1];
const env = { TURBO_TELEMETRY_DISABLED: '1', ...process.env };
const ownMajor = Number(process.versions.node.split('.')[0]);
let nodeLine = askedLine ?? String(RECOMMENDED_NODE_MAJOR);
if (!existsSync(join(nodeBinDir(nodeLine), 'node')) && Number(nodeLine) !== ownMajor) {
  if (askedLine !== undefined) {
    console.error(`run-tests: Node ${nodeLine} is not installed here; run bash scripts/setup.sh first.`);
    process.exit(2);
  }
  console.log(
    `run-tests: Node ${nodeLine} is not installed (bash scripts/setup.sh installs it); using this machine's`,
  );
  nodeLine = String(ownMajor);
}
if (Number(nodeLine) !== ownMajor) env.PATH = `${nodeBinDir(nodeLine)}:${env.PATH}`;
// Part of the test task's hash (turbo.json), so a result from another Node line is not replayed; builds
// do not depend on it, so the packed apps' build reuses them.
env.LATCH_NODE_VERSION = spawnSync('node', ['--version'], { env, encoding: 'utf8' }).stdout.trim();
console.log(`run-tests: test suites on Node ${env.LATCH_NODE_VERSION}`);
// Core's suites (the reliability scenarios with their worker processes, then the simulator) keep
// both cores busy and are the ones that time faults: they run alone. The other packages' suites
// mostly wait on their servers, browsers and workers, so two of them run at once.
const phases = [
  ['--filter=@latch/core', '--concurrency=1'],
  ['--filter=!@latch/core', '--concurrency=2'],
];
let turboStatus = 0;
for (const phase of phases) {
  const turbo = spawnSync(
    'pnpm',
    ['exec', 'turbo', 'run', 'test', ...phase, '--output-logs=full', ...extraArgs],
    {
      cwd: root,
      stdio: 'inherit',
      env,
    },
  );
  turboStatus ||= turbo.status ?? 1;
}

// What differs between Node lines, on every other line here: core's module-loading checks.
// (The packed apps, `pnpm test:packed`, run on every line too.)
const suiteMajor = Number(env.LATCH_NODE_VERSION.replace(/^v/, '').split('.')[0]);
for (const line of availableNodeLines()) {
  if (line.major === suiteMajor) continue;
  console.log(`run-tests: line checks on Node ${line.major}`);
  const check = spawnSync('pnpm', ['exec', 'vitest', 'run', ...LINE_CHECKS], {
    cwd: core,
    stdio: 'inherit',
    env: {
      ...env,
      PATH: `${dirname(line.node)}:${process.env.PATH}`,
      LATCH_TEST_RESULTS: `test-results.node${line.major}.json`,
    },
  });
  turboStatus ||= check.status ?? 1;
}

let passed = 0;
let failed = 0;
let skipped = 0;
const lineResults = readdirSync(core)
  .filter((file) => /^test-results\.node\d+\.json$/.test(file))
  .map((file) => join(core, file));
for (const file of [...workspaces.map((ws) => join(ws, 'test-results.json')), ...lineResults]) {
  if (!existsSync(file)) continue;
  const result = JSON.parse(readFileSync(file, 'utf8'));
  passed += result.numPassedTests ?? 0;
  failed += result.numFailedTests ?? 0;
  skipped += (result.numPendingTests ?? 0) + (result.numTodoTests ?? 0);
}
let code = turboStatus;
if (code !== 0 && failed === 0) failed = 1; // a suite that crashed before reporting still fails

// The API reports: cheap (seconds per entry point, cached by turbo), and run even when a suite
// failed, so that one run tells about both.
const api = spawnSync(
  'pnpm',
  [
    'exec',
    'turbo',
    'run',
    'api',
    '--concurrency=2',
    '--continue=dependencies-successful',
    '--output-logs=errors-only',
    ...extraArgs,
  ],
  { cwd: root, stdio: 'inherit', env },
);
console.log(`Tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
if (api.status === 0) {
  console.log('API reports: up to date');
} else {
  console.log('API reports: FAILED (see above; `pnpm api:update` if the API change is intended)');
  code = code || 1;
}

// Every backend, browser and worker the suites started must be gone once they have ended.
const leaked = await leftBehind(root, before);
if (leaked.length > 0) {
  console.log(`Leaked processes: ${leaked.length} still running after the suite (now killed):`);
  for (const [pid, cmd] of leaked) {
    console.log(`  pid ${pid}: ${cmd.slice(0, 200)}`);
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // ended meanwhile
    }
  }
  code = code || 1;
} else {
  console.log('Leaked processes: none');
}

process.exit(code);
