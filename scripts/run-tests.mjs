#!/usr/bin/env node
// Runs every package's test suite through turbo, prints one closing line that sums the vitest
// results of all packages ("Tests: N passed, N failed"), then fails the run if any process the
// suites started is still running.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { leftBehind, suiteProcesses } from './leak-check.mjs';

const root = new URL('..', import.meta.url).pathname;
const workspaces = ['packages', 'apps']
  .filter((dir) => existsSync(join(root, dir)))
  .flatMap((dir) => readdirSync(join(root, dir)).map((name) => join(root, dir, name)));

for (const ws of workspaces) rmSync(join(ws, 'test-results.json'), { force: true });

const before = suiteProcesses(root);
const extraArgs = process.argv.slice(2);
const turbo = spawnSync(
  'pnpm',
  ['exec', 'turbo', 'run', 'test', '--concurrency=1', '--output-logs=full', ...extraArgs],
  { cwd: root, stdio: 'inherit', env: { TURBO_TELEMETRY_DISABLED: '1', ...process.env } },
);

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
let code = turbo.status ?? 1;
if (code !== 0 && failed === 0) failed = 1; // a suite that crashed before reporting still fails
console.log(`Tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);

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
