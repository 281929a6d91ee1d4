import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

export const packageDir = fileURLToPath(new URL('../..', import.meta.url));
export const distDir = `${packageDir}dist`;
export const cliPath = `${distDir}/cli.js`;

/**
 * Makes sure dist/ is built from the current sources (turbo builds before testing; a direct
 * `vitest run` after editing src/ might not). Test files run in parallel workers, so the build
 * is guarded by a lock directory.
 */
export async function ensureBuilt(): Promise<void> {
  if (isFresh()) return;
  const lock = `${packageDir}node_modules/.latch-testing-build-lock`;
  const deadline = Date.now() + 120_000;
  while (true) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${lock}; remove it if no build is running`);
      await sleep(200);
    }
  }
  try {
    if (!isFresh()) {
      const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
      try {
        execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], {
          cwd: packageDir,
          stdio: 'pipe',
        });
      } catch (error) {
        // Type errors are the typecheck's business; tsc still emits JavaScript, which is all we run.
        if (!isFresh()) throw new Error(`build failed:\n${(error as { stdout?: Buffer }).stdout ?? error}`);
      }
    }
  } finally {
    rmdirSync(lock);
  }
}

function isFresh(): boolean {
  if (!existsSync(cliPath)) return false;
  const built = statSync(cliPath).mtimeMs;
  return newestMtime(`${packageDir}src`) <= built;
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}
