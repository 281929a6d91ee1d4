// Compiles core's `src` as it was at a commit (default: the released core, below) into
// sim-dist/released/<commit>/dist, for `pnpm sim --released DIR`, which runs it beside this
// checkout's core in one simulation (a mixed-version rollout). `pnpm sim:mixed` builds and runs.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The core users run today: `main` before the state-machine core replaced the old claim,
 * own-write and settling paths. Its record format is the one this checkout reads and writes.
 */
export const RELEASED_COMMIT = '44fc3b9';

const coreDir = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Builds `commit`'s core once (kept under sim-dist); returns the directory of its compiled `src`. */
export function buildReleased(commit = RELEASED_COMMIT) {
  const out = join(coreDir, 'sim-dist', 'released', commit);
  const dist = join(out, 'dist');
  if (existsSync(join(dist, 'client', 'lock-client.js'))) return dist;
  const git = (args, options = {}) => execFileSync('git', args, { cwd: coreDir, ...options });
  try {
    git(['cat-file', '-e', `${commit}^{commit}`], { stdio: 'ignore' });
  } catch {
    throw new Error(
      `commit ${commit} is not in this clone (a shallow clone lacks it: git fetch --unshallow)`,
    );
  }
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  // The commit's src/ only, as files: the working tree is not touched.
  const archive = git(['archive', '--format=tar', commit, '--', 'src'], { maxBuffer: 64 << 20 });
  execFileSync('tar', ['-x', '-C', out], { input: archive });
  writeFileSync(
    join(out, 'tsconfig.json'),
    JSON.stringify({
      extends: '../../../../../tsconfig.base.json',
      compilerOptions: { rootDir: 'src', outDir: 'dist', declaration: false },
      include: ['src'],
    }),
  );
  execFileSync(join(coreDir, 'node_modules', '.bin', 'tsc'), ['-p', join(out, 'tsconfig.json')], {
    stdio: 'inherit',
  });
  return dist;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    console.log(buildReleased(process.argv[2]));
  } catch (error) {
    console.error(`build-released: ${error.message}`);
    process.exit(2);
  }
}
