#!/usr/bin/env node
// Runs every package's test suite through turbo, then prints one closing line that
// sums the vitest results of all packages ("Tests: N passed, N failed").
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const workspaces = ['packages', 'apps']
  .filter((dir) => existsSync(join(root, dir)))
  .flatMap((dir) => readdirSync(join(root, dir)).map((name) => join(root, dir, name)));

for (const ws of workspaces) rmSync(join(ws, 'test-results.json'), { force: true });

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
const code = turbo.status ?? 1;
if (code !== 0 && failed === 0) failed = 1; // a suite that crashed before reporting still fails
console.log(`Tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(code);
