#!/usr/bin/env node
// Fails on any import cycle among a package's own sources (src/**/*.ts), with dpdm. Part of
// each package's `lint` script (`pnpm lint`); run from the package's folder.
//
// Type-only imports count: dpdm runs without --transform (-T), which would compile the types
// away first and so miss `import type` / `export type` cycles. A cycle of types alone costs
// nothing at run time, but it still ties the modules into one unit that cannot be split or
// layered, so it is a cycle here too. Dynamic `import()` counts as well. dpdm does not see
// `import('./x.js').T` type expressions: keep to import declarations between our own modules.
// Only files under this package's src/ are followed; other packages and node_modules are not.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const dir = process.cwd();
const { name } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
const ownSources = join(dir, 'src/').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const dpdm = spawnSync(
  process.execPath,
  [
    join(root, 'node_modules', 'dpdm', 'lib', 'bin', 'dpdm.js'),
    '--no-tree',
    '--no-warning',
    '--no-progress',
    '--circular',
    '--exit-code',
    'circular:1',
    '--exclude',
    `^(?!${ownSources})`,
    'src/**/*.ts',
  ],
  { cwd: dir, encoding: 'utf8' },
);
const cycles = dpdm.stdout
  .split('\n')
  .filter((line) => /^\s*\d+\)/.test(line))
  .map((line) => line.trim());

if (dpdm.status === 0) {
  console.log(`check-cycles: ${name}: no import cycles in src/ (type-only imports included)`);
} else if (cycles.length > 0) {
  console.error(`check-cycles: ${name}: ${cycles.length} import cycle(s) in src/ (type-only imports count):`);
  for (const cycle of cycles) console.error(`  ${cycle}`);
  console.error(
    'check-cycles: in each ring a module imports the next one and the last imports the first. Break it ' +
      'by moving what both sides need into a module of its own, or by passing it in instead of importing it.',
  );
} else {
  console.error(`check-cycles: ${name}: dpdm exited ${dpdm.status}:\n${dpdm.stdout}\n${dpdm.stderr}`);
}
process.exit(dpdm.status ?? 1);
