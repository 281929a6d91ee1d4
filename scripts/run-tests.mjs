#!/usr/bin/env node
// Runs every package's test suite through turbo, prints one closing line that sums the vitest
// results of all packages ("Tests: N passed, N failed"), then fails the run if any process the
// suites started is still running. The packed-package apps are their own step
// (`pnpm test:packed`, scripts/packed-apps), so that each run stays under 15 minutes here.
// After the suites, the public API reports (turbo task `api`, scripts/api-report.mjs) are checked
// against the declarations just built: a changed API fails the run until `pnpm api:update`.
//
//   pnpm test               the suites on this machine's Node
//   pnpm test --node 24     the suites on Node 24 (installed by setup)
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { leftBehind, suiteProcesses } from './leak-check.mjs';
import { nodeBinDir } from './node-lines.mjs';

const root = new URL('..', import.meta.url).pathname;
const workspaces = ['packages', 'apps']
  .filter((dir) => existsSync(join(root, dir)))
  .flatMap((dir) => readdirSync(join(root, dir)).map((name) => join(root, dir, name)));

for (const ws of workspaces) rmSync(join(ws, 'test-results.json'), { force: true });

const before = suiteProcesses(root);
const extraArgs = process.argv.slice(2);
const nodeFlag = extraArgs.indexOf('--node');
const nodeLine = nodeFlag === -1 ? undefined : extraArgs.splice(nodeFlag, 2)[1];
const env = { TURBO_TELEMETRY_DISABLED: '1', ...process.env };
if (nodeLine !== undefined) {
  const dir = nodeBinDir(nodeLine);
  if (!existsSync(join(dir, 'node'))) {
    console.error(`run-tests: Node ${nodeLine} is not installed here; run bash scripts/setup.sh first.`);
    process.exit(2);
  }
  env.PATH = `${dir}:${env.PATH}`;
}
// Part of turbo's hash (turbo.json globalEnv), so a result from another Node line is not replayed.
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

let passed = 0;
let failed = 0;
let skipped = 0;
for (const ws of workspaces) {
  const file = join(ws, 'test-results.json');
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
