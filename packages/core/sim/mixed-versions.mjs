// `pnpm sim:mixed [sim options]`: the simulator with the released core (build-released.mjs)
// beside this checkout's, on the same keys; by default 100 seeds over two processes. Any
// option of `pnpm sim` may follow (`--seeds 2000 --from 600000`, `--seed S --trace`).
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildReleased } from './build-released.mjs';

const coreDir = join(dirname(fileURLToPath(import.meta.url)), '..');
let released;
try {
  released = buildReleased();
} catch (error) {
  console.error(`sim:mixed: ${error.message}`);
  process.exit(2);
}
const args = process.argv.slice(2);
const given = (flag) => args.some((arg) => arg === flag || arg.startsWith(`${flag}=`));
const defaults = [
  ...(given('--seeds') || given('--seed') ? [] : ['--seeds', '100']),
  ...(given('--workers') || given('--seed') ? [] : ['--workers', '2']),
];
console.log(`sim:mixed: the released core (${released}) beside this checkout's`);
const run = spawnSync(
  process.execPath,
  [join(coreDir, 'sim-dist', 'sim', 'cli.js'), '--released', released, ...defaults, ...args],
  { stdio: 'inherit' },
);
process.exit(run.status ?? 1);
