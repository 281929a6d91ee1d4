import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** The tests run the built CLI as a child process: build it from the current source first. */
export default function buildCli(): void {
  const tsc = createRequire(import.meta.url).resolve('typescript/lib/tsc.js');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    stdio: 'inherit',
  });
}
