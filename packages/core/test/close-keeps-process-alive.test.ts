import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

// A script whose last statement is `await locks.close()`, after a release the store refused:
// close() retries the release in the background, and must keep the process alive until it
// has settled. Before, the process exited mid-close: 13 as an ES module ("unsettled top-level
// await"), 0 in CommonJS with the lock still held in the store.

const esm = fileURLToPath(new URL('../dist/index.js', import.meta.url));
const cjs = fileURLToPath(new URL('../dist/cjs/index.js', import.meta.url));

/** The script: releases fail 5 times (certainly not applied), then land. Prints on exit whether the record was freed. */
function script(load: string): string {
  return `
    ${load}
    const inner = memoryStore();
    let refusals = 5;
    let freed = false;
    const store = {
      ...inner,
      write: async (key, record, condition) => {
        if (record.holder === null && refusals-- > 0) {
          throw new LockStoreError('service unavailable', { retryable: true, reason: 'unavailable' });
        }
        const outcome = await inner.write(key, record, condition);
        if (outcome.ok && record.holder === null) freed = true;
        return outcome;
      },
    };
    process.on('exit', (code) => console.log('exit', code, freed ? 'freed' : 'still held'));
    const locks = new LockClient({ store, retry: { attempts: 2, baseMs: 200, maxMs: 400 } });
    const lock = await locks.acquire('nightly-report');
    await lock.release().catch((error) => console.log('release failed:', error.message));
    await locks.close();
  `;
}

async function run(args: string[]): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr.on('data', (chunk) => {
    output += chunk;
  });
  const code = await new Promise<number | null>((resolve) => {
    const guard = setTimeout(() => {
      child.kill('SIGKILL');
      resolve(null);
    }, 30_000);
    child.on('exit', (exitCode) => {
      clearTimeout(guard);
      resolve(exitCode);
    });
  });
  return { code, output };
}

test('ES module: the last line `await locks.close()` keeps the process alive until the release landed, then exits 0', async () => {
  expect(existsSync(esm), 'build @latch/core first (turbo builds before testing)').toBe(true);
  const load = `import { LockClient, LockStoreError, memoryStore } from ${JSON.stringify(esm)};`;
  const { code, output } = await run(['--input-type=module', '-e', script(load)]);
  expect(output).toContain('release failed: service unavailable');
  expect(output).toContain('exit 0 freed');
  expect(code).toBe(0);
});

test('CommonJS: the same script exits 0 only after close() settled', async () => {
  expect(existsSync(cjs), 'build @latch/core first (turbo builds before testing)').toBe(true);
  const load = `const { LockClient, LockStoreError, memoryStore } = require(${JSON.stringify(cjs)});`;
  // CommonJS has no top-level await: the script body runs in an async function, as users write it.
  const body = `(async () => { ${script('')} })();`;
  const { code, output } = await run(['-e', `${load}\n${body}`]);
  expect(output).toContain('exit 0 freed');
  expect(code).toBe(0);
});
